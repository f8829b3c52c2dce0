"""Vertex AI agent evaluation's spellings work everywhere: metric names, trajectory columns
given as lists or JSON strings, {tool_name, tool_input} calls, and the instance table's
predicted_trajectory / reference_trajectory columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from clineval import evaluate
from clineval.cli.main import cli
from clineval.config import load_run_config
from clineval.conversations.loaders import load_conversations
from clineval.datasets import load_dataset
from clineval.errors import ConfigError, DatasetError
from clineval.metrics.registry import SYNONYMS, MetricSpec, build_metric, parse_metric_spec
from clineval.model import Case, ToolCall
from clineval.suites.evaluators import MetricEvaluator

# The two examples of Vertex AI's agent evaluation documentation.
REFERENCE = [
    [{"tool_name": "set_device_info", "tool_input": {"device_id": "device_2", "updates": {"status": "OFF"}}}],
    [
        {"tool_name": "get_user_preferences", "tool_input": {"user_id": "user_y"}},
        {"tool_name": "set_temperature", "tool_input": {"location": "Living Room", "temperature": 23}},
    ],
]
PREDICTED = [
    [{"tool_name": "set_device_info", "tool_input": {"device_id": "device_3", "updates": {"status": "OFF"}}}],
    [
        {"tool_name": "get_user_preferences", "tool_input": {"user_id": "user_z"}},
        {"tool_name": "set_temperature", "tool_input": {"location": "Living Room", "temperature": 23}},
    ],
]


# -- metric names -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "rouge_type"),
    [("rouge_1", "rouge1"), ("rouge_2", "rouge2"), ("rouge_l", "rougeL"), ("rouge_l_sum", "rougeLsum")],
)
def test_rouge_names_stand_for_rouge_with_their_type(written: str, rouge_type: str) -> None:
    for spec in (parse_metric_spec(written), MetricSpec.model_validate(written), MetricSpec(name=written)):
        assert spec.name == "rouge" and spec.args == {"rouge_type": rouge_type}
        assert spec.result_name == written
    built = build_metric(written)
    assert built.name == written
    assert built.rouge_type == rouge_type  # type: ignore[attr-defined]


def test_latency_in_seconds_is_another_spelling_of_latency() -> None:
    spec = parse_metric_spec("latency_in_seconds")
    assert (spec.name, spec.args, spec.result_name) == ("latency", {}, "latency")
    assert MetricSpec.model_validate({"name": "latency_in_seconds"}).result_name == "latency"
    assert build_metric("latency_in_seconds").name == "latency"


def test_settings_and_names_given_with_a_synonym() -> None:
    spec = parse_metric_spec("r=rouge_l(use_stemmer=false)")
    assert spec.name == "rouge" and spec.args == {"rouge_type": "rougeL", "use_stemmer": False}
    assert spec.result_name == "r"
    # repeating the fixed setting with the same value is fine
    assert parse_metric_spec("rouge_l_sum(rouge_type=rougeLsum)").args == {"rouge_type": "rougeLsum"}
    # stored specs validate to themselves (resume and compare rebuild the same metric)
    again = MetricSpec.model_validate(spec.model_dump())
    assert again == spec


def test_a_synonym_cannot_change_the_setting_it_fixes() -> None:
    with pytest.raises(ConfigError, match=r"'rouge_l_sum' is rouge\(rouge_type='rougeLsum'\).*write rouge"):
        parse_metric_spec("rouge_l_sum(rouge_type=rouge1)")
    with pytest.raises(ValidationError, match="cannot take rouge_type='rouge2'"):
        MetricSpec.model_validate({"name": "rouge_1", "args": {"rouge_type": "rouge2"}})


def test_rouge_1_value_hand_worked() -> None:
    # "the cat sat" against "the cat sat on the mat": unigram P 3/3, R 3/6 -> F 2/3.
    metric = build_metric("rouge_1")
    from clineval.metrics.base import ScoreContext

    case = Case(id="c", response="the cat sat", reference="the cat sat on the mat")
    score = metric.score(case, ScoreContext())  # type: ignore[call-arg]
    assert score.value == pytest.approx(2 / 3)


def test_run_file_and_suite_evaluator_accept_vertex_names(tmp_path: Path) -> None:
    run_file = tmp_path / "run.yaml"
    run_file.write_text("metrics:\n  - rouge_l_sum\n  - name: latency_in_seconds\n", encoding="utf-8")
    config = load_run_config(run_file)
    assert [m.result_name for m in config.metrics] == ["rouge_l_sum", "latency"]
    assert [m.name for m in config.metrics] == ["rouge", "latency"]
    evaluator = MetricEvaluator("rouge_l")
    assert evaluator.metric.name == "rouge_l" and evaluator.spec.args == {"rouge_type": "rougeL"}


def test_catalogue_lists_the_vertex_names() -> None:
    done = CliRunner().invoke(cli, ["metrics"], env={"COLUMNS": "400"})
    assert done.exit_code == 0
    for name in SYNONYMS:
        assert name in done.stdout
    assert "rouge_l_sum = rouge(rouge_type='rougeLsum')" in done.stdout
    assert "latency_in_seconds = latency" in done.stdout


def test_cli_reports_a_conflicting_setting_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text('{"id": "a", "response": "x", "reference": "x"}\n', encoding="utf-8")
    done = CliRunner().invoke(
        cli,
        ["run", "-d", str(data), "-m", "rouge_l_sum(rouge_type=rouge1)", "--store", str(tmp_path / "s.db")],
    )
    assert done.exit_code == 2
    assert "cannot take rouge_type='rouge1'" in done.stderr and "Traceback" not in done.stderr


# -- trajectories -------------------------------------------------------------------------


def test_trajectories_as_json_strings() -> None:
    case = Case.model_validate(
        {
            "id": "c",
            "trajectory": json.dumps(PREDICTED[1]),
            "reference_trajectory": json.dumps(REFERENCE[1]),
        }
    )
    assert case.trajectory == [ToolCall.model_validate(c) for c in PREDICTED[1]]
    assert (
        case.reference_trajectory is not None and case.reference_trajectory[1].arguments["temperature"] == 23
    )
    assert Case.model_validate({"id": "c", "trajectory": "  "}).trajectory is None
    assert Case.model_validate({"id": "c", "trajectory": "[]"}).trajectory == []
    with pytest.raises(ValidationError, match="not JSON"):
        Case.model_validate({"id": "c", "trajectory": "not a list"})
    with pytest.raises(ValidationError, match="got a JSON dict"):
        Case.model_validate({"id": "c", "trajectory": '{"tool_name": "x"}'})


def _vertex_rows() -> list[dict[str, object]]:
    # Example 1 as lists, example 2 as JSON strings (both forms Vertex accepts).
    return [
        {
            "prompt": "Turn off device 2",
            "predicted_trajectory": PREDICTED[0],
            "reference_trajectory": REFERENCE[0],
            "response": "device 2 is off",
            "reference": "device 2 is off",
            "latency_in_seconds": 1.5,
            "failure": 0,
        },
        {
            "prompt": "Set the living room to my preferred temperature",
            "predicted_trajectory": json.dumps(PREDICTED[1]),
            "reference_trajectory": json.dumps(REFERENCE[1]),
            "response": "set to 23",
            "reference": "living room set to 23",
            "latency_in_seconds": 2.5,
            "failure": 0,
        },
    ]


def test_a_vertex_dataset_runs_with_vertex_metric_names(tmp_path: Path) -> None:
    data = tmp_path / "eval_dataset.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in _vertex_rows()), encoding="utf-8")
    metrics = [
        "trajectory_exact_match",
        "trajectory_in_order_match",
        "trajectory_any_order_match",
        "trajectory_precision",
        "trajectory_recall",
        "trajectory_single_tool_use(tool_name=set_temperature)",
        "rouge_l_sum",
        "latency_in_seconds",
    ]
    result = evaluate(str(data), metrics, store=tmp_path / "s.db", progress=False, judge="none")
    frame = result.to_pandas().set_index("case_id")
    first, second = frame.index
    # Example 1: device_3 is not device_2 -> nothing matches.
    # Example 2: user_z is not user_y, set_temperature matches -> P = R = 1/2, exact/in/any 0.
    assert (
        frame.loc[first, "trajectory_exact_match"] == 0 and frame.loc[second, "trajectory_exact_match"] == 0
    )
    assert frame.loc[first, "trajectory_precision"] == 0 and frame.loc[second, "trajectory_precision"] == 0.5
    assert frame.loc[second, "trajectory_recall"] == 0.5
    assert frame.loc[second, "trajectory_any_order_match"] == 0
    assert list(frame["trajectory_single_tool_use"]) == [0.0, 1.0]
    assert list(frame["latency"]) == [1.5, 2.5]
    assert "rouge_l_sum" in frame.columns and "latency_in_seconds" not in frame.columns
    # instance table: both trajectories, as JSON lists of {"name", "arguments"}
    assert "trajectory" not in frame.columns
    predicted = json.loads(frame.loc[second, "predicted_trajectory"])
    reference = json.loads(frame.loc[second, "reference_trajectory"])
    assert predicted[0] == {"name": "get_user_preferences", "arguments": {"user_id": "user_z"}}
    assert reference[0] == {"name": "get_user_preferences", "arguments": {"user_id": "user_y"}}
    # the exported table loads back as a dataset with the same trajectories
    out = tmp_path / "export.csv"
    result.to_pandas().to_csv(out, index=False)
    reloaded = load_dataset(out)
    assert [c.trajectory for c in reloaded.cases] == [c.trajectory for c in result.cases]
    assert [c.reference_trajectory for c in reloaded.cases] == [c.reference_trajectory for c in result.cases]


def test_a_dataframe_and_a_csv_with_vertex_columns(tmp_path: Path) -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {"predicted_trajectory": PREDICTED, "reference_trajectory": REFERENCE, "response": ["a", "b"]}
    )
    cases = load_dataset(frame).cases
    assert cases[1].trajectory is not None and cases[1].trajectory[0].name == "get_user_preferences"
    csv = tmp_path / "d.csv"
    frame.assign(
        predicted_trajectory=[json.dumps(t) for t in PREDICTED],
        reference_trajectory=[json.dumps(t) for t in REFERENCE],
    ).to_csv(csv, index=False)
    assert [c.reference_trajectory for c in load_dataset(csv).cases] == [
        c.reference_trajectory for c in cases
    ]


def test_bad_json_trajectory_names_the_line_and_field(tmp_path: Path) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text('{"id": "a", "predicted_trajectory": "[{\\"tool_name\\": "}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.jsonl:1: field 'trajectory'.*not JSON"):
        load_dataset(data)


def test_agent_returning_a_vertex_style_output(tmp_path: Path) -> None:
    def agent(prompt: str) -> dict[str, object]:
        return {"response": "done", "predicted_trajectory": json.dumps(PREDICTED[0])}

    cases = [{"id": "a", "input": "Turn off device 2", "reference_trajectory": REFERENCE[0]}]
    result = evaluate(
        cases,
        ["trajectory_single_tool_use(tool_name=set_device_info)", "latency_in_seconds"],
        agent=agent,
        store=tmp_path / "s.db",
        progress=False,
        judge="none",
    )
    assert result.cases[0].trajectory == [ToolCall.model_validate(PREDICTED[0][0])]
    # latency_in_seconds is latency: the agent's automatic latency metric is not added twice
    assert sorted(result.metrics) == ["failure", "latency", "trajectory_single_tool_use"]


def test_conversation_tool_calls_in_vertex_spelling(tmp_path: Path) -> None:
    (tmp_path / "c1.json").write_text(
        json.dumps(
            {
                "id": "c1",
                "messages": [
                    {"role": "user", "content": "Turn off device 2"},
                    {"role": "assistant", "content": None, "tool_calls": [{"id": "t1", **REFERENCE[0][0]}]},
                    {"role": "tool", "tool_call_id": "t1", "content": "ok"},
                    {"role": "assistant", "content": "Device 2 is off."},
                ],
            }
        ),
        encoding="utf-8",
    )
    (conversation,) = load_conversations(tmp_path)
    call = conversation.messages[1].tool_calls[0]
    assert call.name == "set_device_info" and call.arguments["device_id"] == "device_2"
    assert call.result == "ok"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "c2.json").write_text(
        json.dumps({"messages": [{"role": "assistant", "tool_calls": [{"tool_name": ""}]}]}), encoding="utf-8"
    )
    with pytest.raises(DatasetError, match=r"tool_calls\.0\.tool_name': expected a non-empty string"):
        load_conversations(tmp_path / "bad")
