"""The per-case regression gate: any case that was right in the baseline and is wrong now fails.

A paired test on a small suite cannot see a few flipped cases (with 10 cases, McNemar's
exact test needs at least 6 flips in one direction for p < 0.05; see
:func:`clineval.compare.stats.min_detectable_changes`). ``--fail-on-case-regression``
gates on the cases themselves instead, next to the statistical gate.

When is a (case, metric) score *right*? In this order:

1. ``--fail-on-case-regression METRIC=VALUE``: its value is at least VALUE (at most, for
   a metric where lower is better, such as ``latency``);
2. else, when the score has a pass/fail label (the evaluator's or metric's own threshold,
   e.g. ``FuzzyMatch`` with ``threshold``, an Azure AI evaluator's ``*_result``): the
   label is ``pass``;
3. else, when the metric is binary (every scored value of it in both runs is 0 or 1): the
   value is the good one (1, or 0 where lower is better);
4. else it is neither right nor wrong: a continuous metric without a label needs a
   threshold (``METRIC=VALUE``); without a metric name such metrics are left out, and the
   gate says which.

A case *regressed* when it was right in run A (the baseline) and, in run B, is scored
and not right, or is not scored at all (an error, not applicable, or no result): a case
the candidate can no longer score is not vouched for. Cases in only one run are not
paired and not gated.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clineval.compare.comparison import Scored, case_ids, lower_is_better_metric, metric_scores
from clineval.compare.gates import GateResult
from clineval.compare.stats import is_binary
from clineval.errors import ConfigError
from clineval.results.result import EvalResult

OPTION = "--fail-on-case-regression"
Rule = Literal["threshold", "label", "binary"]
PASS_LABELS = ("pass", "passed")
FAIL_LABELS = ("fail", "failed")


class CaseGate(BaseModel):
    """``--fail-on-case-regression [METRIC[=VALUE]]``: ``metric`` None means every metric."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str | None = None
    threshold: float | None = None

    @property
    def name(self) -> str:
        what = "" if self.metric is None else f" {self.metric}"
        if self.threshold is not None:
            what += f"={self.threshold:g}"
        return f"{OPTION.removeprefix('--')}{what}"


class CaseRegression(BaseModel):
    """A case that was right in run A and is not in run B."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    metric: str
    rule: Rule
    before: str
    """Run A's value or label, e.g. ``pass`` or ``1``."""
    after: str
    """Run B's: ``fail``, ``0``, ``error: ...``, ``not applicable``, ``no result``."""


class CaseGateResult(GateResult):
    """A :class:`GateResult` with the cases that regressed and the metrics it could not judge."""

    cases: list[CaseRegression] = Field(default_factory=list)
    not_gated: list[str] = Field(default_factory=list)


def parse_case_gate(text: str) -> CaseGate:
    """``""`` (every metric), ``METRIC`` or ``METRIC=VALUE``; a one-line :class:`ConfigError` otherwise."""
    text = text.strip()
    if not text or text == "*":
        return CaseGate()
    metric, sep, raw = text.partition("=")
    metric = metric.strip()
    if not metric:
        raise ConfigError(f"{OPTION} {text!r}: expected METRIC or METRIC=VALUE, e.g. {OPTION} decision")
    if not sep:
        return CaseGate(metric=metric)
    try:
        value = float(raw.strip())
    except ValueError:
        raise ConfigError(
            f"{OPTION} {text!r}: {raw.strip()!r} is not a number (expected METRIC=VALUE)"
        ) from None
    if not math.isfinite(value):
        raise ConfigError(f"{OPTION} {text!r}: the value must be a finite number")
    return CaseGate(metric=metric, threshold=value)


def _short(value: float) -> str:
    text = f"{value:.4g}"
    return text


def _right(score: Scored, rule: Rule, threshold: float | None, lower: bool) -> bool:
    value = score.value
    if rule == "threshold":
        assert threshold is not None and value is not None
        return value <= threshold if lower else value >= threshold
    if rule == "label":
        return (score.label or "").lower() in PASS_LABELS
    return value == (0.0 if lower else 1.0)


def _rule(score: Scored, gate: CaseGate, binary: bool) -> Rule | None:
    if score.status != "scored" or (score.value is None and not score.label):
        return None
    if gate.threshold is not None:
        return "threshold" if score.value is not None else None
    if (score.label or "").lower() in PASS_LABELS + FAIL_LABELS:
        return "label"
    if binary and score.value is not None:
        return "binary"
    return None


def _shown(score: Scored | None, rule: Rule) -> str:
    if score is None:
        return "no result"
    if score.status == "error":
        return f"error: {(score.message or 'unscored').splitlines()[0][:120]}"
    if score.status == "not_applicable":
        return "not applicable"
    if rule == "label" and score.label:
        return score.label
    return "–" if score.value is None else _short(score.value)


def check_case_regressions(a: EvalResult, b: EvalResult, gate: CaseGate) -> CaseGateResult:
    """The gate on run ``b`` against the baseline ``a`` (see the module docstring).

    A :class:`ConfigError` when ``gate.metric`` is not in both runs, or is a continuous
    metric whose scores carry no pass/fail label and the gate gives no threshold.
    """
    metrics_a, metrics_b = a.seen_metrics()[0], b.seen_metrics()[0]
    shared = [m for m in metrics_a if m in metrics_b]
    if gate.metric is not None and gate.metric not in shared:
        close = difflib.get_close_matches(gate.metric, shared, n=1, cutoff=0.6)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"{OPTION} {gate.metric}: the runs do not both have the metric {gate.metric!r}.{hint} "
            f"Metrics of both: {', '.join(shared) or 'none'}"
        )
    chosen = [gate.metric] if gate.metric is not None else shared
    ids_b = set(case_ids(b))
    ids = [i for i in case_ids(a) if i in ids_b]
    runs = (a.run, b.run)
    regressions: list[CaseRegression] = []
    not_gated: list[str] = []
    judged = 0
    for metric in chosen:
        by_a, by_b = metric_scores(a, metric), metric_scores(b, metric)  # a metric at a time
        values = [
            s.value for s in [*by_a.values(), *by_b.values()] if s.status == "scored" and s.value is not None
        ]
        binary = is_binary(values)
        lower = lower_is_better_metric(metric, runs)
        gated_here = False  # any case of this metric judged
        for case_id in ids:
            before = by_a.get(case_id)
            if before is None:
                continue
            rule = _rule(before, gate, binary)
            if rule is None:
                continue
            gated_here = True
            if not _right(before, rule, gate.threshold, lower):
                continue
            after = by_b.get(case_id)
            after_rule = _rule(after, gate, binary) if after is not None else None
            if (
                after is not None
                and after_rule is not None
                and _right(after, after_rule, gate.threshold, lower)
            ):
                continue
            regressions.append(
                CaseRegression(
                    case_id=case_id,
                    metric=metric,
                    rule=rule,
                    before=_shown(before, rule),
                    after=_shown(after, after_rule or rule),
                )
            )
        if gated_here:
            judged += 1
        elif values:
            not_gated.append(metric)
    if gate.metric is not None and not judged and gate.metric in not_gated:
        raise ConfigError(
            f"{OPTION} {gate.metric}: {gate.metric!r} has no pass/fail label and is not 0/1, so a case "
            f"is neither right nor wrong; give a threshold: {OPTION} {gate.metric}=VALUE"
        )
    return _result(gate, a, regressions, not_gated, judged)


def _result(
    gate: CaseGate,
    a: EvalResult,
    regressions: Sequence[CaseRegression],
    not_gated: Sequence[str],
    judged: int,
) -> CaseGateResult:
    baseline = a.run.id
    skipped = (
        f"; not gated (continuous, no pass/fail label; give METRIC=VALUE): {', '.join(not_gated)}"
        if not_gated
        else ""
    )
    if regressions:
        listed = ", ".join(f"{r.case_id} · {r.metric} ({r.before} → {r.after})" for r in regressions[:20])
        more = f" and {len(regressions) - 20} more" if len(regressions) > 20 else ""
        message = f"{len(regressions)} case(s) right in {baseline} are wrong now: {listed}{more}{skipped}"
    else:
        message = f"no case right in {baseline} is wrong now ({judged} metric(s) gated case by case){skipped}"
    return CaseGateResult(
        name=gate.name,
        passed=not regressions,
        observed=float(len(regressions)),
        threshold=0.0,
        message=message,
        cases=list(regressions),
        not_gated=list(not_gated),
    )
