"""Terminal rendering of runs and results with rich."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Sequence, Set
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.table import Table

from clineval.model import RunRecord
from clineval.redaction import redact
from clineval.results.aggregate import MISSING_GROUP, MetricAggregate
from clineval.results.models import models_label
from clineval.results.result import EvalResult
from clineval.results.trials import TrialSummary

if TYPE_CHECKING:
    from clineval.results.trends import TrendPoint, Trends


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "–"
    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")


#: Sub-score rows shown per metric in the results table; the rest are counted in a note
#: (every sub-score stays in the store, ``clineval show --all-sub-scores`` and exports).
SUB_SCORE_ROWS = 8

#: Rows of the per-case table printed at once (one table; more are printed as one long table).
_CASE_CHUNK = 500
#: Rows of the per-case table shown unless asked for more (``clineval show --cases --limit``).
CASE_ROWS = 100


def limit_sub_scores(
    aggregates: Sequence[MetricAggregate], limit: int | None = SUB_SCORE_ROWS
) -> tuple[list[MetricAggregate], int]:
    """The aggregates with at most ``limit`` sub-score rows per metric, and how many were left out."""
    if limit is None:
        return list(aggregates), 0
    kept: list[MetricAggregate] = []
    shown: dict[tuple[str, str | None], int] = {}
    hidden = 0
    for agg in aggregates:
        if "." in agg.metric:
            key = (agg.metric.split(".", 1)[0], agg.group)
            if shown.get(key, 0) >= limit:
                hidden += 1
                continue
            shown[key] = shown.get(key, 0) + 1
        kept.append(agg)
    return kept, hidden


def aggregates_table(
    aggregates: Sequence[MetricAggregate],
    *,
    title: str | None = None,
    by: str | None = None,
    width: int | None = None,
) -> Table:
    """One row per metric and sub-score: scored cases, mean, std, range (min–max), 95 % CI,
    unscored and not-applicable counts.

    With ``width`` (the console's), a table that would not fit leaves out the ``std``
    column, then the ``min–max`` one, as far as needed, and says so in its caption,
    rather than cutting numbers short (the mean and the interval always stay).
    """
    header = [
        "metric",
        *([by] if by else []),
        "scored",
        "mean",
        "std",
        "min–max",
        "95% CI",
        "unscored",
        "n/a",
    ]
    rows: list[list[str]] = []
    for agg in aggregates:
        ci = "–" if agg.ci_low is None else f"[{agg.ci_low:.3f}, {agg.ci_high:.3f}]"
        name = agg.metric if "." not in agg.metric else f"  {agg.metric}"
        rows.append(
            [
                name,
                *([agg.group or ""] if by else []),
                str(agg.scored),
                _num(agg.mean),
                _num(agg.std),
                score_range(agg),
                ci,
                str(agg.errors),
                str(agg.not_applicable or 0),
            ]
        )
    dropped: list[str] = []
    for optional in ("std", "min–max"):
        if width is None or _table_width(header, rows) <= width:
            break
        index = header.index(optional)
        header.pop(index)
        for row in rows:
            row.pop(index)
        dropped.append(optional)
    table = Table(title=title, title_justify="left", header_style="bold")
    for name in header:
        if name in ("metric", by):
            table.add_column(name, no_wrap=True)
        else:
            table.add_column(name, justify="right", no_wrap=name == "min–max")
    unscored_at = header.index("unscored")
    for row in rows:
        if row[unscored_at] != "0":
            row[unscored_at] = f"[yellow]{row[unscored_at]}[/]"
        table.add_row(*row)
    if dropped:
        table.caption = (
            f"{' and '.join(dropped)} left out to fit {width} columns "
            "(a wider terminal, COLUMNS=140 or output to a file shows them)"
        )
        table.caption_justify = "left"
    return table


def _table_width(header: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    """Columns a rich table with these cells takes: the widest cell of each column, one space
    of padding either side and one rule between and around columns."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    return sum(widths) + 3 * len(widths) + 1


def score_range(agg: MetricAggregate, digits: int = 3) -> str:
    """The lowest and highest score, ``min–max`` (one number when they are equal, ``–`` with none)."""
    if agg.min is None or agg.max is None:
        return "–"
    if agg.min == agg.max:
        return _num(agg.min, digits)
    return f"{_num(agg.min, digits)}–{_num(agg.max, digits)}"


def judge_notice(run: RunRecord) -> str | None:
    """What every run scored by the offline judge must say about it (not said when no
    metric of the run uses the judge)."""
    if (run.judge or {}).get("name") != "offline" or (run.judge or {}).get("used") is False:
        return None
    from clineval.judges.offline import OFFLINE_NOTICE

    return OFFLINE_NOTICE


def run_header(run: RunRecord, store_path: str | None = None) -> str:
    parts = [f"[bold]run[/] {run.id}"]
    if run.name:
        parts.append(f"'{run.name}'")
    parts.append(f"{run.dataset.n_cases} cases from {run.dataset.source}")
    parts.append(f"judge {models_label(run)}")
    parts.append(f"status {run.status}")
    return " · ".join(parts)


def no_such_group_field(by: str, run: RunRecord) -> str:
    """The warning when no case of ``run`` has the metadata field ``by`` (a misspelt
    ``--group-by``/``group_by:`` would otherwise show one "(missing)" group, silently)."""
    known = run.dataset.metadata_columns
    listed = f" (columns kept as metadata: {', '.join(known)})" if known else ""
    return (
        f"[yellow]warning[/]: no case has the metadata field {escape(repr(by))}, so every case is "
        f"in {MISSING_GROUP}{escape(listed)}"
    )


def print_result(
    result: EvalResult,
    console: Console,
    *,
    by: str | None = None,
    cases: bool = False,
    all_sub_scores: bool = False,
    extra: RenderableType | None = None,
    case_offset: int = 0,
    case_limit: int | None = CASE_ROWS,
) -> None:
    """The run header, the per-case table (with ``cases``: ``case_limit`` cases from the
    ``case_offset``-th, streamed), the aggregate table, ``extra`` (e.g. a suite's case table),
    unscored reasons and where the data is."""
    run = result.run
    console.print(run_header(run))
    notice = judge_notice(run)
    if notice:
        console.print(f"[dim]{notice}[/]", highlight=False)
    if run.dataset.metadata_columns:
        console.print(
            f"[dim]columns kept as metadata (not case fields): {', '.join(run.dataset.metadata_columns)}[/]",
            highlight=False,
        )
    if cases:
        print_cases(
            result, console, offset=case_offset, limit=case_limit, more_hint=f"clineval show {run.id} --cases"
        )
    rows, hidden = limit_sub_scores(result.aggregate(), None if all_sub_scores else SUB_SCORE_ROWS)
    console.print(aggregates_table(rows, title="Results", width=console.width))
    if hidden:
        console.print(
            f"[dim]{hidden} more sub-score row(s) not shown: clineval show {run.id} --all-sub-scores[/]",
            highlight=False,
        )
    if result.repeats > 1:
        console.print(trials_table(result.trial_summary(), result.repeats))
    if by:
        grouped = [a for a in result.aggregate(by) if "." not in a.metric]
        console.print(aggregates_table(grouped, title=f"By {by}", by=by, width=console.width))
        if grouped and all(a.group == MISSING_GROUP for a in grouped):
            console.print(no_such_group_field(by, run), highlight=False, soft_wrap=True)
    if extra is not None:
        console.print(extra)
    total_unscored = sum(result.unscored().values())
    if total_unscored:
        console.print(
            f"[yellow]{total_unscored} score(s) could not be computed (unscored, never counted as 0):[/]"
        )
        for reason, count, metrics in result.unscored_reasons():
            console.print(f"  {count} × {reason} [dim]({', '.join(metrics)})[/]", highlight=False)
    usage = run.usage
    if usage.calls or usage.cached:
        console.print(
            f"judge: {usage.calls} call(s), {usage.cached} from cache, {usage.reasks} re-ask(s), "
            f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens"
        )
    if run.status == "failed" and run.error:
        console.print(f"[red]run failed:[/] {run.error}")
    where = (
        f" --store {result.store_path}"
        if result.store_path and not result.store_path.endswith(".clineval/clineval.db")
        else ""
    )
    console.print(
        f"Saved as run [bold]{run.id}[/]. Per-case scores: clineval show {run.id}{where} --cases; "
        f"export: clineval export {run.id}{where} --format csv"
    )


def trials_table(summaries: Sequence[TrialSummary], repeats: int) -> Table:
    """With repeats: per metric the within-case spread, and pass@k / pass^k rows of pass/fail metrics."""
    table = Table(
        title=f"Repeated trials ({repeats} per case; the results above are over case means)",
        title_justify="left",
        header_style="bold",
    )
    for name in ("metric", "cases", "spread (mean within-case std)", "k", "pass@k", "pass^k"):
        table.add_column(name, justify="left" if name == "metric" else "right", no_wrap=name == "metric")
    for item in summaries:
        table.add_row(item.metric, str(item.cases), _num(item.spread), "", "", "")
        for k in _shown_ks(sorted(item.pass_at)):
            table.add_row("", "", "", str(k), _num(item.pass_at[k]), _num(item.pass_hat[k]))
    return table


def _shown_ks(ks: Sequence[int]) -> list[int]:
    """Every k up to 10; beyond, 1, 2, 3, 5, 10, 20, 50 and the largest."""
    if len(ks) <= 10:
        return list(ks)
    return [k for k in ks if k in (1, 2, 3, 5, 10, 20, 50) or k == ks[-1]]


def _cell(found: tuple[str, float | None] | None) -> str:
    if found is None:
        return ""
    status, value = found
    if status == "error":
        return "[yellow]unscored[/]"
    if status == "not_applicable":
        return "n/a"
    return _num(value)


def _cases_chunk(
    result: EvalResult, rows: Sequence[tuple[str, dict[str, tuple[str, float | None]]]], *, first: bool
) -> Table:
    table = Table(title="Cases" if first else None, title_justify="left", header_style="bold")
    table.add_column("case", no_wrap=True)
    for metric in result.metrics:
        table.add_column(metric, justify="right")
    for case_id, scores in rows:
        table.add_row(escape(case_id), *[_cell(scores.get(m)) for m in result.metrics])
    return table


def cases_table(result: EvalResult, *, offset: int = 0, limit: int | None = None) -> Table:
    """The per-case table (a score per metric) of ``limit`` cases from the ``offset``-th, in one table."""
    rows = [row for chunk in result.iter_case_scores(offset, limit) for row in chunk]
    return _cases_chunk(result, rows, first=True)


def print_cases(
    result: EvalResult,
    console: Console,
    *,
    offset: int = 0,
    limit: int | None = CASE_ROWS,
    more_hint: str | None = None,
) -> None:
    """The per-case table, streamed: ``limit`` cases (``None``: every one) from the ``offset``-th.

    Rows are read and printed a chunk at a time (a 100,000-case run is never held). One
    chunk is one table as before; more are printed as one long table without outer edges,
    a chunk at a time with the column widths of the first. A line then says which cases
    were shown of how many and how to see the others (``more_hint``: the command).
    """
    total = result.case_count()
    widths: list[int] = []
    shown = 0
    rows = (row for part in result.iter_case_scores(offset, limit) for row in part)
    chunks = iter(lambda: list(itertools.islice(rows, _CASE_CHUNK)), [])
    chunk = next(chunks, None)
    while chunk is not None:
        following = next(chunks, None)  # one chunk ahead: is the table one chunk or more?
        table = _cases_chunk(result, chunk, first=not shown)
        if not widths:
            widths = [max(len(m), 8) for m in ["case", *result.metrics]]
            widths[0] = max(len(case_id) for case_id, _ in chunk)
        if shown or following is not None:
            table.show_edge = False
            table.show_header = not shown
            for column, width in zip(table.columns, widths, strict=True):
                column.min_width = width
        console.print(table)
        shown += len(chunk)
        chunk = following
    if not shown and total:
        console.print(
            f"[dim]no case from --offset {offset}: the run has {total:,} case(s)[/]", highlight=False
        )
    elif shown < total:
        after = offset + shown
        hint = ""
        if more_hint and after < total:
            hint = f"; {more_hint} --offset {after} for the next, --limit 0 for every case"
        shown_text = f"cases {offset + 1:,}–{after:,} of {total:,} shown{hint}"
        console.print(f"[dim]{shown_text} (or clineval export --format csv)[/]", highlight=False)


#: Tags shown first in the runs table, when a run has them.
LEADING_TAGS = ("suite", "pipeline")


def _ordered_tags(tags: dict[str, str]) -> list[tuple[str, str]]:
    first = [(k, tags[k]) for k in LEADING_TAGS if k in tags]
    return first + [(k, v) for k, v in tags.items() if k not in LEADING_TAGS]


def runs_table(runs: Sequence[RunRecord], stopped: Set[str] = frozenset()) -> Table:
    """The runs, a row each; ids in ``stopped`` are runs marked running whose process is gone."""
    table = Table(header_style="bold")
    for name in ("run", "created", "status", "name", "tags", "cases", "metrics", "judge", "commit"):
        table.add_column(name, no_wrap=name in ("run", "created", "status", "commit"))
    for run in runs:
        # masked here too: runs stored before masking existed may hold a secret in a tag
        tags = redact(", ".join(f"{k}={v}" for k, v in _ordered_tags(run.tags)))
        commit = (run.git.commit[:7] + ("*" if run.git.dirty else "")) if run.git else "–"
        status = {"completed": "[green]completed[/]", "failed": "[red]failed[/]"}.get(run.status, run.status)
        if run.id in stopped:
            status = "[yellow]stopped[/]"
        metrics = ", ".join(run.metrics)
        if len(metrics) > 48:
            metrics = metrics[:47] + "…"
        table.add_row(
            run.id,
            _when(run.created_at),
            status,
            escape(redact(run.name or "")),
            f"[dim]{escape(tags)}[/]" if tags else "",
            str(run.dataset.n_cases),
            metrics,
            escape(models_label(run)),
            commit,
        )
    return table


def _mean_ci(point: TrendPoint | None) -> str:
    if point is None or point.mean is None:
        return "–"
    if point.ci_low is None or point.ci_high is None:
        return _num(point.mean)
    return f"{_num(point.mean)} [{_num(point.ci_low)}, {_num(point.ci_high)}]"


def print_trends(trends: Trends, console: Console) -> None:
    """``clineval show --by day|hour``: the means per period (overall, then by agent) with
    their 95 % intervals and conversations, then the worst conversations of each period."""
    if not trends.runs:
        console.print(
            "No source=traces run in this store: score traffic with `clineval traces score`.",
            highlight=False,
            soft_wrap=True,
        )
        return
    if not trends.periods:
        console.print(
            f"{', '.join(trends.runs)}: no conversation start time in its cases (metadata 'started'), "
            f"so nothing to show by {trends.by}; runs of `clineval traces score` have them.",
            highlight=False,
            soft_wrap=True,
        )
        return
    label = trends.by
    table = Table(title=f"Traffic by {label}: mean [95% CI]", title_justify="left")
    table.add_column(label)
    table.add_column("agent")
    table.add_column("conversations", justify="right")
    for metric in trends.metrics:
        table.add_column(escape(metric), justify="right")
    for period in trends.periods:
        for agent in (None, *trends.agents):
            points = [trends.point(period, m, agent) for m in trends.metrics]
            if agent is not None and not any(points):
                continue
            count = next((p.conversations for p in points if p), trends.conversations.get(period, 0))
            table.add_row(
                period if agent is None else "",
                "all" if agent is None else escape(redact(agent)),
                str(count),
                *(_mean_ci(p) for p in points),
                end_section=agent == trends.agents[-1] if trends.agents else True,
            )
    console.print(table)
    if trends.worst:
        worst = Table(title=f"Worst conversations by {trends.main_metric}", title_justify="left")
        for name in (label, "score", "case", "agent", "run"):
            worst.add_column(name, justify="right" if name == "score" else "left")
        for w in trends.worst:
            worst.add_row(
                w.period, _num(w.value), escape(redact(w.case_id)), escape(redact(w.agent or "–")), w.run_id
            )
        console.print(worst)
    if trends.cases_without_time:
        console.print(f"{trends.cases_without_time} case(s) without a start time left out.", highlight=False)
