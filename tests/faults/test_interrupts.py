"""Hung agents, Ctrl-C and SIGTERM, through the real ``clineval`` command.

* An agent that never returns does not keep ``clineval run`` (or ``evaluate()``, or a
  conversation system call) alive once its timeout made the case a failure: the command
  prints its results and gates and exits with its code, saying how many agent calls it
  abandoned.
* SIGTERM during a run is treated like Ctrl-C: what finished is saved, the run is marked
  ``interrupted``, the resume command is printed, exit 143; ``--resume`` completes it.
* Two Ctrl-C in a row do not break the save nor print a traceback.
* Ctrl-C while the command is still importing prints "interrupted" and exits 130.
* An agent that calls ``sys.exit()`` or raises ``KeyboardInterrupt`` fails its case only.

Progress points are observed, never guessed: the tests poll the store for committed
outputs, or wait for a marker file written at a known point.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

AGENTS = """
import sys, time


def hang(question):
    time.sleep(10**6)


def slow(question):
    time.sleep(0.15)
    return "ok " + question


def quits(question):
    if question == "q3":
        sys.exit(3)
    if question == "q4":
        raise KeyboardInterrupt
    return "ok " + question

"""

CLEAN_ENV_KEYS = ("CLINEVAL_JUDGE", "CLINEVAL_STORE", "OPENAI_API_KEY", "COLUMNS")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "agents.py").write_text(AGENTS)
    return tmp_path


def _cases(folder: Path, n: int) -> Path:
    path = folder / f"cases{n}.jsonl"
    with path.open("w") as handle:
        for i in range(n):
            handle.write(json.dumps({"id": f"c{i:02d}", "input": f"q{i}", "reference": f"ok q{i}"}) + "\n")
    return path


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV_KEYS}
    env.update(extra)
    return env


def _clineval(*args: str) -> list[str]:
    return [sys.executable, "-m", "clineval.cli.main", *args]


def _start(folder: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _clineval(*args),
        cwd=folder,
        env=_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _count(store: Path, table: str) -> int:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=0.2) as db:
            return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    except sqlite3.Error:
        return 0


def _wait_for(condition: object, what: str, timeout: float = 20.0) -> None:
    assert callable(condition)
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _runs(store: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(store) as db:
        return [(row[0], row[1]) for row in db.execute("SELECT id, status FROM runs")]


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert "Task exception was never retrieved" not in stderr, stderr
    assert "Exception ignored" not in stderr, stderr


def _run_args(folder: Path, agent: str, n: int, store: Path, *extra: str) -> list[str]:
    data = _cases(folder, n)
    return [
        "run",
        "--data",
        str(data),
        "-m",
        "exact_match",
        "--agent",
        f"agents.py:{agent}",
        "--store",
        str(store),
        "--quiet",
        *extra,
    ]


# ----------------------------------------------------------------------------- hung agents


def test_hung_sync_agent_does_not_keep_the_command_alive(workspace: Path) -> None:
    store = workspace / "hung.db"
    args = _run_args(workspace, "hang", 3, store, "--agent-timeout", "1", "--concurrency", "3")
    # A gate that fails: the command must still end, with the gate's exit code.
    proc = _start(workspace, *args, "--fail-over", "failure=0.5")
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 1, (out, err)
    _no_traceback(err)
    assert "timed out after 1 s" in out
    assert "Gates" in out
    assert "3 agent call(s) were still running" in err and "abandoned" in err
    assert [status for _, status in _runs(store)] == ["completed"]
    assert _count(store, "outputs") == 3


def test_evaluate_returns_with_a_hung_agent(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            import time
            from clineval import evaluate

            def agent(question):
                time.sleep(10**6)

            result = evaluate(
                [{"id": "a", "input": "q", "reference": "r"}, {"id": "b", "input": "q", "reference": "r"}],
                metrics=["exact_match"],
                agent=agent,
                agent_timeout_s=0.5,
                store=None,
                progress=False,
            )
            print("failed cases:", sum(c.agent_run.failed for c in result.cases))
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=30, env=_env(), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "failed cases: 2" in done.stdout


def test_hung_conversation_system_is_abandoned_at_its_timeout(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio, time
            from clineval.interrupts import run_sync
            from clineval.conversations.model import Conversation
            from clineval.conversations.simulate import System

            async def main():
                system = System(lambda conversation: time.sleep(10**6))
                try:
                    await asyncio.wait_for(system(Conversation(id="x", messages=[])), 0.5)
                except TimeoutError:
                    print("timed out")

            run_sync(main())
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=30, env=_env(), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "timed out" in done.stdout


# ----------------------------------------------------------------------------- signals


def _interrupt_and_resume(workspace: Path, signals: list[signal.Signals], expected_code: int) -> str:
    """Start a run, send ``signals`` once some outputs are committed, check it, resume it."""
    store = workspace / "signals.db"
    n = 16
    proc = _start(workspace, *_run_args(workspace, "slow", n, store, "--concurrency", "2"))
    try:
        _wait_for(lambda: _count(store, "outputs") >= 2, "two committed agent outputs")
        for i, sig in enumerate(signals):
            if i:  # a moment apart: signals sent at once may merge into one
                time.sleep(0.03)
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == expected_code, (out, err)
    _no_traceback(err)
    [(run_id, status)] = _runs(store)
    assert status == "interrupted"
    assert f"clineval run --resume {run_id} --store {store}" in err
    kept = _count(store, "outputs")
    assert 2 <= kept < n

    resumed = subprocess.run(
        _clineval("run", "--resume", run_id, "--store", str(store), "--quiet"),
        cwd=workspace,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    _no_traceback(resumed.stderr)
    assert _runs(store) == [(run_id, "completed")]
    assert _count(store, "outputs") == n
    assert _count(store, "results") == n * 3  # exact_match, latency, failure: each once
    return err


def test_sigterm_is_treated_like_ctrl_c(workspace: Path) -> None:
    err = _interrupt_and_resume(workspace, [signal.SIGTERM], expected_code=143)
    assert "interrupted (SIGTERM): everything finished so far is saved" in err


def test_double_ctrl_c_saves_and_prints_no_traceback(workspace: Path) -> None:
    err = _interrupt_and_resume(workspace, [signal.SIGINT, signal.SIGINT], expected_code=130)
    assert "interrupted: everything finished so far is saved" in err


def paused_import(module: str) -> str:
    """A ``sitecustomize.py`` that pauses the import of ``module`` for a minute, after it
    writes the file named by ``IMPORT_MARKER``: a signal can then be sent in that window."""
    return f"""
import os, sys, time
from importlib.abc import MetaPathFinder


class Pause(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            open(os.environ["IMPORT_MARKER"], "w").close()
            time.sleep(60)
        return None


sys.meta_path.insert(0, Pause())
"""


SLOW_IMPORT = paused_import("clineval.cli.main")


SCRIPT = Path(sys.executable).parent / "clineval"


@pytest.mark.parametrize(
    ("sig", "code", "launcher"),
    [(signal.SIGINT, 130, "script"), (signal.SIGTERM, 143, "script"), (signal.SIGINT, 130, "-m")],
)
def test_interrupt_while_the_command_imports(
    tmp_path: Path, sig: signal.Signals, code: int, launcher: str
) -> None:
    if launcher == "script" and not SCRIPT.exists():
        pytest.skip("the clineval script is not installed beside this Python")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SLOW_IMPORT)
    marker = tmp_path / "importing"
    path = os.pathsep.join([str(hooks), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [str(SCRIPT)] if launcher == "script" else _clineval()
    proc = subprocess.Popen(
        [*command, "runs", "--store", "none.db"],
        cwd=tmp_path,
        env=_env(PYTHONPATH=path, IMPORT_MARKER=str(marker)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(marker.exists, "the import of clineval.cli.main")
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    _no_traceback(err)
    assert err.strip() == ("interrupted" if sig == signal.SIGINT else "interrupted (SIGTERM)")


# ----------------------------------------------------------------------------- agents that quit


def test_agent_calling_sys_exit_or_raising_keyboard_interrupt_fails_its_case(workspace: Path) -> None:
    store = workspace / "quits.db"
    done = subprocess.run(
        _clineval(*_run_args(workspace, "quits", 6, store)),
        cwd=workspace,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    _no_traceback(done.stderr)
    assert [status for _, status in _runs(store)] == ["completed"]
    with sqlite3.connect(store) as db:
        runs = {
            case: json.loads(data)["agent_run"]
            for case, data in db.execute("SELECT case_id, data FROM outputs")
        }
    assert len(runs) == 6
    assert runs["c03"]["failed"] and runs["c03"]["error"] == "the agent called sys.exit(3)"
    assert runs["c04"]["failed"] and runs["c04"]["error"] == "the agent raised KeyboardInterrupt"
    assert not any(runs[c]["failed"] for c in ("c00", "c01", "c02", "c05"))


def test_async_agent_calling_sys_exit_or_raising_keyboard_interrupt_fails_its_case() -> None:
    from clineval import evaluate

    async def agent(question: str) -> str:
        if question == "q3":
            sys.exit(3)
        if question == "q4":
            raise KeyboardInterrupt
        return "ok " + question

    result = evaluate(
        [{"id": f"c{i:02d}", "input": f"q{i}", "reference": f"ok q{i}"} for i in range(6)],
        metrics=["exact_match"],
        agent=agent,
        store=None,
        progress=False,
    )
    assert result.run.status == "completed"
    runs = {case.id: case.agent_run for case in result.cases}
    assert runs["c03"] is not None and runs["c03"].error == "the agent called sys.exit(3)"
    assert runs["c04"] is not None and runs["c04"].error == "the agent raised KeyboardInterrupt"
    assert not any(r is not None and r.failed for c, r in runs.items() if c not in ("c03", "c04"))


def test_a_hung_suite_evaluator_times_out_and_the_run_exits(workspace: Path) -> None:
    """A suite evaluator (user code, sync) stuck forever: the call is unscored after its
    ``timeout_s``, the other cases are scored and the command exits."""
    (workspace / "evals.py").write_text(
        textwrap.dedent(
            """
            import time

            class Stuck:
                def __call__(self, *, response, ground_truth):
                    if response == "hang":
                        time.sleep(10**6)
                    return {"score": float(response == ground_truth)}
            """
        )
    )
    (workspace / "answers.py").write_text(
        textwrap.dedent(
            """
            from clineval.suites import SuitePipeline

            class Answers(SuitePipeline):
                async def generate_responses(self, case):
                    return {"answer": "hang" if case.id == "s.2" else "yes"}
            """
        )
    )
    (workspace / "suite.yaml").write_text(
        "s:\n  description: d\n  pipeline:\n    class: answers.py:Answers\n"
        "  evaluators: [{name: E, class: 'evals.py:Stuck', timeout_s: 1.5}]\n"
        "  cases: [s.1, s.2]\n"
        "s.1:\n  metrics: [E]\n  evaluations: [{query: answer, ground_truth: 'yes'}]\n"
        "s.2:\n  metrics: [E]\n  evaluations: [{query: answer, ground_truth: 'yes'}]\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        _clineval("run", "suite.yaml", "--store", str(workspace / "r.db"), "-q"),
        cwd=workspace,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 40
    _no_traceback(done.stderr)
    assert "evaluator 'E' timed out after 1.5 s" in done.stdout, done.stdout
    assert _runs(workspace / "r.db")[0][1] == "completed"
