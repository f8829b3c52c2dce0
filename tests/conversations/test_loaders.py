"""Loading saved conversations: native JSONL, OpenAI-style JSON, Semantic Kernel chat contexts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clineval.conversations.cases import conversation_of
from clineval.conversations.loaders import conversations_dataset, load_conversations
from clineval.datasets.loaders import load_dataset
from clineval.errors import DatasetError

# --- hand-written files -------------------------------------------------------------------

NATIVE = [
    {
        "id": "n1",
        "patient_id": "patient_4",
        "scenario": "timeline",
        "messages": [
            {"role": "user", "speaker": "user", "text": "Orchestrator: summarise patient_4"},
            {"role": "assistant", "speaker": "Orchestrator", "text": "PatientHistory, please."},
            {"role": "assistant", "speaker": "PatientHistory", "text": "Timeline: 2019 GBM."},
        ],
    },
    {
        "messages": [
            {"role": "user", "speaker": "user", "text": "hello", "gold_agent": "Orchestrator"},
            {"role": "assistant", "speaker": "Orchestrator", "text": "hi"},
        ],
    },
]

OPENAI = {
    "id": "oa-1",
    "scenario": "labs",
    "model": "gpt-x",
    "messages": [
        {"role": "system", "content": "You are a clinical assistant."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Latest potassium"}, {"type": "text", "text": "?"}],
        },
        {
            "role": "assistant",
            "name": "LabAgent",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_labs", "arguments": '{"patient_id": "p9", "test": "K"}'},
                },
                {"id": "call_2", "type": "function", "function": {"name": "get_meds", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "K 5.9 mmol/L"},
        {"role": "tool", "tool_call_id": "call_2", "content": "[]"},
        {"role": "assistant", "name": "LabAgent", "content": "Potassium is 5.9 mmol/L (high)."},
    ],
}


def sk_history() -> dict[str, Any]:
    """A Semantic Kernel ChatHistory as the orchestrator serialises it."""
    return {
        "messages": [
            {
                "role": "user",
                "name": None,
                "items": [
                    {"content_type": "text", "text": "Orchestrator: prepare the tumor board for patient_4"}
                ],
                "metadata": {},
            },
            {
                "role": "assistant",
                "name": "PatientHistory",
                "content_type": "message",
                "ai_model_id": "gpt-4o",
                "finish_reason": "tool_calls",
                "items": [
                    {
                        "content_type": "function_call",
                        "id": "call_abc",
                        "plugin_name": "patient_data",
                        "function_name": "load_patient_data",
                        "arguments": '{"patient_id": "patient_4"}',
                    }
                ],
                "metadata": {
                    "id": "chatcmpl-1",
                    "created": 1718000000,
                    "usage": {"prompt_tokens": 120, "completion_tokens": 8},
                },
            },
            {
                "role": "tool",
                "name": None,
                "items": [
                    {
                        "content_type": "function_result",
                        "id": "call_abc",
                        "plugin_name": "patient_data",
                        "function_name": "load_patient_data",
                        "result": "Loaded 12 notes.",
                    }
                ],
                "metadata": {},
            },
            {
                "role": "AuthorRole.ASSISTANT",
                "name": "PatientHistory",
                "items": [
                    {"content_type": "text", "text": "Timeline:"},
                    {"content_type": "text", "text": "2019-05-18 craniotomy."},
                    {"content_type": "image", "uri": "https://example.org/x.png"},
                ],
                "metadata": {"created": "2024-06-10T06:13:30+00:00"},
            },
        ]
    }


def sk_context(*, patient_id: str | None = None, as_string: bool = True) -> dict[str, Any]:
    history = sk_history()
    return {
        "conversation_id": "sim-hash-1",
        "chat_history": json.dumps(history) if as_string else history,
        "patient_id": patient_id,
        "patient_data": [{"id": "note-1", "type": "clinical note"}],
        "display_blob_urls": [],
        "output_data": [],
        "healthcare_agents": {},
    }


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


def without_tool_patient(context: dict[str, Any]) -> dict[str, Any]:
    history = json.loads(context["chat_history"])
    history["messages"][1]["items"][0]["arguments"] = "{}"
    return {**context, "chat_history": json.dumps(history)}


# --- native ---------------------------------------------------------------------------------


def test_native_jsonl_two_conversations(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "chats.jsonl", NATIVE)
    first, second = load_conversations(path)
    assert first.id == "n1"
    assert first.patient_id == "patient_4"
    assert first.metadata["patient_id_source"] == "file"
    assert first.scenario == "timeline"
    assert [m.speaker for m in first.messages] == ["user", "Orchestrator", "PatientHistory"]
    assert first.source == f"{path}:1"
    assert second.id == "chats#2"  # no id: the file stem and the line
    assert second.messages[0].gold_agent == "Orchestrator"
    assert second.patient_id is None


def test_native_json_single_object_and_list(tmp_path: Path) -> None:
    (single,) = load_conversations(write_json(tmp_path / "one.json", NATIVE[1]))
    assert single.id == "one"
    many = load_conversations(write_json(tmp_path / "many.json", NATIVE))
    assert [c.id for c in many] == ["n1", "many#2"]


def test_native_errors_name_line_message_and_field(tmp_path: Path) -> None:
    bad = {"id": "x", "messages": [{"role": "user", "speaker": "user"}, {"role": "bot", "speaker": "A"}]}
    path = write_jsonl(tmp_path / "bad.jsonl", [NATIVE[0], bad])
    with pytest.raises(DatasetError) as info:
        load_conversations(path)
    message = str(info.value)
    assert f"{path}:2: message 2: field 'role': expected one of" in message
    assert "got 'bot'" in message


def test_invalid_json_line_is_located(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(NATIVE[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"broken\.jsonl:2: not valid JSON"):
        load_conversations(path)


# --- OpenAI-style -------------------------------------------------------------------------------


def test_openai_messages_tool_calls_and_results(tmp_path: Path) -> None:
    (conversation,) = load_conversations(write_json(tmp_path / "oa.json", OPENAI))
    assert conversation.id == "oa-1"
    assert conversation.scenario == "labs"
    assert conversation.metadata["model"] == "gpt-x"
    assert conversation.metadata["format"] == "openai"
    roles = [m.role for m in conversation.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [m.speaker for m in conversation.messages] == [
        "system",
        "user",
        "LabAgent",
        "tool",
        "tool",
        "LabAgent",
    ]
    assert conversation.messages[1].text == "Latest potassium\n?"
    caller = conversation.messages[2]
    assert caller.text == ""  # content null, only tool calls: valid
    assert [c.name for c in caller.tool_calls] == ["get_labs", "get_meds"]
    assert caller.tool_calls[0].arguments == {"patient_id": "p9", "test": "K"}
    # tool messages are kept AND their content is copied onto the calls
    assert conversation.messages[3].tool_call_id == "call_1"
    assert conversation.messages[3].text == "K 5.9 mmol/L"
    assert caller.tool_calls[0].result == "K 5.9 mmol/L"
    assert caller.tool_calls[1].result == "[]"
    # no patient in the file nor from the caller: inferred from the tool argument
    assert conversation.patient_id == "p9"
    assert conversation.metadata["patient_id_source"] == "tool_call"


def test_openai_bare_message_list(tmp_path: Path) -> None:
    path = write_json(tmp_path / "plain.json", OPENAI["messages"])
    (conversation,) = load_conversations(path, patient_id="p1")
    assert conversation.id == "plain"
    assert conversation.patient_id == "p1"  # the caller's patient wins over inference
    assert conversation.metadata["patient_id_source"] == "caller"


def test_openai_errors_are_located(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{x"}}],
        },
        {"role": "bot", "content": "?"},
        {"role": "user", "content": 5},
    ]
    path = write_json(tmp_path / "a.json", {"messages": messages})
    with pytest.raises(DatasetError) as info:
        load_conversations(path)
    text = str(info.value)
    assert f"{path}: message 2: field 'tool_calls.0.function.arguments': not valid JSON" in text
    assert f"{path}: message 3: field 'role': expected one of 'system', 'developer', 'user'" in text
    assert f"{path}: message 4: field 'content': expected a string, a list of parts or null" in text


# --- Semantic Kernel chat context ----------------------------------------------------------------


def test_sk_chat_context_with_string_history(tmp_path: Path) -> None:
    path = write_json(tmp_path / "chat_context.json", sk_context())
    (conversation,) = load_conversations(path)
    assert conversation.id == "sim-hash-1"
    assert conversation.metadata["format"] == "semantic_kernel"
    assert conversation.metadata["patient_data"] == [{"id": "note-1", "type": "clinical note"}]
    assert "display_blob_urls" not in conversation.metadata  # empty keys are not kept
    messages = conversation.messages
    assert [(m.role, m.speaker) for m in messages] == [
        ("user", "user"),
        ("assistant", "PatientHistory"),
        ("tool", "tool"),
        ("assistant", "PatientHistory"),
    ]
    call = messages[1].tool_calls[0]
    assert call.name == "patient_data-load_patient_data"
    assert call.id == "call_abc"
    assert call.arguments == {"patient_id": "patient_4"}
    assert call.result == "Loaded 12 notes."
    assert messages[1].timestamp == "2024-06-10T06:13:20+00:00"
    assert messages[1].usage is not None and messages[1].usage.prompt_tokens == 120
    assert messages[1].usage.completion_tokens == 8
    assert messages[1].metadata["id"] == "chatcmpl-1"
    assert messages[1].metadata["ai_model_id"] == "gpt-4o"
    assert messages[2].tool_call_id == "call_abc"
    assert messages[2].text == "Loaded 12 notes."
    assert messages[2].metadata["function"] == "patient_data-load_patient_data"
    assert messages[3].text == "Timeline:\n\n2019-05-18 craniotomy."
    assert messages[3].timestamp == "2024-06-10T06:13:30+00:00"
    assert messages[3].metadata["skipped_items"] == ["image"]
    # patient_id null in the file, none given: inferred from load_patient_data's argument
    assert conversation.patient_id == "patient_4"
    assert conversation.metadata["patient_id_source"] == "tool_call"


def test_sk_null_patient_set_by_caller(tmp_path: Path) -> None:
    path = write_json(tmp_path / "ctx.json", without_tool_patient(sk_context()))
    (no_patient,) = load_conversations(path)
    assert no_patient.patient_id is None
    assert "patient_id_source" not in no_patient.metadata
    (given,) = load_conversations(path, patient_id="patient_4")
    assert given.patient_id == "patient_4"
    assert given.metadata["patient_id_source"] == "caller"


def test_sk_file_patient_wins_and_mismatch_is_kept(tmp_path: Path) -> None:
    path = write_json(tmp_path / "ctx.json", sk_context(patient_id="patient_4"))
    (conversation,) = load_conversations(path, patient_id="patient_9")
    assert conversation.patient_id == "patient_4"
    assert conversation.metadata["patient_id_source"] == "file"
    assert conversation.metadata["patient_id_argument"] == "patient_9"


def test_sk_history_as_object_and_trial_in_file_name(tmp_path: Path) -> None:
    write_json(tmp_path / "chat_context_trial0_sim-hash-1.json", sk_context(as_string=False))
    write_json(tmp_path / "chat_context_trial1_sim-hash-1.json", sk_context())
    first, second = load_conversations(tmp_path)
    assert (first.id, first.trial) == ("sim-hash-1#trial0", 0)
    assert (second.id, second.trial) == ("sim-hash-1#trial1", 1)
    assert first.metadata["conversation_id"] == "sim-hash-1"
    assert first.messages[1].tool_calls[0].result == "Loaded 12 notes."


def test_sk_function_result_by_call_id_and_object_arguments(tmp_path: Path) -> None:
    history = {
        "messages": [
            {"role": "user", "items": [{"content_type": "text", "text": "go"}]},
            {
                "role": "ASSISTANT",
                "name": "Radiology",
                "items": [
                    {"content_type": "text", "text": "Looking."},
                    {
                        "content_type": "function_call",
                        "id": "c9",
                        "name": "images-find",
                        "arguments": {"n": 2},
                    },
                ],
            },
            {
                "role": "tool",
                "items": [{"content_type": "function_result", "call_id": "c9", "result": {"found": 2}}],
            },
        ]
    }
    path = write_json(tmp_path / "r.json", {"conversation_id": "r", "chat_history": history})
    (conversation,) = load_conversations(path)
    call = conversation.messages[1].tool_calls[0]
    assert conversation.messages[1].text == "Looking."
    assert call.arguments == {"n": 2}
    assert call.result == {"found": 2}
    assert conversation.messages[2].text == '{"found": 2}'


def test_sk_errors_are_located(tmp_path: Path) -> None:
    history = sk_history()
    history["messages"][2]["role"] = "robot"
    history["messages"][1]["items"][0]["arguments"] = "[1, 2]"
    path = write_json(tmp_path / "sk.json", {"conversation_id": "x", "chat_history": json.dumps(history)})
    with pytest.raises(DatasetError) as info:
        load_conversations(path)
    text = str(info.value)
    assert f"{path}: message 2: field 'items.0.arguments': expected a JSON object" in text
    assert f"{path}: message 3: field 'role': expected one of 'user', 'assistant', 'tool', 'system'" in text

    write_json(path, {"conversation_id": "x", "chat_history": "{oops"})
    with pytest.raises(DatasetError, match=r"sk\.json: field 'chat_history': not valid JSON"):
        load_conversations(path)


# --- folders, ids, datasets -------------------------------------------------------------------


def test_folder_mixing_formats(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    write_jsonl(folder / "a_native.jsonl", NATIVE)
    write_json(folder / "b_openai.json", OPENAI)
    write_json(folder / "c_sk.json", sk_context())
    (folder / "notes.txt").write_text("ignored")
    (folder / "sub").mkdir()
    write_json(folder / "sub" / "deep.json", OPENAI)  # not recursive
    conversations = load_conversations(folder, patient_id="patient_4")
    assert [c.id for c in conversations] == ["n1", "a_native#2", "oa-1", "sim-hash-1"]
    assert [c.metadata["format"] for c in conversations[2:]] == ["openai", "semantic_kernel"]
    assert all(c.patient_id == "patient_4" for c in conversations)
    assert conversations[2].source == str(folder / "b_openai.json")


def test_folder_without_conversation_files(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("x")
    with pytest.raises(DatasetError, match=r"has no \.json or \.jsonl files"):
        load_conversations(tmp_path)


def test_missing_path_and_unknown_suffix(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_conversations(tmp_path / "nope.json")
    other = tmp_path / "chat.csv"
    other.write_text("a,b\n")
    with pytest.raises(DatasetError, match="unknown conversation format"):
        load_conversations(other)


def test_duplicate_ids_are_an_error(tmp_path: Path) -> None:
    write_json(tmp_path / "a.json", sk_context())
    write_json(tmp_path / "b.json", sk_context())
    with pytest.raises(DatasetError) as info:
        load_conversations(tmp_path)
    text = str(info.value)
    assert f"{tmp_path / 'b.json'}: field 'id': conversation id 'sim-hash-1' is already used at" in text
    assert str(tmp_path / "a.json") in text
    assert "trial<N>" in text


def test_not_a_conversation(tmp_path: Path) -> None:
    path = write_json(tmp_path / "summary.json", {"timestamp": "x", "metrics": {}})
    with pytest.raises(
        DatasetError, match=r"summary\.json: not a conversation: .*found keys metrics, timestamp"
    ):
        load_conversations(path)


def test_conversations_dataset_and_load_dataset_folder(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a.jsonl", NATIVE)
    write_json(tmp_path / "b.json", OPENAI)
    dataset = conversations_dataset(tmp_path)
    assert dataset.source == str(tmp_path)
    assert [case.id for case in dataset] == ["n1", "a#2", "oa-1"]
    assert dataset.cases[0].response == "Timeline: 2019 GBM."
    assert dataset.cases[2].metadata["patient_id"] == "p9"
    back = conversation_of(dataset.cases[2])
    assert back is not None and back.messages[2].tool_calls[0].result == "K 5.9 mmol/L"

    via_loader = load_dataset(tmp_path)
    assert [case.id for case in via_loader] == ["n1", "a#2", "oa-1"]
    assert via_loader.fingerprint() == dataset.fingerprint()
    with pytest.raises(DatasetError, match="column mapping does not apply"):
        load_dataset(tmp_path, mapping={"q": "input"})
