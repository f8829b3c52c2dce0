"""Terminal rendering of an agreement report with rich."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from clineval.agreement.report import AgreementReport, JoinSummary


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _ids(ids: list[str], total: int) -> str:
    if not ids:
        return ""
    more = ", …" if total > len(ids) else ""
    return " (" + ", ".join(ids) + more + ")"


def join_lines(join: JoinSummary) -> list[Text]:
    """What was matched and what was left out, in plain sentences."""
    lines = [
        Text(
            f"{join.matched} of {join.run_cases} run cases have a label in {join.labels_source} "
            f"({join.label_rows} label rows); {join.used} used"
        )
    ]
    if join.cases_without_label:
        lines.append(
            Text(
                f"{join.cases_without_label} run case(s) without a label"
                + _ids(join.example_cases_without_label, join.cases_without_label),
                style="yellow",
            )
        )
    if join.labels_without_case:
        lines.append(
            Text(
                f"{join.labels_without_case} label(s) without a case in the run"
                + _ids(join.example_labels_without_case, join.labels_without_case),
                style="yellow",
            )
        )
    left_out = [
        (join.empty_labels, "with an empty label"),
        (join.unscored, "unscored by the metric"),
        (join.not_applicable, "not applicable"),
        (join.no_value, f"with no {join.score!r} value"),
    ]
    parts = [f"{n} {what}" for n, what in left_out if n]
    if parts:
        lines.append(Text("left out of the matched cases: " + ", ".join(parts), style="yellow"))
    return lines


def statistics_table(report: AgreementReport) -> Table:
    pct = f"{report.level * 100:g}% CI"
    table = Table(header_style="bold", title="Agreement", title_justify="left")
    table.add_column("statistic", no_wrap=True)
    table.add_column("value", justify="right")
    table.add_column(pct, justify="right", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("note")
    for stat in report.statistics:
        ci = (
            "–" if stat.ci_low is None or stat.ci_high is None else f"[{stat.ci_low:.3f}, {stat.ci_high:.3f}]"
        )
        table.add_row(
            Text(stat.title),
            _num(stat.value),
            ci,
            str(stat.n),
            Text(stat.note or "", style="dim"),
        )
    return table


def report_renderable(report: AgreementReport) -> RenderableType:
    """The header, matching summary, statistics table and notes of a report."""
    parts: list[RenderableType] = []
    head = Text()
    join = report.join
    if join is not None:
        score = "" if join.score == "value" else f" ({join.score})"
        head.append("agreement", style="bold")
        head.append(f" of {join.metric}{score} with human labels · run {join.run_id}")
        head.append(f" · {report.kind}{' (inferred)' if report.kind_inferred else ''}")
    else:
        head.append("agreement", style="bold")
        head.append(f" · {report.kind}{' (inferred)' if report.kind_inferred else ''}")
    head.append(f" · {report.n} cases")
    parts.append(head)
    if join is not None:
        parts.extend(join_lines(join))
    settings = []
    if report.label_order:
        settings.append("order " + " < ".join(report.label_order))
    if report.positive is not None:
        settings.append(f"positive class {report.positive!r}")
    if report.threshold is not None:
        settings.append(f"threshold {report.threshold:g} (a metric score at or above it predicts positive)")
    if settings:
        parts.append(Text(" · ".join(settings)))
    parts.append(statistics_table(report))
    for note in report.notes:
        parts.append(Text(note, style="yellow"))
    parts.append(
        Text(
            f"{report.level * 100:g}% percentile bootstrap intervals over {report.n_resamples} resamples "
            f"of cases (seed {report.seed})",
            style="dim",
        )
    )
    return Group(*parts)


def print_report(report: AgreementReport, console: Console | None = None) -> None:
    (console or Console()).print(report_renderable(report))
