"""The per-case regression gate and the small-n note, on a 10-case suite with two flipped decisions.

Hand-worked: run A decides all 10 cases right (exact_match 1), run B gets c03 and c07
wrong. McNemar's exact test sees b = 2 flips down, c = 0 up: p = 2 · (1/2)^2 = 0.5, not
significant; with k changed cases the best p is 2^(1 − k), so at alpha 0.05 at least 6
flips in one direction are needed (2^-5 = 0.031, 2^-4 = 0.0625): "cannot detect fewer than
6". The per-case gate fails and names c03 and c07.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_cli import clineval

from clineval import evaluate, load_run
from clineval.compare import compare_runs
from clineval.compare.case_gate import CaseGate, check_case_regressions, parse_case_gate
from clineval.compare.stats import mcnemar_exact, min_detectable_changes
from clineval.errors import ConfigError
from clineval.model import Case, DatasetInfo, ResultRecord, RunRecord, Score
from clineval.results.result import EvalResult

ROOT = Path(__file__).resolve().parents[2]
FLIPPED = ["c03", "c07"]


def decisions(version: str) -> list[dict[str, Any]]:
    out = []
    for i in range(10):
        want = "approved" if i % 2 == 0 else "denied"
        got = want
        if version == "b" and f"c{i:02d}" in FLIPPED:
            got = "approved" if want == "denied" else "denied"
        out.append({"id": f"c{i:02d}", "input": f"PA request {i}", "reference": want, "response": got})
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("casegate") / "runs.db"
    ids = {}
    for version in ("a", "b"):
        result = evaluate(decisions(version), ["exact_match"], store=path, judge="none", progress=False)
        ids[version] = result.run_id
    return path, ids


def test_min_detectable_changes_hand_worked() -> None:
    assert min_detectable_changes(0.05) == 6
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64) and 2 / 64 < 0.05
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32) and 2 / 32 > 0.05
    assert min_detectable_changes(0.05, 3) == 7  # Holm over 3 metrics: 3 · 2^-6 = 0.047 < 0.05
    assert min_detectable_changes(0.01) == 8  # 2^-7 = 0.0078 < 0.01 ≤ 2^-6
    with pytest.raises(ValueError):
        min_detectable_changes(1.0)


def test_two_flips_in_ten_not_significant_with_the_small_n_note(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    comparison = compare_runs(load_run(ids["a"], store=path), load_run(ids["b"], store=path))
    exact = comparison.get("exact_match")
    assert (exact.n_paired, exact.test, exact.verdict) == (10, "McNemar exact", "no significant change")
    assert exact.p_value == pytest.approx(0.5)
    assert [c.case_id for c in exact.regressed_cases] == FLIPPED
    assert exact.min_changes == 6
    assert exact.small_n is not None
    assert (
        "2 of 10 case(s) changed; with n=10 McNemar's exact test cannot detect fewer than 6" in exact.small_n
    )
    assert "a change of 0.6 in the mean" in exact.small_n


def test_case_gate_fails_and_lists_the_flipped_cases(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    a, b = load_run(ids["a"], store=path), load_run(ids["b"], store=path)
    outcome = check_case_regressions(a, b, CaseGate())
    assert not outcome.passed and outcome.observed == 2.0
    assert [(c.case_id, c.metric, c.rule, c.before, c.after) for c in outcome.cases] == [
        ("c03", "exact_match", "binary", "1", "0"),
        ("c07", "exact_match", "binary", "1", "0"),
    ]
    assert "2 case(s) right in" in outcome.message and "c03 · exact_match (1 → 0)" in outcome.message
    # the other way round nothing that was right went wrong
    assert check_case_regressions(b, a, CaseGate(metric="exact_match")).passed


def _result(run_id: str, scores: dict[str, dict[str, Score]], lower: list[str] | None = None) -> EvalResult:
    metrics = list(dict.fromkeys(m for per_case in scores.values() for m in per_case))
    run = RunRecord(
        id=run_id,
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
        ResultRecord(run_id=run_id, case_id=case_id, metric=metric, score=score)
        for case_id, per_case in scores.items()
        for metric, score in per_case.items()
    ]
    return EvalResult(run=run, cases=[Case(id=c) for c in scores], results=results)


def test_what_right_means_for_each_kind_of_metric() -> None:
    a = _result(
        "a",
        {
            "x": {"bin": Score(value=1.0), "fuzzy": Score(value=92.0), "lat": Score(value=1.0)},
            "y": {"bin": Score(value=0.0), "fuzzy": Score(value=40.0), "lat": Score(value=3.0)},
            "z": {"bin": Score(value=1.0), "fuzzy": Score(value=99.0), "lat": Score(value=1.5)},
        },
        lower=["lat"],
    )
    b = _result(
        "b",
        {
            "x": {"bin": Score(value=0.0), "fuzzy": Score(value=89.0), "lat": Score(value=2.5)},
            "y": {"bin": Score(value=1.0), "fuzzy": Score(value=95.0), "lat": Score(value=1.0)},
            "z": {
                "bin": Score.failed("pipeline timed out"),
                "fuzzy": Score(value=99.0),
                "lat": Score(value=1.9),
            },
        },
        lower=["lat"],
    )
    every = check_case_regressions(a, b, CaseGate())
    # binary: x went 1 → 0, z went 1 → an error (not vouched for); y went 0 → 1 (not a regression)
    assert [(c.case_id, c.rule, c.before, c.after) for c in every.cases] == [
        ("x", "binary", "1", "0"),
        ("z", "binary", "1", "error: pipeline timed out"),
    ]
    assert every.not_gated == ["fuzzy", "lat"]  # continuous, no label: left out, and said so
    assert "not gated (continuous, no pass/fail label; give METRIC=VALUE): fuzzy, lat" in every.message
    # a threshold makes a continuous metric gateable: ≥ 90 was right (x: 92 → 89 fails it)
    fuzzy = check_case_regressions(a, b, parse_case_gate("fuzzy=90"))
    assert [(c.case_id, c.before, c.after) for c in fuzzy.cases] == [("x", "92", "89")]
    # lower is better: ≤ 2 seconds was right (x 1 → 2.5 regressed; z 1.5 → 1.9 still right)
    latency = check_case_regressions(a, b, parse_case_gate("lat=2"))
    assert [(c.case_id, c.before, c.after) for c in latency.cases] == [("x", "1", "2.5")]
    with pytest.raises(
        ConfigError, match=r"'fuzzy' has no pass/fail label .* --fail-on-case-regression fuzzy=VALUE"
    ):
        check_case_regressions(a, b, parse_case_gate("fuzzy"))
    with pytest.raises(ConfigError, match="Did you mean 'fuzzy'"):
        check_case_regressions(a, b, parse_case_gate("fuzy"))
    with pytest.raises(ConfigError, match="is not a number"):
        parse_case_gate("fuzzy=high")


def test_labels_decide_over_values() -> None:
    # an Azure-style similarity (1-5) with the evaluator's own threshold as pass/fail
    a = _result(
        "a", {"p": {"sim": Score(value=4.0, label="pass")}, "q": {"sim": Score(value=2.0, label="fail")}}
    )
    b = _result(
        "b", {"p": {"sim": Score(value=3.0, label="pass")}, "q": {"sim": Score(value=1.0, label="fail")}}
    )
    assert check_case_regressions(a, b, CaseGate()).passed  # 4 → 3 still passes: not a regression
    c = _result(
        "c", {"p": {"sim": Score(value=2.0, label="fail")}, "q": {"sim": Score(value=5.0, label="pass")}}
    )
    outcome = check_case_regressions(a, c, CaseGate(metric="sim"))
    assert [(x.case_id, x.before, x.after) for x in outcome.cases] == [("p", "pass", "fail")]


# --- the command line -------------------------------------------------------------------------


def test_compare_cli_case_gate_exit_code_and_note(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    env = {"COLUMNS": "250"}
    compare = ("compare", ids["a"], ids["b"], "--store", str(path))
    gates = (
        ("--fail-on-regression",),
        ("--fail-on-case-regression",),
        ("--fail-on-case-regression", "exact_match"),
        ("--fail-on-case-regression=exact=x",),
    )
    with ThreadPoolExecutor(max_workers=2) as pool:  # four read-only commands, two at a time
        statistical, gated, named, wrong = pool.map(
            lambda gate: clineval(*compare, *gate, cwd=ROOT, env=env), gates
        )
    assert statistical.returncode == 0, statistical.stderr  # the paired test lets it through
    assert "too few cases to detect" in statistical.stdout
    assert "with n=10 McNemar's exact test cannot detect fewer than 6 changed cases" in statistical.stdout
    assert gated.returncode == 1, gated.stderr
    assert "FAIL" in gated.stdout and "c03 · exact_match (1 → 0)" in gated.stdout
    assert "c07 · exact_match (1 → 0)" in gated.stdout
    assert named.returncode == 1
    assert wrong.returncode == 2 and "is not a number" in wrong.stderr and "Traceback" not in wrong.stderr


def test_compare_json_holds_the_case_gates(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    done = clineval(
        "compare",
        ids["a"],
        ids["b"],
        "--store",
        str(path),
        "--fail-on-case-regression",
        "--json",
        "-",
        cwd=ROOT,
    )
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)  # standard output holds only the JSON
    [gate] = data["case_gates"]
    assert gate["passed"] is False
    assert {(c["case_id"], c["metric"]) for c in gate["cases"]} >= {
        ("c03", "exact_match"),
        ("c07", "exact_match"),
    }
    assert "c03 · exact_match (1 → 0)" in done.stderr  # the verdict is still shown, on standard error
    plain = clineval("compare", ids["a"], ids["b"], "--store", str(path), "--json", "-", cwd=ROOT)
    assert "case_gates" not in json.loads(plain.stdout)  # no gate asked, none reported


def test_show_gates_write_the_case_gate_to_junit(store: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    path, ids = store
    junit = tmp_path / "junit.xml"
    done = clineval(
        "show",
        ids["b"],
        "--store",
        str(path),
        "--no-regression-vs",
        ids["a"],
        "--fail-on-case-regression",
        "--junit",
        str(junit),
        cwd=ROOT,
        env={"COLUMNS": "250"},
    )
    assert done.returncode == 1, done.stderr
    assert "pass  no-regression-vs" in done.stdout and "FAIL  fail-on-case-regression" in done.stdout
    gates = ET.parse(junit).getroot().find("testsuite[@name='gates']")
    assert gates is not None and gates.get("failures") == "1" and gates.get("tests") == "2"
    failure = gates.find("testcase[@name='fail-on-case-regression']/failure")
    assert failure is not None and "c03 · exact_match (1 → 0)" in (failure.get("message") or "")
    refused = clineval(
        "show", ids["b"], "--store", str(path), "--fail-on-case-regression", cwd=ROOT, env={"COLUMNS": "250"}
    )
    assert refused.returncode == 2 and "add --no-regression-vs RUN" in refused.stderr


def test_small_n_note_when_no_change_can_be_significant() -> None:
    a = _result("a", {f"c{i}": {"m": Score(value=1.0), "k": Score(value=0.5)} for i in range(4)})
    b = _result(
        "b", {f"c{i}": {"m": Score(value=0.0 if i == 0 else 1.0), "k": Score(value=0.5)} for i in range(4)}
    )
    comparison = compare_runs(a, b)
    assert comparison.get("m").small_n == (
        "1 of 4 case(s) changed; with n=4 McNemar's exact test cannot detect fewer than 6 changed cases, "
        "all in one direction; more than the 4 cases there are: no change can be significant "
        "(p < 0.05; 7 if it is the only one of the 2 metrics that changed (Holm)); "
        "gate such changes per case with --fail-on-case-regression"
    )
    assert comparison.get("k").small_n is None  # nothing changed: nothing to say


def test_no_note_when_the_change_is_large_enough() -> None:
    ids = [f"c{i}" for i in range(12)]
    a = _result("a", {c: {"m": Score(value=1.0)} for c in ids})
    b = _result("b", {c: {"m": Score(value=0.0 if n < 6 else 1.0)} for n, c in enumerate(ids)})
    item = compare_runs(a, b).get("m")
    assert item.verdict == "regressed" and item.small_n is None  # 6 flips: p = 2/64 < 0.05
