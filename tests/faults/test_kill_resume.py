"""Fault injection: SIGKILL a real ``clineval run`` at random points, resume, check the invariants.

Every test drives the command line in subprocesses, as a user (or a CI runner that loses
its machine) would. The kill points are drawn from ``random.Random`` with fixed arguments,
so a failure is reproducible: each kill waits either until the store holds a drawn number
of results, or a drawn time after the first new result committed, then sends SIGKILL.

After every kill:

* no (case, metric) result is stored twice (the store's primary key), and the run is not
  marked ``completed`` while results are missing;
* ``clineval show RUN --fail-under ...`` refuses an incomplete run (exit 2, a message
  naming the run, what is missing and the resume command; never exit 0, no traceback).

After the last ``--resume``: every (case, metric) exactly once, the run ``completed``,
and every aggregate equal to an uninterrupted run of the same configuration (the agent,
the metrics and the scripted judge are deterministic; only ``latency`` values differ, so
only its counts are compared).

Also: kills inside ``--resume --retry-errors``, two runs writing into one store at once,
two resumes of one run at once (one is refused by the run lock), and the lock's takeover
rules. ``-m slow`` runs the long variant (24 kill points).
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import COMMAND, cli_env, clineval
from tests.waiting import wait_for

N_CASES = 40
METRICS = ("token_f1", "exact_match", "rubric", "latency", "failure")
EXPECTED_PAIRS = N_CASES * len(METRICS)

AGENT = """
import pathlib, time

HERE = pathlib.Path(__file__).parent


def agent(question: str) -> str:
    n = int(question.split()[1].rstrip(":"))
    if n % 5 == 0 and (HERE / "fail.flag").exists():
        raise RuntimeError(f"scripted failure on note {n}")
    deadline = time.time() + 120
    while (HERE / "hold.flag").exists() and n >= 4 and time.time() < deadline:
        time.sleep(0.02)
    time.sleep(0.03)
    if n % 2:
        return f"Approximately: patient {n} has potassium {4 + n / 10:.1f} mmol/L, recheck"
    return f"Patient {n} has potassium {4 + n / 10:.1f} mmol/L."
"""

RULES = """
rules:
  - pattern: "Approximately"
    answer: {explanation: "Hedged and adds advice.", rating: 2}
default: {explanation: "Matches the reference.", rating: 5}
"""


def _write_workspace(folder: Path) -> None:
    rows = [
        {
            "id": f"c{n:02d}",
            "input": f"note {n}: latest potassium?",
            "reference": f"Patient {n} has potassium {4 + n / 10:.1f} mmol/L.",
            "expected": f"Patient {n} has potassium {4 + n / 10:.1f} mmol/L.",
        }
        for n in range(N_CASES)
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "agent.py").write_text(AGENT, encoding="utf-8")
    (folder / "rules.yaml").write_text(RULES, encoding="utf-8")


def _env() -> dict[str, str]:
    return cli_env({"PYTHONUNBUFFERED": "1"})


def _run_args(folder: Path, db: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--data",
        str(folder / "cases.jsonl"),
        "-m",
        "token_f1",
        "-m",
        "exact_match",
        "-m",
        "rubric",
        "--agent",
        f"{folder / 'agent.py'}:agent",
        "--concurrency",
        "2",
        "--judge",
        f"scripted:{folder / 'rules.yaml'}",
        "--store",
        str(db),
        "-q",
        *extra,
    ]


def clineval_together(*commands: list[str], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """Independent commands (none writes what another reads), two at a time: the machine's cores."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda args: clineval(*args, cwd=cwd), commands))


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*COMMAND, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _query(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Read the store from outside, as another process would (retrying while it is locked)."""
    for _ in range(200):
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
                return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError:
            time.sleep(0.02)
    raise AssertionError(f"cannot read {db}")


def _count(db: Path) -> int:
    """The number of stored results (0 before the store exists)."""
    for _ in range(100):
        if not db.exists():
            return 0
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
                return int(conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        except sqlite3.OperationalError:
            time.sleep(0.01)
    raise AssertionError(f"cannot read {db}")


def _runs(db: Path) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    return [(r[0], r[1]) for r in _query(db, "SELECT id, status FROM runs ORDER BY created_at")]


def _no_traceback(proc: subprocess.CompletedProcess[str] | tuple[str, str]) -> None:
    stderr = proc.stderr if isinstance(proc, subprocess.CompletedProcess) else proc[1]
    assert "Traceback" not in stderr, stderr
    assert "Task exception was never retrieved" not in stderr, stderr


def kill_at(proc: subprocess.Popen[str], db: Path, rng: random.Random) -> str:
    """SIGKILL ``proc`` at a random point; returns how the point was chosen.

    Half the points wait for a number of stored results, half for a time after the first
    new result committed. A ``--retry-errors`` resume of a finished run first forgets the
    failed work (the count drops) and then redoes it: its points are drawn over both.
    """
    started = time.time()
    base = _count(db)
    deadline = started + 90

    def waiting() -> bool:
        return time.time() < deadline and proc.poll() is None

    if rng.random() < 0.5:
        low = base
        if base >= EXPECTED_PAIRS:  # a retry: wait for the deletion first
            while waiting() and _count(db) >= base:
                time.sleep(0.005)
            low = _count(db)
        target = low + rng.randint(1, max(1, (EXPECTED_PAIRS - low) // 2))
        how = f"at {target} results"
        while waiting() and _count(db) < target:
            time.sleep(0.005)
    elif base >= EXPECTED_PAIRS:
        delay = rng.uniform(0.0, 3.0)
        how = f"{delay:.2f} s after the start"
        time.sleep(delay)
    else:
        delay = rng.uniform(0.0, 0.6)
        how = f"{delay:.2f} s after the first new result"
        while waiting() and _count(db) <= base:
            time.sleep(0.005)
        time.sleep(delay)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)  # reaped: the pid is gone, as after a real crash
    stdout, stderr = proc.communicate()
    if proc.returncode != -signal.SIGKILL:  # it finished before the kill point
        assert proc.returncode == 0, stderr
        how += " (finished first)"
    _no_traceback((stdout, stderr))
    return how


def check_after_kill(folder: Path, db: Path, run_id: str, how: str) -> None:
    """The store after a kill: nothing twice, and an incomplete run cannot pass a gate."""
    dupes = _query(
        db,
        "SELECT case_id, metric, COUNT(*) FROM results WHERE run_id = ? GROUP BY case_id, metric "
        "HAVING COUNT(*) > 1",
        (run_id,),
    )
    assert not dupes, (how, dupes)
    (status,) = _query(db, "SELECT status FROM runs WHERE id = ?", (run_id,))[0]
    present = _query(db, "SELECT COUNT(*) FROM results WHERE run_id = ?", (run_id,))[0][0]
    if status == "completed":
        assert present == EXPECTED_PAIRS, f"{how}: a completed run with {present} of {EXPECTED_PAIRS} results"
    shown, listed = clineval_together(
        ["show", run_id, "--store", str(db), "--fail-under", "token_f1=0"],
        ["runs", "--store", str(db)],
        cwd=folder,
    )
    _no_traceback(shown)
    if present < EXPECTED_PAIRS or status != "completed":
        assert shown.returncode == 2, (how, shown.returncode, shown.stdout, shown.stderr)
        assert run_id in shown.stderr and "gates need a completed run" in shown.stderr, shown.stderr
        assert f"clineval run --resume {run_id}" in shown.stderr, shown.stderr
    else:
        assert shown.returncode == 0, (how, shown.stderr)
    _no_traceback(listed)
    if status == "running":  # killed: its process is gone, so the list says it stopped
        assert "stopped" in listed.stdout and f"clineval run --resume {run_id}" in listed.stdout, (
            listed.stdout
        )
        assert "│ running" not in listed.stdout, listed.stdout


def check_final(db: Path, run_id: str, reference: dict[str, tuple[Any, ...]]) -> None:
    rows = _query(db, "SELECT case_id, metric FROM results WHERE run_id = ?", (run_id,))
    assert len(rows) == EXPECTED_PAIRS and len(set(rows)) == EXPECTED_PAIRS
    assert {m for _, m in rows} == set(METRICS)
    (status,) = _query(db, "SELECT status FROM runs WHERE id = ?", (run_id,))[0]
    assert status == "completed"
    assert _aggregates(db, run_id) == reference
    assert not _query(db, "SELECT run_id FROM leases WHERE run_id = ?", (run_id,))  # the lock is released


def _aggregates(db: Path, run_id: str) -> dict[str, tuple[Any, ...]]:
    from clineval import load_run
    from clineval.store.sqlite import RunStore

    with RunStore(db) as store:
        result = load_run(run_id, store=store)
        out: dict[str, tuple[Any, ...]] = {}
        for agg in result.aggregate():
            counts = (agg.n, agg.scored, agg.errors, agg.not_applicable)
            if agg.metric == "latency":
                out[agg.metric] = counts  # wall times differ from run to run
            else:
                out[agg.metric] = (*counts, agg.mean, agg.std, agg.min, agg.max, agg.ci_low, agg.ci_high)
    return out


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("kills")
    _write_workspace(folder)
    return folder


@pytest.fixture(scope="module")
def reference(workspace: Path) -> dict[str, tuple[Any, ...]]:
    """The aggregates of an uninterrupted run."""
    db = workspace / "reference.db"
    done = clineval(*_run_args(workspace, db), cwd=workspace)
    assert done.returncode == 0, done.stderr
    _no_traceback(done)
    ((run_id, status),) = _runs(db)
    assert status == "completed"
    aggregates = _aggregates(db, run_id)
    assert aggregates["failure"][4] == 0.0 and aggregates["rubric"][1] == N_CASES
    return aggregates


@pytest.fixture(scope="module")
def failed_run(workspace: Path) -> Path:
    """A store holding a completed run in which the agent failed on 8 cases (read only: copy it)."""
    db = workspace / "failed.db"
    (workspace / "fail.flag").touch()
    try:
        first = clineval(*_run_args(workspace, db), cwd=workspace)
    finally:
        (workspace / "fail.flag").unlink()
    assert first.returncode == 0, first.stderr
    ((run_id, status),) = _runs(db)
    failed = _query(
        db,
        "SELECT COUNT(*) FROM outputs WHERE run_id = ? AND json_extract(data, '$.agent_run.failed') = 1",
        (run_id,),
    )[0][0]
    assert status == "completed" and failed == N_CASES // 5
    return db


def _copy_store(source: Path, target: Path) -> None:
    with sqlite3.connect(source) as conn, sqlite3.connect(target) as copy:
        conn.backup(copy)


@pytest.fixture
def flags(workspace: Path) -> Iterator[Path]:
    yield workspace
    for name in ("fail.flag", "hold.flag"):
        (workspace / name).unlink(missing_ok=True)


def kill_and_resume(
    folder: Path, db: Path, rng: random.Random, kills: int, reference: dict[str, tuple[Any, ...]]
) -> list[str]:
    """A new run killed ``kills`` times (each time resumed), then resumed to completion."""
    points: list[str] = []
    proc = start(*_run_args(folder, db), cwd=folder)
    run_id = None
    for _ in range(kills):
        how = kill_at(proc, db, rng)
        runs = _runs(db)
        assert len(runs) == 1, runs
        run_id = runs[0][0]
        check_after_kill(folder, db, run_id, how)
        points.append(how)
        proc = start("run", "--resume", run_id, "--store", str(db), "-q", cwd=folder)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    _no_traceback((stdout, stderr))
    assert run_id is not None
    check_final(db, run_id, reference)
    return points


def kill_retry_errors(
    folder: Path,
    db: Path,
    rng: random.Random,
    kills: int,
    reference: dict[str, tuple[Any, ...]],
    failed_run: Path,
) -> list[str]:
    """A run in which the agent failed on 8 cases (a copy of ``failed_run``), then
    ``--resume --retry-errors`` killed ``kills`` times, then resumed with ``--retry-errors``
    to completion."""
    _copy_store(failed_run, db)
    ((run_id, _),) = _runs(db)
    points: list[str] = []
    for _ in range(kills):
        proc = start("run", "--resume", run_id, "--retry-errors", "--store", str(db), "-q", cwd=folder)
        # The retry deletes the failed cases' results, then scores them again: aim at both.
        how = kill_at(proc, db, rng)
        check_after_kill(folder, db, run_id, how)
        points.append(how)
    done = clineval("run", "--resume", run_id, "--retry-errors", "--store", str(db), "-q", cwd=folder)
    assert done.returncode == 0, done.stderr
    _no_traceback(done)
    check_final(db, run_id, reference)
    return points


# --------------------------------------------------------------------------- default run


def test_kills_during_a_run_then_resume(
    workspace: Path, reference: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    points = kill_and_resume(workspace, tmp_path / "runs.db", random.Random(12), 3, reference)
    assert len(points) == 3


def test_kills_during_resume_retry_errors(
    flags: Path, reference: dict[str, tuple[Any, ...]], failed_run: Path, tmp_path: Path
) -> None:
    points = kill_retry_errors(flags, tmp_path / "runs.db", random.Random(7), 2, reference, failed_run)
    assert len(points) == 2


KILL_AT_JUDGE_BUILD = """
import os, signal, sys
import clineval.api as api
import clineval.judges.config as judges_config

def build_judge(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

judges_config.build_judge = build_judge
if hasattr(api, "build_judge"):
    api.build_judge = build_judge
from clineval.cli.main import cli
cli(sys.argv[1:], prog_name="clineval")
"""


def test_kill_inside_retry_errors_never_leaves_a_completed_run_with_missing_results(
    flags: Path, failed_run: Path, tmp_path: Path
) -> None:
    """A kill after ``--retry-errors`` has started forgetting failed work (here: while the
    judge is being built) leaves either the untouched completed run, or a run that is not
    ``completed``; never a ``completed`` run with cases missing, which a gate would pass."""
    db = tmp_path / "runs.db"
    _copy_store(failed_run, db)
    ((run_id, _),) = _runs(db)
    killed = subprocess.run(
        [sys.executable, "-c", KILL_AT_JUDGE_BUILD, "run", "--resume", run_id, "--retry-errors",
         "--store", str(db), "-q"],
        cwd=flags, capture_output=True, text=True, timeout=120, env=_env(),
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL
    check_after_kill(flags, db, run_id, "while the judge was built")
    done = clineval("run", "--resume", run_id, "--retry-errors", "--store", str(db), "-q", cwd=flags)
    assert done.returncode == 0, done.stderr
    assert _query(db, "SELECT COUNT(*) FROM results WHERE run_id = ?", (run_id,))[0][0] == EXPECTED_PAIRS


def test_completed_run_with_missing_results_is_refused_by_gates_and_flagged(
    workspace: Path, reference: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    """A record that says ``completed`` but lacks results (a store edited by hand, or written
    by an older clineval) is caught by counting the results, not trusted for its status."""
    db = tmp_path / "runs.db"
    # the base run: a copy of the uninterrupted reference run (the same configuration)
    with sqlite3.connect(workspace / "reference.db") as source, sqlite3.connect(db) as target:
        source.backup(target)
    done = clineval(*_run_args(workspace, db), cwd=workspace)
    assert done.returncode == 0, done.stderr
    (base, _), (run_id, _) = _runs(db)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM results WHERE run_id = ? AND case_id >= 'c30'", (run_id,))
    assert _runs(db)[1] == (run_id, "completed")

    gated, shown, baseline = clineval_together(
        ["show", run_id, "--store", str(db), "--fail-under", "token_f1=0"],
        ["show", run_id, "--store", str(db)],
        _run_args(workspace, db, "--no-regression-vs", run_id),
        cwd=workspace,
    )
    _no_traceback(gated)
    assert gated.returncode == 2
    assert f"run {run_id} is marked completed but has 30 of 40 cases scored" in gated.stderr
    assert "gates need a completed run" in gated.stderr

    assert shown.returncode == 0, shown.stderr
    assert "30 of 40 cases scored" in shown.stderr and "warning" in shown.stderr

    _no_traceback(baseline)
    assert baseline.returncode == 2 and "gates need a completed run" in baseline.stderr
    assert len(_runs(db)) == 2  # refused before anything ran

    with sqlite3.connect(db) as conn:  # as a store written by a clineval that did not count
        conn.execute("DELETE FROM expected_results WHERE run_id = ?", (run_id,))
    older, compared, as_json, refused = clineval_together(
        ["show", run_id, "--store", str(db), "--fail-over", "latency=100"],
        ["compare", base, run_id, "--store", str(db)],
        ["compare", base, run_id, "--store", str(db), "--json", "-"],
        ["compare", base, run_id, "--store", str(db), "--fail-on-regression"],
        cwd=workspace,
    )
    assert older.returncode == 2 and "30 of 40 cases scored" in older.stderr, older.stderr

    assert compared.returncode == 0, compared.stderr
    assert "warning: run " in compared.stdout and "30 of 40 cases scored" in compared.stdout
    assert any("30 of 40 cases scored" in w for w in json.loads(as_json.stdout)["warnings"])
    assert "30 of 40 cases scored" in as_json.stderr
    _no_traceback(refused)
    assert refused.returncode == 2 and "gates need a completed run" in refused.stderr


# --------------------------------------------------------------------------- concurrency


def test_two_runs_write_into_one_store_at_once(
    workspace: Path, reference: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    procs = [start(*_run_args(workspace, db, "--name", f"run {i}"), cwd=workspace) for i in range(2)]
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        _no_traceback((stdout, stderr))
    runs = _runs(db)
    assert len(runs) == 2
    for run_id, _ in runs:
        check_final(db, run_id, reference)


def test_two_resumes_of_one_run_one_is_refused(
    flags: Path, reference: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    (flags / "hold.flag").touch()  # cases 4 and later wait while it exists
    proc = start(*_run_args(flags, db), cwd=flags)
    wait_for(lambda: _count(db) >= 4 * len(METRICS), "the results of cases 0-3", process=proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.communicate()
    ((run_id, _),) = _runs(db)

    both = [start("run", "--resume", run_id, "--store", str(db), "-q", cwd=flags) for _ in range(2)]
    wait_for(lambda: any(p.poll() is not None for p in both), "one of the two resumes to be refused")
    refused = next(p for p in both if p.poll() is not None)
    running = next(p for p in both if p is not refused)
    stdout, stderr = refused.communicate()
    _no_traceback((stdout, stderr))
    assert refused.returncode == 2, (refused.returncode, stderr)
    host = socket.gethostname()
    assert f"run {run_id} is being run by pid {running.pid} on {host} since" in stderr, stderr
    assert "wait for it to finish" in stderr

    shown = clineval("show", run_id, "--store", str(db), "--fail-under", "token_f1=0", cwd=flags)
    assert shown.returncode == 2 and f"is running (pid {running.pid} on {host}" in shown.stderr

    (flags / "hold.flag").unlink()
    stdout, stderr = running.communicate(timeout=120)
    assert running.returncode == 0, stderr
    _no_traceback((stdout, stderr))
    check_final(db, run_id, reference)


# --------------------------------------------------------------------------- the run lock


def _stored_run(tmp_path: Path) -> tuple[Any, str]:
    from clineval import evaluate
    from clineval.store.sqlite import RunStore

    store = RunStore(tmp_path / "runs.db")
    result = evaluate([{"id": "a", "response": "x", "reference": "x"}], ["exact_match"], store=store,
                      progress=False)  # fmt: skip
    return store, result.run_id


def test_lock_held_by_a_live_process_elsewhere_is_refused_until_its_heartbeat_is_stale(
    tmp_path: Path,
) -> None:
    from clineval.errors import RunLockedError

    store, run_id = _stored_run(tmp_path)
    now = time.time()
    with store._lock:
        store._conn.execute(
            "INSERT INTO leases (run_id, token, pid, host, started_at, heartbeat_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, "other", 4242, "another-host", now - 100, now - 1),
        )
    with pytest.raises(RunLockedError) as refused:
        store.acquire_lease(run_id)
    message = str(refused.value)
    assert f"run {run_id} is being run by pid 4242 on another-host since" in message
    assert "if that process is gone" in message
    with store._lock:  # its last heartbeat long ago: the host is presumed gone
        store._conn.execute("UPDATE leases SET heartbeat_at = ? WHERE run_id = ?", (now - 3600, run_id))
    lease = store.acquire_lease(run_id)
    assert store.lease_holder(run_id) is not None
    lease.release()
    assert store.lease_holder(run_id) is None
    store.close()


def test_lock_of_a_dead_process_on_this_host_is_taken_over(tmp_path: Path) -> None:
    store, run_id = _stored_run(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    now = time.time()
    with store._lock:
        store._conn.execute(
            "INSERT INTO leases (run_id, token, pid, host, started_at, heartbeat_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, "dead", dead.pid, socket.gethostname(), now, now),
        )
    lease = store.acquire_lease(run_id)
    holder = store.lease_holder(run_id)
    assert holder is not None and holder.pid == os.getpid()
    lease.release()
    store.close()


def _heartbeat(store: Any, run_id: str) -> float:
    holder = store.lease_holder(run_id)
    assert holder is not None, "the lock was lost"
    return float(holder.heartbeat_at)


def test_lock_heartbeat_keeps_a_long_run_locked(tmp_path: Path) -> None:
    store, run_id = _stored_run(tmp_path)
    store.lease_heartbeat_s = 0.05
    lease = store.acquire_lease(run_id)
    first = store.lease_holder(run_id)
    assert first is not None
    # the heartbeat thread beats every 0.05 s: wait (bounded) for a later beat instead of a fixed time
    wait_for(
        lambda: _heartbeat(store, run_id) > first.heartbeat_at, "a heartbeat after the lock was taken", 30
    )
    later = store.lease_holder(run_id)
    assert first is not None and later is not None and later.heartbeat_at > first.heartbeat_at
    lease.release()
    store.close()


def test_a_suite_run_takes_the_lock_and_counts_its_results(tmp_path: Path) -> None:
    """Suite runs resume through their own path: the lock and the expected count hold there too."""
    from clineval import evaluate
    from clineval.errors import RunLockedError
    from clineval.store.sqlite import RunStore
    from clineval.suites.runner import run_suite

    suite_file = tmp_path / "suite.yaml"
    suite_file.write_text(
        "s:\n  description: d\n  pipeline:\n    class: tests.suites.standins:Recording\n"
        "  evaluators: [{name: E, class: clineval.suites.evaluators:ExactMatch}]\n  cases: [s.1, s.2]\n"
        "s.1:\n  metrics: [E]\n  evaluations: [{query: answer, ground_truth: 'yes'}]\n"
        "s.2:\n  metrics: [E]\n  evaluations: [{query: answer, ground_truth: 'no'}]\n",
        encoding="utf-8",
    )
    db = tmp_path / "runs.db"
    run_id = run_suite(suite_file, store=db, progress=False).result.run_id
    with RunStore(db) as store:
        done = store.completeness(run_id)
        assert done.complete and done.expected == done.present > 0
        lease = store.acquire_lease(run_id)  # this (live) process runs it now
        try:
            with pytest.raises(RunLockedError, match=f"run {run_id} is being run by pid {os.getpid()}"):
                evaluate(resume=run_id, store=db, retry_errors=True, progress=False)
            busy = store.completeness(run_id)
            assert not busy.complete and busy.holder is not None and busy.present == done.present
        finally:
            lease.release()
    resumed = evaluate(resume=run_id, store=db, retry_errors=True, progress=False)
    assert resumed.run.status == "completed" and len(resumed.results) == done.present


# --------------------------------------------------------------------------- long variant


@pytest.mark.slow
def test_many_kill_points(
    flags: Path, reference: dict[str, tuple[Any, ...]], failed_run: Path, tmp_path: Path
) -> None:
    """24 kill points: four runs killed 4 times each, two retry-errors resumes killed 4 times each."""
    points: list[str] = []
    for i in range(4):
        points += kill_and_resume(flags, tmp_path / f"run{i}.db", random.Random(100 + i), 4, reference)
    for i in range(2):
        points += kill_retry_errors(
            flags, tmp_path / f"retry{i}.db", random.Random(200 + i), 4, reference, failed_run
        )
    assert len(points) == 24
