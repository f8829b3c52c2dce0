"""The store's repeated-trial tables: written with the case rows, read back, forgotten on retry."""

from __future__ import annotations

import time
from pathlib import Path

from clineval.model import AgentOutput, AgentRun, Case, DatasetInfo, ResultRecord, RunRecord, Score
from clineval.store import RunStore
from clineval.store.sqlite import TrialOutput, TrialResult
from clineval.store.trials import count_trials, iter_trial_rows, trial_outputs_for, trial_results_for


def _run(store: RunStore) -> RunRecord:
    record = RunRecord(
        id="r1",
        created_at=time.time(),
        config={"repeats": 2},
        metrics=["m"],
        dataset=DatasetInfo(source="x", fingerprint="f", n_cases=1),
        clineval_version="0",
        python="3",
        platform="p",
    )
    store.create_run(record, [Case(id="c1", input="q")])
    return record


def _result(score: Score) -> ResultRecord:
    return ResultRecord(run_id="r1", case_id="c1", metric="m", score=score)


def test_trials_are_written_read_and_forgotten_on_retry(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.db") as store:
        _run(store)
        out1 = AgentOutput(response="a", agent_run=AgentRun(latency_s=0.5))
        out2 = AgentOutput(response="b", agent_run=AgentRun(latency_s=0.25))
        store.write_batch(
            [],
            [_result(Score(value=1.0))],  # the case's combined result
            [
                TrialOutput("r1", "c1", 1, out1),
                TrialOutput("r1", "c1", 2, out2),
                TrialResult(1, _result(Score(value=1.0))),
                TrialResult(2, _result(Score.failed("judge timed out"))),
            ],
        )
        # trial 1's output is the case's output too
        assert store.load_outputs("r1")["c1"].response == "a"
        assert {key: o.response for key, o in trial_outputs_for(store, "r1", ["c1"]).items()} == {
            ("c1", 1): "a",
            ("c1", 2): "b",
        }
        stored = trial_results_for(store, "r1", ["c1"])[("c1", "m")]
        assert {t: r.score.status for t, r in stored.items()} == {1: "scored", 2: "error"}
        assert count_trials(store, "r1") == (2, 2)
        rows = list(iter_trial_rows(store, "r1"))
        assert [(r["trial"], r["status"], r["response"], r["agent_latency_s"]) for r in rows] == [
            (1, "scored", "a", 0.5),
            (2, "error", "b", 0.25),
        ]
        store.delete_error_results("r1")  # --retry-errors: the unscored trial and the combined result
        assert count_trials(store, "r1") == (2, 1)
        assert store.count_results("r1") == 0
