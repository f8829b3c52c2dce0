"""What every command shares: the consoles, the user-error wrapper and the store option."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.text import Text

from clineval.errors import ClinevalError, ConfigError, RunInterrupted
from clineval.interrupts import exit_code, interrupted_by
from clineval.redaction import error_text
from clineval.store import DEFAULT_STORE

if TYPE_CHECKING:  # imported in judge_option: start-up stays light
    from clineval.judges.config import JudgeConfig
    from clineval.metrics.registry import MetricSpec

F = TypeVar("F", bound=Callable[..., Any])


def _console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    # Piped output gets a wider page than rich's 80 columns, so tables keep their ids whole.
    wide = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(stderr=stderr, width=140 if wide else None)


out = _console()
err = _console(stderr=True)


def friendly(fn: F) -> F:
    """Print user errors as one line instead of a traceback."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ClinevalError as exc:
            # Masked: an error may quote a server's answer that echoes a key.
            err.print(
                Text.assemble(("error: ", "bold red"), error_text(exc)), highlight=False, soft_wrap=True
            )
            sys.exit(2)
        except RunInterrupted as exc:
            err.print(
                Text.assemble(
                    ("interrupted", "yellow"),
                    f"{interrupted_by()}: everything finished so far is saved; continue with: ",
                    exc.resume_hint,
                ),
                highlight=False,
                soft_wrap=True,
            )
            sys.exit(exit_code())  # 130 after Ctrl-C, 143 after SIGTERM
        except KeyboardInterrupt:
            err.print(f"[yellow]interrupted[/]{interrupted_by()}")
            sys.exit(exit_code())

    return wrapper  # type: ignore[return-value]


store_option = click.option(
    "--store",
    "store_path",
    default=DEFAULT_STORE,
    show_default=True,
    envvar="CLINEVAL_STORE",
    help="SQLite run store (env CLINEVAL_STORE).",
)


def _require_store(store_path: str) -> None:
    """An existing store (commands that read one open it read-only, so a read-only store is fine)."""
    if not Path(store_path).exists():
        raise ConfigError(f"no run store at {store_path}; run 'clineval run' first or pass --store")


def cannot_write(option: str, path: str | Path, exc: OSError) -> str:
    """``--out x.csv: cannot write (permission denied); ...``: one line that says what to do."""
    reason = (exc.strerror or str(exc)).lower()
    return f"{option} {path}: cannot write ({reason}); give {option} a file in a folder you can write"


def write_text_file(path: str, text: str, option: str) -> None:
    """Write ``text`` to ``path`` for an output option, say so on stderr; a clear error if it cannot."""
    try:
        Path(path).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(cannot_write(option, path, exc)) from None
    err.print(f"wrote {path}", highlight=False)


def judge_option(value: str | None) -> JudgeConfig | None:
    """A --judge value as a config; a scripted judge's file and an nli judge's model folder are
    taken from the working directory."""
    if not value:
        return None
    from pydantic import ValidationError

    from clineval.judges.config import JudgeConfig

    try:
        config = JudgeConfig.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(str(e.get("msg", "")).removeprefix("Value error, ") for e in exc.errors())
        raise ConfigError(f"--judge {value!r}: {problems}") from None
    if config.script:
        config.script = str(Path(config.script).resolve())
    if config.model_path:
        config.model_path = str(Path(config.model_path).resolve())
    return config


def _limit(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not (0 < number < float("inf")):
        raise click.BadParameter(f"expected a number above 0, got {value!r}")
    return number


def judge_limit_options(fn: F) -> F:
    """``--judge-rpm`` and ``--judge-tpm`` (see :mod:`clineval.judges.budget`)."""
    fn = click.option(
        "--judge-tpm",
        callback=_limit,
        metavar="TOKENS",
        help="At most this many judge tokens a minute (counted from the responses' usage).",
    )(fn)
    fn = click.option(
        "--judge-rpm",
        callback=_limit,
        metavar="REQUESTS",
        help="At most this many judge requests a minute, retries included (evenly spaced).",
    )(fn)
    return fn


def with_judge_limits(config: JudgeConfig, rpm: float | None, tpm: float | None) -> JudgeConfig:
    """``config`` with the limits given on the command line (the others kept)."""
    updates = {k: v for k, v in (("rpm", rpm), ("tpm", tpm)) if v is not None}
    return config.model_copy(update=updates) if updates else config


def gold_option(fn: F) -> F:
    """``--gold FILE``: labels joined to conversations by id and turn (:mod:`clineval.conversations.gold`)."""
    return click.option(
        "--gold",
        "gold_path",
        type=click.Path(dir_okay=False),
        help="Gold labels joined by conversation id and turn (JSONL, JSON or CSV: gold_agent, gold_tools, "
        "reference, ...; see docs/conversations.md 'Gold labels from a side file').",
    )(fn)


def executor_options(fn: F) -> F:
    """``--executor``, ``--ray-address`` and ``--ray-workers`` (see docs/ray.md)."""
    fn = click.option(
        "--ray-workers", type=click.IntRange(1, 100_000), help="With --executor ray: worker actors."
    )(fn)
    fn = click.option(
        "--ray-address",
        help="With --executor ray: auto, HOST:PORT or ray://HOST:10001 (default: a new local Ray).",
    )(fn)
    fn = click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        help="Where agent calls and scores run: this process (default) or a Ray cluster (clineval[ray]).",
    )(fn)
    return fn


def executor_settings(
    executor: str | None, ray_address: str | None, ray_workers: int | None
) -> dict[str, Any]:
    """The options of :func:`executor_options` as settings (``--ray-address``/``--ray-workers`` imply ray)."""
    if (ray_address or ray_workers) and executor == "local":
        raise ConfigError("--ray-address and --ray-workers go with --executor ray")
    given: dict[str, Any] = {"executor": "ray"} if ray_address or ray_workers else {}
    given.update(
        {
            k: v
            for k, v in (("executor", executor), ("ray_address", ray_address), ("ray_workers", ray_workers))
            if v
        }
    )
    return given


def metric_specs(values: Sequence[str]) -> list[MetricSpec]:
    """``-m`` values (repeatable or comma-separated) as metric specs; a metric in a ``.py``
    file given by a relative path is taken from the working directory."""
    from clineval.metrics.registry import parse_metric_spec, split_top_level

    specs: list[MetricSpec] = []
    for value in values:
        for part in split_top_level(value):
            if part.strip():
                spec = parse_metric_spec(part)
                module, sep, attr = spec.name.rpartition(":")
                if sep and module.endswith(".py") and not Path(module).is_absolute():
                    spec = spec.model_copy(update={"name": f"{Path(module).resolve()}:{attr}"})
                specs.append(spec)
    return specs


def tag_pairs(values: Sequence[str]) -> dict[str, str]:
    """``--tag KEY=VALUE`` values as a dict."""
    tags: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--tag {value!r}: expected KEY=VALUE")
        tags[key.strip()] = val.strip()
    return tags
