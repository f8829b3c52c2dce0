"""``clineval conversations``: simulate multi-agent conversations and score saved ones
(after the Healthcare Agent Orchestrator's evaluation framework)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from clineval.cli.common import (
    _require_store,
    err,
    executor_options,
    executor_settings,
    friendly,
    gold_option,
    judge_option,
    metric_specs,
    out,
    store_option,
    tag_pairs,
)
from clineval.errors import ConfigError
from clineval.results import render
from clineval.results.result import EvalResult
from clineval.store.sqlite import DEFAULT_STORE


@click.group(name="conversations")
def conversations_group() -> None:
    """Multi-agent conversations: simulate them from scenarios, score saved or real ones.

    After the Healthcare Agent Orchestrator's evaluation framework (Qiu et al.).
    """


def _simulation_summary(result: EvalResult, store_path: str) -> str | None:
    """How many trials finished (and how many were read from saved files), failed; where they are."""
    finished = loaded = failed = 0
    folders: set[str] = set()
    for case in result.cases:
        if case.agent_run is not None and case.agent_run.failed:
            failed += 1
            continue
        output = case.metadata.get("agent_output")
        if not isinstance(output, dict):
            continue
        finished += 1
        if output.get("from_saved"):
            loaded += 1
        saved = output.get("saved")
        if isinstance(saved, str):
            folders.add(str(Path(saved).parent))
    if not (finished or failed):
        return None
    text = f"{finished} conversation(s)"
    if loaded:
        text += f", {loaded} of them read from saved files (not simulated again)"
    if folders:
        text += f"; saved in {', '.join(sorted(folders))}"
    if failed:
        store = "" if store_path == DEFAULT_STORE else f" --store {store_path}"
        text += (
            f"\n[yellow]{failed} trial(s) failed; see clineval show {result.run.id}{store} --cases, then "
            f"continue with: clineval conversations simulate --resume {result.run.id}{store}[/]"
        )
    return text


@conversations_group.command(name="simulate")
@click.argument("config_file", required=False, type=click.Path(dir_okay=False))
@click.option("--trials", type=click.IntRange(1, 1000), help="Trials per scenario (overrides the file).")
@click.option("--judge", "-j", help="Judge for the metrics (overrides the file's judge).")
@click.option("--resume", help="Continue an interrupted simulation run (id, prefix or 'latest').")
@click.option("--group-by", help="Also show aggregates grouped by this metadata field (e.g. scenario).")
@click.option("--cases", "show_cases", is_flag=True, help="Show the per-case score table.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@executor_options
@store_option
@friendly
def simulate_command(
    config_file: str | None,
    trials: int | None,
    judge: str | None,
    resume: str | None,
    group_by: str | None,
    show_cases: bool,
    quiet: bool,
    executor: str | None,
    ray_address: str | None,
    ray_workers: int | None,
    store_path: str,
) -> None:
    """Simulate the conversations of a simulation file (YAML) and score them as a stored run.

    Finished trials are saved in the file's 'out' folder; running again with the same
    folder, or --resume RUN, simulates only the trials that did not finish.
    """
    from clineval.conversations.simulate import load_simulation_config, simulate_and_score

    progress = None if not quiet else False
    judge_config = judge_option(judge)
    run_on = executor_settings(executor, ray_address, ray_workers)
    if resume:
        refused = {"CONFIG_FILE": config_file, "--trials": trials}
        given = [option for option, value in refused.items() if value]
        if given:
            raise ConfigError(
                f"--resume continues a simulation with its own settings; {', '.join(given)} "
                "cannot change them"
            )
        _require_store(store_path)
        result = simulate_and_score(
            None, store=store_path, progress=progress, resume=resume, judge=judge_config, **run_on
        )
    else:
        if not config_file:
            raise ConfigError("give a simulation file (CONFIG_FILE), or --resume RUN")
        config = load_simulation_config(config_file)
        updates: dict[str, Any] = {}
        if trials:
            updates["trials"] = trials
        if updates:
            config = config.model_copy(update=updates)
        result = simulate_and_score(config, store=store_path, progress=progress, judge=judge_config, **run_on)
    render.print_result(result, out, by=group_by, cases=show_cases)
    summary = _simulation_summary(result, store_path)
    if summary:
        err.print(summary, highlight=False, soft_wrap=True)


@conversations_group.command(name="score")
@click.argument("path", type=click.Path(exists=True))
@click.option(
    "--metric",
    "--metrics",
    "-m",
    "metric_opts",
    multiple=True,
    required=True,
    help="Metric spec, repeatable or comma-separated: NAME, NAME(key=value), ALIAS=NAME(...).",
)
@click.option("--judge", "-j", help="Judge for judge-based metrics.")
@click.option("--patient", "patient_id", help="The patient of conversations that do not record one.")
@gold_option
@click.option("--name", help="A name for the run.")
@click.option("--tag", "tags", multiple=True, help="KEY=VALUE tag (repeatable).")
@click.option("--group-by", help="Also show aggregates grouped by this metadata field (e.g. patient_id).")
@click.option("--cases", "show_cases", is_flag=True, help="Show the per-case score table.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@store_option
@friendly
def score_command(
    path: str,
    metric_opts: tuple[str, ...],
    judge: str | None,
    patient_id: str | None,
    gold_path: str | None,
    name: str | None,
    tags: tuple[str, ...],
    group_by: str | None,
    show_cases: bool,
    quiet: bool,
    store_path: str,
) -> None:
    """Score saved conversations (a .json/.jsonl file or a folder of them) as a stored run."""
    from clineval.conversations.gold import load_gold
    from clineval.conversations.simulate import score_conversations

    specs = metric_specs(metric_opts)
    if not specs:
        raise ConfigError("name at least one metric with -m (see 'clineval metrics')")
    gold = load_gold(gold_path) if gold_path else None
    result = score_conversations(
        path,
        specs,
        judge=judge_option(judge),
        store=store_path,
        patient_id=patient_id,
        name=name,
        tags=tag_pairs(tags),
        progress=None if not quiet else False,
        gold=gold,
    )
    render.print_result(result, out, by=group_by, cases=show_cases)
    if gold is not None:
        err.print(gold.summary(), highlight=False, markup=False, soft_wrap=True)
