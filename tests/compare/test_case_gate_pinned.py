"""The per-case regression gate, pinned case by case: the option's text, the edges of each
rule of "right", what a regressed case shows for run B, and the gate's message.

Every expected value below is worked out by hand from the rules in
:mod:`clineval.compare.case_gate`'s docstring.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from tests.compare.test_case_gate import _result

from clineval import load_run
from clineval.compare.case_gate import CaseGate, CaseGateResult, check_case_regressions, parse_case_gate
from clineval.errors import ConfigError
from clineval.model import Score
from clineval.results.result import EvalResult
from clineval.store.sqlite import RunStore

# --- the option ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "gate", "name"),
    [
        ("", CaseGate(), "fail-on-case-regression"),
        ("   ", CaseGate(), "fail-on-case-regression"),
        ("*", CaseGate(), "fail-on-case-regression"),
        (" decision ", CaseGate(metric="decision"), "fail-on-case-regression decision"),
        ("fuzzy = 90", CaseGate(metric="fuzzy", threshold=90.0), "fail-on-case-regression fuzzy=90"),
        ("lat=0.25", CaseGate(metric="lat", threshold=0.25), "fail-on-case-regression lat=0.25"),
    ],
)
def test_parse_case_gate_and_its_name(text: str, gate: CaseGate, name: str) -> None:
    parsed = parse_case_gate(text)
    assert parsed == gate and parsed.name == name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "=0.5",
            "--fail-on-case-regression '=0.5': expected METRIC or METRIC=VALUE, "
            "e.g. --fail-on-case-regression decision",
        ),
        ("m=high", "--fail-on-case-regression 'm=high': 'high' is not a number (expected METRIC=VALUE)"),
        ("m=inf", "--fail-on-case-regression 'm=inf': the value must be a finite number"),
        ("m=nan", "--fail-on-case-regression 'm=nan': the value must be a finite number"),
    ],
)
def test_parse_case_gate_refuses_with_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_case_gate(text)
    assert str(raised.value) == message


def test_a_case_gate_is_a_value() -> None:
    """Frozen: equal gates hash alike, and a gate cannot be changed after it was parsed."""
    gate = parse_case_gate("fuzzy=90")
    assert len({gate, parse_case_gate(" fuzzy = 90 ")}) == 1
    with pytest.raises(ValidationError, match="frozen"):
        gate.threshold = 10.0  # type: ignore[misc]


# --- what "right" means, at its edges --------------------------------------------------------


def _pairs(outcome: CaseGateResult) -> list[tuple[str, str, str, str]]:
    return [(c.case_id, c.rule, c.before, c.after) for c in outcome.cases]


def test_a_value_equal_to_the_threshold_is_right() -> None:
    """``fuzzy`` ≥ 90 and ``lat`` ≤ 2 (lower is better) are right: e is exactly on the
    threshold in A (right) and just past it in B (wrong); f lands exactly on it in B (still right)."""
    a = _result(
        "a",
        {
            "e": {"fuzzy": Score(value=90.0), "lat": Score(value=2.0)},
            "f": {"fuzzy": Score(value=95.0), "lat": Score(value=1.0)},
        },
        lower=["lat"],
    )
    b = _result(
        "b",
        {
            "e": {"fuzzy": Score(value=89.9), "lat": Score(value=2.1)},
            "f": {"fuzzy": Score(value=90.0), "lat": Score(value=2.0)},
        },
        lower=["lat"],
    )
    assert _pairs(check_case_regressions(a, b, parse_case_gate("fuzzy=90"))) == [
        ("e", "threshold", "90", "89.9")
    ]
    assert _pairs(check_case_regressions(a, b, parse_case_gate("lat=2"))) == [("e", "threshold", "2", "2.1")]


def test_a_threshold_decides_over_a_label_and_needs_a_value() -> None:
    """With ``sim=3`` the values decide (4 → 4 stays right though the label went pass → fail);
    a score with a label but no value is not judged by a threshold."""
    a = _result(
        "a",
        {
            "p": {"sim": Score(value=4.0, label="pass")},
            "r": {"sim": Score(label="pass", sub_scores={"k": 1.0})},  # scored, no value
        },
    )
    b = _result(
        "b",
        {
            "p": {"sim": Score(value=4.0, label="fail")},
            "r": {"sim": Score(label="fail", sub_scores={"k": 0.0})},
        },
    )
    outcome = check_case_regressions(a, b, parse_case_gate("sim=3"))
    assert outcome.passed and outcome.cases == [] and outcome.not_gated == []
    assert outcome.message == "no case right in a is wrong now (1 metric(s) gated case by case)"
    # without the threshold the labels decide: both went pass → fail
    assert _pairs(check_case_regressions(a, b, CaseGate(metric="sim"))) == [
        ("p", "label", "pass", "fail"),
        ("r", "label", "pass", "fail"),
    ]


def test_a_case_judged_by_threshold_or_value_shows_values_not_labels() -> None:
    """p (4 → 2 under ``sim=3``) carries pass labels, and ``decision`` is 0/1 with labels that
    are not verdicts (approved / denied): both are judged and shown by their values."""
    a = _result(
        "a",
        {"p": {"sim": Score(value=4.0, label="pass"), "decision": Score(value=1.0, label="approved")}},
    )
    b = _result(
        "b",
        {"p": {"sim": Score(value=2.0, label="pass"), "decision": Score(value=0.0, label="denied")}},
    )
    assert _pairs(check_case_regressions(a, b, parse_case_gate("sim=3"))) == [("p", "threshold", "4", "2")]
    assert _pairs(check_case_regressions(a, b, CaseGate(metric="decision"))) == [("p", "binary", "1", "0")]


def test_an_unscored_score_in_a_is_never_right_whatever_its_label() -> None:
    """A label with no value is a not-applicable score, and an error may carry a label: in
    A neither was right, so neither can regress (and neither is a score to gate)."""
    a = _result(
        "a",
        {
            "x": {"sim": Score(label="pass")},
            "y": {"sim": Score(error="judge down", label="pass")},
        },
    )
    b = _result("b", {"x": {"sim": Score(label="fail")}, "y": {"sim": Score(value=1.0, label="fail")}})
    outcome = check_case_regressions(a, b, CaseGate())
    assert outcome.passed and outcome.cases == []


def test_labels_are_read_without_regard_to_case() -> None:
    """``PASS`` and ``Passed`` are pass, ``FAILED`` is fail; the label is shown as written."""
    a = _result(
        "a", {"p": {"sim": Score(value=4.0, label="PASS")}, "q": {"sim": Score(value=3.0, label="Passed")}}
    )
    b = _result(
        "b", {"p": {"sim": Score(value=4.0, label="FAILED")}, "q": {"sim": Score(value=3.0, label="passed")}}
    )
    assert _pairs(check_case_regressions(a, b, CaseGate())) == [("p", "label", "PASS", "FAILED")]


def test_a_label_that_is_neither_pass_nor_fail_leaves_a_continuous_metric_ungated() -> None:
    a = _result("a", {"p": {"sim": Score(value=4.0, label="borderline")}})
    b = _result("b", {"p": {"sim": Score(value=1.0, label="borderline")}})
    outcome = check_case_regressions(a, b, CaseGate())
    assert outcome.passed and outcome.not_gated == ["sim"]
    with pytest.raises(ConfigError, match="'sim' has no pass/fail label"):
        check_case_regressions(a, b, CaseGate(metric="sim"))


def test_binary_lower_is_better_is_right_at_zero() -> None:
    """``failure`` (lower is better): 0 is right. c1 went 0 → 1 (regressed), c2 1 → 0 (improved)."""
    a = _result(
        "a", {"c1": {"failure": Score(value=0.0)}, "c2": {"failure": Score(value=1.0)}}, lower=["failure"]
    )
    b = _result(
        "b", {"c1": {"failure": Score(value=1.0)}, "c2": {"failure": Score(value=0.0)}}, lower=["failure"]
    )
    assert _pairs(check_case_regressions(a, b, CaseGate())) == [("c1", "binary", "0", "1")]


def test_binary_means_zero_or_one_in_both_runs() -> None:
    """0/1 in A but 0.5 in B: not a binary metric, so x (1 → 0.5) is not judged without a threshold."""
    a = _result("a", {"x": {"m": Score(value=1.0)}, "y": {"m": Score(value=0.0)}})
    b = _result("b", {"x": {"m": Score(value=0.5)}, "y": {"m": Score(value=1.0)}})
    outcome = check_case_regressions(a, b, CaseGate())
    assert outcome.passed and outcome.cases == [] and outcome.not_gated == ["m"]


# --- what run B shows for a regressed case -------------------------------------------------


def _kept(result: EvalResult, store: Path | None) -> EvalResult:
    """``result`` as is, or saved to the store at ``store`` and read back lazily (the gate
    then reads its scores with SQL, as ``clineval compare`` does)."""
    if store is None:
        return result
    with RunStore(store) as kept:
        kept.create_run(result.run, result.cases)
        for record in result.results:
            kept.save_result(record)
    return load_run(result.run.id, store=store, lazy=True)


@pytest.mark.parametrize("stored", [False, True], ids=["in memory", "from the store"])
def test_every_way_a_right_case_can_stop_being_right(stored: bool, tmp_path: Path) -> None:
    """Binary ``m``, right (1) in A on c1-c6. Before them come cases the gate must pass over
    and keep going: no result in A (s0), an error in A (s1), wrong in A (s2), right in both
    (s3). In B: c1 an error of two lines (its first shown), c2 an error of 130 characters
    (120 shown), c3 not applicable, c4 no result, c5 an error without a message, c6 scored
    with sub-scores only (no value: "–"). k (only in A) and n (only in B) are not paired."""
    a = _result(
        "a",
        {
            "s0": {},
            "s1": {"m": Score.failed("judge down")},
            "s2": {"m": Score(value=0.0)},
            "s3": {"m": Score(value=1.0)},
            **{f"c{i}": {"m": Score(value=1.0)} for i in range(1, 7)},
            "k": {"m": Score(value=1.0)},
        },
    )
    b = _result(
        "b",
        {
            "s0": {"m": Score(value=0.0)},
            "s1": {"m": Score(value=0.0)},
            "s2": {"m": Score.failed("still wrong")},
            "s3": {"m": Score(value=1.0)},
            "c1": {"m": Score.failed("judge timed out\nafter 30 s")},
            "c2": {"m": Score.failed("x" * 130)},
            "c3": {"m": Score.not_applicable("no question")},
            "c4": {},
            "c5": {"m": Score.failed("")},
            "c6": {"m": Score(sub_scores={"part": 0.5})},
            "n": {"m": Score(value=0.0)},
        },
    )
    store = tmp_path / "runs.db" if stored else None
    outcome = check_case_regressions(_kept(a, store), _kept(b, store), CaseGate())
    assert _pairs(outcome) == [
        ("c1", "binary", "1", "error: judge timed out"),
        ("c2", "binary", "1", "error: " + "x" * 120),
        ("c3", "binary", "1", "not applicable"),
        ("c4", "binary", "1", "no result"),
        ("c5", "binary", "1", "error: unscored"),
        ("c6", "binary", "1", "–"),
    ]
    assert (outcome.passed, outcome.observed, outcome.threshold) == (False, 6.0, 0.0)


def test_each_run_is_read_by_the_rule_its_own_score_allows() -> None:
    """A 0/1 metric whose scores gained a pass/fail label in B: x was right in A by its value
    (1) and is wrong in B by its label, which is what the gate shows for B."""
    a = _result("a", {"x": {"m": Score(value=1.0)}, "y": {"m": Score(value=1.0)}})
    b = _result("b", {"x": {"m": Score(value=0.0, label="fail")}, "y": {"m": Score(value=1.0, label="pass")}})
    assert _pairs(check_case_regressions(a, b, CaseGate())) == [("x", "binary", "1", "fail")]


def test_a_named_metric_gates_that_metric_alone() -> None:
    a = _result("a", {"x": {"m": Score(value=1.0), "k": Score(value=1.0)}})
    b = _result("b", {"x": {"m": Score(value=0.0), "k": Score(value=0.0)}})
    assert [(c.case_id, c.metric) for c in check_case_regressions(a, b, CaseGate()).cases] == [
        ("x", "m"),
        ("x", "k"),
    ]
    assert [(c.case_id, c.metric) for c in check_case_regressions(a, b, CaseGate(metric="k")).cases] == [
        ("x", "k")
    ]


def test_a_metric_not_in_both_runs_is_refused() -> None:
    a = _result("a", {"x": {"m": Score(value=1.0), "only_a": Score(value=1.0)}})
    b = _result("b", {"x": {"m": Score(value=1.0)}})
    with pytest.raises(ConfigError) as raised:
        check_case_regressions(a, b, CaseGate(metric="only_a"))
    assert str(raised.value) == (
        "--fail-on-case-regression only_a: the runs do not both have the metric 'only_a'. Metrics of both: m"
    )
    c = _result("c", {"x": {"other": Score(value=1.0)}})
    with pytest.raises(ConfigError, match=r"Metrics of both: none$"):
        check_case_regressions(a, c, CaseGate(metric="m"))


def test_a_metric_with_nothing_scored_is_neither_gated_nor_listed() -> None:
    """Errors on every case: nothing to judge and nothing to ask a threshold for."""
    a = _result("a", {"x": {"e": Score.failed("down")}})
    b = _result("b", {"x": {"e": Score.failed("down")}})
    outcome = check_case_regressions(a, b, CaseGate(metric="e"))
    assert outcome.passed and outcome.not_gated == []
    assert outcome.message == "no case right in a is wrong now (0 metric(s) gated case by case)"


# --- the message -----------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "more"), [(3, ""), (20, ""), (21, " and 1 more"), (23, " and 3 more")])
def test_the_message_lists_twenty_cases_then_counts_the_rest(n: int, more: str) -> None:
    ids = [f"c{i:02d}" for i in range(n)]
    a = _result("a", {c: {"m": Score(value=1.0), "f": Score(value=0.5)} for c in ids})
    b = _result("b", {c: {"m": Score(value=0.0), "f": Score(value=0.5)} for c in ids})
    outcome = check_case_regressions(a, b, CaseGate())
    listed = ", ".join(f"c{i:02d} · m (1 → 0)" for i in range(min(n, 20)))
    assert outcome.message == (
        f"{n} case(s) right in a are wrong now: {listed}{more}; "
        "not gated (continuous, no pass/fail label; give METRIC=VALUE): f"
    )
    assert len(outcome.cases) == n and outcome.observed == float(n)
