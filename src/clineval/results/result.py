"""The result of a run, as the Python API returns it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clineval.model import Case, ResultRecord, RunRecord
from clineval.results.aggregate import MetricAggregate, aggregate
from clineval.results.frames import long_frame, wide_frame
from clineval.results.trials import TrialSummary, repeats_of, summarise_trials, trial_values

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class EvalResult:
    """A finished (or resumed) run: its record, its cases with outputs, and every score."""

    run: RunRecord
    cases: list[Case]
    results: list[ResultRecord]
    store_path: str | None = None
    _aggregates: dict[str | None, list[MetricAggregate]] = field(default_factory=dict, repr=False)

    @property
    def run_id(self) -> str:
        return self.run.id

    @property
    def metrics(self) -> list[str]:
        return list(self.run.metrics)

    def to_pandas(self, *, long: bool = False) -> pd.DataFrame:
        """One row per case (default) or, with ``long=True``, one row per (case, metric)."""
        if long:
            return long_frame(self.results)
        return wide_frame(self.cases, self.results, self.run.metrics)

    def aggregate(self, by: str | None = None) -> list[MetricAggregate]:
        """Mean, std, counts, errors and 95 % CI per metric, grouped by ``by`` if given."""
        if by not in self._aggregates:
            self._aggregates[by] = aggregate(
                self.results, cases=self.cases, by=by, metric_order=self.run.metrics
            )
        return self._aggregates[by]

    def aggregate_frame(self, by: str | None = None) -> pd.DataFrame:
        import pandas as pd

        frame = pd.DataFrame([a.model_dump() for a in self.aggregate(by)])
        if by is None and "group" in frame.columns:
            frame = frame.drop(columns=["group"])
        return frame

    @property
    def summary_metrics(self) -> dict[str, float | int | None]:
        """Flat ``{"<metric>/mean": ..., "<metric>/std": ..., "row_count": n}``."""
        out: dict[str, float | int | None] = {"row_count": self.case_count()}
        for agg in self.aggregate():
            out[f"{agg.metric}/mean"] = agg.mean
            out[f"{agg.metric}/std"] = agg.std
        return out

    @property
    def repeats(self) -> int:
        """Trials per case (1: a run without repeats)."""
        return repeats_of(self.run)

    def trial_summary(self) -> list[TrialSummary]:
        """With repeats: per metric the within-case spread and, for pass/fail metrics, pass@k
        and pass^k (:mod:`clineval.results.trials`); empty for a run without repeats."""
        if self.repeats == 1:
            return []
        rows = ((r.metric, trial_values(r.score.details)) for r in self.results)
        return summarise_trials(
            rows,
            repeats=self.repeats,
            metric_order=self.run.metrics,
            lower_is_better=self.run.lower_is_better,
        )

    def unscored(self) -> dict[str, int]:
        """Per metric, how many cases have an error score (could not be scored)."""
        counts: Counter[str] = Counter(r.metric for r in self.results if r.score.status == "error")
        return dict(counts)

    def unscored_reasons(self, limit: int = 10) -> list[tuple[str, int, list[str]]]:
        """The most frequent reasons for error scores: (reason, count, metrics affected)."""
        errors = ((r.metric, r.score.error) for r in self.results if r.score.status == "error")
        return unscored_reasons(errors, limit)

    def case_count(self) -> int:
        """How many cases the run has."""
        return len(self.cases)

    def cases_with_results(
        self, case_ids: Iterable[str]
    ) -> tuple[dict[str, Case], dict[tuple[str, str], ResultRecord]]:
        """These cases (with the agent's output) by id, and their results by (case, metric):
        what a report shows of a few cases, without reading every case of a stored run."""
        wanted = set(case_ids)
        cases = {c.id: c for c in self.cases if c.id in wanted}
        records = {(r.case_id, r.metric): r for r in self.results if r.case_id in wanted}
        return cases, records

    def iter_case_scores(
        self, offset: int = 0, limit: int | None = None
    ) -> Iterator[list[tuple[str, dict[str, tuple[str, float | None]]]]]:
        """The cases from the ``offset``-th (0-based), at most ``limit`` of them, in chunks:
        each case id with its results' ``metric → (status, value)`` (the per-case table)."""
        by_case: dict[str, dict[str, tuple[str, float | None]]] = {}
        for r in self.results:
            by_case.setdefault(r.case_id, {})[r.metric] = (r.score.status, r.score.value)
        end = None if limit is None else offset + limit
        shown = [(case.id, by_case.get(case.id, {})) for case in self.cases[offset:end]]
        if shown:
            yield shown

    def seen_metrics(self) -> tuple[list[str], dict[str, list[str]]]:
        """The run's metrics and any other metric with results, and per metric the sub-scores
        its results have, in the order they first appear."""
        metrics = list(dict.fromkeys([*self.run.metrics, *(r.metric for r in self.results)]))
        subs: dict[str, list[str]] = {}
        for record in self.results:
            for sub in record.score.sub_scores:
                if sub not in subs.setdefault(record.metric, []):
                    subs[record.metric].append(sub)
        return metrics, subs

    def __repr__(self) -> str:
        return (
            f"EvalResult(run_id={self.run.id!r}, cases={self.case_count()}, metrics={self.run.metrics}, "
            f"status={self.run.status!r})"
        )


def unscored_reasons(
    errors: Iterable[tuple[str, str | None]], limit: int = 10
) -> list[tuple[str, int, list[str]]]:
    """The most frequent of ``(metric, error)`` reasons: (reason, count, metrics affected)."""
    counts: Counter[str] = Counter()
    metrics: dict[str, dict[str, None]] = {}
    for metric, error in errors:
        reason = _short(error or "")
        counts[reason] += 1
        metrics.setdefault(reason, {})[metric] = None
    return [(reason, n, list(metrics[reason])) for reason, n in counts.most_common(limit)]


def _short(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line if len(line) <= limit else line[: limit - 1] + "…"
