"""``clineval review``: clinicians' review of a run's cases, from the command line.

* ``plan``: pick the cases to review (random, stratified by a score, or where two scores
  disagree) and store them as a queue, which the viewer's review mode then serves;
* ``status``: each queue's progress, per reviewer;
* ``export`` / ``import``: the verdicts as CSV or JSON lines, to and from spreadsheets.

The logic lives in :mod:`clineval.review` (imported when a command runs, so that
``clineval --help`` stays fast); this module parses options and prints.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click
from rich.table import Table
from rich.text import Text

from clineval.cli.common import _require_store, cannot_write, err, friendly, out, store_option
from clineval.errors import ConfigError
from clineval.store import DEFAULT_STORE

if TYPE_CHECKING:
    from clineval.model import ReviewQueue, RunRecord
    from clineval.review.queue import Plan
    from clineval.review.schema import ReviewSchema
    from clineval.store.sqlite import RunStore

#: ``--items``: what a queue reviews beside the case itself.
ITEM_NAMES = ("case", "facts", "sentences", "turns")


@click.group(name="review")
def review_group() -> None:
    """Clinicians' review of a run: plan a queue of cases, follow it, export and import verdicts.

    Reviewers give their verdicts in the viewer (clineval view --review); see docs/reviewing.md.
    """


def _store_flag(store_path: str) -> str:
    return "" if store_path == DEFAULT_STORE else f" --store {shlex.quote(store_path)}"


def _run_label(record: RunRecord) -> Text:
    text = Text(f"run {record.id}")
    if record.name:
        text.append(f" ({record.name})")
    return text


def _items(value: str) -> list[str]:
    """``--items case,facts``: the kinds of item reviewed (the case always is)."""
    names = [part.strip().lower() for part in value.split(",") if part.strip()]
    unknown = [n for n in names if n not in ITEM_NAMES]
    if unknown:
        raise ConfigError(
            f"--items {value}: unknown item kind {unknown[0]!r}; expected {', '.join(ITEM_NAMES)}"
        )
    return [n for n in names if n != "case"]


def _queue_schema(
    record: RunRecord, schema_file: str | None, items: str | None, max_facts: int | None
) -> tuple[ReviewSchema, dict[str, Any] | None]:
    """The schema the queue reviews with, and what the queue stores of it (``None``: the run's own)."""
    from clineval.review.data import review_schema
    from clineval.review.schema import load_schema, schema_from_data

    base = load_schema(schema_file) if schema_file else review_schema(record)
    if schema_file is None and items is None and max_facts is None:
        return base, None
    data = base.model_dump(mode="json")
    if items is not None:
        data["items"] = _items(items)
    if max_facts is not None:
        if not 1 <= max_facts <= 500:
            raise ConfigError(f"--max-facts {max_facts}: from 1 to 500 facts per case")
        data["max_facts"] = max_facts
    schema = schema_from_data(data, "--schema/--items/--max-facts")
    return schema, schema.model_dump(mode="json")


# --------------------------------------------------------------------------- plan


@review_group.command(name="plan")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--n", "-n", "n", type=int, default=20, show_default=True, metavar="N", help="Cases in the queue."
)
@click.option(
    "--strategy",
    type=click.Choice(["random", "stratified", "disagreement"]),
    default="random",
    show_default=True,
    help="random; stratified by a metric's score (equal numbers from each stratum); or the cases "
    "on which two scores disagree most.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    metavar="N",
    help="Seed of the draw and of the queue's order.",
)
@click.option(
    "--metric",
    "-m",
    "metrics",
    multiple=True,
    metavar="M",
    help="What the strategy looks at: stratified, one metric (default: the first factuality metric); "
    "disagreement, two metrics of the run, or one with --vs. Repeatable.",
)
@click.option(
    "--vs",
    "vs_ref",
    metavar="RUN2",
    help="Disagreement: the same metric in another run of the same cases (another judge).",
)
@click.option(
    "--reviewers-per-case",
    "per_case",
    type=int,
    metavar="K",
    default=1,
    show_default=True,
    help="Reviewers each case is given to (1-20).",
)
@click.option(
    "--schema",
    "schema_file",
    type=click.Path(dir_okay=False),
    help="A review schema (YAML) for this queue instead of the run's own.",
)
@click.option(
    "--items",
    metavar="KINDS",
    help="What is reviewed beside the case: case,facts,sentences,turns (comma-separated).",
)
@click.option(
    "--max-facts",
    type=int,
    metavar="N",
    help="At most this many facts per case (and metric), the same ones every time.",
)
@click.option(
    "--strata", type=int, default=5, show_default=True, metavar="N", help="Stratified: strata of equal count."
)
@click.option(
    "--cases",
    "cases_opt",
    metavar="IDS",
    help="These cases, in this order, instead of a strategy: comma-separated ids, or @FILE "
    "with one id a line.",
)
@store_option
@friendly
def plan_command(
    run_ref: str,
    n: int,
    strategy: str,
    seed: int,
    metrics: tuple[str, ...],
    vs_ref: str | None,
    per_case: int,
    schema_file: str | None,
    items: str | None,
    max_facts: int | None,
    strata: int,
    cases_opt: str | None,
    store_path: str,
) -> None:
    """Pick the cases of RUN to review and store them as a queue (RUN: id, prefix, latest, latest~N)."""
    from clineval.model.review import Strategy
    from clineval.review.queue import plan_queue
    from clineval.store.reviews import ReviewStore
    from clineval.store.sqlite import RunStore

    _require_store(store_path)
    store = RunStore(store_path)
    record = store.get_run(run_ref)
    names = [part.strip() for value in metrics for part in value.split(",") if part.strip()]
    compare = (store.get_run(vs_ref), store) if vs_ref else None
    if compare is not None and compare[0].id == record.id:
        raise ConfigError(
            f"--vs {vs_ref}: that is run {record.id} itself; give another run of the same cases"
        )
    schema, schema_data = _queue_schema(record, schema_file, items, max_facts)
    plan = plan_queue(
        store,
        record,
        n=n,
        strategy=cast("Strategy", strategy),
        seed=seed,
        metrics=names,
        compare=compare,
        per_case=per_case,
        schema=schema,
        schema_data=schema_data,
        strata=strata,
        cases=_named_cases(cases_opt, strategy, names, vs_ref) if cases_opt is not None else None,
    )
    if not plan.queue.case_ids:
        raise ConfigError(f"run {record.id}: no case could be planned ({_left_out_text(plan)})")
    ReviewStore(store).create_queue(plan.queue)
    _print_plan(plan, record, compare[0] if compare else None, store_path)


def _named_cases(value: str, strategy: str, metrics: list[str], vs_ref: str | None) -> list[str]:
    """``--cases a,b,c`` or ``--cases @ids.txt`` (one id a line; # starts a comment)."""
    if strategy != "random" or metrics or vs_ref:
        raise ConfigError("--cases names the cases itself: --strategy, --metric and --vs do not apply")
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--cases {value}: cannot read {path} ({exc.strerror or exc})") from None
        return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]
    return [part.strip() for part in value.split(",") if part.strip()]


def _looked_at(plan: Plan, record: RunRecord, other: RunRecord | None) -> str:
    queue = plan.queue
    if queue.strategy == "given":
        return f"given: the {len(queue.case_ids)} case(s) named with --cases, in that order"
    if queue.strategy == "random":
        return f"random: drawn from the {plan.eligible} case(s) the agent answered"
    if queue.strategy == "stratified":
        return (
            f"stratified by {queue.metrics[0]}: {len(plan.strata)} strata of about equal count over the "
            f"{plan.eligible} case(s) it scored, the same number drawn from each"
        )
    if other is not None:
        return (
            f"disagreement of {queue.metrics[0]} between run {record.id} and run {other.id}: the largest "
            f"differences of the two scores over the {plan.eligible} case(s) both scored"
        )
    return (
        f"disagreement of {queue.metrics[0]} and {queue.metrics[1]}: the largest differences of their "
        f"percentile ranks over the {plan.eligible} case(s) both scored"
    )


def _left_out_text(plan: Plan) -> str:
    return "; ".join(f"{count} {reason}" for reason, count in plan.left_out.items()) or "nothing left out"


def _print_plan(plan: Plan, record: RunRecord, other: RunRecord | None, store_path: str) -> None:
    from clineval.review.queue import fmt_score

    queue = plan.queue
    head = Text.assemble(
        ("queue ", "bold"),
        (queue.id, "bold"),
        " · ",
        _run_label(record),
        f" · {len(queue.case_ids)} case(s) · {queue.per_case} reviewer(s) per case"
        + (f" · seed {queue.seed}" if queue.seed is not None else ""),
    )
    out.print(head, highlight=False, soft_wrap=True)
    out.print(Text(_looked_at(plan, record, other)), highlight=False, soft_wrap=True)
    if queue.schema_ is not None:
        scales = ", ".join(str(s["name"]) for s in queue.schema_.get("scales", []))
        kinds = ", ".join(str(k) for k in queue.schema_.get("items", [])) or "none"
        facts = queue.schema_.get("max_facts")
        extra = f", at most {facts} facts per case" if facts else ""
        out.print(
            Text(f"schema of this queue: case scales {scales}; items {kinds}{extra}"),
            highlight=False,
            soft_wrap=True,
        )
    table = Table(title="Cases, in queue order", title_justify="left", header_style="bold")
    table.add_column("#", justify="right")
    table.add_column("case")
    table.add_column("why")
    for position, case_id in enumerate(queue.case_ids, start=1):
        why = queue.notes.get(case_id) or ("drawn at random" if queue.strategy == "random" else "")
        table.add_row(str(position), Text(case_id), Text(why))
    out.print(table)
    if plan.strata:
        strata = Table(title=f"Strata of {queue.metrics[0]}", title_justify="left", header_style="bold")
        for name in ("stratum", "lowest–highest", "cases", "drawn"):
            strata.add_column(name, justify="right" if name != "lowest–highest" else "left")
        for number, (low, high, size, drawn) in enumerate(plan.strata, start=1):
            strata.add_row(str(number), f"{fmt_score(low)}–{fmt_score(high)}", str(size), str(drawn))
        out.print(strata)
    if plan.left_out:
        out.print(Text("Left out:", style="bold"))
        for reason, count in plan.left_out.items():
            out.print(Text(f"  {count} case(s): {reason}"), highlight=False, soft_wrap=True)
    else:
        out.print(Text("Left out: nothing"), highlight=False, soft_wrap=True)
    where = _store_flag(store_path)
    out.print(
        Text.assemble(
            ("Next: ", "bold"),
            f"clineval view --review --reviewer NAME --queue {queue.id}{where}",
            "  (or see progress: ",
            f"clineval review status {record.id}{where}",
            ")",
        ),
        highlight=False,
        soft_wrap=True,
    )


# --------------------------------------------------------------------------- status


def _open_readonly(store_path: str) -> RunStore:
    from clineval.store.sqlite import RunStore

    _require_store(store_path)
    return RunStore(store_path, readonly=True)


@review_group.command(name="status")
@click.argument("run_ref", required=False, metavar="[RUN]")
@click.option("--queue", "queue_ref", metavar="Q", help="Only this queue (id, unique prefix or 'latest').")
@store_option
@friendly
def status_command(run_ref: str | None, queue_ref: str | None, store_path: str) -> None:
    """Each review queue (of RUN, or all) with its progress per reviewer."""
    from clineval.store.reviews import ReviewStore

    store = _open_readonly(store_path)
    reviews = ReviewStore(store)
    record = store.get_run(run_ref) if run_ref else None
    run_id = record.id if record else None
    queues = [reviews.get_queue(queue_ref, run_id)] if queue_ref else reviews.queues(run_id)
    if not queues:
        where = f" of run {run_id}" if run_id else ""
        plan = f"clineval review plan {run_id or 'RUN'} --n 20{_store_flag(store_path)}"
        out.print(
            Text(f"No review queue{where} yet; plan one: {plan}"),
            highlight=False,
            soft_wrap=True,
        )
        return
    runs: dict[str, RunRecord] = {}
    for position, queue in enumerate(queues):
        if queue.run_id not in runs:
            runs[queue.run_id] = store.get_run(queue.run_id)
        if position:
            out.print()
        _print_status(store, runs[queue.run_id], queue)


def _strategy_text(queue: ReviewQueue) -> str:
    if queue.strategy == "stratified" and queue.metrics:
        return f"stratified by {queue.metrics[0]}"
    if queue.strategy == "disagreement" and queue.metrics:
        if queue.compare_run:
            return f"disagreement of {queue.metrics[0]} with run {queue.compare_run}"
        return f"disagreement of {' and '.join(queue.metrics)}"
    return queue.strategy


def _print_status(store: RunStore, record: RunRecord, queue: ReviewQueue) -> None:
    from clineval.review.data import queue_state
    from clineval.store.reviews import ReviewStore

    reviews = ReviewStore(store)
    state = queue_state(store, record, queue, reviews.claims(queue.id))
    verdicts = reviews.current(record.id, case_ids=queue.case_ids)
    given = Counter(r.reviewer for r in verdicts)
    created = time.strftime("%Y-%m-%d %H:%M", time.localtime(queue.created_at))
    out.print(
        Text.assemble(
            ("queue ", "bold"),
            (queue.id, "bold"),
            " · ",
            _run_label(record),
            f" · {_strategy_text(queue)} · {len(queue.case_ids)} case(s) · "
            f"{queue.per_case} reviewer(s) per case · created {created}",
        ),
        highlight=False,
        soft_wrap=True,
    )
    out.print(
        Text(
            f"  {state.fully_reviewed} of {len(queue.case_ids)} case(s) fully reviewed · "
            f"{len(verdicts)} verdict(s) given"
        ),
        highlight=False,
        soft_wrap=True,
    )
    reviewers = list(dict.fromkeys([*given, *(r for p in state.progress.values() for r in p.answered)]))
    reviewers += [r for names in state.claims.values() for r in sorted(names) if r not in reviewers]
    if not reviewers:
        out.print(Text("  no reviewer has started yet"), highlight=False, soft_wrap=True)
        return
    table = Table(header_style="bold", padding=(0, 1))
    table.add_column("reviewer")
    table.add_column("done", justify="right")
    table.add_column("left", justify="right")
    table.add_column("verdicts", justify="right")
    for reviewer in reviewers:
        done = state.done_by(reviewer)
        left = [c for c in state.cases_for(reviewer) if c not in done]
        table.add_row(Text(reviewer), str(len(done)), str(len(left)), str(given.get(reviewer, 0)))
    out.print(table)


# --------------------------------------------------------------------------- export / import


@review_group.command(name="export")
@click.argument("run_ref", metavar="RUN")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), default="csv", show_default=True)
@click.option(
    "-o", "--out", "out_path", metavar="FILE", help="The file to write ('-' or none: standard output)."
)
@click.option("--history", is_flag=True, help="Every row ever written (undone and retracted ones marked).")
@store_option
@friendly
def export_command(run_ref: str, fmt: str, out_path: str | None, history: bool, store_path: str) -> None:
    """Write RUN's verdicts (the current ones; --history: all) as CSV or JSON lines."""
    from clineval.review.transfer import Format, export_rows, write_rows

    store = _open_readonly(store_path)
    record = store.get_run(run_ref)
    rows = export_rows(store, record, history=history)
    kind = cast("Format", fmt)
    if out_path in (None, "-"):
        write_rows(rows, sys.stdout, kind, history=history)
        sys.stdout.flush()
        return
    assert out_path is not None
    try:
        with Path(out_path).open("w", encoding="utf-8", newline="") as handle:
            write_rows(rows, handle, kind, history=history)
    except OSError as exc:
        raise ConfigError(cannot_write("--out", out_path, exc)) from None
    err.print(
        Text(f"wrote {len(rows)} review row(s) of run {record.id} to {out_path}"),
        highlight=False,
        soft_wrap=True,
    )


@review_group.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--run", "run_ref", metavar="RUN", help="The run the rows belong to (default: each row's run_id)."
)
@click.option("--reviewer", metavar="NAME", help="The reviewer of rows that name none.")
@click.option("--dry-run", is_flag=True, help="Check the file and say what would be imported; write nothing.")
@store_option
@friendly
def import_command(
    file: str, run_ref: str | None, reviewer: str | None, dry_run: bool, store_path: str
) -> None:
    """Import verdicts from FILE (.csv, .tsv, .jsonl): a row per verdict, or a row per case with
    a column per scale. Every row is checked first; a file with any problem imports nothing."""
    from clineval.review.transfer import import_reviews
    from clineval.store.sqlite import RunStore

    _require_store(store_path)
    store = RunStore(store_path, readonly=dry_run)
    plan = import_reviews(store, file, run=run_ref, reviewer=reviewer, dry_run=dry_run)
    layout = "a row per verdict" if plan.layout == "long" else "a row per case, a column per scale"
    read = f"{plan.rows} row(s) of {Path(file).name} ({layout})"
    if plan.records:
        reviewers = plan.reviewers
        verb = "would import" if dry_run else "imported"
        out.print(
            Text(
                f"{verb} {len(plan.records)} verdict(s) from {read} into run {', '.join(plan.runs)}: "
                f"{len(reviewers)} reviewer(s) ({', '.join(reviewers)}), {len(plan.cases)} case(s)"
            ),
            highlight=False,
            soft_wrap=True,
        )
    else:
        out.print(Text(f"nothing new to import from {read}"), highlight=False, soft_wrap=True)
    skipped = []
    if plan.unchanged:
        skipped.append(f"{plan.unchanged} equal to the reviewer's current verdict")
    if plan.empty:
        skipped.append(f"{plan.empty} empty cell(s) (not reviewed)")
    if skipped:
        out.print(Text("skipped: " + "; ".join(skipped)), highlight=False, soft_wrap=True)
    if plan.ignored_columns:
        out.print(
            Text("columns not read: " + ", ".join(plan.ignored_columns)), highlight=False, soft_wrap=True
        )
    if dry_run:
        out.print(Text("dry run: nothing written"), highlight=False, soft_wrap=True)
