"""``clineval radbench``: the radiology agent benchmark (RadA-BenchPlat) from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.table import Table

from clineval import api
from clineval.cli.common import (
    _require_store,
    cannot_write,
    err,
    executor_options,
    executor_settings,
    friendly,
    out,
    store_option,
    write_text_file,
)
from clineval.environments.radbench.vocab import CONDITIONS, TASKS
from clineval.errors import ConfigError
from clineval.results import render
from clineval.store.sqlite import RunStore

SUMMARY_METRICS = (
    "completion",
    "ld_plan_gt",
    "ld_exec_gt",
    "fdr_exec",
    "tma_exec",
    "ots",
    "ecr",
    "pfsp",
    "thr",
    "mhr",
    "token_f1",
    "uar",
    "ugr",
)

#: Short column titles of the summary tables (the metric names are in docs/radbench.md).
HEADERS = {
    "completion": "done",
    "ld_plan_gt": "LD plan",
    "ld_exec_gt": "LD exec",
    "ld_plan_exec": "LD p-e",
    "fdr_exec": "FDR",
    "tma_exec": "TMA",
    "ots": "OTS",
    "ecr": "ECR",
    "pfsp": "PFSP",
    "thr": "THR",
    "mhr": "MHR",
    "token_f1": "F1",
    "uar": "UAR",
    "ugr": "UGR",
}


@click.group(name="radbench")
def radbench_group() -> None:
    """The radiology agent benchmark: records, tool-set conditions, agent cores, metrics (RadA-BenchPlat)."""


_RECORDS_PER_PAIR_HELP = (
    "The larger combined record set: N distinct records per anatomy-modality pair "
    "(scenario, side, history, complaint); instead of -n."
)


def _records_per_pair_only(records_per_pair: int | None, option: str = "--n-records") -> None:
    """-n and --records-per-pair choose two different record sets: not both."""
    ctx = click.get_current_context()
    if records_per_pair is not None and ctx.get_parameter_source("n_records") == ParameterSource.COMMANDLINE:
        raise ConfigError(f"--records-per-pair and {option} choose different record sets; give one of them")


@radbench_group.command(name="generate")
@click.option("--n-records", "-n", default=22, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--records-per-pair", type=click.IntRange(1, 1_000), help=_RECORDS_PER_PAIR_HELP)
@click.option("--seed", default=0, show_default=True, type=int)
@click.option(
    "--out", "-o", "out_path", required=True, type=click.Path(dir_okay=False), help="JSONL file to write."
)
@friendly
def generate_command(n_records: int, records_per_pair: int | None, seed: int, out_path: str) -> None:
    """Generate synthetic records with their 11 questions (JSONL, the published record keys)."""
    from clineval.environments.radbench.questions import questions_for
    from clineval.environments.radbench.records import (
        RecordBank,
        generate_record_set,
        generate_records,
        save_records,
    )
    from clineval.environments.radbench.runner import episode_seed

    _records_per_pair_only(records_per_pair)
    if records_per_pair is not None:
        try:
            records = generate_record_set(records_per_pair, seed=seed)
        except ValueError as exc:
            raise ConfigError(f"--records-per-pair: {exc}") from None
    else:
        records = generate_records(n_records, seed=seed)
    qa = {r.id: questions_for(r, seed=episode_seed(seed, r.id, "questions")) for r in records}
    try:
        save_records(Path(out_path), RecordBank(records=records, qa=qa))
    except OSError as exc:
        raise ConfigError(cannot_write("--out", out_path, exc)) from None
    pairs = len({(r.anatomy, r.modality) for r in records})
    err.print(
        f"wrote {out_path}: {len(records)} records over {pairs} anatomy-modality pairs, 11 questions each"
    )


def _llm_settings(
    judge: str | None,
    mode: str,
    self_reflection: bool,
    few_shot: bool,
    max_revisions: int | None = None,
    backprop: str | None = None,
) -> dict[str, Any] | None:
    if judge is None:
        return None
    settings: dict[str, Any] = {
        "judge": judge,
        "mode": mode,
        "self_reflection": self_reflection,
        "few_shot": few_shot,
    }
    if max_revisions is not None:
        settings["max_revisions"] = max_revisions
    if backprop is not None:
        from clineval.environments.radbench.cores.backprop import load_guidance

        settings["guidance"] = load_guidance(backprop).model_dump(mode="json")
    return settings


@radbench_group.command(name="run")
@click.option(
    "--core",
    type=click.Choice(["oracle", "greedy", "random", "llm"]),
    default="oracle",
    show_default=True,
    help="Agent core: the reference cores run offline; llm needs --judge.",
)
@click.option("--judge", "-j", help="For --core llm: openai:MODEL[@BASE_URL] or azure[:DEPLOYMENT].")
@click.option("--mode", type=click.Choice(["single", "multi"]), default="single", show_default=True)
@click.option(
    "--self-reflection", is_flag=True, help="LLM core: reflect on inputs, scope and labels before each call."
)
@click.option("--few-shot", is_flag=True, help="LLM core: include worked examples in the prompts.")
@click.option(
    "--max-revisions",
    type=click.IntRange(0, 5),
    help="LLM core with --self-reflection: revisions the verifier may ask for per reply "
    "(default 2; 0: no verifier).",
)
@click.option(
    "--backprop",
    type=click.Path(dir_okay=False, exists=True),
    help="LLM core: guidance learned by 'clineval radbench backprop' (YAML).",
)
@click.option(
    "--condition",
    "conditions",
    multiple=True,
    type=click.Choice(list(CONDITIONS)),
    help="Tool-set condition, repeatable (default: all 8).",
)
@click.option(
    "--task", "tasks", multiple=True, help="Task key (e.g. 0126) or number 1-11, repeatable (default: all)."
)
@click.option("--n-records", "-n", default=10, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--records-per-pair", type=click.IntRange(1, 1_000), help=_RECORDS_PER_PAIR_HELP)
@click.option("--records", "records_file", type=click.Path(dir_okay=False, exists=True), help="Records file.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option(
    "--trials",
    default=1,
    show_default=True,
    type=click.IntRange(1, 100),
    help="Run each episode N times (RadA-BenchPlat: 5); tables show per-episode means and the spread.",
)
@click.option(
    "--temperature",
    type=click.FloatRange(0, 2),
    help="LLM core: sampling temperature (default: the endpoint's); above 0 for trials that differ.",
)
@click.option("--step-limit", default=20, show_default=True, type=click.IntRange(1, 500))
@click.option("--auto-build", is_flag=True, help="Build a missing tool after a well-specified NoCall.")
@click.option(
    "--build-from",
    type=click.Choice(["fields", "request"]),
    default="fields",
    show_default=True,
    help="With --auto-build: build from the NoCall's fields, or from its natural-language <Request>.",
)
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1, 1024))
@click.option("--name", help="A name for the run.")
@click.option("--tag", "tags", multiple=True, help="KEY=VALUE tag (repeatable).")
@click.option("--resume", help="Continue an interrupted benchmark run (id, prefix or 'latest').")
@click.option("--retry-errors", is_flag=True, help="With --resume: run failed episodes again.")
@click.option("--quiet", "-q", is_flag=True)
@executor_options
@store_option
@friendly
def run_command(
    core: str,
    judge: str | None,
    mode: str,
    self_reflection: bool,
    few_shot: bool,
    max_revisions: int | None,
    backprop: str | None,
    conditions: tuple[str, ...],
    tasks: tuple[str, ...],
    n_records: int,
    records_per_pair: int | None,
    records_file: str | None,
    seed: int,
    trials: int,
    temperature: float | None,
    step_limit: int,
    auto_build: bool,
    build_from: str,
    concurrency: int,
    name: str | None,
    tags: tuple[str, ...],
    resume: str | None,
    retry_errors: bool,
    quiet: bool,
    executor: str | None,
    ray_address: str | None,
    ray_workers: int | None,
    store_path: str,
) -> None:
    """Run a core over records x tasks x conditions; stored as an ordinary run."""
    from clineval.environments.radbench.runner import bench_settings_of, run_bench, settings_from_options

    progress = None if not quiet else False
    run_on = executor_settings(executor, ray_address, ray_workers)
    if resume:
        _require_store(store_path)
        with RunStore(store_path) as store:
            record = store.get_run(resume)
        settings = bench_settings_of(record.config)
        if settings is None:
            raise ConfigError(
                f"run {record.id} is not a radbench run; resume it with 'clineval run --resume'"
            )
        result = run_bench(
            settings,
            store=store_path,
            resume=record.id,
            retry_errors=retry_errors,
            progress=progress,
            **run_on,
        )
    else:
        if core == "llm" and not judge:
            raise ConfigError("--core llm needs --judge openai:MODEL[@BASE_URL] (or azure[:DEPLOYMENT])")
        if core != "llm" and judge:
            raise ConfigError("--judge applies to --core llm only")
        if core != "llm" and (backprop or max_revisions is not None or temperature is not None):
            raise ConfigError("--backprop, --max-revisions and --temperature apply to --core llm only")
        _records_per_pair_only(records_per_pair)
        llm = _llm_settings(judge, mode, self_reflection, few_shot, max_revisions, backprop)
        if llm is not None and temperature is not None:
            llm["temperature"] = temperature
        settings = settings_from_options(
            core=core,
            conditions=conditions,
            tasks=tasks,
            n_records=n_records,
            records_file=str(Path(records_file).resolve()) if records_file else None,
            seed=seed,
            trials=trials,
            step_limit=step_limit,
            auto_build=auto_build,
            llm=llm,
            records_per_pair=records_per_pair,
            build_from=build_from,
        )
        tag_map = {}
        for item in tags:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"--tag {item!r}: expected KEY=VALUE")
            tag_map[key.strip()] = value.strip()
        result = run_bench(
            settings,
            store=store_path,
            name=name,
            tags=tag_map,
            concurrency=concurrency,
            progress=progress,
            **run_on,
        )
    out.print(render.run_header(result.run))
    for grouping in (("condition",), ("complexity",)):
        for table in summary_tables(result, grouping):
            out.print(table)
    out.print(
        "[dim]done: task completion; LD: Levenshtein distance of the planned / executed chain to the ground "
        "truth; FDR, TMA: of the executed chain; OTS: optimal tool score; ECR: execution completion; PFSP: "
        "pre-failure success; THR, MHR: target and milestone hit; F1: answer token F1; UAR, UGR: "
        "unsolvability awareness and grounding (docs/radbench.md).[/]"
    )
    failed = sum(1 for c in result.cases if c.agent_run is not None and c.agent_run.failed)
    if failed:
        err.print(f"[yellow]{failed} episode(s) could not run; see clineval show {result.run.id} --cases[/]")
    out.print(
        f"Saved as run {result.run.id}. More groupings: clineval radbench summary {result.run.id} --by task",
        highlight=False,
    )


@radbench_group.command(name="backprop")
@click.option(
    "--judge", "-j", required=True, help="The core's model: openai:MODEL[@BASE_URL] or azure[:DEPLOYMENT]."
)
@click.option("--optimiser", help="The model that writes the guidance (default: the core's).")
@click.option("--mode", type=click.Choice(["single", "multi"]), default="single", show_default=True)
@click.option("--self-reflection", is_flag=True, help="The core reflects (and is verified) before each call.")
@click.option("--few-shot", is_flag=True, help="The core's prompts include worked examples.")
@click.option("--rounds", default=3, show_default=True, type=click.IntRange(1, 20))
@click.option(
    "--condition",
    "conditions",
    multiple=True,
    type=click.Choice(list(CONDITIONS)),
    help="Tool-set condition, repeatable (default: baseline and the three insufficient ones).",
)
@click.option("--task", "tasks", multiple=True, help="Task key or number, repeatable (default: all).")
@click.option("--n-records", "-n", default=2, show_default=True, type=click.IntRange(1, 100_000))
@click.option(
    "--seed",
    default=1,
    show_default=True,
    type=int,
    help="Records to learn on; evaluate on others (run's default seed is 0).",
)
@click.option("--step-limit", default=20, show_default=True, type=click.IntRange(1, 500))
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 256))
@click.option("--start", type=click.Path(dir_okay=False, exists=True), help="Guidance to start from (YAML).")
@click.option(
    "--out", "-o", "out_path", required=True, type=click.Path(dir_okay=False), help="YAML to write."
)
@friendly
def backprop_command(
    judge: str,
    optimiser: str | None,
    mode: str,
    self_reflection: bool,
    few_shot: bool,
    rounds: int,
    conditions: tuple[str, ...],
    tasks: tuple[str, ...],
    n_records: int,
    seed: int,
    step_limit: int,
    concurrency: int,
    start: str | None,
    out_path: str,
) -> None:
    """Prompt back-propagation: learn guidance for the LLM core from the episodes it fails.

    Each round runs the episodes with the current guidance and asks the optimiser model to
    revise the guidance from the failures. Review the written file, then evaluate with
    'clineval radbench run --core llm --backprop FILE' on other records.
    """
    from clineval.environments.radbench.cores.backprop import (
        Guidance,
        RoundReport,
        load_guidance,
        save_guidance,
    )
    from clineval.environments.radbench.runner import optimise, settings_from_options
    from clineval.interrupts import run_sync

    settings = settings_from_options(
        core="llm",
        conditions=conditions or ("baseline", "insufficient_1", "insufficient_2", "insufficient_3"),
        tasks=tasks,
        n_records=n_records,
        records_file=None,
        seed=seed,
        step_limit=step_limit,
        auto_build=False,
        llm=_llm_settings(judge, mode, self_reflection, few_shot),
    )

    def report(item: RoundReport, guidance: Guidance | None) -> None:
        version = guidance.version if guidance is not None else "none"
        err.print(
            f"round {item.round}: {item.episodes} episodes, {item.failures} failed "
            f"(done {item.completion:.3f}); guidance {version}"
        )

    first = load_guidance(start) if start else None
    guidance = run_sync(
        optimise(
            settings,
            rounds=rounds,
            start=first,
            optimiser=optimiser,
            concurrency=concurrency,
            on_round=report,
        )
    )
    if guidance is None:
        err.print("no episode failed: nothing to learn, no file written")
        return
    try:
        save_guidance(out_path, guidance)
    except OSError as exc:
        raise ConfigError(cannot_write("--out", out_path, exc)) from None
    out.print(
        f"wrote {out_path} (guidance {guidance.version}); review it, then: clineval radbench run --core llm "
        f"--judge {judge} --backprop {out_path}",
        highlight=False,
    )


def _auto_build(result: Any) -> bool:
    from clineval.environments.radbench.runner import bench_settings_of

    settings = bench_settings_of(result.run.config)
    return bool(settings and settings.auto_build)


def _report_rows(result: Any) -> list[Any]:
    from clineval.environments.radbench.stats import run_rows

    return run_rows(result)


def _covers(rows: list[Any], scope: str, auto_build: bool) -> str:
    conditions = {str(meta.get("condition")) for meta, _ in rows if meta.get("scope") == scope}
    text = f"{len(conditions)} {scope}"
    return text + ", built" if scope == "insufficient" and auto_build else text


def summary_tables(
    result: Any, by: tuple[str, ...], metrics: tuple[str, ...] = SUMMARY_METRICS
) -> list[Table]:
    """The table of means per group (:func:`summary_table`), and for a run of several trials
    the same table of their spread: the standard deviation over the trials of each mean."""
    from clineval.environments.radbench.stats import report_by, summarise

    rows = _report_rows(result)
    summary = summarise(rows, by=report_by(by), metrics=list(metrics))
    tables = [summary_table(result, by, metrics, rows=rows, summary=summary)]
    if max((row.trials for row in summary), default=1) > 1:
        tables.append(summary_table(result, by, metrics, rows=rows, summary=summary, value="trial_sd"))
    return tables


def summary_table(
    result: Any,
    by: tuple[str, ...],
    metrics: tuple[str, ...] = SUMMARY_METRICS,
    *,
    rows: list[Any] | None = None,
    summary: list[Any] | None = None,
    value: str = "mean",
) -> Table:
    """Means of the key metrics per group (``value="trial_sd"``: their standard deviation
    over trials). Task completion is over the solvable conditions (and the insufficient
    ones only with automated tool building); a grouping other than by condition is split
    by scope, with a column saying which conditions each row covers. With trials, each
    episode counts once, as the mean of its trials."""
    from clineval.environments.radbench.stats import report_by, summarise

    rows = _report_rows(result) if rows is None else rows
    auto_build = _auto_build(result)
    grouping = report_by(by)
    if summary is None:
        summary = summarise(rows, by=grouping, metrics=list(metrics))
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in summary:
        groups.setdefault(tuple(row.group), {})[row.metric] = row
    trials = max((row.trials for row in summary), default=1)
    title = f"By {' and '.join(by)}"
    if value == "trial_sd":
        title += f": standard deviation over {trials} trials of each mean"
    elif trials > 1:
        title += f": means over episodes, each episode the mean of its {trials} trials"
    table = Table(title=title, header_style="bold", title_justify="left")
    for name in by:
        table.add_column(name, no_wrap=True)
    scoped = "scope" in grouping and "scope" not in by
    if scoped:
        table.add_column("conditions", no_wrap=True)
    for metric in metrics:
        table.add_column(HEADERS.get(metric, metric), justify="right")
    order = {c: i for i, c in enumerate(CONDITIONS)} | {"simple": 0, "moderate": 1, "complex": 2}
    order |= {t.key: i for i, t in enumerate(TASKS)} | {"solvable": 0, "insufficient": 1}
    for group in sorted(groups, key=lambda g: [(order.get(x, 99), x) for x in g]):
        cells = []
        for metric in metrics:
            found = groups[group].get(metric)
            shown = None if found is None else getattr(found, value)
            cells.append("–" if shown is None else f"{shown:.3f}")
        if scoped:
            table.add_row(*group[:-1], _covers(rows, group[-1], auto_build), *cells)
        else:
            table.add_row(*group, *cells)
    if scoped:

        def conditions(scope: str) -> list[str]:
            names = {str(m.get("condition")) for m, _ in rows if m.get("scope") == scope}
            return sorted(names, key=lambda c: order.get(c, 99))

        solvable, unsolvable = conditions("solvable"), conditions("insufficient")
        parts = []
        if solvable:
            parts.append(f"solvable: {', '.join(solvable)} (done, LD ... MHR, F1)")
        if unsolvable:
            done = "done after automated tool building, " if auto_build else ""
            parts.append(f"insufficient: {', '.join(unsolvable)} ({done}UAR, UGR)")
        table.caption = "; ".join(parts)
        table.caption_justify = "left"
    return table


def _mean_sd(mean: float | None, sd: float | None) -> str:
    """A mean, with the spread over trials when there is one (``0.640 ±0.021``)."""
    if mean is None:
        return "–"
    return f"{mean:.3f}" if sd is None else f"{mean:.3f} ±{sd:.3f}"


def _run_label(result: Any) -> str:
    from clineval.environments.radbench.runner import bench_settings_of

    settings = bench_settings_of(result.run.config)
    core: str = settings.core if settings else "?"
    if settings and settings.core == "llm" and settings.llm:
        llm = settings.llm
        core = str(llm.get("judge") or "llm")
        extras = [
            str(llm.get("mode")) if llm.get("mode") == "multi" else "",
            "reflect" if llm.get("self_reflection") else "",
            "few-shot" if llm.get("few_shot") else "",
        ]
        core = " ".join([core, *[f"+{e}" for e in extras if e]])
    name = result.run.name
    if name and name != f"radbench {settings.core if settings else ''}":
        return str(name)
    return core


def _runs_side_by_side(
    results: list[Any], by: tuple[str, ...], metrics: tuple[str, ...], json_path: str | None
) -> None:
    from clineval.environments.radbench.runner import bench_settings_of
    from clineval.environments.radbench.stats import compare_runs, report_by

    labels = [_run_label(r) for r in results]
    if len(set(labels)) < len(labels):  # the same core twice: tell them apart by run id
        labels = [
            f"{label} ({r.run.id})" if labels.count(label) > 1 else label
            for label, r in zip(labels, results, strict=True)
        ]
    runs = []
    for label, result in zip(labels, results, strict=True):
        rows = _report_rows(result)
        if not rows:
            raise ConfigError(f"run {result.run.id} has no benchmark results")
        runs.append((label, rows))
    settings = [bench_settings_of(r.run.config) for r in results]
    sources = {(s.seed, s.records_file) for s in settings if s is not None}
    if len(sources) > 1:
        err.print(
            "[yellow]note:[/] the runs were made with a different --seed or records file; episodes are "
            "paired by case id (record/task/condition), which then may name different records"
        )
    try:
        comparison = compare_runs(runs, by=report_by(by), metrics=list(metrics))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if json_path:
        text = comparison.model_dump_json(indent=2)
        if json_path == "-":
            click.echo(text)
            return
        write_text_file(json_path, text, "--json")
    for label, result in zip(labels, results, strict=True):
        out.print(f"[bold]{label}[/]: {render.run_header(result.run)}", highlight=False)
    out.print(f"{comparison.common_cases} episode(s) in every run.", highlight=False)
    for family in comparison.families:
        out.print(_family_table(comparison.by, family, comparison.runs))
        tests = _tests_table(comparison.by, family)
        if tests is not None:
            out.print(tests)
    out.print(
        "[dim]Cells: mean [95% bootstrap CI] (n episodes when it differs between runs). Tests: B against A "
        "on the episodes both runs have (same record, task, condition); Δ = B − A; W/T/L: episodes where B "
        "is better / tied / worse (lower is better for LD, FDR, false refusal); two-sided Wilcoxon "
        "signed-rank, ties dropped; p Holm: adjusted over every test of the family's table. Task completion "
        "is over the "
        "solvable conditions (insufficient ones only with --auto-build); UAR, UGR over the insufficient "
        "ones. With trials, an episode is the mean of its trials (n counts episodes; ±: standard deviation "
        "over the trials of the mean).[/]"
    )


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _group_columns(table: Table, by: tuple[str, ...]) -> None:
    for name in by:
        table.add_column("conditions" if name == "scope" else name, no_wrap=True)
    table.add_column("metric", no_wrap=True)


def _family_table(by: tuple[str, ...], family: Any, labels: list[str]) -> Table:
    table = Table(title=f"{family.family}: mean [95% CI] per core", header_style="bold", title_justify="left")
    _group_columns(table, by)
    for label in labels:
        table.add_column(label, justify="right")
    previous: tuple[str, ...] | None = None
    for row in family.rows:
        counts = {cell.n for cell in row.runs}
        cells = []
        for cell in row.runs:
            if cell.mean is None:
                cells.append("–")
                continue
            ci = "" if cell.ci_low is None else f" [{cell.ci_low:.2f}, {cell.ci_high:.2f}]"
            n = f" n={cell.n}" if len(counts) > 1 else ""
            sd = "" if cell.trial_sd is None else f" ±{cell.trial_sd:.3f}"
            cells.append(f"{cell.mean:.3f}{ci}{sd}{n}")
        group = list(row.group) if row.group != previous else [""] * len(row.group)
        previous = row.group
        table.add_row(*group, HEADERS.get(row.metric, row.metric), *cells)
    return table


def _tests_table(by: tuple[str, ...], family: Any) -> Table | None:
    tests = [t for t in family.tests if t.n_pairs]
    if not tests:
        return None
    table = Table(
        title=f"{family.family}: pairwise Wilcoxon signed-rank over paired episodes, Holm-adjusted",
        header_style="bold",
        title_justify="left",
    )
    _group_columns(table, by)
    for column in ("B vs A", "pairs", "Δ [95% CI]", "W/T/L", "p", "p Holm"):
        table.add_column(column, justify="left" if column == "B vs A" else "right")
    previous: tuple[str, ...] | None = None
    for t in tests:
        ci = "" if t.ci_low is None else f" [{t.ci_low:+.2f}, {t.ci_high:+.2f}]"
        delta = "–" if t.mean_difference is None else f"{t.mean_difference:+.3f}{ci}"
        group = list(t.group) if t.group != previous else [""] * len(t.group)
        previous = t.group
        table.add_row(
            *group,
            HEADERS.get(t.metric, t.metric),
            f"{t.b} vs {t.a}",
            str(t.n_pairs),
            delta,
            f"{t.wins}/{t.ties}/{t.losses}",
            "–" if t.p_value is None else f"{t.p_value:.3g}",
            "–" if t.p_holm is None else f"{t.p_holm:.3g}",
        )
    return table


@radbench_group.command(name="summary")
@click.argument("run_refs", nargs=-1)
@click.option(
    "--by",
    "by",
    multiple=True,
    type=click.Choice(["condition", "complexity", "task", "pair", "anatomy", "modality"]),
    help="Group by (repeatable; default: condition, then complexity; with several runs the first only).",
)
@click.option(
    "--metric",
    "-m",
    "metrics",
    multiple=True,
    help="Metric(s) to show (repeatable; default: a key set, see docs/radbench.md).",
)
@click.option("--json", "json_path", help="Also write the summary as JSON ('-' for stdout only).")
@store_option
@friendly
def summary_command(
    run_refs: tuple[str, ...],
    by: tuple[str, ...],
    metrics: tuple[str, ...],
    json_path: str | None,
    store_path: str,
) -> None:
    """Every benchmark metric of a stored run per condition, complexity, task or pair; with
    several runs, the cores side by side per metric family with pairwise Wilcoxon tests."""
    from clineval.environments.radbench.metrics import METRICS_BY_NAME
    from clineval.environments.radbench.runner import bench_settings_of
    from clineval.environments.radbench.stats import report_by, summarise

    _require_store(store_path)
    for name in metrics:
        if name not in METRICS_BY_NAME:
            raise ConfigError(
                f"--metric {name!r}: not a benchmark metric; use one of {', '.join(METRICS_BY_NAME)}"
            )
    chosen = tuple(dict.fromkeys(metrics)) or SUMMARY_METRICS
    results = []
    seen: set[str] = set()
    for ref in run_refs or ("latest",):
        result = api.load_run(ref, store=store_path)
        if bench_settings_of(result.run.config) is None:
            raise ConfigError(
                f"run {result.run.id} ({ref!r}) is not a radbench run; make one with 'clineval radbench run'"
            )
        if result.run.id in seen:
            raise ConfigError(f"run {result.run.id} is given twice")
        seen.add(result.run.id)
        results.append(result)
    if len(results) > 1:
        _runs_side_by_side(results, by[:1] or ("condition",), chosen, json_path)
        return
    result = results[0]
    groupings = [(b,) for b in by] or [("condition",), ("complexity",)]
    if json_path:
        rows = _report_rows(result)
        payload = {
            " ".join(g): [
                r.model_dump(mode="json")
                for r in summarise(rows, by=report_by(g), metrics=list(metrics) or None)
            ]
            for g in groupings
        }
        text = json.dumps(payload, indent=2)
        if json_path == "-":
            click.echo(text)
            return
        write_text_file(json_path, text, "--json")
    out.print(render.run_header(result.run))
    for group in groupings:
        for table in summary_tables(result, group, chosen):
            out.print(table)


#: What ``clineval radbench compare`` compares unless told (-m).
COMPARE_METRICS = ("completion", "ld_exec_gt", "ld_plan_gt", "ots", "thr", "uar", "ugr")


@radbench_group.command(name="compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--metric", "-m", "metrics", multiple=True, help="Metric(s) to compare (default: a key set).")
@store_option
@friendly
def compare_command(run_a: str, run_b: str, metrics: tuple[str, ...], store_path: str) -> None:
    """Two cores (or prompting strategies) per record: wins, ties, losses and a Wilcoxon signed-rank test.

    The same rows as 'summary': task completion over the solvable conditions (the
    insufficient ones only with --auto-build), UAR and UGR over the insufficient ones;
    repeated trials averaged per episode before the records are paired."""
    from clineval.environments.radbench.metrics import METRICS_BY_NAME
    from clineval.environments.radbench.runner import bench_settings_of
    from clineval.environments.radbench.stats import compare_cores, run_rows

    _require_store(store_path)
    for name in metrics:
        if name not in METRICS_BY_NAME:
            raise ConfigError(
                f"--metric {name!r}: not a benchmark metric; use one of {', '.join(METRICS_BY_NAME)}"
            )
    results = []
    for ref in (run_a, run_b):
        result = api.load_run(ref, store=store_path)
        settings = bench_settings_of(result.run.config)
        if settings is None:
            raise ConfigError(
                f"run {result.run.id} ({ref!r}) is not a radbench run; make one with 'clineval radbench run'"
            )
        results.append((result, settings))
    (a, settings_a), (b, settings_b) = results
    rows_a, rows_b = run_rows(a), run_rows(b)
    if not rows_a or not rows_b:
        empty = a if not rows_a else b
        raise ConfigError(f"run {empty.run.id} has no benchmark results")
    if (settings_a.seed, settings_a.records_file) != (settings_b.seed, settings_b.records_file):
        err.print(
            "[yellow]note:[/] the runs were made with a different --seed or records file; records are paired "
            "by record id, which then may name different records"
        )
    table = Table(
        title=f"B ({b.run.id}) vs A ({a.run.id}), per record", header_style="bold", title_justify="left"
    )
    columns = ("metric", "over", "records", "A", "B", "Δ [95% CI]", "wins", "ties", "losses", "Wilcoxon p")
    for column in columns:
        table.add_column(column, justify="left" if column in ("metric", "over") else "right")
    for metric in dict.fromkeys(metrics) or COMPARE_METRICS:
        comparison = compare_cores(rows_a, rows_b, metric)
        table.add_row(*_comparison_cells(metric, comparison, _over(rows_a + rows_b, metric)))
    out.print(table)
    trials = {settings_a.trials, settings_b.trials}
    spread = (
        f" A ran {settings_a.trials} trial(s), B {settings_b.trials}: each episode is the mean of its "
        "trials; ±: standard deviation over the trials of the run's mean."
        if trials != {1}
        else ""
    )
    out.print(
        "[dim]over: the conditions the metric is averaged over (task completion over the solvable ones, "
        "the insufficient ones only with --auto-build; UAR, UGR over the insufficient ones), as in "
        "'clineval radbench summary'. records: records both runs have a value for; A, B: means over them "
        "of each record's mean. wins: records where B is better than A (lower is better for distances "
        f"and FDR); Wilcoxon signed-rank over the per-record means, ties dropped.{spread}[/]"
    )


def _over(rows: list[Any], metric: str) -> str:
    """Which conditions a metric is averaged over: ``5 solvable``, ``3 insufficient``, or both."""
    from clineval.environments.radbench.stats import scope_of

    found: dict[str, set[str]] = {"solvable": set(), "insufficient": set()}
    for meta, values in rows:
        if values.get(metric) is not None:
            found[scope_of(meta.get("condition"))].add(str(meta.get("condition")))
    parts = [f"{len(names)} {scope}" for scope, names in found.items() if names]
    return " + ".join(parts) or "–"


def _comparison_cells(metric: str, c: Any, over: str) -> list[str]:
    ci = "" if c.ci_low is None else f" [{c.ci_low:+.3f}, {c.ci_high:+.3f}]"
    delta = "–" if c.mean_difference is None else f"{c.mean_difference:+.3f}{ci}"
    return [
        metric,
        over,
        str(c.n_records),
        _mean_sd(c.mean_a, c.sd_a),
        _mean_sd(c.mean_b, c.sd_b),
        delta,
        str(c.wins),
        str(c.ties),
        str(c.losses),
        "–" if c.p_value is None else f"{c.p_value:.3g}",
    ]
