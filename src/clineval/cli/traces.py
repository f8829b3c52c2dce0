"""``clineval collect`` (an OTLP/HTTP trace receiver) and ``clineval traces import`` (trace files).

The logic lives in :mod:`clineval.traces` and :mod:`clineval.store.traces` (imported when a
command runs, so that ``clineval --help`` stays quick); see docs/traces.md.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.text import Text

from clineval.cli.common import (
    err,
    executor_options,
    executor_settings,
    friendly,
    gold_option,
    judge_limit_options,
    metric_specs,
    out,
    store_option,
    tag_pairs,
    with_judge_limits,
)
from clineval.errors import ConfigError

if TYPE_CHECKING:
    from clineval.traces.receiver import Counters

LOCALHOST = "127.0.0.1"
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
TOKEN_ENV = "CLINEVAL_COLLECT_TOKEN"

redact_option = click.option(
    "--redact",
    "redact_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="A redaction file (YAML: builtins, dates, patterns, hook) applied to every span before it "
    "is stored; see 'Patient data' in docs/traces.md.",
)


def _progress(counters: Counters, stop: threading.Event, every_s: float = 1.0) -> None:
    """Print the receiver's totals when they change, once a second at most."""
    shown = ""
    while not stop.wait(every_s):
        totals = counters.snapshot()
        line = totals.describe()
        if line != shown and totals.requests:
            err.print(line, highlight=False, soft_wrap=True, markup=False)
            shown = line


@click.command(name="collect")
@store_option
@click.option(
    "--port",
    "-p",
    default=4318,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (4318: OTLP/HTTP's; 0: a free port).",
)
@click.option(
    "--host",
    default=LOCALHOST,
    show_default=True,
    help="Address to listen on; anything but localhost accepts traces from the network.",
)
@click.option(
    "--token",
    envvar=TOKEN_ENV,
    default=None,
    help=f"Require 'Authorization: Bearer TOKEN' (env {TOKEN_ENV}; prefer the variable).",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(1024, None),
    default=None,
    help="Largest request body accepted, before and after gzip (default 20 MiB).",
)
@redact_option
@friendly
def collect_command(
    store_path: str, port: int, host: str, token: str | None, max_bytes: int | None, redact_path: str | None
) -> None:
    """Receive OpenTelemetry traces over OTLP/HTTP (POST /v1/traces) and store their spans."""
    import uvicorn

    from clineval.cli.view import _bind, _url
    from clineval.redaction import register_secret
    from clineval.store.sqlite import RunStore
    from clineval.store.traces import TraceStore
    from clineval.traces.receiver import DEFAULT_MAX_BYTES, TRACES_PATH, Counters, create_receiver
    from clineval.traces.redact import load_redactor

    redactor = load_redactor(redact_path) if redact_path else None  # a bad file stops here, before binding
    if token is not None and not token.strip():
        raise ConfigError(f"--token (or {TOKEN_ENV}) is empty; give a token or leave it unset")
    register_secret(token)
    limit = max_bytes or DEFAULT_MAX_BYTES
    Path(store_path).parent.mkdir(parents=True, exist_ok=True)
    store = RunStore(Path(store_path))
    counters = Counters()
    app = create_receiver(
        TraceStore(store), token=token, max_bytes=limit, counters=counters, redactor=redactor
    )
    sock = _bind(host, port)
    endpoint = _url(host, sock.getsockname()[1]).rstrip("/") + TRACES_PATH
    if host not in _LOCAL_HOSTS:
        err.print(
            f"[yellow]warning[/]: listening on {host}: anyone who can reach this machine on the network "
            "can send spans into this store"
            + ("" if token else " (no --token: set CLINEVAL_COLLECT_TOKEN to require one)")
            + f"; use the default --host {LOCALHOST} to keep it to this machine",
            highlight=False,
            soft_wrap=True,
        )
    out.print(
        f"clineval collect: OTLP/HTTP traces at {endpoint} (protobuf or JSON) -> {store_path}"
        + (", bearer token required" if token else "")
        + (f", spans redacted by {redact_path}" if redact_path else "")
        + " (Ctrl-C stops)",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
    sys.stdout.flush()
    stop = threading.Event()
    printer = threading.Thread(target=_progress, args=(counters, stop), name="collect-progress", daemon=True)
    printer.start()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        stop.set()
        printer.join(timeout=2)
        sock.close()
        store.close()
        err.print(f"stopped: {counters.snapshot().describe()}", highlight=False, soft_wrap=True, markup=False)


@click.group(name="traces")
def traces_group() -> None:
    """OpenTelemetry traces: import trace files into the run store and score the conversations
    they hold (see docs/traces.md)."""


@traces_group.command(name="import")
@store_option
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "fmt",
    default="auto",
    show_default=True,
    help="The files' format: auto (told by the content) or one named in docs/traces.md.",
)
@redact_option
@friendly
def import_command(store_path: str, files: tuple[str, ...], fmt: str, redact_path: str | None) -> None:
    """Import trace files into the run store: OTLP JSON lines (the OpenTelemetry Collector's
    file exporter), Langfuse and Arize Phoenix JSON exports (--format, else told by content).

    Each file is all or nothing: a file with a line or item that does not parse is reported
    (FILE:LINE, or FILE: item N) and nothing of it is stored. Importing a file again stores
    nothing twice."""
    from clineval.redaction import redact
    from clineval.store.sqlite import RunStore
    from clineval.store.traces import TraceStore
    from clineval.traces.files import read_trace_file
    from clineval.traces.redact import RedactionError, load_redactor

    redactor = load_redactor(redact_path) if redact_path else None
    Path(store_path).parent.mkdir(parents=True, exist_ok=True)
    store = RunStore(Path(store_path))
    failed = 0
    try:
        traces = TraceStore(store)
        for name in files:
            read = read_trace_file(name, fmt)
            if not read.ok:
                failed += 1
                for error in read.errors:
                    err.print(
                        Text.assemble(("error: ", "bold red"), redact(error)), highlight=False, soft_wrap=True
                    )
                err.print(
                    f"{name}: nothing imported ({read.bad_lines} bad lines or items)",
                    highlight=False,
                    markup=False,
                )
                continue
            spans = read.spans
            if redactor is not None:
                try:
                    spans = redactor.spans(spans)
                except RedactionError as exc:  # nothing of the file is stored unredacted
                    failed += 1
                    err.print(
                        Text.assemble(("error: ", "bold red"), redact(f"{name}: {exc}")),
                        highlight=False,
                        soft_wrap=True,
                    )
                    err.print(f"{name}: nothing imported", highlight=False, markup=False)
                    continue
            result = traces.add(spans)
            out.print(
                f"{name}: {result.received:,} spans, {result.stored:,} new, "
                f"{result.duplicates:,} already stored",
                highlight=False,
                soft_wrap=True,
                markup=False,
            )
    finally:
        store.close()
    if failed:
        sys.exit(2)


# The options traces score and monitor share.
_metric_option = click.option(
    "--metric",
    "--metrics",
    "-m",
    "metric_opts",
    multiple=True,
    required=True,
    help="Metric spec, repeatable or comma-separated: NAME, NAME(key=value).",
)
_idle_option = click.option(
    "--idle",
    "idle_seconds",
    type=click.FloatRange(min=0),
    default=300.0,
    show_default=True,
    help="Hold back conversations whose last span is younger than this many seconds.",
)
_agent_option = click.option("--agent", help="Only conversations this agent answered in (gen_ai.agent.name).")
_judge_option = click.option(
    "--judge", "-j", help="Judge for judge-based metrics (default: the offline judge)."
)
_sample_option = click.option(
    "--sample", type=click.IntRange(min=1), help="Score a random sample of this many conversations."
)
_seed_option = click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample.")


def _judge_and_settings(
    judge: str | None,
    judge_rpm: float | None,
    judge_tpm: float | None,
    executor: str | None,
    ray_address: str | None,
    ray_workers: int | None,
) -> tuple[object, dict[str, object]]:
    """The judge (with --judge-rpm/--judge-tpm) and the executor settings of a scoring command."""
    from clineval.cli.common import judge_option
    from clineval.judges.config import JudgeConfig

    config = judge_option(judge)
    if judge_rpm is not None or judge_tpm is not None:
        config = with_judge_limits(config or JudgeConfig(), judge_rpm, judge_tpm)
    return config, executor_settings(executor, ray_address, ray_workers)


def _print_gold(path: str, counts: dict[str, int]) -> None:
    """How the gold file's rows met the conversations to score, on one line."""
    others = ", ".join(f"{n} {reason}" for reason, n in counts.items() if reason != "joined" and n)
    err.print(
        f"gold labels from {path}: {counts.get('joined', 0)} row(s) joined"
        + (f"; not joined: {others}" if others else ""),
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


@traces_group.command(name="score")
@click.option(
    "--since", default="24h", show_default=True, help="Spans started since: 24h, 30m, 7d or an ISO date."
)
@_agent_option
@_sample_option
@_seed_option
@_idle_option
@click.option("--per-turn", is_flag=True, help="One case per user turn instead of one per conversation.")
@gold_option
@_metric_option
@_judge_option
@judge_limit_options
@click.option("--name", help="A name for the run.")
@click.option("--tag", "tags", multiple=True, help="KEY=VALUE tag (repeatable).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@executor_options
@store_option
@friendly
def score_command(
    since: str,
    agent: str | None,
    sample: int | None,
    seed: int,
    idle_seconds: float,
    per_turn: bool,
    gold_path: str | None,
    metric_opts: tuple[str, ...],
    judge: str | None,
    judge_rpm: float | None,
    judge_tpm: float | None,
    name: str | None,
    tags: tuple[str, ...],
    quiet: bool,
    executor: str | None,
    ray_address: str | None,
    ray_workers: int | None,
    store_path: str,
) -> None:
    """Score the conversations of the stored traces as a run: spans since --since are assembled
    into conversations (docs/traces-semconv.md), one case each, linked to their trace ids."""
    from clineval.conversations.gold import load_gold
    from clineval.results import render
    from clineval.traces.score import parse_since, score_traffic, select_traffic

    specs = metric_specs(metric_opts)
    if not specs:
        raise ConfigError("name at least one metric with -m (see 'clineval metrics')")
    if not Path(store_path).is_file():
        raise ConfigError(f"{store_path}: no run store here; receive traces with clineval collect first")
    the_judge, settings = _judge_and_settings(judge, judge_rpm, judge_tpm, executor, ray_address, ray_workers)
    since_ns = parse_since(since)
    gold = load_gold(gold_path) if gold_path else None
    selection = select_traffic(
        store_path,
        since_ns=since_ns,
        agent=agent,
        sample=sample,
        seed=seed,
        idle_seconds=idle_seconds,
        per_turn=per_turn,
        gold=gold,
    )
    err.print(
        f"{selection.spans:,} span(s) since {since}: {selection.conversations} conversation(s) finished, "
        f"{selection.pending} still arriving (held back), {selection.not_this_agent} of another agent, "
        f"{selection.not_sampled} not sampled; scoring {len(selection.cases)} case(s)",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    if gold is not None:
        _print_gold(gold_path or "", selection.gold)
    all_tags = {
        "since": since,
        **({"agent": agent} if agent else {}),
        **({"gold": Path(gold_path).name} if gold_path else {}),
        **tag_pairs(tags),
    }
    result = score_traffic(
        selection,
        specs,
        store=store_path,
        judge=the_judge,
        name=name,
        tags=all_tags,
        progress=None if not quiet else False,
        settings=settings,
    )
    render.print_result(result, out)


@click.command(name="monitor")
@_metric_option
@click.option("--every", help="A round every so often (15m, 1h, 30s) until Ctrl-C or SIGTERM.")
@click.option("--once", is_flag=True, help="One round, then exit (for a cron job).")
@click.option(
    "--since",
    default="7d",
    show_default=True,
    help="Look at spans started since: 7d, 24h or an ISO date (older conversations are not looked at).",
)
@_idle_option
@_agent_option
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    help="Score at most this many new conversations a round, drawn at random (the rest wait).",
)
@_seed_option
@gold_option
@_judge_option
@judge_limit_options
@click.option("--name", help="A name for each round's run (default 'traffic monitor').")
@click.option("--tag", "tags", multiple=True, help="KEY=VALUE tag on each round's run (repeatable).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@executor_options
@store_option
@friendly
def monitor_command(
    metric_opts: tuple[str, ...],
    every: str | None,
    once: bool,
    since: str,
    idle_seconds: float,
    agent: str | None,
    sample: int | None,
    seed: int,
    gold_path: str | None,
    judge: str | None,
    judge_rpm: float | None,
    judge_tpm: float | None,
    name: str | None,
    tags: tuple[str, ...],
    quiet: bool,
    executor: str | None,
    ray_address: str | None,
    ray_workers: int | None,
    store_path: str,
) -> None:
    """Score new conversations of the stored traces, once (cron) or on a schedule: one run a round.

    Each round scores the finished conversations not scored before as one run tagged
    source=traces, monitor=1; conversations still arriving wait for a later round."""
    from clineval.conversations.gold import load_gold
    from clineval.errors import RunInterrupted
    from clineval.interrupts import exit_code, interrupted_by
    from clineval.results import render
    from clineval.traces.monitor import RoundOutcome, describe, monitor_round, run_monitor
    from clineval.traces.score import TrafficSelection, parse_duration, parse_since

    if once == (every is not None):
        raise ConfigError("give --once (one round, for a cron job) or --every 15m (a round every 15 minutes)")
    every_s = parse_duration(every) if every is not None else None
    specs = metric_specs(metric_opts)
    if not specs:
        raise ConfigError("name at least one metric with -m (see 'clineval metrics')")
    parse_since(since)  # a bad --since stops before the first round
    gold = load_gold(gold_path) if gold_path else None  # read once; a bad file stops here
    the_judge, settings = _judge_and_settings(judge, judge_rpm, judge_tpm, executor, ray_address, ray_workers)
    all_tags = {
        "since": since,
        **({"agent": agent} if agent else {}),
        **({"gold": Path(gold_path).name} if gold_path else {}),
        **tag_pairs(tags),
    }

    def found(selection: TrafficSelection) -> None:
        line = describe(selection, since)
        if selection.cases:
            err.print(line, highlight=False, markup=False, soft_wrap=True)
            if gold is not None:
                _print_gold(gold_path or "", selection.gold)
        else:
            out.print(f"nothing new to score: {line}", highlight=False, markup=False, soft_wrap=True)
            sys.stdout.flush()

    def one_round() -> RoundOutcome:
        if not Path(store_path).is_file():
            raise ConfigError(f"{store_path}: no run store here; receive traces with clineval collect first")
        outcome = monitor_round(
            store_path,
            specs,
            since_ns=parse_since(since),
            agent=agent,
            idle_seconds=idle_seconds,
            sample=sample,
            seed=seed,
            gold=gold,
            judge=the_judge,
            name=name,
            tags=all_tags,
            progress=None if not quiet else False,
            on_selected=found,
            settings=settings,
        )
        if outcome.result is not None:
            render.print_result(outcome.result, out)
            out.print(
                f"run {outcome.run_id}: {len(outcome.selection.conversation_ids)} conversation(s) scored",
                highlight=False,
                markup=False,
            )
            sys.stdout.flush()
        return outcome

    try:
        run_monitor(one_round, every_s=every_s)
    except RunInterrupted as exc:
        err.print(
            Text.assemble(
                ("interrupted", "yellow"),
                f"{interrupted_by()}: run {exc.run_id} is marked interrupted and its conversations "
                "are not marked scored; the next round scores them again",
            ),
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(exit_code())
