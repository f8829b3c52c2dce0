"""Agents that would take the CLI down, isolated in worker processes (``--isolate-agent``).

Through the real ``clineval run``:

* an agent that calls ``os._exit(3)`` on one case of six and segfaults on another fails
  those two cases with the reason; the other four are scored; exit 0; the run completes;
* an async agent that blocks its event loop on one case times out there (its worker is
  killed: no process of the run is left); the other cases are scored;
* the run file's ``agent: {target: ..., isolate: true}`` does the same as the option;
* without isolation (the default) the agent still runs in-process: ``os._exit(3)`` ends
  the command with code 3 and the run stays ``running`` (resumable).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.clirun import clineval

AGENTS = """
import asyncio, os, signal, time


def crashes(question):
    if question == "q2":
        os.kill(os.getpid(), signal.SIGSEGV)
    if question == "q3":
        os._exit(3)
    return "ok " + question


async def blocks(question):
    if question == "q1":
        with open("blocked.pid", "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(10**6)  # blocks the worker's event loop
    await asyncio.sleep(0)
    return "ok " + question


def exits(question):
    if question == "q3":
        os._exit(3)
    return "ok " + question


def picky(question, case):
    if case.id == "c01":
        raise ValueError("bad " + question)
    if case.id == "c02":
        raise SystemExit(4)
    return {"response": "ok " + question, "seen": case.id}
"""


def _workspace(folder: Path, n: int = 6) -> Path:
    (folder / "agents.py").write_text(AGENTS)
    with (folder / "cases.jsonl").open("w") as handle:
        for i in range(n):
            handle.write(json.dumps({"id": f"c{i:02d}", "input": f"q{i}", "reference": f"ok q{i}"}) + "\n")
    return folder


def _run(folder: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return clineval("run", *args, "--store", "s.db", "--quiet", cwd=folder, timeout=timeout)


def _outcome(folder: Path) -> tuple[list[str], dict[str, dict[str, Any]], dict[str, float | None]]:
    """The runs' statuses, each case's agent run, and each case's exact_match value."""
    with sqlite3.connect(folder / "s.db") as db:
        statuses = [row[0] for row in db.execute("SELECT status FROM runs")]
        runs = {c: json.loads(d)["agent_run"] for c, d in db.execute("SELECT case_id, data FROM outputs")}
        scores = dict(db.execute("SELECT case_id, value FROM results WHERE metric = 'exact_match'"))
    return statuses, runs, scores


def _assert_clean(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert "Exception ignored" not in stderr, stderr


def test_os_exit_and_segfault_fail_their_cases_and_the_run_completes(tmp_path: Path) -> None:
    folder = _workspace(tmp_path)
    args = ("--data", "cases.jsonl", "-m", "exact_match", "--agent", "agents.py:crashes")
    done = _run(folder, *args, "--isolate-agent", "--concurrency", "2")
    assert done.returncode == 0, done.stderr
    _assert_clean(done.stderr)
    statuses, runs, scores = _outcome(folder)
    assert statuses == ["completed"]
    assert runs["c02"] == {
        "latency_s": runs["c02"]["latency_s"],
        "failed": True,
        "error": "the agent's worker process died (killed by SIGSEGV)",
        "attempts": 1,
    }
    assert runs["c03"]["failed"] and runs["c03"]["error"] == "the agent's worker process died (exit code 3)"
    assert scores == {"c00": 1.0, "c01": 1.0, "c02": None, "c03": None, "c04": 1.0, "c05": 1.0}
    assert "the agent's worker process died (exit code 3)" in done.stdout


def test_loop_blocking_async_agent_times_out_and_its_worker_is_killed(tmp_path: Path) -> None:
    folder = _workspace(tmp_path)
    (folder / "run.yaml").write_text(
        "data: cases.jsonl\nmetrics: [exact_match]\n"
        "agent: {target: agents.py:blocks, isolate: true, timeout_s: 1, concurrency: 2}\n"
    )
    started = time.monotonic()
    done = _run(folder, "run.yaml")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60
    _assert_clean(done.stderr)
    statuses, runs, scores = _outcome(folder)
    assert statuses == ["completed"]
    assert runs["c01"]["failed"] and runs["c01"]["error"] == "timed out after 1 s"
    assert scores == {"c00": 1.0, "c01": None, "c02": 1.0, "c03": 1.0, "c04": 1.0, "c05": 1.0}
    blocked = int((folder / "blocked.pid").read_text())
    try:
        os.kill(blocked, 0)
    except ProcessLookupError:
        pass  # the stuck worker was killed at the timeout
    else:
        raise AssertionError(f"the blocked worker {blocked} outlived the run")
    with sqlite3.connect(folder / "s.db") as db:
        (record,) = db.execute("SELECT record FROM runs").fetchone()
    assert json.loads(record)["config"]["agent"]["isolate"] is True  # kept for --resume


def test_without_isolation_the_agent_runs_in_process(tmp_path: Path) -> None:
    folder = _workspace(tmp_path)
    args = ("--data", "cases.jsonl", "-m", "exact_match", "--agent", "agents.py:exits", "--concurrency", "1")
    done = _run(folder, *args)
    assert done.returncode == 3, done.stderr  # os._exit ends clineval itself, as before
    statuses, runs, _ = _outcome(folder)
    assert statuses == ["running"]  # nothing marks it: the run stays resumable
    assert "c03" not in runs
    with sqlite3.connect(folder / "s.db") as db:
        (record,) = db.execute("SELECT record FROM runs").fetchone()
    assert "isolate" not in json.loads(record)["config"]["agent"]  # stored as before isolation existed


def test_isolated_calls_fail_and_answer_as_in_process_ones(tmp_path: Path) -> None:
    from clineval import evaluate
    from clineval.config import AgentConfig

    folder = _workspace(tmp_path, n=4)
    answers = {}
    for isolate in (False, True):
        agent = AgentConfig(target=str(folder / "agents.py") + ":picky", isolate=isolate, concurrency=2)
        data = folder / "cases.jsonl"
        result = evaluate(data, metrics=["exact_match"], agent=agent, store=None, progress=False)
        answers[isolate] = [
            (c.id, c.response, c.metadata.get("agent_output"), c.agent_run and c.agent_run.error)
            for c in result.cases
        ]
    assert (
        answers[True]
        == answers[False]
        == [
            ("c00", "ok q0", {"seen": "c00"}, None),
            ("c01", None, None, "ValueError: bad q1"),
            ("c02", None, None, "the agent called sys.exit(4)"),
            ("c03", "ok q3", {"seen": "c03"}, None),
        ]
    )
