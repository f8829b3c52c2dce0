"""Suites on the command line: ``clineval run SUITE.yaml`` and ``clineval validate FILE``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import click
from rich.console import Group, RenderableType
from rich.text import Text

from clineval.cli.common import friendly, out
from clineval.config import DEFAULT_CACHE, RunConfig, load_run_config
from clineval.errors import ColumnMappingError, ConfigError
from clineval.interrupts import run_sync
from clineval.judges.config import JudgeConfig
from clineval.redaction import redact
from clineval.results.result import EvalResult
from clineval.store.sqlite import RunStore
from clineval.suites.fields import unmatched_paths
from clineval.suites.loader import load_suite
from clineval.suites.runner import SuiteOutcome, aresume_suite, run_suite
from clineval.suites.schema import looks_like_suite
from clineval.suites.source import load_document
from clineval.suites.table import case_table, disclaimer_of


def is_suite_file(path: str | Path) -> bool:
    """True when the file is an AutoAuth suite (an evaluation header with pipeline/evaluators/cases)."""
    doc = load_document(path)
    return looks_like_suite(doc.data)


def suite_metric_names(path: str | Path) -> list[str]:
    """The result names a run of this suite will have: its evaluators, then latency and failure."""
    suite = load_suite(path)
    names = list(suite.evaluators)
    if suite.pipeline_class.generates_responses():
        names += [n for n in ("latency", "failure") if n not in names]
    return names


def run_suite_file(
    path: str,
    *,
    judge: JudgeConfig | None,
    name: str | None,
    tags: Mapping[str, str],
    store_path: str,
    no_cache: bool,
    quiet: bool,
    repeats: int | None = None,
) -> SuiteOutcome:
    """Run a suite file and return its outcome (the caller shows it)."""
    outcome = run_suite(
        path,
        judge=judge,
        store=store_path,
        cache=None if no_cache else DEFAULT_CACHE,
        name=name,
        tags=tags,
        progress=None if not quiet else False,
        repeats=repeats or 1,
    )
    return outcome


def resume_suite_run(
    run_id: str, *, store_path: str, judge: JudgeConfig | None, quiet: bool, retry_errors: bool
) -> SuiteOutcome:
    store = RunStore(store_path)
    record = store.get_run(run_id)
    return run_sync(
        aresume_suite(
            record, store=store, judge=judge, progress=None if not quiet else False, retry_errors=retry_errors
        )
    )


def suite_extras(result: EvalResult) -> RenderableType | None:
    """A suite run's case table, its disclaimer and a warning for each field path that
    matched nothing in any case's output (``None`` for other runs)."""
    table = case_table(result)
    if table is None:
        return None
    parts: list[RenderableType] = [table]
    disclaimer = disclaimer_of(result)
    if disclaimer:
        parts.append(Text.assemble(("disclaimer: ", "italic"), " ".join(disclaimer.split())))
    for unmatched in unmatched_paths(result.cases):
        parts.append(Text.assemble(("warning: ", "bold yellow"), redact(unmatched.message())))
    return parts[0] if len(parts) == 1 else Group(*parts)


@click.command(name="validate")
@click.argument("file", type=click.Path(dir_okay=False))
@friendly
def validate_command(file: str) -> None:
    """Check a suite or run file without running it; list every problem with its line."""
    if not Path(file).exists():
        raise ConfigError(f"file not found: {file}")
    if is_suite_file(file):
        suite = load_suite(file, instantiate=False)  # nothing is created, only imported and checked
        evaluators = ", ".join(suite.evaluators)
        out.print(
            f"[green]ok[/]: suite {suite.id!r}: {len(suite.cases)} cases, evaluators {evaluators}, "
            f"pipeline {suite.header.pipeline.class_}, judge {suite.judge.label}",
            highlight=False,
        )
        return
    config = load_run_config(file)  # checks the metrics too, without creating user objects
    described = ""
    if config.data is not None:  # a run file may leave the data to --data: then only what it gives
        config.check_inputs()  # the dataset's file and format, an agent's file: located, as run does
        n = _checked_cases(config)
        described = f"; dataset: {n} case{'' if n == 1 else 's'}"
    out.print(f"[green]ok[/]: run file with {len(config.metrics)} metrics{described}", highlight=False)


def _checked_cases(config: RunConfig) -> int:
    """The run file's dataset read as the run reads it (every row validated, a JSONL file
    line by line): its number of cases, or its first problems as the run would report them."""
    from clineval.datasets.loaders import stream_dataset

    path = config.data_path()
    if path is None:  # check_inputs() has refused a run file without one
        raise ConfigError("no dataset: give --data FILE or 'data:' in the run file")
    try:
        return len(stream_dataset(path, mapping=config.mapping, encoding=config.encoding))
    except ColumnMappingError:
        with config.located("mapping"):
            raise
