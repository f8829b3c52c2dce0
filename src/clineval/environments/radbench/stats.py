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

Repeated trials (``BenchSettings(trials=N)``, ``clineval radbench run --trials N``):

* :func:`episode_means` -- one row per episode: the rows of its trials (metadata
  ``trial``) averaged metric by metric over the trials where the metric applies.
  :func:`summarise`, :func:`compare_cores` and :func:`compare_runs` start from these
  means, so an episode counts once whatever its trials: n is episodes, a bootstrap
  resamples episodes, and the paired tests pair per-episode (or per-record) means.
* The spread over trials (:class:`TrialSpread`, in :class:`SummaryRow` and the
  comparisons): ``trial_sd``, the sample standard deviation over trials of the group's
  mean (trial k's mean over its episodes: "mean ± SD over N trials"), and ``episode_sd``,
  the mean over episodes of each episode's standard deviation over its trials (how much
  one core disagrees with itself on the same episode). Both need two trials or more.

Reporting as RadA-BenchPlat does:

* :func:`reporting_rows` -- the rows of one run ready for its tables: each gets a
  ``scope`` (``"solvable"`` or ``"insufficient"``, from its condition) and a
  ``case_id`` (``record/task/condition``: the episode, the stored case's id without its
  trial). Task completion is kept
  on insufficient tool sets only for a run with automated tool building: RadA-BenchPlat
  reports task completion over the solvable conditions and unsolvability awareness and
  grounding (UAR, UGR) over the insufficient ones, and a task completed on an
  insufficient set is its automated tool building result. Any grouping other than by
  condition is split by scope (:func:`report_by`), so that "by complexity" says
  which conditions each row covers instead of mixing them. This is the one definition
  of what a table averages: ``clineval radbench summary``, ``clineval radbench compare``,
  the viewer and the HTML report all read :func:`run_rows`.
* :func:`compare_runs` -- several cores (or prompting strategies) side by side, one
  table per capability family (:data:`FAMILIES`): per group and metric, each run's
  mean with its 95 % bootstrap interval, and for every pair of runs the Wilcoxon
  signed-rank test over the **episodes both runs have** (paired by case id: the same
  record, task and condition), by :func:`compare_cores` with ``by="case_id"``. Holm's
  step-down adjustment (:func:`clineval.compare.stats.holm`) runs over every test of
  one family's table (each metric x group x pair of runs in it): the family is the set
  of hypotheses read together, as ``clineval compare`` adjusts over the metrics it
  compares.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from clineval.compare.stats import holm
from clineval.environments.radbench.metrics import (
    METRIC_NAMES,
    METRICS,
    METRICS_BY_NAME,
    CapabilityGroup,
    episode_metrics,
)
from clineval.environments.radbench.model import Episode
from clineval.environments.radbench.vocab import CONDITIONS, TASKS, UNSOLVABLE_CONDITIONS, task
from clineval.results.aggregate import MISSING_GROUP, bootstrap_ci

if TYPE_CHECKING:
    import pandas as pd

    from clineval.results.result import EvalResult

Row = tuple[Mapping[str, object], Mapping[str, float | None]]
"""One episode: its metadata and its metrics."""

#: Tolerance under which two per-record means count as tied.
TIE_TOLERANCE = 1e-12

_ORDER: dict[str, int] = (
    {c: i for i, c in enumerate(CONDITIONS)}
    | {"simple": 0, "moderate": 1, "complex": 2}
    | {t.key: i for i, t in enumerate(TASKS)}
    | {"solvable": 0, "insufficient": 1}
)


class TrialSpread(BaseModel):
    """How one metric spreads over repeated trials (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    trials: int
    """The most trials any episode has."""
    trial_sd: float | None = None
    """Sample standard deviation over trials of the mean (None with fewer than two trials
    with a value)."""
    episode_sd: float | None = None
    """Mean over episodes of the sample standard deviation of each episode's trials (None
    when no episode has two trials with a value)."""


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
    trials: int = 1
    """Trials per episode (the most any episode of the group has)."""
    trial_sd: float | None = None
    """With trials: the standard deviation over trials of the group's mean."""
    episode_sd: float | None = None
    """With trials: the mean over episodes of each episode's standard deviation over trials."""


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
    trials_a: int = 1
    """Trials per episode in run A."""
    trials_b: int = 1
    sd_a: float | None = None
    """With trials: the standard deviation over A's trials of its mean over the paired records."""
    sd_b: float | None = None


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


def _trial(meta: Mapping[str, object]) -> int | None:
    value = meta.get("trial")
    return None if value is None else int(str(value))


def episode_means(rows: Iterable[Row]) -> list[Row]:
    """One row per episode: the rows of one episode's trials (same :func:`case_key`, each
    with a ``trial`` in its metadata) averaged metric by metric over the trials where the
    metric applies (``None`` where it applies to none). The metadata is the first trial's
    without ``trial``, plus ``trials`` (how many were averaged). Rows without a trial (a
    one-trial run, episodes in memory) are kept as they are; the order is the first trial's."""
    # every row gets a slot in order; the trials of one episode share the first one's
    slots: list[list[Row]] = []
    slot_of: dict[str, list[Row]] = {}
    for row in rows:
        key = case_key(row[0]) if _trial(row[0]) is not None else None
        if key is None:
            slots.append([row])
        elif key in slot_of:
            slot_of[key].append(row)
        else:
            slot_of[key] = [row]
            slots.append(slot_of[key])
    result: list[Row] = []
    for members in slots:
        if _trial(members[0][0]) is None:
            result.append(members[0])
            continue
        meta = {k: v for k, v in members[0][0].items() if k != "trial"}
        meta["trials"] = len(members)
        names = dict.fromkeys(name for _, values in members for name in values)
        means: dict[str, float | None] = {}
        for name in names:
            data = [v for v in (_applicable(values, name) for _, values in members) if v is not None]
            means[name] = float(np.mean(data)) if data else None
        result.append((meta, means))
    return result


def _sd(values: Sequence[float]) -> float | None:
    return float(np.std(values, ddof=1)) if len(values) >= 2 else None


def trial_spread(rows: Iterable[Row], metric: str) -> TrialSpread:
    """How ``metric`` spreads over the trials of ``rows`` (one group's rows, one per trial;
    see the module docstring). Rows without a trial count as one trial."""
    by_trial: dict[int, list[float]] = defaultdict(list)
    by_episode: dict[str, list[float]] = defaultdict(list)
    most = 1
    counts: dict[str, int] = defaultdict(int)
    for meta, values in rows:
        trial = _trial(meta)
        key = case_key(meta)
        if trial is not None and key is not None:
            counts[key] += 1
            most = max(most, counts[key])
        value = _applicable(values, metric)
        if value is None:
            continue
        by_trial[1 if trial is None else trial].append(value)
        if trial is not None and key is not None:
            by_episode[key].append(value)
    trial_means = [float(np.mean(v)) for v in by_trial.values()]
    episode_sds = [sd for sd in (_sd(v) for v in by_episode.values()) if sd is not None]
    return TrialSpread(
        trials=most,
        trial_sd=_sd(trial_means) if most > 1 else None,
        episode_sd=float(np.mean(episode_sds)) if episode_sds else None,
    )


def summarise(
    rows: Iterable[Row], by: Sequence[str] = ("condition",), metrics: Sequence[str] | None = None
) -> list[SummaryRow]:
    """Per group of ``by`` and per metric: n applicable, mean and 95 % bootstrap CI.

    ``metrics`` defaults to every metric of :data:`~clineval.environments.radbench.metrics.METRICS`
    then any other name the rows carry. Groups come in a natural order (conditions, then
    complexity, then tasks as the benchmark lists them; other values alphabetically), and
    within a group the metrics in the order asked. ``by=()`` gives one overall group.

    Rows of repeated trials are first averaged per episode (:func:`episode_means`): n,
    mean and interval are over episodes, and ``trials``, ``trial_sd``, ``episode_sd`` say
    how the trials spread (:func:`trial_spread`).
    """
    rows = list(rows)
    by = tuple(by)
    names = _metric_names(rows, metrics)
    groups: dict[tuple[str, ...], list[Row]] = defaultdict(list)
    for row in rows:
        groups[tuple(_label(row[0], field) for field in by)].append(row)
    out: list[SummaryRow] = []
    for group in sorted(groups, key=_group_key):
        trial_rows = groups[group]
        members = [values for _, values in episode_means(trial_rows)]
        for name in names:
            data = [v for v in (_applicable(values, name) for values in members) if v is not None]
            ci = bootstrap_ci(data)
            info = METRICS_BY_NAME.get(name)
            spread = trial_spread(trial_rows, name)
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
                    trials=spread.trials,
                    trial_sd=spread.trial_sd,
                    episode_sd=spread.episode_sd,
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


def _trial_sd_of_mean(rows: Sequence[Row], metric: str, by: str, keys: set[str]) -> float | None:
    """The standard deviation over trials of the mean over ``keys`` of the per-key means
    (None for rows without trials or with fewer than two trials)."""
    per_trial: dict[int, list[Row]] = defaultdict(list)
    for row in rows:
        trial = _trial(row[0])
        if trial is not None:
            per_trial[trial].append(row)
    means = []
    for members in per_trial.values():
        per_key = {k: v for k, v in _per_record(members, metric, by).items() if k in keys}
        if per_key:
            means.append(float(np.mean([np.mean(v) for v in per_key.values()])))
    return _sd(means)


def compare_cores(
    rows_a: Iterable[Row],
    rows_b: Iterable[Row],
    metric: str,
    *,
    by: str = "record_id",
    higher_is_better: bool | None = None,
) -> CoreComparison:
    """B against A on ``metric``, per value of ``by`` (a record: RadA-BenchPlat compares per patient).

    Repeated trials are averaged per episode first (:func:`episode_means`), then each
    core's episode means of a record are averaged (over its tasks and conditions); only
    records where both cores have an applicable value are paired. With trials, ``sd_a``
    and ``sd_b`` give the standard deviation over each run's trials of its mean over the
    paired records. Wins are
    records where B is better than A, in the metric's direction (from
    :data:`~clineval.environments.radbench.metrics.METRICS`; ``higher_is_better`` overrides
    it and is needed for a metric this module does not know, else higher is better).
    """
    if higher_is_better is None:
        info = METRICS_BY_NAME.get(metric)
        higher_is_better = True if info is None else info.higher_is_better
    trial_rows_a, trial_rows_b = list(rows_a), list(rows_b)
    rows_a, rows_b = episode_means(trial_rows_a), episode_means(trial_rows_b)
    per_a, per_b = _per_record(rows_a, metric, by), _per_record(rows_b, metric, by)
    keys = sorted(set(per_a) & set(per_b), key=lambda k: (_ORDER.get(k, len(_ORDER)), k))
    comparison = CoreComparison(
        metric=metric,
        by=by,
        higher_is_better=higher_is_better,
        n_records=len(keys),
        only_a=len(set(per_a) - set(per_b)),
        only_b=len(set(per_b) - set(per_a)),
        trials_a=trial_spread(trial_rows_a, metric).trials,
        trials_b=trial_spread(trial_rows_b, metric).trials,
    )
    if not keys:
        return comparison
    comparison.sd_a = _trial_sd_of_mean(trial_rows_a, metric, by, set(keys))
    comparison.sd_b = _trial_sd_of_mean(trial_rows_b, metric, by, set(keys))
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


# reporting as the paper does ------------------------------------------------------------

Scope = Literal["solvable", "insufficient"]

#: The capability families in the order the tables come: the primary metric first.
FAMILIES: tuple[CapabilityGroup, ...] = (
    "task completion",
    "chain planning",
    "optimal orchestrating",
    "IO organizing",
    "response synthesizing",
    "unsolvability parsing",
)


def scope_of(condition: object) -> Scope:
    """``"insufficient"`` for the unsolvable tool-set conditions, else ``"solvable"``."""
    return "insufficient" if str(condition) in UNSOLVABLE_CONDITIONS else "solvable"


def case_key(meta: Mapping[str, object]) -> str | None:
    """The episode's case id (``record/task/condition``), the key that pairs two runs."""
    if meta.get("case_id") is not None:
        return str(meta["case_id"])
    parts = [meta.get("record_id"), meta.get("task"), meta.get("condition")]
    return None if any(p is None for p in parts) else "/".join(str(p) for p in parts)


def reporting_rows(rows: Iterable[Row], *, auto_build: bool = False) -> list[Row]:
    """The rows with ``scope`` and ``case_id`` added; task completion dropped (not
    applicable) on insufficient tool sets unless the run built missing tools (``auto_build``)."""
    out: list[Row] = []
    for meta, values in rows:
        scope = scope_of(meta.get("condition"))
        extra: dict[str, object] = {"scope": scope}
        key = case_key(meta)
        if key is not None:
            extra["case_id"] = key
        kept = dict(values)
        if scope == "insufficient" and not auto_build:
            kept["completion"] = None
        out.append(({**meta, **extra}, kept))
    return out


def run_rows(result: EvalResult) -> list[Row]:
    """A stored benchmark run's rows for its tables: :func:`reporting_rows` of
    :func:`~clineval.environments.radbench.runner.metric_rows`, with the run's own
    automated-tool-building setting (what ``clineval radbench summary``, the viewer and the
    report show)."""
    from clineval.environments.radbench.runner import bench_settings_of, metric_rows

    settings = bench_settings_of(result.run.config)
    return reporting_rows(metric_rows(result), auto_build=bool(settings and settings.auto_build))


def report_by(by: Sequence[str]) -> tuple[str, ...]:
    """The grouping a report uses: ``by``, plus ``scope`` unless it groups by condition
    (a condition has one scope) or already has it."""
    by = tuple(by)
    if "condition" in by or "scope" in by:
        return by
    return (*by, "scope")


class RunStat(BaseModel):
    """One run's mean of one metric in one group."""

    model_config = ConfigDict(extra="forbid")

    run: str
    """The run's label."""
    n: int
    mean: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    trials: int = 1
    trial_sd: float | None = None
    """With trials: the standard deviation over the run's trials of its mean."""


class FamilyRow(BaseModel):
    """One metric in one group, every run side by side."""

    model_config = ConfigDict(extra="forbid")

    group: tuple[str, ...]
    metric: str
    runs: list[RunStat]


class PairTest(BaseModel):
    """Run ``b`` against run ``a`` on one metric in one group, paired on episodes."""

    model_config = ConfigDict(extra="forbid")

    group: tuple[str, ...]
    metric: str
    a: str
    b: str
    n_pairs: int
    """Episodes with an applicable value in both runs (each the mean of its trials)."""
    only_a: int
    only_b: int
    mean_difference: float | None = None
    """Mean of b - a over the paired episodes."""
    ci_low: float | None = None
    ci_high: float | None = None
    wins: int = 0
    """Episodes where ``b`` is better (in the metric's direction)."""
    ties: int = 0
    losses: int = 0
    statistic: float | None = None
    p_value: float | None = None
    p_holm: float | None = None
    """Holm-adjusted over every test of the family's table."""


class FamilyTable(BaseModel):
    """One capability family: its metrics per group for every run, and the pairwise tests."""

    model_config = ConfigDict(extra="forbid")

    family: str
    rows: list[FamilyRow] = []
    tests: list[PairTest] = []


class RunsComparison(BaseModel):
    """Several runs side by side (:func:`compare_runs`)."""

    model_config = ConfigDict(extra="forbid")

    runs: list[str]
    by: tuple[str, ...]
    common_cases: int
    """Episodes (case ids) every run has."""
    families: list[FamilyTable]


def _family_metrics(metrics: Sequence[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {family: [] for family in FAMILIES}
    for name in metrics:
        info = METRICS_BY_NAME.get(name)
        if info is None:
            known = ", ".join(m.name for m in METRICS)
            raise ValueError(f"unknown metric {name!r}: use one of {known}")
        grouped[info.group].append(name)
    return grouped


def compare_runs(
    runs: Sequence[tuple[str, Sequence[Row]]],
    *,
    by: Sequence[str] = ("condition",),
    metrics: Sequence[str] | None = None,
) -> RunsComparison:
    """Runs side by side per capability family (see the module docstring).

    ``runs`` are ``(label, rows)`` with distinct labels, the rows as :func:`reporting_rows`
    gives them (they need ``case_id``). A row of a family table is a (group, metric) that
    applies to some episode of some run. Raises ValueError for fewer than two runs,
    repeated labels, or two runs with no episode in common.
    """
    if len(runs) < 2:
        raise ValueError("compare_runs needs at least two runs")
    labels = [label for label, _ in runs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"run labels must be distinct, got {labels}")
    by = tuple(by)
    keys = [{str(meta["case_id"]) for meta, _ in rows if meta.get("case_id") is not None} for _, rows in runs]
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            if not keys[i] & keys[j]:
                raise ValueError(
                    f"runs {labels[i]} and {labels[j]} have no episode in common (no case with the same "
                    "record, task and condition): nothing to pair"
                )
    common = set.intersection(*keys)
    names = list(dict.fromkeys(metrics)) if metrics is not None else list(METRIC_NAMES)
    per_family = _family_metrics(names)

    summaries = {label: summarise(rows, by=by, metrics=names) for label, rows in runs}
    stats: dict[tuple[tuple[str, ...], str], dict[str, SummaryRow]] = defaultdict(dict)
    for label, rows_summary in summaries.items():
        for row in rows_summary:
            stats[(row.group, row.metric)][label] = row
    groups = sorted({group for group, _ in stats}, key=_group_key)

    def in_group(rows: Sequence[Row], group: tuple[str, ...]) -> list[Row]:
        return [r for r in rows if tuple(_label(r[0], field) for field in by) == group]

    families: list[FamilyTable] = []
    for family in FAMILIES:
        table = FamilyTable(family=family)
        for group in groups:
            members = {label: in_group(rows, group) for label, rows in runs}
            for metric in per_family[family]:
                found = stats.get((group, metric), {})
                if not any(r.n for r in found.values()):
                    continue
                cells = []
                for label in labels:
                    r = found.get(label)
                    cells.append(
                        RunStat(run=label, n=0)
                        if r is None
                        else RunStat(
                            run=label,
                            n=r.n,
                            mean=r.mean,
                            ci_low=r.ci_low,
                            ci_high=r.ci_high,
                            trials=r.trials,
                            trial_sd=r.trial_sd,
                        )
                    )
                table.rows.append(FamilyRow(group=group, metric=metric, runs=cells))
                for i in range(len(labels)):
                    for j in range(i + 1, len(labels)):
                        c = compare_cores(members[labels[i]], members[labels[j]], metric, by="case_id")
                        table.tests.append(
                            PairTest(
                                group=group,
                                metric=metric,
                                a=labels[i],
                                b=labels[j],
                                n_pairs=c.n_records,
                                only_a=c.only_a,
                                only_b=c.only_b,
                                mean_difference=c.mean_difference,
                                ci_low=c.ci_low,
                                ci_high=c.ci_high,
                                wins=c.wins,
                                ties=c.ties,
                                losses=c.losses,
                                statistic=c.statistic,
                                p_value=c.p_value,
                            )
                        )
        tested = [t for t in table.tests if t.p_value is not None]
        for t, adjusted in zip(
            tested, holm([t.p_value for t in tested if t.p_value is not None]), strict=True
        ):
            t.p_holm = adjusted
        if table.rows:
            families.append(table)
    return RunsComparison(runs=labels, by=by, common_cases=len(common), families=families)
