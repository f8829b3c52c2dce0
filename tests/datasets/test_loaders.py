"""Dataset loading: every format, column mapping, and clear errors for bad rows."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from clineval.datasets import load_dataset
from clineval.errors import DatasetError

ROWS = [
    {
        "id": "a",
        "prompt": "Latest potassium for patient 12?",
        "response": "5.9 mmol/L",
        "reference": "Potassium 5.9 mmol/L (high).",
        "predicted_trajectory": [{"tool_name": "get_labs", "tool_input": {"test": "potassium"}}],
        "reference_trajectory": [{"tool_name": "get_labs", "tool_input": {"test": "potassium"}}],
        "ward": "renal",
    },
    {
        "id": "b",
        "prompt": "Any interactions?",
        "response": "None found.",
        "ward": "cardiology",
        "latency_in_seconds": 1.25,
        "failure": 0,
    },
]


def _check(dataset_cases: list) -> None:
    a, b = dataset_cases
    assert a.input == "Latest potassium for patient 12?"
    assert a.trajectory[0].name == "get_labs" and a.trajectory[0].arguments == {"test": "potassium"}
    assert a.metadata == {"ward": "renal"}
    assert b.agent_run is not None and b.agent_run.latency_s == 1.25 and b.agent_run.failed is False


def test_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n\n", encoding="utf-8")
    dataset = load_dataset(path)
    _check(dataset.cases)
    assert dataset.metadata_columns == ["ward"]
    assert len(dataset.fingerprint()) == 16


def test_json_list_and_wrapped(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(ROWS), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps({"cases": ROWS}), encoding="utf-8")
    _check(load_dataset(tmp_path / "a.json").cases)
    _check(load_dataset(tmp_path / "b.json").cases)


def test_csv_parses_json_cells_and_empty_cells_are_missing(tmp_path: Path) -> None:
    frame = pd.DataFrame(ROWS)
    for column in ("predicted_trajectory", "reference_trajectory"):
        frame[column] = frame[column].map(lambda v: json.dumps(v) if isinstance(v, list) else None)
    path = tmp_path / "cases.csv"
    frame.to_csv(path, index=False)
    cases = load_dataset(path).cases
    _check(cases)
    assert cases[1].trajectory is None and cases[1].reference is None


def test_dataframe_and_list_give_the_same_fingerprint() -> None:
    assert load_dataset(pd.DataFrame(ROWS)).fingerprint() == load_dataset(ROWS).fingerprint()


def test_mapping_and_dotted_targets() -> None:
    rows = [{"qid": 1, "question_text": "Dose?", "gold": "5 mg", "secs": 2.0}]
    dataset = load_dataset(
        rows,
        mapping={"qid": "id", "question_text": "input", "gold": "expected", "secs": "agent_run.latency_s"},
    )
    case = dataset.cases[0]
    assert (case.id, case.input, case.expected) == ("1", "Dose?", "5 mg")
    assert case.agent_run is not None and case.agent_run.latency_s == 2.0


def test_bad_mapping_target() -> None:
    with pytest.raises(DatasetError, match="'answer' is not a case field"):
        load_dataset(ROWS, mapping={"response": "answer"})


def test_missing_ids_get_row_numbers_and_duplicates_are_errors(tmp_path: Path) -> None:
    assert [c.id for c in load_dataset([{"input": "x"}, {"input": "y"}]).cases] == ["1", "2"]
    path = tmp_path / "dup.jsonl"
    path.write_text('{"id": "x"}\n{"id": "y"}\n{"id": "x"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"dup.jsonl:3: field 'id': case id 'x' is already used at line 1"):
        load_dataset(path)


def test_every_bad_row_is_reported_with_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"id": "ok", "input": "fine"}),
                "{not json",
                json.dumps({"id": "t", "trajectory": [{"name": "x", "arguments": "{bad"}]}),
                json.dumps({"id": "c", "contexts": 5}),
                json.dumps(["a", "list"]),
            ]
        ),
        encoding="utf-8",
    )
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert f"{path}:2: not valid JSON" in message
    # the JSON error stops reading, so field errors show once the file parses
    path.write_text(
        "\n".join(
            [
                json.dumps({"id": "ok", "input": "fine"}),
                json.dumps({"id": "t", "trajectory": [{"name": "x", "arguments": "{bad"}]}),
                json.dumps({"id": "c", "contexts": 5}),
                json.dumps(["a", "list"]),
            ]
        ),
        encoding="utf-8",
    )
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert message.startswith("3 bad row(s)")
    assert f"{path}:2: field 'trajectory.0'" in message and "not valid JSON" in message
    assert f"{path}:3: field 'contexts'" in message
    assert f"{path}:4: expected an object" in message


def test_csv_bad_json_cell_names_the_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text('id,trajectory\n1,"[{""name"": ""x""}"\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.csv:2: column 'trajectory': not valid JSON"):
        load_dataset(path)


def test_csv_text_after_a_closing_quote_is_an_error_naming_the_line(tmp_path: Path) -> None:
    # '"fever" for two days' closes its quote before the comma: a lenient reader would take
    # the cell as 'fever for two days' and hide the broken quoting; line 2 is named.
    path = tmp_path / "quoted.csv"
    path.write_text('id,input,reference\nc1,"fever" for two days,flu\nc2,cough,cold\n', encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert str(caught.value) == (
        f"{path}:2: an unmatched quote (text follows a closing quote); a quote must open and close "
        'a whole cell, and a quote inside a quoted cell is written twice ("")'
    )
    # the same cell quoted whole is read as written
    path.write_text('id,input,reference\nc1,"""fever"" for two days",flu\n', encoding="utf-8")
    (case,) = load_dataset(path).cases
    assert case.input == '"fever" for two days' and case.reference == "flu"


def test_unknown_format_empty_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "a.parquet").write_text("x")
    with pytest.raises(DatasetError, match="unknown dataset format"):
        load_dataset(tmp_path / "a.parquet")
    with pytest.raises(DatasetError, match="not found"):
        load_dataset(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DatasetError, match="no cases"):
        load_dataset(tmp_path / "empty.jsonl")


def test_csv_text_that_looks_like_json_stays_text(tmp_path: Path) -> None:
    path = tmp_path / "notes.csv"
    frame = pd.DataFrame(
        {
            "id": ["a", "b"],
            "input": [
                "[URGENT] chest pain, troponin pending",
                json.dumps([{"role": "user", "content": "Hi"}]),
            ],
            "ward": ["[ICU]", "{step-down}"],
            "expected": ["[hold]", "continue"],
        }
    )
    frame.to_csv(path, index=False)
    a, b = load_dataset(path).cases
    assert a.input == "[URGENT] chest pain, troponin pending"
    assert a.metadata == {"ward": "[ICU]"} and a.expected == "[hold]"
    assert isinstance(b.input, list) and b.input[0].content == "Hi"
    assert b.metadata == {"ward": "{step-down}"}


def test_openai_tool_messages_in_a_conversation() -> None:
    (case,) = load_dataset(
        [
            {
                "id": "t",
                "input": [
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "get_labs", "arguments": "{}"},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "call_1", "content": "K 5.9"},
                ],
            }
        ]
    ).cases
    assert isinstance(case.input, list) and case.input[1].tool_call_id == "call_1"
