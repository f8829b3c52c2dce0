"""A report that shows a few cases reads only those from the store.

``EvalResult.cases_with_results(ids)`` gives the cases (with the agent's output) and their
results by (case, metric); a stored run read lazily answers it from the store without
reading every case (the compare report of two 100,000-case runs held 5.8 GB before)."""

from __future__ import annotations

from pathlib import Path

from clineval import evaluate
from clineval.api import load_run
from clineval.results.stored import StoredResult


def _run(tmp_path: Path) -> Path:
    store = tmp_path / "runs.db"
    rows = [{"id": f"c{i}", "input": f"q{i}", "reference": f"ok q{i}"} for i in range(5)]
    evaluate(
        rows, ["exact_match"], agent=lambda q: "ok " + q if q != "q3" else "no", store=store, progress=False
    )
    return store


def test_a_lazy_run_reads_only_the_cases_asked_for(tmp_path: Path) -> None:
    store = _run(tmp_path)
    lazy = load_run("latest", store=store, lazy=True)
    assert isinstance(lazy, StoredResult)
    cases, records = lazy.cases_with_results(["c3", "c1", "c3", "nope"])
    assert lazy._cases is None and lazy._results is None  # nothing else was read
    assert sorted(cases) == ["c1", "c3"]
    assert (cases["c1"].response, cases["c3"].response) == ("ok q1", "no")  # the agent's outputs
    assert {key: r.score.value for key, r in records.items() if key[1] == "exact_match"} == {
        ("c1", "exact_match"): 1.0,
        ("c3", "exact_match"): 0.0,
    }
    assert {metric for _, metric in records} == {"exact_match", "latency", "failure"}


def test_the_lazy_and_the_loaded_run_give_the_same(tmp_path: Path) -> None:
    store = _run(tmp_path)
    lazy = load_run("latest", store=store, lazy=True).cases_with_results(["c0", "c4"])
    whole = load_run("latest", store=store).cases_with_results(["c0", "c4"])
    assert lazy == whole
