"""Repeated trials: each case run N times (``repeats``), each trial scored, the case scored by their mean.

A run with ``repeats: N`` (``clineval run --repeats N``, ``evaluate(..., repeats=N)``) calls
the agent N times on every case and scores every trial. Each trial's output and scores are
stored as they come (the store's ``trial_outputs`` and ``trial_results`` tables); once the
N trials of a (case, metric) are scored, the case's score is their combination
(:func:`combine_trials`), stored as the case's ordinary result. Everything that reads
results (aggregates, ``clineval compare``, gates, the viewer) therefore works on **case
means**: the unit of analysis stays the case, and paired tests pair cases, never trials.

Per (case, metric):

* value: the mean of the values of the trials that were scored (an unscored trial never
  counts as 0); sub-scores likewise;
* ``details["trials"]``: ``values`` (each trial's value in trial order, ``None`` when it was
  unscored or not applicable), ``std`` (their sample standard deviation, n - 1; ``None``
  with fewer than two values) and ``unscored`` (how many trials had an error);
* the evidence (``details``, ``label``, ``explanation``) is the first trial's, which is
  also the output the case shows (the store's ``outputs`` row is trial 1's);
* error only when no trial was scored; not applicable when every trial was.

Over a run, per metric (:func:`summarise_trials`): the spread, the mean over cases of the
within-case standard deviation; and, for a pass/fail metric (every trial value 0 or 1),
pass@k and pass^k for k = 1..N (not for a metric where lower is better, such as ``failure``),
each the mean over cases of its unbiased estimator from
the case's n scored trials of which c passed:

* pass@k = 1 - C(n-c, k) / C(n, k): the probability that at least one of k trials passes
  (Chen et al. 2021, "Evaluating Large Language Models Trained on Code");
* pass^k = C(c, k) / C(n, k): the probability that all k trials pass, i.e. that the agent
  is reliable (Yao et al. 2024, "tau-bench: A Benchmark for Tool-Agent-User Interaction in
  Real-World Domains").

Both are 1 - ... and ... in [0, 1]; pass@1 = pass^1 = c / n; with k > n a case does not
count towards that k.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from clineval.judges.base import Usage
from clineval.model import ResultRecord, RunRecord, Score

#: The key of a case score's ``details`` that holds its trials.
TRIALS_KEY = "trials"
#: Largest number of trials per case.
MAX_REPEATS = 100


def repeats_of(record: RunRecord) -> int:
    """How many trials each case of the run has (1: a run without repeats)."""
    value = record.config.get("repeats")
    return int(value) if isinstance(value, int) and value > 1 else 1


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of pass@k from ``n`` trials of which ``c`` passed (Chen et al. 2021)."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of pass^k from ``n`` trials of which ``c`` passed (Yao et al. 2024)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _std(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = _mean(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


def combine_trials(scores: Sequence[Score]) -> Score:
    """The case's score from its trials' scores (in trial order): see the module docstring."""
    if not scores:
        raise ValueError("no trials to combine")
    first = scores[0]
    scored = [s for s in scores if s.status == "scored"]
    values = [s.value if s.status == "scored" else None for s in scores]
    present = [v for v in values if v is not None]
    unscored = sum(1 for s in scores if s.status == "error")
    trials: dict[str, Any] = {"values": values, "std": _std(present), "unscored": unscored}
    details = {**first.details, TRIALS_KEY: trials}
    listed = ", ".join("-" if v is None else f"{v:g}" for v in values)
    if not scored:
        errors = [s.error for s in scores if s.error]
        if errors:
            return Score(
                error=f"{len(errors)} of {len(scores)} trials unscored: {errors[0]}", details=details
            )
        return Score(details=details, explanation=first.explanation)
    subs: dict[str, float | None] = {}
    for name in dict.fromkeys(key for s in scored for key in s.sub_scores):
        found = [v for s in scored if (v := s.sub_scores.get(name)) is not None]
        subs[name] = _mean(found) if found else None
    labels = {s.label for s in scored}
    head = f"mean of {len(scores)} trials ({listed})"
    if unscored:
        head += f"; {unscored} unscored"
    explanation = f"{head}; trial 1: {first.explanation}" if first.explanation else head
    return Score(
        value=_mean(present) if present else None,
        label=labels.pop() if len(labels) == 1 else None,
        explanation=explanation,
        details=details,
        sub_scores=subs,
    )


def combine_results(trials: Sequence[ResultRecord]) -> ResultRecord:
    """The case-level result of one (case, metric) from its trial results (in trial order):
    the combined score, the judge usage and the scoring time summed over the trials."""
    usage = Usage()
    for record in trials:
        usage.add(record.usage)
    first = trials[0]
    return ResultRecord(
        run_id=first.run_id,
        case_id=first.case_id,
        metric=first.metric,
        score=combine_trials([r.score for r in trials]),
        usage=usage,
        duration_s=math.fsum(r.duration_s for r in trials),
        created_at=max(r.created_at for r in trials),
    )


class TrialSummary(BaseModel):
    """One metric of a run with repeats, over its cases (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    repeats: int
    cases: int
    """Cases with at least one scored trial."""
    spread: float | None = None
    """Mean over cases of the within-case standard deviation (cases with two or more values)."""
    pass_fail: bool = False
    """Every scored trial value is 0 or 1."""
    pass_at: dict[int, float] = {}
    """pass@k by k (pass/fail metrics only)."""
    pass_hat: dict[int, float] = {}
    """pass^k by k (pass/fail metrics only)."""


def summarise_trials(
    rows: Iterable[tuple[str, Sequence[float | None] | None]],
    *,
    repeats: int,
    metric_order: Sequence[str] = (),
    lower_is_better: Collection[str] = (),
) -> list[TrialSummary]:
    """Per metric, from ``(metric, trial values)`` of each case result (``details["trials"]["values"]``).

    A metric in ``lower_is_better`` (e.g. ``failure``) gets no pass@k rows: 1 is not a pass there.
    """
    per_metric: dict[str, list[list[float]]] = {name: [] for name in metric_order}
    for metric, values in rows:
        if values is None:
            continue
        present = [float(v) for v in values if v is not None]
        per_metric.setdefault(metric, [])
        if present:
            per_metric[metric].append(present)
    out: list[TrialSummary] = []
    for metric, cases in per_metric.items():
        if not cases:
            continue
        stds = [s for case in cases if (s := _std(case)) is not None]
        summary = TrialSummary(
            metric=metric,
            repeats=repeats,
            cases=len(cases),
            spread=_mean(stds) if stds else None,
            pass_fail=metric not in lower_is_better and all(v in (0.0, 1.0) for case in cases for v in case),
        )
        if summary.pass_fail:
            for k in range(1, repeats + 1):
                counted = [(len(case), int(sum(case))) for case in cases if len(case) >= k]
                if counted:
                    summary.pass_at[k] = _mean([pass_at_k(n, c, k) for n, c in counted])
                    summary.pass_hat[k] = _mean([pass_hat_k(n, c, k) for n, c in counted])
        out.append(summary)
    return out


def trial_values(details: Mapping[str, Any] | None) -> list[float | None] | None:
    """The trial values a case score's ``details`` holds, or ``None`` (not a combined score)."""
    trials = (details or {}).get(TRIALS_KEY)
    if not isinstance(trials, Mapping):
        return None
    values = trials.get("values")
    return list(values) if isinstance(values, list) else None
