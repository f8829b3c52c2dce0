"""compare_runs on two stored runs with a known regression and a known improvement."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.compare.data import FLIPPED, METRICS, cases

from clineval import evaluate, load_run
from clineval.compare import Comparison, compare_runs, mcnemar_exact
from clineval.errors import ConfigError
from clineval.model import Case, DatasetInfo, ResultRecord, RunRecord, Score
from clineval.results.result import EvalResult


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("compare") / "runs.db"
    ids = {}
    for key, version in (("a", "a"), ("b", "b"), ("a2", "a")):
        result = evaluate(cases(version), METRICS, store=path, judge="none", progress=False, name=key)
        ids[key] = result.run_id
    return path, ids


@pytest.fixture(scope="module")
def comparison(store: tuple[Path, dict[str, str]]) -> Comparison:
    path, ids = store
    return compare_runs(load_run(ids["a"], store=path), load_run(ids["b"], store=path))


def test_verdicts(comparison: Comparison) -> None:
    assert [m.metric for m in comparison.metrics] == METRICS
    assert [m.metric for m in comparison.regressed] == ["exact_match", "token_f1"]
    assert [m.metric for m in comparison.improved] == ["latency"]
    assert comparison.get("failure").verdict == "no significant change"
    assert comparison.paired_cases == 40


def test_binary_metric_uses_mcnemar(comparison: Comparison) -> None:
    exact = comparison.get("exact_match")
    # c38 (error in A) and c39 (error in B) are left out: 38 pairs, 12 of them 1 -> 0.
    assert (exact.kind, exact.n_paired, exact.scored_only_a, exact.scored_only_b) == ("binary", 38, 1, 1)
    assert exact.mean_a == 1.0
    assert exact.mean_b == pytest.approx(26 / 38)
    assert exact.delta == pytest.approx(-12 / 38)
    assert exact.test == "McNemar exact"
    assert exact.p_value == pytest.approx(mcnemar_exact(12, 0)) == pytest.approx(2 / 4096)
    assert exact.ci_low is not None and exact.ci_high is not None
    assert exact.ci_low <= exact.delta <= exact.ci_high < 0
    assert [c.case_id for c in exact.regressed_cases] == FLIPPED
    assert all((c.value_a, c.value_b) == (1.0, 0.0) for c in exact.regressed_cases)
    assert exact.improved_cases == []


def test_continuous_metrics_use_the_permutation_test(comparison: Comparison) -> None:
    f1 = comparison.get("token_f1")
    assert f1.kind == "continuous" and f1.test == "permutation exact"  # 12 non-zero differences
    assert f1.p_value == pytest.approx(2 / 2**12)  # all 12 of one sign
    assert sorted(c.case_id for c in f1.regressed_cases) == FLIPPED
    assert all(c.value_a == 1.0 and c.value_b == pytest.approx(0.8) for c in f1.regressed_cases)
    latency = comparison.get("latency")
    assert latency.lower_is_better and latency.kind == "continuous"
    assert latency.n_paired == 40 and latency.delta == pytest.approx(-0.5)
    assert latency.test == "permutation 10,000"
    assert latency.p_value == pytest.approx(1 / 10_001)
    assert len(latency.improved_cases) == 40 and latency.regressed_cases == []


def test_holm_adjustment(comparison: Comparison) -> None:
    # p-values: latency 1/10001, exact_match = token_f1 = 2/4096, failure 1 (b = c = 0).
    # Holm: latency · 4; the next two · 3 and · 2 (monotone: both 3·2/4096); failure 1.
    assert comparison.get("failure").p_value == 1.0
    assert comparison.get("latency").p_holm == pytest.approx(4 / 10_001)
    assert comparison.get("exact_match").p_holm == pytest.approx(3 * 2 / 4096)
    assert comparison.get("token_f1").p_holm == pytest.approx(3 * 2 / 4096)
    assert comparison.get("failure").p_holm == 1.0


def test_status_changes(comparison: Comparison) -> None:
    changes = {(c.case_id, c.metric): c for c in comparison.status_changes}
    assert set(changes) == {
        ("c39", "exact_match"),
        ("c39", "token_f1"),
        ("c38", "exact_match"),
        ("c38", "token_f1"),
    }
    lost = changes[("c39", "exact_match")]
    assert (lost.status_a, lost.status_b) == ("scored", "error")
    assert lost.message is not None and "response" in lost.message
    gained = changes[("c38", "token_f1")]
    assert (gained.status_a, gained.status_b) == ("error", "scored")
    assert gained.message is not None and "response" in gained.message


def test_dataset_warning(comparison: Comparison) -> None:
    (warning,) = comparison.warnings
    assert "datasets differ" in warning and "40 case(s) paired" in warning
    assert "same inputs and references" in warning


def test_identical_runs_show_no_change(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    same = compare_runs(load_run(ids["a"], store=path), load_run(ids["a2"], store=path))
    assert same.warnings == []
    assert all(m.verdict == "no significant change" for m in same.metrics)
    assert all(not m.regressed_cases and not m.improved_cases for m in same.metrics)
    assert same.status_changes == []
    reverse = compare_runs(load_run(ids["b"], store=path), load_run(ids["a"], store=path))
    assert [m.metric for m in reverse.improved] == ["exact_match", "token_f1"]
    assert [m.metric for m in reverse.regressed] == ["latency"]


def test_sub_scores_and_metric_filter(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    a, b = load_run(ids["a"], store=path), load_run(ids["b"], store=path)
    with_subs = compare_runs(a, b, include_sub_scores=True)
    names = [m.metric for m in with_subs.metrics]
    assert names[:3] == ["exact_match", "token_f1", "token_f1.precision"]
    assert "token_f1.recall" in names
    only = compare_runs(a, b, metrics=["token_f1.recall", "latency"])
    assert [m.metric for m in only.metrics] == ["token_f1.recall", "latency"]
    # Holm over the two compared only
    assert only.get("latency").p_holm == pytest.approx(2 / 10_001)
    with pytest.raises(ConfigError, match=r"'nope' is not in both runs; metrics of both: exact_match"):
        compare_runs(a, b, metrics=["nope"])
    with pytest.raises(ConfigError, match="alpha"):
        compare_runs(a, b, alpha=1.5)


# --- small runs built in memory --------------------------------------------------------------


def _result(
    run_id: str,
    scores: dict[str, dict[str, Score]],
    *,
    fingerprint: str = "f",
    lower: list[str] | None = None,
) -> EvalResult:
    metrics = list(dict.fromkeys(m for per_case in scores.values() for m in per_case))
    run = RunRecord(
        id=run_id,
        created_at=0.0,
        status="completed",
        metrics=metrics,
        lower_is_better=lower or [],
        dataset=DatasetInfo(source="mem", fingerprint=fingerprint, n_cases=len(scores)),
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


def test_fewer_than_two_pairs_is_not_comparable() -> None:
    a = _result("a", {"x": {"m": Score(value=0.5)}, "y": {"m": Score(value=0.2)}})
    b = _result("b", {"x": {"m": Score(value=0.9)}, "y": {"m": Score.failed("judge timed out")}})
    item = compare_runs(a, b).get("m")
    assert item.verdict == "not comparable" and item.n_paired == 1
    assert item.reason is not None and "only 1 case" in item.reason
    assert item.p_value is None and item.p_holm is None
    assert item.delta == pytest.approx(0.4)


def test_no_shared_case_is_a_user_error() -> None:
    a = _result("a", {"x": {"m": Score(value=1.0)}})
    b = _result("b", {"y": {"m": Score(value=1.0)}})
    with pytest.raises(ConfigError, match="share no case id"):
        compare_runs(a, b)


def test_metrics_of_one_run_are_listed_and_cases_of_one_run_warned() -> None:
    a = _result(
        "a", {"x": {"m": Score(value=1.0)}, "y": {"m": Score(value=0.0)}, "z": {"m": Score(value=1.0)}}
    )
    b = _result(
        "b",
        {"x": {"m": Score(value=1.0), "extra": Score(value=0.1)}, "y": {"m": Score(value=0.0)}},
        fingerprint="g",
    )
    comparison = compare_runs(a, b)
    assert comparison.metrics_only_in_b == ["extra"] and comparison.metrics_only_in_a == []
    assert comparison.cases_only_in_a == ["z"]
    assert "1 case(s) only in A, 0 only in B" in comparison.warnings[0]


def test_lower_is_better_sets_the_direction() -> None:
    values_a = {f"c{i}": {"cost": Score(value=1.0 + i / 100)} for i in range(20)}
    values_b = {f"c{i}": {"cost": Score(value=2.0 + i / 100)} for i in range(20)}
    up_bad = compare_runs(_result("a", values_a, lower=["cost"]), _result("b", values_b, lower=["cost"]))
    assert up_bad.get("cost").verdict == "regressed"
    up_good = compare_runs(_result("a", values_a), _result("b", values_b))
    assert up_good.get("cost").verdict == "improved"


def test_direction_of_records_made_before_lower_is_better() -> None:
    values_a = {f"c{i}": {"latency": Score(value=1.0 + i / 100)} for i in range(20)}
    values_b = {f"c{i}": {"latency": Score(value=2.0 + i / 100)} for i in range(20)}
    a, b = _result("a", values_a), _result("b", values_b)
    for result in (a, b):  # no lower_is_better recorded; the built-in metric says it
        result.run.config = {"metrics": [{"name": "latency"}]}
    item = compare_runs(a, b).get("latency")
    assert item.lower_is_better and item.verdict == "regressed"
