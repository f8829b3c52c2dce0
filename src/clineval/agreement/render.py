"""Terminal rendering of an agreement report with rich."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from clineval.agreement.prediction import PredictionReport, SplitScores, TargetReport
from clineval.agreement.report import AgreementReport, JoinSummary, RaterJoinSummary


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


def rater_join_lines(join: RaterJoinSummary, names: list[str]) -> list[Text]:
    """How the two annotators' labels were matched, in plain sentences."""
    same = join.first_source == join.second_source
    first = f"{join.first_source} ({join.first_rows} rows)"
    if same:
        where = f"columns {join.first_column!r} and {join.second_column!r} of {first}"
    else:
        where = f"{first} and {join.second_source} ({join.second_rows} rows)"
    lines = [Text(f"{join.matched} case(s) labelled by both in {where}; {join.used} used")]
    for count, examples, name in (
        (join.only_first, join.example_only_first, names[0]),
        (join.only_second, join.example_only_second, names[1]),
    ):
        if count:
            lines.append(
                Text(
                    f"{count} id(s) labelled by {name} only, left out" + _ids(examples, count), style="yellow"
                )
            )
    parts = [
        f"{n} empty for {name}"
        for n, name in ((join.empty_first, names[0]), (join.empty_second, names[1]))
        if n
    ]
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
    elif report.raters is not None:
        head.append("agreement between annotators", style="bold")
        head.append(f" {report.raters[0]} and {report.raters[1]}")
        head.append(f" · {report.kind}{' (inferred)' if report.kind_inferred else ''}")
    else:
        head.append("agreement", style="bold")
        head.append(f" · {report.kind}{' (inferred)' if report.kind_inferred else ''}")
    head.append(f" · {report.n} cases")
    parts.append(head)
    if join is not None:
        parts.extend(join_lines(join))
    if report.rater_join is not None and report.raters is not None:
        parts.extend(rater_join_lines(report.rater_join, report.raters))
    settings = []
    if report.label_order:
        settings.append("order " + " < ".join(report.label_order))
    if report.positive is not None:
        settings.append(f"positive class {report.positive!r}")
    if report.raters is not None and report.kind == "binary":
        settings.append(f"F1 with {report.raters[0]} as the reference (the same either way round)")
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


def _scores_table(title: str, model: SplitScores, baseline: SplitScores, baseline_class: str) -> Table:
    """Per class: the model's precision, recall and F1 beside the majority-class baseline's."""
    table = Table(header_style="bold", title=title, title_justify="left")
    table.add_column("class", no_wrap=True)
    for head in ("precision", "recall", "F1"):
        table.add_column(head, justify="right")
    table.add_column("support", justify="right")
    for head in ("precision", "recall", "F1"):
        table.add_column(f"baseline {head}", justify="right", style="dim")
    for row, base in zip(model.per_class, baseline.per_class, strict=True):
        table.add_row(
            Text(row.label),
            _num(row.precision),
            _num(row.recall),
            _num(row.f1),
            str(row.support),
            _num(base.precision),
            _num(base.recall),
            _num(base.f1),
        )
    table.add_section()
    table.add_row("macro F1", "", "", _num(model.macro_f1), str(model.n), "", "", _num(baseline.macro_f1))
    table.add_row("accuracy", "", "", _num(model.accuracy), "", "", "", _num(baseline.accuracy))
    table.caption = f"baseline: always {baseline_class!r} (the majority class of the training split)"
    table.caption_justify = "left"
    return table


def _split_line(target: TargetReport) -> Text:
    parts = []
    for name in ("train", "validation", "test"):
        counts = target.split_counts[name]
        shown = ", ".join(f"{label} {n}" for label, n in counts.items())
        parts.append(f"{name} {sum(counts.values())} ({shown})")
    return Text("splits: " + " · ".join(parts))


def prediction_renderable(report: PredictionReport) -> RenderableType:
    """Header, matching summary and, per target, the test and validation tables."""
    parts: list[RenderableType] = []
    head = Text()
    head.append("clinician ratings predicted from the triad", style="bold")
    head.append(f" · run {report.run_id} · {report.used} labelled case(s) used")
    parts.append(head)
    features = ", ".join(report.features)
    if report.scope:
        features += f" + scope of practice ({report.scope!r}, from the {report.scope_source})"
    parts.append(Text(f"features: {features}"))
    parts.append(
        Text(
            f"{report.model}; test {report.test_size:g} of each class reserved first, then validation "
            f"{report.val_size:g} of the rest (seed {report.seed})",
            style="dim",
        )
    )
    left_out = []
    if report.cases_without_label:
        left_out.append(
            f"{report.cases_without_label} run case(s) without a label"
            + _ids(report.example_cases_without_label, report.cases_without_label)
        )
    if report.unscored:
        by_metric = ", ".join(f"{metric} {n}" for metric, n in report.unscored.items())
        left_out.append(f"labelled cases a feature metric could not score: {by_metric}")
    if report.without_scope:
        left_out.append(f"{report.without_scope} labelled case(s) without a scope value")
    for line in left_out:
        parts.append(Text(line, style="yellow"))
    for target in report.targets:
        parts.append(Text(""))
        title = Text()
        title.append(target.target, style="bold")
        classes = ", ".join(f"{label} {n}" for label, n in target.class_counts.items())
        title.append(f" · {sum(target.class_counts.values())} cases ({classes})")
        if target.empty_labels:
            title.append(f" · {target.empty_labels} with an empty label left out", style="yellow")
        parts.append(title)
        parts.append(_split_line(target))
        grid = ", ".join(f"C={c.C:g}: {c.validation_macro_f1:.3f}" for c in target.candidates)
        parts.append(Text(f"chosen C={target.chosen_C:g} by validation macro F1 ({grid})"))
        parts.append(_scores_table("Test split", target.test, target.baseline_test, target.baseline_class))
        parts.append(
            _scores_table(
                "Validation split (used to choose C)",
                target.validation,
                target.baseline_validation,
                target.baseline_class,
            )
        )
        for note in target.notes:
            parts.append(Text(note, style="yellow"))
    return Group(*parts)
