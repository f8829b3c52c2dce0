"""Repeated trials (``repeats``): estimators, combining trials, runs, resume, old stores.

Every expected value is worked by hand in the comments.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from clineval import evaluate, load_run
from clineval.errors import ConfigError
from clineval.model import Score
from clineval.results.trials import (
    combine_trials,
    pass_at_k,
    pass_hat_k,
    summarise_trials,
)
from clineval.store import RunStore

# n = 5 trials, c = 2 passed.  C(5,k) = 5, 10, 10, 5, 1;  C(3,k) = 3, 3, 1, 0, 0;  C(2,k) = 2, 1, 0, 0, 0.
# pass@k = 1 - C(3,k)/C(5,k) = 1-3/5, 1-3/10, 1-1/10, 1-0, 1-0 ; pass^k = C(2,k)/C(5,k) = 2/5, 1/10, 0, 0, 0.
PASS_AT = [0.4, 0.7, 0.9, 1.0, 1.0]
PASS_HAT = [0.4, 0.1, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_pass_at_k_and_pass_hat_k_from_five_trials_two_passed(k: int) -> None:
    assert pass_at_k(5, 2, k) == pytest.approx(PASS_AT[k - 1])
    assert pass_hat_k(5, 2, k) == pytest.approx(PASS_HAT[k - 1])


def test_pass_estimators_at_the_edges() -> None:
    assert [pass_at_k(4, 0, k) for k in (1, 4)] == [0.0, 0.0]  # never passed
    assert [pass_hat_k(4, 4, k) for k in (1, 4)] == [1.0, 1.0]  # always passed
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3) == pass_hat_k(3, 1, 1)  # k = 1: c / n
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_hat_k(3, 4, 1)


def test_combine_trials_means_the_scored_trials_only() -> None:
    scores = [
        Score(value=1.0, label="match", explanation="same words", details={"response": "yes"}),
        Score(value=0.0, label="no_match"),
        Score.failed("judge timed out"),
        Score(value=1.0, label="match"),
    ]
    combined = combine_trials(scores)
    # mean of 1, 0, 1 = 2/3 (the unscored trial never counts as 0); std of (1, 0, 1) with n - 1:
    # mean 2/3, squares (1/9 + 4/9 + 1/9) = 6/9, / 2 = 1/3, sqrt = 0.57735
    assert combined.value == pytest.approx(2 / 3)
    assert combined.status == "scored"
    trials = combined.details["trials"]
    assert trials["values"] == [1.0, 0.0, None, 1.0]
    assert trials["std"] == pytest.approx(math.sqrt(1 / 3))
    assert trials["unscored"] == 1
    assert combined.details["response"] == "yes"  # the first trial's evidence
    assert combined.label is None  # the trials disagree
    assert combined.explanation == "mean of 4 trials (1, 0, -, 1); 1 unscored; trial 1: same words"

    failed = combine_trials([Score.failed("boom"), Score.failed("again")])
    assert failed.status == "error"
    assert failed.error == "2 of 2 trials unscored: boom"
    assert combine_trials([Score(), Score()]).status == "not_applicable"


def test_summarise_trials_by_hand() -> None:
    rows: list[tuple[str, list[float | None] | None]] = [
        ("exact", [1.0, 1.0, 0.0, 0.0, 0.0]),  # c = 2 of 5
        ("exact", [1.0, 1.0, 1.0, 1.0, 1.0]),  # c = 5 of 5
        ("failure", [0.0, 1.0, 0.0, 0.0, 0.0]),  # lower is better: no pass rows
        ("f1", [0.5, 0.7, None, 0.6, 0.6]),  # not pass/fail
        ("f1", None),  # a result without trials (not counted)
    ]
    exact, failure, f1 = summarise_trials(rows, repeats=5, lower_is_better=["failure"])
    assert exact.pass_fail and exact.cases == 2
    # pass@k = mean over the two cases of (PASS_AT[k], 1); pass^k = mean of (PASS_HAT[k], 1)
    assert exact.pass_at == pytest.approx({k: (PASS_AT[k - 1] + 1) / 2 for k in range(1, 6)})
    assert exact.pass_hat == pytest.approx({k: (PASS_HAT[k - 1] + 1) / 2 for k in range(1, 6)})
    # std of (1,1,0,0,0): mean 0.4, squares 2*0.36 + 3*0.16 = 1.2, / 4 = 0.3; the other case 0
    assert exact.spread == pytest.approx(math.sqrt(0.3) / 2)
    assert not failure.pass_fail and failure.pass_at == {}
    # f1 (0.5, 0.7, 0.6, 0.6): mean 0.6, squares 0.01 + 0.01 = 0.02, / 3
    assert not f1.pass_fail and f1.cases == 1 and f1.spread == pytest.approx(math.sqrt(0.02 / 3))


# --------------------------------------------------------------------------- runs

CASES = [{"id": f"c{i}", "input": f"note {i}", "expected": "yes"} for i in range(3)]
#: How many of its 5 trials each case passes: the agent answers "yes" on these calls of a case.
PASSING_CALLS = {"note 0": {1, 2}, "note 1": {1, 2, 3, 4, 5}, "note 2": set()}


class CountingAgent:
    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, question: str) -> str:
        self.calls[question] = self.calls.get(question, 0) + 1
        return "yes" if self.calls[question] in PASSING_CALLS[question] else "no"


def _count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_a_run_with_repeats_scores_cases_by_their_trial_means(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    agent = CountingAgent()
    result = evaluate(CASES, ["exact_match"], agent=agent, repeats=5, store=db, progress=False)
    assert agent.calls == {"note 0": 5, "note 1": 5, "note 2": 5}
    frame = result.to_pandas().set_index("case_id")
    assert list(frame["exact_match"]) == pytest.approx([0.4, 1.0, 0.0])  # c / n per case
    assert list(frame["failure"]) == [0.0, 0.0, 0.0]
    (mean,) = [a.mean for a in result.aggregate() if a.metric == "exact_match"]
    assert mean == pytest.approx(1.4 / 3)  # over the three case means
    # trial rows: 3 cases x 5 trials (x 3 metrics: exact_match, latency, failure)
    assert (_count(db, "trial_outputs"), _count(db, "trial_results")) == (15, 45)
    assert (_count(db, "outputs"), _count(db, "results")) == (3, 9)
    summary = {s.metric: s for s in result.trial_summary()}
    exact = summary["exact_match"]
    # per case (c of 5) = 2, 5, 0: pass@2 = (0.7 + 1 + 0) / 3, pass^2 = (0.1 + 1 + 0) / 3
    assert exact.pass_at[2] == pytest.approx(1.7 / 3)
    assert exact.pass_hat[2] == pytest.approx(1.1 / 3)
    assert exact.pass_at[5] == pytest.approx(2 / 3) and exact.pass_hat[5] == pytest.approx(1 / 3)
    assert not summary["failure"].pass_at  # lower is better
    stored = load_run(result.run_id, store=db, lazy=True)  # the store's reading (SQL) agrees
    assert stored.trial_summary() == result.trial_summary()
    assert stored.repeats == 5


def test_repeats_need_an_agent_or_a_sampling_judge_without_cache(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="metrics that do not use a judge"):
        evaluate(CASES, ["exact_match"], repeats=3, store=tmp_path / "s.db", progress=False)
    with pytest.raises(ConfigError, match="judge cache"):
        evaluate(CASES, ["rubric"], repeats=3, store=tmp_path / "s.db", progress=False)
    assert not (tmp_path / "s.db").exists()  # refused before the store is opened


def _forget(db: Path, sql: str, *params: Any) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(sql, params)
        conn.execute("UPDATE runs SET status = 'running'")


def test_resume_runs_only_the_missing_trials_and_combines_stored_ones(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    first = CountingAgent()
    run_id = evaluate(CASES, ["exact_match"], agent=first, repeats=5, store=db, progress=False).run_id
    # As after a kill: c0 has all its trials but was not combined yet; c2 lost trials 4 and 5.
    _forget(db, "DELETE FROM results WHERE case_id = 'c0'")
    _forget(db, "DELETE FROM results WHERE case_id = 'c2'")
    _forget(db, "DELETE FROM trial_results WHERE case_id = 'c2' AND trial >= 4")
    _forget(db, "DELETE FROM trial_outputs WHERE case_id = 'c2' AND trial >= 4")
    again = CountingAgent()
    resumed = evaluate(resume=run_id, agent=again, store=db, progress=False)
    assert again.calls == {"note 2": 2}  # only the two missing trials
    assert resumed.run.status == "completed"
    frame = resumed.to_pandas().set_index("case_id")
    assert list(frame["exact_match"]) == pytest.approx([0.4, 1.0, 0.0])
    assert (_count(db, "trial_outputs"), _count(db, "trial_results"), _count(db, "results")) == (15, 45, 9)


def test_stores_and_runs_without_repeats_keep_working(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    result = evaluate(CASES, ["exact_match"], agent=CountingAgent(), store=db, progress=False)
    assert "repeats" not in result.run.config  # stored as before repeats existed
    assert result.repeats == 1 and result.trial_summary() == []
    assert _count(db, "trial_results") == 0
    with sqlite3.connect(db) as conn:  # a store written before the trial tables
        conn.execute("DROP TABLE trial_results")
        conn.execute("DROP TABLE trial_outputs")
    stored = load_run(result.run_id, store=db, lazy=True)  # read-only: no tables, no trials
    assert [a.mean for a in stored.aggregate() if a.metric == "exact_match"] == pytest.approx([2 / 3])
    with RunStore(db) as store:  # opened for writing: the tables are added
        assert store.has_table("trial_results")
