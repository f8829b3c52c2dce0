"""The metric protocol: plain functions, return conversion, and safe scoring of one case."""

from __future__ import annotations

from typing import Any

import pytest

from clineval.errors import ConfigError
from clineval.judges import ScriptedJudge
from clineval.metrics.base import FunctionMetric, ScoreContext, score_case, to_score
from clineval.model import AgentRun, Case, Score

CASE = Case(
    id="k1",
    input="Latest potassium?",
    response="Potassium is 5.9 mmol/L.",
    reference="Potassium 5.9 mmol/L, above range.",
    contexts=["K 5.9 (3.5-5.1)", "Na 139"],
)


def test_to_score_conversions() -> None:
    assert to_score(0.25, "m") == Score(value=0.25)
    assert to_score(True, "m") == Score(value=1.0)
    assert to_score({"m": 0.5, "precision": 1.0, "reason": "half", "rows": [1]}, "m") == Score(
        value=0.5, sub_scores={"precision": 1.0}, explanation="half", details={"rows": [1]}
    )
    assert to_score({"only": 3}, "m") == Score(value=3.0)
    assert to_score({"a": 1, "b": 2}, "m") == Score(sub_scores={"a": 1.0, "b": 2.0})
    assert to_score({"error": "no dose found"}, "m").status == "error"
    with pytest.raises(TypeError, match="returned None"):
        to_score(None, "m")
    with pytest.raises(TypeError, match="returned a str"):
        to_score("high", "m")


async def test_function_metric_binds_fields_aliases_and_settings() -> None:
    def dose_mentioned(response: str, ground_truth: str, context: str = "", *, unit: str) -> dict[str, Any]:
        return {
            "score": float(unit in response),
            "ref_has_unit": float(unit in ground_truth),
            "context_chars": len(context),
        }

    metric = FunctionMetric(dose_mentioned, unit="mmol/L")
    assert metric.name == "dose_mentioned"
    assert metric.requires == ("response", "reference")
    score = await score_case(metric, CASE, ScoreContext())
    assert score.value == 1.0
    assert score.sub_scores == {"ref_has_unit": 1.0, "context_chars": float(len("K 5.9 (3.5-5.1)\n\nNa 139"))}


def test_function_metric_settings_are_checked() -> None:
    def needs_threshold(response: str, *, threshold: float) -> float:
        return 0.0

    with pytest.raises(ConfigError, match="needs the setting 'threshold'"):
        FunctionMetric(needs_threshold)
    with pytest.raises(ConfigError, match="has no setting 'treshold'"):
        FunctionMetric(needs_threshold, threshold=0.5, treshold=1)


async def test_async_function_and_injected_case() -> None:
    async def same_id(case: Case) -> float:
        return float(case.id == "k1")

    assert (await score_case(FunctionMetric(same_id), CASE, ScoreContext())).value == 1.0


async def test_missing_required_field_is_an_error_naming_it() -> None:
    def overlap(response: str, reference: str) -> float:
        return 1.0

    score = await score_case(FunctionMetric(overlap), Case(id="x", response="r"), ScoreContext())
    assert score.status == "error"
    assert "'reference'" in (score.error or "") and "overlap" in (score.error or "")
    assert score.details["missing_fields"] == ["reference"]


async def test_agent_failure_is_named_instead_of_the_missing_response() -> None:
    def overlap(response: str, reference: str) -> float:
        return 1.0

    failed = Case(id="x", reference="r", agent_run=AgentRun(latency_s=0.1, failed=True, error="Timeout"))
    score = await score_case(FunctionMetric(overlap), failed, ScoreContext())
    assert score.error == "the agent failed on this case: Timeout"


async def test_exceptions_become_error_scores_not_zero() -> None:
    def broken(response: str) -> float:
        raise ZeroDivisionError("division by zero")

    score = await score_case(FunctionMetric(broken), CASE, ScoreContext())
    assert score.status == "error" and score.value is None
    assert score.error == "ZeroDivisionError: division by zero"
    assert "ZeroDivisionError" in score.details["traceback"]


async def test_judge_metric_without_judge_is_unscored() -> None:
    async def judged(response: str, judge: Any) -> float:
        return 1.0

    score = await score_case(FunctionMetric(judged), CASE, ScoreContext(judge=None))
    assert score.status == "error" and "needs an LLM judge" in (score.error or "")


async def test_judge_usage_is_recorded_per_score() -> None:
    from pydantic import BaseModel

    class Verdict(BaseModel):
        ok: bool

    async def judged(response: str, judge: Any) -> float:
        answer = await judge.ask([{"role": "user", "content": response}], Verdict)
        return float(answer.output.ok)

    judge = ScriptedJudge({"5.9": ["not json", {"ok": True}]})
    ctx = ScoreContext(judge)
    score = await score_case(FunctionMetric(judged), CASE, ctx)
    assert score.value == 1.0
    assert ctx.usage.calls == 2 and ctx.usage.reasks == 1 and ctx.usage.prompt_tokens > 0


async def test_judge_failure_is_unscored_with_the_raw_answer() -> None:
    from pydantic import BaseModel

    class Verdict(BaseModel):
        ok: bool

    async def judged(response: str, judge: Any) -> float:
        return float((await judge.ask([{"role": "user", "content": response}], Verdict)).output.ok)

    judge = ScriptedJudge(default="I think it is fine")
    score = await score_case(FunctionMetric(judged), CASE, ScoreContext(judge))
    assert score.status == "error"
    assert (score.error or "").startswith("unscored: judge answer rejected after one re-ask")
    assert score.details["judge_raw"] == "I think it is fine"


def test_dict_with_error_keeps_the_number_in_details() -> None:
    score = to_score({"score": 0.4, "error": "the note was truncated"}, "m")
    assert score.status == "error" and score.details["value"] == 0.4
