"""Summaries and core comparisons of the radiology agent benchmark (RadA-BenchPlat).

A *row* is one episode: its metadata (``record_id``, ``task``, ``complexity``,
``condition``, ``core``, ... as strings) and its metrics
(:func:`~clineval.environments.radbench.metrics.episode_metrics`; ``None`` = not
applicable). :func:`clineval.environments.radbench.runner.metric_rows` gives the rows of
a stored run, :func:`rows_from_episodes` those of episodes in memory.

* :func:`summarise` -- per group (any metadata fields) and metric: how many episodes the
  metric applies to, its mean and a 95 % percentile bootstrap interval of the mean
  (:func:`clineval.results.aggregate.bootstrap_ci`: 2,000 resamples, fixed seed).
  Not-applicable values never enter a mean; a metric that applies to no episode of a group
  has ``n = 0`` and no mean.
* :func:`compare_cores` -- RadA-BenchPlat's per-patient comparison of two cores or prompting
  strategies ("we calculated average Levenshtein distances per patient and defined a 'win'
  when one method outperformed another"; e.g. "17 wins, 2 ties, and 1 loss"): the metric's
  mean per record for each core, over the records both runs have; wins, ties and losses of
  **B against A** (B better = a win; lower is better for edit distances, false discovery
  and false refusal); the two-sided Wilcoxon signed-rank test of the per-record
  differences; and the mean difference B - A with a paired bootstrap interval (records
  resampled).

Wilcoxon choice: ``zero_method="wilcox"`` -- tied records (a difference of 0, within
1e-12) are dropped before the test, as they are reported apart as ties (``"zsplit"``
would let ties pull the p-value up while wins and losses are counted without them).
scipy (``method="auto"``) then gives the exact p-value for up to 50 non-tied records
whose differences have distinct magnitudes, an exhaustive permutation p-value for up to
13 records with repeated magnitudes, and the tie-corrected normal approximation
otherwise. The p-value is ``None`` with fewer than two non-tied records.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from clineval.environments.radbench.metrics import METRIC_NAMES, METRICS_BY_NAME, episode_metrics
from clineval.environments.radbench.model import Episode
from clineval.environments.radbench.vocab import CONDITIONS, TASKS, task
from clineval.results.aggregate import MISSING_GROUP, bootstrap_ci

if TYPE_CHECKING:
    import pandas as pd

Row = tuple[Mapping[str, object], Mapping[str, float | None]]
"""One episode: its metadata and its metrics."""

#: Tolerance under which two per-record means count as tied.
TIE_TOLERANCE = 1e-12

_ORDER: dict[str, int] = (
    {c: i for i, c in enumerate(CONDITIONS)}
    | {"simple": 0, "moderate": 1, "complex": 2}
    | {t.key: i for i, t in enumerate(TASKS)}
)


class SummaryRow(BaseModel):
    """One metric within one group."""

    model_config = ConfigDict(extra="forbid")

    by: tuple[str, ...]
    """The metadata fields grouped by."""
    group: tuple[str, ...]
    """Their values for this group (``"(missing)"`` where an episode lacks the field)."""
    metric: str
    n: int
    """Episodes of the group the metric applies to (the values averaged)."""
    n_episodes: int
    """Episodes of the group."""
    mean: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    higher_is_better: bool | None = None
    """The metric's direction (None for a metric this module does not know)."""


class PairedRecord(BaseModel):
    """One record compared: the per-record means of each core and how many episodes they average."""

    model_config = ConfigDict(extra="forbid")

    key: str
    a: float
    b: float
    n_a: int
    n_b: int


class CoreComparison(BaseModel):
    """Core B against core A on one metric, per record (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    by: str
    higher_is_better: bool
    n_records: int
    """Records with an applicable value in both runs (the pairs)."""
    only_a: int
    """Records with a value in run A only (left out)."""
    only_b: int
    mean_a: float | None = None
    """Mean over the paired records of A's per-record means."""
    mean_b: float | None = None
    mean_difference: float | None = None
    """Mean of B - A over the paired records."""
    ci_low: float | None = None
    ci_high: float | None = None
    wins: int = 0
    """Records where B is better than A."""
    ties: int = 0
    losses: int = 0
    """Records where B is worse than A."""
    statistic: float | None = None
    """Wilcoxon statistic (scipy: the smaller of the signed-rank sums, two-sided)."""
    p_value: float | None = None
    zero_method: Literal["wilcox"] = "wilcox"
    records: list[PairedRecord] = []


def rows_from_episodes(episodes: Iterable[Episode]) -> list[Row]:
    """Rows of episodes in memory, with ``record_id``, ``task``, ``complexity``, ``condition``, ``core``."""
    rows: list[Row] = []
    for ep in episodes:
        meta = {
            "record_id": ep.record_id,
            "task": ep.task,
            "complexity": task(ep.task).complexity,
            "condition": ep.condition,
            "core": ep.core,
        }
        rows.append((meta, episode_metrics(ep)))
    return rows


def _label(meta: Mapping[str, object], field: str) -> str:
    value = meta.get(field)
    return MISSING_GROUP if value is None else str(value)


def _group_key(group: tuple[str, ...]) -> list[tuple[int, str]]:
    return [(_ORDER.get(value, len(_ORDER)), value) for value in group]


def _metric_names(rows: Sequence[Row], metrics: Sequence[str] | None) -> list[str]:
    if metrics is not None:
        return list(dict.fromkeys(metrics))
    names = dict.fromkeys(METRIC_NAMES)
    for _, values in rows:
        names.update(dict.fromkeys(values))
    return list(names)


def _applicable(values: Mapping[str, float | None], metric: str) -> float | None:
    value = values.get(metric)
    if value is None or math.isnan(value):
        return None
    return float(value)


def summarise(
    rows: Iterable[Row], by: Sequence[str] = ("condition",), metrics: Sequence[str] | None = None
) -> list[SummaryRow]:
    """Per group of ``by`` and per metric: n applicable, mean and 95 % bootstrap CI.

    ``metrics`` defaults to every metric of :data:`~clineval.environments.radbench.metrics.METRICS`
    then any other name the rows carry. Groups come in a natural order (conditions, then
    complexity, then tasks as the benchmark lists them; other values alphabetically), and
    within a group the metrics in the order asked. ``by=()`` gives one overall group.
    """
    rows = list(rows)
    by = tuple(by)
    names = _metric_names(rows, metrics)
    groups: dict[tuple[str, ...], list[Mapping[str, float | None]]] = defaultdict(list)
    for meta, values in rows:
        groups[tuple(_label(meta, field) for field in by)].append(values)
    out: list[SummaryRow] = []
    for group in sorted(groups, key=_group_key):
        members = groups[group]
        for name in names:
            data = [v for v in (_applicable(values, name) for values in members) if v is not None]
            ci = bootstrap_ci(data)
            info = METRICS_BY_NAME.get(name)
            out.append(
                SummaryRow(
                    by=by,
                    group=group,
                    metric=name,
                    n=len(data),
                    n_episodes=len(members),
                    mean=float(np.mean(data)) if data else None,
                    ci_low=ci[0] if ci else None,
                    ci_high=ci[1] if ci else None,
                    higher_is_better=None if info is None else info.higher_is_better,
                )
            )
    return out


def summary_frame(
    rows: Iterable[Row], by: Sequence[str] = ("condition",), metrics: Sequence[str] | None = None
) -> pd.DataFrame:
    """:func:`summarise` as a long DataFrame: one column per ``by`` field, then ``metric``,
    ``n``, ``n_episodes``, ``mean``, ``ci_low``, ``ci_high``, ``higher_is_better``.

    Pivot it for a wide table: ``frame.pivot(index=list(by), columns="metric", values="mean")``.
    """
    import pandas as pd

    by = tuple(by)
    summary = summarise(rows, by=by, metrics=metrics)
    records = []
    for row in summary:
        data = row.model_dump(exclude={"by", "group"})
        records.append({**dict(zip(by, row.group, strict=True)), **data})
    columns = [*by, "metric", "n", "n_episodes", "mean", "ci_low", "ci_high", "higher_is_better"]
    return pd.DataFrame.from_records(records, columns=columns)


def episode_frame(rows: Iterable[Row]) -> pd.DataFrame:
    """One line per episode: its metadata, then its metrics (NaN where not applicable)."""
    import pandas as pd

    records = [{**{k: str(v) for k, v in meta.items()}, **values} for meta, values in rows]
    return pd.DataFrame.from_records(records).fillna(value=np.nan)


def _per_record(rows: Iterable[Row], metric: str, by: str) -> dict[str, list[float]]:
    values: dict[str, list[float]] = defaultdict(list)
    for meta, metrics in rows:
        key = meta.get(by)
        value = _applicable(metrics, metric)
        if key is None or value is None:
            continue
        values[str(key)].append(value)
    return values


def compare_cores(
    rows_a: Iterable[Row],
    rows_b: Iterable[Row],
    metric: str,
    *,
    by: str = "record_id",
    higher_is_better: bool | None = None,
) -> CoreComparison:
    """B against A on ``metric``, per value of ``by`` (a record: RadA-BenchPlat compares per patient).

    Each core's values of a record are averaged (over its tasks, conditions and repeats in
    the rows); only records where both cores have an applicable value are paired. Wins are
    records where B is better than A, in the metric's direction (from
    :data:`~clineval.environments.radbench.metrics.METRICS`; ``higher_is_better`` overrides
    it and is needed for a metric this module does not know, else higher is better).
    """
    if higher_is_better is None:
        info = METRICS_BY_NAME.get(metric)
        higher_is_better = True if info is None else info.higher_is_better
    per_a, per_b = _per_record(rows_a, metric, by), _per_record(rows_b, metric, by)
    keys = sorted(set(per_a) & set(per_b), key=lambda k: (_ORDER.get(k, len(_ORDER)), k))
    comparison = CoreComparison(
        metric=metric,
        by=by,
        higher_is_better=higher_is_better,
        n_records=len(keys),
        only_a=len(set(per_a) - set(per_b)),
        only_b=len(set(per_b) - set(per_a)),
    )
    if not keys:
        return comparison
    records = [
        PairedRecord(
            key=k,
            a=float(np.mean(per_a[k])),
            b=float(np.mean(per_b[k])),
            n_a=len(per_a[k]),
            n_b=len(per_b[k]),
        )
        for k in keys
    ]
    diffs = np.array([r.b - r.a for r in records], dtype=float)
    diffs[np.abs(diffs) <= TIE_TOLERANCE] = 0.0
    better = diffs > 0 if higher_is_better else diffs < 0
    worse = diffs < 0 if higher_is_better else diffs > 0
    comparison.records = records
    comparison.mean_a = float(np.mean([r.a for r in records]))
    comparison.mean_b = float(np.mean([r.b for r in records]))
    comparison.mean_difference = float(diffs.mean())
    ci = bootstrap_ci(diffs.tolist())
    if ci is not None:
        comparison.ci_low, comparison.ci_high = ci
    comparison.wins = int(better.sum())
    comparison.losses = int(worse.sum())
    comparison.ties = len(records) - comparison.wins - comparison.losses
    untied = diffs[diffs != 0.0]
    if untied.size >= 2:
        from scipy.stats import wilcoxon

        # Ties removed here rather than by scipy: with zeros in its input scipy leaves the
        # exact distribution for the normal approximation beyond 13 pairs.
        result = wilcoxon(untied, zero_method="wilcox", alternative="two-sided")
        comparison.statistic = float(result.statistic)
        comparison.p_value = float(result.pvalue)
    return comparison
