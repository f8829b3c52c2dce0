"""The run store: runs by id or prefix, results at most once, outputs merged back."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from clineval.errors import StoreError
from clineval.judges.base import Usage
from clineval.model import AgentOutput, AgentRun, Case, DatasetInfo, ResultRecord, RunRecord, Score
from clineval.store import RunStore


def _record(run_id: str, created: float) -> RunRecord:
    return RunRecord(
        id=run_id,
        created_at=created,
        dataset=DatasetInfo(source="t", fingerprint="f", n_cases=2),
        clineval_version="0",
        python="3.11",
        platform="linux",
        metrics=["m"],
    )


def test_runs_results_and_outputs(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s.db")
    cases = [Case(id="a", input="q1"), Case(id="b", input="q2")]
    store.create_run(_record("20261101-000000-aaaa", time.time() - 10), cases)
    store.create_run(_record("20261102-000000-bbbb", time.time()), cases)
    assert store.get_run("latest").id == "20261102-000000-bbbb"
    assert store.get_run("latest~1").id == "20261101-000000-aaaa"
    assert store.get_run("20261101").id == "20261101-000000-aaaa"
    with pytest.raises(StoreError, match="matches 2 runs"):
        store.get_run("2026110")
    with pytest.raises(StoreError, match="no run 'zzz'"):
        store.get_run("zzz")

    run_id = "20261101-000000-aaaa"
    store.save_output(run_id, "a", AgentOutput(response="r1", agent_run=AgentRun(latency_s=0.2)))
    merged = store.merged_cases(run_id)
    assert merged[0].response == "r1" and merged[0].agent_run is not None and merged[1].response is None

    result = ResultRecord(
        run_id=run_id, case_id="a", metric="m", score=Score(value=1.0), usage=Usage(prompt_tokens=10, calls=1)
    )
    store.save_result(result)
    with pytest.raises(sqlite3.IntegrityError):
        store.save_result(result)  # a (case, metric) result exists at most once
    store.save_result(ResultRecord(run_id=run_id, case_id="b", metric="m", score=Score.failed("x")))
    assert store.done_pairs(run_id) == {("a", "m"), ("b", "m")}
    assert store.delete_error_results(run_id) == 1
    assert store.done_pairs(run_id) == {("a", "m")}
    assert store.usage(run_id).prompt_tokens == 10
    loaded = store.load_results(run_id)
    assert loaded[0].score == Score(value=1.0)
    record = store.set_status(run_id, "completed")
    assert record.status == "completed" and record.finished_at is not None and record.usage.calls == 1
    assert [r.id for r in store.list_runs()] == ["20261102-000000-bbbb", run_id]
    store.close()


def test_not_a_store(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable clineval store"):
        RunStore(path)
