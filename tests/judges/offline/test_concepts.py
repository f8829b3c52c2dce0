"""Concepts of the clinical vocabulary in the offline judge's check: the same concept in
other words is stated, a subtype states its parent, a sibling in the same frame is a swap."""

from __future__ import annotations

import pytest

from clineval.judges.offline import OfflinePrimitives
from clineval.nlp.analysis import analyze


@pytest.fixture(scope="module")
def primitives() -> OfflinePrimitives:
    return OfflinePrimitives()


def test_concept_mentions_know_capital_abbreviations_and_names_with_articles() -> None:
    gad = analyze("GAD, managed with CBT.")
    assert [m.surface for m in gad.concepts] == ["gad"]
    assert "MONDO:0001942" in gad.concepts[0].ids  # generalized anxiety disorder
    assert analyze("gad about town.").concepts == ()  # in lower case it is a word
    pancreas = analyze("Mass in the tail of the pancreas.")
    assert any(m.surface == "tail of the pancreas" and m.type == "anatomy" for m in pancreas.concepts)


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("History of generalized anxiety disorder.", "History of GAD."),  # an abbreviation
        ("She had a heart attack in 2019.", "She had a myocardial infarction in 2019."),  # lay words
        ("He has diabetes mellitus.", "He has type 2 diabetes mellitus."),  # a subtype states its parent
    ],
)
def test_the_same_or_a_narrower_concept_states_the_claim(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    [verdict] = primitives.check_facts_sync([claim], evidence)
    assert verdict.label == "entailed", verdict.explanation


def test_a_parent_does_not_state_its_subtype(primitives: OfflinePrimitives) -> None:
    [verdict] = primitives.check_facts_sync(["He has type 2 diabetes mellitus."], "He has diabetes mellitus.")
    assert verdict.label != "entailed", verdict.explanation
    assert verdict.reason != "incorrect"


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("CT head: acute ischemic stroke.", "CT head: acute hemorrhagic stroke."),
        ("Chest CT: nodule in the right upper lobe.", "Chest CT: nodule in the right lower lobe."),
        ("MRI brain: infarct in the left occipital lobe.", "MRI brain: infarct in the left temporal lobe."),
    ],
)
def test_a_sibling_in_the_same_frame_is_a_swap(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    [verdict] = primitives.check_facts_sync([claim], evidence)
    assert (verdict.label, verdict.reason) == ("not_entailed", "incorrect"), verdict.explanation


def test_a_sibling_among_several_is_a_missing_item_not_a_swap(primitives: OfflinePrimitives) -> None:
    [verdict] = primitives.check_facts_sync(
        ["MRI brain: infarcts in the left occipital lobe."],
        "MRI brain: infarcts in the left temporal lobe and the left frontal lobe.",
    )
    assert verdict.reason != "incorrect", verdict.explanation


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("She was started on a beta blocker.", "She was started on metoprolol."),
        ("He takes an SSRI.", "He takes sertraline 50 mg daily."),
        ("She takes a statin.", "She takes atorvastatin 40 mg."),
        ("He is on an anticoagulant.", "He is on apixaban 5 mg twice daily."),
    ],
)
def test_a_drug_states_its_class(primitives: OfflinePrimitives, claim: str, evidence: str) -> None:
    [verdict] = primitives.check_facts_sync([claim], evidence)
    assert verdict.label == "entailed", verdict.explanation


def test_a_class_does_not_state_a_drug_and_is_no_rival_of_its_own_drug(primitives: OfflinePrimitives) -> None:
    [vaguer] = primitives.check_facts_sync(["She takes metoprolol."], "She takes a beta blocker.")
    assert vaguer.label != "entailed" and vaguer.reason != "incorrect", vaguer.explanation
    [other] = primitives.check_facts_sync(
        ["She was started on a beta blocker."], "She was started on lisinopril."
    )
    assert (other.label, other.reason) == ("not_entailed", "incorrect"), other.explanation


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("She was started on apixaban.", "She was started on Eliquis."),
        ("He takes ticagrelor 90 mg twice daily.", "He takes Brilinta 90 mg twice daily."),
        ("Continue furosemide.", "Continue Lasix."),
    ],
)
def test_a_brand_name_is_its_generic(primitives: OfflinePrimitives, claim: str, evidence: str) -> None:
    """Brand names come from the vocabulary's drug dictionary, not from a hand list."""
    [verdict] = primitives.check_facts_sync([claim], evidence)
    assert verdict.label == "entailed", verdict.explanation


def test_a_hormone_measured_in_the_blood_is_not_the_drug() -> None:
    from clineval.nlp.terms import normalize

    assert (
        normalize("Cortisol 5 mcg/dL, free thyroxine 1.2 ng/dL.")
        == "cortisol 5 mcg/dl, free thyroxine 1.2 ng/dl."
    )
    assert normalize("Started Eliquis and Zoloft.") == "started apixaban and sertraline."
