"""The offline judge object: the Judge protocol, its refusal of free-form prompts, and config."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from clineval.judges import JudgeError, build_judge
from clineval.judges.base import Judge
from clineval.judges.config import JudgeConfig
from clineval.judges.offline import MEASURED_AGREEMENT, OFFLINE_NOTICE, OfflineJudge, OfflinePrimitives
from clineval.judges.primitives import Primitives


class Rating(BaseModel):
    rating: int


def test_is_a_judge_with_primitives() -> None:
    judge = OfflineJudge()
    assert isinstance(judge, Judge)
    assert judge.name == "offline"
    assert isinstance(judge.primitives, OfflinePrimitives) and isinstance(judge.primitives, Primitives)
    described = judge.describe()
    assert described["provider"] == "offline" and described["kind"] == "heuristic"


async def test_ask_explains_that_an_llm_judge_is_needed() -> None:
    judge = OfflineJudge()
    with pytest.raises(JudgeError) as info:
        await judge.ask([{"role": "user", "content": "Rate this answer."}], Rating)
    message = str(info.value)
    assert message.startswith("needs an LLM judge") and "--judge openai:MODEL" in message
    await judge.aclose()


def test_default_config_builds_the_offline_judge() -> None:
    judge = build_judge(JudgeConfig.model_validate("offline"))
    assert isinstance(judge, OfflineJudge)


def test_notice_and_agreement_placeholder() -> None:
    assert "heuristic" in OFFLINE_NOTICE and "LLM judge" in OFFLINE_NOTICE
    assert isinstance(MEASURED_AGREEMENT, dict)
