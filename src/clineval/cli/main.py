"""The ``clineval`` command line.

User mistakes (a bad row, an unknown metric, a run id that does not exist, a judge that
refuses the key) print one clear message and exit with status 2, with no traceback.
Ctrl-C exits with 130, SIGTERM with 143, after saving what finished. Any traceback is a bug.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from clineval.cli.common import (
    _require_store,
    cannot_write,
    err,
    executor_options,
    executor_settings,
    friendly,
    judge_limit_options,
    judge_option,
    metric_specs,
    out,
    store_option,
    with_judge_limits,
)
from clineval.cli.gating import GateOptions, apply_gates, expected_metrics, gate_options, warn_if_incomplete
from clineval.errors import ConfigError

# Start-up: `clineval --help` and `clineval runs` must not load the runner, the judges or
# the metrics (see tests/faults/test_startup.py), so what a command needs is imported in
# its body, and the commands of other modules load when called (_LazyGroup below).
if TYPE_CHECKING:
    from clineval.judges.config import JudgeConfig
    from clineval.model import RunRecord
    from clineval.results.result import EvalResult

F = TypeVar("F", bound=Callable[..., Any])


def metric_option(*, required: bool) -> Callable[[F], F]:
    """The -m/--metric/--metrics option shared by `run` and `score`."""
    return click.option(
        "--metric",
        "--metrics",
        "-m",
        "metric_opts",
        multiple=True,
        required=required,
        help="Metric spec, repeatable or comma-separated: NAME, NAME(key=value), ALIAS=NAME(...).",
    )


def _pairs(values: Sequence[str], what: str) -> dict[str, str]:
    out_map: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{what} {value!r}: expected KEY=VALUE")
        out_map[key.strip()] = val.strip()
    return out_map


def _show(
    result: EvalResult, by: str | None, cases: bool, all_sub_scores: bool = False, **case_rows: Any
) -> None:
    from clineval.cli.suite import suite_extras
    from clineval.results import render

    render.print_result(
        result,
        out,
        by=by,
        cases=cases,
        all_sub_scores=all_sub_scores,
        extra=suite_extras(result),
        **case_rows,
    )


#: The commands defined in other modules: name -> ("module:attribute", the first sentence of
#: the command's help, shown by `clineval --help` without importing the module; a test
#: checks it against the command's own help).
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "agreement": (
        "clineval.cli.agreement:agreement_command",
        "Agreement of a run's METRIC with human labels, or of two annotators (kappa, accuracy "
        "within one level, AUC, correlations, with 95% CIs).",
    ),
    "calibrate": (
        "clineval.cli.calibrate:calibrate_command",
        "Measure a judge against clinicians' labels, beside trivial baselines (95% intervals).",
    ),
    "collect": (
        "clineval.cli.traces:collect_command",
        "Receive OpenTelemetry traces over OTLP/HTTP (POST /v1/traces) and store their spans.",
    ),
    "compare": (
        "clineval.cli.compare:compare_command",
        "Compare run B with run A (the baseline) case by case: what regressed, what improved.",
    ),
    "conversations": (
        "clineval.cli.conversations:conversations_group",
        "Multi-agent conversations: simulate them from scenarios, score saved or real ones.",
    ),
    "facts": (
        "clineval.cli.facts:facts_command",
        "Export the reference facts of a run's TBFact scores (RUN_REF: id, prefix, 'latest').",
    ),
    "monitor": (
        "clineval.cli.traces:monitor_command",
        "Score new conversations of the stored traces, once (cron) or on a schedule: one run a round.",
    ),
    "predict-ratings": (
        "clineval.cli.agreement:predict_ratings_command",
        "Predict clinicians' ratings (harm, helpfulness, ...) from a run's ASTRID triad.",
    ),
    "radbench": (
        "clineval.cli.radbench:radbench_group",
        "The radiology agent benchmark: records, tool-set conditions, agent cores, metrics (RadA-BenchPlat).",
    ),
    "report": (
        "clineval.cli.report:report_command",
        "Write a run's results and the evidence of its worst cases as one self-contained HTML file.",
    ),
    "review": (
        "clineval.cli.review:review_group",
        "Clinicians' review of a run: plan a queue of cases, follow it, export and import verdicts.",
    ),
    "traces": (
        "clineval.cli.traces:traces_group",
        "OpenTelemetry traces: import trace files into the run store and score the conversations they "
        "hold (see docs/traces.md).",
    ),
    "validate": (
        "clineval.cli.suite:validate_command",
        "Check a suite or run file without running it; list every problem with its line.",
    ),
    "view": (
        "clineval.cli.view:view_command",
        "Browse the run store in a local web viewer (read-only): runs, cases, evidence, comparisons.",
    ),
}


class _LazyGroup(click.Group):
    """A group whose commands from other modules are imported when used, not for ``--help``."""

    _listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in LAZY_COMMANDS:
            return command
        target, short_help = LAZY_COMMANDS[cmd_name]
        if self._listing:  # the command list of --help: a stand-in with the same help
            return click.Command(cmd_name, help=short_help)
        module, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command)
        self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="clineval")
def cli() -> None:
    """Evaluate clinical AI agents: run, score, store and compare."""


@cli.command()
@click.argument("run_file", required=False, type=click.Path(dir_okay=False))
@click.option("--data", "-d", help="Dataset: .jsonl, .json or .csv.")
@click.option("--encoding", help="The dataset file's text encoding, e.g. cp1252 or latin-1 (default UTF-8).")
@metric_option(required=False)
@click.option("--agent", "-a", help="Agent to run first: module:function or file.py:function.")
@click.option(
    "--judge",
    "-j",
    help="offline (default) | none | openai:MODEL[@BASE_URL] | azure[:DEPLOYMENT] | scripted:FILE "
    "| nli:PATH.",
)
@click.option("--map", "mapping", multiple=True, help="Column mapping COLUMN=FIELD (repeatable).")
@click.option("--name", help="A name for the run.")
@click.option("--tag", "tags", multiple=True, help="KEY=VALUE tag (repeatable).")
@click.option("--concurrency", type=click.IntRange(1, 1024), help="Agent calls at once.")
@click.option("--agent-timeout", type=click.FloatRange(min=0.001), help="Seconds per agent call.")
@click.option(
    "--agent-attempts",
    type=click.IntRange(1, 10),
    help="Attempts per agent call; only rate limits, timeouts and server errors are retried.",
)
@click.option(
    "--isolate-agent",
    is_flag=True,
    help="Call the agent in worker processes: os._exit, a crash or a blocked event loop fails one case.",
)
@click.option("--judge-concurrency", type=click.IntRange(1, 1024), help="Judge calls at once.")
@judge_limit_options
@click.option("--no-cache", is_flag=True, help="Do not read or write the judge cache.")
@click.option("--group-by", help="Also show aggregates grouped by this metadata field.")
@click.option("--cases", "show_cases", is_flag=True, help="Show the per-case score table.")
@click.option(
    "--repeats",
    type=click.IntRange(1, 100),
    help="Trials per case: call the agent N times on each case; scores are per-case means "
    "(pass@k and pass^k for pass/fail metrics).",
)
@click.option("--resume", help="Continue an interrupted run (id, prefix or 'latest').")
@click.option(
    "--retry-errors",
    is_flag=True,
    help="With --resume: score unscored results again and call the agent again where it failed.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@executor_options
@store_option
@gate_options
@friendly
def run(
    run_file: str | None,
    data: str | None,
    encoding: str | None,
    metric_opts: tuple[str, ...],
    agent: str | None,
    judge: str | None,
    mapping: tuple[str, ...],
    name: str | None,
    tags: tuple[str, ...],
    concurrency: int | None,
    agent_timeout: float | None,
    agent_attempts: int | None,
    isolate_agent: bool,
    judge_concurrency: int | None,
    judge_rpm: float | None,
    judge_tpm: float | None,
    no_cache: bool,
    group_by: str | None,
    show_cases: bool,
    repeats: int | None,
    resume: str | None,
    retry_errors: bool,
    quiet: bool,
    executor: str | None,
    ray_address: str | None,
    ray_workers: int | None,
    store_path: str,
    gates: GateOptions,
) -> None:
    """Run an evaluation from a RUN_FILE (YAML) and/or options, and show the results."""
    from pydantic import ValidationError

    from clineval import api
    from clineval.cli.suite import is_suite_file, resume_suite_run, run_suite_file, suite_metric_names
    from clineval.config import AgentConfig, RunConfig, describe_validation_error, load_run_config

    progress = None if not quiet else False
    specs = metric_specs(metric_opts)
    judge_config = judge_option(judge)
    agent_settings: dict[str, Any] = {}
    if concurrency:
        agent_settings["concurrency"] = concurrency
    if agent_timeout:
        agent_settings["timeout_s"] = agent_timeout
    if agent_attempts:
        agent_settings["max_attempts"] = agent_attempts
    if isolate_agent:
        agent_settings["isolate"] = True
    run_on = executor_settings(executor, ray_address, ray_workers)
    if resume:
        refused = {
            "RUN_FILE": run_file,
            "--data": data,
            "--encoding": encoding,
            "--metric": specs,
            "--agent": agent,
            "--map": mapping,
            "--name": name,
            "--tag": tags,
            "--concurrency": concurrency,
            "--agent-timeout": agent_timeout,
            "--agent-attempts": agent_attempts,
            "--repeats": repeats,
        }
        given = [option for option, value in refused.items() if value]
        if given:
            raise ConfigError(
                f"--resume continues a run with its own data, agent, metrics and tags; {', '.join(given)} "
                "cannot change them (to score a stored run with other metrics use 'clineval score'; "
                "--isolate-agent may be added)"
            )
        gates.check_before_run(store_path, resume=resume)
        if judge_rpm is not None or judge_tpm is not None:
            judge_config = with_judge_limits(
                judge_config or _stored_judge(resume, store_path), judge_rpm, judge_tpm
            )
        if _is_suite_run(resume, store_path):
            outcome = resume_suite_run(
                resume, store_path=store_path, judge=judge_config, quiet=quiet, retry_errors=retry_errors
            )
            _show(outcome.result, group_by, show_cases)
            apply_gates(outcome.result, gates)
            return
        environment_result = _resume_environment_run(
            resume, store_path, judge_config, quiet, retry_errors, run_on
        )
        if environment_result is not None:
            _show(environment_result, group_by, show_cases)
            apply_gates(environment_result, gates)
            return
        result = api.evaluate(
            resume=resume,
            store=store_path,
            judge=judge_config,
            retry_errors=retry_errors,
            progress=progress,
            judge_concurrency=judge_concurrency,
            cache=None if no_cache else api.UNSET,
            executor=run_on.get("executor", api.UNSET),
            ray_address=run_on.get("ray_address", api.UNSET),
            agent_isolate=True if isolate_agent else api.UNSET,  # the rest of the run, in workers
            keep_results=False,  # bounded memory: results stay in the store, the table reads them there
        )
        _show(result, group_by, show_cases)
        apply_gates(result, gates)
        return
    if retry_errors:
        raise ConfigError("--retry-errors goes with --resume RUN_ID")
    if run_file and is_suite_file(run_file):
        given = [
            option
            for option, value in {
                "--data": data,
                "--encoding": encoding,
                "--metric": specs,
                "--agent": agent,
                "--map": mapping,
                "--agent-timeout": agent_timeout,
                "--agent-attempts": agent_attempts,
                "--isolate-agent": isolate_agent,
                "--concurrency": concurrency,
            }.items()
            if value
        ]
        if given:
            raise ConfigError(
                f"{run_file} is a suite: its pipeline, evaluators and cases come from the file; "
                f"{', '.join(given)} cannot change them"
            )
        if run_on.get("executor") == "ray":
            raise ConfigError(f"{run_file} is a suite: suites run in this process, not on Ray (--executor)")
        gates.check_before_run(store_path, metrics=suite_metric_names(run_file))
        outcome = run_suite_file(
            run_file,
            judge=judge_config,
            name=name,
            tags=_pairs(tags, "--tag"),
            store_path=store_path,
            no_cache=no_cache,
            quiet=quiet,
            repeats=repeats,
        )
        _show(outcome.result, group_by, show_cases)
        apply_gates(outcome.result, gates)
        return
    config = load_run_config(run_file) if run_file else RunConfig()
    updates: dict[str, Any] = {}
    if data:
        updates["data"] = str(Path(data).resolve())
    if encoding:
        updates["encoding"] = encoding
    if specs:
        updates["metrics"] = specs
    if agent:
        target = _absolute_target(agent)
        updates["agent"] = (
            config.agent.model_copy(update={"target": target}) if config.agent else AgentConfig(target=target)
        )
    if judge_config is not None:
        updates["judge"] = judge_config
    if mapping:
        updates["mapping"] = {**config.mapping, **_pairs(mapping, "--map")}
    if name:
        updates["name"] = name
    if tags:
        updates["tags"] = {**config.tags, **_pairs(tags, "--tag")}
    if no_cache:
        updates["cache"] = None
    if repeats:
        updates["repeats"] = repeats
    updates.update(run_on)
    if group_by:
        updates["group_by"] = group_by
    if click.get_current_context().get_parameter_source("store_path") is not ParameterSource.DEFAULT:
        updates["store"] = store_path
    config = config.model_copy(update=updates)
    if agent_settings:
        if config.agent is None:
            raise ConfigError(
                "--concurrency, --agent-timeout, --agent-attempts and --isolate-agent need an agent (--agent)"
            )
        config.agent = config.agent.model_copy(update=agent_settings)
    if judge_concurrency:
        config.judge = config.judge.model_copy(update={"concurrency": judge_concurrency})
    config.judge = with_judge_limits(config.judge, judge_rpm, judge_tpm)
    # Validate the assembled configuration once more (options bypass field validation).
    try:
        config = config.revalidated()
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, "options")) from None
    config.check_inputs()  # a dataset, an agent file: each problem located in the run file
    gates.check_before_run(config.store, metrics=expected_metrics(config))
    # bounded memory at any number of cases: the dataset (JSONL) is read line by line, results
    # stay in the store and the printed table and gates read them from there
    result = api.evaluate(config=config, progress=progress, keep_results=False)
    _show(result, config.group_by, show_cases)
    apply_gates(result, gates)


def _stored_judge(run_ref: str, store_path: str) -> JudgeConfig:
    """The judge settings a stored run used (to change only its limits on resume)."""
    from pydantic import ValidationError

    from clineval.config import RunConfig
    from clineval.judges.config import JudgeConfig
    from clineval.store.sqlite import RunStore

    _require_store(store_path)
    with RunStore(store_path, readonly=True) as store:
        record = store.get_run(run_ref)
    judge = record.config.get("judge")
    if not isinstance(judge, dict):
        return JudgeConfig()
    stored = {"judge": judge, "from_environment": record.config.get("from_environment") or []}
    try:
        return RunConfig.from_stored(stored, record.id).judge
    except ValidationError as exc:
        raise ConfigError(f"run {record.id}: its stored judge settings cannot be read: {exc}") from None


def _resume_environment_run(
    run_ref: str,
    store_path: str,
    judge: JudgeConfig | None,
    quiet: bool,
    retry_errors: bool,
    run_on: dict[str, Any] | None = None,
) -> EvalResult | None:
    """Resume a radiology-benchmark or conversation-simulation run (None for other runs)."""
    from clineval.store.sqlite import RunStore

    with RunStore(store_path, readonly=True) as store:
        record = store.get_run(run_ref)
    kind = (record.config.get("environment") or {}).get("kind")
    progress = None if not quiet else False
    if kind == "radbench":
        from clineval.environments.radbench.runner import bench_settings_of, run_bench

        settings = bench_settings_of(record.config)
        assert settings is not None
        return run_bench(
            settings,
            store=store_path,
            resume=record.id,
            retry_errors=retry_errors,
            progress=progress,
            **(run_on or {}),
        )
    if kind == "conversations.simulate":
        from clineval.conversations.simulate import simulate_and_score

        return simulate_and_score(
            None, store=store_path, progress=progress, resume=record.id, judge=judge, **(run_on or {})
        )
    return None


def _is_suite_run(run_ref: str, store_path: str) -> bool:
    from clineval.store.sqlite import RunStore
    from clineval.suites.runner import is_suite_record

    _require_store(store_path)
    with RunStore(store_path, readonly=True) as store:
        return is_suite_record(store.get_run(run_ref))


def _absolute_target(target: str) -> str:
    """``file.py:name`` given on the command line, with the file's absolute path (kept for resume)."""
    module, sep, attr = target.rpartition(":")
    if sep and module.endswith(".py") and not Path(module).is_absolute():
        return f"{Path(module).resolve()}:{attr}"
    return target


@cli.command()
@click.argument("run_ref")
@metric_option(required=True)
@click.option("--judge", "-j", help="Judge for judge-based metrics.")
@click.option("--judge-concurrency", type=click.IntRange(1, 1024))
@judge_limit_options
@click.option("--name", help="A name for the new run.")
@click.option("--tag", "tags", multiple=True, help="KEY=VALUE tag (repeatable).")
@click.option("--no-cache", is_flag=True)
@click.option("--group-by", help="Also show aggregates grouped by this metadata field.")
@click.option("--quiet", "-q", is_flag=True)
@store_option
@friendly
def score(
    run_ref: str,
    metric_opts: tuple[str, ...],
    judge: str | None,
    judge_concurrency: int | None,
    judge_rpm: float | None,
    judge_tpm: float | None,
    name: str | None,
    tags: tuple[str, ...],
    no_cache: bool,
    group_by: str | None,
    quiet: bool,
    store_path: str,
) -> None:
    """Score a stored run's outputs with other metrics (a new run; the agent is not called)."""
    from clineval import api
    from clineval.config import DEFAULT_CACHE
    from clineval.judges.config import JudgeConfig

    specs = metric_specs(metric_opts)
    judge_config = judge_option(judge)
    if judge_rpm is not None or judge_tpm is not None:
        judge_config = with_judge_limits(judge_config or JudgeConfig(), judge_rpm, judge_tpm)
    result = api.rescore(
        run_ref,
        specs,
        judge=judge_config,
        store=store_path,
        cache=None if no_cache else DEFAULT_CACHE,
        name=name,
        tags=_pairs(tags, "--tag"),
        judge_concurrency=judge_concurrency,
        progress=None if not quiet else False,
        keep_results=False,  # bounded memory: cases read and results written a chunk at a time
    )
    _show(result, group_by, False)


@cli.command()
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(1))
@click.option(
    "--tag", "tags", multiple=True, help="Only runs with this KEY=VALUE tag (repeatable; all must match)."
)
@click.option("--name", help="Only runs whose name contains this text (case-insensitive).")
@store_option
@friendly
def runs(limit: int, tags: tuple[str, ...], name: str | None, store_path: str) -> None:
    """List stored runs, newest first."""
    from clineval.results import render
    from clineval.store import DEFAULT_STORE as default_store
    from clineval.store.sqlite import RunStore

    wanted = _pairs(tags, "--tag")
    if not Path(store_path).exists():
        out.print(f"No runs yet ({store_path} does not exist).")
        return
    with RunStore(store_path, readonly=True) as store:
        records = store.list_runs(None if wanted or name else limit)
        records = [r for r in records if _run_matches(r, wanted, name)][:limit]
        stopped = {r.id for r in records if store.is_stopped(r)}
    if not records:
        out.print("No run matches the filters." if wanted or name else "No runs yet.")
        return
    out.print(render.runs_table(records, stopped=stopped))
    if stopped:
        where = "" if store_path == default_store else f" --store {store_path}"
        first = next(r.id for r in records if r.id in stopped)
        out.print(
            f"stopped: its process ended before the run finished (killed?); what it finished is "
            f"saved. Continue with: clineval run --resume {first}{where}",
            highlight=False,
            soft_wrap=True,
        )


def _run_matches(run: RunRecord, tags: dict[str, str], name: str | None) -> bool:
    """True when the run has every tag and its name contains ``name`` (case-insensitive)."""
    if any(run.tags.get(key) != value for key, value in tags.items()):
        return False
    return name is None or name.casefold() in (run.name or "").casefold()


@cli.command()
@click.argument("run_ref", required=False)
@click.option("--group-by", help="Also show aggregates grouped by this metadata field.")
@click.option("--cases", "show_cases", is_flag=True, help="Show the per-case score table.")
@click.option(
    "--limit",
    "case_limit",
    default=100,
    show_default=True,
    type=click.IntRange(0),
    help="With --cases: show this many cases (0: every case, streamed).",
)
@click.option(
    "--offset", "case_offset", default=0, type=click.IntRange(0), help="With --cases: skip this many."
)
@click.option("--all-sub-scores", is_flag=True, help="Show every sub-score row, not only the first few.")
@click.option(
    "--by",
    "by_period",
    type=click.Choice(["day", "hour"]),
    help="Traffic trends instead: each metric's mean per day or hour of the conversations' start, "
    "by agent, with the worst conversations (every source=traces run, or RUN_REF).",
)
@click.option("--worst", default=3, show_default=True, type=click.IntRange(0), help="With --by: per period.")
@gate_options
@store_option
@friendly
def show(
    run_ref: str | None,
    group_by: str | None,
    show_cases: bool,
    case_limit: int,
    case_offset: int,
    all_sub_scores: bool,
    by_period: str | None,
    worst: int,
    gates: GateOptions,
    store_path: str,
) -> None:
    """Show a stored run: provenance, aggregates, unscored reasons (RUN_REF: id, 'latest', name or id prefix).

    The gate options check the stored run as `clineval run` checks a new one (exit 1 when
    a gate fails), e.g. in a CI job that did not run the evaluation itself.
    """
    from rich.table import Table

    from clineval import api
    from clineval.results import render

    _require_store(store_path)
    if by_period is not None:
        from clineval.results.trends import compute_trends

        trends = compute_trends(store_path, run_ref=run_ref, by=by_period, worst=worst)  # type: ignore[arg-type]
        render.print_trends(trends, out)
        return
    run_ref = run_ref or "latest"
    result = api.load_run(run_ref, store=store_path, lazy=True)
    if gates.active:
        gates.check_before_run(store_path, resume=result.run.id)
    run_ = result.run
    details = Table.grid(padding=(0, 2))
    details.add_row("created", render._when(run_.created_at))
    details.add_row("finished", render._when(run_.finished_at))
    details.add_row(
        "dataset",
        f"{run_.dataset.source} ({run_.dataset.n_cases} cases, fingerprint {run_.dataset.fingerprint})",
    )
    if run_.git:
        details.add_row("commit", run_.git.commit + (" (uncommitted changes)" if run_.git.dirty else ""))
    if run_.source_run_id:
        details.add_row("rescored from", run_.source_run_id)
    details.add_row("clineval", f"{run_.clineval_version}, Python {run_.python}, {run_.platform}")
    out.print(details)
    if not gates.active:  # with gates, apply_gates refuses an incomplete run (exit 2) instead
        warn_if_incomplete(store_path, run_.id)
    _show(
        result, group_by, show_cases, all_sub_scores, case_offset=case_offset, case_limit=case_limit or None
    )
    if "calibration" in run_.tags:
        store_hint = "" if store_path.endswith(".clineval/clineval.db") else f" --store {store_path}"
        out.print(
            "A calibration run: its agreement with clinicians: "
            f"clineval calibrate --from {run_.id}{store_hint}",
            highlight=False,
            soft_wrap=True,
        )
    if gates.active:
        apply_gates(result, gates)


@cli.command(name="export")
@click.argument("run_ref", default="latest")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "json", "csv", "long-csv", "trials-csv"]),
    default="jsonl",
    show_default=True,
    help="jsonl: one case per line with all scores; json: one document with the run record, "
    "the aggregates and the cases; csv: one row per case; "
    "long-csv: one row per (case, metric); trials-csv (runs with --repeats): one row per "
    "(case, trial, metric).",
)
@click.option(
    "--out",
    "-o",
    "out_path",
    type=click.Path(dir_okay=False),
    help="Output file (default: <run>.<ext> in the working directory; '-' for stdout).",
)
@store_option
@friendly
def export_cmd(run_ref: str, fmt: str, out_path: str | None, store_path: str) -> None:
    """Export a run's cases, outputs and scores."""
    from clineval import api
    from clineval.results.export import export_run

    _require_store(store_path)
    result = api.load_run(run_ref, store=store_path, lazy=True)
    ext = fmt if fmt in ("jsonl", "json") else "csv"
    if fmt == "trials-csv" and result.repeats == 1:
        raise ConfigError(f"run {result.run.id} has no repeated trials (--repeats); use --format long-csv")
    target = out_path or f"{result.run.id}.{ext}"
    try:
        export_run(result, fmt, sys.stdout if target == "-" else Path(target))
    except OSError as exc:
        message = cannot_write("--out", target, exc)
        if out_path is None:
            message += " (or '-o -' for standard output)"
        raise ConfigError(message) from None
    if target != "-":
        err.print(f"wrote {target}")


@cli.command(name="metrics")
@friendly
def metrics_cmd() -> None:
    """List the metric catalogue with one-line definitions."""
    from rich.table import Table

    from clineval.metrics.registry import SYNONYMS, catalogue

    table = Table(header_style="bold")
    table.add_column("metric", no_wrap=True)
    table.add_column("needs")
    table.add_column("judge")
    table.add_column("definition")
    for entry in catalogue():
        table.add_row(
            entry.name,
            ", ".join(entry.requires) or "–",
            "yes" if entry.needs_judge else "",
            entry.description,
        )
    out.print(table)
    out.print("Settings: NAME(key=value, ...); your own metrics: 'package.module:Name' or 'file.py:name'.")
    by_source: dict[str, list[str]] = {}
    for synonym in SYNONYMS.values():
        by_source.setdefault(synonym.source, []).append(f"{synonym.name} = {synonym}")
    for source, names in by_source.items():
        out.print(f"Also accepted, {source}'s names: {'; '.join(names)}.", highlight=False)


def main() -> None:
    """The ``clineval`` command. It ends once its output is printed, even when agent calls are
    stuck (see :func:`clineval.interrupts.finish`); SIGTERM stops it as Ctrl-C does (see
    :func:`clineval.interrupts.run_command`)."""
    from clineval.interrupts import run_command

    run_command(cli)  # an interrupt anywhere: "interrupted", 130 (143), never click's "Aborted!"


if __name__ == "__main__":  # pragma: no cover
    main()
