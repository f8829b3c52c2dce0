"""Case and tool-call models: accepted spellings, missing vs empty, clear validation."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from clineval.model import Case, GoldFact, ToolCall


def test_tool_call_accepts_common_spellings() -> None:
    seed = ToolCall.model_validate({"tool_name": "get_labs", "tool_input": {"test": "K"}})
    openai_style = ToolCall.model_validate(
        {"id": "c1", "type": "function", "function": {"name": "get_labs", "arguments": '{"test": "K"}'}}
    )
    plain = ToolCall.model_validate({"name": "get_labs", "arguments": {"test": "K"}, "result": 5.9})
    adk = ToolCall.model_validate({"name": "get_labs", "args": {"test": "K"}})
    assert seed.name == openai_style.name == plain.name == adk.name == "get_labs"
    assert seed.arguments == openai_style.arguments == plain.arguments == adk.arguments == {"test": "K"}
    assert plain.output == 5.9
    assert openai_style.id == "c1"
    assert ToolCall.model_validate("search_patient").arguments == {}


def test_tool_call_rejects_bad_arguments() -> None:
    with pytest.raises(ValidationError, match="not valid JSON"):
        ToolCall.model_validate({"name": "x", "arguments": "{oops"})
    with pytest.raises(ValidationError, match="JSON object"):
        ToolCall.model_validate({"name": "x", "arguments": "[1, 2]"})
    with pytest.raises(ValidationError, match="both"):
        ToolCall.model_validate({"name": "x", "tool_name": "y"})
    with pytest.raises(ValidationError):
        ToolCall.model_validate({"name": ""})


def test_case_missing_is_none_and_empty_is_kept() -> None:
    case = Case(id=7, response="", trajectory=[], contexts="only one")
    assert case.id == "7"
    assert case.has("response") and case.response == ""
    assert case.has("trajectory") and case.trajectory == []
    assert not case.has("reference")
    assert case.contexts == ["only one"]


def test_case_forbids_unknown_fields_and_reads_conversations() -> None:
    with pytest.raises(ValidationError, match="referenc"):
        Case.model_validate({"id": "a", "referenc": "typo"})
    case = Case.model_validate(
        {
            "id": "a",
            "input": [
                {"role": "user", "content": "Any allergies?"},
                {"role": "assistant", "name": "history_agent", "content": None},
            ],
        }
    )
    assert case.input_text() == "user: Any allergies?\nhistory_agent: "


def test_gold_facts_from_strings_or_objects() -> None:
    case = Case(id="g", gold_facts=["EGFR exon 19 deletion", {"text": "stage IV", "importance": "high"}])
    assert case.gold_facts == [
        GoldFact(text="EGFR exon 19 deletion"),
        GoldFact(text="stage IV", importance="high"),
    ]
    with pytest.raises(ValidationError):
        Case(id="g", gold_facts=[{"text": "x", "importance": "urgent"}])
