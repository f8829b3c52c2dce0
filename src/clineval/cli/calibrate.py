"""``clineval calibrate``: how far a judge agrees with clinicians, beside trivial baselines.

Runs a judge (offline, OpenAI-compatible, Azure, a local server) on the human-labelled
samples packaged with clineval (or on the full public sets with ``--data``), stores the run,
and prints its agreement with the physicians and experts next to their own agreement and
the trivial baselines, with 95 % intervals (see docs/calibration.md). ``--from RUN``
analyses a stored calibration run again without calling the judge. The measurement lives
in :mod:`clineval.calibration` (imported when the command runs, so that ``clineval --help``
stays fast).
"""

from __future__ import annotations

import os
import re
import socket
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clineval.cli.common import (
    _require_store,
    err,
    friendly,
    judge_option,
    out,
    store_option,
    write_text_file,
)
from clineval.errors import ClinevalError, ConfigError, RunInterrupted
from clineval.judges.config import JudgeConfig, default_judge_config
from clineval.store.sqlite import DEFAULT_STORE

if TYPE_CHECKING:
    from clineval.calibration import CalibrationData, CalibrationReport
    from clineval.results.result import EvalResult

#: The protocols, in the order they run (kept here too so that --help needs no import).
PROTOCOL_NAMES = ("kqa_nli", "kqa_support", "radfact", "medec", "refusal")
#: The files a sample folder holds (what ``clineval.calibration.data.write_samples`` writes).
SAMPLE_FILES = ("kqa_nli.jsonl", "medec.jsonl", "radfact.jsonl", "refusal.jsonl")
#: The set each protocol reads, and how to name it in a message.
_SETS = {
    "kqa_nli": ("kqa_nli", "K-QA statement pairs"),
    "kqa_support": ("kqa_nli", "K-QA statement pairs"),
    "radfact": ("radfact", "RadFact report pairs"),
    "medec": ("medec", "MEDEC texts"),
    "refusal": ("refusal", "refusal cases (MedSafetyBench and K-QA)"),
}
_LAYOUT = (
    "expected the public sets as released (kqa/, medec/, radfact/, medsafetybench/, as in "
    "../shared/data) or a folder of sample files (kqa_nli.jsonl, medec.jsonl, radfact.jsonl, refusal.jsonl)"
)
_CONNECT_TIMEOUT_S = 5.0


def _protocols(values: Sequence[str]) -> list[str]:
    names = [part.strip() for value in values for part in value.split(",") if part.strip()]
    unknown = [n for n in names if n not in PROTOCOL_NAMES]
    if unknown:
        raise ConfigError(
            f"--protocol {', '.join(repr(n) for n in unknown)}: unknown; "
            f"expected one of {', '.join(PROTOCOL_NAMES)}"
        )
    wanted = set(names) or set(PROTOCOL_NAMES)
    return [n for n in PROTOCOL_NAMES if n in wanted]


def _read_data(folder: str, protocols: Sequence[str]) -> CalibrationData:
    """The sets the protocols need, from a folder of public sets or of sample files."""
    from clineval.calibration.data import (
        CalibrationData,
        load_samples,
        read_kqa_nli,
        read_medec,
        read_radfact,
        read_refusal,
    )

    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"--data {folder}: no such folder; {_LAYOUT}")
    needed = {_SETS[p][0] for p in protocols}
    try:
        if any((root / name).exists() for name in SAMPLE_FILES):
            return load_samples(root)
        readers = {
            "kqa_nli": read_kqa_nli,
            "medec": read_medec,
            "radfact": read_radfact,
            "refusal": read_refusal,
        }
        sets = {name: reader(root) for name, reader in readers.items() if name in needed}
    except ConfigError as exc:
        raise ConfigError(f"--data {folder}: {exc}; {_LAYOUT}") from None
    return CalibrationData(source=str(root.resolve()), **sets)


def _check_sets(data: CalibrationData, protocols: Sequence[str], where: str) -> None:
    for protocol in protocols:
        name, what = _SETS[protocol]
        if not getattr(data, name):
            raise ConfigError(f"{where} has no {what}, which protocol {protocol} needs")


def _judge_config(value: str | None) -> JudgeConfig:
    config = judge_option(value) or default_judge_config()
    if config.provider == "none":
        raise ConfigError(
            f"--judge {value or 'none'!r}: calibration measures a judge; give 'offline', "
            "'openai:MODEL[@BASE_URL]', 'azure[:DEPLOYMENT]', 'scripted:FILE' or 'nli:PATH'"
        )
    return config


def _check_endpoint(config: JudgeConfig, spec: str) -> None:
    """For an HTTP judge: its settings are complete and its host accepts connections, so that
    a wrong URL or a server that is not running is one clear line, not a run of failed calls."""
    if config.provider not in ("openai", "azure"):
        return
    from clineval.judges.config import build_judge

    judge = build_judge(config)  # a missing key or Azure setting: a clear ConfigError
    url = str(getattr(getattr(judge, "backend", None), "base_url", "") or "")
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname:
        raise ConfigError(
            f"--judge {spec!r}: the endpoint {url!r} is not a URL such as http://127.0.0.1:8080/v1"
        )
    if urllib.request.getproxies().get(parts.scheme) and not urllib.request.proxy_bypass(parts.hostname):
        return  # reached through a proxy: the proxy answers for the host
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ConfigError(f"--judge {spec!r}: the endpoint {url!r} has an invalid port") from None
    try:
        with socket.create_connection((parts.hostname, port), timeout=_CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise ConfigError(
            f"--judge {spec!r}: cannot reach the judge endpoint {url} ({reason}); "
            "start the server or check the URL"
        ) from None


def _store_suffix(store_path: str) -> str:
    return "" if store_path.endswith(DEFAULT_STORE) else f" --store {store_path}"


def _is_calibration(result: EvalResult) -> bool:
    return "calibration" in result.run.tags and any(
        isinstance(case.metadata.get("protocol"), str) for case in result.cases
    )


def _from_run(run_ref: str, store_path: str, protocols: Sequence[str] | None) -> CalibrationReport:
    from clineval import api
    from clineval.calibration import analyse

    _require_store(store_path)
    result = api.load_run(run_ref, store=store_path)
    if not _is_calibration(result):
        raise ConfigError(
            f"--from {run_ref}: run {result.run.id} is not a calibration run (it was not made by "
            "'clineval calibrate'); give the id of a run that 'clineval calibrate' stored"
        )
    report = analyse(result)
    if protocols is not None:
        present = [p.name for p in report.protocols]
        missing = [p for p in protocols if p not in present]
        if missing:
            raise ConfigError(
                f"--protocol {', '.join(missing)}: run {result.run.id} has no such protocol "
                f"(it has {', '.join(present) or 'none'})"
            )
        report.protocols = [p for p in report.protocols if p.name in protocols]
    if result.run.status != "completed":
        err.print(
            f"[yellow]run {result.run.id} is {result.run.status}: the figures use the results stored so far; "
            f"finish it with: clineval run --resume {result.run.id}{_store_suffix(store_path)}[/]",
            highlight=False,
        )
    return report


def _run(
    config: JudgeConfig,
    spec: str,
    data_dir: str | None,
    protocols: Sequence[str],
    store_path: str,
    judge_concurrency: int | None,
    no_cache: bool,
    quiet: bool,
) -> CalibrationReport:
    from clineval.calibration import calibrate, load_samples
    from clineval.config import DEFAULT_CACHE

    data = _read_data(data_dir, protocols) if data_dir else load_samples()
    _check_sets(data, protocols, f"--data {data_dir}" if data_dir else "the packaged samples")
    _check_endpoint(config, spec)
    then = f"; then: clineval calibrate --from {{run}}{_store_suffix(store_path)}"
    try:
        return calibrate(
            config,
            data=data,
            protocols=protocols,
            store=store_path,
            progress=False if quiet else None,
            judge_concurrency=judge_concurrency,
            cache=None if no_cache else DEFAULT_CACHE,
        )
    except RunInterrupted as exc:
        raise RunInterrupted(exc.run_id, exc.resume_hint + then.format(run=exc.run_id)) from None
    except ClinevalError as exc:
        stopped = re.search(r"The run (\S+) stopped", str(exc))
        if stopped is None:
            raise
        raise ClinevalError(str(exc) + then.format(run=stopped.group(1))) from None


def _usage_line(run_id: str, store_path: str) -> str | None:
    from clineval.store.sqlite import RunStore

    with RunStore(store_path, readonly=True) as store:
        usage = store.get_run(run_id).usage
    if not (usage.calls or usage.cached):
        return None
    return (
        f"judge: {usage.calls:,} call(s), {usage.cached:,} from cache, {usage.reasks:,} re-ask(s), "
        f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens"
    )


@click.command(name="calibrate")
@click.option(
    "--judge",
    "-j",
    "judge_opts",
    multiple=True,
    help="The judge to measure: offline (default) | openai:MODEL[@BASE_URL] | azure[:DEPLOYMENT] "
    "| scripted:FILE | nli:PATH. With --reviews: repeatable, every judge on the same items.",
)
@click.option(
    "--reviews",
    "reviews_run",
    metavar="RUN",
    help="Measure the judges against the reviewers of this run (its stored reviews) instead of the "
    "packaged samples: the reviewed facts, sentences and cases scored again by each judge.",
)
@click.option(
    "--metric",
    "-m",
    "metric_opts",
    multiple=True,
    help="With --reviews: only this metric's facts, sentences and cases (repeatable).",
)
@click.option("--reviewer", help="With --reviews: only this reviewer's verdicts.")
@click.option(
    "--data",
    "data_dir",
    help="A folder with the full public sets (kqa/, medec/, radfact/, medsafetybench/, as released) "
    "or with sample files, instead of the packaged samples.",
)
@click.option(
    "--protocol",
    "-p",
    "protocol_opts",
    multiple=True,
    help=f"Only this protocol (repeatable or comma-separated): {', '.join(PROTOCOL_NAMES)}. Default: all.",
)
@click.option(
    "--from",
    "from_run",
    help="Analyse a stored calibration run again (id, prefix, 'latest') without calling the judge.",
)
@click.option("--judge-concurrency", type=click.IntRange(1, 1024), help="Judge calls at once.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the judge cache.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    help="Also write the report as JSON to this file ('-': JSON on standard output only).",
)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(dir_okay=False),
    help="Also write the report as Markdown to this file ('-': Markdown on standard output only).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@store_option
@friendly
def calibrate_command(
    judge_opts: tuple[str, ...],
    reviews_run: str | None,
    metric_opts: tuple[str, ...],
    reviewer: str | None,
    data_dir: str | None,
    protocol_opts: tuple[str, ...],
    from_run: str | None,
    judge_concurrency: int | None,
    no_cache: bool,
    json_path: str | None,
    markdown_path: str | None,
    quiet: bool,
    store_path: str,
) -> None:
    """Measure a judge against clinicians' labels, beside trivial baselines (95% intervals).

    Runs the judge on small samples of K-QA, MEDEC, RadFact and MedSafetyBench packaged with
    clineval (about a minute with the offline judge), stores the run, and prints the judge's
    agreement with the physicians and experts next to their own agreement and to ROUGE-L and
    other trivial baselines. Run it against a local OpenAI-compatible server before trusting
    that server as a judge: --judge openai:MODEL@http://127.0.0.1:PORT/v1.
    """
    if reviews_run is not None:
        given = [
            option
            for option, value in {"--data": data_dir, "--protocol": protocol_opts, "--from": from_run}.items()
            if value
        ]
        if given:
            raise ConfigError(
                f"{', '.join(given)}: --reviews measures the judges on the run's reviewed cases, not on "
                "the public samples; give one or the other"
            )
        if markdown_path:
            raise ConfigError("--markdown: not available with --reviews (use --json FILE)")
        _calibrate_reviews(
            reviews_run,
            judge_opts,
            metrics=metric_opts,
            reviewer=reviewer,
            store_path=store_path,
            judge_concurrency=judge_concurrency,
            no_cache=no_cache,
            json_path=json_path,
            quiet=quiet,
        )
        return
    if metric_opts or reviewer:
        raise ConfigError(f"{'--metric' if metric_opts else '--reviewer'} goes with --reviews RUN")
    if len(judge_opts) > 1:
        raise ConfigError(
            f"--judge given {len(judge_opts)} times: the packaged samples measure one judge per run "
            "(several judges on the same items go with --reviews RUN)"
        )
    judge = judge_opts[0] if judge_opts else None
    protocols = _protocols(protocol_opts)
    if json_path == "-" and markdown_path == "-":
        raise ConfigError("--json - and --markdown -: only one of them can take standard output")
    for option, path in (("--json", json_path), ("--markdown", markdown_path)):
        if path and path != "-" and not Path(path).resolve().parent.is_dir():
            raise ConfigError(f"{option} {path}: the folder {Path(path).resolve().parent} does not exist")
    if from_run:
        given = [
            option
            for option, value in {
                "--judge": judge_opts,
                "--data": data_dir,
                "--judge-concurrency": judge_concurrency,
                "--no-cache": no_cache,
            }.items()
            if value
        ]
        if given:
            raise ConfigError(
                f"--from analyses a stored run with its own judge and data; {', '.join(given)} "
                "cannot change them (run 'clineval calibrate' again to measure another judge)"
            )
        report = _from_run(from_run, store_path, protocols if protocol_opts else None)
    else:
        config = _judge_config(judge)
        spec = judge or os.environ.get("CLINEVAL_JUDGE", "") or "offline"
        report = _run(config, spec, data_dir, protocols, store_path, judge_concurrency, no_cache, quiet)
    _emit(report, store_path, json_path, markdown_path, fresh=not from_run)


def _calibrate_reviews(
    run_ref: str,
    specs: tuple[str, ...],
    *,
    metrics: tuple[str, ...],
    reviewer: str | None,
    store_path: str,
    judge_concurrency: int | None,
    no_cache: bool,
    json_path: str | None,
    quiet: bool,
) -> None:
    """``clineval calibrate --reviews RUN --judge A --judge B``: every judge against the run's reviewers."""
    from clineval.config import DEFAULT_CACHE
    from clineval.interrupts import run_sync
    from clineval.review.calibrate import acalibrate_reviews
    from clineval.review.render import calibration_renderable

    _require_store(store_path)
    if json_path and json_path != "-" and not Path(json_path).resolve().parent.is_dir():
        raise ConfigError(f"--json {json_path}: the folder {Path(json_path).resolve().parent} does not exist")
    given = list(specs) or [os.environ.get("CLINEVAL_JUDGE", "") or "offline"]
    twice = sorted({s for s in given if given.count(s) > 1})
    if twice:
        raise ConfigError(f"--judge {twice[0]} given twice: each judge once")
    judges = []
    for spec in given:
        config = _judge_config(spec)
        _check_endpoint(config, spec)
        judges.append((spec, config))
    names = [part.strip() for value in metrics for part in value.split(",") if part.strip()]
    report = run_sync(
        acalibrate_reviews(
            store_path,
            run_ref,
            judges,
            metrics=names or None,
            reviewer=reviewer,
            progress=False if quiet else None,
            cache=None if no_cache else DEFAULT_CACHE,
            judge_concurrency=judge_concurrency,
        )
    )
    text = report.model_dump_json(indent=2)
    if json_path == "-":
        click.echo(text)
        return
    out.print(calibration_renderable(report, store_suffix=_store_suffix(store_path)))
    if json_path:
        write_text_file(json_path, text, "--json")


def _emit(
    report: CalibrationReport,
    store_path: str,
    json_path: str | None,
    markdown_path: str | None,
    *,
    fresh: bool,
) -> None:
    from clineval.calibration.render import markdown, report_renderable

    text = report.model_dump_json(indent=2)
    if json_path == "-":
        click.echo(text)
    elif markdown_path == "-":
        click.echo(markdown([report]), nl=False)
    else:
        out.print(report_renderable(report))
        if report.run_id is not None:
            usage = _usage_line(report.run_id, store_path) if fresh else None
            if usage:
                out.print(usage, highlight=False)
            where = _store_suffix(store_path)
            saved = "Saved as run" if fresh else "Stored run"
            out.print(
                f"{saved} {report.run_id}. Its cases and scores: clineval export {report.run_id}{where}; "
                "this report again, without calling the judge: "
                f"clineval calibrate --from {report.run_id}{where} (--json FILE, --markdown FILE)",
                highlight=False,
                soft_wrap=True,
            )
    if json_path and json_path != "-":
        write_text_file(json_path, text, "--json")
    if markdown_path and markdown_path != "-":
        write_text_file(markdown_path, markdown([report]).rstrip("\n"), "--markdown")
