"""``clineval radbench``: the radiology agent benchmark (RadA-BenchPlat) from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from clineval import api
from clineval.cli.common import (
    _require_store,
    cannot_write,
    err,
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


@radbench_group.command(name="generate")
@click.option("--n-records", "-n", default=22, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--seed", default=0, show_default=True, type=int)
@click.option(
    "--out", "-o", "out_path", required=True, type=click.Path(dir_okay=False), help="JSONL file to write."
)
@friendly
def generate_command(n_records: int, seed: int, out_path: str) -> None:
    """Generate synthetic records with their 11 questions (JSONL, the published record keys)."""
    from clineval.environments.radbench.questions import questions_for
    from clineval.environments.radbench.records import RecordBank, generate_records, save_records
    from clineval.environments.radbench.runner import episode_seed

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
    judge: str | None, mode: str, self_reflection: bool, few_shot: bool
) -> dict[str, Any] | None:
    if judge is None:
        return None
    return {"judge": judge, "mode": mode, "self_reflection": self_reflection, "few_shot": few_shot}


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
@click.option("--records", "records_file", type=click.Path(dir_okay=False, exists=True), help="Records file.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--step-limit", default=20, show_default=True, type=click.IntRange(1, 500))
@click.option("--auto-build", is_flag=True, help="Build a missing tool after a well-specified NoCall.")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1, 1024))
@click.option("--name", help="A name for the run.")
@click.option("--tag", "tags", multiple=True, help="KEY=VALUE tag (repeatable).")
@click.option("--resume", help="Continue an interrupted benchmark run (id, prefix or 'latest').")
@click.option("--retry-errors", is_flag=True, help="With --resume: run failed episodes again.")
@click.option("--quiet", "-q", is_flag=True)
@store_option
@friendly
def run_command(
    core: str,
    judge: str | None,
    mode: str,
    self_reflection: bool,
    few_shot: bool,
    conditions: tuple[str, ...],
    tasks: tuple[str, ...],
    n_records: int,
    records_file: str | None,
    seed: int,
    step_limit: int,
    auto_build: bool,
    concurrency: int,
    name: str | None,
    tags: tuple[str, ...],
    resume: str | None,
    retry_errors: bool,
    quiet: bool,
    store_path: str,
) -> None:
    """Run a core over records x tasks x conditions; stored as an ordinary run."""
    from clineval.environments.radbench.runner import bench_settings_of, run_bench, settings_from_options

    progress = None if not quiet else False
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
            settings, store=store_path, resume=record.id, retry_errors=retry_errors, progress=progress
        )
    else:
        if core == "llm" and not judge:
            raise ConfigError("--core llm needs --judge openai:MODEL[@BASE_URL] (or azure[:DEPLOYMENT])")
        if core != "llm" and judge:
            raise ConfigError("--judge applies to --core llm only")
        settings = settings_from_options(
            core=core,
            conditions=conditions,
            tasks=tasks,
            n_records=n_records,
            records_file=str(Path(records_file).resolve()) if records_file else None,
            seed=seed,
            step_limit=step_limit,
            auto_build=auto_build,
            llm=_llm_settings(judge, mode, self_reflection, few_shot),
        )
        tag_map = {}
        for item in tags:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"--tag {item!r}: expected KEY=VALUE")
            tag_map[key.strip()] = value.strip()
        result = run_bench(
            settings, store=store_path, name=name, tags=tag_map, concurrency=concurrency, progress=progress
        )
    out.print(render.run_header(result.run))
    out.print(summary_table(result, ("condition",)))
    out.print(summary_table(result, ("complexity",)))
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


def summary_table(result: Any, by: tuple[str, ...], metrics: tuple[str, ...] = SUMMARY_METRICS) -> Table:
    """Means of the key metrics per group (n in brackets when not every case applies)."""
    from clineval.environments.radbench.runner import metric_rows
    from clineval.environments.radbench.stats import summarise

    rows = summarise(metric_rows(result), by=by, metrics=list(metrics))
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in rows:
        groups.setdefault(tuple(row.group), {})[row.metric] = row
    table = Table(title=f"By {' and '.join(by)}", header_style="bold", title_justify="left")
    for name in by:
        table.add_column(name, no_wrap=True)
    for metric in metrics:
        table.add_column(HEADERS.get(metric, metric), justify="right")
    order = {c: i for i, c in enumerate(CONDITIONS)} | {"simple": 0, "moderate": 1, "complex": 2}
    order |= {t.key: i for i, t in enumerate(TASKS)}
    for group in sorted(groups, key=lambda g: [(order.get(x, 99), x) for x in g]):
        cells = []
        for metric in metrics:
            found = groups[group].get(metric)
            cells.append("–" if found is None or found.mean is None else f"{found.mean:.3f}")
        table.add_row(*group, *cells)
    return table


@radbench_group.command(name="summary")
@click.argument("run_ref", default="latest")
@click.option(
    "--by",
    "by",
    multiple=True,
    type=click.Choice(["condition", "complexity", "task", "pair", "anatomy", "modality"]),
    help="Group by (repeatable; default: condition, then complexity).",
)
@click.option("--json", "json_path", help="Also write the summary rows as JSON ('-' for stdout only).")
@store_option
@friendly
def summary_command(run_ref: str, by: tuple[str, ...], json_path: str | None, store_path: str) -> None:
    """Every benchmark metric of a stored run per condition, complexity, task or pair."""
    from clineval.environments.radbench.runner import bench_settings_of, metric_rows
    from clineval.environments.radbench.stats import summarise

    _require_store(store_path)
    result = api.load_run(run_ref, store=store_path)
    if bench_settings_of(result.run.config) is None:
        raise ConfigError(f"run {result.run.id} is not a radbench run")
    groupings = [(b,) for b in by] or [("condition",), ("complexity",)]
    if json_path:
        payload = {
            " ".join(g): [r.model_dump(mode="json") for r in summarise(metric_rows(result), by=g)]
            for g in groupings
        }
        text = json.dumps(payload, indent=2)
        if json_path == "-":
            click.echo(text)
            return
        write_text_file(json_path, text, "--json")
    out.print(render.run_header(result.run))
    for group in groupings:
        out.print(summary_table(result, group))


@radbench_group.command(name="compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--metric", "-m", "metrics", multiple=True, help="Metric(s) to compare (default: a key set).")
@store_option
@friendly
def compare_command(run_a: str, run_b: str, metrics: tuple[str, ...], store_path: str) -> None:
    """Two cores (or prompting strategies) per record: wins, ties, losses and a Wilcoxon signed-rank test."""
    from clineval.environments.radbench.runner import metric_rows
    from clineval.environments.radbench.stats import compare_cores

    _require_store(store_path)
    a = api.load_run(run_a, store=store_path)
    b = api.load_run(run_b, store=store_path)
    rows_a, rows_b = metric_rows(a), metric_rows(b)
    table = Table(
        title=f"B ({b.run.id}) vs A ({a.run.id}), per record", header_style="bold", title_justify="left"
    )
    for column in ("metric", "records", "A", "B", "Δ [95% CI]", "wins", "ties", "losses", "Wilcoxon p"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for metric in metrics or ("completion", "ld_exec_gt", "ld_plan_gt", "ots", "thr", "uar", "ugr"):
        comparison = compare_cores(rows_a, rows_b, metric)
        table.add_row(*_comparison_cells(metric, comparison))
    out.print(table)
    out.print(
        "[dim]wins: records where B is better than A (lower is better for distances and FDR); "
        "Wilcoxon signed-rank over per-record means.[/]"
    )
    if not rows_a or not rows_b:
        err.print("one of the runs has no benchmark results")
        sys.exit(2)


def _comparison_cells(metric: str, c: Any) -> list[str]:
    def fmt(v: float | None) -> str:
        return "–" if v is None else f"{v:.3f}"

    ci = "" if c.ci_low is None else f" [{c.ci_low:+.3f}, {c.ci_high:+.3f}]"
    delta = "–" if c.mean_difference is None else f"{c.mean_difference:+.3f}{ci}"
    return [
        metric,
        str(c.n_records),
        fmt(c.mean_a),
        fmt(c.mean_b),
        delta,
        str(c.wins),
        str(c.ties),
        str(c.losses),
        "–" if c.p_value is None else f"{c.p_value:.3g}",
    ]
