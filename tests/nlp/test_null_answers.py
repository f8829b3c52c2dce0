"""Null answers ("None.", "NKDA", "Not on any medications."): the grammar and the verdicts."""

from __future__ import annotations

import pytest

from clineval.nlp.null_answers import is_null_answer, null_answer, null_verdict


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("None.", None),
        ("none", None),
        ("None reported.", None),
        ("None at this time.", None),
        ("N/A", None),
        ("Not applicable.", None),
        ("Nil.", None),
        ("Nothing to report.", None),
        ("Noncontributory.", None),
        ("Non-contributory.", None),
        ("Unremarkable.", None),
        ("Negative.", None),
        ("NKDA", "allergies"),
        ("NKA.", "allergies"),
        ("No known drug allergies.", "allergies"),
        ("No known allergies to medications.", "allergies"),
        ("She has no known drug allergies.", "allergies"),
        ("Patient denies any drug allergies.", "allergies"),
        ("Allergies: none.", "allergies"),
        ("Allergies: NKDA", "allergies"),
        ("No significant past medical history.", "medical history"),
        ("PMH: noncontributory", "medical history"),
        ("Not on any medications.", "medications"),
        ("He is not on any prescription medications.", "medications"),
        ("Takes no medications.", "medications"),
        ("Medications: None reported.", "medications"),
        ("Family history is noncontributory.", "family history"),
        ("No prior surgeries.", "surgical history"),
        ("Social history: unremarkable.", "social history"),
    ],
)
def test_null_answers_and_their_topic(text: str, topic: str | None) -> None:
    answer = null_answer(text)
    assert answer is not None, text
    assert answer.topic == topic


@pytest.mark.parametrize(
    "text",
    [
        "No fever.",  # a specific negative finding reports something
        "No pneumothorax.",
        "Negative for fever and chills.",
        "Penicillin allergy.",
        "She takes lisinopril 10 mg daily.",
        "None of the above symptoms improved with rest.",
        "Unknown.",  # not knowing is not the same as there being nothing
        "",
        "   ",
    ],
)
def test_substantive_texts_are_not_null_answers(text: str) -> None:
    assert not is_null_answer(text)


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("None.", "None."),
        ("Noncontributory.", "Noncontributory."),
        ("No known drug allergies.", "None."),
        ("NKDA", "No known drug allergies."),
        ("Not on any medications.", "Medications: none."),
        ("N/A", "Not applicable."),
    ],
)
def test_null_against_null_is_entailed_both_ways(claim: str, evidence: str) -> None:
    for a, b in ((claim, evidence), (evidence, claim)):
        verdict = null_verdict(a, b)
        assert verdict is not None and verdict.label == "entailed", (a, b, verdict)
        assert verdict.evidence  # quotes the null answer it matched


def test_a_null_answer_is_found_inside_a_note_by_its_header() -> None:
    note = "HPI: Cough for three days.\n\nALLERGIES\nNone.\n\nPLAN\nRest and fluids."
    verdict = null_verdict("No known drug allergies.", note)
    assert verdict is not None and verdict.label == "entailed"
    assert verdict.evidence == "None."
    # The same "None." under another header says nothing about allergies.
    other = "MEDICATIONS\nNone.\n\nPLAN\nRest and fluids."
    verdict = null_verdict("No known drug allergies.", other)
    assert verdict is not None and (verdict.label, verdict.reason) == ("not_entailed", "missing")


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("No known drug allergies.", "Penicillin allergy (hives)."),
        ("No known drug allergies.", "ALLERGIES\nSulfa drugs (rash)."),
        ("Not on any medications.", "She takes metformin 500 mg twice daily."),
        ("No significant past medical history.", "History of hypertension and asthma."),
        ("No prior surgeries.", "Status post appendectomy in 2015."),
    ],
)
def test_a_section_null_against_a_text_that_states_the_thing_is_incorrect(claim: str, evidence: str) -> None:
    verdict = null_verdict(claim, evidence)
    assert verdict is not None and (verdict.label, verdict.reason) == ("not_entailed", "incorrect")
    assert verdict.evidence
    # ... and the other way round: the statement is contradicted by the null answer.
    if not evidence.startswith("ALLERGIES"):
        reverse = null_verdict(evidence, claim)
        assert reverse is not None and (reverse.label, reverse.reason) == ("not_entailed", "incorrect")


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("None.", "She takes lisinopril 10 mg daily."),  # no topic: nothing to contradict
        ("No known drug allergies.", "She has hypertension."),
        ("No known drug allergies.", "She denies any allergy to penicillin."),  # negated mention
        ("No known drug allergies.", "Not on any medications."),  # nulls about different things
        ("She takes lisinopril 10 mg daily.", "None."),
        ("She has a cough.", "No known drug allergies."),
    ],
)
def test_a_null_against_substantive_text_is_missing(claim: str, evidence: str) -> None:
    verdict = null_verdict(claim, evidence)
    assert verdict is not None and (verdict.label, verdict.reason) == ("not_entailed", "missing")


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("She has a cough.", "She has a cough and a fever."),
        ("She takes lisinopril.", "ALLERGIES\nNone.\n\nMEDICATIONS\nLisinopril 10 mg daily."),
        ("None.", ""),
        ("", "None."),
    ],
)
def test_pairs_without_a_null_answer_to_decide_are_left_to_entailment(claim: str, evidence: str) -> None:
    assert null_verdict(claim, evidence) is None
