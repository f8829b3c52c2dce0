"""Threshold and regression gates, and the JUnit report parsed back."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from clineval.compare import (
    GateResult,
    check_metric_names,
    check_no_regression,
    check_threshold,
    compare_runs,
    parse_threshold,
    write_junit,
)
from clineval.errors import ConfigError
from clineval.model import Case, DatasetInfo, ResultRecord, RunRecord, Score
from clineval.results.result import EvalResult


def _result(scores: dict[str, dict[str, Score]], *, lower: list[str] | None = None) -> EvalResult:
    metrics = list(dict.fromkeys(m for per_case in scores.values() for m in per_case))
    run = RunRecord(
        id="r1",
        created_at=0.0,
        status="completed",
        metrics=metrics,
        lower_is_better=lower or [],
        dataset=DatasetInfo(source="mem", fingerprint="f", n_cases=len(scores)),
        clineval_version="0",
        python="3.11",
        platform="test",
    )
    results = [
        ResultRecord(run_id="r1", case_id=c, metric=m, score=s, duration_s=0.25)
        for c, per_case in scores.items()
        for m, s in per_case.items()
    ]
    return EvalResult(run=run, cases=[Case(id=c) for c in scores], results=results)


# --- parsing ---------------------------------------------------------------------------------


def test_parse_threshold() -> None:
    gate = parse_threshold(" exact_match = 0.8 ")
    assert (gate.metric, gate.threshold, gate.bound, gate.name) == (
        "exact_match",
        0.8,
        "min",
        "fail-under exact_match=0.8",
    )
    assert parse_threshold("latency=2.5", "max").option == "--fail-over"
    with pytest.raises(ConfigError, match=r"--fail-under 'exact_match': expected METRIC=VALUE"):
        parse_threshold("exact_match")
    with pytest.raises(ConfigError, match="expected METRIC=VALUE"):
        parse_threshold("=0.5")
    with pytest.raises(ConfigError, match=r"--fail-over 'latency=fast': 'fast' is not a number"):
        parse_threshold("latency=fast", "max")
    with pytest.raises(ConfigError, match="finite"):
        parse_threshold("x=nan")


# --- thresholds ------------------------------------------------------------------------------

SCORES = {
    "c1": {
        "acc": Score(value=1.0),
        "f1": Score(value=0.9, sub_scores={"recall": 0.8}),
        "lat": Score(value=1.0),
    },
    "c2": {
        "acc": Score(value=1.0),
        "f1": Score(value=0.7, sub_scores={"recall": 0.6}),
        "lat": Score(value=3.0),
    },
    "c3": {"acc": Score(value=0.0), "f1": Score.failed("judge timed out"), "lat": Score(value=2.0)},
    "c4": {
        "acc": Score.not_applicable("no question"),
        "f1": Score(value=0.5, label="fail"),
        "lat": Score(value=2.0),
    },
}


def test_fail_under_and_fail_over() -> None:
    result = _result(SCORES, lower=["lat"])
    passed = check_threshold(result, parse_threshold("acc=0.6"))  # mean of 1, 1, 0 = 0.667
    assert passed.passed and passed.observed == pytest.approx(2 / 3) and passed.threshold == 0.6
    assert "over 3 scored case(s) is at least 0.6" in passed.message
    failed = check_threshold(result, parse_threshold("acc=0.7"))
    assert not failed.passed and "is below 0.7" in failed.message
    # the mean equal to the threshold up to rounding passes: (0.9 + 0.7 + 0.5) / 3 = 0.7
    assert check_threshold(result, parse_threshold("f1=0.7")).passed
    assert check_threshold(result, parse_threshold("f1.recall=0.7")).passed  # (0.8 + 0.6) / 2
    assert not check_threshold(result, parse_threshold("f1.recall=0.71")).passed
    assert check_threshold(result, parse_threshold("lat=2", "max")).passed  # mean 2.0
    over = check_threshold(result, parse_threshold("lat=1.5", "max"))
    assert not over.passed and "is above 1.5" in over.message


def test_metric_without_scored_case_fails_with_a_reason() -> None:
    result = _result({"c1": {"judge": Score.failed("x")}, "c2": {"judge": Score.not_applicable("y")}})
    outcome = check_threshold(result, parse_threshold("judge=0.1"))
    assert not outcome.passed and outcome.observed is None
    assert "no scored case (1 unscored, 1 not applicable)" in outcome.message


def test_unknown_metric_is_a_user_error_listing_the_metrics() -> None:
    result = _result(SCORES)
    with pytest.raises(ConfigError, match=r"no metric 'ac'.*Did you mean 'acc'.*metrics: acc, f1, lat"):
        check_threshold(result, parse_threshold("ac=0.5"))
    with pytest.raises(ConfigError, match=r"'f1' has no sub-score 'recal'.*Did you mean 'f1.recall'"):
        check_threshold(result, parse_threshold("f1.recal=0.5"))
    check_metric_names([parse_threshold("f1.anything=1")], ["acc", "f1"])  # sub-scores: after the run
    with pytest.raises(ConfigError, match="no metric 'latency'"):
        check_metric_names([parse_threshold("latency=1", "max")], ["acc", "f1"])


def test_no_regression_gate() -> None:
    base = {f"c{i}": {"acc": Score(value=1.0)} for i in range(12)}
    worse = {f"c{i}": {"acc": Score(value=0.0 if i < 10 else 1.0)} for i in range(12)}
    regressed = check_no_regression(compare_runs(_result(base), _result(worse)))
    assert not regressed.passed and regressed.observed == 1.0
    assert regressed.name == "no-regression-vs r1" and "acc (Δ -0.833" in regressed.message
    same = check_no_regression(compare_runs(_result(base), _result(base)))
    assert same.passed and "no metric regressed" in same.message


# --- JUnit -----------------------------------------------------------------------------------


def _counts(element: ET.Element) -> tuple[int, int, int, int]:
    return tuple(int(element.get(k, "-1")) for k in ("tests", "failures", "errors", "skipped"))  # type: ignore[return-value]


def test_junit_report(tmp_path: Path) -> None:
    scores = {**SCORES, "c5": {"acc": Score(value=1.0), "lat": Score(value=2.0)}}  # no f1 result for c5
    result = _result(scores, lower=["lat"])
    gates = [
        GateResult(name="fail-under acc=0.9", passed=False, observed=0.75, threshold=0.9, message="below"),
        GateResult(name="fail-over lat=5", passed=True, observed=2.0, threshold=5.0, message="at most"),
    ]
    path = write_junit(tmp_path / "reports" / "junit.xml", result, gates)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["acc", "f1", "lat", "gates"]
    # acc is binary: c3 (0) fails, c4 is not applicable
    assert _counts(suites["acc"]) == (5, 1, 0, 1)
    # f1: c3 error, c4 label "fail", c5 has no result (skipped)
    assert _counts(suites["f1"]) == (5, 1, 1, 1)
    assert _counts(suites["lat"]) == (5, 0, 0, 0)  # continuous: no failure by value
    assert _counts(suites["gates"]) == (2, 1, 0, 0)
    assert _counts(root) == (17, 3, 1, 2)
    acc_cases = {c.get("name"): c for c in suites["acc"].findall("testcase")}
    assert acc_cases["c3"].find("failure") is not None
    assert acc_cases["c4"].find("skipped") is not None
    system_out = acc_cases["c1"].find("system-out")
    assert system_out is not None and system_out.text == "value: 1"
    error = suites["f1"].find("testcase[@name='c3']/error")
    assert error is not None and error.get("message") == "judge timed out"
    gate = suites["gates"].find("testcase[@name='fail-under acc=0.9']/failure")
    assert gate is not None and gate.get("message") == "below"
    # results stored without a time: the longest duration, never the sum (1.25) of concurrent ones
    assert suites["acc"].get("time") == "0.250"


def test_junit_times_are_wall_times(tmp_path: Path) -> None:
    """Two scores of 2 s and 1 s computed at once, and the agent's 1 s before them: the
    metric took 2 s of wall time (not 3), the run 3 s (not the 4 s of the sum)."""
    from clineval.compare.junit import wall_seconds
    from clineval.model import AgentRun

    assert wall_seconds([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)]) == 4.0
    assert wall_seconds([]) == 0.0
    result = _result({"c1": {"m": Score(value=1.0)}, "c2": {"m": Score(value=0.5)}})
    result.results[0] = result.results[0].model_copy(update={"duration_s": 2.0, "created_at": 110.0})
    result.results[1] = result.results[1].model_copy(update={"duration_s": 1.0, "created_at": 110.5})
    result.cases[0] = result.cases[0].model_copy(update={"agent_run": AgentRun(latency_s=1.0)})
    root = ET.parse(write_junit(tmp_path / "j.xml", result)).getroot()
    suite = root.find("testsuite[@name='m']")
    assert suite is not None and suite.get("time") == "2.500"  # [108, 110] and [109.5, 110.5]
    assert root.get("time") == "3.500"  # and the agent on c1, [107, 108]
    case = suite.find("testcase[@name='c1']")
    assert case is not None and case.get("time") == "2.000"


def test_junit_binary_lower_is_better_fails_on_one(tmp_path: Path) -> None:
    result = _result(
        {"c1": {"failure": Score(value=1.0)}, "c2": {"failure": Score(value=0.0)}}, lower=["failure"]
    )
    root = ET.parse(write_junit(tmp_path / "j.xml", result)).getroot()
    suite = root.find("testsuite[@name='failure']")
    assert suite is not None and _counts(suite) == (2, 1, 0, 0)
    assert suite.find("testcase[@name='c1']/failure") is not None


def test_junit_unwritable_path_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="--junit"):
        write_junit(tmp_path / "file" / "j.xml", _result(SCORES))
