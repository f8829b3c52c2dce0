"""Trajectory metrics: values, explanations and details pinned with hand-worked expectations.

Each expected value below is worked out from the definitions in the module docstring of
``clineval.metrics.trajectory`` (multiset matching, greedy in-order subsequence, empty
trajectories), not read back from the code.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from clineval.errors import ConfigError
from clineval.metrics.base import Metric, ScoreContext
from clineval.metrics.registry import MetricSpec, build_metric
from clineval.metrics.trajectory import (
    CallMatcher,
    TrajectoryAnyOrderMatch,
    TrajectoryExactMatch,
    TrajectoryInOrderMatch,
    TrajectoryPrecision,
    TrajectoryRecall,
    TrajectorySingleToolUse,
    canonical,
)
from clineval.model import Case, Score, ToolCall


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


LABS = call("get_patient_labs", patient_id="P-17", test="HbA1c")
LIPIDS = call("get_patient_labs", patient_id="P-17", test="LDL")
CT_HEAD = call("order_imaging", modality="CT", body_part="head")
LABS_TEXT = "get_patient_labs(patient_id='P-17', test='HbA1c')"
LIPIDS_TEXT = "get_patient_labs(patient_id='P-17', test='LDL')"
CT_TEXT = "order_imaging(modality='CT', body_part='head')"


def run(metric: Metric, predicted: list[ToolCall], reference: list[ToolCall] | None = None) -> Score:
    case = Case(id="case-1", trajectory=predicted, reference_trajectory=reference)
    result = metric.score(case, ScoreContext())
    assert isinstance(result, Score)
    return result


def indices(score: Score) -> list[tuple[int, int]]:
    """The matched (predicted index, reference index) pairs, in the order details list them."""
    return [(m["predicted_index"], m["reference_index"]) for m in score.details["matched"]]


# --- duplicated calls: one predicted call satisfies one reference call ------------------


def test_duplicates_in_both_trajectories_all_five_metrics() -> None:
    # predicted A A B, reference A B A (A = LABS, B = CT_HEAD).
    # any order: ref0 A -> pred0, ref1 B -> pred2, ref2 A -> pred1 (the next free A): all matched.
    # in order: ref0 A -> pred0, ref1 B -> pred2 (pred1 is an A), ref2 A -> nothing after 2.
    predicted, reference = [LABS, LABS, CT_HEAD], [LABS, CT_HEAD, LABS]

    exact = run(TrajectoryExactMatch(), predicted, reference)
    assert (exact.value, exact.label) == (0.0, "no_match")
    assert exact.explanation == "the same calls, in a different order"
    assert indices(exact) == [(0, 0), (2, 1), (1, 2)]  # listed by reference index

    in_order = run(TrajectoryInOrderMatch(), predicted, reference)
    assert (in_order.value, in_order.label) == (0.0, "no_match")
    assert in_order.explanation == (
        f"2 of 3 reference calls found in reference order; missing or out of order: {LABS_TEXT}"
    )
    assert indices(in_order) == [(0, 0), (2, 1)]
    assert [m["reference_index"] for m in in_order.details["missing"]] == [2]
    assert [e["predicted_index"] for e in in_order.details["extra"]] == [1]

    any_order = run(TrajectoryAnyOrderMatch(), predicted, reference)
    assert (any_order.value, any_order.label) == (1.0, "match")
    assert any_order.explanation == "3 of 3 reference calls found"
    assert any_order.details["missing"] == [] and any_order.details["extra"] == []

    precision = run(TrajectoryPrecision(), predicted, reference)
    assert (precision.value, precision.label) == (1.0, None)
    assert precision.explanation == "3 of 3 predicted calls appear in the reference"

    recall = run(TrajectoryRecall(), predicted, reference)
    assert (recall.value, recall.label) == (1.0, None)
    assert recall.explanation == "3 of 3 reference calls found"


def test_a_repeated_reference_call_needs_two_later_predicted_calls_in_order() -> None:
    # reference A A; predicted A A: ref0 -> pred0, ref1 -> pred1 (never pred0 again)
    score = run(TrajectoryInOrderMatch(), [LABS, LABS], [LABS, LABS])
    assert score.value == 1.0
    assert indices(score) == [(0, 0), (1, 1)]
    assert score.explanation == "2 of 2 reference calls found in reference order"
    # predicted B A B A: ref0 A -> pred1, ref1 A -> pred3
    score = run(TrajectoryInOrderMatch(), [CT_HEAD, LABS, CT_HEAD, LABS], [LABS, LABS])
    assert indices(score) == [(1, 0), (3, 1)]
    assert [e["predicted_index"] for e in score.details["extra"]] == [0, 2]


def test_any_order_pairs_are_listed_by_reference_index() -> None:
    # reference A B, predicted B A: ref0 A -> pred1, ref1 B -> pred0
    score = run(TrajectoryRecall(), [CT_HEAD, LABS], [LABS, CT_HEAD])
    assert indices(score) == [(1, 0), (0, 1)]
    assert [m["name"] for m in score.details["matched"]] == ["get_patient_labs", "order_imaging"]


def test_duplicated_predicted_calls_lower_precision_only() -> None:
    # predicted A A A B, reference A B: 2 of 4 predicted calls match; both reference calls found
    predicted = [LABS, LABS, LABS, CT_HEAD]
    precision = run(TrajectoryPrecision(), predicted, [LABS, CT_HEAD])
    assert precision.value == pytest.approx(2 / 4)
    assert precision.explanation == (
        f"2 of 4 predicted calls appear in the reference; extra: {LABS_TEXT}, {LABS_TEXT}"
    )
    assert run(TrajectoryRecall(), predicted, [LABS, CT_HEAD]).value == 1.0


def test_matched_details_carry_both_sides_arguments() -> None:
    # with args=[test] a different patient still matches: details show both argument sets
    other_patient = call("get_patient_labs", patient_id="P-99", test="HbA1c")
    score = run(TrajectoryRecall(args=["test"]), [other_patient], [LABS])
    assert score.details == {
        "match": "name_and_args",
        "args": ["test"],
        "matched": [
            {
                "predicted_index": 0,
                "reference_index": 0,
                "name": "get_patient_labs",
                "arguments": {"patient_id": "P-17", "test": "HbA1c"},
                "predicted_arguments": {"patient_id": "P-99", "test": "HbA1c"},
            }
        ],
        "missing": [],
        "extra": [],
    }
    assert run(TrajectoryRecall(), [LABS], [LABS]).details["args"] is None


# --- empty trajectories: values, labels and explanations ----------------------------------


@pytest.mark.parametrize(
    ("metric", "predicted", "reference", "value", "label", "explanation"),
    [
        (TrajectoryExactMatch(), [], [], 1.0, "match", "both trajectories are empty"),
        (
            TrajectoryExactMatch(),
            [],
            [LABS, CT_HEAD],
            0.0,
            "no_match",
            "the predicted trajectory is empty; the reference has 2 calls",
        ),
        (
            TrajectoryExactMatch(),
            [LABS],
            [],
            0.0,
            "no_match",
            "the reference trajectory is empty; the prediction has 1 call",
        ),
        (
            TrajectoryInOrderMatch(),
            [LABS],
            [],
            1.0,
            "match",
            "the reference trajectory is empty: no reference call can be missed",
        ),
        (
            TrajectoryAnyOrderMatch(),
            [],
            [LABS],
            0.0,
            "no_match",
            f"0 of 1 reference calls found; missing: {LABS_TEXT}",
        ),
        (TrajectoryPrecision(), [], [], 1.0, None, "both trajectories are empty"),
        (
            TrajectoryPrecision(),
            [],
            [LABS, LABS],
            0.0,
            None,
            "the predicted trajectory is empty; the reference has 2 calls",
        ),
        (
            TrajectoryPrecision(),
            [LABS, CT_HEAD],
            [],
            0.0,
            None,
            f"0 of 2 predicted calls appear in the reference; extra: {LABS_TEXT}, {CT_TEXT}",
        ),
        (TrajectoryRecall(), [], [], 1.0, None, "both trajectories are empty: nothing to recall"),
        (
            TrajectoryRecall(),
            [LABS, CT_HEAD],
            [],
            1.0,
            None,
            "the reference trajectory is empty; the prediction has 2 calls: nothing to recall",
        ),
        (
            TrajectoryRecall(),
            [],
            [LABS],
            0.0,
            None,
            f"0 of 1 reference calls found; missing: {LABS_TEXT}",
        ),
    ],
    ids=[
        "exact-both",
        "exact-no-prediction",
        "exact-no-reference",
        "in-order-no-reference",
        "any-order-no-prediction",
        "precision-both",
        "precision-no-prediction",
        "precision-no-reference",
        "recall-both",
        "recall-no-reference",
        "recall-no-prediction",
    ],
)
def test_empty_trajectories_value_label_and_explanation(
    metric: Metric,
    predicted: list[ToolCall],
    reference: list[ToolCall],
    value: float,
    label: str | None,
    explanation: str,
) -> None:
    score = run(metric, predicted, reference)
    assert (score.value, score.label, score.explanation) == (value, label, explanation)


# --- explanations a user reads -------------------------------------------------------------


def test_exact_match_explanations() -> None:
    one = run(TrajectoryExactMatch(), [LABS], [LABS])
    assert (one.value, one.label, one.explanation) == (1.0, "match", "identical: 1 call in order")
    two = run(TrajectoryExactMatch(), [LABS, CT_HEAD], [LABS, CT_HEAD])
    assert two.explanation == "identical: 2 calls in order"
    # a wrong argument: the reference call is missing and the predicted one extra
    wrong = run(TrajectoryExactMatch(), [LIPIDS, CT_HEAD], [LABS, CT_HEAD])
    assert wrong.explanation == f"not identical; missing: {LABS_TEXT}; extra: {LIPIDS_TEXT}"
    only_extra = run(TrajectoryExactMatch(), [LABS, CT_HEAD], [LABS])
    assert only_extra.explanation == f"not identical; extra: {CT_TEXT}"
    only_missing = run(TrajectoryExactMatch(), [LABS], [LABS, CT_HEAD])
    assert only_missing.explanation == f"not identical; missing: {CT_TEXT}"


def test_coverage_explanations_when_everything_is_found() -> None:
    # extras do not count against in-order or any-order, and the explanation names none
    in_order = run(TrajectoryInOrderMatch(), [LABS, LIPIDS, CT_HEAD], [LABS, CT_HEAD])
    assert (in_order.value, in_order.label) == (1.0, "match")
    assert in_order.explanation == "2 of 2 reference calls found in reference order"
    any_order = run(TrajectoryAnyOrderMatch(), [CT_HEAD, LIPIDS, LABS], [LABS, CT_HEAD])
    assert (any_order.value, any_order.explanation) == (1.0, "2 of 2 reference calls found")


def test_lists_of_calls_show_three_and_count_the_rest() -> None:
    # by name: five predicted tools, one in the reference, four extra: three shown, "1 more"
    names = ["t1", "t2", "t3", "t4", "t5"]
    five = [call(n) for n in names]
    score = run(TrajectoryPrecision(match="name"), five, [call("t1")])
    assert score.value == pytest.approx(1 / 5)
    assert score.explanation == "1 of 5 predicted calls appear in the reference; extra: t2, t3, t4 and 1 more"
    # exactly three extras: all shown, no "more"
    score = run(TrajectoryPrecision(match="name"), five[:4], [call("t1")])
    assert score.explanation == "1 of 4 predicted calls appear in the reference; extra: t2, t3, t4"
    # missing calls are shown the same way: recall 1 of 6, five missing, three shown, "2 more"
    score = run(TrajectoryRecall(match="name"), [call("t1")], [*five, call("t6")])
    assert score.value == pytest.approx(1 / 6)
    assert score.explanation == "1 of 6 reference calls found; missing: t2, t3, t4 and 2 more"


@pytest.mark.parametrize(
    ("value_chars", "shown"),
    [
        # n(a='x…x') is 7 characters around the value: 73 x's make exactly 80, shown whole
        (73, "n(a='" + "x" * 73 + "')"),
        # 74 x's make 81: cut to the first 79 characters and an ellipsis (80 in all)
        (74, "n(a='" + "x" * 74 + "…"),
    ],
    ids=["80-chars-whole", "81-chars-cut"],
)
def test_a_long_call_is_cut_at_80_characters(value_chars: int, shown: str) -> None:
    long_call = call("n", a="x" * value_chars)
    assert CallMatcher().render(long_call) == shown
    assert len(shown) == 80
    score = run(TrajectoryPrecision(), [long_call], [])
    assert score.explanation == f"0 of 1 predicted calls appear in the reference; extra: {shown}"


def test_by_name_a_call_renders_as_its_name() -> None:
    assert CallMatcher("name").render(LABS) == "get_patient_labs"
    assert CallMatcher().render(call("get_vitals")) == "get_vitals()"


# --- when two calls are the same -------------------------------------------------------------


def test_args_null_is_not_absent() -> None:
    # args=[units]: a units key set to null differs from no units key at all
    with_null = call("get_patient_labs", test="HbA1c", units=None)
    without = call("get_patient_labs", test="HbA1c")
    assert run(TrajectoryExactMatch(args=["units"]), [with_null], [without]).value == 0.0
    assert run(TrajectoryExactMatch(args=["units"]), [without], [without]).value == 1.0


def test_canonical_values() -> None:
    assert canonical(23.0) == ("number", 23)
    assert canonical(23.5) == ("number", 23.5)
    assert canonical(False) == ("bool", False)
    assert canonical(None) == ("null",)
    assert canonical([1, "a"]) == ("list", (("number", 1), ("string", "a")))
    assert canonical({"b": 2, "a": True}) == ("dict", (("a", ("bool", True)), ("b", ("number", 2))))
    # a list of pairs is not the dict with those keys
    assert canonical([["a", 1]]) != canonical({"a": 1})


# --- settings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "recorded"),
    [
        ({}, {}),
        ({"match": "name_and_args"}, {}),
        ({"match": "name"}, {"match": "name"}),
        ({"args": ["test", "patient_id"]}, {"args": ["test", "patient_id"]}),
        ({"args": "test"}, {"args": ["test"]}),
    ],
)
def test_settings_record_only_what_differs_from_the_defaults(
    settings: dict[str, Any], recorded: dict[str, Any]
) -> None:
    assert TrajectoryRecall(**settings).settings() == recorded


@pytest.mark.parametrize(
    ("match", "args", "message"),
    [
        ("fuzzy", None, "unknown match 'fuzzy'; choose one of name_and_args, name"),
        ("name_and_args", [], "args must list argument names, got []"),
        ("name_and_args", "", "args must list argument names, got ''"),
        ("name_and_args", ["test", ""], "args must list argument names, got ['test', '']"),
        ("name_and_args", ["test", 3], "args must list argument names, got ['test', 3]"),
        ("name", ["test"], "args only applies with match='name_and_args'"),
    ],
    ids=["unknown-match", "empty-list", "empty-string", "blank-name", "non-string", "args-with-name"],
)
def test_bad_matcher_settings_say_what_was_expected(match: str, args: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        CallMatcher.from_settings(match, args)
    assert str(raised.value) == message


def from_run_file(text: str) -> Metric:
    """A metric entry as a run file gives it (YAML), built as a run builds it."""
    return build_metric(MetricSpec.model_validate(yaml.safe_load(text)))


def test_settings_read_from_a_run_file_work_as_in_python() -> None:
    # strings read from YAML are fresh objects: they must compare by value
    by_name = from_run_file("{name: trajectory_recall, args: {match: name}}")
    assert by_name.settings() == {"match": "name"}  # type: ignore[attr-defined]
    assert run(by_name, [LIPIDS], [LABS]).value == 1.0  # same tool name, other test
    assert (
        run(by_name, [CT_HEAD], [LABS]).explanation
        == "0 of 1 reference calls found; missing: get_patient_labs"
    )
    default = from_run_file("{name: trajectory_recall, args: {match: name_and_args}}")
    assert default.settings() == {}  # type: ignore[attr-defined]
    assert run(default, [LIPIDS], [LABS]).value == 0.0
    with pytest.raises(ConfigError, match=r"args only applies with match='name_and_args'"):
        from_run_file("{name: trajectory_recall, args: {match: name, args: [test]}}")


def test_matcher_and_alignment_are_frozen_values() -> None:
    # a metric's matcher is shared by every case it scores: nothing may change it
    matcher = CallMatcher("name")
    with pytest.raises(dataclasses.FrozenInstanceError):
        matcher.mode = "name_and_args"  # type: ignore[misc]
    alignment = matcher.any_order([LABS], [LABS])
    with pytest.raises(dataclasses.FrozenInstanceError):
        alignment.pairs = ()  # type: ignore[misc]


def test_good_matcher_settings() -> None:
    assert CallMatcher.from_settings("name", None) == CallMatcher("name", None)
    assert CallMatcher.from_settings("name_and_args", "test") == CallMatcher("name_and_args", ("test",))


# --- single tool use --------------------------------------------------------------------------


def test_single_tool_use_once_and_called_tools_once_each() -> None:
    score = run(TrajectorySingleToolUse(tool_name="order_imaging"), [LABS, CT_HEAD, LABS, LIPIDS])
    assert (score.value, score.label) == (1.0, "used")
    assert score.explanation == "order_imaging was called (1 time)"
    assert score.details == {
        "tool_name": "order_imaging",
        "positions": [1],
        "called_tools": ["get_patient_labs", "order_imaging"],  # first-call order, no repeats
    }
    assert TrajectorySingleToolUse(tool_name="order_imaging").settings() == {"tool_name": "order_imaging"}


def test_single_tool_use_on_an_empty_trajectory_details() -> None:
    score = run(TrajectorySingleToolUse(tool_name="order_imaging"), [])
    assert (score.value, score.label) == (0.0, "not_used")
    assert score.details == {"tool_name": "order_imaging", "positions": [], "called_tools": []}


def test_single_tool_use_needs_the_exact_tool_name() -> None:
    # order_imaging_ct starts with order_imaging and sorts after it: it is another tool
    score = run(
        TrajectorySingleToolUse(tool_name="order_imaging"), [call("order_imaging_ct"), call("triage")]
    )
    assert (score.value, score.label) == (0.0, "not_used")
    assert score.explanation == "order_imaging was not called; called: order_imaging_ct, triage"


@pytest.mark.parametrize(
    ("cls", "setting"),
    [
        (TrajectoryExactMatch, "name"),
        (TrajectoryInOrderMatch, "name"),
        (TrajectoryAnyOrderMatch, "name"),
        (TrajectoryPrecision, "name"),
        (TrajectoryRecall, "name"),
        (TrajectorySingleToolUse, "order_imaging"),
    ],
)
def test_settings_are_keyword_only(cls: type[Metric], setting: str) -> None:
    # match=/tool_name= must be named: a bare string is not silently taken for one of them
    with pytest.raises(TypeError):
        cls(setting)  # type: ignore[call-arg]


@pytest.mark.parametrize("tool_name", ["", "   "])
def test_single_tool_use_needs_a_tool_name(tool_name: str) -> None:
    with pytest.raises(ValueError) as raised:
        TrajectorySingleToolUse(tool_name=tool_name)
    assert str(raised.value) == f"tool_name must be a non-empty tool name, got {tool_name!r}"
