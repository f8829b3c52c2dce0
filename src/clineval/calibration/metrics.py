"""The two metric shapes a calibration run needs, as importable classes so that a stored
calibration run can be resumed or re-scored like any other.

``ClaimCheck``
    The judge's verdict on each claim of ``case.metadata["claims"]`` against the case's
    response (the ``check_facts`` primitive, one call per case; ``check_grounding`` with the
    question in ``metadata["question"]`` when ``metadata["checked_by"]`` is ``grounding``).
    The value is the mean credit of the claims (1 entailed, the graded support or 0.5 when
    partial, 0 otherwise); the details keep every verdict.
``Restricted``
    A registered metric (``tbfact``, ``faithfulness``, ...) that scores only the cases of
    the given calibration protocols (``case.metadata["protocol"]``).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from clineval.errors import ConfigError
from clineval.metrics.base import BaseMetric, ScoreContext
from clineval.metrics.registry import build_metric
from clineval.model import Case, Score

__all__ = ["ClaimCheck", "Restricted"]


def _protocols(value: Sequence[str] | str) -> frozenset[str]:
    names = [value] if isinstance(value, str) else list(value)
    if not names or any(not isinstance(n, str) or not n for n in names):
        raise ConfigError("protocols must be a non-empty list of protocol names")
    return frozenset(names)


class ClaimCheck(BaseMetric):
    """Verdicts on given claims against the response (see the module docstring)."""

    name = "claim_check"
    requires = ("response",)
    needs_judge = True

    def __init__(self, *, protocols: Sequence[str] | str = ("kqa_nli", "radfact_phrases")):
        self.protocols = _protocols(protocols)

    def selects(self, case: Case) -> bool:
        return case.metadata.get("protocol") in self.protocols

    async def score(self, case: Case, ctx: ScoreContext) -> Score:
        claims = case.metadata.get("claims")
        if not isinstance(claims, list) or not all(isinstance(c, str) and c.strip() for c in claims):
            return Score.failed("metadata 'claims' must be a list of non-empty strings")
        prims = ctx.primitives()
        texts = [str(c) for c in claims]
        if case.metadata.get("checked_by") == "grounding":  # an answer's sentences, as ASTRID checks them
            question = str(case.metadata.get("question") or "")
            verdicts = await prims.check_grounding(texts, case.response or "", question)
        else:
            verdicts = await prims.check_facts(texts, case.response or "")
        credits = [
            1.0
            if v.label == "entailed"
            else (0.5 if v.support is None else v.support)
            if v.label == "partial" and v.reason != "incorrect"
            else 0.0
            for v in verdicts
        ]
        entailed = sum(v.label == "entailed" for v in verdicts)
        return Score(
            value=sum(credits) / len(credits) if credits else None,
            explanation=f"{entailed} of {len(verdicts)} claim(s) entailed",
            details={
                "judge": prims.name,
                "judge_kind": prims.kind,
                "verdicts": [{"claim": c, **v.model_dump()} for c, v in zip(texts, verdicts, strict=True)],
            },
        )


class Restricted:
    """A registered metric limited to some protocols' cases (see the module docstring)."""

    def __init__(self, *, metric: str, protocols: Sequence[str] | str):
        self.inner = build_metric(metric)
        self.protocols = _protocols(protocols)
        self.name: str = self.inner.name
        self.requires: tuple[str, ...] = tuple(getattr(self.inner, "requires", ()))
        self.needs_judge: bool = bool(getattr(self.inner, "needs_judge", False))
        self.higher_is_better: bool = bool(getattr(self.inner, "higher_is_better", True))
        self.description: str = str(getattr(self.inner, "description", ""))

    def selects(self, case: Case) -> bool:
        return case.metadata.get("protocol") in self.protocols

    async def score(self, case: Case, ctx: ScoreContext) -> Score:
        result: Any = self.inner.score(case, ctx)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, Score):
            raise TypeError(f"{self.name}: the wrapped metric returned {type(result).__name__}, not a Score")
        return result
