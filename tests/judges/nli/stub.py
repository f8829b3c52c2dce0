"""A stub model for the nli judge tests: its probabilities are what a test chooses."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from clineval.judges.nli.model import Probabilities


class StubModel:
    """An :class:`~clineval.judges.nli.model.EntailmentModel` whose answer is ``rule(premise,
    claim)``; tokens are words; it records the pairs it was asked about."""

    def __init__(self, rule: Callable[[str, str], Probabilities], max_length: int = 64):
        self.rule = rule
        self._max_length = max_length
        self.asked: list[tuple[str, str]] = []

    @property
    def max_length(self) -> int:
        return self._max_length

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(text.split()) for text in texts]

    def pair_overhead(self) -> int:
        return 3

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[Probabilities]:
        self.asked.extend(pairs)
        return [self.rule(premise, claim) for premise, claim in pairs]

    def describe(self) -> dict[str, Any]:
        return {"name": "stub"}


def three(entailment: float, neutral: float, contradiction: float) -> Probabilities:
    return Probabilities(entailment=entailment, neutral=neutral, contradiction=contradiction)
