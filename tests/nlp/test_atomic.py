"""Atomic claims: one claim per biomarker result and per item of a two-item coordination."""

from __future__ import annotations

import pytest

from clineval.judges.offline import OfflinePrimitives
from clineval.nlp.atomic import atomic_claims


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("ER positive, PR positive, HER2 amplified.", ["ER positive.", "PR positive.", "HER2 amplified."]),
        (
            "Receptor status: ER positive, PR negative, HER2 not amplified.",
            [
                "Receptor status: ER positive.",
                "Receptor status: PR negative.",
                "Receptor status: HER2 not amplified.",
            ],
        ),
        (
            "Estrogen receptor positive, progesterone receptor positive, and HER2 negative.",
            ["Estrogen receptor positive.", "Progesterone receptor positive.", "HER2 negative."],
        ),
        ("Started aspirin and clopidogrel.", ["Started aspirin.", "Started clopidogrel."]),
        (
            "History of hypertension and hyperlipidemia.",
            ["History of hypertension.", "History of hyperlipidemia."],
        ),
        ("Denies chest pain or shortness of breath.", ["Denies chest pain.", "Denies shortness of breath."]),
        ("Pain in the left hip and knee.", ["Pain in the left hip.", "Pain in the left knee."]),
    ],
)
def test_lists_and_pairs_become_one_claim_per_item(claim: str, expected: list[str]) -> None:
    assert atomic_claims(claim) == expected


@pytest.mark.parametrize(
    "claim",
    [
        "Head and neck cancer was treated.",  # one name of the vocabulary
        "She has both diabetes and hypertension.",  # "both A and B" stays whole
        "No KRAS mutation detected.",  # one result
        "Nausea and vomiting for 2 days.",  # one name
        "The patient takes metformin 500 mg and lisinopril 10 mg daily.",  # items are not bare names
        "",
    ],
)
def test_what_is_one_claim_stays_one(claim: str) -> None:
    assert atomic_claims(claim) == [claim]


def test_a_dropped_receptor_is_a_missing_fact() -> None:
    """A list of receptors was one fact: a dropped item left it 'mostly supported'."""
    primitives = OfflinePrimitives()
    facts = [f.text for f in primitives.extract_facts_sync("ER positive, PR positive, HER2 amplified.")]
    assert facts == ["ER positive.", "PR positive.", "HER2 amplified."]
    verdicts = primitives.check_facts_sync(facts, "ER positive, HER2 amplified.")
    assert verdicts[0].label == verdicts[2].label == "entailed"
    assert verdicts[1].label != "entailed"


@pytest.mark.parametrize(
    ("text", "category", "importance"),
    [
        ("The patient has type 1 diabetes.", "diagnosis", "high"),  # a disease, not demographics
        ("45-year-old man with hypertension.", "diagnosis", "high"),
        ("Continue apixaban.", "treatment", "medium"),  # an anticoagulant is a treatment
        ("Anticoagulated with rivaroxaban.", "treatment", "medium"),
        ("ER positive.", "biomarker", "high"),  # a biomarker result, not an estrogen
        ("He denies fever.", "symptom", "high"),
    ],
)
def test_category_and_importance_follow_the_concept(text: str, category: str, importance: str) -> None:
    [fact] = OfflinePrimitives().extract_facts_sync(text)
    assert (fact.category, fact.importance) == (category, importance)
