"""The prior-authorization suite end to end: decisions against their expected values, the
case table, and a known regression caught by compare and by the CI gates."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import clineval

from clineval.compare import compare_runs
from clineval.results.result import EvalResult
from clineval.suites import run_suite
from clineval.suites.table import case_rows, table_spec

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "prior_auth"
EXPECTED_DECISIONS = {f"00{i}-{v}": "approved" if v == "a" else "denied" for i in range(1, 6) for v in "ab"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, EvalResult, EvalResult]:
    store = tmp_path_factory.mktemp("prior_auth") / "runs.db"
    baseline = run_suite(
        EXAMPLE / "suite.yaml", store=store, cache=None, progress=False, tags={"change": "base"}
    )
    regressed = run_suite(EXAMPLE / "suite_regressed.yaml", store=store, cache=None, progress=False)
    return store, baseline.result, regressed.result


def _values(result: EvalResult, metric: str) -> dict[str, Any]:
    return {r.case_id: r.score for r in result.results if r.metric == metric}


def test_the_pipeline_decides_every_case_as_expected(runs: tuple[Path, EvalResult, EvalResult]) -> None:
    _, baseline, _ = runs
    decisions = _values(baseline, "Decision")
    assert sorted(decisions) == sorted(EXPECTED_DECISIONS)
    assert all(score.value == 1.0 and score.label == "pass" for score in decisions.values())
    for metric in ("UnmetCriteria", "FieldExact"):
        assert all(score.value == 1.0 for score in _values(baseline, metric).values()), metric
    assert all(score.value == 100.0 for score in _values(baseline, "FieldFuzzy").values())
    # the rationale metrics and the time to decision are scored for every case, never unscored
    for metric in ("RationaleFaithfulness", "RationaleFactuality", "TimeToDecision", "latency"):
        scores = _values(baseline, metric)
        assert len(scores) == 10 and all(s.status == "scored" for s in scores.values()), metric
    assert baseline.run.tags["suite"] == "prior_auth" and baseline.run.tags["pipeline"] == "PriorAuthPipeline"


def test_case_table_has_the_seed_columns(runs: tuple[Path, EvalResult, EvalResult]) -> None:
    _, baseline, _ = runs
    spec = table_spec(baseline)
    assert spec is not None
    assert list(spec) == ["case", "diagnosis", "medication", "expected", "actual", "reasoning", "time"]
    rows = {row[0]: row for row in case_rows(baseline, spec)}
    for case, decision in EXPECTED_DECISIONS.items():
        _, diagnosis, medication, expected, actual, reasoning, time = rows[case]
        assert expected == actual == decision
        assert reasoning.startswith("Approved" if decision == "approved" else "Denied")
        assert time.endswith(" s") and diagnosis and medication
    assert rows["003-b"][2] == "blinatumomab"


def test_compare_finds_the_known_regression(runs: tuple[Path, EvalResult, EvalResult]) -> None:
    _, baseline, regressed = runs
    comparison = compare_runs(baseline, regressed)
    by_metric = {m.metric: m for m in comparison.metrics}
    # dates of birth now come out as MM/DD/YYYY: one of six fields wrong in every case
    assert by_metric["FieldExact"].verdict == "regressed"
    assert by_metric["FieldExact"].delta == pytest.approx(-1 / 6)
    assert by_metric["FieldExact"].p_value == pytest.approx(2 / 1024)  # all 10 of 2^10 sign flips
    # dropping the prior-therapy criteria turns two denials into approvals (too few for significance)
    decision = by_metric["Decision"]
    assert decision.kind == "binary" and decision.test == "McNemar exact"
    assert sorted(c.case_id for c in decision.regressed_cases) == ["003-b", "004-b"]
    assert decision.p_value == pytest.approx(0.5) and decision.verdict == "no significant change"
    assert sorted(c.case_id for c in by_metric["UnmetCriteria"].regressed_cases) == [
        "001-b",
        "002-b",
        "003-b",
        "004-b",
    ]


def test_the_docs_say_what_the_regressed_suite_changes(runs: tuple[Path, EvalResult, EvalResult]) -> None:
    """docs/suites.md names the two parameters suite_regressed.yaml sets and the cases that
    regress, as the runs above find them (it once said one parameter, the prescriber)."""
    import yaml

    _, baseline, regressed = runs
    changed = yaml.safe_load((EXAMPLE / "suite_regressed.yaml").read_text(encoding="utf-8"))
    assert sorted(changed["prior_auth"]["pipeline"]) == ["date_format", "skip_criteria"]
    docs = " ".join((ROOT / "docs" / "suites.md").read_text(encoding="utf-8").split())
    assert "changes two pipeline parameters" in docs and "prescriber criterion" not in docs
    assert "`skip_criteria: [Prior therapy]`" in docs and '`date_format: "%m/%d/%Y"`' in docs
    comparison = {m.metric: m for m in compare_runs(baseline, regressed).metrics}
    flipped = sorted(c.case_id for c in comparison["Decision"].regressed_cases)
    assert f"({flipped[0]} and {flipped[1]}, whose only unmet criterion it was" in docs
    assert "UnmetCriteria 1.0 -> 0.6" in docs and "Decision 1.0 -> 0.8" in docs
    assert f"FieldFuzzy 100 -> {comparison['FieldFuzzy'].mean_b or 0:.1f}" in docs


def test_ci_gates_on_the_stored_runs(runs: tuple[Path, EvalResult, EvalResult], tmp_path: Path) -> None:
    store, baseline, regressed = runs
    report = tmp_path / "report.xml"
    # the gated run and the two compares of the stored runs are independent: run them at once
    with ThreadPoolExecutor(max_workers=1) as pool:
        gating = pool.submit(
            clineval,
            "run",
            str(EXAMPLE / "suite_regressed.yaml"),
            "--store",
            str(store),
            "-q",
            "--no-regression-vs",
            baseline.run.id,
            "--fail-under",
            "Decision=0.9",
            "--junit",
            str(report),
            cwd=ROOT,
        )
        compared = clineval(
            "compare",
            baseline.run.id,
            regressed.run.id,
            "--store",
            str(store),
            "--fail-on-regression",
            cwd=ROOT,
        )
        same = clineval(
            "compare",
            baseline.run.id,
            baseline.run.id,
            "--store",
            str(store),
            "--fail-on-regression",
            cwd=ROOT,
        )
    gated = gating.result()
    assert gated.returncode == 1, gated.stderr
    assert "FAIL  fail-under Decision=0.9" in gated.stdout
    assert "FAIL  no-regression-vs" in gated.stdout and "FieldExact" in gated.stdout
    root = ET.parse(report).getroot()
    suites = {s.get("name"): s for s in root}
    assert suites["Decision"].get("failures") == "2" and suites["gates"].get("failures") == "2"
    assert compared.returncode == 1 and "regressed" in compared.stdout
    assert same.returncode == 0
