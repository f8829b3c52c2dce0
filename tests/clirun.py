"""The one way the tests run clineval's command line.

``clineval(*args, cwd=...)`` runs the real command, ``python -m clineval.cli.main ARGS``, in a
subprocess, as a user runs it: its exit code, standard output and standard error come back
as text in a :class:`subprocess.CompletedProcess`. ``invoke(*args)`` runs the same command
in-process through click's :class:`~click.testing.CliRunner`, for the tests that need no
process of their own.

The environment is the test's own (``tests/conftest.py`` has already removed the
developer's ``CLINEVAL_*`` / ``OPENAI_*`` / ``AZURE_*`` variables) with ``COLUMNS=200``, so
that lines are not wrapped where a test reads them, and the ``env`` overrides on top; an
override of ``None`` removes the variable.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from click.testing import Result

COMMAND = (sys.executable, "-m", "clineval.cli.main")
"""``clineval`` as the tests start it: the interpreter of the test run and the CLI's module."""


def cli_env(env: Mapping[str, str | None] | None = None, *, columns: int | None = 200) -> dict[str, str]:
    """``os.environ`` with ``COLUMNS`` set to ``columns`` (left as it is when ``None``) and
    ``env`` merged over it; a value of ``None`` in ``env`` removes that variable."""
    merged = dict(os.environ)
    if columns is not None:
        merged["COLUMNS"] = str(columns)
    for name, value in (env or {}).items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    return merged


def clineval(
    *args: str,
    cwd: Path | str | None = None,
    env: Mapping[str, str | None] | None = None,
    timeout: float = 120,
    columns: int | None = 200,
    prefix: Sequence[str] = (),
    preexec_fn: Callable[[], object] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``clineval ARGS`` in a subprocess started in ``cwd``, its output captured as text.

    ``prefix`` goes before the interpreter (a wrapper command such as ``taskset`` or
    ``prlimit``); ``preexec_fn`` runs in the child before the command (a memory limit, a signal
    disposition). A command still running after ``timeout`` seconds raises
    :class:`subprocess.TimeoutExpired`, which fails the test."""
    return subprocess.run(
        [*prefix, *COMMAND, *args],
        cwd=cwd,
        env=cli_env(env, columns=columns),
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec_fn,
    )


def invoke(
    *args: str,
    env: Mapping[str, str | None] | None = None,
    catch_exceptions: bool = True,
    terminal_width: int | None = None,
) -> Result:
    """``clineval ARGS`` in this process through click's ``CliRunner``: ``env`` as click takes
    it (set for the call; ``None`` removes a variable), ``terminal_width`` for click's own
    formatting (help text)."""
    from click.testing import CliRunner

    from clineval.cli.main import cli

    extra: dict[str, Any] = {} if terminal_width is None else {"terminal_width": terminal_width}
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=catch_exceptions, **extra)
