"""The OpenAI-compatible judge against a real local HTTP server with scripted answers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from clineval.errors import JudgeConfigurationError
from clineval.judges import JudgeConfig, JudgeError, StructuredJudge, build_judge
from clineval.testing import ScriptedServer


class Verdict(BaseModel):
    explanation: str
    rating: int


GOOD = {"explanation": "States the potassium correctly.", "rating": 5}
MESSAGES = [
    {"role": "system", "content": "You grade answers."},
    {"role": "user", "content": "Answer: potassium 5.9 mmol/L"},
]


def make_judge(server: ScriptedServer, tmp_path: Path | None = None, **settings: object) -> StructuredJudge:
    config = JudgeConfig(provider="openai", model="judge-model", base_url=server.base_url, **settings)  # type: ignore[arg-type]
    judge = build_judge(config, cache_path=(tmp_path / "cache.db") if tmp_path else None)
    assert isinstance(judge, StructuredJudge)
    return judge


async def test_valid_answer_and_request_shape(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"json": GOOD}})
    judge = make_judge(llm_server)
    answer = await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert answer.output == Verdict(**GOOD)
    assert answer.usage.calls == 1 and answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0
    body = llm_server.requests()[0]["body"]
    assert body["model"] == "judge-model"
    assert body["temperature"] == 0 and body["seed"] == 0
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["rating"]["type"] == "integer"
    # the schema instruction is appended to the caller's system message
    assert body["messages"][0]["content"].startswith("You grade answers.")
    assert "JSON schema" in body["messages"][0]["content"]


async def test_rate_limit_honours_retry_after(llm_server: ScriptedServer) -> None:
    llm_server.set_script(
        {"rules": [{"times": 1, "status": 429, "retry_after": 0.6}], "default": {"json": GOOD}}
    )
    judge = make_judge(llm_server, max_attempts=3)
    started = time.perf_counter()
    answer = await judge.ask(MESSAGES, Verdict)
    elapsed = time.perf_counter() - started
    await judge.aclose()
    assert answer.output.rating == 5
    assert elapsed >= 0.55
    assert llm_server.stats()["chat_requests"] == 2


async def test_server_errors_are_retried_then_succeed(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"rules": [{"times": 2, "status": 500}], "default": {"json": GOOD}})
    judge = make_judge(llm_server, max_attempts=3)
    answer = await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert answer.output.rating == 5
    assert llm_server.stats()["chat_requests"] == 3


async def test_retries_are_bounded(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"status": 503, "error_message": "overloaded"}})
    judge = make_judge(llm_server, max_attempts=3)
    with pytest.raises(JudgeError, match="HTTP 503"):
        await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert llm_server.stats()["chat_requests"] == 3


async def test_timeouts_are_retried_and_bounded(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"json": GOOD, "delay_s": 1.5}})
    judge = make_judge(llm_server, max_attempts=2, timeout_s=0.25)
    with pytest.raises(JudgeError, match="timed out"):
        await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert llm_server.stats()["chat_requests"] == 2


async def test_malformed_http_body_is_an_error_after_retries(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"malformed_body": True}})
    judge = make_judge(llm_server, max_attempts=2)
    with pytest.raises(JudgeError, match="not a valid chat completion"):
        await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert llm_server.stats()["chat_requests"] == 2


async def test_invalid_answer_is_reasked_once_with_the_error(llm_server: ScriptedServer) -> None:
    llm_server.set_script(
        {
            "rules": [{"times": 1, "content": '{"explanation": "ok", "rating": "high"}'}],
            "default": {"json": GOOD},
        }
    )
    judge = make_judge(llm_server)
    answer = await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert answer.output.rating == 5 and answer.usage.reasks == 1 and answer.usage.calls == 2
    reask = llm_server.requests()[1]["body"]["messages"]
    assert reask[-2] == {"role": "assistant", "content": '{"explanation": "ok", "rating": "high"}'}
    assert "rating" in reask[-1]["content"] and "could not be used" in reask[-1]["content"]


async def test_answer_invalid_twice_is_an_error_not_a_zero(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"content": "Rating: 4/5 because it is mostly right"}})
    judge = make_judge(llm_server)
    with pytest.raises(JudgeError, match="after one re-ask: the answer is not valid JSON") as info:
        await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert info.value.raw == "Rating: 4/5 because it is mostly right"
    assert info.value.usage.calls == 2
    assert llm_server.stats()["chat_requests"] == 2


async def test_fenced_json_is_accepted(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"content": "```json\n" + json.dumps(GOOD) + "\n```"}})
    judge = make_judge(llm_server)
    assert (await judge.ask(MESSAGES, Verdict)).output.rating == 5
    await judge.aclose()


async def test_cache_makes_a_second_run_free(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script({"default": {"json": GOOD}})
    first = make_judge(llm_server, tmp_path)
    assert not (await first.ask(MESSAGES, Verdict)).cached
    await first.aclose()
    second = make_judge(llm_server, tmp_path)
    answer = await second.ask(MESSAGES, Verdict)
    assert answer.cached and answer.usage.cached == 1 and answer.usage.calls == 0
    # a different prompt or schema is a different key
    await second.ask([*MESSAGES[:1], {"role": "user", "content": "Answer: sodium 139"}], Verdict)
    await second.aclose()
    assert llm_server.stats()["chat_requests"] == 2


async def test_failures_are_not_cached(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script({"default": {"content": "nope"}})
    judge = make_judge(llm_server, tmp_path)
    with pytest.raises(JudgeError):
        await judge.ask(MESSAGES, Verdict)
    llm_server.set_script({"default": {"json": GOOD}})
    assert (await judge.ask(MESSAGES, Verdict)).output.rating == 5
    await judge.aclose()


@pytest.mark.parametrize(
    ("status", "match"), [(401, "credentials"), (403, "credentials"), (404, "does not know model")]
)
async def test_configuration_errors_stop_at_once(llm_server: ScriptedServer, status: int, match: str) -> None:
    llm_server.set_script({"default": {"status": status}})
    judge = make_judge(llm_server, max_attempts=4)
    with pytest.raises(JudgeConfigurationError, match=match):
        await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert llm_server.stats()["chat_requests"] == 1


async def test_unsupported_response_format_falls_back(llm_server: ScriptedServer) -> None:
    llm_server.set_script(
        {
            "rules": [
                {
                    "times": 1,
                    "status": 400,
                    "error_message": "response_format type json_schema is not supported",
                }
            ],
            "default": {"json": GOOD},
        }
    )
    judge = make_judge(llm_server)
    assert (await judge.ask(MESSAGES, Verdict)).output.rating == 5
    assert (await judge.ask(MESSAGES[1:], Verdict)).output.rating == 5
    await judge.aclose()
    formats = [r["body"].get("response_format", {}).get("type") for r in llm_server.requests()]
    assert formats == ["json_schema", "json_object", "json_object"]


# What llama-cpp-python's server does: json_schema is refused with HTTP 500 naming
# response_format, and {"type": "json_object", "schema": ...} is honoured with a grammar.
REFUSE_JSON_SCHEMA = {
    "response_format": "json_schema",
    "status": 500,
    "error_message": "response_format.type: Input should be 'text' or 'json_object'",
}


async def test_json_schema_refused_falls_back_to_json_object_with_the_schema(
    llm_server: ScriptedServer,
) -> None:
    llm_server.set_script(
        {
            "rules": [REFUSE_JSON_SCHEMA, {"response_format": "json_object", "json": GOOD}],
            "default": {"status": 400, "error_message": "expected a json_object request"},
        }
    )
    judge = make_judge(llm_server, max_attempts=3)
    assert (await judge.ask(MESSAGES, Verdict)).output.rating == 5
    # the fallback sticks: the next call goes straight to json_object with the schema
    assert (await judge.ask(MESSAGES[1:], Verdict)).output.rating == 5
    await judge.aclose()
    formats = [r["body"].get("response_format") for r in llm_server.requests()]
    # a refused response_format is not retried: one request, then the next stage
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object"]
    schema = formats[0]["json_schema"]["schema"]
    assert formats[1] == formats[2] == {"type": "json_object", "schema": schema}
    assert schema["properties"]["rating"]["type"] == "integer"


async def test_fallback_chain_ends_with_plain_json_object_then_text(llm_server: ScriptedServer) -> None:
    refuse = {"status": 400, "error_message": "unsupported response_format"}
    llm_server.set_script(
        {
            "rules": [
                {"response_format": "json_schema", **refuse},
                {"response_format": "json_object", "times": 2, **refuse},
                {"response_format": "text", "json": GOOD},
            ],
        }
    )
    judge = make_judge(llm_server)
    assert (await judge.ask(MESSAGES, Verdict)).output.rating == 5
    await judge.aclose()
    formats = [r["body"].get("response_format") for r in llm_server.requests()]
    assert formats[0]["type"] == "json_schema"
    assert formats[1]["type"] == "json_object" and "schema" in formats[1]
    assert formats[2] == {"type": "json_object"}
    assert formats[3] is None


async def test_a_late_refusal_never_moves_the_fallback_back(llm_server: ScriptedServer) -> None:
    import asyncio

    refuse = {"status": 400, "error_message": "unsupported response_format"}
    llm_server.set_script(
        {
            "rules": [
                # the slow request's json_schema refusal arrives after the fast request has
                # already fallen back past json_object with the schema
                {"pattern": "slow", "response_format": "json_schema", "delay_s": 0.5, **refuse},
                {"response_format": "json_schema", **refuse},
                {"response_format": "json_object", "times": 1, **refuse},
            ],
            "default": {"json": GOOD},
        }
    )
    judge = make_judge(llm_server, concurrency=2)
    slow = asyncio.ensure_future(judge.ask([{"role": "user", "content": "slow"}], Verdict))
    await asyncio.sleep(0.05)
    fast = await judge.ask([{"role": "user", "content": "fast"}], Verdict)
    assert fast.output.rating == 5 and (await slow).output.rating == 5
    assert (await judge.ask(MESSAGES, Verdict)).output.rating == 5
    await judge.aclose()
    requests = llm_server.requests()
    sent = [(r["body"]["messages"][-1]["content"], r["body"].get("response_format")) for r in requests]
    plain = {"type": "json_object"}
    assert [f for text, f in sent if text == "fast"][-1] == plain
    # after its late refusal the slow request goes on with plain JSON mode, not with the schema
    assert [f for text, f in sent if text == "slow"][-1] == plain
    assert sent[-1][1] == plain


async def test_adaptive_concurrency_backs_off_on_rate_limits(llm_server: ScriptedServer) -> None:
    import asyncio

    llm_server.set_script(
        {
            "rules": [{"times": 8, "status": 429, "retry_after": 0.2}],
            "default": {"json": GOOD, "delay_s": 0.05},
        }
    )
    judge = make_judge(llm_server, concurrency=8, max_attempts=4)
    answers = await asyncio.gather(
        *[judge.ask([{"role": "user", "content": f"case {i}"}], Verdict) for i in range(16)]
    )
    backend = judge.backend
    await judge.aclose()
    assert all(a.output.rating == 5 for a in answers)
    assert backend.limiter.rate_limited_count >= 1  # type: ignore[attr-defined]
    assert backend.limiter.lowest_limit <= 4  # type: ignore[attr-defined]


async def test_azure_openai_from_environment(
    llm_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", llm_server.base_url.removesuffix("/v1"))
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-test-key")
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT", "gpt-clinical")
    llm_server.set_script({"default": {"json": GOOD}})
    judge = build_judge(JudgeConfig.model_validate("azure"))
    assert judge is not None and judge.name == "azure:gpt-clinical"
    assert (await judge.ask(MESSAGES, Verdict)).output.rating == 5
    await judge.aclose()
    request = llm_server.requests()[0]
    assert request["path"].startswith("/openai/deployments/gpt-clinical/chat/completions")


def test_azure_missing_settings_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from clineval.errors import ConfigError

    for name in (
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_KEY",
        "AZURE_OPENAI_DEPLOYMENT",
        "AZURE_OPENAI_CHAT_DEPLOYMENT_ID",
    ):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(
        ConfigError, match="AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY, AZURE_OPENAI_DEPLOYMENT"
    ):
        build_judge(JudgeConfig.model_validate("azure"))


async def test_azure_endpoint_and_deployment_from_the_spec(
    llm_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_DEPLOYMENT", "AZURE_OPENAI_CHAT_DEPLOYMENT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-test-key")
    llm_server.set_script({"default": {"json": GOOD}})
    config = JudgeConfig(
        provider="azure", model="gpt-notes", base_url=llm_server.base_url.removesuffix("/v1")
    )
    judge = build_judge(config)
    assert judge is not None
    assert (await judge.ask(MESSAGES, Verdict)).output.rating == 5
    await judge.aclose()
    assert llm_server.requests()[0]["path"].startswith("/openai/deployments/gpt-notes/")
