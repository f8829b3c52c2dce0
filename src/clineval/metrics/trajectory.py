"""Trajectory metrics: compare the tool calls an agent made with a reference.

Source: the agent evaluation of Vertex AI's Gen AI evaluation service.

Five metrics compare ``case.trajectory`` (predicted) with ``case.reference_trajectory``:
exact match, in-order match, any-order match, precision and recall. A sixth, single tool
use, only checks that a named tool was called. All five comparisons share one
:class:`CallMatcher`, so they agree on when two calls are the same.

Rules the source leaves open, decided here:

* Two calls are the same when their tool names are equal and (``match="name_and_args"``,
  the default) their arguments are equal after canonicalisation: dict key order does not
  matter, integral floats equal ints (``23 == 23.0``), lists and dicts compare item by
  item, strings compare exactly (case-sensitive), ``true`` never equals ``1``. With
  ``args=[...]`` only those argument keys are compared (a key absent on both sides is
  equal). ``match="name"`` compares tool names only. A call's ``output`` and ``id``
  never take part.
* Duplicates count as a multiset: one predicted call matches at most one reference call
  and the other way round. Precision and recall use the size of the multiset
  intersection, any-order is "reference multiset within predicted multiset", in-order is a
  subsequence check in which each reference call takes a distinct later predicted call.
* Empty trajectories: both empty give 1 everywhere. An empty prediction against a
  non-empty reference gives 0 everywhere. An empty reference against a non-empty
  prediction gives exact 0, in-order 1 and any-order 1 (no reference call can be
  missed), precision 0 (every call is extra) and recall 1 (nothing to recall).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import JsonValue

from clineval.metrics.base import BaseMetric, ScoreContext
from clineval.metrics.registration import metric
from clineval.model import Case, Score, ToolCall

MatchMode = Literal["name_and_args", "name"]
MATCH_MODES: tuple[str, ...] = ("name_and_args", "name")
#: Where the six metrics come from, as the metric catalogue names it.
TRAJECTORY_SOURCE = "Vertex AI Gen AI evaluation (agent trajectory metrics)"

_ABSENT = ("absent",)
_SHOWN_CALLS = 3
_SHOWN_CHARS = 80


def canonical(value: JsonValue) -> Hashable:
    """A hashable form of a JSON value under which equal arguments are equal."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", int(value) if isinstance(value, float) and value.is_integer() else value)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, list):
        return ("list", tuple(canonical(item) for item in value))
    if isinstance(value, dict):
        return ("dict", tuple((key, canonical(value[key])) for key in sorted(value)))
    return ("null",)


@dataclass(frozen=True)
class Alignment:
    """Which predicted call matched which reference call; the rest is missing or extra."""

    predicted: Sequence[ToolCall]
    reference: Sequence[ToolCall]
    pairs: tuple[tuple[int, int], ...]  # (predicted index, reference index)
    missing: tuple[int, ...]  # reference indices left unmatched
    extra: tuple[int, ...]  # predicted indices left unmatched

    @property
    def missing_calls(self) -> list[ToolCall]:
        return [self.reference[j] for j in self.missing]

    @property
    def extra_calls(self) -> list[ToolCall]:
        return [self.predicted[i] for i in self.extra]


@dataclass(frozen=True)
class CallMatcher:
    """When two tool calls are the same, and how two trajectories line up."""

    mode: MatchMode = "name_and_args"
    keys: tuple[str, ...] | None = None

    @classmethod
    def from_settings(cls, match: str, args: Sequence[str] | str | None) -> CallMatcher:
        if match not in MATCH_MODES:
            raise ValueError(f"unknown match {match!r}; choose one of {', '.join(MATCH_MODES)}")
        if args is None:
            return cls(cast(MatchMode, match))
        keys = (args,) if isinstance(args, str) else tuple(args)
        if not keys or not all(isinstance(k, str) and k for k in keys):
            raise ValueError(f"args must list argument names, got {args!r}")
        if match == "name":
            raise ValueError("args only applies with match='name_and_args'")
        return cls("name_and_args", keys)

    def key(self, call: ToolCall) -> Hashable:
        """What must be equal for two calls to match."""
        if self.mode == "name":
            return (call.name,)
        if self.keys is None:
            return (call.name, canonical(call.arguments))
        arguments = call.arguments
        return (call.name, tuple(canonical(arguments[k]) if k in arguments else _ABSENT for k in self.keys))

    def same_sequence(self, predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> bool:
        return [self.key(c) for c in predicted] == [self.key(c) for c in reference]

    def any_order(self, predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> Alignment:
        """Multiset alignment: each reference call takes the first free equal predicted call."""
        free: defaultdict[Hashable, deque[int]] = defaultdict(deque)
        for i, call in enumerate(predicted):
            free[self.key(call)].append(i)
        pairs: list[tuple[int, int]] = []
        for j, call in enumerate(reference):
            queue = free[self.key(call)]
            if queue:
                pairs.append((queue.popleft(), j))
        return _alignment(predicted, reference, pairs)

    def in_order(self, predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> Alignment:
        """Greedy subsequence alignment: each reference call takes the next equal later call."""
        keys = [self.key(c) for c in predicted]
        pairs: list[tuple[int, int]] = []
        start = 0
        for j, call in enumerate(reference):
            wanted = self.key(call)
            hit = next((i for i in range(start, len(keys)) if keys[i] == wanted), None)
            if hit is not None:
                pairs.append((hit, j))
                start = hit + 1
        return _alignment(predicted, reference, pairs)

    def render(self, call: ToolCall) -> str:
        """A short form of a call for explanations, e.g. ``order_lab(test='HbA1c')``."""
        if self.mode == "name":
            return call.name
        text = f"{call.name}({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})"
        return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"

    def render_list(self, calls: Sequence[ToolCall]) -> str:
        shown = ", ".join(self.render(c) for c in calls[:_SHOWN_CALLS])
        more = len(calls) - _SHOWN_CALLS
        return f"{shown} and {more} more" if more > 0 else shown

    def details(self, alignment: Alignment) -> dict[str, Any]:
        """The matched, missing and extra calls, and the match mode, for a score's details."""
        return {
            "match": self.mode,
            "args": list(self.keys) if self.keys is not None else None,
            "matched": [
                {
                    "predicted_index": i,
                    "reference_index": j,
                    **_call(alignment.reference[j]),
                    "predicted_arguments": _call(alignment.predicted[i])["arguments"],
                }
                for i, j in alignment.pairs
            ],
            "missing": [{"reference_index": j, **_call(alignment.reference[j])} for j in alignment.missing],
            "extra": [{"predicted_index": i, **_call(alignment.predicted[i])} for i in alignment.extra],
        }


def _alignment(
    predicted: Sequence[ToolCall], reference: Sequence[ToolCall], pairs: list[tuple[int, int]]
) -> Alignment:
    used_predicted = {i for i, _ in pairs}
    used_reference = {j for _, j in pairs}
    return Alignment(
        predicted=predicted,
        reference=reference,
        pairs=tuple(sorted(pairs, key=lambda pair: pair[1])),
        missing=tuple(j for j in range(len(reference)) if j not in used_reference),
        extra=tuple(i for i in range(len(predicted)) if i not in used_predicted),
    )


def _call(call: ToolCall) -> dict[str, Any]:
    return call.model_dump(mode="json", include={"name", "arguments"})


def _calls(calls: Sequence[ToolCall]) -> str:
    return _plural(len(calls), "call")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class _TrajectoryMetric(BaseMetric):
    """Shared settings and flow of the five reference-based trajectory metrics."""

    requires: tuple[str, ...] = ("trajectory", "reference_trajectory")

    def __init__(self, *, match: str = "name_and_args", args: list[str] | str | None = None) -> None:
        self.matcher = CallMatcher.from_settings(match, args)

    def settings(self) -> dict[str, Any]:
        """The constructor settings that rebuild this metric (what a run records)."""
        out: dict[str, Any] = {}
        if self.matcher.mode != "name_and_args":
            out["match"] = self.matcher.mode
        if self.matcher.keys is not None:
            out["args"] = list(self.matcher.keys)
        return out

    def score(self, case: Case, ctx: ScoreContext) -> Score:
        assert case.trajectory is not None and case.reference_trajectory is not None
        return self.evaluate(case.trajectory, case.reference_trajectory)

    def evaluate(self, predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> Score:
        raise NotImplementedError

    def _score(self, value: float, explanation: str, alignment: Alignment, binary: bool = False) -> Score:
        label = ("match" if value == 1.0 else "no_match") if binary else None
        return Score(
            value=value, label=label, explanation=explanation, details=self.matcher.details(alignment)
        )

    def _coverage(self, alignment: Alignment, where: str, lead: str) -> Score:
        """1 when the alignment left no reference call unmatched (in-order and any-order)."""
        if not alignment.reference:
            explanation = "the reference trajectory is empty: no reference call can be missed"
        else:
            explanation = (
                f"{len(alignment.pairs)} of {len(alignment.reference)} reference "
                f"calls found{where}" + self._missing(alignment, lead)
            )
        return self._score(float(not alignment.missing), explanation, alignment, binary=True)

    def _missing(self, alignment: Alignment, lead: str = "missing") -> str:
        calls = alignment.missing_calls
        return f"; {lead}: {self.matcher.render_list(calls)}" if calls else ""

    def _extra(self, alignment: Alignment) -> str:
        calls = alignment.extra_calls
        return f"; extra: {self.matcher.render_list(calls)}" if calls else ""


def _empty_reason(predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> str | None:
    if not predicted and not reference:
        return "both trajectories are empty"
    if not predicted:
        return f"the predicted trajectory is empty; the reference has {_calls(reference)}"
    if not reference:
        return f"the reference trajectory is empty; the prediction has {_calls(predicted)}"
    return None


@metric("trajectory_exact_match", source=TRAJECTORY_SOURCE)
class TrajectoryExactMatch(_TrajectoryMetric):
    """1 when the predicted calls equal the reference calls, in the same order, nothing extra."""

    def evaluate(self, predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> Score:
        alignment = self.matcher.any_order(predicted, reference)
        same = self.matcher.same_sequence(predicted, reference)
        return self._score(float(same), self._explain(same, alignment), alignment, binary=True)

    def _explain(self, same: bool, alignment: Alignment) -> str:
        empty = _empty_reason(alignment.predicted, alignment.reference)
        if same:
            return empty or f"identical: {_plural(len(alignment.reference), 'call')} in order"
        if empty:
            return empty
        if not alignment.missing and not alignment.extra:
            return "the same calls, in a different order"
        return "not identical" + self._missing(alignment) + self._extra(alignment)


@metric("trajectory_in_order_match", source=TRAJECTORY_SOURCE)
class TrajectoryInOrderMatch(_TrajectoryMetric):
    """1 when every reference call occurs in the prediction in reference order (extras allowed)."""

    def evaluate(self, predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> Score:
        alignment = self.matcher.in_order(predicted, reference)
        return self._coverage(alignment, " in reference order", "missing or out of order")


@metric("trajectory_any_order_match", source=TRAJECTORY_SOURCE)
class TrajectoryAnyOrderMatch(_TrajectoryMetric):
    """1 when every reference call occurs in the prediction, in any order (extras allowed)."""

    def evaluate(self, predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> Score:
        return self._coverage(self.matcher.any_order(predicted, reference), "", "missing")


@metric("trajectory_precision", source=TRAJECTORY_SOURCE)
class TrajectoryPrecision(_TrajectoryMetric):
    """Share of the predicted calls that also appear in the reference trajectory."""

    def evaluate(self, predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> Score:
        alignment = self.matcher.any_order(predicted, reference)
        if not predicted:
            value = 0.0 if reference else 1.0
            return self._score(value, _empty_reason(predicted, reference) or "", alignment)
        found = len(alignment.pairs)
        explanation = f"{found} of {len(predicted)} predicted calls appear in the reference" + self._extra(
            alignment
        )
        return self._score(found / len(predicted), explanation, alignment)


@metric("trajectory_recall", source=TRAJECTORY_SOURCE)
class TrajectoryRecall(_TrajectoryMetric):
    """Share of the reference calls that also appear in the predicted trajectory."""

    def evaluate(self, predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> Score:
        alignment = self.matcher.any_order(predicted, reference)
        if not reference:
            reason = _empty_reason(predicted, reference) or ""
            return self._score(1.0, f"{reason}: nothing to recall", alignment)
        found = len(alignment.pairs)
        explanation = f"{found} of {len(reference)} reference calls found"
        explanation += self._missing(alignment)
        return self._score(found / len(reference), explanation, alignment)


@metric("trajectory_single_tool_use", source=TRAJECTORY_SOURCE)
class TrajectorySingleToolUse(BaseMetric):
    """1 when the predicted trajectory calls the tool given as tool_name at least once."""

    requires: tuple[str, ...] = ("trajectory",)

    def __init__(self, *, tool_name: str) -> None:
        if not isinstance(tool_name, str) or not tool_name.strip():
            raise ValueError(f"tool_name must be a non-empty tool name, got {tool_name!r}")
        self.tool_name = tool_name

    def settings(self) -> dict[str, Any]:
        """The constructor settings that rebuild this metric (what a run records)."""
        return {"tool_name": self.tool_name}

    def score(self, case: Case, ctx: ScoreContext) -> Score:
        assert case.trajectory is not None
        positions = [i for i, call in enumerate(case.trajectory) if call.name == self.tool_name]
        called = list(dict.fromkeys(call.name for call in case.trajectory))
        details: dict[str, Any] = {
            "tool_name": self.tool_name,
            "positions": positions,
            "called_tools": called,
        }
        if positions:
            explanation = f"{self.tool_name} was called ({_plural(len(positions), 'time')})"
        elif not called:
            explanation = f"{self.tool_name} was not called: the trajectory is empty"
        else:
            explanation = f"{self.tool_name} was not called; called: {', '.join(called)}"
        used = bool(positions)
        return Score(
            value=float(used), label="used" if used else "not_used", explanation=explanation, details=details
        )
