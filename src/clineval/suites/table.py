"""The case table of a suite run: one row per case, columns chosen in the suite.

A suite's ``table`` maps column titles to sources::

    table:
      case: id
      diagnosis: metadata.diagnosis      # the case's metadata
      expected: expected.decision        # the ground truth of the evaluation whose query is 'decision'
      actual: output.decision            # a field path into the pipeline's output
      reasoning: output.rationale
      decision ok: score.Decision        # an evaluator's value (with pass/fail)
      time: time                         # the pipeline's time for the case
      why: why                           # the field paths that found nothing in the output

Without one, the table shows the case id, each evaluator's value and the time. When a
field path of some case found nothing in its output, a ``why`` column is added, saying
so for each case it happened to (such an evaluation scores as a wrong answer). The
table is built from the stored run alone, so ``clineval show RUN`` prints it too.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from clineval.model import Case, ResultRecord
from clineval.results.result import EvalResult
from clineval.suites.binding import as_text
from clineval.suites.fields import missing_fields
from clineval.suites.paths import MISSING, lookup
from clineval.suites.runner import SUITE_KIND, case_output

NONE = "–"


def _header(result: EvalResult) -> dict[str, Any]:
    raw = result.run.config.get("suite") or {}
    for value in raw.values() if isinstance(raw, dict) else ():
        if isinstance(value, dict) and "pipeline" in value:
            return value
    return {}


def disclaimer_of(result: EvalResult) -> str | None:
    """The suite's disclaimer, as stored with the run."""
    value = _header(result).get("disclaimer")
    return str(value) if value else None


def table_spec(result: EvalResult) -> dict[str, str] | None:
    """The columns a suite run's table has, or ``None`` when the run is not a suite run."""
    config = result.run.config
    if config.get("kind") != SUITE_KIND:
        return None
    spec = _header(result).get("table")
    if isinstance(spec, dict) and spec:
        columns = {str(k): str(v) for k, v in spec.items()}
    else:
        columns = {"case": "id"}
        for metric in result.metrics:
            if metric not in ("latency", "failure"):
                columns[metric] = f"score.{metric}"
        if "latency" in result.metrics:
            columns["time"] = "time"
    if "why" not in columns.values() and any(missing_fields(case) for case in result.cases):
        columns["why" if "why" not in columns else "why (missing fields)"] = "why"
    return columns


def why_text(case: Case) -> str:
    """Why the case's evaluations of missing fields scored 0 (empty when none is missing)."""
    missing = missing_fields(case)
    if not missing:
        return ""
    fields = ", ".join(repr(query) for query in missing)
    return f"scored 0: the output has no field {fields}"


def _format_number(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def _score_text(record: ResultRecord | None) -> str:
    if record is None:
        return NONE
    score = record.score
    if score.status == "error":
        return "unscored"
    if score.status == "not_applicable" or score.value is None:
        return "n/a"
    text = _format_number(score.value)
    return f"{text} ({score.label})" if score.label in ("pass", "fail") else text


def _expected(case: Case, query: str) -> Any:
    suite_case = case.metadata.get("suite_case")
    if isinstance(suite_case, dict):
        items = suite_case.get("evaluations")
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("query") == query:
                return item.get("ground_truth")
    return MISSING


def _given_response(case: Case, query: str) -> Any:
    suite_case = case.metadata.get("suite_case")
    if isinstance(suite_case, dict):
        items = suite_case.get("evaluations")
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("query") == query and item.get("response") is not None:
                return item["response"]
    return MISSING


def _time_text(case: Case, latency: ResultRecord | None) -> str:
    """The case's time to decision: the ``latency`` result's value (with repeated trials, their
    mean, as every aggregate has it), else the pipeline call's own time."""
    run = case.agent_run
    failed = " (failed)" if run is not None and run.failed else ""
    if latency is not None and latency.score.status == "scored" and latency.score.value is not None:
        trials = latency.score.details.get("trials")
        values = trials.get("values") if isinstance(trials, dict) else None
        mean = f" (mean of {len(values)})" if isinstance(values, list) and len(values) > 1 else ""
        return f"{latency.score.value:.2f} s{mean}{failed}"
    if run is None or run.latency_s is None:
        return NONE
    return f"{run.latency_s:.2f} s{failed}"


def cell(source: str, case: Case, results: dict[str, ResultRecord]) -> str:
    """One cell: ``source`` evaluated for ``case``."""
    kind, _, rest = source.partition(".")
    if source == "id":
        return case.id
    if source == "why":
        return why_text(case)
    if source == "time":
        return _time_text(case, results.get("latency"))
    if kind == "metadata":
        value = lookup(
            {k: v for k, v in case.metadata.items() if k not in ("suite_case", "agent_output")}, rest
        )
    elif kind == "expected":
        value = _expected(case, rest)
    elif kind == "output":
        if case.agent_run is not None and case.agent_run.failed:
            return f"failed: {case.agent_run.error or 'unknown error'}"
        output = case_output(case)
        value = lookup(output, rest) if output is not MISSING else _given_response(case, rest)
    elif kind == "score":
        return _score_text(results.get(rest))
    elif kind == "label":
        record = results.get(rest)
        return record.score.label or NONE if record is not None else NONE
    else:
        return f"(unknown source {source!r})"
    return NONE if value is MISSING or value is None else as_text(value)


def case_rows(result: EvalResult, spec: dict[str, str]) -> list[list[str]]:
    by_case: dict[str, dict[str, ResultRecord]] = {}
    for record in result.results:
        by_case.setdefault(record.case_id, {})[record.metric] = record
    return [
        [cell(source, case, by_case.get(case.id, {})) for source in spec.values()] for case in result.cases
    ]


def case_table(result: EvalResult, spec: dict[str, str] | None = None) -> Table | None:
    """The rich table of a suite run's cases (``None`` for a run that is not a suite run)."""
    spec = spec or table_spec(result)
    if spec is None:
        return None
    table = Table(title="Cases", header_style="bold", show_lines=True, title_justify="left")
    for title, source in spec.items():
        wide = source.startswith("output.") and any(
            w in source for w in ("rationale", "reason", "explanation")
        )
        table.add_column(title, overflow="fold", ratio=4 if wide else 1, min_width=6 if not wide else 30)
    for row in case_rows(result, spec):
        table.add_row(*row)
    return table
