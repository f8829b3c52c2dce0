"""A primitives judge with fixed answers, for hand-worked metric tests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from clineval.judges.base import JudgeError
from clineval.judges.primitives import (
    DEFAULT_CATEGORIES,
    Decision,
    Fact,
    GeneratedQuestions,
    SentenceKind,
    Verdict,
)
from clineval.metrics.base import Metric, ScoreContext, score_case
from clineval.model import Case, Score


class FakePrimitives:
    """Answers from dictionaries; counts every call by primitive."""

    name = "fake"
    kind = "heuristic"

    def __init__(
        self,
        *,
        facts: dict[str, list[Fact]] | None = None,
        verdicts: dict[str, Verdict] | None = None,
        kinds: dict[str, SentenceKind] | None = None,
        refused: dict[str, bool] | None = None,
        decline: bool = False,
        relevant: bool = True,
        relevant_words: Sequence[str] = (),
        statements: dict[str, list[str]] | None = None,
        questions: dict[str, GeneratedQuestions | None] | None = None,
    ):
        self.facts = facts or {}
        self.verdicts = verdicts or {}
        self.kinds = kinds or {}
        self.refused = refused or {}
        self.decline = decline
        self.relevant = relevant
        self.relevant_words = list(relevant_words)
        self.statements = statements or {}
        self.questions = questions or {}
        self.calls: dict[str, int] = {}
        self.evidence_seen: list[str] = []
        self.questions_seen: list[str] = []

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def describe(self) -> dict[str, Any]:
        return {"fake": True}

    async def extract_facts(self, text: str, categories: Sequence[str] = DEFAULT_CATEGORIES) -> list[Fact]:
        self._count("extract_facts")
        if text not in self.facts:
            raise JudgeError(f"no scripted facts for {text!r}")
        return list(self.facts[text])

    async def check_facts(self, facts: Sequence[str], evidence: str) -> list[Verdict]:
        self._count("check_facts")
        self.evidence_seen.append(evidence)
        return [self.verdicts.get(f, Verdict(label="not_entailed", reason="missing")) for f in facts]

    async def classify_sentences(
        self, sentences: Sequence[str], question: str | None = None
    ) -> list[SentenceKind]:
        self._count("classify_sentences")
        return [self.kinds.get(s, "informative") for s in sentences]

    async def detect_refusal(self, question: str, answer: str) -> Decision:
        self._count("detect_refusal")
        return Decision(value=self.refused.get(answer, False), explanation="scripted")

    async def should_decline(self, question: str, contexts: Sequence[str] | None = None) -> Decision:
        self._count("should_decline")
        return Decision(value=self.decline, explanation="scripted", reason="insufficient_context")

    async def context_relevant(self, question: str, contexts: Sequence[str]) -> Decision:
        self._count("context_relevant")
        return Decision(value=self.relevant, explanation="scripted")

    async def relevant_sentences(self, question: str, sentences: Sequence[str]) -> list[bool]:
        self._count("relevant_sentences")
        return [any(w in s for w in self.relevant_words) for s in sentences]

    async def extract_statements(self, question: str, answer: str) -> list[str]:
        self._count("extract_statements")
        return list(self.statements.get(answer, []))

    async def check_grounding(self, sentences: Sequence[str], evidence: str, question: str) -> list[Verdict]:
        """As :meth:`check_facts`; records the question each grounding request saw."""
        self._count("check_grounding")
        self.evidence_seen.append(evidence)
        self.questions_seen.append(question)
        return [self.verdicts.get(s, Verdict(label="not_entailed", reason="missing")) for s in sentences]

    async def generate_questions(self, answer: str, n: int = 3) -> GeneratedQuestions | None:
        """The scripted questions for ``answer``; ``None`` (cannot write questions) when unscripted."""
        self._count("generate_questions")
        return self.questions.get(answer)


class FakeJudge:
    """A judge whose primitives are a :class:`FakePrimitives` (as the offline judge's are)."""

    name = "fake"

    def __init__(self, primitives: FakePrimitives):
        self.primitives = primitives

    def describe(self) -> dict[str, Any]:
        return {}

    async def ask(self, messages: Any, schema: Any, *, max_tokens: int | None = None) -> Any:
        raise JudgeError("the fake judge only answers primitives")

    async def aclose(self) -> None:
        return None


def score_with(metric: Metric, case: Case, primitives: FakePrimitives) -> Score:
    """``metric`` scored on ``case`` with the scripted ``primitives`` as its judge."""
    return asyncio.run(score_case(metric, case, ScoreContext(FakeJudge(primitives))))
