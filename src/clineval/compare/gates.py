"""Quality gates on a run, for CI: thresholds on metric means and "no regression vs a baseline".

``--fail-under METRIC=VALUE``
    passes when the run's mean of METRIC (a metric or a sub-score ``metric.sub``) over
    its scored cases is at least VALUE. Errors and not-applicable cases never enter the
    mean; a metric with no scored case fails the gate (there is nothing to vouch for).
``--fail-over METRIC=VALUE``
    the same for metrics where lower is better, such as ``latency``: passes when the
    mean is at most VALUE.
``--no-regression-vs RUN``
    passes when no metric of the run has the verdict ``regressed`` against the baseline
    RUN (see :mod:`clineval.compare.comparison`).

Means are compared with a tolerance of 1e-9, so that a mean that equals the threshold
up to floating-point rounding passes. Each gate gives a :class:`GateResult`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from clineval.compare.comparison import Comparison
from clineval.errors import ConfigError
from clineval.results.result import EvalResult

Bound = Literal["min", "max"]
TOLERANCE = 1e-9
OPTION = {"min": "--fail-under", "max": "--fail-over"}


class ThresholdGate(BaseModel):
    """``--fail-under`` (``bound="min"``: mean ≥ threshold) or ``--fail-over`` (``"max"``: mean ≤ it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str
    threshold: float
    bound: Bound = "min"

    @property
    def option(self) -> str:
        return OPTION[self.bound]

    @property
    def name(self) -> str:
        return f"{self.option.removeprefix('--')} {self.metric}={self.threshold:g}"


class GateResult(BaseModel):
    """The outcome of one gate."""

    model_config = ConfigDict(extra="forbid")

    name: str
    passed: bool
    observed: float | None = None
    threshold: float | None = None
    message: str


def parse_threshold(text: str, bound: Bound = "min") -> ThresholdGate:
    """``METRIC=VALUE`` as a gate; a :class:`ConfigError` naming the option when it is not one."""
    option = OPTION[bound]
    metric, sep, raw = text.partition("=")
    metric, raw = metric.strip(), raw.strip()
    example = "latency=2.5" if bound == "max" else "exact_match=0.8"
    if not sep or not metric or not raw:
        raise ConfigError(f"{option} {text!r}: expected METRIC=VALUE, e.g. {option} {example}")
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{option} {text!r}: {raw!r} is not a number (expected METRIC=VALUE)") from None
    if not math.isfinite(value):
        raise ConfigError(f"{option} {text!r}: the value must be a finite number")
    return ThresholdGate(metric=metric, threshold=value, bound=bound)


def _known(result: EvalResult) -> tuple[list[str], dict[str, list[str]]]:
    """The run's metrics, and per metric the sub-scores seen in its results."""
    return result.seen_metrics()


def _unknown(
    gate: ThresholdGate, text: str, metrics: Sequence[str], candidates: Sequence[str] | None = None
) -> ConfigError:
    close = difflib.get_close_matches(gate.metric, list(candidates or metrics), n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return ConfigError(
        f"{gate.option} {gate.metric}={gate.threshold:g}: {text}.{hint} "
        f"The run's metrics: {', '.join(metrics) or 'none'}"
    )


def check_metric_names(gates: Iterable[ThresholdGate], metrics: Sequence[str]) -> None:
    """Before a run: every gate's metric (the part before a ``.``) is one the run will have."""
    for gate in gates:
        if gate.metric not in metrics and gate.metric.partition(".")[0] not in metrics:
            raise _unknown(gate, f"the run has no metric {gate.metric!r}", metrics)


def _split(metric: str, metrics: Sequence[str]) -> tuple[str, str | None] | None:
    if metric in metrics:
        return metric, None
    parent, dot, sub = metric.partition(".")
    if dot and parent in metrics:
        return parent, sub
    return None


def check_threshold(result: EvalResult, gate: ThresholdGate) -> GateResult:
    """The gate on the run's mean of ``gate.metric`` over its scored cases."""
    metrics, subs = _known(result)
    found = _split(gate.metric, metrics)
    if found is None:
        raise _unknown(gate, f"the run has no metric {gate.metric!r}", metrics)
    parent, sub = found
    aggregates = {a.metric: a for a in result.aggregate()}
    parent_agg = aggregates.get(parent)
    if sub is not None and sub not in subs.get(parent, []) and parent_agg is not None and parent_agg.scored:
        raise _unknown(
            gate,
            f"{parent!r} has no sub-score {sub!r} "
            f"(its sub-scores: {', '.join(subs.get(parent, [])) or 'none'})",
            metrics,
            [f"{parent}.{name}" for name in subs.get(parent, [])],
        )
    agg = aggregates.get(gate.metric)
    if agg is None or agg.mean is None:
        errors = parent_agg.errors if parent_agg else 0
        na = parent_agg.not_applicable if parent_agg else 0
        return GateResult(
            name=gate.name,
            passed=False,
            threshold=gate.threshold,
            message=(
                f"{gate.metric}: no scored case ({errors} unscored, {na} not applicable), "
                f"so the gate cannot pass"
            ),
        )
    mean = agg.mean
    if gate.bound == "min":
        passed = mean >= gate.threshold - TOLERANCE
        relation = "at least" if passed else "below"
    else:
        passed = mean <= gate.threshold + TOLERANCE
        relation = "at most" if passed else "above"
    return GateResult(
        name=gate.name,
        passed=passed,
        observed=mean,
        threshold=gate.threshold,
        message=(
            f"{gate.metric}: mean {mean:.4g} over {agg.scored} scored case(s) "
            f"is {relation} {gate.threshold:g}"
        ),
    )


def check_no_regression(comparison: Comparison) -> GateResult:
    """Passes when no metric of the comparison has the verdict ``regressed``."""
    baseline = comparison.run_a.id
    regressed = comparison.regressed
    if regressed:
        details = ", ".join(
            f"{m.metric} (Δ {m.delta:+.3f}, p Holm {m.p_holm:.2g})"
            for m in regressed
            if m.delta is not None and m.p_holm is not None
        )
        message = f"regressed vs {baseline}: {details}"
    else:
        message = (
            f"no metric regressed vs {baseline} ({len(comparison.metrics)} compared on "
            f"{comparison.paired_cases} paired case(s), Holm-adjusted alpha {comparison.alpha:g})"
        )
    return GateResult(
        name=f"no-regression-vs {baseline}",
        passed=not regressed,
        observed=float(len(regressed)),
        threshold=0.0,
        message=message,
    )


def evaluate_gates(
    result: EvalResult, thresholds: Iterable[ThresholdGate] = (), comparison: Comparison | None = None
) -> list[GateResult]:
    """Every threshold gate on ``result``, then the regression gate when a comparison is given."""
    outcomes = [check_threshold(result, gate) for gate in thresholds]
    if comparison is not None:
        outcomes.append(check_no_regression(comparison))
    return outcomes
