"""clineval monitor: rounds through the CLI score each finished conversation once."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.clirun import clineval
from tests.traces.test_assemble import S, single_agent_current
from tests.traces.test_instrumented_agent import start_clineval

from clineval.datasets.streams import GeneratedCases
from clineval.model.trace import SpanRecord
from clineval.store.sqlite import RunStore
from clineval.store.traces import TraceStore
from clineval.testing import ScriptedServer
from clineval.traces.monitor import RoundOutcome, run_monitor
from clineval.traces.score import TrafficSelection


def _conversation(cid: str, trace_id: str, ended_s_ago: float) -> list[SpanRecord]:
    """test_assemble's single-agent conversation (4 spans, last ending at t=104 s) as ``cid``
    in trace ``trace_id``, its last span ending ``ended_s_ago`` seconds before now."""
    shift = int((time.time() - ended_s_ago - 104) * S)
    spans = []
    for s in single_agent_current():
        attrs = dict(s.attributes)
        if "gen_ai.conversation.id" in attrs:
            attrs["gen_ai.conversation.id"] = cid
        spans.append(
            s.model_copy(
                update={
                    "trace_id": trace_id,
                    "attributes": attrs,
                    "start_time_unix_nano": s.start_time_unix_nano + shift,
                    "end_time_unix_nano": s.end_time_unix_nano + shift,
                }
            )
        )
    return spans


def _add(db: Path, spans: list[SpanRecord]) -> None:
    store = RunStore(db)
    try:
        assert TraceStore(store).add(spans).stored == len(spans)
    finally:
        store.close()


def _monitor(db: Path, cwd: Path, idle_s: int) -> subprocess.CompletedProcess[str]:
    return clineval(
        "monitor", "--once", "--store", str(db), "--idle", str(idle_s), "-m", "latency", "-q", cwd=cwd
    )


def _runs(db: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    store = RunStore(db)
    try:
        runs = sorted(store.list_runs(), key=lambda r: r.created_at)
        return [(r.id, [c.id for c in store.load_cases(r.id)], dict(r.tags)) for r in runs]
    finally:
        store.close()


def test_rounds_score_each_finished_conversation_once(tmp_path: Path) -> None:
    db = tmp_path / ".clineval" / "clineval.db"
    db.parent.mkdir(parents=True)
    # conv-a's last span ended 10 minutes ago, conv-b's 90 s ago: with --idle 120, conv-b
    # may still be receiving spans and is held back.
    _add(db, _conversation("conv-a", "a" * 32, 600) + _conversation("conv-b", "b" * 32, 90))
    first = _monitor(db, tmp_path, idle_s=120)
    assert first.returncode == 0, first.stderr
    assert "8 span(s) since 7d: 1 new conversation(s) to score, 0 already scored, 1 still arriving" in (
        first.stderr
    )
    assert "1 conversation(s) scored" in first.stdout
    ((run_a, cases_a, tags_a),) = _runs(db)
    assert cases_a == ["conv-a"] and (tags_a["source"], tags_a["monitor"]) == ("traces", "1")

    # Later: conv-b has gone quiet (--idle 60 < its 90+ s: the same as a minute passing with
    # --idle 120) and conv-c has just started (last span 5 s ago). Only conv-b is new.
    _add(db, _conversation("conv-c", "c" * 32, 5))
    second = _monitor(db, tmp_path, idle_s=60)
    assert second.returncode == 0, second.stderr
    assert "12 span(s) since 7d: 1 new conversation(s) to score, 1 already scored, 1 still arriving" in (
        second.stderr
    )
    runs = _runs(db)
    assert [cases for _, cases, _ in runs] == [["conv-a"], ["conv-b"]]
    assert all(tags["monitor"] == "1" for _, _, tags in runs)
    store = RunStore(db)
    try:
        scored = dict(store.query("SELECT conversation_id, run_id FROM traffic_scored"))
    finally:
        store.close()
    assert scored == {"conv-a": run_a, "conv-b": runs[1][0]}

    # A third round: nothing new (conv-a, conv-b scored; conv-c still arriving), one line, exit 0.
    third = _monitor(db, tmp_path, idle_s=60)
    assert third.returncode == 0, third.stderr
    assert third.stdout.strip() == (
        "nothing new to score: 12 span(s) since 7d: 0 new conversation(s) to score, "
        "2 already scored, 1 still arriving (held back), 0 of another agent"
    )
    assert len(_runs(db)) == 2


def test_every_and_once_are_exclusive_and_every_must_be_a_duration(tmp_path: Path) -> None:
    base = ["monitor", "-m", "latency", "--store", "x.db"]
    for extra, message in [
        ([], "give --once"),
        (["--once", "--every", "15m"], "give --once"),
        (["--every", "soon"], "--every 'soon': expected a positive duration"),
    ]:
        proc = clineval(*base, *extra, cwd=tmp_path, timeout=60)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


NO_CASES = GeneratedCases(read=list, source="none", n_cases=0, fingerprint_value="none")


def test_every_runs_a_round_then_sleeps_what_is_left_of_the_period() -> None:
    slept: list[float] = []
    outcomes = run_monitor(
        lambda: RoundOutcome(TrafficSelection(cases=NO_CASES)), every_s=900.0, sleep=slept.append, rounds=3
    )
    assert len(outcomes) == 3
    assert len(slept) == 2 and all(899.0 < s <= 900.0 for s in slept)


# ----------------------------------------------------------------------------- a long-lived monitor

RUN_SCORED = re.compile(r"^run (\S+): (\d+) conversation\(s\) scored$")


@contextmanager
def _monitoring(db: Path, cwd: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    """``clineval monitor --store DB -q ARGS`` running in ``cwd``; killed if still running at the end."""
    proc = start_clineval(cwd, "monitor", "--store", str(db), "-q", *args)
    try:
        yield proc
    finally:
        proc.kill()
        proc.communicate(timeout=30)


def _stop(proc: subprocess.Popen[str], sig: signal.Signals, code: int) -> str:
    """Send ``sig``; the monitor exits with ``code`` and no traceback; its standard error."""
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "Traceback" not in err and "Traceback" not in out
    return err


def _next_scored_run(proc: subprocess.Popen[str]) -> tuple[str, int]:
    """Read the monitor's stdout up to its next 'run ID: N conversation(s) scored' line (the
    round's conversations are marked scored by then): the run id and N."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if match := RUN_SCORED.match(line.strip()):
            return match.group(1), int(match.group(2))
    raise AssertionError(f"the monitor ended (exit {proc.wait(timeout=10)}) before scoring a round")


def _scored(db: Path) -> dict[str, str]:
    store = RunStore(db)
    try:
        return dict(store.query("SELECT conversation_id, run_id FROM traffic_scored"))
    finally:
        store.close()


def _statuses(db: Path) -> dict[str, str]:
    store = RunStore(db)
    try:
        return {r.id: r.status for r in store.list_runs()}
    finally:
        store.close()


def test_every_scores_what_arrived_since_the_last_round_until_ctrl_c(tmp_path: Path) -> None:
    db = tmp_path / ".clineval" / "clineval.db"
    db.parent.mkdir(parents=True)
    _add(db, _conversation("conv-a", "a" * 32, 600))
    with _monitoring(db, tmp_path, "--every", "0.5s", "--idle", "60", "-m", "latency") as proc:
        first_run, first_n = _next_scored_run(proc)
        assert first_n == 1
        # conv-b arrives between rounds (finished 10 minutes ago: no longer arriving)
        _add(db, _conversation("conv-b", "b" * 32, 600))
        second_run, second_n = _next_scored_run(proc)
        assert second_n == 1 and second_run != first_run
        # the rounds in between, if any, found nothing; the monitor is now between rounds
        err = _stop(proc, signal.SIGINT, 130)
    # each round's one line about what it found, then the one line of the interruption
    assert err.splitlines() == [
        "4 span(s) since 7d: 1 new conversation(s) to score, 0 already scored, 0 still arriving "
        "(held back), 0 of another agent",
        "8 span(s) since 7d: 1 new conversation(s) to score, 1 already scored, 0 still arriving "
        "(held back), 0 of another agent",
        "interrupted",
    ]
    # the finished rounds' runs are kept, each with its one conversation, both marked scored
    runs = _runs(db)
    assert [(run, cases) for run, cases, _ in runs] == [(first_run, ["conv-a"]), (second_run, ["conv-b"])]
    assert _statuses(db) == {first_run: "completed", second_run: "completed"}
    assert _scored(db) == {"conv-a": first_run, "conv-b": second_run}


def test_sigterm_during_a_rounds_scoring_leaves_its_conversations_for_the_next_round(tmp_path: Path) -> None:
    """The judge stalls: SIGTERM while the round's run is scoring ends the monitor with 143,
    the run marked interrupted and its conversations not marked scored; ``--once`` then scores
    them."""
    db = tmp_path / ".clineval" / "clineval.db"
    db.parent.mkdir(parents=True)
    _add(db, _conversation("conv-a", "a" * 32, 600) + _conversation("conv-b", "b" * 32, 600))
    with (
        ScriptedServer({"default": {"content": "SUPPORTED", "delay_s": 60}}) as judge,
        _monitoring(
            db,
            tmp_path,
            *("--every", "1h", "--idle", "60", "-m", "conversational_faithfulness"),
            *("--judge", f"openai:judge-model@{judge.base_url}"),
        ) as proc,
    ):
        deadline = time.monotonic() + 30
        while not judge.requests():  # the round is scoring: its judge call has arrived
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "timed out waiting for the judge call"
            time.sleep(0.05)
        err = _stop(proc, signal.SIGTERM, 143)
    ((run_id, status),) = _statuses(db).items()
    assert status == "interrupted"
    assert err.splitlines()[-1] == (
        f"interrupted (SIGTERM): run {run_id} is marked interrupted and its conversations are not marked "
        "scored; the next round scores them again"
    )
    assert _scored(db) == {}

    again = _monitor(db, tmp_path, idle_s=60)
    assert again.returncode == 0, again.stderr
    assert "8 span(s) since 7d: 2 new conversation(s) to score, 0 already scored" in again.stderr
    ((match),) = [m for line in again.stdout.splitlines() if (m := RUN_SCORED.match(line.strip()))]
    assert match.group(2) == "2"
    assert _scored(db) == {"conv-a": match.group(1), "conv-b": match.group(1)}
    assert _statuses(db) == {run_id: "interrupted", match.group(1): "completed"}
