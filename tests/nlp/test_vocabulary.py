"""The compiled clinical vocabulary (clineval.nlp.vocabulary) and the build script's filters.

Every expected value below was looked up by hand in the source vocabularies: HPO 2025-01-16,
MONDO v2026-05-05, the Disease Ontology 2021-11-17, ICD-10-CM 2026, the drug dictionary of
drug-named-entity-recognition 2.0.9 and Uberon v2026-04-01. The file is loaded once per session.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
import threading
from pathlib import Path
from types import ModuleType

import pytest

from clineval.nlp import vocabulary as vocab
from clineval.nlp.vocabulary import Mention

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def loaded() -> None:
    vocab.concepts("warm-up")  # one load for the whole session


@pytest.fixture(scope="module")
def build() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_vocabulary", ROOT / "scripts" / "build_vocabulary.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


# ---------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Crohn's disease", "crohn disease"),
        ("Non-insulin-dependent diabetes mellitus", "non insulin dependent diabetes mellitus"),
        ("Diabetes mellitus, type 2", "diabetes mellitus type 2"),
        ("Sjögren  syndrome", "sjogren syndrome"),
        ("Essential (primary) hypertension", "essential primary hypertension"),
        ("T2DM", "t2dm"),
        ("", ""),
    ],
)
def test_normalize_name(text: str, expected: str) -> None:
    assert vocab.normalize_name(text) == expected


# ---------------------------------------------------------------------------------- lookups


def test_a_layperson_synonym_is_the_clinical_concept() -> None:
    # HPO HP:0002094 Dyspnea: "Shortness of breath" EXACT layperson, "Dyspnoea" EXACT uk_spelling
    assert "HP:0002094" in vocab.concepts("shortness of breath")
    assert "HP:0002094" in vocab.concepts("Difficulty breathing")
    assert vocab.concepts("dyspnoea") == ("HP:0002094",)
    assert vocab.relation(vocab.concepts("shortness of breath"), vocab.concepts("dyspnea")) == "same"
    assert ("shortness of breath", "exact layperson") in vocab.names("HP:0002094")
    # HP:0001658 Myocardial infarction: "Heart attack" EXACT layperson
    assert vocab.relation(vocab.concepts("heart attack"), "HP:0001658") == "same"


def test_abbreviations_from_hpo_and_mondo() -> None:
    # HPO types "MI" as an abbreviation of HP:0001658; MONDO gives T2DM and NIDDM for type 2 DM
    assert vocab.concepts("MI") == ("HP:0001658",)
    assert ("mi", "exact abbreviation") in vocab.names("HP:0001658")
    assert vocab.concepts("T2DM") == ("MONDO:0005148",)
    assert "MONDO:0005148" in vocab.concepts("NIDDM")
    assert vocab.concepts("COPD")[0] == "MONDO:0005002"


def test_a_brand_name_maps_to_its_generic() -> None:
    assert vocab.concepts("Glucophage") == ("DRUG:metformin",)
    assert vocab.concepts("Tylenol") == ("DRUG:acetaminophen",)
    assert vocab.concepts("paracetamol") == ("DRUG:acetaminophen",)
    assert ("glucophage", "synonym") in vocab.names("DRUG:metformin")  # the dictionary flags few brands
    assert ("paracetamol", "generic") in vocab.names("DRUG:acetaminophen")


def test_one_concept_across_vocabularies() -> None:
    # the same preferred label in MONDO, the Disease Ontology and ICD-10-CM; HPO's label
    # "Type II diabetes mellitus" is a MONDO exact synonym
    assert vocab.concepts("type 2 diabetes mellitus") == ("MONDO:0005148", "DOID:9352", "ICD10CM:E11")
    assert set(vocab.equivalents("MONDO:0005148")) == {"HP:0005978", "DOID:9352", "ICD10CM:E11"}
    assert vocab.relation("HP:0005978", "ICD10CM:E11") == "same"
    assert vocab.equivalents("DRUG:metformin") == ()


def test_unknown_names_and_ids() -> None:
    assert vocab.concepts("flibbertigibbet") == ()
    assert vocab.concept("HP:9999999") is None
    assert vocab.ancestors("HP:9999999") == ()
    assert vocab.names("HP:9999999") == ()
    assert vocab.relation("HP:9999999", "MONDO:0005148") is None
    assert vocab.relation("X:1", "X:1") == "same"


def test_concept() -> None:
    c = vocab.concept("ICD10CM:S72.1")
    assert c is not None
    assert (c.label, c.type, c.vocabulary, c.parents) == (
        "Pertrochanteric fracture",
        "injury",
        "ICD10CM",
        ("ICD10CM:S72",),
    )
    hp = vocab.concept("HP:0001250")
    assert hp is not None and (hp.label, hp.type) == ("Seizure", "phenotype")
    assert vocab.concept("UBERON:0002107") is not None
    assert vocab.concept("DRUG:metformin") == vocab.Concept(
        "DRUG:metformin", "Metformin", "drug", "DRUG", ("DRUG:biguanides",)
    )


# -------------------------------------------------------------------------------- relations


def test_type_1_and_type_2_diabetes_are_siblings() -> None:
    assert vocab.relation("MONDO:0005147", "MONDO:0005148") == "sibling"
    assert vocab.relation("ICD10CM:E10", "ICD10CM:E11") == "sibling"
    assert (
        vocab.relation(vocab.concepts("type 1 diabetes mellitus"), vocab.concepts("type 2 diabetes mellitus"))
        == "sibling"
    )


def test_type_2_diabetes_is_narrower_than_diabetes_mellitus() -> None:
    assert vocab.relation("MONDO:0005148", "MONDO:0005015") == "narrower"
    assert vocab.relation("MONDO:0005015", "MONDO:0005148") == "broader"
    # ICD-10-CM: E11 sits in the block E08-E13 "Diabetes mellitus"
    assert vocab.relation("ICD10CM:E11.9", "ICD10CM:E08-E13") == "narrower"
    # across vocabularies, through equivalents: the Disease Ontology has no parents of its own
    assert vocab.relation("DOID:9352", "MONDO:0005015") == "narrower"
    assert vocab.relation(vocab.concepts("T2DM"), vocab.concepts("diabetes")) == "narrower"


def test_femur_fractures() -> None:
    # S72.0 fracture of head and neck of femur, S72.1 pertrochanteric fracture: both under S72
    assert vocab.relation("ICD10CM:S72.0", "ICD10CM:S72.1") == "sibling"
    assert vocab.relation("ICD10CM:S72.001", "ICD10CM:S72") == "narrower"


def test_unrelated_concepts() -> None:
    assert vocab.relation("DRUG:metformin", "UBERON:0002107") is None
    assert vocab.relation([], ["MONDO:0005148"]) is None


def test_ancestors() -> None:
    found = vocab.ancestors("MONDO:0005148")
    assert found[0] == "MONDO:0005015"  # the nearest first
    assert "MONDO:0000001" in found  # disease, the root
    assert vocab.ancestors("ICD10CM:E11.9") == ("ICD10CM:E11", "ICD10CM:E08-E13", "ICD10CM:E00-E89")
    assert vocab.ancestors("DOID:9352") == ()


# --------------------------------------------------------------------------------- mentions


def test_a_drug_mention_with_offsets() -> None:
    text = "She was started on metformin 500 mg twice daily."
    assert vocab.mentions(text) == [Mention(19, 28, "metformin", ("DRUG:metformin",), "drug")]


def test_longest_match_and_brand() -> None:
    text = "History of Type 2 Diabetes Mellitus; takes Tylenol."
    found = vocab.mentions(text)
    assert [(m.surface, m.concepts[0], m.type) for m in found] == [
        ("Type 2 Diabetes Mellitus", "MONDO:0005148", "disease"),
        ("Tylenol", "DRUG:acetaminophen", "drug"),
    ]
    for m in found:
        assert text[m.start : m.end] == m.surface


def test_common_english_words_are_not_mentions() -> None:
    # "all", "cold" (a MONDO synonym of the common cold), "water" and "rice" (DrugBank entries)
    assert vocab.mentions("All of them felt cold and drank water with rice.") == []
    assert vocab.concepts("all") == vocab.concepts("cold") == vocab.concepts("water") == ()


def test_abbreviations_match_in_capitals_only() -> None:
    assert [m.surface for m in vocab.mentions("Hx of MI in 2019.")] == ["MI"]
    assert vocab.mentions("the mi was not seen") == []
    assert vocab.mentions("a two-letter MONDO abbreviation: PE") == []


def test_a_name_does_not_span_a_sentence_end() -> None:
    found = vocab.mentions("Tenderness of the chest. Pain resolved.")
    assert "chest pain" not in [m.surface.lower() for m in found]
    assert [m.surface for m in vocab.mentions("chest pain")] == ["chest pain"]


def test_mentions_of_an_empty_text() -> None:
    assert vocab.mentions("") == []
    assert vocab.mentions("   \n ;. ") == []


# ---------------------------------------------------------------------------- ICD conventions


def test_icd_inclusion_terms_and_nonessential_modifiers() -> None:
    # I10 "Essential (primary) hypertension" includes "high blood pressure"
    assert "ICD10CM:I10" in vocab.concepts("high blood pressure")
    assert "ICD10CM:I10" in vocab.concepts("essential hypertension")
    # S72.00 "Fracture of unspecified part of neck of femur" includes "Fracture of hip NOS"
    assert "ICD10CM:S72.00" in vocab.concepts("fracture of hip")
    # E11 includes "diabetes NOS": a coding default, not a name of type 2 diabetes
    assert "ICD10CM:E11" not in vocab.concepts("diabetes")


# ---------------------------------------------------------------------------------- the file


def test_header_and_sources() -> None:
    names = [s["name"] for s in vocab.sources()]
    assert names == [
        "Human Phenotype Ontology",
        "Mondo Disease Ontology",
        "Human Disease Ontology",
        "ICD-10-CM tabular list",
        "Drug Named Entity Recognition dictionary",
        "Uberon multi-species anatomy ontology",
    ]
    hpo = vocab.sources()[0]
    assert hpo["version"] == "2025-01-16" and "acknowledgement" in hpo["licence"]
    assert vocab.version().startswith(f"{vocab.FORMAT_VERSION} (built ")


def test_the_file_is_small_and_in_the_package() -> None:
    assert vocab.DATA_FILE.is_file()
    assert vocab.DATA_FILE.parent == Path(vocab.__file__).parent / "data"
    assert vocab.DATA_FILE.stat().st_size < 8_000_000


def test_a_missing_or_stale_file_says_how_to_rebuild(tmp_path: Path) -> None:
    with pytest.raises(vocab.VocabularyMissing, match=r"scripts/build_vocabulary\.py"):
        vocab._read(tmp_path / "none.json.gz")
    stale = tmp_path / "stale.json.gz"
    stale.write_bytes(gzip.compress(json.dumps({"format_version": 0}).encode()))
    with pytest.raises(vocab.VocabularyMissing, match="format_version 0, expected 1"):
        vocab._read(stale)


def test_threads_share_one_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vocab, "_DATA", None)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(vocab._vocab())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 4 and all(s is seen[0] for s in seen)


# ------------------------------------------------------------------------- the build's rules


def test_icd_variants(build: ModuleType) -> None:
    variants = build._icd_variants
    assert list(variants("Essential (primary) hypertension", "x")) == [
        "Essential (primary) hypertension",
        "Essential hypertension",
    ]
    assert list(variants("Fracture of hip NOS", "Fracture of unspecified part of neck of femur")) == [
        "Fracture of hip"
    ]
    assert list(variants("diabetes NOS", "Type 2 diabetes mellitus")) == []
    assert list(variants("secondary diabetes mellitus NEC", "x")) == []
    assert list(variants("Chest pain, unspecified", "x")) == ["Chest pain, unspecified", "Chest pain"]


@pytest.mark.parametrize(
    ("name", "vocabulary", "kind", "medicine", "expected"),
    [
        ("cold", "MONDO", "exact", False, "common English word"),
        ("stroke", "HP", "label", False, None),  # a preferred label: kept below Zipf 6
        ("all", "HP", "label", False, "common English word"),  # Zipf 6.5
        ("COPD", "MONDO", "exact", False, None),
        ("PE", "MONDO", "exact", False, "two-letter abbreviation"),
        ("MI", "HP", "exact abbreviation", False, None),
        ("MAP", "MONDO", "exact", False, "abbreviation that is a common English word"),
        ("rice", "DRUG", "label", False, "common English word, not a medicine in MedlinePlus or the NHS"),
        ("iron", "DRUG", "label", True, None),
        ("hand", "UBERON", "exact", False, None),  # HPO: "Abnormality of the hand"
        ("wing", "UBERON", "label", False, "common English word, not a body site in HPO or ICD-10-CM"),
        ("a " * 13, "HP", "exact", False, "too long"),
        ("at-10", "DRUG", "synonym", False, "common words with numbers or single letters"),
        ("5-fu", "DRUG", "synonym", False, None),
        ("OI type 1", "MONDO", "exact", False, None),
    ],
)
def test_drop_reason(
    build: ModuleType, name: str, vocabulary: str, kind: str, medicine: bool, expected: str | None
) -> None:
    ctx = build.Context(vocabulary, kind, build._is_cased(name), medicine, frozenset({"hand"}))
    assert build.drop_reason(vocab.normalize_name(name), ctx) == expected
