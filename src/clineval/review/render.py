"""The agreement of a run with its reviewers in the terminal (rich)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from clineval.review.agreement import ReviewAgreementReport
from clineval.review.rows import BASELINES, AgreementRow, BaselineFigure, Figure

if TYPE_CHECKING:
    from clineval.review.calibrate import ReviewCalibrationReport

_VERDICT_STYLE = {"beats": "green", "worse": "red", "unclear": "yellow"}


def fmt_value(value: float | None, digits: int = 2, *, sign: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def fmt_figure(figure: Figure | None, *, sign: bool = False) -> str:
    """``0.52 [0.31, 0.70]``; ``–`` when undefined."""
    if figure is None or figure.value is None:
        return "–"
    text = fmt_value(figure.value, sign=sign)
    if figure.ci_low is not None and figure.ci_high is not None:
        text += f" [{fmt_value(figure.ci_low, sign=sign)}, {fmt_value(figure.ci_high, sign=sign)}]"
    return text


def baseline_cell(comparison: BaselineFigure | None) -> Text:
    """``0.61 · Δ +0.19 [0.02, 0.35] beats``."""
    if comparison is None:
        return Text("–")
    text = Text(f"{fmt_value(comparison.value.value)} · Δ {fmt_figure(comparison.difference, sign=True)} ")
    verdict = comparison.verdict if comparison.difference.value is not None else "unclear"
    text.append(verdict, style=_VERDICT_STYLE[verdict])
    return text


def row_heading(row: AgreementRow) -> str:
    what = f"{row.title}"
    if row.judge:
        what += f" (judge {row.judge})"
    unit = "case(s)" if row.level == "case" else f"item(s) from {row.cases} case(s)"
    return f"{what}: {row.n} {unit}"


def reviewer_line(row: AgreementRow) -> str | None:
    if not row.reviewers:
        if row.reviewer_pairs:
            return f"reviewers with each other: {row.reviewer_pairs} doubly reviewed, too few for a figure"
        return "reviewers with each other: no item has two reviewers yet (plan with --reviewers-per-case 2)"
    parts = [f"{f.title} {fmt_figure(f)}" for f in row.reviewers]
    unit = "case(s)" if row.level == "case" else "item(s)"
    return (
        f"reviewers with each other (the ceiling), {row.reviewer_pairs} {unit} reviewed twice: "
        + "; ".join(parts)
    )


def width_line(row: AgreementRow) -> str | None:
    """How precise the row's headline figure is so far, and about how many cases would
    narrow its interval to 0.2 (docs/reviewing.md#how-many-cases)."""
    from clineval.review.sample_size import width_note

    figure = row.get(row.headline) if row.headline else None
    if figure is None or figure.value is None:
        return None
    items = {"fact": "facts", "importance": "facts", "sentence": "sentences", "turn": "turns"}.get(
        row.level, "cases"
    )
    width = figure.width
    if width is not None and width < 1e-9:  # every resample alike: no usable interval yet
        width = None
    return width_note(width, row.cases, row.n, items=items, statistic=figure.title)


def row_table(row: AgreementRow) -> Table:
    table = Table(header_style="bold", title=row_heading(row), title_justify="left", title_style="bold")
    table.add_column("statistic", no_wrap=True)
    table.add_column("metric [95% CI]", no_wrap=True)
    for name in BASELINES.values():
        table.add_column(f"{name} · Δ metric − it [95% CI]")
    for figure in row.statistics:
        cells: list[str | Text] = [figure.title, fmt_figure(figure)]
        for key in BASELINES:
            cells.append(baseline_cell(row.baseline(key, figure.name)) if row.baselines else Text("–"))
        table.add_row(*cells)
    return table


def figure_notes(row: AgreementRow) -> list[str]:
    """``Spearman ρ: from 1993/2000 resamples ...``: the notes of the row's figures, one each."""
    return [f"{f.title}: {f.note}" for f in row.statistics if f.note]


def row_renderable(row: AgreementRow) -> RenderableType:
    parts: list[RenderableType] = []
    if row.statistics:
        parts.append(row_table(row))
    else:
        parts.append(Text(row_heading(row), style="bold"))
    for note in figure_notes(row):
        parts.append(Text("  " + note, style="dim"))
    for line in (reviewer_line(row), width_line(row), *row.notes):
        if line:
            parts.append(Text("  " + line, style="dim" if line in row.notes else ""))
    return Group(*parts)


#: Where `clineval view` listens unless told otherwise (the disagreements' links point there).
VIEW_ROOT = "http://127.0.0.1:8765"


def item_words(item: str, scale: str, metric: str | None) -> str:
    """``reference fact 5 (tbfact)``, ``sentence 2 (faithfulness)``, ``turn 3``, ``case (factuality)``."""
    parts = item.split("/")
    if parts[0] == "fact" and len(parts) >= 4:
        side = "response" if parts[-2] == "precision" else "reference"
        words = f"{side} fact {parts[-1]} ({'/'.join(parts[1:-2])})"
    elif parts[0] == "sentence" and len(parts) >= 3:
        words = f"sentence {parts[-1]} ({'/'.join(parts[1:-1])})"
    elif parts[0] == "turn" and len(parts) == 2:
        words = f"turn {parts[1]}"
    else:
        return f"case ({scale}, {metric})" if metric else f"case ({scale})"
    return words if scale in ("verdict", "right_agent") else f"{words}, {scale}"


def disagreements_table(report: ReviewAgreementReport, limit: int) -> Table | None:
    if not report.disagreements or limit <= 0:
        return None
    shown = report.disagreements[:limit]
    more = report.disagreement_count - len(shown)
    title = f"Disagreements ({report.disagreement_count}; the most serious first"
    title += f", {len(shown)} shown: --disagreements N for more)" if more > 0 else ")"
    table = Table(header_style="bold", title=title, title_justify="left", title_style="bold")
    table.add_column("case", no_wrap=True)
    table.add_column("what", overflow="fold")
    table.add_column("text", ratio=3, overflow="fold")
    table.add_column("reviewers say", overflow="fold")
    table.add_column("metric says", overflow="fold")
    for d in shown:
        reviewers = ", ".join(f"{who}: {verdict}" for who, verdict in d.reviewers.items())
        text = d.text if len(d.text) <= 160 else d.text[:159] + "…"
        case = Text(d.case_id, style=f"link {VIEW_ROOT}{d.link}")
        table.add_row(case, item_words(d.item, d.scale, d.metric), text, reviewers, d.metric_says)
    return table


def disagreement_hint(report: ReviewAgreementReport) -> Text | None:
    if not report.disagreements:
        return None
    first = report.disagreements[0]
    return Text(
        f"Each case opens in clineval view at its item, e.g. {VIEW_ROOT}{first.link} (a case id above is "
        "that link in terminals that show links; --json lists every link)",
        style="dim",
    )


def header_lines(report: ReviewAgreementReport) -> list[Text]:
    who = ", ".join(report.reviewers) or "none"
    only = f" (only {report.reviewer_filter})" if report.reviewer_filter else ""
    lines = [
        Text(f"Agreement with reviewers · run {report.run_id}", style="bold"),
        Text(
            f"{len(report.reviewers)} reviewer(s){only}: {who} · {report.cases_reviewed} case(s) reviewed, "
            f"{report.verdicts} verdict(s)"
        ),
        Text(
            f"95 % intervals: percentile bootstrap over cases ({report.n_resamples:,} resamples, seed "
            f"{report.seed}); baselines' thresholds chosen on the other half of the cases; several "
            "reviewers of one item: their majority (a tie: the first to answer)",
            style="dim",
        ),
    ]
    return lines


def report_renderable(report: ReviewAgreementReport, *, disagreements: int = 20) -> RenderableType:
    parts: list[RenderableType] = [*header_lines(report)]
    for row in report.rows:
        parts.append(Text(""))
        parts.append(row_renderable(row))
    table = disagreements_table(report, disagreements)
    if table is not None:
        parts.extend([Text(""), table])
        hint = disagreement_hint(report)
        if hint is not None:
            parts.append(hint)
    for note in report.notes:
        parts.append(Text(note, style="yellow"))
    return Group(*parts)


def summary_rows(report: ReviewAgreementReport) -> Sequence[AgreementRow]:
    return [r for r in report.rows if r.statistics]


# --------------------------------------------------------------------------- judges against the reviewers

#: The statistics shown per comparison in ``clineval calibrate --reviews`` (the first is the headline).
CALIBRATION_STATISTICS = {
    "fact": ("cohen_kappa2", "roc_auc", "cohen_kappa3", "accuracy"),
    "sentence": ("cohen_kappa2", "roc_auc", "accuracy"),
    "case": ("spearman", "roc_auc", "cohen_kappa2"),
}


def _reviewers_figure(row: AgreementRow, statistic: str) -> Figure | None:
    return row.reviewer(statistic)


def calibration_table(report: ReviewCalibrationReport, key: str) -> Table | None:
    rows = [(j, j.row(key)) for j in report.judges]
    present = [(j, r) for j, r in rows if r is not None]
    if not present:
        return None
    first_row = present[0][1]
    statistics = [s for s in CALIBRATION_STATISTICS.get(first_row.level, ()) if first_row.get(s) is not None]
    title = f"{first_row.title}: {first_row.n} " + (
        "case(s)" if first_row.level == "case" else f"item(s) from {first_row.cases} case(s)"
    )
    table = Table(header_style="bold", title=title, title_justify="left", title_style="bold")
    table.add_column("statistic", no_wrap=True)
    number = {j.spec: i for i, j in enumerate(report.judges, start=1)}
    for judge, _ in present:
        table.add_column(f"({number[judge.spec]}) {judge.label}")
    for judge, _ in present[1:]:
        table.add_column(f"Δ ({number[judge.spec]}) − ({number[present[0][0].spec]})")
    for name in BASELINES.values():
        table.add_column(name)
    table.add_column("reviewers with each other")
    for statistic in statistics:
        cells: list[str | Text] = [first_row.get(statistic).title]  # type: ignore[union-attr]
        for _, row in present:
            cells.append(fmt_figure(row.get(statistic)))
        for judge, _ in present[1:]:
            diff = report.difference(key, statistic, judge.spec)
            cells.append(fmt_figure(diff.difference, sign=True) if diff is not None else "–")
        for baseline in BASELINES:
            comparison = first_row.baseline(baseline, statistic)
            cells.append(fmt_value(comparison.value.value) if comparison is not None else "–")
        cells.append(fmt_figure(_reviewers_figure(first_row, statistic)))
        table.add_row(*cells)
    return table


def _baseline_summary(report: ReviewCalibrationReport) -> list[str]:
    lines = []
    for judge in report.judges:
        parts = []
        for key, name in BASELINES.items():
            verdicts = [b.verdict for row in judge.rows for b in row.baselines if b.baseline == key]
            if verdicts:
                parts.append(f"{name} on {verdicts.count('beats')} of {len(verdicts)} figures")
        if parts:
            lines.append(
                f"{judge.label}: beats "
                + " and ".join(parts)
                + " (paired 95 % interval of the difference above 0)"
            )
    return lines


def calibration_renderable(report: ReviewCalibrationReport, *, store_suffix: str = "") -> RenderableType:
    who = ", ".join(report.reviewers) or "none"
    only = f" (only {report.reviewer_filter})" if report.reviewer_filter else ""
    parts: list[RenderableType] = [
        Text(f"Judges against the reviewers of run {report.run_id}", style="bold"),
        Text(f"{len(report.reviewers)} reviewer(s){only}: {who} · {report.cases_reviewed} case(s) reviewed"),
        Text(
            "Every judge on the same items; 95 % intervals: bootstrap over cases (2,000 resamples, seed 0); "
            "Δ: paired interval of the difference from the first judge",
            style="dim",
        ),
    ]
    for i, judge in enumerate(report.judges, start=1):
        parts.append(
            Text(f"({i}) {judge.label}" + (f": --judge {judge.spec}" if judge.spec != judge.label else ""))
        )
    keys = list(dict.fromkeys(row.key for judge in report.judges for row in judge.rows))
    for key in keys:
        table = calibration_table(report, key)
        if table is not None:
            parts.extend([Text(""), table])
    parts.append(Text(""))
    for line in _baseline_summary(report):
        parts.append(Text(line))
    for judge in report.judges:
        extra = f", {judge.unscored} unscored" if judge.unscored else ""
        took = f" in {judge.seconds:g} s" if judge.seconds is not None else ""
        if judge.run_id:
            parts.append(
                Text(
                    f"{judge.spec}: stored as run {judge.run_id}{took}{extra} "
                    f"(clineval export {judge.run_id}{store_suffix})",
                    style="dim",
                )
            )
    for note in report.notes:
        parts.append(Text(note, style="yellow"))
    return Group(*parts)
