"""Sentences of a patient answer that speak to the asker's feelings are not claims."""

from __future__ import annotations

import pytest

from clineval.judges.offline.conversation import classify_sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "That sounds really frightening, and it makes sense that you are worried.",
        "That sounds worrying, and it's completely understandable to be concerned.",
        "You are not alone in this.",
        "I understand how stressful this must be.",
        "It is completely understandable to feel anxious about this.",
    ],
)
def test_empathy_is_an_acknowledgement(sentence: str) -> None:
    assert classify_sentence(sentence) == "acknowledgement"


@pytest.mark.parametrize(
    "sentence",
    [
        "That sounds worrying, but it is usually harmless.",  # it goes on to inform
        "Your fever is worrying and needs review today.",  # clinical content
        "You should see a doctor if you are worried about the swelling.",  # advice
        "It can be hard to tell a cold from the flu.",  # about the illnesses, not the asker
        "Many people feel anxious before surgery.",  # a statement about people, not to the reader
    ],
)
def test_a_feeling_word_with_information_is_a_claim(sentence: str) -> None:
    assert classify_sentence(sentence) == "informative"
