"""The viewer's web app: read-only HTML pages over one run store.

``create_app(store_path)`` returns a Starlette app with GET routes only:

* ``/``: the runs, newest first, with filters; two ticked runs open ``/compare``;
* ``/runs/{run_id}``: provenance, aggregates with 95 % CIs (``?by=FIELD``: by group), a
  distribution plot per metric, the unscored reasons, the suite table or the
  radiology-benchmark summary for those runs, and the case table (sorted, filtered and
  paginated in SQL);
* ``/runs/{run_id}/cases/{case_id}``: one case, its texts and the evidence of every metric;
* ``/compare?a=RUN&b=RUN`` and ``/compare/case?a=RUN&b=RUN&case=ID``: a comparison and one
  case of both runs side by side;
* ``/static/...``: the viewer's CSS and JS from the package (and the evidence CSS/JS).

Given :class:`~clineval.viewer.review.ReviewSettings` (``clineval view --review``) it also
mounts the review mode of :mod:`clineval.viewer.review`: the review pages, the case page with
the review panel and the two write routes; a blind review hides every score on the run pages.

Every text from a case, an agent or a judge goes through jinja2's autoescape; nothing
outside the store and the package's static folder is served.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote, urlencode

import jinja2
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from clineval.errors import ClinevalError
from clineval.model import Case, ResultRecord
from clineval.results.models import models_label
from clineval.viewer.agreement import AgreementPages
from clineval.viewer.data import (
    DEFAULT_PAGE_SIZE,
    PAGE_SIZES,
    CaseQuery,
    NotFound,
    RunFilters,
    ViewerData,
)
from clineval.viewer.diff import DiffRow, as_text, diff_rows, keyed_fields, outline
from clineval.viewer.report import fmt_p, when

if TYPE_CHECKING:
    from clineval.viewer.review import ReviewSettings

_HERE = Path(__file__).parent
STATIC_DIR = _HERE / "static"
TEMPLATE_DIR = _HERE / "templates"
_STATUSES = ("scored", "error", "not_applicable", "missing")


# --------------------------------------------------------------------------- formatting


def fmt(value: float | None, digits: int = 3) -> str:
    """A number for a table: 3 decimals, large ones whole; ``–`` for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def signed(value: float | None) -> str:
    """A change with its sign, ``+0.000`` (not ``-0.000``) when it rounds to nothing."""
    if value is None:
        return "–"
    return f"{0.0 if abs(value) < 0.0005 else value:+.3f}"


def duration(start: float | None, end: float | None) -> str:
    if not start or not end:
        return "–"
    seconds = max(0.0, end - start)
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def short_source(source: str | None, limit: int = 48) -> str:
    """A dataset's source for a narrow column: a path's last two parts, other text cut with ``…``
    (the whole source is in the cell's tooltip)."""
    if not source:
        return "–"
    text = source
    if "/" in text and " " not in text:
        tail = "/".join(text.rstrip("/").split("/")[-2:])
        text = tail if tail == text else "…/" + tail
    return text if len(text) <= limit else text[: limit - 1] + "…"


def query_string(params: Mapping[str, str]) -> str:
    """``?a=1&b=2`` (empty for no parameters), for a link that keeps the case table's filter."""
    return "?" + urlencode(params) if params else ""


def marked(snippet: str | None) -> Markup:
    """A search snippet as HTML: escaped, the matched words (between ``\x02`` and ``\x03``)
    in ``<mark>``."""
    if not snippet:
        return Markup("")
    text = str(escape(snippet))
    return Markup(text.replace("\x02", '<mark class="hit">').replace("\x03", "</mark>"))


def environment(templates: Path = TEMPLATE_DIR) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = fmt
    env.filters["fmt_p"] = fmt_p
    env.filters["signed"] = signed
    env.filters["when"] = when
    env.filters["short_source"] = short_source
    env.globals["duration"] = duration
    env.globals["query_string"] = query_string
    env.filters["marked"] = marked
    return env


# --------------------------------------------------------------------------- evidence and plots


class Parts:
    """The case evidence views and the plots, as the pages use them."""

    def __init__(self) -> None:
        from clineval.viewer import evidence, plots

        self.evidence = evidence
        self.plots = plots

    def texts(self, case: Case, id_prefix: str | None = None) -> Markup:
        return self.evidence.render_case_texts(case, id_prefix=id_prefix)

    def result(
        self, case: Case, result: ResultRecord, *, lower_is_better: bool = False, id_prefix: str | None = None
    ) -> Markup:
        return self.evidence.render_evidence(
            case, result, lower_is_better=lower_is_better, id_prefix=id_prefix
        )

    def distribution(
        self,
        values: list[float],
        title: str,
        lower_is_better: bool,
        *,
        score_range: bool = True,
        x_label: str = "score",
        mean: float | None = None,
        ci: tuple[float | None, float | None] | None = None,
        unscored: int = 0,
    ) -> Markup | None:
        if not values:
            return None
        svg = self.plots.distribution_svg(
            values,
            title=title,
            lower_is_better=lower_is_better,
            score_range=score_range,
            x_label=x_label,
            mean=mean,
            ci=ci,
            unscored=unscored,
        )
        return Markup(svg)

    def compare_plot(
        self,
        rows: Sequence[tuple[str, float | None, float | None, float | None]],
        title: str,
        *,
        verdicts: Mapping[str, str] | None = None,
        lower_is_better: Sequence[str] = (),
        x_label: str | None = None,
    ) -> Markup | None:
        if not rows:
            return None
        plot = functools.partial(
            self.plots.compare_svg, rows, title=title, verdicts=verdicts, lower_is_better=lower_is_better
        )
        return Markup(plot() if x_label is None else plot(x_label=x_label))

    def evidence_asset(self, name: str) -> str | None:
        return getattr(self.evidence, name, None)


# --------------------------------------------------------------------------- scales

_SECONDS_NAMES = ("latency", "seconds", "time_to", "timeto", "duration", "elapsed")
_SECONDS_CLASSES = (":TimeToDecision",)


def _evaluator_classes(config: Mapping[str, Any] | None) -> dict[str, str]:
    """A suite run's evaluators by name, e.g. ``{"TimeToDecision": "...evaluators:TimeToDecision"}``."""
    found: dict[str, str] = {}
    suite = (config or {}).get("suite")
    if not isinstance(suite, Mapping):
        return found
    for part in suite.values():
        evaluators = part.get("evaluators") if isinstance(part, Mapping) else None
        for item in evaluators if isinstance(evaluators, list) else []:
            if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                found[item["name"]] = str(item.get("class") or item.get("metric") or "")
    return found


def in_seconds(metric: str, evaluator_class: str = "") -> bool:
    """A metric measured in seconds: the agent's latency, a suite's ``TimeToDecision``."""
    name = metric.lower().replace("-", "_")
    return evaluator_class.endswith(_SECONDS_CLASSES) or any(word in name for word in _SECONDS_NAMES)


def metric_scale(metric: str, values: Sequence[float], evaluator_class: str = "") -> tuple[bool, str]:
    """(score_range, x label) of a metric's distribution plot: a 0–1 axis for scores, the
    values' own range for seconds and for any metric with a value outside [0, 1]."""
    if in_seconds(metric, evaluator_class):
        return False, "seconds"
    if any(not 0.0 <= v <= 1.0 for v in values if math.isfinite(v)):
        return False, "value"
    return True, "score"


# --------------------------------------------------------------------------- suite cases

_SUITE_OUTPUT_ROWS = 300


def _as_text(value: Any) -> str:
    return as_text(value, indent=2)


def _flatten(value: Any, path: str, rows: list[tuple[str, Any]]) -> None:
    """``{"a": {"b": 1}, "c": [{"d": 2}]}`` → ``a.b = 1``, ``c[0].d = 2``; a list of plain values
    stays one row (shown as a list)."""
    if len(rows) >= _SUITE_OUTPUT_ROWS:
        return
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            _flatten(item, f"{path}.{key}" if path else str(key), rows)
    elif isinstance(value, list) and value and any(isinstance(v, Mapping | list) for v in value):
        for i, item in enumerate(value):
            _flatten(item, f"{path}[{i}]", rows)
    else:
        rows.append((path or "(output)", value))


@dataclasses.dataclass
class SuiteCaseView:
    """A suite case as a reviewer reads it: what the pipeline was given, each checked field
    (expected against the output), and the pipeline's output as key/value rows."""

    inputs: list[tuple[str, str]]
    checks: list[tuple[str, str, str, list[str]]]
    """(query, expected, the output at the query, the evaluators that compare them)."""
    output: list[tuple[str, Any]]
    output_failed: str | None
    truncated: bool


def suite_case_view(record: Any, case: Case) -> SuiteCaseView | None:
    """The suite view of ``case`` (``None`` when it is no suite case). Everything here came
    from the store, already masked; the template escapes it."""
    suite_case: Any = case.metadata.get("suite_case") if case.metadata else None
    if not isinstance(suite_case, Mapping):
        return None
    from clineval.suites.paths import MISSING, lookup
    from clineval.suites.runner import case_output

    inputs: list[tuple[str, str]] = []
    if case.input is not None:
        inputs.append(("input", case.input_text()))
    suite = (record.config or {}).get("suite") if isinstance(record.config, Mapping) else None
    raw = suite.get(case.id) if isinstance(suite, Mapping) else None
    if isinstance(raw, Mapping):
        if raw.get("description"):
            inputs.insert(0, ("description", str(raw["description"])))
        context = raw.get("context")
        if isinstance(context, Mapping):
            inputs.extend((f"context.{k}", _as_text(v)) for k, v in context.items())
        elif context is not None:
            inputs.append(("context", _as_text(context)))
        if raw.get("conversation") is not None:
            inputs.append(("conversation", _as_text(raw["conversation"])))
    output = case_output(case)
    failed = (
        case.agent_run.error or "the pipeline failed" if case.agent_run and case.agent_run.failed else None
    )
    checks: list[tuple[str, str, str, list[str]]] = []
    items = suite_case.get("evaluations")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping) or not isinstance(item.get("query"), str):
            continue
        query = item["query"]
        got = lookup(output, query) if output is not MISSING else item.get("response", MISSING)
        expected = item.get("ground_truth")
        actual = "–" if got is MISSING else _as_text(got)
        metrics = item.get("metrics") or suite_case.get("metrics") or []
        checks.append((query, _as_text(expected), actual, [str(m) for m in metrics]))
    rows: list[tuple[str, Any]] = []
    if output is not MISSING:
        _flatten(output, "", rows)
    return SuiteCaseView(inputs, checks, rows, failed, len(rows) >= _SUITE_OUTPUT_ROWS)


def case_diff(a: Case, b: Case) -> list[DiffRow]:
    """The rows of the compare-case page: a suite case's checked fields (with the expected
    value) and then its output field by field, a list of criteria by criterion; any other
    case's input, response and reference."""
    from clineval.suites.paths import MISSING, lookup
    from clineval.suites.runner import case_output

    def checks(case: Case) -> dict[str, Any]:
        suite_case: Any = case.metadata.get("suite_case") if case.metadata else None
        items = suite_case.get("evaluations") if isinstance(suite_case, Mapping) else None
        return {
            item["query"]: item.get("ground_truth")
            for item in (items if isinstance(items, list) else [])
            if isinstance(item, Mapping) and isinstance(item.get("query"), str)
        }

    def fields(case: Case, queries: Sequence[str]) -> dict[str, Any]:
        if case.agent_run is not None and case.agent_run.failed:
            return {"(pipeline)": f"failed: {case.agent_run.error or 'unknown error'}"}
        output = case_output(case)
        if output is MISSING:
            return {}
        found = {q: outline(v) for q in queries if (v := lookup(output, q)) is not MISSING}
        return {**found, **{k: v for k, v in keyed_fields(output).items() if k not in found}}

    expected_a, expected_b = checks(a), checks(b)
    if expected_a or expected_b or "suite_case" in a.metadata or "suite_case" in b.metadata:
        expected = {**expected_b, **expected_a}
        return diff_rows(fields(a, list(expected)), fields(b, list(expected)), expected)

    def texts(case: Case) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if case.input is not None:
            out["input"] = case.input_text()
        if case.agent_run is not None and case.agent_run.failed:
            out["response"] = f"the agent failed: {case.agent_run.error or 'no error recorded'}"
        elif case.response is not None:
            out["response"] = case.response
        if case.reference is not None:
            out["reference"] = case.reference
        return out

    return diff_rows(texts(a), texts(b))


# --------------------------------------------------------------------------- query parameters


def _trend_row(point: Any, period: str) -> tuple[str, float | None, float | None, float | None]:
    if point is None:
        return (period, None, None, None)
    return (period, point.mean, point.ci_low, point.ci_high)


def _int(params: Mapping[str, str], key: str, default: int) -> int:
    try:
        return int(params.get(key, default))
    except (TypeError, ValueError):
        return default


def _float(params: Mapping[str, str], key: str) -> float | None:
    raw = params.get(key, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _text(params: Mapping[str, str], key: str) -> str | None:
    value = params.get(key, "").strip()
    return value or None


def case_query(params: Mapping[str, str]) -> CaseQuery:
    size = _int(params, "size", DEFAULT_PAGE_SIZE)
    status = _text(params, "status")
    order = params.get("order", "asc")
    return CaseQuery(
        page=max(1, _int(params, "page", 1)),
        size=size if size in PAGE_SIZES else DEFAULT_PAGE_SIZE,
        sort=_text(params, "sort") or "index",
        order="desc" if order == "desc" else "asc",
        metric=_text(params, "metric"),
        min=_float(params, "min"),
        max=_float(params, "max"),
        status=status if status in _STATUSES else None,  # type: ignore[arg-type]
        q=_text(params, "q"),
        failures=params.get("failures") in ("1", "on", "true"),
    )


def linker(request: Request, path: str | None = None) -> Callable[..., str]:
    """``link(page=2)``: this page's URL (or ``path``) with some query parameters changed
    (``None`` drops one)."""
    current = dict(request.query_params)
    where = path if path is not None else request.url.path

    def link(**changes: Any) -> str:
        merged = {**current, **{k: v for k, v in changes.items()}}
        kept = {k: str(v) for k, v in merged.items() if v is not None and v != ""}
        return where + ("?" + urlencode(kept) if kept else "")

    return link


# --------------------------------------------------------------------------- the app


def _lifespan(
    data: ViewerData, warm: int, closers: Sequence[Callable[[], None]] = ()
) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if warm > 0:
            threading.Thread(target=data.warm, args=(warm,), name="clineval-view-warm", daemon=True).start()
        try:
            yield
        finally:
            data.close()
            for close in closers:
                close()

    return lifespan


def create_app(
    store_path: str | Path,
    *,
    warm: int = 0,
    allowed_hosts: Sequence[str] | None = None,
    review: ReviewSettings | None = None,
) -> Starlette:
    """The viewer over the run store at ``store_path`` (opened read-only; it must exist).

    ``warm``: when the app starts, compute the aggregates of this many of the newest runs on
    a background thread, so that their run pages open at once (``clineval view`` uses 3).
    ``allowed_hosts``: answer only requests whose ``Host`` is one of these (``clineval view``
    on localhost allows only localhost names: a web page elsewhere cannot read the runs
    through a DNS name rebound to 127.0.0.1).
    ``review``: the review mode (:mod:`clineval.viewer.review`); it opens the store for
    writing its review tables and always checks the ``Host`` (local names unless
    ``allowed_hosts`` says otherwise)."""
    path = Path(store_path)
    data = ViewerData(path)
    env = environment()
    parts = Parts()
    agreement = AgreementPages(data)
    shown_path = str(path)
    blind = review is not None and review.blind

    def page(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(template).render(
            request=request,
            store_path=shown_path,
            link=linker(request),
            has_evidence_css=parts.evidence_asset("EVIDENCE_CSS") is not None,
            has_evidence_js=parts.evidence_asset("EVIDENCE_JS") is not None,
            has_evidence=parts.evidence is not None,
            review=review,
            hide_scores=blind,
            **context,
        )
        return HTMLResponse(html, status_code=status_code)

    def fragment(request: Request, template: str, **context: Any) -> str:
        return env.get_template(template).render(
            request=request,
            link=linker(request),
            has_evidence=parts.evidence is not None,
            review=review,
            hide_scores=blind,
            **context,
        )

    def runs_page(request: Request) -> Response:
        params = request.query_params
        filters = RunFilters(
            name=_text(params, "name"),
            tag=_text(params, "tag"),
            status=_text(params, "status"),
            metric=_text(params, "metric"),
            dataset=_text(params, "dataset"),
        )
        every = data.runs()
        runs = [row for row in every if filters.matches(row)]
        return page(
            request,
            "runs.html",
            runs=runs,
            has_traffic=any(row.tags.get("source") == "traces" for row in every),
            total=len(every),
            filters=filters,
            all_metrics=sorted({m for r in every for m in r.metrics}),
            statuses=["completed", "running", "stopped", "interrupted", "failed"],
        )

    def run_page(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        params = request.query_params
        by = None if blind else _text(params, "by")
        summary = data.summary(
            run_id,
            by=by,
            all_sub_scores=params.get("subs") == "all",
            wait_for_cis=params.get("cis") == "wait",
        )
        query = case_query(params)
        if blind:  # no order, filter or column that tells a score
            query = dataclasses.replace(
                query, sort="index", metric=None, min=None, max=None, status=None, failures=False
            )
        cases = data.case_page(summary.record.id, query)
        plots: dict[str, Markup] = {}
        classes = _evaluator_classes(summary.record.config)
        top = {a.metric: a for a in summary.aggregates}
        unscored = {a.metric: a.errors for a in summary.aggregates}
        for metric in [] if blind else summary.metrics:
            values = summary.distributions.get(metric, [])
            score_range, x_label = metric_scale(metric, values, classes.get(metric, ""))
            agg = top.get(metric)
            svg = parts.distribution(
                values,
                title=metric,
                lower_is_better=metric in summary.lower_is_better,
                score_range=score_range,
                x_label=x_label,
                mean=agg.mean if agg is not None else None,
                ci=(agg.ci_low, agg.ci_high) if agg is not None and agg.ci_low is not None else None,
                unscored=unscored.get(metric, 0),
            )
            if svg is not None:
                plots[metric] = svg
        suite = data.suite_table(summary.record.id) if summary.kind == "suite" and not blind else None
        radbench = (
            data.radbench_summary(summary.record.id, params.get("rb_by", "condition"))
            if summary.kind == "radbench" and not blind
            else None
        )
        response = page(
            request,
            "run.html",
            s=summary,
            run=summary.record,
            judge_label=models_label(summary.record),
            cases=cases,
            plots=plots,
            suite=suite,
            radbench=radbench,
            page_sizes=PAGE_SIZES,
            statuses=_STATUSES,
            review_verdicts=agreement.has_reviews(summary.record.id),
        )
        if summary.cis_pending and not blind:  # computed once the page is sent; the page fetches them
            response.background = BackgroundTask(
                data.compute_aggregates, summary.record.id, all_sub_scores=params.get("subs") == "all"
            )
        return response

    def agreement_page(request: Request) -> Response:
        """The run's metrics and judge against its stored reviews (``clineval agreement --reviews``)."""
        context = agreement.context(request.path_params["run_id"], _text(request.query_params, "reviewer"))
        return page(request, "agreement.html", **context)

    def aggregates_fragment(request: Request) -> Response:
        """The aggregates table alone, with its intervals (the run page fetches it when they were pending)."""
        all_subs = request.query_params.get("subs") == "all"
        summary = data.summary(request.path_params["run_id"], all_sub_scores=all_subs)
        run_path = "/runs/" + quote(summary.record.id, safe="")
        html = env.get_template("_aggregates.html").render(
            s=summary, link=linker(request, run_path), request=request
        )
        return HTMLResponse(html)

    def case_page(request: Request) -> Response:
        query = case_query(request.query_params)
        if blind:
            query = dataclasses.replace(
                query, sort="index", metric=None, min=None, max=None, status=None, failures=False
            )
        view = data.case(request.path_params["run_id"], request.path_params["case_id"], query)
        return page(
            request,
            "case.html",
            v=view,
            run=view.record,
            texts=parts.texts(view.case),
            suite_case=suite_case_view(view.record, view.case),
            evidence=[
                (r, parts.result(view.case, r, lower_is_better=r.metric in view.record.lower_is_better))
                for r in view.results
            ],
        )

    def traffic_page(request: Request) -> Response:
        from clineval.errors import ConfigError, StoreError
        from clineval.results.trends import compute_trends

        params = request.query_params
        by: Literal["day", "hour"] = "hour" if params.get("by") == "hour" else "day"
        run_ref = _text(params, "run")
        try:
            trends = compute_trends(path, run_ref=run_ref, by=by, worst=_int(params, "worst", 3))
        except (ConfigError, StoreError) as exc:
            raise NotFound(str(exc)) from None
        plots = []
        for metric in trends.metrics:
            overall = [_trend_row(trends.point(period, metric), period) for period in trends.periods]
            per_agent = [
                (agent, [_trend_row(trends.point(p, metric, agent), p) for p in trends.periods])
                for agent in trends.agents
            ]
            plots.append(
                (
                    metric,
                    Markup(parts.plots.trend_svg(overall, title=f"{metric}: all agents")),
                    [
                        Markup(parts.plots.trend_svg(rows, title=f"{metric}: {agent}", width=320, height=180))
                        for agent, rows in per_agent
                        if any(row[1] is not None for row in rows)
                    ],
                )
            )
        worst: dict[str, list[Any]] = {}
        for w in trends.worst:
            worst.setdefault(w.period, []).append(w)
        return page(request, "traffic.html", t=trends, plots=plots, worst=worst, run_ref=run_ref)

    def _pair(request: Request) -> tuple[str, str]:
        params = request.query_params
        a, b = _text(params, "a"), _text(params, "b")
        chosen = [v for v in params.getlist("run") if v.strip()]
        if (a is None or b is None) and len(chosen) == 2:
            first, second = (data.get_run(chosen[0]), data.get_run(chosen[1]))
            older, newer = sorted((first, second), key=lambda r: r.created_at)
            a, b = older.id, newer.id
        if a is None or b is None:
            raise HTTPException(400, "choose two runs to compare: /compare?a=RUN&b=RUN (A is the baseline)")
        return a, b

    def compare_page(request: Request) -> Response:
        a, b = _pair(request)
        try:
            view = data.compare(a, b)
        except NotFound:
            raise
        except ClinevalError as exc:  # no shared case or metric
            return page(request, "error.html", status_code=400, title="Cannot compare", message=str(exc))
        plotted = [
            m
            for m in view.comparison.metrics
            if m.delta is not None and m.ci_low is not None and m.ci_high is not None
        ]
        verdicts = {m.metric: m.verdict for m in view.comparison.metrics}
        lower = [m.metric for m in view.comparison.metrics if m.lower_is_better]
        classes = {**_evaluator_classes(view.a.config), **_evaluator_classes(view.b.config)}

        def panel(m: Any) -> str:
            """Metrics share an axis only with metrics on their scale (as the HTML report)."""
            if in_seconds(m.metric, classes.get(m.metric, "")):
                return "compare-plot-seconds"
            if all(v is not None and 0 <= v <= 1 for v in (m.mean_a, m.mean_b)):
                return "compare-plot"
            return "compare-plot-other"

        figures: list[tuple[str, Markup]] = []
        for figure_id, title, x_label in (
            ("compare-plot", "Scores in [0, 1]", "Δ score (B − A), 95 % CI"),
            ("compare-plot-seconds", "Times, in seconds", "Δ seconds (B − A), 95 % CI"),
            ("compare-plot-other", "Other scales (each in its own units)", "Δ (B − A), 95 % CI"),
        ):
            rows = [(m.metric, m.delta, m.ci_low, m.ci_high) for m in plotted if panel(m) == figure_id]
            plot = (
                parts.compare_plot(
                    rows, title=title, verdicts=verdicts, lower_is_better=lower, x_label=x_label
                )
                if rows
                else None
            )
            if plot is not None:
                figures.append((figure_id, plot))
        return page(request, "compare.html", c=view.comparison, a=view.a, b=view.b, plots=figures)

    def compare_case_page(request: Request) -> Response:
        a, b = _pair(request)
        case_id = _text(request.query_params, "case")
        if case_id is None:
            raise HTTPException(400, "which case? /compare/case?a=RUN&b=RUN&case=ID")
        va, vb = data.case(a, case_id), data.case(b, case_id)
        metrics = list(dict.fromkeys([*(r.metric for r in va.results), *(r.metric for r in vb.results)]))
        lower = {*va.record.lower_is_better, *vb.record.lower_is_better}
        by_a = {r.metric: r for r in va.results}
        by_b = {r.metric: r for r in vb.results}
        rows = [
            (
                metric,
                by_a.get(metric),
                by_b.get(metric),
                parts.result(va.case, by_a[metric], lower_is_better=metric in lower, id_prefix="a")
                if metric in by_a
                else None,
                parts.result(vb.case, by_b[metric], lower_is_better=metric in lower, id_prefix="b")
                if metric in by_b
                else None,
            )
            for metric in metrics
        ]
        return page(
            request,
            "compare_case.html",
            a=va.record,
            b=vb.record,
            va=va,
            vb=vb,
            case_id=case_id,
            texts_a=parts.texts(va.case, id_prefix="a"),
            texts_b=parts.texts(vb.case, id_prefix="b"),
            suite_a=suite_case_view(va.record, va.case),
            suite_b=suite_case_view(vb.record, vb.case),
            rows=rows,
            diff=case_diff(va.case, vb.case),
        )

    def evidence_asset(name: str, media_type: str) -> Callable[[Request], Response]:
        def serve(request: Request) -> Response:
            text = parts.evidence_asset(name)
            if text is None:
                raise HTTPException(404, "no evidence styles in this version")
            return Response(text, media_type=media_type)

        return serve

    async def not_found(request: Request, exc: Exception) -> Response:
        message = str(exc) if isinstance(exc, NotFound) else getattr(exc, "detail", None) or "Not found"
        return page(request, "error.html", status_code=404, title="Not found", message=message)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return await not_found(request, exc)
        if exc.status_code == 405:
            return Response(
                "405 Method Not Allowed: the viewer is read-only\n"
                if review is None
                else "405 Method Not Allowed: reviews are saved through POST /api/review only\n",
                status_code=405,
                headers={"Allow": "GET, HEAD"},
                media_type="text/plain",
            )
        return page(
            request,
            "error.html",
            status_code=exc.status_code,
            title=f"Error {exc.status_code}",
            message=exc.detail,
        )

    routes = [
        Route("/", runs_page, methods=["GET"]),
        Route("/runs/{run_id}", run_page, methods=["GET"]),
        Route("/runs/{run_id}/aggregates", aggregates_fragment, methods=["GET"]),
        Route("/runs/{run_id}/agreement", agreement_page, methods=["GET"]),
        Route("/runs/{run_id}/cases/{case_id:path}", case_page, methods=["GET"]),
        Route("/traffic", traffic_page, methods=["GET"]),
        Route("/compare", compare_page, methods=["GET"]),
        Route("/compare/case", compare_case_page, methods=["GET"]),
        Route("/static/evidence.css", evidence_asset("EVIDENCE_CSS", "text/css"), methods=["GET"]),
        Route("/static/evidence.js", evidence_asset("EVIDENCE_JS", "text/javascript"), methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=str(STATIC_DIR)), name="static"),
    ]
    closers: list[Callable[[], None]] = []
    if review is not None:
        from clineval.viewer.review import PageKit, ReviewDesk

        kit = PageKit(
            page=page,
            fragment=fragment,
            texts=parts.texts,
            evidence=lambda case, result, lower: parts.result(case, result, lower_is_better=lower),
            suite_case=suite_case_view,
        )
        desk = ReviewDesk(path, data, review, kit)  # the store opened for writing its review tables
        closers.append(desk.close)
        routes = [*desk.routes(), *routes]  # first: they take the case page over
        if allowed_hosts is None:
            allowed_hosts = ["127.0.0.1", "localhost"]
    middleware = []
    if allowed_hosts is not None:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)))
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={NotFound: not_found, HTTPException: http_error},
        lifespan=_lifespan(data, warm, closers),
    )
    app.state.data = data
    app.state.store_path = shown_path
    return app


__all__ = ["create_app", "escape", "fmt"]
