"""SIGINT and SIGTERM at any moment of ``clineval run``, through the real command.

The sweep sends one signal to each of several ``clineval run`` processes at delivery
times spread over the first two seconds (six processes at once, so start-up is slow as
on a loaded machine) and checks every outcome:

* clineval's: exit 130 (SIGINT) or 143 (SIGTERM) and exactly one line on standard error,
  ``interrupted`` (``interrupted (SIGTERM)``), or the run's ``interrupted: everything
  finished so far is saved; continue with: ...`` once a run exists; no run stored, or
  one marked ``interrupted``; never click's ``Aborted!``, never a traceback;
* Python's own, only for a signal delivered before clineval's handler is installed
  (interpreter start-up, the launcher's ``import re``, ``clineval/__init__``'s ``from
  typing import``, tens of milliseconds on an idle machine): the process ends by the signal
  (a shell shows 130/143), with nothing on standard error or Python's KeyboardInterrupt
  traceback without a clineval frame, and no store; or, interrupted while it imports its
  ``site`` module or ``runpy`` (``python -m``), Python's own start-up error, exit 1.

The phases that once escaped are also hit on purpose: a command module loading inside
click (click's ``Aborted!``, exit 1, before), and signals after the save (they killed the
process by the signal, and the "abandoned" note was lost).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.faults.test_interrupts import paused_import

AGENTS = """
import os
import time
from pathlib import Path


def slow(question):
    time.sleep(0.15)
    return "ok " + question


def hang(question):
    # say that this call is under way (a file per call), then never answer
    Path(__file__).with_name("started-" + question).write_text(str(os.getpid()))
    time.sleep(10**6)
"""

# A clineval frame past the installation of its handler: clineval/__init__.py (its
# ``from typing import``), clineval/cli/__init__.py and the imports of interrupts.py run
# before it, so Python's own traceback may show them.
CLINEVAL_FRAME = re.compile(
    r'File "[^"]*[/\\]clineval[/\\](?!__init__\.py"|cli[/\\]__init__\.py"|interrupts\.py")[^"]*\.py"'
)


PYTHON_STARTUP_ERRORS = ("Fatal Python error: init_import_site", "Could not import runpy module")
"""How Python itself reports an interrupt while it starts, before it runs any of clineval."""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLINEVAL_", "OPENAI_", "AZURE_"))}
    env.pop("COLUMNS", None)
    env.update(extra)
    return env


def _clineval(*args: str) -> list[str]:
    return [sys.executable, "-m", "clineval.cli.main", *args]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "agents.py").write_text(AGENTS)
    with (tmp_path / "cases.jsonl").open("w") as handle:
        for i in range(24):
            handle.write(json.dumps({"id": f"c{i:02d}", "input": f"q{i}", "reference": f"ok q{i}"}) + "\n")
    return tmp_path


def _run_args(workspace: Path, store: Path, agent: str = "slow") -> list[str]:
    return [
        "run",
        "--data",
        str(workspace / "cases.jsonl"),
        "-m",
        "exact_match",
        "--agent",
        f"agents.py:{agent}",
        "--store",
        str(store),
        "--quiet",
        "--concurrency",
        "2",
    ]


def _statuses(store: Path) -> list[str]:
    if not store.exists():
        return []
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        return [row[0] for row in db.execute("SELECT status FROM runs")]


@dataclass
class Outcome:
    delay: float
    sig: signal.Signals
    code: int
    stdout: str
    stderr: str
    store: Path

    def describe(self) -> str:
        return f"{self.sig.name} at {self.delay:.2f} s: exit {self.code}, stderr {self.stderr!r}"


def _deliver(workspace: Path, index: int, delay: float, sig: signal.Signals) -> Outcome:
    store = workspace / f"sweep{index}.db"
    started = time.monotonic()
    proc = subprocess.Popen(
        _clineval(*_run_args(workspace, store)),
        cwd=workspace,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(max(0.0, delay - (time.monotonic() - started)))
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return Outcome(delay, sig, proc.returncode, out, err, store)


def _check(outcome: Outcome) -> str:
    """'clineval' or 'python' (who handled the signal); fails on anything else."""
    what = outcome.describe()
    assert "Aborted!" not in outcome.stderr, what
    # ended by the signal, or Python's own start-up errors (a Ctrl-C while it imports its
    # site module, or runpy for ``python -m``: exit 1): only before clineval's first module
    if outcome.code == -outcome.sig or outcome.stderr.startswith(PYTHON_STARTUP_ERRORS):
        assert outcome.stdout == "", what
        assert not CLINEVAL_FRAME.search(outcome.stderr), what
        lines = outcome.stderr.strip().splitlines()
        assert not lines or lines[-1] == "KeyboardInterrupt", what
        assert not outcome.store.exists(), what
        return "python"
    assert "Traceback" not in outcome.stderr and "Exception ignored" not in outcome.stderr, what
    assert outcome.code == (130 if outcome.sig == signal.SIGINT else 143), what
    word = "interrupted" if outcome.sig == signal.SIGINT else "interrupted (SIGTERM)"
    [line] = outcome.stderr.strip().splitlines()
    statuses = _statuses(outcome.store)
    if statuses:  # the run existed: it is saved as interrupted and can be resumed
        assert statuses == ["interrupted"], what
        assert line.startswith(f"{word}: everything finished so far is saved; continue with: "), what
        assert f"--store {outcome.store}" in line, what
    else:
        assert line == word, what
    return "clineval"


def _sweep(workspace: Path, deliveries: list[tuple[float, signal.Signals]]) -> dict[str, int]:
    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(lambda job: _deliver(workspace, job[0], *job[1]), enumerate(deliveries)))
    handled = {"clineval": 0, "python": 0}
    for outcome in outcomes:
        handled[_check(outcome)] += 1
    # From two seconds on, clineval's handler is long in place (about 0.1 s after exec when
    # the machine is idle, well under 0.5 s on a loaded one).
    assert all(_check(o) == "clineval" for o in outcomes if o.delay >= 2.0)
    return handled


def test_signal_sweep_over_the_first_two_seconds_of_a_run(workspace: Path) -> None:
    signals = [signal.SIGINT, signal.SIGTERM]
    deliveries = [(2.0 * i / 11, signals[i % 2]) for i in range(12)]
    deliveries.append((2.0, signal.SIGINT))  # both signals at the end of the window
    handled = _sweep(workspace, deliveries)
    assert handled["clineval"] >= 7, handled


@pytest.mark.slow
def test_dense_signal_sweep_over_four_seconds(workspace: Path) -> None:
    deliveries = [(4.0 * i / 29, sig) for i in range(30) for sig in (signal.SIGINT, signal.SIGTERM)]
    handled = _sweep(workspace, deliveries)
    assert handled["clineval"] >= 40, handled


# clineval.cli.report is imported by click while it resolves the 'report' command
PAUSE_IN_CLICK = paused_import("clineval.cli.report")


@pytest.mark.parametrize(
    ("sig", "code", "line"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "interrupted (SIGTERM)")],
)
def test_signal_while_click_loads_a_command_is_not_aborted(
    tmp_path: Path, sig: signal.Signals, code: int, line: str
) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(PAUSE_IN_CLICK)
    marker = tmp_path / "loading"
    proc = subprocess.Popen(
        _clineval("report", "latest", "--store", "none.db"),
        cwd=tmp_path,
        env=_env(
            PYTHONPATH=os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")])),
            IMPORT_MARKER=str(marker),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert time.monotonic() < deadline, "the command never loaded clineval.cli.report"
            time.sleep(0.02)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert (proc.returncode, err) == (code, line + "\n")  # click alone said "Aborted!", exit 1


def test_signals_after_the_save_are_ignored_and_the_note_is_kept(workspace: Path) -> None:
    """A hung agent, Ctrl-C (the run is saved as interrupted, its line printed), then SIGTERM
    and Ctrl-C every two milliseconds until the process ends: they are ignored, and it
    ends by itself, 130, with the abandoned-calls note (a later signal killed it by the
    signal, or cut the note, before).

    Standard error is read unbuffered: a buffered ``readline`` could take the note into its
    buffer with the first line, where ``communicate`` (which reads the pipe itself) never
    looks, and the note would seem lost."""
    store = workspace / "hung.db"
    proc = subprocess.Popen(
        _clineval(*_run_args(workspace, store, agent="hang")),
        cwd=workspace,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    assert proc.stderr is not None
    sent = 0
    try:
        deadline = time.monotonic() + 60
        while _safe_statuses(store) != ["running"]:
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.02)
        while len(list(workspace.glob("started-*"))) < 2:  # both agent calls are under way
            assert time.monotonic() < deadline, "the agent calls never started"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        first = proc.stderr.readline().decode()  # the save is over once the command says so
        while proc.poll() is None and sent < 5000:
            proc.send_signal(signal.SIGTERM if sent % 2 else signal.SIGINT)
            sent += 1
            time.sleep(0.002)
        out_bytes, rest_bytes = proc.communicate(timeout=30)
        out, rest = out_bytes.decode(), rest_bytes.decode()
    finally:
        proc.kill()
    assert proc.returncode == 130, (sent, first, rest)  # not -15 / -2: never killed by a signal
    assert first.startswith("interrupted: everything finished so far is saved; continue with: "), first
    assert rest.splitlines() == [
        "note: 2 agent call(s) were still running (timed out, or stopped by an interrupt) and were abandoned"
    ], rest
    assert out == ""
    assert _statuses(store) == ["interrupted"]


def _safe_statuses(store: Path) -> list[str]:
    try:
        return _statuses(store)
    except sqlite3.Error:
        return []
