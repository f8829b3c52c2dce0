"""`show --cases` and `clineval score` read a run from the store a chunk at a time (issue 25, item 4):
the same output and figures as from the whole run, without loading its cases or results."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from clineval import evaluate, rescore
from clineval.api import load_run
from clineval.results import render
from clineval.results.stored import StoredResult
from clineval.store.sqlite import RunStore


def _run(tmp_path: Path, n: int = 40) -> tuple[Path, str]:
    cases = [
        {"id": f"c{i:02d}", "input": f"q {i}", "reference": "a b c" if i % 4 else "x y", "response": "a b c"}
        for i in range(n)
    ]
    store = tmp_path / "s.db"
    result = evaluate(cases, ["exact_match", "token_f1"], store=store, progress=False)
    return store, result.run_id


def _printed(result: object, **kwargs: object) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None)
    render.print_cases(result, console, **kwargs)  # type: ignore[arg-type]
    return console.file.getvalue()  # type: ignore[attr-defined]


def _no_whole_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the whole run was loaded")

    for name in ("load_results", "merged_cases", "load_cases", "load_outputs"):
        monkeypatch.setattr(RunStore, name, refuse)


@pytest.mark.parametrize(
    ("offset", "limit"), [(0, None), (0, 5), (37, 10), (13, 17)], ids=["all", "first", "last", "middle"]
)
def test_case_table_streamed_from_the_store_is_the_table_of_the_whole_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offset: int, limit: int | None
) -> None:
    store, run_id = _run(tmp_path)
    monkeypatch.setattr(RunStore, "stream_chunk", 3)  # many store chunks
    monkeypatch.setattr(render, "_CASE_CHUNK", 7)  # and many printed tables
    whole = _printed(
        load_run(run_id, store=store), offset=offset, limit=limit, more_hint="clineval show R --cases"
    )
    _no_whole_loads(monkeypatch)
    lazy = load_run(run_id, store=store, lazy=True)
    assert _printed(lazy, offset=offset, limit=limit, more_hint="clineval show R --cases") == whole
    assert isinstance(lazy, StoredResult) and lazy._results is None and lazy._cases is None


def test_case_table_rows_and_the_line_on_what_was_shown(tmp_path: Path) -> None:
    store, run_id = _run(tmp_path, n=6)
    text = _printed(
        load_run(run_id, store=store, lazy=True), offset=3, limit=2, more_hint="clineval show R --cases"
    )
    rows = [line for line in text.splitlines() if line.startswith("│ c")]
    # c03: reference "a b c" = response; c04: reference "x y" (i % 4 == 0), no word in common
    assert rows == [
        "│ c03  │       1.000 │    1.000 │",
        "│ c04  │       0.000 │    0.000 │",
    ]
    assert (
        "cases 4–5 of 6 shown; clineval show R --cases --offset 5 for the next, --limit 0 for every case"
        in text
    )
    assert "no case from --offset 9: the run has 6 case(s)" in _printed(
        load_run(run_id, store=store, lazy=True), offset=9, limit=2
    )


def test_score_streams_the_source_run_and_gives_the_figures_of_a_kept_rescore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, run_id = _run(tmp_path)
    kept = rescore(run_id, ["token_f1"], store=store, progress=False)
    monkeypatch.setattr(RunStore, "stream_chunk", 6)
    _no_whole_loads(monkeypatch)
    streamed = rescore(run_id, ["token_f1"], store=store, progress=False, keep_results=False)
    assert isinstance(streamed, StoredResult) and streamed._results is None
    assert streamed.aggregate() == kept.aggregate()
    [f1] = [a for a in streamed.aggregate() if a.metric == "token_f1"]
    assert (f1.scored, f1.mean) == (40, 0.75)  # 30 of 40 references are the response, 10 share no word
    assert streamed.run.dataset.fingerprint == kept.run.dataset.fingerprint
    assert streamed.run.source_run_id == run_id and streamed.case_count() == 40


def _two_runs(tmp_path: Path) -> tuple[Path, str, str]:
    def cases(flip: set[int]) -> list[dict[str, object]]:
        return [
            {
                "id": f"c{i:02d}",
                "input": f"q {i}",
                "reference": "a b c",
                "response": "x y" if i in flip else "a b c",
            }
            for i in range(30)
        ]

    store = tmp_path / "s.db"
    a = evaluate(cases({1}), ["exact_match", "token_f1"], store=store, progress=False)
    b = evaluate(cases({1, 2, 3, 4, 5, 6, 7, 8}), ["exact_match", "token_f1"], store=store, progress=False)
    return store, a.run_id, b.run_id


def test_compare_and_case_gate_read_a_metric_at_a_time_and_agree_with_the_whole_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clineval.compare import compare_runs
    from clineval.compare.case_gate import CaseGate, check_case_regressions

    store, run_a, run_b = _two_runs(tmp_path)
    whole_a, whole_b = load_run(run_a, store=store), load_run(run_b, store=store)
    whole = compare_runs(whole_a, whole_b, include_sub_scores=True)
    whole_gate = check_case_regressions(whole_a, whole_b, CaseGate(metric="exact_match"))
    _no_whole_loads(monkeypatch)
    lazy_a, lazy_b = load_run(run_a, store=store, lazy=True), load_run(run_b, store=store, lazy=True)
    streamed = compare_runs(lazy_a, lazy_b, include_sub_scores=True)
    gate = check_case_regressions(lazy_a, lazy_b, CaseGate(metric="exact_match"))
    assert streamed == whole and gate == whole_gate
    assert isinstance(lazy_a, StoredResult) and lazy_a._results is None and lazy_b._results is None
    exact = streamed.get("exact_match")
    # hand-worked: 29 of 30 right in A, 22 in B; cases 2-8 flipped 1 -> 0 and none back
    assert (exact.n_paired, exact.mean_a, exact.mean_b) == (30, 29 / 30, 22 / 30)
    assert exact.test == "McNemar exact" and exact.p_value == pytest.approx(2 * 0.5**7)
    assert [c.case_id for c in exact.regressed_cases] == [f"c{i:02d}" for i in range(2, 9)]
    assert gate.observed == 7.0 and not gate.passed
