"""The threshold and regression gates, pinned: the option's text, the exact messages a CI
log shows, the 1e-9 tolerance at both bounds, and the order of the gates.

Every expected value below is worked out by hand from :mod:`clineval.compare.gates`'s
docstring and the scores written here.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from tests.compare.test_gates_junit import SCORES, _result

from clineval.compare import (
    check_metric_names,
    check_no_regression,
    check_threshold,
    compare_runs,
    evaluate_gates,
    parse_threshold,
)
from clineval.errors import ConfigError
from clineval.model import Score
from clineval.results.result import EvalResult

# --- the option ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bound", "message"),
    [
        ("x=", "min", "--fail-under 'x=': expected METRIC=VALUE, e.g. --fail-under exact_match=0.8"),
        ("latency", "max", "--fail-over 'latency': expected METRIC=VALUE, e.g. --fail-over latency=2.5"),
        ("x=inf", "min", "--fail-under 'x=inf': the value must be a finite number"),
        ("x=-inf", "max", "--fail-over 'x=-inf': the value must be a finite number"),
    ],
)
def test_parse_threshold_refuses_with_one_line(text: str, bound: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_threshold(text, bound)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_gate_names_show_the_option_and_the_value_as_given() -> None:
    assert parse_threshold("latency=2.50", "max").name == "fail-over latency=2.5"
    assert parse_threshold("acc=1").name == "fail-under acc=1"


def test_a_gate_is_a_value() -> None:
    """Frozen: two gates read from the same text are equal and hash alike, and none can be
    changed after it was checked."""
    gate = parse_threshold("acc=0.8")
    assert gate == parse_threshold("acc = 0.8") and len({gate, parse_threshold("acc=0.8")}) == 1
    with pytest.raises(ValidationError, match="frozen"):
        gate.threshold = 0.1  # type: ignore[misc]


# --- thresholds: messages ------------------------------------------------------------------


def test_threshold_messages() -> None:
    """acc: 1, 1, 0 scored (c4 not applicable): mean 2/3 = 0.6667 over 3; lat: 1, 3, 2, 2:
    mean 2 over 4 (lower is better)."""
    result = _result(SCORES, lower=["lat"])
    cases = [
        ("acc=0.6", "min", True, "acc: mean 0.6667 over 3 scored case(s) is at least 0.6"),
        ("acc=0.7", "min", False, "acc: mean 0.6667 over 3 scored case(s) is below 0.7"),
        ("lat=2", "max", True, "lat: mean 2 over 4 scored case(s) is at most 2"),
        ("lat=1.5", "max", False, "lat: mean 2 over 4 scored case(s) is above 1.5"),
    ]
    for text, bound, passed, message in cases:
        outcome = check_threshold(result, parse_threshold(text, bound))  # type: ignore[arg-type]
        assert (outcome.passed, outcome.message) == (passed, message), text
    acc = check_threshold(result, parse_threshold("acc=0.7"))
    assert (acc.name, acc.observed, acc.threshold) == ("fail-under acc=0.7", pytest.approx(2 / 3), 0.7)


@pytest.mark.parametrize(
    ("text", "bound", "passed"),
    [
        ("m=0.5", "min", True),  # mean 0.5 equals the threshold
        ("m=0.5000000005", "min", True),  # 5e-10 short of it: within the 1e-9 tolerance
        ("m=0.500000002", "min", False),  # 2e-9 short: outside
        ("m=0.5", "max", True),
        ("m=0.4999999995", "max", True),  # 5e-10 over the bound: within
        ("m=0.499999998", "max", False),  # 2e-9 over: outside
    ],
)
def test_the_tolerance_is_one_billionth_at_both_bounds(text: str, bound: str, passed: bool) -> None:
    result = _result({"c1": {"m": Score(value=0.25)}, "c2": {"m": Score(value=0.75)}})  # mean 0.5
    assert check_threshold(result, parse_threshold(text, bound)).passed is passed  # type: ignore[arg-type]


def test_a_sub_score_gate_reads_the_sub_score_mean() -> None:
    """f1.recall: 0.8 and 0.6 on the two cases that have it: mean 0.7 over 2."""
    outcome = check_threshold(_result(SCORES), parse_threshold("f1.recall=0.7"))
    assert outcome.passed and outcome.message == "f1.recall: mean 0.7 over 2 scored case(s) is at least 0.7"


def test_a_metric_named_with_a_dot_is_read_whole() -> None:
    """A metric whose own name has a dot is that metric, not a sub-score of another."""
    result = _result({"c1": {"judge.v2": Score(value=1.0)}, "c2": {"judge.v2": Score(value=0.0)}})
    check_metric_names([parse_threshold("judge.v2=0.5")], ["judge.v2"])
    outcome = check_threshold(result, parse_threshold("judge.v2=0.5"))
    assert outcome.passed and outcome.message == "judge.v2: mean 0.5 over 2 scored case(s) is at least 0.5"


def test_no_scored_case_fails_and_counts_the_parents_cases() -> None:
    """Two errors and one not-applicable: a gate on the metric or on any sub-score of it
    fails (a sub-score cannot be checked when nothing was scored)."""
    result = _result(
        {
            "c1": {"judge": Score.failed("x")},
            "c2": {"judge": Score.failed("y")},
            "c3": {"judge": Score.not_applicable("z")},
        }
    )
    for text in ("judge=0.5", "judge.recall=0.5"):
        outcome = check_threshold(result, parse_threshold(text))
        assert (outcome.passed, outcome.observed, outcome.threshold) == (False, None, 0.5)
        metric = text.partition("=")[0]
        assert outcome.message == (
            f"{metric}: no scored case (2 unscored, 1 not applicable), so the gate cannot pass"
        )


def test_a_declared_metric_without_results_fails_with_nothing_counted() -> None:
    """The run lists ``judge`` but no case has a result for it (e.g. stopped before scoring)."""
    scored = _result({"c1": {"acc": Score(value=1.0)}})
    result = EvalResult(
        run=scored.run.model_copy(update={"metrics": ["acc", "judge"]}),
        cases=scored.cases,
        results=scored.results,
    )
    outcome = check_threshold(result, parse_threshold("judge=0.5"))
    assert (outcome.passed, outcome.observed) == (False, None)
    assert outcome.message == "judge: no scored case (0 unscored, 0 not applicable), so the gate cannot pass"


def test_unknown_names_are_refused_with_what_the_run_has() -> None:
    result = _result(SCORES)
    with pytest.raises(ConfigError) as raised:
        check_threshold(result, parse_threshold("f1.recal=0.5"))
    assert str(raised.value) == (
        "--fail-under f1.recal=0.5: 'f1' has no sub-score 'recal' (its sub-scores: recall). "
        "Did you mean 'f1.recall'? The run's metrics: acc, f1, lat"
    )
    with pytest.raises(ConfigError) as raised:  # no sub-scores at all, nothing close
        check_threshold(result, parse_threshold("acc.precision=0.5"))
    assert str(raised.value) == (
        "--fail-under acc.precision=0.5: 'acc' has no sub-score 'precision' (its sub-scores: none). "
        "The run's metrics: acc, f1, lat"
    )
    with pytest.raises(ConfigError) as raised:
        check_metric_names([parse_threshold("acc=0.5")], [])
    assert str(raised.value) == "--fail-under acc=0.5: the run has no metric 'acc'. The run's metrics: none"
    with pytest.raises(ConfigError, match=r"no metric 'f2\.recall'"):
        check_metric_names([parse_threshold("f1=0.5"), parse_threshold("f2.recall=0.5")], ["f1"])
    # after the run too: a sub-score of a metric the run does not have is an unknown metric
    with pytest.raises(
        ConfigError, match=r"the run has no metric 'f2\.recall'\. The run's metrics: acc, f1, lat"
    ):
        check_threshold(result, parse_threshold("f2.recall=0.5"))


# --- the regression gate and the order of gates ---------------------------------------------

BASE = {f"c{i}": {"acc": Score(value=1.0), "acc2": Score(value=1.0)} for i in range(12)}
WORSE = {
    f"c{i}": {"acc": Score(value=0.0 if i < 10 else 1.0), "acc2": Score(value=0.0 if i < 10 else 1.0)}
    for i in range(12)
}


def test_regression_gate_messages() -> None:
    """Both metrics drop on 10 of 12 cases: Δ = 2/12 − 1 = −0.833; McNemar's exact p =
    2 · (1/2)^10 = 0.00195, Holm over two equal p values: 2 · 0.00195 = 0.0039 for both."""
    regressed = check_no_regression(compare_runs(_result(BASE), _result(WORSE)))
    assert (regressed.passed, regressed.observed, regressed.threshold) == (False, 2.0, 0.0)
    assert regressed.message == (
        "regressed vs r1: acc (Δ -0.833, p Holm 0.0039), acc2 (Δ -0.833, p Holm 0.0039)"
    )
    same = check_no_regression(compare_runs(_result(BASE), _result(BASE)))
    assert (same.name, same.passed, same.observed, same.threshold) == ("no-regression-vs r1", True, 0.0, 0.0)
    assert same.message == (
        "no metric regressed vs r1 (2 compared on 12 paired case(s), Holm-adjusted alpha 0.05)"
    )


def test_evaluate_gates_runs_thresholds_in_order_then_the_regression_gate() -> None:
    result = _result(WORSE)
    thresholds = [parse_threshold("acc=0.1"), parse_threshold("acc2=0.5")]  # mean 2/12 = 0.167
    assert [(g.name, g.passed) for g in evaluate_gates(result, thresholds)] == [
        ("fail-under acc=0.1", True),
        ("fail-under acc2=0.5", False),
    ]
    outcomes = evaluate_gates(result, thresholds, compare_runs(_result(BASE), result))
    assert [(g.name, g.passed) for g in outcomes] == [
        ("fail-under acc=0.1", True),
        ("fail-under acc2=0.5", False),
        ("no-regression-vs r1", False),
    ]
    assert evaluate_gates(result) == []
