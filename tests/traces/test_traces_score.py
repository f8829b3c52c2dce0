"""clineval traces score: stored spans of a window, assembled and scored as a run, through the CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from tests.clirun import clineval
from tests.traces.test_assemble import S, single_agent_current

from clineval.errors import ConfigError
from clineval.store.sqlite import RunStore
from clineval.store.traces import TraceStore
from clineval.traces.score import parse_since, select_traffic


def _store_with_traffic(tmp_path: Path, offset_s: float) -> Path:
    """The single-agent conversation of test_assemble, shifted to ``offset_s`` seconds ago."""
    db = tmp_path / ".clineval" / "clineval.db"
    db.parent.mkdir(parents=True)
    shift = int((time.time() - offset_s - 100) * S)
    spans = [
        s.model_copy(
            update={
                "start_time_unix_nano": s.start_time_unix_nano + shift,
                "end_time_unix_nano": s.end_time_unix_nano + shift,
            }
        )
        for s in single_agent_current()
    ]
    store = RunStore(db)
    try:
        assert TraceStore(store).add(spans).stored == len(spans)
    finally:
        store.close()
    return db


def test_since_reads_durations_and_dates() -> None:
    assert parse_since("24h", now=100_000.0) == int((100_000 - 86_400) * 1e9)
    assert parse_since("30m", now=10_000.0) == int(8_200 * 1e9)
    assert parse_since("2026-11-28") == int(1_795_824_000 * 1e9)
    with pytest.raises(ConfigError, match="expected a duration"):
        parse_since("yesterday")


def test_a_conversation_still_arriving_is_held_back(tmp_path: Path) -> None:
    db = _store_with_traffic(tmp_path, offset_s=30)
    selection = select_traffic(db, since_ns=parse_since("1h"), idle_seconds=3600)
    assert (selection.pending, len(selection.cases)) == (1, 0)
    selection = select_traffic(db, since_ns=parse_since("1h"), idle_seconds=0)
    assert (selection.conversations, len(selection.cases)) == (1, 1)
    assert len(select_traffic(db, since_ns=parse_since("1h"), idle_seconds=0, agent="Radiology").cases) == 0


def test_traces_score_makes_a_run_linked_to_the_trace(tmp_path: Path) -> None:
    db = _store_with_traffic(tmp_path, offset_s=600)
    gold = [
        {"conversation_id": "conv-a", "turn": 1, "gold_agent": "Labs", "gold_tools": ["get_labs"]},
        {"conversation_id": "conv-a", "reference": "Potassium is high at 5.9 mmol/L."},
        {"conversation_id": "conv-elsewhere", "turn": 1, "gold_agent": "Pharmacy"},
    ]
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(row) + "\n" for row in gold), encoding="utf-8")
    proc = clineval(
        "traces",
        "score",
        "--store",
        str(db),
        "--since",
        "2h",
        "--idle",
        "60",
        "-m",
        "conversational_faithfulness",
        "-m",
        "latency",
        "-m",
        "agent_selection_accuracy,tool_selection_accuracy,exact_match",
        "--gold",
        "gold.jsonl",
        "--judge-rpm",
        "6000",
        "-q",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "1 conversation(s) finished" in proc.stderr and "scoring 1 case(s)" in proc.stderr
    assert "gold labels from gold.jsonl: 2 row(s) joined; not joined: 1 no such conversation" in proc.stderr
    assert "conversational_faithfulness" in proc.stdout and "Traceback" not in proc.stderr
    store = RunStore(db)
    try:
        (run,) = store.list_runs()
        assert run.tags["source"] == "traces"
        (case,) = store.load_cases(run.id)
        assert case.metadata["trace_ids"] == ["1" * 32] or case.metadata.get("trace_id") == "1" * 32
        results = {r.metric: r for r in store.iter_results(run.id)}
        # the potassium answer is grounded in the tool result (the case's context)
        assert results["conversational_faithfulness"].score.value == 1.0
        # the gold file's labels: the turn went to Labs, which called get_labs; the reference
        assert results["agent_selection_accuracy"].score.value == 1.0
        assert results["tool_selection_accuracy"].score.value == 1.0
        assert (
            case.reference == "Potassium is high at 5.9 mmol/L." and results["exact_match"].score.value == 1.0
        )
        assert run.tags["gold"] == "gold.jsonl"
        assert run.config["judge"]["rpm"] == 6000  # --judge-rpm reaches the run's judge settings
    finally:
        store.close()


def test_nothing_to_score_is_one_line(tmp_path: Path) -> None:
    db = _store_with_traffic(tmp_path, offset_s=0)
    proc = clineval("traces", "score", "--store", str(db), "-m", "latency", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no conversation to score" in proc.stderr and "1 still arriving" in proc.stderr
    assert "Traceback" not in proc.stderr
    json.dumps(proc.stderr)  # printable
