"""Judge faults through a real ``clineval run`` against the project's local HTTP server.

Each test starts :class:`clineval.testing.ScriptedServer` in a fault mode and runs the
command line in a subprocess, as a user would, then checks what the user sees (exit
code, stderr without a traceback) and what the store holds:

* a ``Retry-After: 3600`` cannot stall a run: a wait beyond ``max_retry_after_s`` fails
  that request at once, with the reason (issue 12, item 2);
* a judge cache that cannot be written never costs an answer: one warning, every case
  scored (item 7);
* a 401 in the middle of a run stops it with the judge-configuration error, the run is
  ``failed`` with the resume hint, nothing else is printed (item 10), and the resume
  completes it;
* judge usage counts every request the server received, failed attempts included, and a
  400 that is not retried says so (item 12).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import clineval

from clineval.testing import ScriptedServer

GOOD = {"explanation": "Matches the reference.", "rating": 5}
KEY_ECHO = "Incorrect API key provided: Bearer sk-test-0123456789abcdefXYZ"


def _write_cases(folder: Path, n: int, *, same_reference: bool = False) -> Path:
    path = folder / "cases.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            reference = (
                "Potassium was 5.9 mmol/L on 12 March, above the range."
                if same_reference
                else f"Potassium was {4 + i / 10:.1f} mmol/L."
            )
            row = {
                "id": f"c{i:02d}",
                "input": f"note {i}: latest potassium?",
                "response": f"Patient {i} has potassium {4 + i / 10:.1f} mmol/L.",
                "reference": reference,
            }
            handle.write(json.dumps(row) + "\n")
    return path


def _run_file(folder: Path, server: ScriptedServer, metrics: list[str], **judge: Any) -> Path:
    path = folder / "run.yaml"
    config = {
        "name": "judge faults",
        "data": "cases.jsonl",
        "metrics": metrics,
        "judge": {"provider": "openai", "model": "judge-model", "base_url": server.base_url, **judge},
        "store": str(folder / "runs.db"),
        "cache": None,
    }
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


def _cli(
    *args: str, cwd: Path, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return clineval(*args, cwd=cwd, env=env, timeout=timeout)


def _no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    for stream in (proc.stdout, proc.stderr):
        assert "Traceback" not in stream, stream
        assert "Task exception was never retrieved" not in stream, stream
        assert "Exception ignored" not in stream, stream


def _store_rows(store: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(store)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def _results(store: Path) -> dict[tuple[str, str], dict[str, Any]]:
    rows = _store_rows(store, "SELECT case_id, metric, status, score, usage FROM results")
    return {
        (case, metric): {"status": status, **json.loads(score), "usage": json.loads(usage)}
        for case, metric, status, score, usage in rows
    }


# --- Retry-After -------------------------------------------------------------------


def test_a_retry_after_of_an_hour_does_not_stall_the_run(llm_server: ScriptedServer, tmp_path: Path) -> None:
    """The server asks one case to come back in an hour: that request fails at once (the
    case unscored, with the reason), the others are scored, the run ends in seconds."""
    llm_server.set_script(
        {
            "rules": [{"pattern": "note 3:", "status": 429, "retry_after": 3600}],
            "default": {"json": GOOD},
        }
    )
    _write_cases(tmp_path, 8)
    run_file = _run_file(tmp_path, llm_server, ["rubric"], max_retry_after_s=2, concurrency=2)
    started = time.monotonic()
    proc = _cli("run", str(run_file), "-q", cwd=tmp_path, timeout=45)
    elapsed = time.monotonic() - started
    _no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 30, f"the run took {elapsed:.0f} s"
    results = _results(tmp_path / "runs.db")
    assert len(results) == 8
    bad = results[("c03", "rubric")]
    assert bad["status"] == "error"
    assert "HTTP 429, not retried" in bad["error"]
    assert "asked to wait 3600 s, more than max_retry_after_s = 2 s" in bad["error"]
    assert all(r["status"] == "scored" for key, r in results.items() if key != ("c03", "rubric"))
    # asked once, not retried: the server saw one request for that case
    assert sum("note 3:" in json.dumps(r["body"]) for r in llm_server.requests()) == 1


def test_a_retry_after_within_the_cap_is_waited_for(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script(
        {
            "rules": [{"pattern": "note 1:", "times": 1, "status": 429, "retry_after": 1}],
            "default": {"json": GOOD},
        }
    )
    _write_cases(tmp_path, 3)
    run_file = _run_file(tmp_path, llm_server, ["rubric"], max_retry_after_s=5)
    started = time.monotonic()
    proc = _cli("run", str(run_file), "-q", cwd=tmp_path)
    _no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started >= 1.0
    results = _results(tmp_path / "runs.db")
    assert all(r["status"] == "scored" for r in results.values())
    assert results[("c01", "rubric")]["usage"]["calls"] == 2  # the 429 counts as a request sent


# --- usage and messages --------------------------------------------------------------


def test_usage_counts_every_request_the_server_received(llm_server: ScriptedServer, tmp_path: Path) -> None:
    """Scored cases, a case retried after a 500, a case that fails after every attempt, a
    re-asked case and a 400: the run's judge calls equal the requests received."""
    llm_server.set_script(
        {
            "rules": [
                {"pattern": "note 1:", "times": 1, "status": 500},
                {"pattern": "note 2:", "status": 503},
                {"pattern": "note 3:", "times": 1, "content": "not JSON"},
                {"pattern": "note 4:", "status": 400, "error_message": "unsupported parameter"},
            ],
            "default": {"json": GOOD},
        }
    )
    _write_cases(tmp_path, 7)
    run_file = _run_file(tmp_path, llm_server, ["rubric"], max_attempts=3)
    proc = _cli("run", str(run_file), "-q", cwd=tmp_path)
    _no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    received = llm_server.stats()["chat_requests"]
    assert received == 3 + 2 + 3 + 2 + 1  # c00, c05, c06 once; c01 twice; c02 3x; c03 twice; c04 once
    results = _results(tmp_path / "runs.db")
    assert sum(r["usage"]["calls"] for r in results.values()) == received
    record = json.loads(_store_rows(tmp_path / "runs.db", "SELECT record FROM runs")[0][0])
    assert record["usage"]["calls"] == received
    assert results[("c01", "rubric")]["usage"]["calls"] == 2
    assert results[("c02", "rubric")]["usage"]["calls"] == 3
    assert "failed after 3 attempt(s): HTTP 503" in results[("c02", "rubric")]["error"]
    assert results[("c03", "rubric")]["usage"]["calls"] == 2
    assert results[("c03", "rubric")]["usage"]["reasks"] == 1
    # a 400 is not retried, and the reason says so (not "after 3 attempt(s) at most")
    c04 = results[("c04", "rubric")]
    assert c04["status"] == "error" and c04["usage"]["calls"] == 1
    assert "judge call failed (HTTP 400, not retried): unsupported parameter" in c04["error"]
    assert "attempt" not in c04["error"]


# --- a judge cache that cannot be written -----------------------------------------------


@contextlib.contextmanager
def _read_only(*paths: Path) -> Iterator[None]:
    """Make files and folders unwritable, also for root (chmod does not stop root; the
    immutable attribute does); skip when neither works here."""
    for path in paths:
        path.chmod(0o555 if path.is_dir() else 0o444)
    immutable: list[Path] = []
    try:
        if os.geteuid() == 0:
            if shutil.which("chattr") is None:
                pytest.skip("running as root without chattr: cannot make a file read-only")
            for path in paths:
                if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
                    pytest.skip("chattr +i is not supported here")
                immutable.append(path)
        yield
    finally:
        for path in immutable:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        for path in paths:
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_a_read_only_judge_cache_keeps_the_answers(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script({"default": {"json": GOOD}})
    _write_cases(tmp_path, 2)
    cache_dir = tmp_path / "cache"
    run_file = _run_file(tmp_path, llm_server, ["rubric"])
    config = json.loads(run_file.read_text())
    run_file.write_text(json.dumps({**config, "cache": str(cache_dir / "judge.db")}))
    first = _cli("run", str(run_file), "-q", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    for extra in cache_dir.glob("judge.db-*"):
        extra.unlink()  # the first run's WAL files are gone, as after a clean exit
    _write_cases(tmp_path, 6)  # two cached, four new answers that cannot be stored
    llm_server.reset()
    llm_server.set_script({"default": {"json": GOOD}})
    with _read_only(cache_dir / "judge.db", cache_dir):
        proc = _cli("run", str(run_file), "-q", cwd=tmp_path)
    _no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("warning: judge cache") == 1, proc.stderr
    assert "cannot be written" in proc.stderr
    run_id = _store_rows(tmp_path / "runs.db", "SELECT id FROM runs ORDER BY created_at DESC LIMIT 1")[0][0]
    statuses = _store_rows(tmp_path / "runs.db", "SELECT status FROM results WHERE run_id = ?", run_id)
    assert [s for (s,) in statuses] == ["scored"] * 6


def test_a_judge_cache_that_cannot_be_created_is_skipped(llm_server: ScriptedServer, tmp_path: Path) -> None:
    """The cache's folder is a file (so it cannot be created, whoever runs the test)."""
    llm_server.set_script({"default": {"json": GOOD}})
    _write_cases(tmp_path, 3)
    (tmp_path / "not-a-folder").write_text("a file")
    run_file = _run_file(tmp_path, llm_server, ["rubric"])
    config = json.loads(run_file.read_text())
    run_file.write_text(json.dumps({**config, "cache": str(tmp_path / "not-a-folder" / "judge.db")}))
    proc = _cli("run", str(run_file), "-q", cwd=tmp_path)
    _no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("warning: judge cache") == 1, proc.stderr
    assert [s for (s,) in _store_rows(tmp_path / "runs.db", "SELECT status FROM results")] == ["scored"] * 3


# --- 401 in the middle of a run ------------------------------------------------------------


def test_a_401_mid_run_stops_cleanly_and_resume_completes(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script(
        {
            "rules": [{"times": 4, "json": GOOD}],
            "default": {"status": 401, "error_message": KEY_ECHO},
        }
    )
    _write_cases(tmp_path, 10)
    run_file = _run_file(tmp_path, llm_server, ["rubric"], concurrency=1)
    proc = _cli("run", str(run_file), "-q", cwd=tmp_path)
    _no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("error: the judge endpoint refused the credentials (HTTP 401"), proc.stderr
    store = tmp_path / "runs.db"
    run_id, status, record = _store_rows(store, "SELECT id, status, record FROM runs")[0]
    assert status == "failed"
    assert f"continue with: clineval run --resume {run_id} --store {store}" in proc.stderr
    assert "sk-test-0123456789" not in proc.stderr + record  # the echoed key is masked
    assert "refused the credentials" in json.loads(record)["error"]
    scored = _store_rows(store, "SELECT case_id FROM results WHERE status = 'scored'")
    assert len(scored) == 4  # everything scored before the 401 is kept

    llm_server.set_script({"default": {"json": GOOD}})
    resumed = _cli("run", "--resume", run_id, "--store", str(store), "-q", cwd=tmp_path)
    _no_traceback(resumed)
    assert resumed.returncode == 0, resumed.stderr
    rows = _store_rows(store, "SELECT case_id, metric, status FROM results")
    assert len(rows) == len({(c, m) for c, m, _ in rows}) == 10
    assert {s for _, _, s in rows} == {"scored"}
    assert _store_rows(store, "SELECT status FROM runs")[0][0] == "completed"


def test_a_401_while_cases_share_a_reference_prints_no_task_traceback(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    """tbfact extracts a reference's facts once for every case that shares it; when a 401
    stops the run while that shared request is in flight, its error must not surface as
    asyncio's 'Task exception was never retrieved' with a traceback."""
    llm_server.set_script({"default": {"status": 401, "error_message": KEY_ECHO}})
    _write_cases(tmp_path, 40, same_reference=True)
    run_file = _run_file(tmp_path, llm_server, ["tbfact", "rubric"])
    for _ in range(3):  # the interleaving varies a little from run to run
        for leftover in tmp_path.glob("runs.db*"):
            leftover.unlink()
        proc = _cli("run", str(run_file), "-q", cwd=tmp_path)
        _no_traceback(proc)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("error: the judge endpoint refused the credentials"), proc.stderr
        assert "Bearer ***" in proc.stderr and "sk-test-0123456789" not in proc.stderr


async def _until(condition: Callable[[], object], what: str, limit_s: float = 30.0) -> None:
    """A bounded wait inside the event loop (which runs between the checks)."""
    import asyncio

    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {limit_s:g} s waiting for {what}"
        await asyncio.sleep(0.01)


async def test_a_shared_reference_extraction_that_fails_after_its_cases_stopped_is_retrieved(
    llm_server: ScriptedServer,
) -> None:
    """The deterministic form of the test above: the case awaiting the shared extraction
    is cancelled (as when a 401 elsewhere stops the run), then the extraction gets its 401.
    Nobody awaits it any more; asyncio must not be left with an unretrieved exception."""
    import asyncio
    import gc

    from clineval.judges import JudgeConfig, build_judge
    from clineval.metrics.base import ScoreContext, score_case
    from clineval.metrics.registry import build_metric
    from clineval.model import Case

    llm_server.set_script({"default": {"status": 401, "error_message": KEY_ECHO, "delay_s": 0.4}})
    judge = build_judge(JudgeConfig(provider="openai", model="judge-model", base_url=llm_server.base_url))
    assert judge is not None
    metric = build_metric("tbfact")
    case = Case(id="c1", input="q", response="Potassium 5.9 mmol/L.", reference="Potassium was 5.9 mmol/L.")
    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: unhandled.append(context))
    try:
        task = asyncio.ensure_future(score_case(metric, case, ScoreContext(judge)))
        await _until(lambda: llm_server.stats()["in_flight"] >= 1, "the shared extraction in flight")
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        # ... and fails with the 401 after its only waiter left: the server has answered and
        # every other task of the loop (the extraction's) has ended
        await _until(lambda: llm_server.stats()["in_flight"] == 0, "the server's 401")
        others = lambda: [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]  # noqa: E731
        await _until(lambda: all(t.done() for t in others()), "the extraction's end")
        del task, metric  # the metric keeps its extractions; asyncio reports when they go
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
        await judge.aclose()
    assert not [c for c in unhandled if "never retrieved" in str(c.get("message"))], unhandled
