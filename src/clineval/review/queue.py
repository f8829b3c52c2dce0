"""Planning a review queue: which cases of a run clinicians review, and in what order.

Strategies (``clineval review plan RUN --n 50 --strategy ...``):

``random``
    ``n`` cases drawn at random (seeded) from the cases the agent answered.
``stratified``
    the cases scored by a metric are cut into equal-count strata of its score (quintiles by
    default) and the same number of cases is drawn from each, so low, middle and high scores
    are all reviewed, however skewed the run is (a random sample of a run that scores 0.9
    almost everywhere holds few of the cases that matter most).
``disagreement``
    the cases on which two metrics of the run, or one metric scored by two judges (the same
    cases in another run, ``--vs RUN``), disagree most: the absolute difference of the two
    scores (of their percentile ranks when the two are different metrics, which need not
    share a scale).

Cases the agent failed on are left out (there is no response to review); cases a strategy
cannot place (unscored by its metric) too, and the plan says how many. The order of the
queue is random (seeded) for every strategy, so that reviewers do not meet all the low
scores first.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clineval.errors import ConfigError
from clineval.model import ReviewQueue, RunRecord
from clineval.model.review import Strategy
from clineval.review.schema import ReviewSchema
from clineval.store.reviews import new_queue_id
from clineval.store.sqlite import RunStore

STRATEGIES: tuple[Strategy, ...] = ("random", "stratified", "disagreement")
DEFAULT_STRATA = 5
#: Reviewers per case a queue may ask for (:attr:`ReviewQueue.per_case`).
MAX_PER_CASE = 20


@dataclass
class Plan:
    """A planned queue and what the plan left out."""

    queue: ReviewQueue
    eligible: int
    left_out: dict[str, int] = field(default_factory=dict)
    """Reason -> number of cases not considered."""
    strata: list[tuple[float, float, int, int]] = field(default_factory=list)
    """Stratified: (lowest score, highest score, cases in the stratum, cases drawn)."""


def answered_cases(store: RunStore, run_id: str) -> tuple[list[str], int]:
    """The run's case ids the agent did not fail on (dataset order), and how many it failed on."""
    rows = store.query(
        "SELECT c.case_id, COALESCE(json_extract(o.data, '$.agent_run.failed'), 0)"
        " FROM cases c LEFT JOIN outputs o ON o.run_id = c.run_id AND o.case_id = c.case_id"
        " WHERE c.run_id = ? ORDER BY c.idx",
        (run_id,),
    )
    ids = [str(r[0]) for r in rows if not r[1]]
    return ids, len(rows) - len(ids)


def metric_values(store: RunStore, run_id: str, metric: str) -> dict[str, float]:
    """Case id -> the metric's value, for the cases it scored."""
    rows = store.query(
        "SELECT case_id, value FROM results WHERE run_id = ? AND metric = ? AND status = 'scored'"
        " AND value IS NOT NULL",
        (run_id, metric),
    )
    return {str(r[0]): float(r[1]) for r in rows}


def run_metrics(store: RunStore, record: RunRecord) -> list[str]:
    names = [
        str(r[0]) for r in store.query("SELECT DISTINCT metric FROM results WHERE run_id = ?", (record.id,))
    ]
    return list(dict.fromkeys([m for m in record.metrics if m in names] + sorted(names)))


def default_metric(store: RunStore, record: RunRecord, schema: ReviewSchema) -> str:
    """The metric a stratified plan uses when none is given: the first factuality metric
    the run has (the schema's ``compare_with``), else the first with values in [0, 1]."""
    present = run_metrics(store, record)
    for scale in schema.scales:
        for name in scale.compare_with:
            if name in present and metric_values(store, record.id, name):
                return name
    for name in present:
        values = metric_values(store, record.id, name)
        if values and all(0.0 <= v <= 1.0 for v in values.values()) and len(set(values.values())) > 1:
            return name
    raise ConfigError(
        f"run {record.id} has no metric with scores to stratify by; give one with --metric NAME"
    )


def _check_metric(store: RunStore, record: RunRecord, metric: str) -> dict[str, float]:
    values = metric_values(store, record.id, metric)
    if not values:
        present = run_metrics(store, record)
        raise ConfigError(
            f"--metric {metric}: run {record.id} has no scored result of this metric "
            f"(its metrics: {', '.join(present) or 'none'})"
        )
    return values


def _ranks(values: Mapping[str, float]) -> dict[str, float]:
    """Percentile ranks in [0, 1] (ties share their mean rank)."""
    from scipy.stats import rankdata

    ids = list(values)
    if len(ids) == 1:
        return {ids[0]: 0.5}
    ranks = rankdata([values[i] for i in ids])
    return {i: float((r - 1) / (len(ids) - 1)) for i, r in zip(ids, ranks, strict=True)}


def fmt_score(value: float) -> str:
    """A score as the plan shows it: three decimals (``0.300``), large values in 4 digits."""
    return f"{value:.3f}" if abs(value) < 1000 else f"{value:.4g}"


def plan_queue(
    store: RunStore,
    record: RunRecord,
    *,
    n: int,
    strategy: Strategy = "random",
    seed: int = 0,
    metrics: Sequence[str] = (),
    compare: tuple[RunRecord, RunStore] | None = None,
    per_case: int = 1,
    schema: ReviewSchema,
    schema_data: dict[str, Any] | None = None,
    strata: int = DEFAULT_STRATA,
    cases: Sequence[str] | None = None,
) -> Plan:
    """Pick the cases of a review queue (see the module docstring). Nothing is stored.

    ``cases``: these cases, in this order (strategy ``given``; ``n`` is not used): a list a
    team chose itself, e.g. the cases a complaint named."""
    if cases is not None:
        return _given(store, record, cases, per_case=per_case, schema_data=schema_data)
    if n < 1:
        raise ConfigError(f"--n {n}: plan at least one case")
    if seed < 0:
        raise ConfigError(f"--seed {seed}: a seed is a whole number from 0")
    if not 1 <= per_case <= MAX_PER_CASE:
        raise ConfigError(f"--reviewers-per-case {per_case}: from 1 to {MAX_PER_CASE} reviewers per case")
    if strata < 1:
        raise ConfigError(f"--strata {strata}: at least one stratum")
    if strategy not in STRATEGIES:
        raise ConfigError(f"--strategy {strategy}: expected one of {', '.join(STRATEGIES)}")
    rng = np.random.default_rng(seed)
    answered, failed = answered_cases(store, record.id)
    left_out: dict[str, int] = {}
    if failed:
        left_out["the agent failed on the case (nothing to review)"] = failed
    if not answered:
        raise ConfigError(f"run {record.id} has no case the agent answered: nothing to review")
    notes: dict[str, str] = {}
    used_metrics: list[str] = list(metrics)
    strata_rows: list[tuple[float, float, int, int]] = []
    if strategy == "random":
        if metrics or compare is not None:
            raise ConfigError("--metric and --vs choose what a stratified or disagreement plan looks at")
        order = [answered[i] for i in rng.permutation(len(answered))]
        chosen = order[:n]
        eligible = len(answered)
    elif strategy == "stratified":
        if compare is not None or len(metrics) > 1:
            raise ConfigError("a stratified plan looks at one metric (--metric NAME) of one run")
        metric = metrics[0] if metrics else default_metric(store, record, schema)
        used_metrics = [metric]
        values = _check_metric(store, record, metric)
        pool = [c for c in answered if c in values]
        if len(pool) < len(answered):
            left_out[f"not scored by {metric}"] = len(answered) - len(pool)
        eligible = len(pool)
        chosen, strata_rows = _stratified(pool, values, n, strata, rng)
        for case_id in chosen:
            number = next(
                i for i, row in enumerate(strata_rows, start=1) if row[0] <= values[case_id] <= row[1]
            )
            notes[case_id] = (
                f"{metric} {fmt_score(values[case_id])}, stratum {number} of {len(strata_rows)}"
                f" ({fmt_score(strata_rows[number - 1][0])}–{fmt_score(strata_rows[number - 1][1])})"
            )
    else:
        chosen, eligible, used_metrics = _disagreement(
            store, record, answered, metrics, compare, n, rng, notes, left_out
        )
    chosen = [chosen[i] for i in rng.permutation(len(chosen))]  # reviewers meet the strata mixed
    if len(chosen) < n:
        left_out[f"asked for {n}, only {len(chosen)} case(s) could be planned"] = n - len(chosen)
    now = time.time()
    queue = ReviewQueue(
        id=new_queue_id(now),
        run_id=record.id,
        created_at=now,
        strategy=strategy,
        seed=seed,
        per_case=per_case,
        metrics=used_metrics,
        compare_run=compare[0].id if compare is not None else None,
        schema_=schema_data,
        case_ids=chosen,
        notes=notes,
    )
    return Plan(queue=queue, eligible=eligible, left_out=left_out, strata=strata_rows)


def _given(
    store: RunStore,
    record: RunRecord,
    cases: Sequence[str],
    *,
    per_case: int,
    schema_data: dict[str, Any] | None,
) -> Plan:
    ids = list(dict.fromkeys(c.strip() for c in cases if c.strip()))
    if not ids:
        raise ConfigError("--cases: name at least one case id")
    if not 1 <= per_case <= MAX_PER_CASE:
        raise ConfigError(f"--reviewers-per-case {per_case}: from 1 to {MAX_PER_CASE} reviewers per case")
    answered, _ = answered_cases(store, record.id)
    known = set(answered)
    in_run = {str(r[0]) for r in store.query("SELECT case_id FROM cases WHERE run_id = ?", (record.id,))}
    unknown = [c for c in ids if c not in in_run]
    if unknown:
        raise ConfigError(
            f"--cases: run {record.id} has no case {', '.join(repr(c) for c in unknown[:5])}"
            + (f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else "")
        )
    failed = [c for c in ids if c not in known]
    chosen = [c for c in ids if c in known]
    left_out = {"the agent failed on the case (nothing to review)": len(failed)} if failed else {}
    if not chosen:
        raise ConfigError(
            f"--cases: the agent failed on every case named ({', '.join(failed[:5])}): nothing to review"
        )
    now = time.time()
    queue = ReviewQueue(
        id=new_queue_id(now),
        run_id=record.id,
        created_at=now,
        strategy="given",
        per_case=per_case,
        schema_=schema_data,
        case_ids=chosen,
        notes=dict.fromkeys(chosen, "named"),
    )
    return Plan(queue=queue, eligible=len(ids), left_out=left_out)


def _stratified(
    pool: list[str], values: Mapping[str, float], n: int, strata: int, rng: np.random.Generator
) -> tuple[list[str], list[tuple[float, float, int, int]]]:
    """Equal allocation over equal-count strata of the score; a stratum with too few cases
    gives its share to the others."""
    if not pool:
        return [], []
    ordered = sorted(pool, key=lambda c: (values[c], c))
    k = max(1, min(strata, n, len(ordered)))
    bounds = [round(i * len(ordered) / k) for i in range(k + 1)]
    # cases with one score must not straddle two strata (a stratum is a range of scores): a
    # boundary inside a run of ties moves past it, so the tied cases stay in the lower stratum
    for i in range(1, k):
        b = max(bounds[i], bounds[i - 1])
        while 0 < b < len(ordered) and values[ordered[b - 1]] == values[ordered[b]]:
            b += 1
        bounds[i] = b
    groups = [g for g in (ordered[bounds[i] : bounds[i + 1]] for i in range(k)) if g]
    want = min(n, len(ordered))
    take = [0] * len(groups)
    while sum(take) < want:
        room = [i for i, g in enumerate(groups) if take[i] < len(g)]
        for i in room:
            if sum(take) >= want:
                break
            take[i] += 1
    chosen: list[str] = []
    rows: list[tuple[float, float, int, int]] = []
    for group, count in zip(groups, take, strict=True):
        picked = (
            [group[i] for i in sorted(rng.choice(len(group), size=count, replace=False))] if count else []
        )
        chosen.extend(picked)
        rows.append((values[group[0]], values[group[-1]], len(group), count))
    return chosen, rows


def _disagreement(
    store: RunStore,
    record: RunRecord,
    answered: list[str],
    metrics: Sequence[str],
    compare: tuple[RunRecord, RunStore] | None,
    n: int,
    rng: np.random.Generator,
    notes: dict[str, str],
    left_out: dict[str, int],
) -> tuple[list[str], int, list[str]]:
    if compare is not None:
        if len(metrics) != 1:
            raise ConfigError(
                "a disagreement plan between two judges takes one metric scored in both runs: "
                "--metric NAME --vs RUN"
            )
        other, other_store = compare
        metric = metrics[0]
        a = _check_metric(store, record, metric)
        b = metric_values(other_store, other.id, metric)
        if not b:
            raise ConfigError(f"--vs {other.id}: that run has no scored result of {metric}")
        names = (f"{metric} ({record.id})", f"{metric} ({other.id})")
        same_scale = True
    else:
        if len(metrics) != 2:
            raise ConfigError(
                "a disagreement plan compares two scores: --metric A --metric B (two metrics of the run), "
                "or --metric NAME --vs RUN (one metric scored by two judges)"
            )
        if metrics[0] == metrics[1]:
            raise ConfigError(f"--metric {metrics[0]} twice: give two different metrics (or --vs RUN)")
        a = _check_metric(store, record, metrics[0])
        b = _check_metric(store, record, metrics[1])
        names = (metrics[0], metrics[1])
        same_scale = False
    pool = [c for c in answered if c in a and c in b]
    if len(pool) < len(answered):
        left_out["not scored by both"] = len(answered) - len(pool)
    if not pool:
        raise ConfigError(f"no case is scored by both {names[0]} and {names[1]}")
    if same_scale:
        gap = {c: abs(a[c] - b[c]) for c in pool}
    else:
        ra, rb = _ranks({c: a[c] for c in pool}), _ranks({c: b[c] for c in pool})
        gap = {c: abs(ra[c] - rb[c]) for c in pool}
    tie = {c: float(x) for c, x in zip(pool, rng.random(len(pool)), strict=True)}
    ranked = sorted(pool, key=lambda c: (-gap[c], tie[c]))
    chosen = ranked[:n]
    how = "difference" if same_scale else "difference of percentile ranks"
    for case_id in chosen:
        notes[case_id] = (
            f"{names[0]} {fmt_score(a[case_id])} vs {names[1]} {fmt_score(b[case_id])}"
            f" ({how} {fmt_score(gap[case_id])})"
        )
    used = list(metrics)
    return chosen, len(pool), used
