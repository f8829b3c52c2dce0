"""The rubric metric through the local OpenAI-compatible server and the scripted judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from clineval.errors import ConfigError
from clineval.judges import JudgeConfig, ScriptedJudge, build_judge
from clineval.metrics import build_metric
from clineval.metrics.base import ScoreContext, score_case
from clineval.model import Case
from clineval.testing import ScriptedServer

CASE = Case(
    id="warf-1",
    input="Can Mrs. Diallo (on warfarin) take ibuprofen for knee pain?",
    response="Yes, ibuprofen 400 mg three times daily is fine.",
    reference="Avoid NSAIDs with warfarin: bleeding risk. Prefer paracetamol; check INR.",
    trajectory=[
        {"name": "get_medications", "arguments": {"patient_id": "P-104"}, "output": ["warfarin 5 mg"]}
    ],
)


async def test_rubric_through_the_http_judge(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script(
        {
            "default": {
                "json": {
                    "explanation": "Recommends an NSAID on warfarin without mentioning bleeding risk.",
                    "rating": 1,
                }
            }
        }
    )
    judge = build_judge(
        JudgeConfig(provider="openai", model="m", base_url=llm_server.base_url), cache_path=tmp_path / "c.db"
    )
    metric = build_metric("rubric")
    ctx = ScoreContext(judge)
    score = await score_case(metric, CASE, ctx)
    assert judge is not None
    await judge.aclose()
    assert score.value == 1.0 and score.label == "1"
    assert score.explanation is not None and "bleeding" in score.explanation
    assert score.details["normalized"] == 0.0 and score.details["prompt"] == "rubric@v1"
    assert score.details["judge_inputs"] == ["input", "reference", "trajectory", "response"]
    assert ctx.usage.calls == 1
    messages = llm_server.requests()[0]["body"]["messages"]
    system, user = messages[0]["content"], messages[1]["content"]
    assert "clinical_accuracy" in system and "5: meets every criterion" in system
    assert "## Response to evaluate\nYes, ibuprofen" in user
    assert 'get_medications({"patient_id": "P-104"}) -> ["warfarin 5 mg"]' in user
    schema = llm_server.requests()[0]["body"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["rating"]["enum"] == [5, 4, 3, 2, 1]


async def test_rating_outside_the_scale_is_reasked_then_unscored() -> None:
    judge = ScriptedJudge(default={"explanation": "great", "rating": 7})
    metric = build_metric("rubric")
    score = await score_case(metric, CASE, ScoreContext(judge))
    assert score.status == "error" and "rating" in (score.error or "")
    assert len(judge.requests) == 2


async def test_custom_criteria_scale_and_inputs() -> None:
    judge = ScriptedJudge(default={"explanation": "Follows the expected lookup.", "rating": 1})
    metric = build_metric(
        "follows_trajectory=rubric(criteria='The tool calls match the request.', "
        "rating_scale={1: 'follows', 0: 'does not'}, inputs=[input, trajectory])"
    )
    assert metric.name == "follows_trajectory"
    assert metric.requires == ("input", "trajectory", "response")
    score = await score_case(metric, CASE, ScoreContext(judge))
    assert score.value == 1.0 and score.details["normalized"] == 1.0
    user = judge.requests[0][1]["content"]
    assert "Reference answer" not in user and "Tool calls made by the system" in user
    missing = await score_case(metric, Case(id="x", input="q", response="r"), ScoreContext(judge))
    assert missing.status == "error" and "'trajectory'" in (missing.error or "")


async def test_rubric_without_judge_is_unscored_with_a_hint() -> None:
    score = await score_case(build_metric("rubric"), CASE, ScoreContext(None))
    assert score.status == "error" and "--judge" in (score.error or "")


def test_bad_settings() -> None:
    with pytest.raises(ConfigError, match="not a number"):
        build_metric("rubric(rating_scale={'good': 'x', 'bad': 'y'})")
    with pytest.raises(ConfigError, match="unknown input field"):
        build_metric("rubric(inputs=[question])")


def test_empty_criteria_is_an_error_and_sections_keep_their_order() -> None:
    with pytest.raises(ConfigError, match="criteria must not be empty"):
        build_metric("rubric(criteria={})")
    metric = build_metric("rubric(inputs=[response, reference, input])")
    judge = ScriptedJudge(default={"explanation": "ok", "rating": 3})
    import asyncio

    asyncio.run(score_case(metric, CASE, ScoreContext(judge)))
    user = judge.requests[0][1]["content"]
    assert (
        user.index("## Request") < user.index("## Reference answer") < user.index("## Response to evaluate")
    )


def test_empty_rating_scale_is_an_error() -> None:
    with pytest.raises(ConfigError, match="at least two ratings"):
        build_metric("rubric(rating_scale={})")
