"""compare_runs on runs with repeats: the pairs are cases (their trial means), never trials."""

from __future__ import annotations

from pathlib import Path

import pytest

from clineval import evaluate, load_run
from clineval.compare import compare_runs

CASES = [{"id": f"c{i}", "input": f"note {i}", "expected": "yes"} for i in range(4)]


def _agent(passing: dict[str, set[int]]):  # type: ignore[no-untyped-def]
    calls: dict[str, int] = {}

    def agent(question: str) -> str:
        calls[question] = calls.get(question, 0) + 1
        return "yes" if calls[question] in passing.get(question, set()) else "no"

    return agent


def test_compare_pairs_case_means_not_trials(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    # A passes 2 of 4 trials on every case (means 0.5); B passes 4 of 4 on c0, c1 and 2 of 4 on c2, c3
    a = evaluate(
        CASES,
        ["exact_match"],
        agent=_agent({f"note {i}": {1, 2} for i in range(4)}),
        repeats=4,
        store=db,
        progress=False,
        name="a",
    )
    b_passing = {"note 0": {1, 2, 3, 4}, "note 1": {1, 2, 3, 4}, "note 2": {1, 2}, "note 3": {1, 2}}
    b = evaluate(
        CASES, ["exact_match"], agent=_agent(b_passing), repeats=4, store=db, progress=False, name="b"
    )
    single = evaluate(CASES, ["exact_match"], agent=_agent(b_passing), store=db, progress=False, name="one")
    comparison = compare_runs(load_run(a.run_id, store=db), load_run(b.run_id, store=db))
    exact = comparison.get("exact_match")
    assert exact.n_paired == 4  # four cases, not 16 trials
    assert exact.kind == "continuous"  # case means 0.5 and 1.0: not 0/1 values
    assert (exact.mean_a, exact.mean_b) == pytest.approx((0.5, 0.75))
    assert [c.case_id for c in exact.improved_cases] == ["c0", "c1"]
    assert [c.delta for c in exact.improved_cases] == pytest.approx([0.5, 0.5])
    # two cases moved, both by +0.5: of the 2 ** 2 sign flips of the changed pairs, 2 (both up,
    # both down) are as far from 0 as seen: two-sided exact p = 2 / 4
    assert exact.test == "permutation exact" and exact.p_value == pytest.approx(0.5)
    assert not any("repeats" in w for w in comparison.warnings)
    mixed = compare_runs(load_run(a.run_id, store=db), load_run(single.run_id, store=db))
    assert any("different repeats (4 vs 1 trials per case)" in w for w in mixed.warnings)
