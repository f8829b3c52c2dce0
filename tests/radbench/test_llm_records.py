"""The optional LLM record generator, against the local OpenAI-compatible test server."""

from __future__ import annotations

import pytest
from tests.radbench.test_records import PUBLISHED

from clineval.environments.radbench.llm_records import generate_record_llm
from clineval.judges.config import JudgeConfig, build_judge
from clineval.judges.structured import StructuredJudge
from clineval.testing import ScriptedServer

CASE = PUBLISHED["case-7"]["case"]


def _judge(server: ScriptedServer) -> StructuredJudge:
    config = JudgeConfig(provider="openai", model="records-model", base_url=server.base_url, max_attempts=1)
    judge = build_judge(config, cache_path=None)
    assert isinstance(judge, StructuredJudge)
    return judge


async def test_a_valid_reply_becomes_a_record(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"json": CASE}})
    judge = _judge(llm_server)
    record = await generate_record_llm(judge, "Head and Neck", "X-ray", "Sinusitis", record_id="llm-1")
    await judge.aclose()
    assert record.id == "llm-1" and record.disease == "Sinusitis"
    assert record.organ_biomarker.organ_quant == "+40 HU"
    prompt = llm_server.requests()[0]["body"]["messages"][1]["content"]
    assert "Anatomy: Head and Neck" in prompt and "Disease: Sinusitis" in prompt


async def test_a_record_for_another_pair_is_refused(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"json": {**CASE, "Modality": "CT"}}})
    judge = _judge(llm_server)
    with pytest.raises(ValueError, match="wrote a Head and Neck CT record"):
        await generate_record_llm(judge, "Head and Neck", "X-ray", "Sinusitis", record_id="llm-2")
    await judge.aclose()
    with pytest.raises(ValueError, match="not one of the benchmark's 22"):
        await generate_record_llm(judge, "Breast", "CT", "x", record_id="llm-3")
