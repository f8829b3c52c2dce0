"""The results table shows each metric's range (min–max) beside its mean, as published
orchestrator results do (score range and average), and stays readable when narrow."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from tests.clirun import invoke

from clineval import evaluate
from clineval.model import ResultRecord, Score
from clineval.results import aggregate
from clineval.results.aggregate import MetricAggregate
from clineval.results.render import aggregates_table, score_range


def _r(case_id: str, metric: str, score: Score) -> ResultRecord:
    return ResultRecord(run_id="r", case_id=case_id, metric=metric, score=score)


def _text(table: object, width: int) -> str:
    console = Console(width=width, record=True)
    console.print(table)
    return console.export_text()


# Ratings 1-5 of four conversations and one the judge could not rate: range 3-5, mean 4.
RATINGS = [
    _r("1", "agent_selection", Score(value=3.0)),
    _r("2", "agent_selection", Score(value=5.0)),
    _r("3", "agent_selection", Score(value=4.0)),
    _r("4", "agent_selection", Score(value=4.0)),
    _r("5", "agent_selection", Score.failed("judge timed out")),
]


def test_score_range_formats() -> None:
    base = {"metric": "m", "n": 1, "scored": 1, "errors": 0, "not_applicable": 0}
    assert score_range(MetricAggregate(**base, min=3.0, max=5.0)) == "3.000–5.000"
    assert score_range(MetricAggregate(**base, min=0.25, max=0.25)) == "0.250"
    assert score_range(MetricAggregate(**{**base, "scored": 0})) == "–"
    assert score_range(MetricAggregate(**base, min=0.0, max=1.0), digits=2) == "0.00–1.00"


def test_wide_table_has_every_column_with_the_range() -> None:
    (agg,) = aggregate(RATINGS)
    assert (agg.min, agg.max, agg.mean, agg.scored, agg.errors) == (3.0, 5.0, 4.0, 4, 1)
    text = _text(aggregates_table([agg], title="Results", width=140), 140)
    header = next(line for line in text.splitlines() if "metric" in line)
    for column in ("scored", "mean", "std", "min–max", "95% CI", "unscored", "n/a"):
        assert column in header
    row = next(line for line in text.splitlines() if "agent_selection" in line)
    assert "3.000–5.000" in row and "4.000" in row
    # sample std of 3, 5, 4, 4: sqrt(2 / 3) = 0.816
    assert "0.816" in row
    assert "left out" not in text


def test_narrow_table_leaves_out_std_then_range_and_says_so() -> None:
    long_name = [_r(str(i), "trajectory_any_order_match", Score(value=float(i % 2))) for i in range(1, 5)]
    aggs = aggregate(long_name)
    full = _text(aggregates_table(aggs, width=None), 200)
    assert "std" in full and "min–max" in full
    mid = _text(aggregates_table(aggs, width=95), 95)
    assert "min–max" in mid and "0.000–1.000" in mid
    assert "std left out to fit 95 columns" in mid
    narrow = _text(aggregates_table(aggs, width=80), 80)
    header = next(line for line in narrow.splitlines() if "metric" in line)
    assert "min–max" not in header and "std" not in header and "95% CI" in header
    assert "std and min–max left out to fit 80 columns" in narrow
    # numbers are never cut short
    assert "…" not in narrow


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("range")
    cases = [
        {"id": "a", "response": "potassium 4.1 normal", "reference": "potassium 4.1 normal"},
        {"id": "b", "response": "sodium 140", "reference": "potassium 4.1 normal"},
    ]
    result = evaluate(cases, ["exact_match"], store=folder / "runs.db", progress=False, judge="none")
    return folder, result.run_id


def test_clineval_show_prints_the_range(stored: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder, run_id = stored
    monkeypatch.setenv("COLUMNS", "140")
    done = invoke("show", run_id, "--store", str(folder / "runs.db"))
    assert done.exit_code == 0, done.output
    row = next(line for line in done.stdout.splitlines() if "exact_match" in line)
    # exact_match: 1 then 0 -> mean 0.5, range 0-1
    assert "0.000–1.000" in row and "0.500" in row
