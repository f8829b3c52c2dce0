"""``clineval compare``: run B against run A, case by case, with paired tests per metric.

The comparison itself lives in :mod:`clineval.compare` (imported when the command runs,
so that ``clineval --help`` stays fast); see docs/comparing.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clineval.cli.common import _require_store, err, friendly, out, store_option, write_text_file
from clineval.cli.gating import (
    GATE_FAILED,
    incomplete_message,
    incomplete_warning,
    print_outcomes,
    run_completeness,
)
from clineval.errors import ConfigError, IncompleteRunError

if TYPE_CHECKING:
    from clineval.compare import Comparison
    from clineval.results.result import EvalResult


@click.command(name="compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level for the Holm-adjusted p-values.",
)
@click.option(
    "--metric",
    "-m",
    "metrics",
    multiple=True,
    help="Compare only this metric or sub-score metric.sub (repeatable; default: every metric of both runs).",
)
@click.option("--sub-scores", is_flag=True, help="Also compare every sub-score (metric.sub) of both runs.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    help="Also write the comparison as JSON to this file ('-': JSON on standard output only).",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(),  # a folder is refused with one line when written,
    help="Also write the comparison as one self-contained HTML file, with the evidence of the changed cases.",
)
@click.option(
    "--png-dir",
    type=click.Path(file_okay=False),
    help="With --html: also write the forest plot as PNG (288 dpi) into this folder.",
)
@click.option("--fail-on-regression", is_flag=True, help="Exit with status 1 when any metric regressed.")
@click.option(
    "--fail-on-case-regression",
    "case_gates",
    multiple=True,
    is_flag=False,
    flag_value="",
    metavar="[METRIC[=VALUE]]",
    help="Exit with status 1 when any case that was right in A (pass, 1 of a 0/1 metric, or ≥ VALUE) "
    "is wrong or unscored in B; lists the cases. Without METRIC: every metric with a pass/fail label "
    "or 0/1 values (repeatable; put it after the runs).",
)
@store_option
@friendly
def compare_command(
    run_a: str,
    run_b: str,
    alpha: float,
    metrics: tuple[str, ...],
    sub_scores: bool,
    json_path: str | None,
    html_path: str | None,
    png_dir: str | None,
    fail_on_regression: bool,
    case_gates: tuple[str, ...],
    store_path: str,
) -> None:
    """Compare run B with run A (the baseline) case by case: what regressed, what improved.

    RUN_A, RUN_B: a run id, 'latest', 'latest~N', a run name or a unique id prefix
    (e.g. 'clineval compare latest~1 latest').
    """
    from clineval import api
    from clineval.compare import compare_runs, print_comparison
    from clineval.compare.case_gate import check_case_regressions, parse_case_gate

    if png_dir and not html_path:
        raise ConfigError("--png-dir goes with --html FILE")
    per_case = [parse_case_gate(text) for text in case_gates]
    _require_store(store_path)
    # read from the store a metric at a time (bounded memory at any number of cases)
    baseline = api.load_run(run_a, store=store_path, lazy=True)
    candidate = api.load_run(run_b, store=store_path, lazy=True)
    if fail_on_regression or per_case:  # a gate: refuse a run that is not complete
        for run in (baseline, candidate):
            completeness = run_completeness(store_path, run.run_id)
            if completeness is not None and not completeness.complete:
                raise IncompleteRunError(incomplete_message(completeness, store_path))
    comparison = compare_runs(
        baseline,
        candidate,
        alpha=alpha,
        metrics=[m.strip() for part in metrics for m in part.split(",") if m.strip()] or None,
        include_sub_scores=sub_scores,
    )
    for run in (baseline, candidate):  # flagged loudly: with the comparison's warnings, in the JSON too
        flagged = incomplete_warning(store_path, run.run_id)
        if flagged is not None:
            comparison.warnings.append(flagged)
            if json_path == "-":  # standard output holds only the JSON: say it on standard error
                err.print(f"warning: {flagged}", highlight=False, soft_wrap=True)
    outcomes = [check_case_regressions(baseline, candidate, gate) for gate in per_case]
    data = comparison.model_dump(mode="json")
    if outcomes:  # the case gates' verdicts, with the cases that regressed, in the JSON too
        data["case_gates"] = [outcome.model_dump(mode="json") for outcome in outcomes]
    text = json.dumps(data, indent=2, ensure_ascii=False)
    if json_path == "-":
        click.echo(text)
    else:
        print_comparison(comparison, out)
        if json_path:
            write_text_file(json_path, text, "--json")
    if html_path:
        _write_html(comparison, baseline, candidate, html_path, png_dir)
    if outcomes:
        print_outcomes(outcomes, err if json_path == "-" else out)
    if (fail_on_regression and comparison.regressed) or any(not o.passed for o in outcomes):
        sys.exit(GATE_FAILED)


def _write_html(
    comparison: Comparison, baseline: EvalResult, candidate: EvalResult, path: str, png_dir: str | None
) -> None:
    """``--html``: the comparison with both runs' evidence of the changed cases, in one file."""
    from clineval.cli.common import cannot_write
    from clineval.cli.report import print_written, write_report_file
    from clineval.viewer.report import compare_report_html

    written: list[Path] = []
    try:
        html = compare_report_html(comparison, baseline, candidate, png_dir=png_dir, written=written)
    except OSError as exc:  # the PNG folder
        raise ConfigError(cannot_write("--png-dir", png_dir or "", exc)) from None
    print_written(written)
    write_report_file(path, html, "--html")
