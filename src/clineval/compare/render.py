"""Terminal rendering of a run comparison with rich."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from clineval.compare.comparison import CaseChange, Comparison, MetricComparison, RunSide, StatusChange

#: Cases listed per metric and per direction (and status changes per metric); the rest are counted.
MAX_CASES = 10

VERDICT_STYLE = {
    "regressed": "bold red",
    "improved": "bold green",
    "no significant change": "dim",
    "not comparable": "yellow",
}


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _p(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def _value(value: float) -> str:
    """A case's value, short: ``1``, ``0.5``, ``0.154``."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _run_line(label: str, run: RunSide) -> Text:
    name = f" '{run.name}'" if run.name else ""
    return Text.assemble(
        (f"{label} ", "bold"), f"run {run.id}{name} · {run.n_cases} cases from {run.dataset_source}"
    )


def metrics_table(comparison: Comparison) -> Table:
    """One row per metric: kind, paired n, means, Δ with its CI, the test, p, Holm's p and the verdict."""
    table = Table(header_style="bold", title="B vs A", title_justify="left")
    table.add_column("metric", no_wrap=True)
    table.add_column("kind")
    table.add_column("n", justify="right")
    table.add_column("A", justify="right")
    table.add_column("B", justify="right")
    table.add_column("Δ (B − A) [95% CI]", justify="right", no_wrap=True)
    table.add_column("test")
    table.add_column("p", justify="right")
    table.add_column("p Holm", justify="right")
    table.add_column("verdict", no_wrap=True)
    for item in comparison.metrics:
        name = Text(item.metric if "." not in item.metric else f"  {item.metric}")
        if item.lower_is_better:
            name.append(" ↓", style="dim")
        delta = _signed(item.delta)
        if item.ci_low is not None and item.ci_high is not None:
            delta += f" [{item.ci_low:+.3f}, {item.ci_high:+.3f}]"
        table.add_row(
            name,
            item.kind,
            str(item.n_paired),
            _num(item.mean_a),
            _num(item.mean_b),
            delta,
            item.test or "–",
            _p(item.p_value),
            _p(item.p_holm),
            Text(item.verdict, style=VERDICT_STYLE[item.verdict]),
        )
    return table


def _case_list(changes: Sequence[CaseChange], limit: int) -> str:
    shown = ", ".join(f"{c.case_id} ({_value(c.value_a)} → {_value(c.value_b)})" for c in changes[:limit])
    more = len(changes) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def practically_unchanged(item: MetricComparison) -> bool:
    """A continuous metric whose change is not significant and under 5 % of its mean.

    Its per-case changes are noise (a latency that moved by microseconds) and are not
    listed one by one; the JSON output keeps them.
    """
    if item.kind != "continuous" or item.verdict != "no significant change" or item.delta is None:
        return False
    scale = max(abs(item.mean_a or 0.0), abs(item.mean_b or 0.0))
    return scale == 0.0 or abs(item.delta) < 0.05 * scale


def case_lines(item: MetricComparison, limit: int = MAX_CASES) -> list[Text]:
    """The cases of one metric that got worse and better (at most ``limit`` of each)."""
    if not item.regressed_cases and not item.improved_cases:
        return []
    lines = [
        Text.assemble(
            (item.metric, "bold"),
            f" ({item.direction}): {len(item.regressed_cases)} case(s) worse, "
            f"{len(item.improved_cases)} better",
        )
    ]
    if practically_unchanged(item):
        lines[0].append(" (mean change under 5%, not significant: not listed; see --json)", style="dim")
        return lines
    if item.regressed_cases:
        lines.append(Text.assemble(("  worse: ", "red"), _case_list(item.regressed_cases, limit)))
    if item.improved_cases:
        lines.append(Text.assemble(("  better: ", "green"), _case_list(item.improved_cases, limit)))
    return lines


def status_lines(changes: Sequence[StatusChange], limit: int = MAX_CASES) -> list[Text]:
    """Cases whose status changed, at most ``limit`` per metric."""
    if not changes:
        return []
    lines = [Text(f"Status changes ({len(changes)}):", style="bold")]
    by_metric: dict[str, list[StatusChange]] = {}
    for change in changes:
        by_metric.setdefault(change.metric, []).append(change)
    for metric, items in by_metric.items():
        for change in items[:limit]:
            status = f"{change.status_a} → {change.status_b}"
            style = "red" if change.status_b == "error" else "green" if change.status_b == "scored" else ""
            line = Text.assemble(f"  {change.case_id} · {metric}: ", (status, style))
            if change.message:
                line.append(f": {change.message}", style="dim")
            lines.append(line)
        if len(items) > limit:
            lines.append(Text(f"  and {len(items) - limit} more for {metric}", style="dim"))
    return lines


def summary_line(comparison: Comparison) -> Text:
    regressed = [m.metric for m in comparison.regressed]
    improved = [m.metric for m in comparison.improved]
    if not regressed and not improved:
        return Text(
            f"No significant change (Holm-adjusted p < {comparison.alpha:g}) on "
            f"{len(comparison.metrics)} metric(s)."
        )
    parts: list[str | tuple[str, str]] = []
    if regressed:
        parts.append(("regressed: " + ", ".join(regressed), "bold red"))
    if improved:
        if parts:
            parts.append("; ")
        parts.append(("improved: " + ", ".join(improved), "bold green"))
    return Text.assemble("B vs A ", *parts, f" (Holm-adjusted p < {comparison.alpha:g})")


def comparison_renderable(comparison: Comparison, *, limit: int = MAX_CASES, cases: bool = True) -> Group:
    """Everything ``clineval compare`` prints, as one renderable."""
    parts: list[RenderableType] = [
        _run_line("A", comparison.run_a),
        _run_line("B", comparison.run_b),
        Text(
            f"{comparison.paired_cases} case(s) paired by id; alpha {comparison.alpha:g}, "
            f"p-values Holm-adjusted over {sum(m.p_value is not None for m in comparison.metrics)} metric(s)",
            style="dim",
        ),
    ]
    parts += [Text(f"warning: {w}", style="yellow") for w in comparison.warnings]
    parts.append(metrics_table(comparison))
    for item in comparison.metrics:
        if item.reason:
            parts.append(Text(f"{item.metric}: not comparable: {item.reason}", style="yellow"))
        if item.small_n:
            parts.append(Text(f"{item.metric}: too few cases to detect: {item.small_n}", style="yellow"))
    if cases:
        for item in comparison.metrics:
            parts += case_lines(item, limit)
        parts += status_lines(comparison.status_changes, limit)
    if comparison.metrics_only_in_a:
        parts.append(
            Text(f"only in A (not compared): {', '.join(comparison.metrics_only_in_a)}", style="dim")
        )
    if comparison.metrics_only_in_b:
        parts.append(
            Text(f"only in B (not compared): {', '.join(comparison.metrics_only_in_b)}", style="dim")
        )
    parts.append(summary_line(comparison))
    return Group(*parts)


def print_comparison(
    comparison: Comparison, console: Console, *, limit: int = MAX_CASES, cases: bool = True
) -> None:
    console.print(comparison_renderable(comparison, limit=limit, cases=cases), highlight=False)
