"""Trajectory metrics: exact, in-order, any-order, precision, recall, single tool use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clineval.errors import ConfigError
from clineval.metrics.base import Metric, ScoreContext, score_case
from clineval.metrics.registry import build_metric, get_entry
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

FIVE = (
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
)


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


LABS = call("get_patient_labs", patient_id="P-17", test="HbA1c")
LIPIDS = call("get_patient_labs", patient_id="P-17", test="LDL")
CT_HEAD = call("order_imaging", modality="CT", body_part="head")
INTERACTIONS = call("check_drug_interactions", drugs=["warfarin", "amiodarone"])


def run(metric: Metric, predicted: list[ToolCall] | None, reference: list[ToolCall] | None = None) -> Score:
    case = Case(id="case-1", trajectory=predicted, reference_trajectory=reference)
    result = metric.score(case, ScoreContext())
    assert isinstance(result, Score)
    return result


def values(predicted: list[ToolCall], reference: list[ToolCall], **settings: Any) -> dict[str, float | None]:
    """The five reference-based metrics on one pair, by registry name."""
    classes = {
        "trajectory_exact_match": TrajectoryExactMatch,
        "trajectory_in_order_match": TrajectoryInOrderMatch,
        "trajectory_any_order_match": TrajectoryAnyOrderMatch,
        "trajectory_precision": TrajectoryPrecision,
        "trajectory_recall": TrajectoryRecall,
    }
    return {name: run(cls(**settings), predicted, reference).value for name, cls in classes.items()}


def expect(
    exact: float, in_order: float, any_order: float, precision: float, recall: float
) -> dict[str, float | None]:
    return dict(zip(FIVE, (exact, in_order, any_order, precision, recall), strict=True))


# --- the five definitions on small clinical trajectories -------------------------------


def test_identical_trajectory_scores_one_everywhere() -> None:
    assert values([LABS, CT_HEAD], [LABS, CT_HEAD]) == expect(1, 1, 1, 1, 1)


def test_an_extra_call() -> None:
    # predicted LABS, INTERACTIONS, CT_HEAD vs reference LABS, CT_HEAD:
    # both reference calls appear, in order; 2 of 3 predicted calls are in the reference.
    assert values([LABS, INTERACTIONS, CT_HEAD], [LABS, CT_HEAD]) == expect(0, 1, 1, 2 / 3, 1)


def test_a_reordered_trajectory() -> None:
    # Same calls, swapped: only in-order and exact notice.
    assert values([CT_HEAD, LABS], [LABS, CT_HEAD]) == expect(0, 0, 1, 1, 1)
    score = run(TrajectoryExactMatch(), [CT_HEAD, LABS], [LABS, CT_HEAD])
    assert score.explanation == "the same calls, in a different order"


def test_a_missing_call() -> None:
    # predicted LABS vs reference LABS, CT_HEAD: recall 1/2, precision 1/1.
    assert values([LABS], [LABS, CT_HEAD]) == expect(0, 0, 0, 1, 0.5)
    score = run(TrajectoryRecall(), [LABS], [LABS, CT_HEAD])
    assert score.explanation == (
        "1 of 2 reference calls found; missing: order_imaging(modality='CT', body_part='head')"
    )


def test_a_wrong_argument_is_both_missing_and_extra() -> None:
    # LIPIDS differs from LABS only in test=LDL: it matches nothing.
    # precision 1/2 (CT_HEAD), recall 1/2 (CT_HEAD)
    assert values([LIPIDS, CT_HEAD], [LABS, CT_HEAD]) == expect(0, 0, 0, 0.5, 0.5)
    details = run(TrajectoryPrecision(), [LIPIDS, CT_HEAD], [LABS, CT_HEAD]).details
    assert details["match"] == "name_and_args"
    assert [m["name"] for m in details["matched"]] == ["order_imaging"]
    assert details["missing"] == [
        {
            "reference_index": 0,
            "name": "get_patient_labs",
            "arguments": {"patient_id": "P-17", "test": "HbA1c"},
        },
    ]
    assert details["extra"] == [
        {
            "predicted_index": 0,
            "name": "get_patient_labs",
            "arguments": {"patient_id": "P-17", "test": "LDL"},
        },
    ]


def test_explanations_are_short_and_name_the_calls() -> None:
    score = run(TrajectoryPrecision(), [LABS, INTERACTIONS], [LABS])
    assert score.explanation == (
        "1 of 2 predicted calls appear in the reference; "
        "extra: check_drug_interactions(drugs=['warfarin', 'amiodarone'])"
    )
    score = run(TrajectoryInOrderMatch(), [CT_HEAD, LABS], [LABS, CT_HEAD])
    assert score.explanation == (
        "1 of 2 reference calls found in reference order; "
        "missing or out of order: order_imaging(modality='CT', body_part='head')"
    )
    assert score.label == "no_match"


# --- duplicates --------------------------------------------------------------------


def test_a_duplicated_predicted_call() -> None:
    # predicted [A, A] vs reference [A]: precision 1/2, recall 1, any-order 1, exact 0.
    assert values([LABS, LABS], [LABS]) == expect(0, 1, 1, 0.5, 1)


def test_a_duplicated_reference_call() -> None:
    # predicted [A] vs reference [A, A]: the one predicted call can satisfy only one.
    assert values([LABS], [LABS, LABS]) == expect(0, 0, 0, 1, 0.5)


def test_in_order_gives_each_reference_call_its_own_predicted_call() -> None:
    assert run(TrajectoryInOrderMatch(), [LABS, CT_HEAD, LABS], [LABS, LABS]).value == 1.0
    assert run(TrajectoryInOrderMatch(), [LABS, CT_HEAD], [LABS, LABS]).value == 0.0


def test_in_order_skips_an_early_stray_call() -> None:
    # reference [LABS, CT]; predicted [CT, LABS, CT]: LABS at 1, then CT at 2.
    assert run(TrajectoryInOrderMatch(), [CT_HEAD, LABS, CT_HEAD], [LABS, CT_HEAD]).value == 1.0


# --- comparing two calls ---------------------------------------------------------------


def test_argument_key_order_does_not_matter() -> None:
    reordered = ToolCall(name="get_patient_labs", arguments={"test": "HbA1c", "patient_id": "P-17"})
    assert values([reordered], [LABS]) == expect(1, 1, 1, 1, 1)


def test_nested_key_order_does_not_matter() -> None:
    ordered = call("order_medication", drug="heparin", dose={"value": 5000, "unit": "IU"})
    swapped = call("order_medication", drug="heparin", dose={"unit": "IU", "value": 5000})
    assert run(TrajectoryExactMatch(), [swapped], [ordered]).value == 1.0


def test_integral_floats_equal_ints() -> None:
    # 23 == 23.0, also inside lists; 23 != 23.5.
    assert (
        run(TrajectoryExactMatch(), [call("get_vitals", hours=23.0)], [call("get_vitals", hours=23)]).value
        == 1.0
    )
    assert (
        run(
            TrajectoryExactMatch(),
            [call("get_vitals", range=[0.0, 23.0])],
            [call("get_vitals", range=[0, 23])],
        ).value
        == 1.0
    )
    assert (
        run(TrajectoryExactMatch(), [call("get_vitals", hours=23.5)], [call("get_vitals", hours=23)]).value
        == 0.0
    )


def test_booleans_do_not_equal_numbers() -> None:
    assert (
        run(
            TrajectoryExactMatch(),
            [call("get_allergies", verified=True)],
            [call("get_allergies", verified=1)],
        ).value
        == 0.0
    )


def test_strings_compare_case_sensitively() -> None:
    lower = call("get_patient_labs", patient_id="P-17", test="hba1c")
    assert run(TrajectoryExactMatch(), [lower], [LABS]).value == 0.0
    assert run(TrajectoryExactMatch(match="name"), [lower], [LABS]).value == 1.0


def test_list_arguments_compare_in_order() -> None:
    swapped = call("check_drug_interactions", drugs=["amiodarone", "warfarin"])
    assert run(TrajectoryExactMatch(), [swapped], [INTERACTIONS]).value == 0.0


def test_output_and_id_never_take_part() -> None:
    with_output = ToolCall(
        name="get_patient_labs",
        arguments={"patient_id": "P-17", "test": "HbA1c"},
        output={"value": 6.1, "unit": "%"},
        id="call_7",
    )
    assert values([with_output], [LABS]) == expect(1, 1, 1, 1, 1)


def test_vertex_example_device_id_differs() -> None:
    # reference set_device_info(device_id=device_2, ...) vs predicted device_3:
    # not the same call by name and arguments, the same call by name.
    reference = [call("set_device_info", device_id="device_2", updates={"status": "OFF"})]
    predicted = [call("set_device_info", device_id="device_3", updates={"status": "OFF"})]
    assert run(TrajectoryExactMatch(), predicted, reference).value == 0.0
    assert run(TrajectoryExactMatch(match="name"), predicted, reference).value == 1.0


def test_match_by_name_ignores_arguments() -> None:
    # LIPIDS and LABS share the tool name; CT_HEAD is extra.
    assert values([LIPIDS, CT_HEAD], [LABS], match="name") == expect(0, 1, 1, 0.5, 1)
    score = run(TrajectoryRecall(match="name"), [CT_HEAD], [LABS])
    assert score.explanation == "0 of 1 reference calls found; missing: get_patient_labs"
    assert score.details["match"] == "name"


def test_args_subset_compares_only_those_keys() -> None:
    other_patient = call("get_patient_labs", patient_id="P-99", test="HbA1c")
    assert run(TrajectoryExactMatch(args=["test"]), [other_patient], [LABS]).value == 1.0
    assert run(TrajectoryExactMatch(args=["patient_id"]), [other_patient], [LABS]).value == 0.0
    assert run(TrajectoryExactMatch(args=["test"]), [LIPIDS], [LABS]).value == 0.0


def test_args_key_absent_on_both_sides_is_equal() -> None:
    with_units = call("get_patient_labs", patient_id="P-17", test="HbA1c", units="mmol/mol")
    assert run(TrajectoryExactMatch(args=["test", "units"]), [LABS], [LABS]).value == 1.0
    assert run(TrajectoryExactMatch(args=["test", "units"]), [with_units], [LABS]).value == 0.0


def test_args_names_a_single_key_as_a_string() -> None:
    other_patient = call("get_patient_labs", patient_id="P-99", test="HbA1c")
    assert run(TrajectoryRecall(args="test"), [other_patient], [LABS]).value == 1.0


def test_canonical_forms() -> None:
    assert canonical({"b": 1, "a": [2.0, {"y": None, "x": "s"}]}) == canonical(
        {"a": [2, {"x": "s", "y": None}], "b": 1.0}
    )
    assert canonical(True) != canonical(1)
    assert canonical("1") != canonical(1)
    assert canonical(None) != canonical("")


def test_call_matcher_alignment() -> None:
    matcher = CallMatcher()
    alignment = matcher.any_order([CT_HEAD, LABS, LABS], [LABS, INTERACTIONS])
    assert alignment.pairs == ((1, 0),)
    assert alignment.missing == (1,)
    assert alignment.extra == (0, 2)
    assert matcher.render(LABS) == "get_patient_labs(patient_id='P-17', test='HbA1c')"


# --- empty trajectories ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("predicted", "reference", "expected"),
    [
        ([], [], expect(1, 1, 1, 1, 1)),
        ([], [LABS], expect(0, 0, 0, 0, 0)),
        ([LABS], [], expect(0, 1, 1, 0, 1)),
    ],
    ids=["both-empty", "empty-predicted", "empty-reference"],
)
def test_empty_trajectories(
    predicted: list[ToolCall], reference: list[ToolCall], expected: dict[str, float]
) -> None:
    assert values(predicted, reference) == expected


def test_empty_trajectory_explanations() -> None:
    assert run(TrajectoryExactMatch(), [], []).explanation == "both trajectories are empty"
    assert run(TrajectoryPrecision(), [], [LABS]).explanation == (
        "the predicted trajectory is empty; the reference has 1 call"
    )
    assert run(TrajectoryRecall(), [LABS], []).explanation == (
        "the reference trajectory is empty; the prediction has 1 call: nothing to recall"
    )


# --- single tool use ---------------------------------------------------------------------


def test_single_tool_use_present() -> None:
    metric = TrajectorySingleToolUse(tool_name="order_imaging")
    score = run(metric, [LABS, CT_HEAD, CT_HEAD])
    assert score.value == 1.0
    assert score.label == "used"
    assert score.details["positions"] == [1, 2]
    assert score.explanation == "order_imaging was called (2 times)"


def test_single_tool_use_absent() -> None:
    score = run(TrajectorySingleToolUse(tool_name="order_imaging"), [LABS, INTERACTIONS])
    assert score.value == 0.0
    assert score.label == "not_used"
    assert score.explanation == (
        "order_imaging was not called; called: get_patient_labs, check_drug_interactions"
    )


def test_single_tool_use_on_an_empty_trajectory() -> None:
    score = run(TrajectorySingleToolUse(tool_name="order_imaging"), [])
    assert score.value == 0.0
    assert score.explanation == "order_imaging was not called: the trajectory is empty"


def test_single_tool_use_ignores_arguments_and_names_must_match_exactly() -> None:
    metric = TrajectorySingleToolUse(tool_name="get_patient_labs")
    assert run(metric, [call("get_patient_labs")]).value == 1.0
    assert run(metric, [call("Get_Patient_Labs")]).value == 0.0


async def test_single_tool_use_needs_no_reference() -> None:
    metric = build_metric("trajectory_single_tool_use(tool_name=order_imaging)")
    score = await score_case(metric, Case(id="c", trajectory=[CT_HEAD]), ScoreContext())
    assert score.status == "scored"
    assert score.value == 1.0


async def test_single_tool_use_without_trajectory_is_an_error() -> None:
    metric = build_metric("trajectory_single_tool_use(tool_name=order_imaging)")
    score = await score_case(metric, Case(id="c", response="done"), ScoreContext())
    assert score.error is not None and "'trajectory'" in score.error


# --- missing fields, data formats ---------------------------------------------------------


@pytest.mark.parametrize("name", FIVE)
async def test_missing_reference_trajectory_is_an_error_naming_it(name: str) -> None:
    score = await score_case(build_metric(name), Case(id="c", trajectory=[LABS]), ScoreContext())
    assert score.status == "error"
    assert score.error is not None and "'reference_trajectory'" in score.error
    assert score.details["missing_fields"] == ["reference_trajectory"]


@pytest.mark.parametrize("name", FIVE)
async def test_missing_trajectory_is_an_error_naming_it(name: str) -> None:
    case = Case(id="c", reference_trajectory=[LABS])
    score = await score_case(build_metric(name), case, ScoreContext())
    assert score.error is not None and "'trajectory'" in score.error


async def test_cloud_dataset_spelling_of_tool_calls() -> None:
    # tool_name / tool_input rows, as cloud agent evaluation datasets store them.
    case = Case.model_validate(
        {
            "id": "c",
            "trajectory": [
                {"tool_name": "get_patient_labs", "tool_input": {"test": "HbA1c", "patient_id": "P-17"}}
            ],
            "reference_trajectory": [
                {"tool_name": "get_patient_labs", "tool_input": {"patient_id": "P-17", "test": "HbA1c"}}
            ],
        }
    )
    score = await score_case(build_metric("trajectory_exact_match"), case, ScoreContext())
    assert score.value == 1.0


# --- registry --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        "trajectory_exact_match",
        "trajectory_in_order_match(match=name)",
        "trajectory_any_order_match(args=[test, patient_id])",
        "trajectory_precision(match=name_and_args, args=[test])",
        "trajectory_recall(args=test)",
        "trajectory_single_tool_use(tool_name=order_ct)",
    ],
)
def test_builds_through_the_registry(spec: str) -> None:
    metric = build_metric(spec)
    assert metric.name == spec.partition("(")[0]
    assert get_entry(metric.name).source == "Vertex AI Gen AI evaluation (agent trajectory metrics)"


def test_registry_settings_reach_the_instance() -> None:
    metric = build_metric("trajectory_precision(args=[test])")
    assert isinstance(metric, TrajectoryPrecision)
    assert metric.matcher == CallMatcher("name_and_args", ("test",))
    tool = build_metric("trajectory_single_tool_use(tool_name=order_ct)")
    assert isinstance(tool, TrajectorySingleToolUse)
    assert tool.tool_name == "order_ct"
    assert get_entry("trajectory_single_tool_use").requires == ("trajectory",)
    assert get_entry("trajectory_recall").requires == ("trajectory", "reference_trajectory")


@pytest.mark.parametrize(
    "spec",
    [
        "trajectory_single_tool_use",
        "trajectory_single_tool_use(tool_name='')",
        "trajectory_single_tool_use(tool_name=order_ct, match=name)",
        "trajectory_exact_match(match=fuzzy)",
        "trajectory_recall(match=name, args=[test])",
        "trajectory_precision(args=[])",
        "trajectory_in_order_match(args=[1, 2])",
        "trajectory_any_order_match(tool_name=order_ct)",
    ],
)
def test_bad_settings_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError):
        build_metric(spec)


def test_metrics_keep_no_state_between_cases() -> None:
    for name in (*FIVE, "trajectory_single_tool_use(tool_name=order_imaging)"):
        metric = build_metric(name)
        before = dict(vars(metric))
        first = run(metric, [LABS, CT_HEAD], [LABS])
        run(metric, [], [INTERACTIONS])
        assert run(metric, [LABS, CT_HEAD], [LABS]) == first
        assert vars(metric) == before


def test_a_metric_made_directly_is_recorded_with_its_settings(tmp_path: Path) -> None:
    """evaluate([...], [TrajectorySingleToolUse(tool_name=...)]) records the registry name and
    settings, so the run's header says what was measured and a resume rebuilds the same metric."""
    from clineval import TrajectoryPrecision, TrajectorySingleToolUse, evaluate
    from clineval.store.sqlite import RunStore

    case = {
        "id": "a",
        "trajectory": [{"name": "order_lab"}],
        "reference_trajectory": [{"name": "get_vitals"}],
    }
    result = evaluate(
        [case],
        [TrajectorySingleToolUse(tool_name="order_lab"), TrajectoryPrecision(match="name")],
        store=str(tmp_path / "runs.db"),
        progress=False,
    )
    assert result.run.config["metrics"] == [
        {"name": "trajectory_single_tool_use", "args": {"tool_name": "order_lab"}},
        {"name": "trajectory_precision", "args": {"match": "name"}},
    ]
    store = RunStore(tmp_path / "runs.db")
    try:
        with store.transaction() as conn:
            conn.execute("DELETE FROM results")
            conn.execute("UPDATE runs SET status = 'interrupted'")
    finally:
        store.close()
    resumed = evaluate(resume=str(result.run_id), store=str(tmp_path / "runs.db"), progress=False)
    assert {r.metric: r.score.value for r in resumed.results} == {
        "trajectory_single_tool_use": 1.0,
        "trajectory_precision": 0.0,
    }
