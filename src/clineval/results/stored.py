"""A run's result read from the store on demand: bounded memory at any number of cases.

:class:`StoredResult` is the :class:`~clineval.results.result.EvalResult` of a run that
stays in the store. What ``clineval run``, ``show`` and ``export`` need is streamed from it
a chunk of cases at a time (:meth:`clineval.store.sqlite.RunStore.iter_case_rows`):

* the aggregates read only the numbers of each result (status, value, sub-scores), in
  the order :meth:`RunStore.load_results` gives, so that their bootstrap intervals are
  those of a result held in memory; grouped aggregates keep one label per case;
* the unscored counts and reasons read the error results only;
* :meth:`iter_cases` gives each case (with the agent's output) and its results;
* :meth:`iter_case_scores` gives each case id and its results' scores (the per-case table);
* :func:`stored_cases` is a run's cases with the agent's outputs as a stream (what
  ``clineval score`` re-scores, a chunk at a time).

``cases``, ``results`` and ``to_pandas()`` load everything the first time they are used
(as :func:`clineval.api.load_run` does), for code that wants lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, cast

from clineval.datasets.dataset import fingerprint_cases
from clineval.datasets.streams import GeneratedCases
from clineval.model import Case, ResultRecord, RunRecord
from clineval.redaction import redact
from clineval.results.aggregate import MetricAggregate, aggregate, group_value
from clineval.results.result import EvalResult, unscored_reasons
from clineval.results.trials import TRIALS_KEY, TrialSummary, summarise_trials
from clineval.store.sqlite import RunStore

#: The numbers of a result, read without its score's text (explanations, details).
_NUMBER_COLUMNS = (
    "case_id, metric, status, value,"
    " CASE WHEN instr(score, '\"sub_scores\":{}') THEN NULL ELSE json_extract(score, '$.sub_scores') END"
)


class ResultNumbers(NamedTuple):
    """What :func:`~clineval.results.aggregate.aggregate` reads of a result (its ``score`` is itself)."""

    case_id: str
    metric: str
    status: str
    value: float | None
    sub_scores: dict[str, float | None]

    @property
    def score(self) -> ResultNumbers:
        return self


class StoredResult(EvalResult):
    """The result of a run kept in the store at ``store_path`` (see the module docstring)."""

    store_path: str

    def __init__(self, run: RunRecord, store_path: str, *, store: RunStore | None = None):
        # not the dataclass __init__: cases and results are read when first used
        self.run = run
        self.store_path = store_path
        self._aggregates = {}
        self._open_store = store
        self._cases: list[Case] | None = None
        self._results: list[ResultRecord] | None = None

    @contextmanager
    def _store(self) -> Iterator[RunStore]:
        if self._open_store is not None:
            yield self._open_store
            return
        with RunStore(self.store_path, readonly=True) as store:
            yield store

    @property
    def cases(self) -> list[Case]:
        """Every case with the agent's output (read from the store the first time)."""
        if self._cases is None:
            with self._store() as store:
                self._cases = store.merged_cases(self.run.id)
        return self._cases

    @cases.setter
    def cases(self, value: list[Case]) -> None:
        self._cases = value

    @property
    def results(self) -> list[ResultRecord]:
        """Every result (read from the store the first time)."""
        if self._results is None:
            with self._store() as store:
                self._results = store.load_results(self.run.id)
        return self._results

    @results.setter
    def results(self, value: list[ResultRecord]) -> None:
        self._results = value

    def cases_with_results(
        self, case_ids: Iterable[str]
    ) -> tuple[dict[str, Case], dict[tuple[str, str], ResultRecord]]:
        if self._cases is not None and self._results is not None:  # read already
            return super().cases_with_results(case_ids)
        ids = list(dict.fromkeys(case_ids))
        with self._store() as store:
            cases = store.cases_for(self.run.id, ids, merged=True)
            records = {(r.case_id, r.metric): r for r in store.results_for(self.run.id, ids)}
        return cases, records

    def iter_cases(self) -> Iterator[tuple[Case, list[ResultRecord]]]:
        """Each case (with the agent's output) and its results by metric, in dataset order."""
        with self._store() as store:
            for chunk in store.iter_cases(self.run.id, merged=True):
                results = store.results_for(self.run.id, [c.id for c in chunk])
                by_case: dict[str, list[ResultRecord]] = {}
                for record in results:
                    by_case.setdefault(record.case_id, []).append(record)
                for case in chunk:
                    yield case, by_case.get(case.id, [])

    def iter_case_scores(
        self, offset: int = 0, limit: int | None = None
    ) -> Iterator[list[tuple[str, dict[str, tuple[str, float | None]]]]]:
        """The cases from the ``offset``-th (0-based, dataset order), at most ``limit`` of them,
        a chunk at a time: each case id with its results' ``metric → (status, value)``."""
        if self._results is not None or self._cases is not None:
            yield from super().iter_case_scores(offset, limit)
            return
        left = -1 if limit is None else limit
        with self._store() as store:
            found = store.query(
                "SELECT rowid FROM cases WHERE run_id = ? ORDER BY rowid LIMIT 1 OFFSET ?",
                (self.run.id, offset),
            )
            if not found or left == 0:
                return
            after = int(found[0][0]) - 1
            while left != 0:
                size = store.stream_chunk if left < 0 else min(left, store.stream_chunk)
                rows = store.query(  # +run_id: scan the row ids (dataset order), as iter_case_rows
                    "SELECT rowid, case_id FROM cases WHERE rowid > ? AND +run_id = ? ORDER BY rowid LIMIT ?",
                    (after, self.run.id, size),
                )
                if not rows:
                    return
                after, left = int(rows[-1][0]), left - len(rows) if left > 0 else left
                ids = [str(row[1]) for row in rows]
                scores: dict[str, dict[str, tuple[str, float | None]]] = {i: {} for i in ids}
                for case_id, metric, status, value in store.result_rows_for(
                    self.run.id, ids, "case_id, metric, status, value"
                ):
                    scores[case_id][metric] = (status, value)
                yield [(i, scores[i]) for i in ids]

    def _numbers(self, store: RunStore) -> Iterator[ResultNumbers]:
        for case_id, metric, status, value, subs in store.iter_result_rows(self.run.id, _NUMBER_COLUMNS):
            sub_scores = json.loads(subs) if subs and subs != "{}" else {}
            yield ResultNumbers(case_id, metric, status, value, sub_scores)

    def aggregate(self, by: str | None = None) -> list[MetricAggregate]:
        if self._results is not None:
            return super().aggregate(by)
        if by not in self._aggregates:
            with self._store() as store:
                groups = None
                if by:
                    groups = {
                        case.id: group_value(case, by)
                        for chunk in store.iter_cases(self.run.id, merged=True)
                        for case in chunk
                    }
                numbers = cast("Iterator[ResultRecord]", self._numbers(store))
                self._aggregates[by] = aggregate(
                    numbers, by=by, metric_order=self.run.metrics, group_of=groups
                )
        return self._aggregates[by]

    def trial_summary(self) -> list[TrialSummary]:
        if self._results is not None or self.repeats == 1:
            return super().trial_summary()
        with self._store() as store:
            rows = store.query(
                f"SELECT metric, json_extract(score, '$.details.{TRIALS_KEY}.values') FROM results"
                " WHERE run_id = ?",
                (self.run.id,),
            )
        found = ((str(metric), json.loads(values) if values else None) for metric, values in rows)
        return summarise_trials(
            found,
            repeats=self.repeats,
            metric_order=self.run.metrics,
            lower_is_better=self.run.lower_is_better,
        )

    def unscored(self) -> dict[str, int]:
        if self._results is not None:
            return super().unscored()
        with self._store() as store:
            rows = store.query(
                "SELECT metric, COUNT(*) FROM results WHERE run_id = ? AND status = 'error' GROUP BY metric",
                (self.run.id,),
            )
        return {metric: int(n) for metric, n in rows}

    def unscored_reasons(self, limit: int = 10) -> list[tuple[str, int, list[str]]]:
        if self._results is not None:
            return super().unscored_reasons(limit)
        with self._store() as store:
            rows = store.query(
                "SELECT r.metric, json_extract(r.score, '$.error') FROM results r LEFT JOIN cases c"
                " ON c.run_id = r.run_id AND c.case_id = r.case_id"
                " WHERE r.run_id = ? AND r.status = 'error' ORDER BY c.idx, r.metric",
                (self.run.id,),
            )
        return unscored_reasons(((metric, redact(error or "")) for metric, error in rows), limit)

    def case_count(self) -> int:
        if self._cases is not None:
            return len(self._cases)
        with self._store() as store:
            return store.count_cases(self.run.id)

    def seen_metrics(self) -> tuple[list[str], dict[str, list[str]]]:
        if self._results is not None:
            return super().seen_metrics()
        with self._store() as store:
            names = store.query(
                "SELECT metric FROM results WHERE run_id = ? GROUP BY metric ORDER BY MIN(rowid)",
                (self.run.id,),
            )
            pairs = store.query(
                "SELECT r.metric, j.key FROM results r, json_each(r.score, '$.sub_scores') j"
                " WHERE r.run_id = ? GROUP BY r.metric, j.key ORDER BY MIN(r.rowid)",
                (self.run.id,),
            )
        metrics = list(dict.fromkeys([*self.run.metrics, *(str(row[0]) for row in names)]))
        subs: dict[str, list[str]] = {}
        for metric, key in pairs:
            subs.setdefault(str(metric), []).append(str(key))
        return metrics, subs

    def __eq__(self, other: Any) -> bool:
        return self is other

    __hash__ = None  # type: ignore[assignment]


def stored_cases(store: RunStore, run_id: str) -> GeneratedCases:
    """The run's cases with the agent's outputs, read a chunk at a time on each iteration.

    Read through a connection of their own (``store`` may be writing the cases of a new run
    from them, in one transaction); counted and fingerprinted by a first pass.
    """
    path = str(store.path)

    def read() -> Iterator[Case]:
        with RunStore(path, readonly=True) as reader:
            for chunk in reader.iter_cases(run_id, merged=True):
                yield from chunk

    return GeneratedCases(
        read=read,
        source=f"run {run_id}",
        n_cases=store.count_cases(run_id),
        fingerprint_value=fingerprint_cases(read()),
    )
