"""The self-contained HTML report of a run (``clineval report``) and of a comparison
(``clineval compare A B --html FILE``).

One HTML file with everything inline: the viewer's CSS (``static/viewer.css``), the
evidence CSS and JS (:mod:`clineval.viewer.evidence`), a few lines of the report's own
script, and the plots as SVG (:mod:`clineval.viewer.plots`). It refers to nothing outside
itself (no stylesheet link, no script source, no font, no image), so it opens from disk or
as an e-mail attachment on a machine with no network, for reviewers who do not run Python.

A run's report holds what the viewer's run page shows (provenance, aggregates with their
95 % intervals, by group, a distribution plot per metric, the unscored reasons, the case
table: every case up to :data:`CASE_TABLE_LIMIT`, else the worst cases) and the evidence
of its worst cases, case by case. "Worst" ranks the cases by the mean of the run's main
metrics (:func:`main_metrics`), lowest first; a case that no main metric could score (the
agent failed) comes first, and every unscored result is marked.

A comparison's report holds the comparison table (Δ with its 95 % interval, the test, p
and Holm's p per metric), a forest plot of the changes, and the cases that got worse and
better, each with the evidence of both runs side by side.

Every text from a case, an agent or a judge goes through jinja2's autoescape or the
evidence module's escaping; ``Markup`` wraps only HTML built here or there from escaped
parts (and the SVG plots, which escape their texts).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from clineval.model import Case, ResultRecord, RunRecord
from clineval.redaction import redact
from clineval.results.models import models_label
from clineval.results.render import judge_notice, limit_sub_scores
from clineval.viewer import evidence, plots

if TYPE_CHECKING:
    from jinja2 import Environment

    from clineval.compare.comparison import CaseChange, Comparison, MetricComparison
    from clineval.results.result import EvalResult

#: Up to this many cases, the report's case table lists every case; above, the worst ones.
CASE_TABLE_LIMIT = 500
#: Cases whose evidence the report shows by default (``--worst``).
DEFAULT_WORST = 20
#: Metrics about the agent call, not about the answer: never used to rank cases.
AGENT_METRICS = ("latency", "failure")
#: Of the worst cases shown, this many open with their evidence; the others (and every
#: passing case, :func:`passes`) are folded to one line with their scores, opened on a click.
OPEN_CASES = 5
_PASS_LABELS = ("pass", "match")
_FAIL_LABELS = ("fail", "no_match")

# --------------------------------------------------------------------------- assets


def _package_text(*parts: str) -> str | None:
    try:
        return resources.files("clineval.viewer").joinpath(*parts).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError, ModuleNotFoundError):
        return None


def _styles() -> Markup:
    """The report's CSS: the viewer's stylesheet, the evidence styles and the report's own."""
    parts = [_package_text("static", "viewer.css") or "", evidence.EVIDENCE_CSS]
    parts.append(_package_text("report_assets", "report.css") or "")
    return _inline(parts, "style")


def _scripts() -> Markup:
    parts = [evidence.EVIDENCE_JS]
    parts.append(_package_text("report_assets", "report.js") or "")
    return _inline(parts, "script")


def _inline(parts: Iterable[str], tag: str) -> Markup:
    """Our own CSS or JS for a <style>/<script> element; a closing tag inside cannot end it early."""
    text = "\n".join(p for p in parts if p)
    text = re.sub(rf"</(?={tag})", r"<\\/", text, flags=re.I)
    return Markup(text)  # the package's own CSS and JS, no user text


# --------------------------------------------------------------------------- formatting


def fmt(value: float | None, digits: int = 3) -> str:
    """A number for a table: 3 decimals, large ones whole; ``–`` for none."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def fmt_signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}".replace("-", "−")


def fmt_p(value: float | None) -> str:
    if value is None:
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def when(timestamp: float | None) -> str:
    if not timestamp:
        return "–"
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def _duration(start: float | None, end: float | None) -> str:
    if not start or not end or end < start:
        return ""
    seconds = end - start
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def _preview(value: Any, limit: int = 110) -> str:
    """A case's input or response, one line, shortened."""
    if value is None:
        return ""
    if isinstance(value, list):  # a conversation: its last user turn
        turns = [m for m in value if isinstance(m, dict)] or []
        users = [m for m in turns if m.get("role") == "user" and m.get("content")]
        last = users[-1] if users else (turns[-1] if turns else {})
        text = f"({len(value)} turns) {last.get('content') or ''}"
    else:
        text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")
    return slug or "plot"


def _environment() -> Environment:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("clineval.viewer", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = fmt
    env.filters["fmt_signed"] = fmt_signed
    env.filters["fmt_p"] = fmt_p
    env.filters["when"] = when
    env.filters["preview"] = _preview
    env.globals["duration"] = _duration
    env.filters["models"] = models_label  # what follows "judge" in a run's header
    return env


def _generated() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("clineval")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        release = "?"
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"generated {stamp} by clineval {release}"


# --------------------------------------------------------------------------- evidence


def _case_texts(case: Case, id_prefix: str) -> Markup:
    return evidence.render_case_texts(case, id_prefix=id_prefix)


def _evidence(case: Case, result: ResultRecord, *, lower_is_better: bool, id_prefix: str) -> Markup:
    return evidence.render_evidence(case, result, lower_is_better=lower_is_better, id_prefix=id_prefix)


def _load_views(run: RunRecord) -> None:
    """The evidence views registered beside the run's own metrics (named by import path)."""
    evidence.load_run_views(run)


# --------------------------------------------------------------------------- ranking


def main_metrics(result: EvalResult) -> list[str]:
    """The metrics that rank a run's cases: the run's metrics other than the agent-call
    metrics (latency, failure) and other than those that scored no case at all (a judge
    metric run without a judge says nothing about one case against another)."""
    scored = {r.metric for r in result.results if r.score.status == "scored" and r.score.value is not None}
    return [m for m in result.metrics if m not in AGENT_METRICS and m in scored]


@dataclass(frozen=True)
class _Unit:
    """Maps one metric's values onto [0, 1], 1 the best."""

    low: float
    high: float
    flip: bool

    def __call__(self, value: float) -> float:
        if self.low >= 0 and self.high <= 1:
            unit = value
        elif self.high > self.low:
            unit = (value - self.low) / (self.high - self.low)
        else:
            unit = 1.0
        return 1.0 - unit if self.flip else unit


def _normalisers(result: EvalResult, metrics: Sequence[str]) -> dict[str, _Unit]:
    """Per metric, a map of its values onto [0, 1], 1 the best: scores already in [0, 1]
    as they are, others by their range in this run; a lower-is-better metric turned round."""
    values: dict[str, list[float]] = {m: [] for m in metrics}
    for r in result.results:
        if r.metric in values and r.score.status == "scored" and r.score.value is not None:
            values[r.metric].append(r.score.value)
    return {
        metric: _Unit(min(seen, default=0.0), max(seen, default=1.0), metric in result.run.lower_is_better)
        for metric, seen in values.items()
    }


@dataclass
class RankedCase:
    """A case of a run with its place in the ranking of :func:`rank_cases`."""

    case: Case
    index: int
    """Its position in the run (dataset order, from 0)."""
    mean: float | None
    """The mean of its main metrics' values (mapped onto [0, 1]); ``None`` when none scored it."""
    unscored: list[str] = field(default_factory=list)
    """The main metrics that could not score it."""
    results: dict[str, ResultRecord] = field(default_factory=dict)
    rank: int = 0

    @property
    def failed(self) -> bool:
        return bool(self.case.agent_run and self.case.agent_run.failed)


def rank_cases(result: EvalResult, metrics: Sequence[str] | None = None) -> list[RankedCase]:
    """The run's cases, worst first: those no main metric scored (an agent failure), then
    by the mean of the main metrics (each mapped onto [0, 1], 1 the best), lowest first;
    ties in dataset order."""
    chosen = list(metrics) if metrics is not None else main_metrics(result)
    scale = _normalisers(result, chosen)
    by_case: dict[str, dict[str, ResultRecord]] = {}
    for r in result.results:
        by_case.setdefault(r.case_id, {})[r.metric] = r
    ranked: list[RankedCase] = []
    for index, case in enumerate(result.cases):
        records = by_case.get(case.id, {})
        values: list[float] = []
        unscored: list[str] = []
        for metric in chosen:
            record = records.get(metric)
            if record is None:
                continue
            if record.score.status == "scored" and record.score.value is not None:
                values.append(scale[metric](record.score.value))
            elif record.score.status == "error":
                unscored.append(metric)
        mean = sum(values) / len(values) if values else None
        ranked.append(RankedCase(case=case, index=index, mean=mean, unscored=unscored, results=records))

    def order(item: RankedCase) -> tuple[int, float, int]:
        if item.mean is None:
            return (0 if item.unscored or item.failed else 2, 0.0, item.index)
        return (1, item.mean, item.index)

    ranked.sort(key=order)
    for rank, item in enumerate(ranked, start=1):
        item.rank = rank
    return ranked


def passes(item: RankedCase, main: Sequence[str]) -> bool:
    """A case that passes: the agent answered, every main metric scored it, and either every
    pass/fail verdict among them passes (a run with such verdicts: a suite's decision) or,
    without verdicts, every main metric is at its best (mean 1 on the [0, 1] scale)."""
    if item.failed or item.unscored:
        return False
    labelled = [
        r.score.label
        for m in main
        if (r := item.results.get(m)) is not None
        and r.score.status == "scored"
        and r.score.label in (*_PASS_LABELS, *_FAIL_LABELS)
    ]
    if labelled:
        return all(label in _PASS_LABELS for label in labelled)
    return item.mean is not None and item.mean >= 1.0 - 1e-9


# --------------------------------------------------------------------------- PNG export


def _write_pngs(specs: Sequence[tuple[str, plots.PlotSpec]], png_dir: str | Path) -> list[Path]:
    """Each plot as ``png_dir/NAME.png`` (the folder is made if needed)."""
    folder = Path(png_dir)
    folder.mkdir(parents=True, exist_ok=True)
    return [plots.to_png(spec, folder / f"{_slug(name)}.png") for name, spec in specs]


# --------------------------------------------------------------------------- a run


@dataclass
class _Cell:
    status: str
    value: float | None = None
    label: str | None = None
    note: str | None = None


def _cell(record: ResultRecord | None) -> _Cell | None:
    if record is None:
        return None
    score = record.score
    if score.status == "error":
        return _Cell("error", note=score.error)
    if score.status == "not_applicable":
        return _Cell("not_applicable", note=score.explanation)
    return _Cell("scored", value=score.value, label=score.label)


def _x_label(metric: str) -> str:
    return "seconds" if metric == "latency" else "score"


_FAMILY = re.compile(r'^\s*<section[^>]*\bclass="[^"]*\bev-fam-([\w-]+)')


def _view_family(evidence: Markup) -> str:
    """The evidence view a block was drawn with (``ev-fam-...``): tbfact, trajectory, generic, ..."""
    match = _FAMILY.match(str(evidence))
    return match.group(1) if match else "generic"


def _open_fold(record: ResultRecord, main: Sequence[str], family: str, opened: set[str]) -> bool:
    """Open a metric's evidence when it is a main metric below 1 with a view of its own
    (facts, grounding, trajectories, ...), the first of its kind in the case (the five
    trajectory metrics share one view); a generic table of details (ROUGE's, BLEU's
    counts) stays folded."""
    score = record.score
    if record.metric not in main or score.status != "scored" or score.value is None or score.value >= 1:
        return False
    if family == "generic" or family in opened:
        return False
    opened.add(family)
    return True


@dataclass
class _MetricFold:
    metric: str
    record: ResultRecord
    evidence: Markup
    open: bool
    lower_is_better: bool


@dataclass
class _CaseSection:
    ranked: RankedCase
    texts: Markup
    folds: list[_MetricFold]
    anchor: str
    unscored: list[tuple[str, list[str]]] = field(default_factory=list)
    """Results unscored with nothing but a reason: (reason, the metrics), one line each."""
    passing: bool = False
    open: bool = True
    """Shown open (one of the :data:`OPEN_CASES` worst that do not pass) or folded to its line."""


def run_report_html(
    result: EvalResult,
    *,
    by: str | None = None,
    worst: int = DEFAULT_WORST,
    png_dir: str | Path | None = None,
    written: list[Path] | None = None,
) -> str:
    """The HTML report of a run (see the module docstring).

    ``by``: also the aggregates per value of this metadata field (default: the run's own
    ``group_by``). ``worst``: how many cases get their evidence (0: none). ``png_dir``: also
    write each plot there as PNG; the paths written are appended to ``written``.
    """
    run = result.run
    _load_views(run)
    by = by or (run.config.get("group_by") if isinstance(run.config.get("group_by"), str) else None)
    aggregates, hidden_sub_scores = limit_sub_scores(result.aggregate())
    by_groups = [a for a in result.aggregate(by) if "." not in a.metric] if by else []
    main = main_metrics(result)
    ranked = rank_cases(result, main)
    unscored_counts = result.unscored()
    # plots: one per top-level metric
    specs: list[tuple[str, plots.PlotSpec]] = []
    top_level = {a.metric: a for a in result.aggregate() if "." not in a.metric}
    values: dict[str, list[float]] = {m: [] for m in result.metrics}
    for r in result.results:
        if r.metric in values and r.score.status == "scored" and r.score.value is not None:
            values[r.metric].append(r.score.value)
    for metric in result.metrics:
        agg = top_level.get(metric)
        spec = plots.distribution_plot(
            values.get(metric, []),
            title=metric,
            lower_is_better=metric in run.lower_is_better,
            mean=agg.mean if agg else None,
            ci=(agg.ci_low, agg.ci_high) if agg and agg.ci_low is not None else None,
            x_label=_x_label(metric),
            unscored=unscored_counts.get(metric, 0),
            score_range=metric != "latency",
        )
        specs.append((metric, spec))
    if png_dir is not None:
        paths = _write_pngs([(f"{run.id}-{name}", spec) for name, spec in specs], png_dir)
        if written is not None:
            written.extend(paths)
    # the case table
    all_cases = len(ranked) <= CASE_TABLE_LIMIT
    table_rows = sorted(ranked, key=lambda item: item.index) if all_cases else ranked[: max(worst, 0)]
    # the evidence of the worst cases
    shown = ranked[: max(worst, 0)]
    sections: list[_CaseSection] = []
    opened_cases = 0
    for item in shown:
        passing = passes(item, main)
        open_case = not passing and opened_cases < OPEN_CASES
        opened_cases += open_case
        prefix = f"c{item.index}"
        folds = []
        reasons: dict[str, list[str]] = {}
        opened: set[str] = set()
        for metric in result.metrics:
            record = item.results.get(metric)
            if record is None:
                continue
            if record.score.status == "error" and not record.score.details:
                reason = (record.score.error or "no reason recorded").removeprefix("unscored: ")
                reasons.setdefault(reason, []).append(metric)
                continue
            lower = metric in run.lower_is_better
            evidence = _evidence(item.case, record, lower_is_better=lower, id_prefix=prefix)
            folds.append(
                _MetricFold(
                    metric=metric,
                    record=record,
                    evidence=evidence,
                    open=_open_fold(record, main, _view_family(evidence), opened),
                    lower_is_better=lower,
                )
            )
        sections.append(
            _CaseSection(
                ranked=item,
                texts=_case_texts(item.case, prefix),
                folds=folds,
                anchor=f"case-{item.index}",
                unscored=[(reason, metrics) for reason, metrics in reasons.items()],
                passing=passing,
                open=open_case,
            )
        )
    anchors = {section.ranked.index: section.anchor for section in sections}
    template = _environment().get_template("report.html")
    return template.render(
        run=run,
        title=redact(run.name or run.id),
        notice=judge_notice(result.run),
        aggregates=aggregates,
        hidden_sub_scores=hidden_sub_scores,
        by=by,
        by_groups=by_groups,
        plots=[(metric, Markup(spec.to_svg())) for metric, spec in specs],  # the SVG escapes its texts
        unscored_reasons=result.unscored_reasons(limit=20),
        not_applicable=_not_applicable(result),
        suite=_suite_table(result),
        radbench=_radbench_summary(result),
        metrics=result.metrics,
        main=main,
        table_rows=table_rows,
        all_cases=all_cases,
        n_cases=len(ranked),
        cells={item.case.id: {m: _cell(r) for m, r in item.results.items()} for item in ranked},
        anchors=anchors,
        sections=sections,
        open_cases=OPEN_CASES,
        worst=worst,
        styles=_styles(),
        scripts=_scripts(),
        generated=_generated(),
        has_evidence=True,
    )


@dataclass
class _SuiteTable:
    columns: list[str]
    rows: list[list[str]]
    disclaimer: str | None


@dataclass
class _RadbenchSummary:
    metrics: list[str]
    headers: dict[str, str]
    groups: list[tuple[str, dict[str, tuple[float | None, float | None, float | None, int]]]]


def _suite_table(result: EvalResult) -> _SuiteTable | None:
    """A suite run's case table with the suite's own columns (as ``clineval run`` prints it)."""
    if result.run.config.get("kind") != "suite":
        return None
    from clineval.suites.table import case_rows, disclaimer_of, table_spec

    spec = table_spec(result)
    if spec is None:
        return None
    rows = [[redact(cell) for cell in row] for row in case_rows(result, spec)]
    return _SuiteTable(columns=list(spec), rows=rows, disclaimer=disclaimer_of(result))


def _radbench_summary(result: EvalResult) -> _RadbenchSummary | None:
    """A radiology-benchmark run's metrics per condition (``clineval radbench summary``)."""
    environment = result.run.config.get("environment")
    if not isinstance(environment, dict) or environment.get("kind") != "radbench":
        return None
    from clineval.cli.radbench import HEADERS, SUMMARY_METRICS
    from clineval.environments.radbench.stats import run_rows, summarise

    rows = summarise(run_rows(result), by=("condition",), metrics=list(SUMMARY_METRICS))
    groups: dict[str, dict[str, tuple[float | None, float | None, float | None, int]]] = {}
    for row in rows:
        groups.setdefault(" / ".join(row.group), {})[row.metric] = (row.mean, row.ci_low, row.ci_high, row.n)
    return _RadbenchSummary(metrics=list(SUMMARY_METRICS), headers=dict(HEADERS), groups=list(groups.items()))


def _not_applicable(result: EvalResult) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in result.results:
        if r.score.status == "not_applicable":
            counts[r.metric] = counts.get(r.metric, 0) + 1
    return counts


# --------------------------------------------------------------------------- a comparison


@dataclass
class _Change:
    metric: str
    change: CaseChange
    lower_is_better: bool


@dataclass
class _Sides:
    """One metric's evidence of a changed case in run A and in run B."""

    metric: str
    change: _Change
    a: Markup | None
    b: Markup | None


@dataclass
class _ChangedCase:
    case_id: str
    changes: list[_Change]
    anchor: str
    texts_a: Markup | None = None
    texts_b: Markup | None = None
    sides: list[_Sides] = field(default_factory=list)

    @property
    def largest(self) -> float:
        return max(abs(c.change.delta) for c in self.changes)


def _score_like(item: MetricComparison) -> bool:
    """A metric whose means lie in [0, 1] (drawn on one shared axis with the others)."""
    return all(v is not None and 0 <= v <= 1 for v in (item.mean_a, item.mean_b))


def _changed_cases(comparison: Comparison, direction: str, limit: int) -> tuple[list[_ChangedCase], int]:
    from clineval.compare.render import practically_unchanged

    found: dict[str, _ChangedCase] = {}
    for item in comparison.metrics:
        if practically_unchanged(item):
            continue
        if item.metric in AGENT_METRICS[:1] and item.verdict not in ("regressed", "improved"):
            continue  # the agent's latency moving by milliseconds is no finding about a case
        changes = item.regressed_cases if direction == "worse" else item.improved_cases
        for change in changes:
            entry = found.setdefault(change.case_id, _ChangedCase(change.case_id, [], anchor=""))
            entry.changes.append(_Change(item.metric, change, item.lower_is_better))
    ordered = sorted(found.values(), key=lambda c: (-len(c.changes), -c.largest, c.case_id))
    for index, entry in enumerate(ordered):
        entry.anchor = f"{direction}-{index}"
    return ordered[: max(limit, 0)], max(len(ordered) - max(limit, 0), 0)


def _side_evidence(
    result: EvalResult,
    cases: Mapping[str, Case],
    records: Mapping[tuple[str, str], ResultRecord],
    case_id: str,
    metric: str,
    prefix: str,
) -> Markup | None:
    case = cases.get(case_id)
    record = records.get((case_id, metric))
    if record is None and "." in metric:  # a sub-score: the evidence of its metric
        record = records.get((case_id, metric.split(".", 1)[0]))
    if case is None or record is None:
        return None
    lower = record.metric in result.run.lower_is_better
    return _evidence(case, record, lower_is_better=lower, id_prefix=prefix)


def compare_report_html(
    comparison: Comparison,
    baseline: EvalResult,
    candidate: EvalResult,
    *,
    cases: int = DEFAULT_WORST,
    png_dir: str | Path | None = None,
    written: list[Path] | None = None,
) -> str:
    """The HTML report of ``clineval compare``: the table, the forest plot, and up to
    ``cases`` cases that got worse and ``cases`` that got better, with both runs' evidence."""
    _load_views(baseline.run)
    _load_views(candidate.run)
    score_rows = [m for m in comparison.metrics if _score_like(m)]
    other_rows = [m for m in comparison.metrics if not _score_like(m)]
    verdicts = {m.metric: m.verdict for m in comparison.metrics}
    lower = {m.metric for m in comparison.metrics if m.lower_is_better}
    specs: list[tuple[str, plots.PlotSpec]] = []
    for name, rows, title in (
        ("compare", score_rows, "Change per metric, B − A (scores in [0, 1])"),
        ("compare-other", other_rows, "Change per metric, B − A (other metrics, in their own units)"),
    ):
        if rows:
            spec = plots.compare_plot(
                [(m.metric, m.delta, m.ci_low, m.ci_high) for m in rows],
                title=title,
                width=760,
                verdicts=verdicts,
                lower_is_better=lower,
            )
            specs.append((name, spec))
    if png_dir is not None:
        named = [(f"{comparison.run_a.id}-vs-{comparison.run_b.id}-{name}", spec) for name, spec in specs]
        paths = _write_pngs(named, png_dir)
        if written is not None:
            written.extend(paths)
    headings = (("worse", "Cases that got worse"), ("better", "Cases that got better"))
    shown = {direction: _changed_cases(comparison, direction, cases) for direction, _ in headings}
    ids = [entry.case_id for changed, _ in shown.values() for entry in changed]
    # only the cases shown are read (a stored run is not loaded whole)
    cases_a, records_a = baseline.cases_with_results(ids)
    cases_b, records_b = candidate.cases_with_results(ids)
    groups: list[tuple[str, str, list[_ChangedCase], int]] = []
    for direction, heading in headings:
        changed, more = shown[direction]
        for index, entry in enumerate(changed):
            prefix = f"{direction}{index}"
            if entry.case_id in cases_a:
                entry.texts_a = _case_texts(cases_a[entry.case_id], f"{prefix}-a")
            if entry.case_id in cases_b:
                entry.texts_b = _case_texts(cases_b[entry.case_id], f"{prefix}-b")
            seen: set[str] = set()
            for change in entry.changes:
                metric = change.metric
                base = metric if (entry.case_id, metric) in records_b else metric.split(".", 1)[0]
                if base in seen:
                    continue
                seen.add(base)
                entry.sides.append(
                    _Sides(
                        metric=base,
                        change=change,
                        a=_side_evidence(baseline, cases_a, records_a, entry.case_id, base, f"{prefix}-a"),
                        b=_side_evidence(candidate, cases_b, records_b, entry.case_id, base, f"{prefix}-b"),
                    )
                )
        groups.append((direction, heading, changed, more))
    template = _environment().get_template("compare_report.html")
    return template.render(
        c=comparison,
        a=baseline.run,
        b=candidate.run,
        plots=[(name, Markup(spec.to_svg())) for name, spec in specs],  # the SVG escapes its texts
        groups=groups,
        cases_limit=cases,
        styles=_styles(),
        scripts=_scripts(),
        generated=_generated(),
    )


def write_html(path: str | Path, html: str) -> Path:
    """Write a report (UTF-8); raises OSError as the file system does."""
    target = Path(path)
    target.write_text(html, encoding="utf-8")
    return target


__all__ = [
    "CASE_TABLE_LIMIT",
    "DEFAULT_WORST",
    "RankedCase",
    "compare_report_html",
    "escape",
    "main_metrics",
    "rank_cases",
    "run_report_html",
    "write_html",
]
