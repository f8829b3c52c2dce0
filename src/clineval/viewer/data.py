"""Read-only queries behind the viewer's pages.

:class:`ViewerData` opens the run store read-only once (``RunStore(path, readonly=True)``)
and answers each page with a few SQL queries, so a page of a 10,000-case run never loads
all its cases:

* the runs list reads the run records (small) and filters them;
* a run's aggregates read the numbers of the results table only (value, status and
  sub-scores per result, no case text) and reuse :func:`clineval.results.aggregate.aggregate`,
  so they are those of ``clineval show``; they are cached per run until its results change;
* the case table is paginated, sorted and filtered in SQL (``LIMIT``/``OFFSET``), and only
  the rows of the page are read in full;
* one case reads its case row, its agent output and its results.

Everything that came from a case, an agent or a judge is masked with
:func:`clineval.redaction.redact` (as ``clineval show`` and the exports do) before it is
returned. Comparisons reuse :func:`clineval.compare.compare_runs` on :func:`clineval.api.load_run`.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter, OrderedDict, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from clineval.errors import ClinevalError, StoreError
from clineval.model import AgentOutput, Case, ResultRecord, RunRecord, Score
from clineval.model.run import run_kind
from clineval.redaction import redact, redact_json
from clineval.results.aggregate import MISSING_GROUP, MetricAggregate, aggregate
from clineval.results.models import models_label
from clineval.results.render import SUB_SCORE_ROWS
from clineval.store.search import DOCS_TABLE, SEARCH_TABLE, match_query, matching_cases_sql
from clineval.store.sqlite import RunStore
from clineval.viewer.evidence import load_run_views

if TYPE_CHECKING:
    from clineval.compare import Comparison
    from clineval.results.result import EvalResult

#: Case-table page sizes a page may ask for.
PAGE_SIZES = (20, 50, 100, 200)
DEFAULT_PAGE_SIZE = 50
#: Runs with more cases than this get no suite table or radiology-benchmark summary on their
#: page (both need every case in memory); ``clineval show`` and ``clineval radbench summary`` still do.
FULL_LOAD_MAX_CASES = 2000
#: Metadata keys that are bookkeeping, not grouping fields.
_HIDDEN_METADATA = ("suite_case", "agent_output")
#: A run with this many results or more shows its aggregates at once and its bootstrap intervals
#: when computed (about 0.2 s per metric of 10,000 values on a small machine).
SYNC_CI_RESULTS = 20_000
#: Characters of a case's input or response shown in the case table.
PREVIEW_CHARS = 140

DisplayStatus = Literal["running", "completed", "interrupted", "failed", "stopped"]
ScoreStatusFilter = Literal["scored", "error", "not_applicable", "missing"]


class NotFound(ClinevalError):
    """An unknown run or case (the pages answer 404 with this message)."""


# --------------------------------------------------------------------------- returned shapes


@dataclass(frozen=True)
class RunRow:
    """One run in the runs list."""

    id: str
    name: str | None
    created_at: float
    status: DisplayStatus
    tags: dict[str, str]
    metrics: list[str]
    dataset_source: str
    fingerprint: str
    n_cases: int
    judge: str | None
    kind: str | None


@dataclass(frozen=True)
class RunFilters:
    """The runs list's filters (each optional; all given must match)."""

    name: str | None = None
    tag: str | None = None
    """``KEY=VALUE`` (or a bare ``KEY``: the run has that tag)."""
    status: str | None = None
    metric: str | None = None
    dataset: str | None = None
    """Text in the dataset's source, or a prefix of its fingerprint."""

    def matches(self, row: RunRow) -> bool:
        return _matches(row, self)


@dataclass(frozen=True)
class UnscoredReason:
    reason: str
    count: int
    """How many results (case × metric) went unscored for this reason."""
    metrics: list[str]
    cases: int = 0
    """How many distinct cases had at least one result unscored for this reason."""


@dataclass
class RunSummary:
    """What the run page shows above the case table."""

    record: RunRecord
    status: DisplayStatus
    kind: str | None
    n_cases: int
    n_results: int
    metrics: list[str]
    lower_is_better: list[str]
    aggregates: list[MetricAggregate]
    by: str | None
    by_groups: list[MetricAggregate]
    group_fields: list[str]
    distributions: dict[str, list[float]]
    unscored: list[UnscoredReason]
    not_applicable: dict[str, int]
    hidden_sub_scores: int = 0
    """Sub-scores left out of the aggregates (every one is in the store and the exports)."""
    cis_pending: bool = False
    """The aggregates lack their bootstrap intervals, being computed (see :meth:`ViewerData.summary`)."""


@dataclass(frozen=True)
class CaseQuery:
    """A page of the case table: sort, filters and position."""

    page: int = 1
    size: int = DEFAULT_PAGE_SIZE
    sort: str = "index"
    """``index`` (dataset order), ``case`` (case id) or a metric name (its value)."""
    order: Literal["asc", "desc"] = "asc"
    metric: str | None = None
    """The metric the score range and status filters apply to (status alone: any metric)."""
    min: float | None = None
    max: float | None = None
    status: ScoreStatusFilter | None = None
    q: str | None = None
    """Text in the case id, or words in the case's input, response or reference (full-text)."""
    failures: bool = False
    """Only the failed cases (:data:`FAILED_CASE_SQL`)."""

    def params(self) -> dict[str, str]:
        """The query as URL parameters, defaults left out (a case page's link keeps them)."""
        out: dict[str, str] = {}
        default = CaseQuery()
        for key in ("sort", "order", "metric", "min", "max", "status", "q"):
            value = getattr(self, key)
            if value is not None and value != getattr(default, key):
                out[key] = f"{value:g}" if isinstance(value, float) else str(value)
        if self.failures:
            out["failures"] = "1"
        return out


@dataclass(frozen=True)
class Cell:
    """One (case, metric) result in the case table."""

    status: str
    value: float | None
    label: str | None
    note: str | None
    """The error (unscored) or the not-applicable reason, for a tooltip."""
    verdict: Literal["pass", "fail"] | None = None
    """A pass/fail metric's verdict (its label, or a 0/1 value read with its direction)."""


@dataclass(frozen=True)
class CaseRow:
    case_id: str
    index: int
    input: str
    response: str
    cells: dict[str, Cell]
    failed: bool
    match: str | None = None
    """Where the searched words occur (a snippet, the words between ``\x02`` and ``\x03``)."""

    @property
    def wrong(self) -> bool:
        """The agent failed or a pass/fail metric says fail."""
        return self.failed or any(c.verdict == "fail" for c in self.cells.values())


@dataclass
class CasePage:
    rows: list[CaseRow]
    total: int
    """Cases matching the filters."""
    n_cases: int
    """Cases in the run."""
    query: CaseQuery
    metrics: list[str]

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.query.size))


@dataclass
class CaseView:
    """One case of a run with its agent output applied and every result."""

    record: RunRecord
    case: Case
    results: list[ResultRecord]
    index: int
    n_cases: int
    previous_id: str | None
    next_id: str | None
    position: int | None = None
    """The case's place (from 1) among the cases of ``query``, ``None`` when it is not one of them."""
    total: int | None = None
    """How many cases ``query`` selects."""
    query: CaseQuery | None = None
    """The case table's filter and sort that previous and next follow."""


@dataclass
class SuiteTable:
    columns: list[str]
    rows: list[list[str]]
    case_ids: list[str]
    disclaimer: str | None
    wrong: list[set[int]] = field(default_factory=list)
    """Per row, the columns that show a wrong answer: an ``output.X`` column that differs from the
    row's ``expected.X`` (a wrong decision), or a pass/fail score that failed."""


@dataclass
class RadbenchSummary:
    by: str
    metrics: list[str]
    headers: dict[str, str]
    groups: list[tuple[str, dict[str, tuple[float | None, float | None, float | None, int]]]]
    """(group label, metric -> (mean, ci_low, ci_high, n)) in the benchmark's order."""
    choices: list[str] = field(default_factory=list)


@dataclass
class CompareView:
    comparison: Comparison
    a: RunRecord
    b: RunRecord


# --------------------------------------------------------------------------- helpers


@dataclass
class _RunNumbers:
    """What one pass over a run's results gives the run page (see ``ViewerData._light_results``)."""

    results: list[_LightResult] = field(default_factory=list)
    values: dict[str, list[float]] = field(default_factory=dict)
    errors: list[tuple[str, str, str | None]] = field(default_factory=list)
    """(metric, case id, error message) of each unscored result."""
    not_applicable: dict[str, int] = field(default_factory=dict)


class _LightResult:
    """What :func:`aggregate` reads of a result and its score, from the results table's columns
    (one object per result: ``result.score`` is the result itself)."""

    __slots__ = ("case_id", "metric", "status", "sub_scores", "value")

    def __init__(
        self, case_id: str, metric: str, status: str, value: float | None, sub_scores: dict[str, float | None]
    ):
        self.case_id = case_id
        self.metric = metric
        self.status = status
        self.value = value
        self.sub_scores = sub_scores

    @property
    def score(self) -> _LightResult:
        return self


def _limit_sub_scores(results: list[_LightResult]) -> tuple[list[_LightResult], int]:
    """The results with at most :data:`SUB_SCORE_ROWS` sub-scores per metric (the first seen)."""
    seen: dict[str, dict[str, None]] = defaultdict(dict)
    valued: set[tuple[str, str]] = set()
    for result in results:
        for sub, value in result.score.sub_scores.items():
            seen[result.metric].setdefault(sub)
            if value is not None and result.score.status == "scored":
                valued.add((result.metric, sub))
    # the sub-scores aggregate() gives a row (those with a value), in its order
    rows = {metric: [sub for sub in subs if (metric, sub) in valued] for metric, subs in seen.items()}
    keep = {metric: set(subs[:SUB_SCORE_ROWS]) for metric, subs in rows.items()}
    hidden = sum(max(0, len(subs) - SUB_SCORE_ROWS) for subs in rows.values())
    if not hidden:
        return results, 0
    out = [
        _LightResult(
            r.case_id,
            r.metric,
            r.status,
            r.value,
            {k: v for k, v in r.sub_scores.items() if k in keep[r.metric]},
        )
        if any(k not in keep[r.metric] for k in r.score.sub_scores)
        else r
        for r in results
    ]
    return out, hidden


def _aggregate(results: list[_LightResult], metric_order: list[str]) -> list[MetricAggregate]:
    """:func:`aggregate` of the results, metric by metric on two threads (the bootstrap of a
    10,000-case metric takes about 0.2 s and numpy releases the GIL for most of it); the
    same rows, in the same order, as one call."""
    by_metric: dict[str, list[_LightResult]] = defaultdict(list)
    for result in results:
        by_metric[result.metric].append(result)
    order = list(dict.fromkeys([*(m for m in metric_order if m in by_metric), *by_metric]))

    def one(metric: str) -> list[MetricAggregate]:
        return aggregate(cast("list[ResultRecord]", by_metric[metric]), metric_order=[metric])

    if len(results) < 5000 or len(order) < 2:
        return [row for metric in order for row in one(metric)]
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="clineval-view-aggregate") as pool:
        return [row for rows in pool.map(one, order) for row in rows]


def _masked_record(record: RunRecord) -> RunRecord:
    return RunRecord.model_validate_json(redact_json(record.model_dump_json()))


def _preview(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False)
    elif value.startswith("[") and value.endswith("]"):  # a conversation: its turns' contents
        try:
            turns = json.loads(value)
            value = " / ".join(str(t.get("content", "")) for t in turns if isinstance(t, dict))
        except ValueError:
            pass
    text = " ".join(value.split())
    if len(text) > PREVIEW_CHARS:
        text = text[: PREVIEW_CHARS - 1] + "…"
    return redact(text)


def _short(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line if len(line) <= limit else line[: limit - 1] + "…"


_FAIL_LABELS = ("fail", "no_match")
_PASS_LABELS = ("pass", "match")


def _verdict(
    status: str, value: float | None, label: Any, higher: bool, lower: bool
) -> Literal["pass", "fail"] | None:
    """A result's pass/fail verdict: its label, else a 0/1 metric's value (1 passes when
    higher is better, 0 when lower is)."""
    if status != "scored":
        return None
    if label in _FAIL_LABELS:
        return "fail"
    if label in _PASS_LABELS:
        return "pass"
    if value is None or not (higher or lower):
        return None
    return "pass" if (value == 1.0) == higher else "fail"


def _failed_case_sql(n_higher: int, n_lower: int) -> str:
    """The condition on ``c`` of a failed case: the agent failed, or a result fails
    (:func:`_verdict`). Parameters: the fail labels, the pass labels, the 0/1 metrics where
    higher is better, then those where lower is."""
    fail = ",".join("?" * len(_FAIL_LABELS))
    passed = ",".join("?" * len(_PASS_LABELS))
    higher = ",".join("?" * n_higher)
    lower = ",".join("?" * n_lower)
    return (
        "(EXISTS (SELECT 1 FROM outputs fo WHERE fo.run_id = c.run_id AND fo.case_id = c.case_id"
        " AND json_extract(fo.data, '$.agent_run.failed'))"
        " OR EXISTS (SELECT 1 FROM results fx WHERE fx.run_id = c.run_id AND fx.case_id = c.case_id"
        f" AND fx.status = 'scored' AND (json_extract(fx.score, '$.label') IN ({fail})"
        f" OR (COALESCE(json_extract(fx.score, '$.label'), '') NOT IN ({passed})"
        f" AND ((fx.metric IN ({higher}) AND fx.value = 0) OR (fx.metric IN ({lower}) AND fx.value = 1))))))"
    )


def _wrong_cells(sources: list[str], row: list[str]) -> set[int]:
    """The cells of a suite table row that show a wrong answer: ``output.X`` unlike the row's
    ``expected.X`` (a wrong decision), and a score that failed."""
    expected = {src.partition(".")[2]: row[i] for i, src in enumerate(sources) if src.startswith("expected.")}
    wrong: set[int] = set()
    for i, src in enumerate(sources):
        kind, _, field_path = src.partition(".")
        if kind == "output" and field_path in expected:
            want, got = expected[field_path], row[i]
            if want != "–" and " ".join(want.split()).casefold() != " ".join(got.split()).casefold():
                wrong.add(i)
        elif kind == "score" and row[i].endswith("(fail)"):
            wrong.add(i)
    return wrong


def _metadata_path(key: str) -> str:
    return '$.metadata."' + key.removeprefix("metadata.").replace('"', '\\"') + '"'


def _group_label(value: Any) -> str:
    return MISSING_GROUP if value is None else str(value)


# --------------------------------------------------------------------------- the queries


class ViewerData:
    """Read-only access to one run store for the viewer (thread-safe; one connection)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.store = RunStore(self.path, readonly=True)
        self._cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._pending: dict[tuple[Any, ...], threading.Lock] = {}
        self._worker: RunStore | None = None
        self._worker_lock = threading.Lock()

    def close(self) -> None:
        self.store.close()
        with self._worker_lock:
            if self._worker is not None:
                self._worker.close()
                self._worker = None

    # cache ----------------------------------------------------------------------------

    def _has(self, key: tuple[Any, ...]) -> bool:
        with self._cache_lock:
            return key in self._cache

    def _cached(self, key: tuple[Any, ...], make: Any) -> Any:
        """``make()``, computed once per key: a second request for a key being computed (by a
        page or the warm-up) waits for that result instead of computing it again."""
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            pending = self._pending.setdefault(key, threading.Lock())
        with pending:
            with self._cache_lock:
                if key in self._cache:
                    return self._cache[key]
            value = make()
            with self._cache_lock:
                self._cache[key] = value
                self._pending.pop(key, None)
                while len(self._cache) > 64:
                    self._cache.popitem(last=False)
        return value

    def cached(self, key: tuple[Any, ...], make: Any) -> Any:
        """``make()`` computed once per ``key`` (a page's own figures, e.g. the agreement report)."""
        return self._cached(key, make)

    def results_version(self, run_id: str) -> tuple[Any, ...]:
        """Changes whenever the run's results or status change."""
        return self._version(run_id)

    def _version(self, run_id: str) -> tuple[Any, ...]:
        """Changes whenever the run's results or status change (the cache key of its aggregates)."""
        # COUNT and MAX(rowid) read the primary-key index only; a new result has a new rowid
        row = self.store.query(
            "SELECT COUNT(*), MAX(rowid), (SELECT status FROM runs WHERE id = ?1)"
            " FROM results WHERE run_id = ?1",
            (run_id,),
        )[0]
        return tuple(row)

    def warm(self, runs: int = 3) -> None:
        """Compute the aggregates of the newest ``runs`` runs ahead of their first page view
        (run on a background thread when the viewer starts; errors are left to the page)."""
        import scipy.stats  # noqa: F401  (the bootstrap's import, about 0.5 s, paid once here)

        for record in self.store.list_runs(runs):
            try:
                self._background_full(record.id, self._version(record.id), False, list(record.metrics))
            except Exception:  # a damaged run shows its error on its own page
                continue

    # runs -----------------------------------------------------------------------------

    def get_run(self, ref: str) -> RunRecord:
        """A run by id (or unique prefix, ``latest``), masked; :class:`NotFound` otherwise."""
        try:
            record = self.store.get_run(ref)
        except StoreError as exc:
            raise NotFound(f"no run {ref!r} in this store") from exc
        load_run_views(record)  # the evidence views registered beside the run's own metrics
        return _masked_record(record)

    def display_status(self, record: RunRecord) -> DisplayStatus:
        if self.store.is_stopped(record):
            return "stopped"
        return record.status

    def runs(self, filters: RunFilters | None = None) -> list[RunRow]:
        """Every run, newest first, that matches ``filters``."""
        filters = filters or RunFilters()
        out: list[RunRow] = []
        for raw in self.store.list_runs():
            record = _masked_record(raw)
            row = RunRow(
                id=record.id,
                name=record.name,
                created_at=record.created_at,
                status=self.display_status(record),
                tags=dict(record.tags),
                metrics=list(record.metrics),
                dataset_source=record.dataset.source,
                fingerprint=record.dataset.fingerprint,
                n_cases=record.dataset.n_cases,
                judge=models_label(record),
                kind=run_kind(record),
            )
            if filters.matches(row):
                out.append(row)
        return out

    def summary(
        self,
        run_ref: str,
        *,
        by: str | None = None,
        all_sub_scores: bool = False,
        wait_for_cis: bool = True,
    ) -> RunSummary:
        """The run page's figures; sub-scores beyond :data:`SUB_SCORE_ROWS` per metric are left
        out (as ``clineval show`` does) unless ``all_sub_scores``.

        ``wait_for_cis=False``: for a run of :data:`SYNC_CI_RESULTS` results or more whose
        aggregates are not computed yet, return them at once without the bootstrap intervals
        (``cis_pending``); :meth:`compute_aggregates` computes them."""
        record = self.get_run(run_ref)
        run_id = record.id
        version = self._version(run_id)
        n_cases = int(self.store.query("SELECT COUNT(*) FROM cases WHERE run_id = ?", (run_id,))[0][0])
        metric_order = list(record.metrics)
        key = ("agg", run_id, all_sub_scores, version)
        cis_pending = not wait_for_cis and int(version[0]) >= SYNC_CI_RESULTS and not self._has(key)
        if cis_pending:
            # A large run seen for the first time: its figures now, summed in SQLite; the
            # bootstrap intervals later (compute_aggregates(), which the app runs once the page
            # is sent; the page fetches them from /runs/ID/aggregates).
            numbers, aggregates, hidden_sub_scores = self._quick(run_id, metric_order, all_sub_scores)
        else:
            numbers, _, hidden_sub_scores, aggregates = self._full(
                run_id, version, all_sub_scores, metric_order
            )
        distributions = numbers.values
        by_groups: list[MetricAggregate] = []
        if by:
            _, results, _, _ = self._full(run_id, version, all_sub_scores, metric_order, with_cis=False)
            by_groups = cast(
                "list[MetricAggregate]",
                self._cached(
                    ("by", run_id, by, all_sub_scores, version),
                    lambda: self._grouped(run_id, results, by, metric_order),
                ),
            )
        reasons: Counter[str] = Counter()
        reason_metrics: dict[str, dict[str, None]] = {}
        reason_cases: dict[str, set[str]] = {}
        for metric, case_id, error in numbers.errors:
            reason = redact(_short(str(error or "")))
            reasons[reason] += 1
            reason_metrics.setdefault(reason, {})[metric] = None
            reason_cases.setdefault(reason, set()).add(case_id)
        na = numbers.not_applicable
        metrics = list(
            dict.fromkeys([*record.metrics, *(a.metric for a in aggregates if "." not in a.metric)])
        )
        return RunSummary(
            record=record,
            status=self.display_status(record),
            kind=run_kind(record),
            n_cases=n_cases,
            n_results=int(version[0]),
            metrics=metrics,
            lower_is_better=list(record.lower_is_better),
            aggregates=aggregates,
            by=by,
            by_groups=by_groups,
            group_fields=self.group_fields(run_id),
            distributions=distributions,
            unscored=[
                UnscoredReason(reason, n, list(reason_metrics[reason]), len(reason_cases[reason]))
                for reason, n in reasons.most_common(20)
            ],
            not_applicable={str(k): int(v) for k, v in na.items()},
            hidden_sub_scores=hidden_sub_scores,
            cis_pending=cis_pending,
        )

    def compute_aggregates(self, run_ref: str, *, all_sub_scores: bool = False) -> None:
        """Compute (and keep) a run's aggregates with their intervals, e.g. after a page that
        showed them pending was sent."""
        record = self.get_run(run_ref)
        self._background_full(record.id, self._version(record.id), all_sub_scores, list(record.metrics))

    def _background_full(
        self, run_id: str, version: tuple[Any, ...], all_sub_scores: bool, metric_order: list[str]
    ) -> None:
        """:meth:`_full` on a thread, reading through a second connection so that the pages'
        queries do not wait for its long one."""
        with self._worker_lock:
            if self._worker is None:
                self._worker = RunStore(self.path, readonly=True)
            worker = self._worker
        self._full(run_id, version, all_sub_scores, metric_order, store=worker)

    def _full(
        self,
        run_id: str,
        version: tuple[Any, ...],
        all_sub_scores: bool,
        metric_order: list[str],
        *,
        with_cis: bool = True,
        store: RunStore | None = None,
    ) -> tuple[_RunNumbers, list[_LightResult], int, list[MetricAggregate]]:
        """The run's numbers, its results (sub-scores limited unless ``all_sub_scores``), how many
        sub-scores were left out, and (``with_cis``) the aggregates: each computed once per version."""
        light = cast(
            "_RunNumbers",
            self._cached(
                ("light", run_id, version), lambda: self._light_results(run_id, store or self.store)
            ),
        )
        results, hidden = light.results, 0
        if not all_sub_scores:
            results, hidden = cast(
                "tuple[list[_LightResult], int]",
                self._cached(("limited", run_id, version), lambda: _limit_sub_scores(light.results)),
            )
        aggregates: list[MetricAggregate] = []
        if with_cis:
            aggregates = cast(
                "list[MetricAggregate]",
                self._cached(
                    ("agg", run_id, all_sub_scores, version), lambda: _aggregate(results, metric_order)
                ),
            )
        return light, results, hidden, aggregates

    def _quick(
        self, run_id: str, metric_order: list[str], all_sub_scores: bool
    ) -> tuple[_RunNumbers, list[MetricAggregate], int]:
        """The aggregates without intervals, summed by SQLite (about 0.1 s for 10,000 cases),
        each metric's values, the errors and the not-applicable counts: no result loaded."""
        numbers = _RunNumbers()
        counts: dict[str, dict[str, tuple[int, int, float | None, float | None, float | None, float]]] = (
            defaultdict(dict)
        )
        order: dict[str, None] = dict.fromkeys(metric_order)
        for metric, status, n, n_values, mean, low, high, squares in self.store.query(
            "SELECT metric, status, COUNT(*), COUNT(value), AVG(value), MIN(value), MAX(value),"
            " TOTAL(value * value) FROM results WHERE run_id = ? GROUP BY metric, status",
            (run_id,),
        ):
            counts[metric][status] = (n, n_values, mean, low, high, squares)
            order.setdefault(metric)
        subs: dict[str, list[tuple[str, int, int, float | None, float | None, float | None, float]]] = (
            defaultdict(list)
        )
        for metric, key, n, n_values, mean, low, high, squares in self.store.query(
            "SELECT r.metric, j.key, COUNT(*), COUNT(j.value), AVG(j.value), MIN(j.value), MAX(j.value),"
            " TOTAL(j.value * j.value) FROM results r, json_each(r.score, '$.sub_scores') j"
            " WHERE r.run_id = ? AND r.status = 'scored' GROUP BY r.metric, j.key ORDER BY MIN(j.id), j.key",
            (run_id,),
        ):
            if n_values:
                subs[metric].append((str(key), n, n_values, mean, low, high, squares))
        values: dict[str, list[float]] = defaultdict(list)
        for metric, value in self.store.query(
            "SELECT r.metric, r.value FROM results r LEFT JOIN cases c"
            " ON c.run_id = r.run_id AND c.case_id = r.case_id"
            " WHERE r.run_id = ? AND r.status = 'scored' AND r.value IS NOT NULL ORDER BY c.idx",
            (run_id,),
        ):
            values[metric].append(float(value))
        numbers.values = dict(values)
        numbers.errors = [
            (str(m), str(c), e)
            for m, c, e in self.store.query(
                "SELECT metric, case_id, json_extract(score, '$.error') FROM results"
                " WHERE run_id = ? AND status = 'error'",
                (run_id,),
            )
        ]
        numbers.not_applicable = {
            m: c["not_applicable"][0] for m, c in counts.items() if "not_applicable" in c
        }

        def row(name: str, scored: int, errors: int, na: int, stats: tuple[Any, ...]) -> MetricAggregate:
            mean, low, high, squares = stats
            std = None
            if scored > 1 and mean is not None:
                std = math.sqrt(max(0.0, (squares - scored * mean * mean) / (scored - 1)))
            return MetricAggregate(
                metric=name,
                n=scored + errors + na,
                scored=scored,
                errors=errors,
                not_applicable=na,
                mean=mean if scored else None,
                std=std,
                min=low if scored else None,
                max=high if scored else None,
            )

        out: list[MetricAggregate] = []
        hidden = 0
        for metric in order:
            if metric not in counts:
                continue
            by_status = counts[metric]
            scored = by_status.get("scored", (0, 0, None, None, None, 0.0))
            errors = by_status.get("error", (0,))[0]
            na = by_status.get("not_applicable", (0,))[0]
            # as aggregate(): a scored result with no value (only sub-scores) is not in the metric's row
            if scored[1] or errors or na:
                out.append(row(metric, scored[1], errors, na, scored[2:]))
            shown = subs[metric] if all_sub_scores else subs[metric][:SUB_SCORE_ROWS]
            hidden += len(subs[metric]) - len(shown)
            for key, n, n_values, mean, low, high, squares in shown:
                sub_na = na + (n - n_values)
                out.append(row(f"{metric}.{key}", n_values, errors, sub_na, (mean, low, high, squares)))
        return numbers, out, hidden

    def _light_results(self, run_id: str, store: RunStore) -> _RunNumbers:
        """One pass over the run's results: each one's status, value and sub-scores (numbers
        only), each metric's values, the errors' messages and the not-applicable counts."""
        numbers = _RunNumbers()
        values: dict[str, list[float]] = defaultdict(list)
        na: Counter[str] = Counter()
        for case_id, metric, status, value, subs, error in store.query(
            # the order of load_run(): the same values in the same order give the same bootstrap CI
            "SELECT r.case_id, r.metric, r.status, r.value,"
            " CASE WHEN instr(r.score, '\"sub_scores\":{}') THEN NULL"
            " ELSE json_extract(r.score, '$.sub_scores') END,"
            " CASE WHEN r.status = 'error' THEN json_extract(r.score, '$.error') END"
            " FROM results r LEFT JOIN cases c ON c.run_id = r.run_id AND c.case_id = r.case_id"
            " WHERE r.run_id = ? ORDER BY c.idx, r.metric",
            (run_id,),
        ):
            sub_scores: dict[str, float | None] = json.loads(subs) if subs and subs != "{}" else {}
            numbers.results.append(_LightResult(case_id, metric, status, value, sub_scores))
            if status == "scored" and value is not None:
                values[metric].append(float(value))
            elif status == "error":
                numbers.errors.append((metric, case_id, error))
            elif status == "not_applicable":
                na[metric] += 1
        numbers.values = dict(values)
        numbers.not_applicable = dict(na)
        return numbers

    def _grouped(
        self, run_id: str, results: list[_LightResult], by: str, metric_order: list[str]
    ) -> list[MetricAggregate]:
        groups = {
            case_id: _group_label(value)
            for case_id, value in self.store.query(
                "SELECT case_id, json_extract(data, ?) FROM cases WHERE run_id = ?",
                (_metadata_path(by), run_id),
            )
        }
        members: dict[str, list[_LightResult]] = defaultdict(list)
        for result in results:
            members[groups.get(result.case_id, MISSING_GROUP)].append(result)
        out: list[MetricAggregate] = []
        for group in sorted(members, key=lambda g: (g == MISSING_GROUP, g)):
            for agg in aggregate(cast("list[ResultRecord]", members[group]), metric_order=metric_order):
                out.append(agg.model_copy(update={"group": redact(group)}))
        # metric first, then group, as `clineval show --group-by` lists them
        order = {name: i for i, name in enumerate(dict.fromkeys(a.metric for a in out))}
        out.sort(key=lambda a: order[a.metric])
        return out

    def group_fields(self, run_id: str) -> list[str]:
        """The metadata keys of the run's cases (from the first 500), for grouping."""
        rows = self.store.query(
            "SELECT DISTINCT j.key FROM (SELECT data FROM cases WHERE run_id = ? ORDER BY idx LIMIT 500) c,"
            " json_each(c.data, '$.metadata') j",
            (run_id,),
        )
        return sorted(redact(str(r[0])) for r in rows if r[0] not in _HIDDEN_METADATA)

    # the case table ---------------------------------------------------------------------

    def _metric_names(self, record: RunRecord) -> list[str]:
        names = [
            str(r[0])
            for r in self.store.query(
                "SELECT DISTINCT metric FROM results WHERE run_id = ? ORDER BY metric", (record.id,)
            )
        ]
        return list(dict.fromkeys([m for m in record.metrics if m in names] + names))

    def pass_fail_metrics(self, record: RunRecord) -> tuple[list[str], list[str]]:
        """The run's 0/1 metrics (every scored value 0 or 1): (higher is better, lower is better)."""
        version = self._version(record.id)

        def make() -> tuple[list[str], list[str]]:
            binary = [
                str(r[0])
                for r in self.store.query(
                    "SELECT metric FROM results WHERE run_id = ? AND status = 'scored'"
                    " GROUP BY metric HAVING MIN(value IN (0.0, 1.0)) = 1",
                    (record.id,),
                )
            ]
            lower = set(record.lower_is_better)
            return [m for m in binary if m not in lower], [m for m in binary if m in lower]

        return cast("tuple[list[str], list[str]]", self._cached(("binary", record.id, version), make))

    def _search_sql(self, text: str, run_id: str) -> tuple[str, list[object]]:
        """The condition on ``c`` (a cases row) that ``q`` puts: the case id contains the text,
        or every word occurs in the input, response or reference (the store's FTS5 index; a
        store written before the index, opened read-only, is searched with LIKE instead)."""
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        like = f"%{escaped}%"
        fts = match_query(text)
        if fts is not None and self.has_search_index():
            return (
                f"(c.case_id LIKE ? ESCAPE '\\' OR c.case_id IN ({matching_cases_sql()}))",
                [like, fts, run_id],
            )
        return (
            "(c.case_id LIKE ? ESCAPE '\\' OR c.data LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM outputs so"
            " WHERE so.run_id = c.run_id AND so.case_id = c.case_id AND so.data LIKE ? ESCAPE '\\'))",
            [like, like, like],
        )

    def has_search_index(self) -> bool:
        return self.store.has_table(SEARCH_TABLE) and self.store.has_table(DOCS_TABLE)

    def _case_filter(
        self, record: RunRecord, query: CaseQuery, metrics: list[str]
    ) -> tuple[str, list[object], str]:
        """(``FROM cases c ... WHERE ...``, its parameters, the ``ORDER BY`` terms) of ``query``."""
        run_id = record.id
        joins: list[str] = []
        join_params: list[object] = []
        where = ["c.run_id = ?"]
        params: list[object] = [run_id]
        filtered_metric = query.metric if query.metric in metrics else None
        if filtered_metric is not None and (
            query.min is not None or query.max is not None or query.status is not None
        ):
            joins.append(
                "LEFT JOIN results f ON f.run_id = c.run_id AND f.case_id = c.case_id AND f.metric = ?"
            )
            join_params.append(filtered_metric)
            if query.min is not None:
                where.append("f.status = 'scored' AND f.value >= ?")
                params.append(query.min)
            if query.max is not None:
                where.append("f.status = 'scored' AND f.value <= ?")
                params.append(query.max)
            if query.status == "missing":
                where.append("f.status IS NULL")
            elif query.status is not None:
                where.append("f.status = ?")
                params.append(query.status)
        elif query.status is not None:
            if query.status == "missing":
                where.append(
                    "(SELECT COUNT(*) FROM results x WHERE x.run_id = c.run_id AND x.case_id = c.case_id) < ?"
                )
                params.append(len(metrics))
            else:
                where.append(
                    "EXISTS (SELECT 1 FROM results x WHERE x.run_id = c.run_id AND x.case_id = c.case_id"
                    " AND x.status = ?)"
                )
                params.append(query.status)
        if query.q:
            condition, values = self._search_sql(query.q, run_id)
            where.append(condition)
            params.extend(values)
        if query.failures:
            higher, lower = self.pass_fail_metrics(record)
            where.append(_failed_case_sql(len(higher), len(lower)))
            params.extend([*_FAIL_LABELS, *_PASS_LABELS, *higher, *lower])
        direction = "DESC" if query.order == "desc" else "ASC"
        if query.sort in metrics:
            joins.append(
                "LEFT JOIN results s ON s.run_id = c.run_id AND s.case_id = c.case_id AND s.metric = ?"
            )
            join_params.append(query.sort)
            order_by = f"(s.value IS NULL), s.value {direction}, c.idx"
        elif query.sort == "case":
            order_by = f"c.case_id {direction}"
        else:
            order_by = f"c.idx {direction}"
        base = f"FROM cases c {' '.join(joins)} WHERE {' AND '.join(where)}"
        return base, [*join_params, *params], order_by

    def case_page(self, run_ref: str, query: CaseQuery | None = None) -> CasePage:
        """One page of the run's case table, sorted and filtered in SQL."""
        query = query or CaseQuery()
        record = self.get_run(run_ref)
        run_id = record.id
        metrics = self._metric_names(record)
        base, all_params, order_by = self._case_filter(record, query, metrics)
        total = int(self.store.query(f"SELECT COUNT(*) {base}", all_params)[0][0])
        n_cases = int(self.store.query("SELECT COUNT(*) FROM cases WHERE run_id = ?", (run_id,))[0][0])
        size = query.size if query.size > 0 else DEFAULT_PAGE_SIZE
        page = max(1, min(query.page, max(1, math.ceil(total / size))))
        query = CaseQuery(**{**query.__dict__, "page": page, "size": size})
        with_outputs = base.replace(
            "FROM cases c",
            "FROM cases c LEFT JOIN outputs o ON o.run_id = c.run_id AND o.case_id = c.case_id",
            1,
        )
        rows = self.store.query(
            "SELECT c.case_id, c.idx, substr(json_extract(c.data, '$.input'), 1, 2000),"
            " substr(COALESCE(json_extract(o.data, '$.response'), json_extract(c.data, '$.response')),"
            " 1, 2000), COALESCE(json_extract(o.data, '$.agent_run.failed'), 0)"
            f" {with_outputs}"
            f" ORDER BY {order_by} LIMIT ? OFFSET ?",
            [*all_params, size, (page - 1) * size],
        )
        ids = [str(r[0]) for r in rows]
        higher, lower = self.pass_fail_metrics(record)
        cells: dict[str, dict[str, Cell]] = defaultdict(dict)
        if ids:
            marks = ",".join("?" * len(ids))
            for case_id, metric, status, value, label, error, explanation in self.store.query(
                "SELECT case_id, metric, status, value, json_extract(score, '$.label'),"
                " json_extract(score, '$.error'), json_extract(score, '$.explanation')"
                f" FROM results WHERE run_id = ? AND case_id IN ({marks})",
                (run_id, *ids),
            ):
                note = error if status == "error" else explanation if status == "not_applicable" else None
                cells[case_id][metric] = Cell(
                    status=status,
                    value=value,
                    label=redact(str(label)) if label is not None else None,
                    note=redact(_short(str(note))) if note else None,
                    verdict=_verdict(status, value, label, metric in higher, metric in lower),
                )
        matches = self._snippets(run_id, query.q, ids) if query.q and ids else {}
        return CasePage(
            rows=[
                CaseRow(
                    case_id=str(r[0]),
                    index=int(r[1]),
                    input=_preview(r[2]),
                    response=_preview(r[3]),
                    cells=cells.get(str(r[0]), {}),
                    failed=bool(r[4]),
                    match=matches.get(str(r[0])),
                )
                for r in rows
            ],
            total=total,
            n_cases=n_cases,
            query=query,
            metrics=metrics,
        )

    def _snippets(self, run_id: str, text: str, ids: list[str]) -> dict[str, str]:
        """Where the searched words occur in each of these cases (FTS5's ``snippet``), masked."""
        fts = match_query(text)
        if fts is None or not self.has_search_index():
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.store.query(
            f"SELECT d.case_id, snippet({SEARCH_TABLE}, -1, char(2), char(3), '…', 14)"
            f" FROM {SEARCH_TABLE} JOIN {DOCS_TABLE} d ON d.id = {SEARCH_TABLE}.rowid"
            f" WHERE {SEARCH_TABLE} MATCH ? AND d.run_id = ? AND d.case_id IN ({marks})",
            (fts, run_id, *ids),
        )
        return {str(r[0]): redact(" ".join(str(r[1]).split())) for r in rows if r[1]}

    def neighbours(
        self, record: RunRecord, case_id: str, query: CaseQuery
    ) -> tuple[str | None, str | None, int | None, int]:
        """(previous, next, position from 1, total) of a case among the cases ``query`` selects,
        in its order; a case outside them gets no position and the neighbours of the whole run."""
        metrics = self._metric_names(record)
        base, params, order_by = self._case_filter(record, query, metrics)
        row = self.store.query(
            f"WITH ordered AS (SELECT c.case_id AS id, ROW_NUMBER() OVER (ORDER BY {order_by}) AS n {base})"
            " SELECT (SELECT id FROM ordered WHERE n = cur.n - 1),"
            " (SELECT id FROM ordered WHERE n = cur.n + 1), cur.n,"
            " (SELECT COUNT(*) FROM ordered) FROM ordered cur WHERE cur.id = ?",
            [*params, case_id],
        )
        if row:
            return row[0][0], row[0][1], int(row[0][2]), int(row[0][3])
        if query != CaseQuery(page=query.page, size=query.size):
            total = int(self.store.query(f"SELECT COUNT(*) {base}", params)[0][0])
            previous, following, _, _ = self.neighbours(record, case_id, CaseQuery())
            return previous, following, None, total
        return None, None, None, 0

    # one case ---------------------------------------------------------------------------

    def case(self, run_ref: str, case_id: str, query: CaseQuery | None = None) -> CaseView:
        """One case; ``query``: the case table's filter and sort, which previous and next follow."""
        record = self.get_run(run_ref)
        run_id = record.id
        rows = self.store.query(
            "SELECT idx, data FROM cases WHERE run_id = ? AND case_id = ?", (run_id, case_id)
        )
        if not rows:
            raise NotFound(f"run {run_id} has no case {case_id!r}")
        index, data = int(rows[0][0]), str(rows[0][1])
        case = Case.model_validate_json(redact_json(data))
        output = self.store.query(
            "SELECT data FROM outputs WHERE run_id = ? AND case_id = ?", (run_id, case_id)
        )
        if output:
            case = AgentOutput.model_validate_json(redact_json(str(output[0][0]))).apply_to(case)
        order = {m: i for i, m in enumerate(record.metrics)}
        results = [
            ResultRecord(
                run_id=run_id,
                case_id=case_id,
                metric=r[0],
                score=Score.model_validate_json(redact_json(r[1])),
                duration_s=r[2],
                created_at=r[3],
            )
            for r in self.store.query(
                "SELECT metric, score, duration_s, created_at FROM results WHERE run_id = ? AND case_id = ?",
                (run_id, case_id),
            )
        ]
        results.sort(key=lambda r: (order.get(r.metric, len(order)), r.metric))
        query = query or CaseQuery()
        previous_id, next_id, position, total = self.neighbours(record, case_id, query)
        n_cases = int(self.store.query("SELECT COUNT(*) FROM cases WHERE run_id = ?", (run_id,))[0][0])
        return CaseView(
            record=record,
            case=case,
            results=results,
            index=index,
            n_cases=n_cases,
            previous_id=previous_id,
            next_id=next_id,
            position=position,
            total=total,
            query=query,
        )

    # whole-run views (small runs) ------------------------------------------------------------

    def load(self, run_ref: str) -> EvalResult:
        from clineval import api

        try:
            return api.load_run(run_ref, store=self.store)
        except StoreError as exc:
            raise NotFound(f"no run {run_ref!r} in this store") from exc

    def compare(self, a_ref: str, b_ref: str) -> CompareView:
        """Run B (the candidate) against run A (the baseline): :func:`clineval.compare.compare_runs`."""
        from clineval.compare import compare_runs

        a, b = self.get_run(a_ref), self.get_run(b_ref)
        key = ("compare", a.id, b.id, self._version(a.id), self._version(b.id))

        def make() -> Comparison:
            return compare_runs(self.load(a.id), self.load(b.id))

        return CompareView(comparison=cast("Comparison", self._cached(key, make)), a=a, b=b)

    def suite_table(self, run_ref: str) -> SuiteTable | None:
        """A suite run's case table (the suite's columns), or ``None`` for other or very large runs."""
        record = self.get_run(run_ref)
        if run_kind(record) != "suite" or record.dataset.n_cases > FULL_LOAD_MAX_CASES:
            return None
        from clineval.suites.table import case_rows, disclaimer_of, table_spec

        result = self.load(record.id)
        spec = table_spec(result)
        if spec is None:
            return None
        rows = [[redact(cell) for cell in row] for row in case_rows(result, spec)]
        return SuiteTable(
            columns=list(spec),
            rows=rows,
            case_ids=[c.id for c in result.cases],
            disclaimer=disclaimer_of(result),
            wrong=[_wrong_cells(list(spec.values()), row) for row in rows],
        )

    def radbench_summary(self, run_ref: str, by: str = "condition") -> RadbenchSummary | None:
        """A radiology-benchmark run's metrics per group (``clineval radbench summary``)."""
        record = self.get_run(run_ref)
        if run_kind(record) != "radbench" or record.dataset.n_cases > FULL_LOAD_MAX_CASES:
            return None
        from clineval.cli.radbench import HEADERS, SUMMARY_METRICS
        from clineval.environments.radbench.stats import report_by, run_rows, summarise

        choices = ["condition", "complexity", "task", "pair", "anatomy", "modality"]
        by = by if by in choices else "condition"
        # as clineval radbench summary: a grouping other than by condition is split into the
        # solvable and the insufficient conditions ("simple / solvable")
        rows = summarise(run_rows(self.load(record.id)), by=report_by((by,)), metrics=list(SUMMARY_METRICS))
        groups: dict[str, dict[str, tuple[float | None, float | None, float | None, int]]] = {}
        for row in rows:
            groups.setdefault(" / ".join(row.group), {})[row.metric] = (
                row.mean,
                row.ci_low,
                row.ci_high,
                row.n,
            )
        return RadbenchSummary(
            by=by,
            metrics=list(SUMMARY_METRICS),
            headers=dict(HEADERS),
            groups=list(groups.items()),
            choices=choices,
        )


def _matches(row: RunRow, filters: RunFilters) -> bool:
    if filters.name and filters.name.casefold() not in (row.name or "").casefold():
        return False
    if filters.tag:
        key, sep, value = filters.tag.partition("=")
        key, value = key.strip(), value.strip()
        if key not in row.tags or (sep and row.tags[key] != value):
            return False
    if filters.status and row.status != filters.status:
        return False
    if filters.metric and filters.metric not in row.metrics:
        return False
    if filters.dataset:
        text = filters.dataset.casefold()
        if text not in row.dataset_source.casefold() and not row.fingerprint.casefold().startswith(text):
            return False
    return True
