"""The ConText/NegEx-style assertion detector."""

from __future__ import annotations

import pytest

from clineval.nlp.assertions import detect_assertions


def statuses(text: str, word: str) -> set[str]:
    result = detect_assertions(text)
    for token, status in zip(result.tokens, result.statuses, strict=True):
        if token.text == word:
            return set(status)
    raise AssertionError(f"{word!r} not in {[t.text for t in result.tokens]}")


@pytest.mark.parametrize(
    ("text", "word", "expected"),
    [
        ("No evidence of pneumothorax.", "pneumothorax", {"negated"}),
        ("Small left pneumothorax.", "pneumothorax", set()),
        ("Patient denies chest pain.", "chest_pain", {"negated"}),
        ("Negative for malignancy.", "cancer", {"negated"}),
        ("Pneumonia was ruled out.", "pneumonia", {"negated"}),
        ("Effusion is absent.", "effusion", {"negated"}),
        ("Free of metastatic disease.", "disease", {"negated"}),
        ("He does not have a fever.", "fever", {"negated"}),
        ("He doesn't have a fever.", "fever", {"negated"}),
        ("Without edema.", "edema", {"negated"}),
        ("Possible pneumonia.", "pneumonia", {"possible"}),
        ("Probable viral infection.", "infection", {"possible"}),
        ("Cannot exclude pneumonia.", "pneumonia", {"possible"}),
        ("Pneumonia cannot be ruled out.", "pneumonia", {"possible"}),
        ("Suspected appendicitis.", "appendicitis", {"possible"}),
        ("PE is unlikely.", "pe", {"possible", "negated"}),
        ("History of diabetes.", "diabetes", {"historical"}),
        ("Mother had breast cancer.", "cancer", {"family"}),
        ("Family history of colon cancer.", "cancer", {"family"}),
        ("Return if he develops a fever.", "fever", {"hypothetical"}),
        ("Chest pain resolved.", "chest_pain", {"resolved"}),
        ("He no longer has chest pain.", "chest_pain", {"resolved"}),
        ("Do not take ibuprofen.", "ibuprofen", {"negated", "advice"}),
        ("You should not take ibuprofen.", "ibuprofen", {"negated", "advice"}),
    ],
)
def test_cues(text: str, word: str, expected: set[str]) -> None:
    assert statuses(text, word) == expected


def test_scope_ends_at_but_and_affirming_verbs() -> None:
    text = "Patient denies chest pain, but reports shortness of breath."
    assert statuses(text, "chest_pain") == {"negated"}
    assert statuses(text, "dyspnea") == set()
    assert statuses("No fever, has a cough.", "cough") == set()
    assert statuses("Mother had breast cancer; he has hypertension.", "hypertension") == set()


def test_negation_covers_a_list() -> None:
    text = "The patient denies nausea, vomiting, diarrhea."
    assert all(statuses(text, w) == {"negated"} for w in ("nausea", "vomiting", "diarrhea"))


def test_hypothetical_scope_ends_at_comma() -> None:
    text = "If he develops a fever, take Tylenol."
    assert statuses(text, "fever") == {"hypothetical"}
    assert statuses(text, "acetaminophen") == set()


def test_pseudo_cues_open_no_scope() -> None:
    assert statuses("No change in the nodule.", "nodule") == set()
    assert statuses("Gram negative rods.", "rods") == set()


def test_scope_head_is_the_first_content_word() -> None:
    result = detect_assertions("He was not staying on top of his blood sugar.")
    heads = {
        t.text: result.tokens[h].text for t, h in zip(result.tokens, result.heads, strict=True) if h >= 0
    }
    assert heads["glucose"] == "staying"
