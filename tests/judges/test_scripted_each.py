"""`{each: ITEM}` answers: one scripted rule answers a question about any number of items,
in the scripted judge and in the scripted OpenAI-compatible server alike."""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING

import pytest

from clineval.judges.base import JudgeError
from clineval.judges.config import JudgeConfig, build_judge
from clineval.judges.llm_primitives import LLMPrimitives, entailment_schema
from clineval.judges.scripted import ScriptedJudge, expand_each

if TYPE_CHECKING:
    from clineval.testing import ScriptedServer

EACH = {"verdicts": {"each": {"label": "partial", "reason": "missing", "explanation": "scripted"}}}


def test_expand_each_numbers_one_item_per_requested_item() -> None:
    schema = entailment_schema(3).model_json_schema()
    expanded = expand_each({**EACH, "note": "kept"}, schema)
    assert [v["id"] for v in expanded["verdicts"]] == [1, 2, 3]
    assert expanded["verdicts"][2] == {
        "id": 3,
        "label": "partial",
        "reason": "missing",
        "explanation": "scripted",
    }
    assert expanded["note"] == "kept"


def test_expand_each_on_a_field_of_no_set_length_is_an_error() -> None:
    message = re.escape("'verdicts: {each: ...}' answers a question about a list")
    with pytest.raises(JudgeError, match=message):
        expand_each(EACH, {"properties": {"verdicts": {"type": "array"}}})


def test_the_scripted_judge_answers_any_number_of_facts() -> None:
    prims = LLMPrimitives(ScriptedJudge(default=EACH))
    for n in (1, 4):
        verdicts = asyncio.run(prims.check_facts([f"fact {i}" for i in range(n)], "the text"))
        assert [v.label for v in verdicts] == ["partial"] * n


def test_the_scripted_server_expands_each_from_the_request_schema(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"rules": [{"pattern": "check facts", "json": EACH}]})
    judge = build_judge(JudgeConfig.model_validate(f"openai:scripted@{llm_server.base_url}"))
    prims = LLMPrimitives(judge)

    async def ask() -> list[str]:
        try:
            verdicts = await prims.check_facts(
                ["aspirin daily", "ramipril stopped", "no allergy"], "the text"
            )
        finally:
            await judge.aclose()
        return [v.label for v in verdicts]

    assert asyncio.run(ask()) == ["partial"] * 3
