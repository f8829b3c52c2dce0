"""``clineval run --repeats`` through the real command line: a SIGKILL mid-run, then
``--resume`` runs only the missing trials; ``show`` prints the pass@k rows; ``export
--format trials-csv`` writes one row per (case, trial, metric); ``--retry-errors`` calls the
agent again on the failed trials only."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
from pathlib import Path

import pytest
from tests.clirun import clineval, invoke
from tests.faults.test_kill_resume import _no_traceback, _query, start
from tests.waiting import wait_for

N_CASES = 6
REPEATS = 3
METRICS = ("exact_match", "latency", "failure")

AGENT = """
import os, pathlib, time

HERE = pathlib.Path(__file__).parent


def agent(question: str) -> str:
    n = int(question.split()[1])
    with (HERE / "calls.log").open("a") as log:
        log.write(f"{n}\\n")
    if n == 5 and (HERE / "fail.flag").exists():
        raise RuntimeError("scripted failure")
    deadline = time.time() + 120
    while n >= 2 and (HERE / "hold.flag").exists() and time.time() < deadline:
        time.sleep(0.02)
    return "yes" if n % 2 == 0 else "no"
"""


def _workspace(folder: Path) -> None:
    rows = [{"id": f"c{n}", "input": f"note {n}", "expected": "yes"} for n in range(N_CASES)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "agent.py").write_text(AGENT, encoding="utf-8")


def _args(folder: Path, db: Path) -> list[str]:
    return [
        "run",
        "--data",
        str(folder / "cases.jsonl"),
        "-m",
        "exact_match",
        "--agent",
        f"{folder / 'agent.py'}:agent",
        "--repeats",
        str(REPEATS),
        "--concurrency",
        "1",
        "--store",
        str(db),
        "-q",
    ]


def _calls(folder: Path) -> int:
    log = folder / "calls.log"
    return len(log.read_text().split()) if log.exists() else 0


def _trial_results(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        return int(_query(db, "SELECT COUNT(*) FROM trial_results")[0][0])
    except AssertionError:
        return 0


def test_kill_resume_export_and_retry_errors_of_a_run_with_repeats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _workspace(tmp_path)
    db = tmp_path / "s.db"
    (tmp_path / "fail.flag").touch()  # every trial of c5 fails
    (tmp_path / "hold.flag").touch()  # c2 and later wait while it exists: the run cannot end before the kill
    proc = start(*_args(tmp_path, db), cwd=tmp_path)
    # c0 and c1: 2 cases x 3 trials x 3 metrics = 18 trial results, then the run waits
    wait_for(lambda: _trial_results(db) >= 12, "12 trial results in the store", process=proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    _no_traceback(proc.communicate())
    assert proc.returncode == -signal.SIGKILL, "the run finished before the kill"
    ((run_id, status),) = _query(db, "SELECT id, status FROM runs")
    assert status == "running"
    kept_outputs = _query(db, "SELECT COUNT(*) FROM trial_outputs")[0][0]
    assert 0 < kept_outputs < N_CASES * REPEATS

    (tmp_path / "calls.log").unlink()
    (tmp_path / "hold.flag").unlink()
    resumed = clineval("run", "--resume", run_id, "--store", str(db), "-q", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    _no_traceback(resumed)
    assert _calls(tmp_path) == N_CASES * REPEATS - kept_outputs  # each missing trial once, no other
    assert "Repeated trials (3 per case" in resumed.stdout
    assert _query(db, "SELECT status FROM runs")[0][0] == "completed"
    dupes = _query(
        db, "SELECT COUNT(*) FROM trial_results GROUP BY case_id, metric HAVING COUNT(*) != ?", (REPEATS,)
    )
    assert not dupes
    assert _query(db, "SELECT COUNT(*) FROM results")[0][0] == N_CASES * len(METRICS)
    means = dict(_query(db, "SELECT case_id, value FROM results WHERE metric = 'failure'"))
    assert means == {f"c{n}": 1.0 if n == 5 else 0.0 for n in range(N_CASES)}

    # in this process from here on (the same commands, without starting Python again)
    monkeypatch.chdir(tmp_path)
    exported = invoke("export", run_id, "--format", "trials-csv", "-o", "-", "--store", str(db))
    assert exported.exit_code == 0, exported.output
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert len(rows) == N_CASES * REPEATS * len(METRICS)
    assert [(r["case_id"], r["trial"], r["metric"], r["value"]) for r in rows[:2]] == [
        ("c0", "1", "exact_match", "1.0"),
        ("c0", "1", "failure", "0.0"),
    ]
    failed = [r for r in rows if r["case_id"] == "c5" and r["metric"] == "failure"]
    assert [r["value"] for r in failed] == ["1.0"] * REPEATS
    assert {r["agent_error"] for r in failed} == {"RuntimeError: scripted failure"}

    (tmp_path / "fail.flag").unlink()
    (tmp_path / "calls.log").unlink()
    retried = invoke("run", "--resume", run_id, "--retry-errors", "--store", str(db), "-q")
    assert retried.exit_code == 0, retried.output
    assert (tmp_path / "calls.log").read_text().split() == ["5"] * REPEATS  # only c5's failed trials
    assert _query(db, "SELECT value FROM results WHERE metric = 'failure' AND case_id = 'c5'") == [(0.0,)]
    # exact_match over the six case means 1, 0, 1, 0, 1, 0: 0.5; pass@1 = pass^1 = 0.5 as well
    assert "│ exact_match │      6 │ 0.500 │" in retried.stdout, retried.stdout
    assert "│ 1 │  0.500 │  0.500 │" in retried.stdout, retried.stdout
