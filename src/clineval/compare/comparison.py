"""Change-by-change comparison of two runs of the same cases.

:func:`compare_runs` pairs the cases of run A (the baseline) and run B (the candidate) by
case id and, for every metric both runs have (and, on request, every sub-score
``metric.sub``), reports:

* ``n_paired``: the cases scored in both runs; only these enter the means and the test.
  ``scored_only_a`` / ``scored_only_b`` count the cases scored in one run but not the
  other (an error, not applicable, or absent there);
* ``mean_a``, ``mean_b`` over the paired cases and ``delta = mean_b − mean_a``, with the
  95 % paired bootstrap interval of ``delta``;
* the test: exact McNemar for binary metrics (every paired value 0 or 1), otherwise the
  sign-flip permutation test (see :mod:`clineval.compare.stats`), its p-value, and the
  Holm-adjusted p-value over all the metrics compared (testing many metrics at once would
  otherwise call some unchanged metric "changed" far more often than ``alpha``);
* the verdict: ``regressed`` when the Holm-adjusted p is below ``alpha`` and ``delta``
  goes in the bad direction (down for a metric where higher is better, up for one where
  lower is better, as the runs record in ``lower_is_better``), ``improved`` when it goes
  in the good direction, ``no significant change`` otherwise, ``not comparable`` with
  fewer than two paired cases (``reason`` says why);
* the cases that got worse and better: for a binary metric the discordant pairs, for a
  continuous one every case whose value moved by more than :data:`CASE_TOLERANCE`,
  largest change first.

In a run with repeats a case's value is the mean of its trials (:mod:`clineval.results.trials`):
the pairs are always cases, never trials (trials of one case are not independent).

Also listed: the cases whose status changed (scored in A, an error in B, and every other
change of status), the metrics of one run only, and warnings when the datasets, the
judges, the metric settings, the repeats or the run statuses differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from clineval.compare.stats import (
    EXACT_MAX_N,
    PERMUTATIONS,
    holm,
    is_binary,
    mcnemar_exact,
    min_detectable_changes,
    paired_bootstrap_ci,
    paired_permutation_test,
)
from clineval.errors import ConfigError
from clineval.metrics.registry import MetricSpec, get_entry
from clineval.model import RunRecord
from clineval.results.result import EvalResult
from clineval.results.stored import StoredResult
from clineval.results.trials import repeats_of

Kind = Literal["binary", "continuous"]
Verdict = Literal["regressed", "improved", "no significant change", "not comparable"]
CaseStatus = Literal["scored", "error", "not_applicable", "missing"]

#: A continuous metric's per-case change smaller than this is no change.
CASE_TOLERANCE = 1e-9
#: Case fields that describe the task (not the agent's output): compared across runs.
TASK_FIELDS = ("input", "reference", "reference_trajectory", "gold_facts", "expected")


class RunSide(BaseModel):
    """One of the two runs compared."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str | None = None
    created_at: float
    status: str
    dataset_source: str
    fingerprint: str
    n_cases: int

    @classmethod
    def of(cls, run: RunRecord) -> RunSide:
        return cls(
            id=run.id,
            name=run.name,
            created_at=run.created_at,
            status=run.status,
            dataset_source=run.dataset.source,
            fingerprint=run.dataset.fingerprint,
            n_cases=run.dataset.n_cases,
        )


class CaseChange(BaseModel):
    """A case whose value moved between the runs (``delta = value_b − value_a``)."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    value_a: float
    value_b: float
    delta: float


class StatusChange(BaseModel):
    """A case whose score status differs between the runs, e.g. scored in A and an error in B."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    metric: str
    status_a: CaseStatus
    status_b: CaseStatus
    message: str | None = None
    """The error message (or the not-applicable reason) of the side that was not scored."""


class MetricComparison(BaseModel):
    """One metric (or sub-score ``metric.sub``) of both runs, case by case."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    kind: Kind
    lower_is_better: bool = False
    n_paired: int
    scored_only_a: int = 0
    scored_only_b: int = 0
    mean_a: float | None = None
    mean_b: float | None = None
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    test: str | None = None
    p_value: float | None = None
    p_holm: float | None = None
    verdict: Verdict = "not comparable"
    reason: str | None = None
    regressed_cases: list[CaseChange] = Field(default_factory=list)
    """Cases that got worse, largest change first."""
    improved_cases: list[CaseChange] = Field(default_factory=list)
    """Cases that got better, largest change first."""
    min_changes: int | None = None
    """The fewest changed cases, all in one direction, whose test could reach significance
    at ``alpha`` (see :func:`~clineval.compare.stats.min_detectable_changes`)."""
    small_n: str | None = None
    """Said when this comparison is too small for the test to detect the change seen (or any
    change): cases changed, but fewer than :attr:`min_changes`."""

    @property
    def direction(self) -> str:
        return "lower is better" if self.lower_is_better else "higher is better"


class Comparison(BaseModel):
    """Run B (the candidate) against run A (the baseline)."""

    model_config = ConfigDict(extra="forbid")

    run_a: RunSide
    run_b: RunSide
    alpha: float
    paired_cases: int
    cases_only_in_a: list[str] = Field(default_factory=list)
    cases_only_in_b: list[str] = Field(default_factory=list)
    metrics: list[MetricComparison] = Field(default_factory=list)
    metrics_only_in_a: list[str] = Field(default_factory=list)
    metrics_only_in_b: list[str] = Field(default_factory=list)
    status_changes: list[StatusChange] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def regressed(self) -> list[MetricComparison]:
        return [m for m in self.metrics if m.verdict == "regressed"]

    @property
    def improved(self) -> list[MetricComparison]:
        return [m for m in self.metrics if m.verdict == "improved"]

    def get(self, metric: str) -> MetricComparison:
        for item in self.metrics:
            if item.metric == metric:
                return item
        raise KeyError(metric)


# --- reading the runs ------------------------------------------------------------------


class Scored(NamedTuple):
    """What a comparison reads of one (case, metric) score (never a whole result object)."""

    status: str
    value: float | None
    label: str | None
    message: str | None
    """The error (status ``error``) or the not-applicable reason."""
    sub_scores: dict[str, float | None]


#: The columns of a result a comparison reads (the text of scored results is not read).
_SCORED_COLUMNS = (
    "case_id, status, value, json_extract(score, '$.label'),"
    " CASE status WHEN 'error' THEN json_extract(score, '$.error')"
    " WHEN 'not_applicable' THEN json_extract(score, '$.explanation') END"
)


def metric_scores(result: EvalResult, metric: str, *, subs: bool = False) -> dict[str, Scored]:
    """Case id → the score of ``metric`` (its sub-scores too with ``subs``), one metric at a time.

    A run kept in the store (:class:`~clineval.results.stored.StoredResult` whose results
    are not loaded) is read from it with one query: 100,000 cases are a few megabytes.
    """
    if isinstance(result, StoredResult) and result._results is None:
        columns = _SCORED_COLUMNS + (", json_extract(score, '$.sub_scores')" if subs else "")
        with result._store() as store:
            rows = store.query(
                f"SELECT {columns} FROM results WHERE run_id = ? AND metric = ?", (result.run.id, metric)
            )
        return {
            str(row[0]): Scored(row[1], row[2], row[3], row[4], json.loads(row[5]) if subs and row[5] else {})
            for row in rows
        }
    out: dict[str, Scored] = {}
    for record in result.results:
        if record.metric == metric:
            score = record.score
            message = score.error if score.status == "error" else score.explanation
            out[record.case_id] = Scored(score.status, score.value, score.label, message, score.sub_scores)
    return out


def case_ids(result: EvalResult) -> list[str]:
    """The run's case ids in dataset order, then ids that only results have (as the results order them)."""
    if isinstance(result, StoredResult) and result._results is None and result._cases is None:
        with result._store() as store:
            ids = [
                str(r[0])
                for r in store.query(
                    "SELECT case_id FROM cases WHERE run_id = ? ORDER BY idx", (result.run.id,)
                )
            ]
            orphans = store.query(
                "SELECT case_id FROM results WHERE run_id = ? AND NOT EXISTS (SELECT 1 FROM cases c"
                " WHERE c.run_id = results.run_id AND c.case_id = results.case_id)"
                " GROUP BY case_id ORDER BY MIN(metric)",
                (result.run.id,),
            )
        return ids + [str(r[0]) for r in orphans]
    ids = [c.id for c in result.cases]
    seen = set(ids)
    for record in result.results:
        if record.case_id not in seen:
            seen.add(record.case_id)
            ids.append(record.case_id)
    return ids


class _Side:
    """One run: its case ids, metrics and sub-score names; scores are read a metric at a time."""

    def __init__(self, result: EvalResult):
        self.result = result
        self.case_ids = case_ids(result)
        metrics, subs = result.seen_metrics()
        self.metrics = metrics
        self.subs: dict[str, dict[str, None]] = {m: dict.fromkeys(names) for m, names in subs.items()}

    def values(self, metric: str, sub: str | None) -> dict[str, float]:
        """Case id → the scored value (or sub-score value) of ``metric``."""
        out: dict[str, float] = {}
        for case_id, score in metric_scores(self.result, metric, subs=sub is not None).items():
            if score.status != "scored":
                continue
            value = score.value if sub is None else score.sub_scores.get(sub)
            if value is not None:
                out[case_id] = value
        return out

    def statuses(self, metric: str) -> dict[str, tuple[CaseStatus, str | None]]:
        """Case id → the status of its ``metric`` score and its message (a case without one: missing)."""
        out: dict[str, tuple[CaseStatus, str | None]] = {}
        for case_id, score in metric_scores(self.result, metric).items():
            if score.status == "error":
                out[case_id] = ("error", score.message)
            elif score.status == "not_applicable":
                out[case_id] = ("not_applicable", score.message)
            else:
                out[case_id] = ("scored", None)
        return out


def lower_is_better_metric(metric: str, runs: Sequence[RunRecord]) -> bool:
    """From the runs' ``lower_is_better``; for records made before it existed, the built-in metric's own."""
    if any(metric in run.lower_is_better for run in runs):
        return True
    for run in runs:
        spec = _specs(run).get(metric)
        if spec is not None and ":" not in spec.name:
            try:
                factory: Any = get_entry(spec.name).factory
            except ConfigError:
                continue
            if getattr(factory, "higher_is_better", True) is False:
                return True
    return False


def _specs(run: RunRecord) -> dict[str, MetricSpec]:
    out: dict[str, MetricSpec] = {}
    for item in run.config.get("metrics") or []:
        try:
            spec = MetricSpec.model_validate(item)
        except ValueError:
            continue
        out[spec.result_name] = spec
    return out


# --- one metric --------------------------------------------------------------------------


def _changes(
    ids: Sequence[str], va: dict[str, float], vb: dict[str, float], lower: bool
) -> tuple[list[CaseChange], list[CaseChange]]:
    worse: list[CaseChange] = []
    better: list[CaseChange] = []
    for case_id in ids:
        delta = vb[case_id] - va[case_id]
        if abs(delta) <= CASE_TOLERANCE:
            continue
        change = CaseChange(case_id=case_id, value_a=va[case_id], value_b=vb[case_id], delta=delta)
        (worse if (delta > 0) == lower else better).append(change)
    # Largest change first; changes equal up to rounding keep the case order.
    worse.sort(key=lambda c: -round(abs(c.delta), 9))
    better.sort(key=lambda c: -round(abs(c.delta), 9))
    return worse, better


def _compare_metric(
    name: str, ids: Sequence[str], va: dict[str, float], vb: dict[str, float], lower: bool
) -> MetricComparison:
    paired = [i for i in ids if i in va and i in vb]
    a = [va[i] for i in paired]
    b = [vb[i] for i in paired]
    kind: Kind = "binary" if is_binary(a + b if paired else [*va.values(), *vb.values()]) else "continuous"
    item = MetricComparison(
        metric=name,
        kind=kind,
        lower_is_better=lower,
        n_paired=len(paired),
        scored_only_a=sum(1 for i in va if i not in vb),
        scored_only_b=sum(1 for i in vb if i not in va),
    )
    if paired:
        item.mean_a = sum(a) / len(a)
        item.mean_b = sum(b) / len(b)
        item.delta = item.mean_b - item.mean_a
        item.regressed_cases, item.improved_cases = _changes(paired, va, vb, lower)
    if len(paired) < 2:
        item.reason = (
            "no case is scored in both runs"
            if not paired
            else "only 1 case is scored in both runs (a paired test needs at least 2)"
        )
        return item
    ci = paired_bootstrap_ci(a, b)
    if ci is not None:
        item.ci_low, item.ci_high = ci
    if kind == "binary":
        down = sum(1 for x, y in zip(a, b, strict=True) if x == 1.0 and y == 0.0)
        up = sum(1 for x, y in zip(a, b, strict=True) if x == 0.0 and y == 1.0)
        item.test = "McNemar exact"
        item.p_value = mcnemar_exact(down, up)
    else:
        nonzero = sum(1 for x, y in zip(a, b, strict=True) if x != y)
        item.test = "permutation exact" if nonzero <= EXACT_MAX_N else f"permutation {PERMUTATIONS:,}"
        item.p_value = paired_permutation_test(a, b)
    return item


def _verdicts(items: list[MetricComparison], alpha: float) -> None:
    tested = [m for m in items if m.p_value is not None]
    adjusted = holm([m.p_value for m in tested if m.p_value is not None])
    for item, p in zip(tested, adjusted, strict=True):
        item.p_holm = p
        delta = item.delta or 0.0
        if p < alpha and delta != 0.0:
            worse = (delta > 0) == item.lower_is_better
            item.verdict = "regressed" if worse else "improved"
        else:
            item.verdict = "no significant change"
        item.min_changes = min_detectable_changes(alpha)
        item.small_n = _small_n(item, alpha, len(tested))


def _small_n(item: MetricComparison, alpha: float, n_tests: int) -> str | None:
    """The note for a change too small for the test to detect (``None`` when there is none).

    Only for a metric with changed cases and no significant verdict: fewer changed
    cases than :func:`min_detectable_changes` can never give ``p < alpha``.
    """
    changed = len(item.regressed_cases) + len(item.improved_cases)
    least = item.min_changes
    if item.verdict != "no significant change" or not changed or least is None or changed >= least:
        return None
    test = "McNemar's exact test" if item.kind == "binary" else "the paired sign-flip test"
    holm_note = ""
    if n_tests > 1:
        holm_note = (
            f"; {min_detectable_changes(alpha, n_tests)} if it is the only one of the "
            f"{n_tests} metrics that changed (Holm)"
        )
    size = f", a change of {least / item.n_paired:.2g} in the mean" if item.kind == "binary" else ""
    if item.n_paired < least:
        size = f"; more than the {item.n_paired} cases there are: no change can be significant"
    return (
        f"{changed} of {item.n_paired} case(s) changed; with n={item.n_paired} {test} cannot detect "
        f"fewer than {least} changed cases, all in one direction{size} (p < {alpha:g}{holm_note}); "
        "gate such changes per case with --fail-on-case-regression"
    )


# --- the two runs ------------------------------------------------------------------------


def _names(side: _Side, include_sub_scores: bool) -> dict[str, tuple[str, str | None]]:
    """Every comparable name of a run → (metric, sub-score or None)."""
    out: dict[str, tuple[str, str | None]] = {}
    for metric in side.metrics:
        out[metric] = (metric, None)
        if include_sub_scores:
            for sub in side.subs.get(metric, {}):
                out.setdefault(f"{metric}.{sub}", (metric, sub))
    return out


def _chosen(
    metrics: Sequence[str],
    all_a: dict[str, tuple[str, str | None]],
    all_b: dict[str, tuple[str, str | None]],
    shared: Sequence[str],
) -> list[str]:
    for name in metrics:
        if name not in all_a or name not in all_b:
            raise ConfigError(
                f"metric {name!r} is not in both runs; metrics of both: {', '.join(shared) or 'none'} "
                "(a sub-score is named metric.sub)"
            )
    return list(dict.fromkeys(metrics))


def _task_digests(result: EvalResult) -> Iterator[tuple[str, int]]:
    """Each case id with a hash of its task fields, a chunk of cases at a time from the store."""
    if isinstance(result, StoredResult) and result._cases is None:
        with result._store() as store:
            for chunk in store.iter_cases(result.run.id):
                for case in chunk:
                    yield case.id, hash(tuple(repr(getattr(case, f)) for f in TASK_FIELDS))
        return
    for case in result.cases:
        yield case.id, hash(tuple(repr(getattr(case, f)) for f in TASK_FIELDS))


def _task_differences(a: EvalResult, b: EvalResult) -> int:
    in_b = dict(_task_digests(b))
    return sum(1 for case_id, digest in _task_digests(a) if case_id in in_b and in_b[case_id] != digest)


def _judge_label(run: RunRecord) -> str:
    judge = run.judge or {}
    return str(judge.get("config") or judge.get("name") or "none")


def _warnings(
    a: EvalResult,
    b: EvalResult,
    paired: int,
    only_a: Sequence[str],
    only_b: Sequence[str],
    metrics: Iterable[str],
) -> list[str]:
    ra, rb = a.run, b.run
    out: list[str] = []
    if ra.id == rb.id:
        out.append(f"A and B are the same run ({ra.id}): nothing can differ")
    if ra.dataset.fingerprint != rb.dataset.fingerprint:
        text = (
            f"the runs' datasets differ (fingerprint {ra.dataset.fingerprint} vs {rb.dataset.fingerprint}): "
            f"{paired} case(s) paired by id"
        )
        if only_a or only_b:
            text += f"; {len(only_a)} case(s) only in A, {len(only_b)} only in B (not compared)"
        differ = _task_differences(a, b)
        if differ:
            text += f"; {differ} paired case(s) have a different input, reference or expected answer"
        else:
            text += "; the paired cases have the same inputs and references (their outputs differ)"
        out.append(text)
    elif only_a or only_b:
        out.append(f"{len(only_a)} case(s) only in A and {len(only_b)} only in B are not compared")
    for label, run in (("A", ra), ("B", rb)):
        if run.status != "completed":
            out.append(f"run {label} ({run.id}) is {run.status}: cases without a result are not compared")
    if repeats_of(ra) != repeats_of(rb):
        out.append(
            f"the runs have different repeats ({repeats_of(ra)} vs {repeats_of(rb)} trials per case): "
            "cases are compared by their means over their own trials, which vary less with more trials"
        )
    if _judge_label(ra) != _judge_label(rb):
        out.append(
            f"the runs were scored by different judges ({_judge_label(ra)} vs {_judge_label(rb)}): "
            "judge-based metrics may differ because of the judge"
        )
    specs_a, specs_b = _specs(ra), _specs(rb)
    for metric in metrics:
        sa, sb = specs_a.get(metric), specs_b.get(metric)
        if sa is not None and sb is not None and (sa.name, sa.args) != (sb.name, sb.args):
            out.append(f"metric {metric!r} has different settings: A {sa} vs B {sb}")
    return out


def _status_message(
    status_a: CaseStatus, message_a: str | None, status_b: CaseStatus, message_b: str | None
) -> str | None:
    """The error message of the side with an error, else the not-applicable reason."""
    for wanted in ("error", "not_applicable"):
        if status_b == wanted:
            return message_b
        if status_a == wanted:
            return message_a
    return None


def _status_changes(
    side_a: _Side, side_b: _Side, ids: Sequence[str], metrics: Iterable[str]
) -> list[StatusChange]:
    out: list[StatusChange] = []
    missing: tuple[CaseStatus, str | None] = ("missing", None)
    for metric in metrics:
        by_a, by_b = side_a.statuses(metric), side_b.statuses(metric)
        for case_id in ids:
            status_a, message_a = by_a.get(case_id, missing)
            status_b, message_b = by_b.get(case_id, missing)
            if status_a != status_b:
                out.append(
                    StatusChange(
                        case_id=case_id,
                        metric=metric,
                        status_a=status_a,
                        status_b=status_b,
                        message=_status_message(status_a, message_a, status_b, message_b),
                    )
                )
    return out


def compare_runs(
    a: EvalResult,
    b: EvalResult,
    *,
    alpha: float = 0.05,
    metrics: Sequence[str] | None = None,
    include_sub_scores: bool = False,
) -> Comparison:
    """Run ``b`` (the candidate) against run ``a`` (the baseline), case by case.

    ``metrics`` limits the comparison to these names (a metric or a sub-score
    ``metric.sub``, which need not be in ``include_sub_scores``). Raises
    :class:`~clineval.errors.ConfigError` when the runs share no case id or no metric,
    or a name in ``metrics`` is not in both runs.
    """
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    side_a, side_b = _Side(a), _Side(b)
    in_b = set(side_b.case_ids)
    in_a = set(side_a.case_ids)
    ids = [i for i in side_a.case_ids if i in in_b]
    only_a = [i for i in side_a.case_ids if i not in in_b]
    only_b = [i for i in side_b.case_ids if i not in in_a]
    if not ids:
        raise ConfigError(
            f"runs {a.run.id} and {b.run.id} share no case id ({len(in_a)} and {len(in_b)} cases, e.g. "
            f"{', '.join(side_a.case_ids[:3]) or 'none'} vs {', '.join(side_b.case_ids[:3]) or 'none'}): "
            "cases are paired by id, so they must come from the same dataset"
        )
    all_a, all_b = _names(side_a, True), _names(side_b, True)
    shown_a, shown_b = _names(side_a, include_sub_scores), _names(side_b, include_sub_scores)
    shared = [n for n in side_a.metrics if n in side_b.metrics]
    chosen = [n for n in shown_a if n in shown_b] if not metrics else _chosen(metrics, all_a, all_b, shared)
    if not chosen:
        raise ConfigError(
            f"runs {a.run.id} and {b.run.id} have no metric in common "
            f"(A: {', '.join(side_a.metrics) or 'none'}; B: {', '.join(side_b.metrics) or 'none'})"
        )
    runs = (a.run, b.run)
    items: list[MetricComparison] = []
    for name in chosen:
        metric, sub = all_a[name]
        va, vb = side_a.values(metric, sub), side_b.values(metric, sub)
        items.append(_compare_metric(name, ids, va, vb, lower_is_better_metric(metric, runs)))
    _verdicts(items, alpha)
    parents = list(dict.fromkeys(all_a[n][0] for n in chosen))
    return Comparison(
        run_a=RunSide.of(a.run),
        run_b=RunSide.of(b.run),
        alpha=alpha,
        paired_cases=len(ids),
        cases_only_in_a=only_a,
        cases_only_in_b=only_b,
        metrics=items,
        metrics_only_in_a=[n for n in shown_a if n not in all_b],
        metrics_only_in_b=[n for n in shown_b if n not in all_a],
        status_changes=_status_changes(side_a, side_b, ids, parents),
        warnings=_warnings(a, b, len(ids), only_a, only_b, parents),
    )
