"""The offline judge: a :class:`~clineval.judges.base.Judge` that answers no free-form
prompts, only the built-in primitives (through its ``primitives`` attribute)."""

from __future__ import annotations

from typing import Any, Literal

from clineval.judges.base import JudgeAnswer, JudgeError, MessagesLike, T
from clineval.judges.offline.decision import DecisionModel
from clineval.judges.offline.primitives import OfflinePrimitives
from clineval.judges.offline.thresholds import DEFAULT_THRESHOLDS, Thresholds

__all__ = ["OfflineJudge", "PrimitivesOnlyJudge"]


class PrimitivesOnlyJudge:
    """A :class:`~clineval.judges.base.Judge` that answers only the built-in primitives
    (through its ``primitives`` attribute) and refuses free-form prompts, which need an
    LLM judge. Subclasses set ``provider`` and ``primitives``."""

    provider = "offline"
    primitives: OfflinePrimitives

    @property
    def name(self) -> str:
        return self.primitives.name

    def describe(self) -> dict[str, Any]:
        return {"provider": self.provider, **self.primitives.describe()}

    async def ask(
        self, messages: MessagesLike, schema: type[T], *, max_tokens: int | None = None
    ) -> JudgeAnswer[T]:
        raise JudgeError(
            f"needs an LLM judge (--judge openai:MODEL, azure, or CLINEVAL_JUDGE): the {self.provider} "
            "judge only answers the built-in factuality and RAG primitives (TBFact, the ASTRID triad, "
            "faithfulness, context relevance), not free-form criteria"
        )

    async def aclose(self) -> None:
        return None


class OfflineJudge(PrimitivesOnlyJudge):
    """The default judge: deterministic heuristics on CPU, no network, no key."""

    def __init__(
        self,
        thresholds: Thresholds = DEFAULT_THRESHOLDS,
        decision: DecisionModel | Literal["packaged"] | None = "packaged",
    ) -> None:
        """``decision``: the fitted decision (the one shipped with clineval by default;
        ``None``: the rule thresholds alone)."""
        self.primitives = OfflinePrimitives(thresholds, decision=decision)
