"""The Agreement page of a run (``/runs/RUN/agreement``): the run's metrics and judge against
its stored reviews, as ``clineval agreement RUN --reviews`` prints them.

The report is :func:`clineval.review.agreement.agreement_from_store` on the viewer's
read-only store, computed once per version of the run's results and reviews; every figure
is formatted by the functions the terminal report uses (:mod:`clineval.review.render`), so
the page and the command show the same numbers. ``?reviewer=NAME`` keeps one reviewer's
verdicts. A blind review hides this page (it shows many cases' scores).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from clineval.errors import ClinevalError
from clineval.model import RunRecord
from clineval.review.agreement import ReviewAgreementReport, agreement_from_store
from clineval.review.render import fmt_figure, fmt_value, item_words, reviewer_line, width_line
from clineval.review.rows import BASELINES, AgreementRow
from clineval.store.reviews import ReviewStore
from clineval.viewer.data import ViewerData


@dataclass
class StatRow:
    title: str
    metric: str
    baselines: list[tuple[str, str, str]]
    """(value, Δ [CI], verdict) per baseline, in the order of :data:`BASELINES`."""
    reviewers: str
    note: str


@dataclass
class RowView:
    """One comparison, as the page shows it."""

    row: AgreementRow
    anchor: str
    heading: str
    stats: list[StatRow] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def _row_view(row: AgreementRow) -> RowView:
    unit = "case(s)" if row.level == "case" else f"item(s) from {row.cases} case(s)"
    heading = row.title + (f" (judge {row.judge})" if row.judge else "") + f": {row.n} {unit}"
    view = RowView(row=row, anchor="row-" + row.key.replace("/", "-"), heading=heading)
    for figure in row.statistics:
        cells: list[tuple[str, str, str]] = []
        for key in BASELINES:
            comparison = row.baseline(key, figure.name)
            if comparison is None:
                cells.append(("–", "", ""))
            else:
                verdict = comparison.verdict if comparison.difference.value is not None else "unclear"
                cells.append(
                    (fmt_value(comparison.value.value), fmt_figure(comparison.difference, sign=True), verdict)
                )
        view.stats.append(
            StatRow(
                title=figure.title,
                metric=fmt_figure(figure),
                baselines=cells,
                reviewers=fmt_figure(row.reviewer(figure.name)),
                note=figure.note or "",
            )
        )
    view.lines = [line for line in (reviewer_line(row), width_line(row)) if line]
    return view


class AgreementPages:
    """Computes (and keeps) the agreement report of a run for the page."""

    def __init__(self, data: ViewerData):
        self.data = data

    def _reviews_version(self, run_id: str) -> tuple[Any, ...]:
        if not self.data.store.has_table("reviews"):
            return (0, 0)
        return tuple(
            self.data.store.query(
                "SELECT COUNT(*), MAX(seq), MAX(undone_at) FROM reviews WHERE run_id = ?", (run_id,)
            )[0]
        )

    def report(self, record: RunRecord, reviewer: str | None) -> ReviewAgreementReport:
        key = (
            "agreement",
            record.id,
            reviewer,
            self.data.results_version(record.id),
            self._reviews_version(record.id),
        )
        report = self.data.cached(
            key, lambda: agreement_from_store(self.data.store, record, reviewer=reviewer)
        )
        return cast("ReviewAgreementReport", report)

    def context(self, run_ref: str, reviewer: str | None) -> dict[str, Any]:
        record = self.data.get_run(run_ref)
        error = None
        try:
            report = self.report(record, reviewer)
        except ClinevalError as exc:  # e.g. ?reviewer= someone who gave no verdict
            error, report = str(exc), self.report(record, None)
        reviewers = ReviewStore(self.data.store).reviewers(record.id)
        return {
            "run": record,
            "report": report,
            "rows": [_row_view(r) for r in report.rows],
            "baseline_names": list(BASELINES.values()),
            "disagreements": [
                (
                    d,
                    item_words(d.item, d.scale, d.metric),
                    ", ".join(f"{w}: {v}" for w, v in d.reviewers.items()),
                )
                for d in report.disagreements
            ],
            "all_reviewers": reviewers,
            "chosen_reviewer": reviewer if error is None else None,
            "error": error,
        }

    def has_reviews(self, run_id: str) -> int:
        """How many current verdicts the run has (0 without any, or without review tables)."""
        return ReviewStore(self.data.store).runs_with_reviews().get(run_id, 0)
