"""TBFact on short section answers, end to end through ``clineval.evaluate`` with the offline
judge: a null answer ("None.", "NKDA", "Not on any medications.") is one fact, null answers
entail each other in both directions, and a section null contradicts a text that states the
thing. Every expected value is worked by hand from the facts and their verdicts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clineval import evaluate
from clineval.model import Score


def tbfact(tmp_path: Path, response: str, reference: str) -> Score:
    case = {"id": "c1", "input": "Allergies and medications?", "response": response, "reference": reference}
    result = evaluate([case], ["tbfact"], judge="offline", store=tmp_path / "runs.db", progress=False)
    (record,) = [r for r in result.results if r.metric == "tbfact"]
    return record.score


def facts_of(score: Score, direction: str) -> list[tuple[str, str, str | None]]:
    return [
        (f["fact"], f["label"], f["reason"]) for f in score.details["facts"] if f["direction"] == direction
    ]


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("None.", "None."),  # was: not applicable (no fact on either side)
        ("Noncontributory.", "Noncontributory."),
        ("No known drug allergies.", "None."),  # was: 0
        ("None.", "No known drug allergies."),
        ("NKDA", "No known drug allergies."),
        ("N/A", "Not applicable."),
    ],
)
def test_null_answers_agree_and_score_one_in_both_directions(
    tmp_path: Path, response: str, reference: str
) -> None:
    # One fact each side, each entailed by the other text: P = R = F1 = 1.
    for a, b in ((response, reference), (reference, response)):
        score = tbfact(tmp_path, a, b)
        assert score.status == "scored", score.explanation
        assert score.value == 1.0
        s = score.sub_scores
        assert (s["precision"], s["recall"], s["f1"]) == (1.0, 1.0, 1.0)
        assert (s["n_response_facts"], s["n_reference_facts"]) == (1.0, 1.0)
        assert facts_of(score, "precision") == [(a, "entailed", None)]
        assert facts_of(score, "recall") == [(b, "entailed", None)]


def test_section_answers_of_several_nulls(tmp_path: Path) -> None:
    # Two null facts each side, paired by topic: all four entailed, F1 = 1.
    score = tbfact(
        tmp_path, "Not on any medications. No known drug allergies.", "Medications: none. Allergies: NKDA."
    )
    assert score.value == 1.0
    assert score.sub_scores["n_response_facts"] == 2.0
    assert score.sub_scores["n_reference_facts"] == 2.0


def test_a_null_answer_beside_a_substantive_fact(tmp_path: Path) -> None:
    score = tbfact(
        tmp_path, "No known drug allergies. She takes metformin 500 mg twice daily.", "Allergies: none."
    )
    # Precision: the null fact is entailed (1), the metformin fact is missing from a reference
    # that only says there are no allergies (0): P = 1/2. Recall: the reference's one null fact
    # is entailed by the response's: R = 1. F1 = 2 * 0.5 * 1 / 1.5 = 2/3.
    assert facts_of(score, "precision") == [
        ("No known drug allergies.", "entailed", None),
        ("She takes metformin 500 mg twice daily.", "not_entailed", "missing"),
    ]
    assert facts_of(score, "recall") == [("Allergies: none.", "entailed", None)]
    assert score.sub_scores["precision"] == 0.5
    assert score.sub_scores["recall"] == 1.0
    assert score.value == pytest.approx(2 / 3)


def test_a_section_null_against_a_stated_allergy_is_a_distortion(tmp_path: Path) -> None:
    score = tbfact(tmp_path, "No known drug allergies.", "Penicillin allergy (hives).")
    # Each side's one fact is contradicted by the other: P = R = 0, F1 = 0, one distortion.
    assert facts_of(score, "precision") == [("No known drug allergies.", "not_entailed", "incorrect")]
    assert facts_of(score, "recall") == [("Penicillin allergy (hives).", "not_entailed", "incorrect")]
    assert score.value == 0.0
    assert score.sub_scores["distortions"] == 1.0
    assert score.sub_scores["omissions"] == 0.0


def test_a_null_against_a_substantive_answer_is_an_omission(tmp_path: Path) -> None:
    score = tbfact(tmp_path, "None.", "She takes lisinopril 10 mg daily.")
    # "None." says nothing the reference supports, and omits the reference's fact: F1 = 0.
    assert facts_of(score, "precision") == [("None.", "not_entailed", "missing")]
    assert facts_of(score, "recall") == [("She takes lisinopril 10 mg daily.", "not_entailed", "missing")]
    assert score.value == 0.0
    assert score.sub_scores["omissions"] == 1.0
    assert score.sub_scores["unsupported"] == 1.0
