"""``clineval report``: a run as one self-contained HTML file (see :mod:`clineval.viewer.report`).

The report and its templates are imported when the command runs, so that ``clineval
--help`` loads neither jinja2 nor the evidence views; matplotlib only with ``--png-dir``.
"""

from __future__ import annotations

from pathlib import Path

import click

from clineval.cli.common import _require_store, cannot_write, err, friendly, store_option
from clineval.errors import ConfigError


def write_report_file(path: str, html: str, option: str) -> None:
    """Write the report, say ``wrote PATH``; one line naming the option if it cannot be written."""
    from clineval.viewer.report import write_html

    try:
        write_html(path, html)
    except OSError as exc:
        raise ConfigError(cannot_write(option, path, exc)) from None
    err.print(f"wrote {path}", highlight=False, soft_wrap=True)


def print_written(paths: list[Path]) -> None:
    for path in paths:
        err.print(f"wrote {path}", highlight=False, soft_wrap=True)


@click.command(name="report")
@click.argument("run_ref", default="latest")
@click.option(
    "--out",
    "-o",
    "out_path",
    type=click.Path(),  # a folder is refused with one line when written,
    help="The HTML file to write (default: clineval-report-RUN.html in the working directory).",
)
@click.option(
    "--worst",
    type=click.IntRange(0),
    default=20,
    show_default=True,
    help="Show the evidence of this many worst cases (lowest mean of the main metrics).",
)
@click.option(
    "--by",
    "--group-by",
    "by",
    help="Also the aggregates per value of this metadata field (default: the run's group_by).",
)
@click.option(
    "--png-dir",
    type=click.Path(file_okay=False),
    help="Also write each plot as a PNG file (288 dpi) into this folder, for papers.",
)
@store_option
@friendly
def report_command(
    run_ref: str, out_path: str | None, worst: int, by: str | None, png_dir: str | None, store_path: str
) -> None:
    """Write a run's results and the evidence of its worst cases as one self-contained HTML file.

    RUN_REF: a run id, 'latest', 'latest~N', a name or a unique id prefix. The file holds everything
    inline (styles, script, plots) and opens from disk or an e-mail attachment with no
    network: provenance, aggregates with 95% CIs, a distribution plot per metric, the
    unscored reasons, the case table and, per worst case, the evidence of every metric.
    """
    from clineval import api
    from clineval.viewer.report import run_report_html

    _require_store(store_path)
    result = api.load_run(run_ref, store=store_path)
    target = out_path or f"clineval-report-{result.run.id}.html"
    written: list[Path] = []
    try:
        html = run_report_html(result, by=by, worst=worst, png_dir=png_dir, written=written)
    except OSError as exc:  # the PNG folder
        raise ConfigError(cannot_write("--png-dir", png_dir or "", exc)) from None
    print_written(written)
    write_report_file(target, html, "--out")
