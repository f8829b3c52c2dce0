"""The scripted OpenAI-compatible server, driven through the real ``openai`` SDK."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

from clineval.testing import ScriptedServer, ScriptError

MODEL = "gpt-test"


@pytest.fixture
async def client(llm_server: ScriptedServer) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(base_url=llm_server.base_url, api_key="test", max_retries=0) as api:
        yield api


def _messages(user: str, system: str | None = None) -> list[ChatCompletionMessageParam]:
    messages: list[ChatCompletionMessageParam] = []
    if system is not None:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": user})
    return messages


async def _complete(
    api: openai.AsyncOpenAI, user: str, *, model: str = MODEL, system: str | None = None
) -> ChatCompletion:
    return await api.chat.completions.create(model=model, messages=_messages(user, system))


async def _ask(
    api: openai.AsyncOpenAI, user: str, *, model: str = MODEL, system: str | None = None
) -> str | None:
    return (await _complete(api, user, model=model, system=system)).choices[0].message.content


async def test_content_round_trips(llm_server: ScriptedServer, client: openai.AsyncOpenAI) -> None:
    llm_server.set_script({"rules": [{"content": "The answer is 42."}]})

    completion = await _complete(client, "what is the answer", system="be brief")

    assert completion.object == "chat.completion"
    assert completion.model == MODEL
    assert completion.id
    assert completion.created > 0
    choice = completion.choices[0]
    assert choice.index == 0
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.content == "The answer is 42."
    assert completion.usage is not None
    # word counts: "be brief" + "what is the answer" and "The answer is 42."
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (6, 4)
    assert completion.usage.total_tokens == 10


def test_sync_client_and_path_without_v1(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"content": "sync ok"}})
    root = llm_server.base_url.removesuffix("/v1")
    for base_url in (llm_server.base_url, root):
        with openai.OpenAI(base_url=base_url, api_key="test", max_retries=0) as api:
            completion = api.chat.completions.create(model=MODEL, messages=_messages("hi"))
        assert completion.choices[0].message.content == "sync ok"
    assert [r["path"] for r in llm_server.requests()] == [
        "/v1/chat/completions",
        "/chat/completions",
    ]


async def test_rule_order_pattern_model_and_times(
    llm_server: ScriptedServer, client: openai.AsyncOpenAI
) -> None:
    llm_server.set_script(
        {
            "rules": [
                {"pattern": r"capital\s+of", "times": 2, "content": "first two"},
                {"pattern": "capital", "model": "other-model", "content": "other model"},
                {"pattern": "CAPITAL", "content": "after the first two"},
                {"pattern": "never reached", "content": "unused"},
            ],
            "default": {"content": "default"},
        }
    )

    assert await _ask(client, "The Capital of France?") == "first two"
    assert await _ask(client, "the capital of Peru?") == "first two"
    # times exhausted: falls through; the model rule does not match gpt-test
    assert await _ask(client, "the capital of Chad?") == "after the first two"
    assert await _ask(client, "the capital of Chad?", model="other-model") == "other model"
    # the pattern is searched in every message, the system one included
    assert await _ask(client, "and Mali?", system="Name the capital.") == "after the first two"
    assert await _ask(client, "unrelated") == "default"


async def test_rule_condition_on_response_format(
    llm_server: ScriptedServer, client: openai.AsyncOpenAI
) -> None:
    llm_server.set_script(
        {
            "rules": [
                {"response_format": "json_schema", "status": 400, "error_message": "no json_schema here"},
                {"response_format": "json_object", "content": "json mode"},
                {"response_format": "text", "content": "plain text"},
            ],
        }
    )
    schema_format: Any = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    with pytest.raises(openai.BadRequestError, match="no json_schema here"):
        await client.chat.completions.create(
            model=MODEL, messages=_messages("hi"), response_format=schema_format
        )
    answer = await client.chat.completions.create(
        model=MODEL, messages=_messages("hi"), response_format={"type": "json_object"}
    )
    assert answer.choices[0].message.content == "json mode"
    # "text" matches an explicit text format and a request without any format
    answer = await client.chat.completions.create(
        model=MODEL, messages=_messages("hi"), response_format={"type": "text"}
    )
    assert answer.choices[0].message.content == "plain text"
    assert await _ask(client, "hi") == "plain text"


async def test_no_rule_and_no_default_is_a_400(
    llm_server: ScriptedServer, client: openai.AsyncOpenAI
) -> None:
    llm_server.set_script({"rules": [{"pattern": "only this", "content": "x"}]})
    with pytest.raises(openai.BadRequestError, match="no scripted answer"):
        await _ask(client, "something else")


async def test_json_answer(llm_server: ScriptedServer, client: openai.AsyncOpenAI) -> None:
    verdict = {"verdict": "supported", "score": 0.9, "reasons": ["a", "b"]}
    llm_server.set_script({"rules": [{"json": verdict}], "default": {"content": "{not json"}})

    answer = await _ask(client, "judge this")

    assert answer is not None
    assert json.loads(answer) == verdict


async def test_tool_calls_answer(llm_server: ScriptedServer, client: openai.AsyncOpenAI) -> None:
    llm_server.set_script(
        {
            "rules": [
                {"pattern": "5.9 mmol", "content": "Potassium is 5.9 mmol/L."},
                {"tool_calls": [{"name": "get_labs", "arguments": {"mrn": "0042"}, "id": "call_k"}]},
            ]
        }
    )

    first = (await _complete(client, "potassium of 0042?")).choices[0]

    assert first.finish_reason == "tool_calls"
    assert first.message.content is None
    assert first.message.tool_calls is not None
    (call,) = first.message.tool_calls
    assert call.type == "function" and call.id == "call_k"
    assert (call.function.name, call.function.arguments) == ("get_labs", '{"mrn": "0042"}')
    assert await _ask(client, "K 5.9 mmol/L") == "Potassium is 5.9 mmol/L."


async def test_rate_limit_with_retry_after(llm_server: ScriptedServer, client: openai.AsyncOpenAI) -> None:
    llm_server.set_script({"default": {"status": 429, "retry_after": 7, "error_message": "slow"}})

    with pytest.raises(openai.RateLimitError) as caught:
        await _ask(client, "hello")

    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.body == {
        "message": "slow",
        "type": "rate_limit_exceeded",
        "code": "rate_limit_exceeded",
    }


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (404, openai.NotFoundError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
async def test_error_statuses(
    llm_server: ScriptedServer,
    client: openai.AsyncOpenAI,
    status: int,
    error: type[openai.APIStatusError],
) -> None:
    llm_server.set_script({"default": {"status": status}})
    with pytest.raises(error) as caught:
        await _ask(client, "hello")
    assert caught.value.status_code == status
    assert "retry-after" not in caught.value.response.headers


async def test_malformed_body(llm_server: ScriptedServer, client: openai.AsyncOpenAI) -> None:
    llm_server.set_script({"default": {"malformed_body": True}})
    # openai 3.x does not wrap this: with Content-Type application/json the SDK calls
    # response.json() unguarded, so the plain json.JSONDecodeError (a ValueError, not an
    # openai.APIError) reaches the caller. With any other Content-Type it would instead
    # return the raw text as the "completion" (unless _strict_response_validation is on).
    with pytest.raises(json.JSONDecodeError):
        await _ask(client, "hello")


async def test_delays(llm_server: ScriptedServer, client: openai.AsyncOpenAI) -> None:
    llm_server.set_script({"rules": [{"pattern": "slow", "delay_s": 0.2, "content": "late"}], "delay_s": 0.1})
    started = time.perf_counter()
    assert await _ask(client, "slow please") == "late"
    assert time.perf_counter() - started >= 0.3  # rule delay + script delay

    llm_server.set_script({"default": {"content": "late", "delay_s": 0.3}})
    started = time.perf_counter()
    assert await _ask(client, "anything") == "late"
    assert time.perf_counter() - started >= 0.3


async def test_delay_past_the_client_timeout(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"content": "too late", "delay_s": 0.3}})
    async with openai.AsyncOpenAI(
        base_url=llm_server.base_url, api_key="test", max_retries=0, timeout=0.1
    ) as api:
        with pytest.raises(openai.APITimeoutError):
            await _ask(api, "hello")
    # The server still finishes the abandoned request: wait for it, so that it does not
    # count as in flight in the next test's stats.
    for _ in range(250):
        if llm_server.stats()["in_flight"] == 0:
            break
        await asyncio.sleep(0.02)
    assert llm_server.stats()["in_flight"] == 0


async def test_request_log_and_stats(llm_server: ScriptedServer, client: openai.AsyncOpenAI) -> None:
    llm_server.set_script({"default": {"content": "ok", "delay_s": 0.2}})
    before = time.time()

    answers = await asyncio.gather(*(_ask(client, f"question {i}") for i in range(8)))

    assert answers == ["ok"] * 8
    stats = llm_server.stats()
    assert stats["chat_requests"] == 8
    assert stats["in_flight"] == 0
    assert stats["max_in_flight"] >= 5  # 8 if the client opened 8 connections at once
    log = llm_server.requests()
    assert len(log) == 8
    assert {entry["path"] for entry in log} == {"/v1/chat/completions"}
    assert sorted(entry["body"]["messages"][0]["content"] for entry in log) == sorted(
        f"question {i}" for i in range(8)
    )
    assert all(entry["body"]["model"] == MODEL for entry in log)
    stamps = [entry["timestamp"] for entry in log]
    assert stamps == sorted(stamps)
    assert stamps[0] >= before - 1.0


async def test_log_keeps_arrival_order(llm_server: ScriptedServer, client: openai.AsyncOpenAI) -> None:
    llm_server.set_script({"default": {"content": "ok"}})
    for text in ("one", "two", "three"):
        await _ask(client, text, model=f"model-{text}")

    log = llm_server.requests()

    assert [entry["body"]["model"] for entry in log] == ["model-one", "model-two", "model-three"]


async def test_reset_clears_rules_log_and_counters(
    llm_server: ScriptedServer, client: openai.AsyncOpenAI
) -> None:
    llm_server.set_script({"rules": [{"content": "ok"}]})
    await _ask(client, "hello")
    assert llm_server.stats()["chat_requests"] == 1

    llm_server.reset()

    assert llm_server.requests() == []
    assert llm_server.stats() == {"chat_requests": 0, "in_flight": 0, "max_in_flight": 0}
    with pytest.raises(openai.BadRequestError, match="no scripted answer"):
        await _ask(client, "hello")


async def test_set_script_restarts_times_counters(
    llm_server: ScriptedServer, client: openai.AsyncOpenAI
) -> None:
    script: dict[str, Any] = {
        "rules": [{"times": 1, "content": "once"}],
        "default": {"content": "again"},
    }
    llm_server.set_script(script)
    assert [await _ask(client, "q"), await _ask(client, "q")] == ["once", "again"]
    llm_server.set_script(script)
    assert await _ask(client, "q") == "once"


async def test_azure_deployment_path(llm_server: ScriptedServer) -> None:
    llm_server.set_script(
        {"rules": [{"model": "my-deployment", "content": "from azure"}]},
    )
    async with openai.AsyncAzureOpenAI(
        azure_endpoint=llm_server.base_url.removesuffix("/v1"),
        api_key="x",
        api_version="2024-10-21",
        max_retries=0,
    ) as api:
        completion = await api.chat.completions.create(model="my-deployment", messages=_messages("hello"))

    assert completion.choices[0].message.content == "from azure"
    assert llm_server.requests()[-1]["path"] == "/openai/deployments/my-deployment/chat/completions"


async def test_models_list(llm_server: ScriptedServer, client: openai.AsyncOpenAI) -> None:
    llm_server.set_script({"rules": [{"model": "judge-a", "content": "x"}]})
    page = await client.models.list()
    assert [model.id for model in page.data] == ["scripted-model", "judge-a"]


async def test_streaming_is_refused(llm_server: ScriptedServer, client: openai.AsyncOpenAI) -> None:
    llm_server.set_script({"default": {"content": "x"}})
    with pytest.raises(openai.BadRequestError, match="streaming"):
        await client.chat.completions.create(model=MODEL, messages=_messages("hi"), stream=True)


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ({"rules": [{"pattern": "(", "content": "x"}]}, "not a valid regex"),
        ({"rules": [{"content": "x", "json": {}}]}, "exactly one of"),
        ({"rules": [{"pattern": "x"}]}, "exactly one of"),
        ({"rules": [{"content": "x", "time": 1}]}, "unknown key"),
        ({"rules": [{"content": "x", "times": 0}]}, "at least 1"),
        ({"rules": [{"content": "x", "response_format": {"type": "text"}}]}, "must be a string"),
        ({"rules": [{"status": 200}]}, "HTTP error status"),
        ({"rules": [{"content": "x", "retry_after": 1}]}, "only go with status"),
        ({"default": {"pattern": "x", "content": "x"}}, "unknown key"),
        ({"delay_s": -1}, "delay_s"),
        ({"rule": []}, "unknown key"),
        ({"rules": [{"tool_calls": []}]}, "non-empty list"),
        ({"rules": [{"tool_calls": [{"arguments": {}}]}]}, "non-empty string 'name'"),
        ({"rules": [{"tool_calls": [{"name": "f", "args": {}}]}]}, "unknown key"),
    ],
)
def test_invalid_scripts_are_refused(llm_server: ScriptedServer, script: dict[str, Any], reason: str) -> None:
    with pytest.raises(ScriptError, match=reason):
        llm_server.set_script(script)


def test_own_process_with_initial_script_and_base_delay() -> None:
    with ScriptedServer({"default": {"content": "hello"}}, delay_s=0.1) as server:
        process = server._process
        assert process is not None
        with openai.OpenAI(base_url=server.base_url, api_key="t", max_retries=0) as api:
            started = time.perf_counter()
            completion = api.chat.completions.create(model=MODEL, messages=_messages("hi"))
            assert completion.choices[0].message.content == "hello"
            assert time.perf_counter() - started >= 0.1
            server.reset()  # the rules go, the base delay stays
            server.set_script({"rules": [{"content": "again"}]})
            started = time.perf_counter()
            completion = api.chat.completions.create(model=MODEL, messages=_messages("hi"))
            assert time.perf_counter() - started >= 0.1
    assert process.poll() is not None
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.base_url


def test_start_failure_reports_the_child_stderr() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = ScriptedServer(port=taken.getsockname()[1])
        with pytest.raises(RuntimeError, match="stderr") as caught:
            server.start(timeout_s=10)
    assert "address" in str(caught.value).lower()
