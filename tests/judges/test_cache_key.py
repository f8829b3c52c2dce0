"""The judge cache key: a hash of the request body as sent, stable within a key version."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel

from clineval.judges import JudgeCache, JudgeConfig, StructuredJudge, build_judge
from clineval.judges.base import Usage, as_messages
from clineval.judges.cache import KEY_VERSION, key_prefix, request_key
from clineval.judges.openai_compat import OpenAIBackend
from clineval.judges.structured import json_schema_of, with_schema_instruction
from clineval.prompts import load_prompt
from clineval.testing import ScriptedServer


class Verdict(BaseModel):
    explanation: str
    rating: int


class OtherVerdict(BaseModel):
    explanation: str
    rating: int
    confident: bool


GOOD = {"explanation": "States the potassium correctly.", "rating": 5, "confident": True}
MESSAGES = [
    {"role": "system", "content": "You grade answers."},
    {"role": "user", "content": "Answer: potassium 5.9 mmol/L"},
]


def make_judge(server: ScriptedServer, cache: Path, **settings: object) -> StructuredJudge:
    fields = {"provider": "openai", "model": "judge-model", "base_url": server.base_url, **settings}
    judge = build_judge(JudgeConfig.model_validate(fields), cache_path=cache)
    assert isinstance(judge, StructuredJudge)
    return judge


def test_the_key_is_a_sha256_of_version_identity_and_body() -> None:
    prefix = key_prefix({"backend": {"model": "m"}, "mode": "json_schema"})
    assert prefix == KEY_VERSION + b'{"backend": {"model": "m"}, "mode": "json_schema"}\n'
    body = b'{"model": "m", "messages": []}' * 200  # longer than one hashing piece (2 KiB)
    assert request_key(prefix, body) == hashlib.sha256(prefix + body).hexdigest()
    assert request_key(prefix, b"") == hashlib.sha256(prefix).hexdigest()


def test_the_key_of_a_fixed_request_does_not_change_within_a_version() -> None:
    # A guard: if this value changes, every cached answer is asked again. Change KEY_VERSION
    # on purpose when the keying changes, and update the value here.
    backend = OpenAIBackend(model="judge-model", base_url="http://127.0.0.1:9/v1")
    judge = StructuredJudge(backend, cache=None)
    msgs = with_schema_instruction(as_messages(MESSAGES), Verdict)
    key, body = judge._request_key(msgs, Verdict, json_schema_of(Verdict), None)
    assert body is not None and json.loads(body)["messages"] == msgs
    assert (
        key
        == hashlib.sha256(
            KEY_VERSION
            + json.dumps(
                {"backend": backend.identity(), "mode": "json_schema"}, sort_keys=True, ensure_ascii=False
            ).encode()
            + b"\n"
            + body
        ).hexdigest()
    )
    assert key == "a7ea310286d05a41fffefb62b736f3729ef703029832961d4d5ef04bd903e7fd"


async def test_the_body_hashed_is_the_body_sent(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script({"default": {"json": GOOD}})
    judge = make_judge(llm_server, tmp_path / "cache.db", max_tokens=300)
    msgs = with_schema_instruction(as_messages(MESSAGES), Verdict)
    _, body = judge._request_key(msgs, Verdict, json_schema_of(Verdict), 300)
    await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert body is not None
    assert llm_server.requests()[0]["body"] == json.loads(body)


async def test_same_request_hits_and_each_setting_that_shapes_the_answer_misses(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    llm_server.set_script({"default": {"json": GOOD}})
    cache = tmp_path / "cache.db"

    async def ask(
        schema: type[BaseModel] = Verdict, messages: list[dict[str, str]] = MESSAGES, **settings: object
    ) -> bool:
        judge = make_judge(llm_server, cache, **settings)
        answer = await judge.ask(messages, schema)
        await judge.aclose()
        return answer.cached

    assert await ask() is False
    assert await ask() is True  # a new judge, the same request: from the cache file
    assert await ask(model="other-model") is False
    assert await ask(temperature=0.7) is False
    assert await ask(seed=1) is False
    assert await ask(max_tokens=200) is False
    assert await ask(schema=OtherVerdict) is False
    assert await ask(response_format="json_object") is False
    assert (
        await ask(messages=[*MESSAGES[:1], {"role": "user", "content": "Answer: potassium 6.0 mmol/L"}])
        is False
    )
    assert llm_server.stats()["chat_requests"] == 8
    # and each of them is found again
    assert await ask(model="other-model") is True
    assert await ask(schema=OtherVerdict) is True
    assert llm_server.stats()["chat_requests"] == 8


async def test_an_entry_under_the_old_key_format_simply_misses(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    llm_server.set_script({"default": {"json": GOOD}})
    path = tmp_path / "cache.db"
    judge = make_judge(llm_server, path)
    msgs = with_schema_instruction(as_messages(MESSAGES), Verdict)
    # version 1: a SHA-256 of the request's parts as sorted JSON
    payload = {
        "backend": judge.backend.identity(),
        "mode": "json_schema",
        "max_tokens": None,
        "schema": json_schema_of(Verdict),
        "messages": msgs,
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    old_key = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert old_key != judge.key_for(MESSAGES, Verdict)
    old = JudgeCache(path)
    old.put(old_key, json.dumps({"explanation": "stale", "rating": 1}), Usage(calls=1))
    old.close()
    answer = await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert answer.cached is False and answer.output.rating == 5
    assert llm_server.stats()["chat_requests"] == 1


def test_static_prompt_parts_are_rendered_once() -> None:
    prompt = load_prompt("statements")
    first = prompt.render(question="Can I shower?", answer="Yes.")
    second = prompt.render(question="Can I swim?", answer="Not yet.")
    assert first[0] is second[0]  # the system message (it uses no variable)
    assert all(a is b for a, b in zip(first[1:-1], second[1:-1], strict=True))  # the worked examples
    assert first[-1].content != second[-1].content
    assert "Can I swim?" in second[-1].content
    # a system template that reads variables is rendered with them
    rubric = load_prompt("rubric")
    one = rubric.render_system(instruction=None, criteria={"a": "Accurate"}, scale=[(1, "ok")], examples=[])
    two = rubric.render_system(instruction=None, criteria={"b": "Brief"}, scale=[(1, "ok")], examples=[])
    assert "Accurate" in one.content and "Brief" in two.content
