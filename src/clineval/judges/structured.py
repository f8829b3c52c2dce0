"""Structured answers on top of any chat backend: schema instruction, validation, one re-ask, cache.

Every judge backend (an OpenAI-compatible endpoint, the scripted judge) only has to turn
chat messages into text. :class:`StructuredJudge` does the rest the same way for all of
them:

1. it appends to the system message an instruction to answer with one JSON object that
   validates against the schema (and asks the backend for JSON output where it can);
2. it looks the request up in the persistent cache;
3. it validates the answer with pydantic; an answer that does not validate is sent back
   once with the validation error, and if the second answer fails too the request raises
   :class:`~clineval.judges.base.JudgeError` (the case stays unscored, never 0);
4. it stores validated answers in the cache and accounts tokens, calls and re-asks.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from clineval.judges.base import ChatMessage, JudgeAnswer, JudgeError, MessagesLike, T, Usage, as_messages
from clineval.judges.cache import JudgeCache, key_prefix, request_key

ResponseMode = Literal["json_schema", "json_object", "text"]


@dataclass(frozen=True)
class Completion:
    """The text a backend returned for one request, with its token counts."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str | None = None
    attempts: int = 1
    """HTTP requests sent for this answer (failed attempts that were retried included)."""


class ChatBackend(Protocol):
    """The transport under a judge: messages in, text out.

    A backend may also offer ``encode_request(messages, *, schema_name, json_schema, mode,
    max_tokens) -> bytes``, the body it would send, and accept it back as ``chat(...,
    body=...)``: the judge cache then keys answers by those bytes and the request is
    encoded once (:class:`~clineval.judges.openai_compat.OpenAIBackend` does).
    """

    @property
    def name(self) -> str: ...

    def identity(self) -> dict[str, Any]:
        """What shapes the answer (provider, endpoint, model, sampling): part of the cache key."""
        ...

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        schema_name: str,
        json_schema: dict[str, Any],
        mode: ResponseMode,
        max_tokens: int | None,
    ) -> Completion: ...

    async def aclose(self) -> None: ...


_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def _json_text(text: str) -> str:
    """The JSON object inside ``text``: code fences and prose around one object are dropped."""
    stripped = text.strip()
    match = _FENCE.match(stripped)
    if match:
        stripped = match.group(1).strip()
    if stripped.startswith("{"):
        return stripped
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        return stripped[start : end + 1]
    return stripped


def describe_validation_error(exc: ValidationError, limit: int = 5) -> str:
    """A short, readable summary of a pydantic validation error."""
    parts = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "(answer)"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"and {more} more problem(s)")
    return "; ".join(parts)


def parse_answer(text: str, schema: type[T]) -> T:
    """Validate ``text`` as a ``schema`` object; raises :class:`ValueError` with a readable reason."""
    candidate = _json_text(text)
    if not candidate:
        raise ValueError("the answer was empty")
    try:
        return schema.model_validate_json(candidate)  # one parse: JSON and schema together
    except ValidationError as exc:
        if any(err.get("type") == "json_invalid" for err in exc.errors()):
            try:
                json.loads(candidate)
            except json.JSONDecodeError as bad:
                raise ValueError(f"the answer is not valid JSON ({bad.msg} at position {bad.pos})") from exc
        raise ValueError(f"the answer does not match the schema: {describe_validation_error(exc)}") from exc


@functools.cache
def json_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a pydantic model, computed once per model class."""
    return schema.model_json_schema()


@functools.cache
def _schema_json(schema: type[BaseModel]) -> str:
    return json.dumps(json_schema_of(schema), ensure_ascii=False)


@functools.cache
def schema_instruction(schema: type[BaseModel]) -> str:
    schema_json = _schema_json(schema)
    return (
        "Reply with a single JSON object and nothing else: no prose before or after it and no "
        "code fences. The object must validate against this JSON schema:\n" + schema_json
    )


def with_schema_instruction(messages: list[ChatMessage], schema: type[BaseModel]) -> list[dict[str, str]]:
    """The messages as dicts, with the schema instruction added to the system message."""
    out = [{"role": m.role, "content": m.content} for m in messages]
    if out and out[0]["role"] == "system":
        out[0] = {"role": "system", "content": _system_with_schema(out[0]["content"], schema)}
    else:
        out.insert(0, {"role": "system", "content": schema_instruction(schema)})
    return out


@functools.lru_cache(maxsize=256)
def _system_with_schema(system: str, schema: type[BaseModel]) -> str:
    return system.rstrip() + "\n\n" + schema_instruction(schema)


REASK_TEMPLATE = (
    "Your previous reply could not be used: {problem}. Reply again with one JSON object that "
    "validates against the schema given in the instructions, and nothing else."
)


class StructuredJudge:
    """A :class:`~clineval.judges.base.Judge` built from a :class:`ChatBackend`."""

    def __init__(
        self,
        backend: ChatBackend,
        *,
        cache: JudgeCache | None = None,
        mode: ResponseMode = "json_schema",
        reask: bool = True,
        max_tokens: int | None = None,
    ):
        self.backend = backend
        self.cache = cache
        self.mode: ResponseMode = mode
        self.reask = reask
        self.max_tokens = max_tokens
        self._encode: Callable[..., bytes] | None = getattr(backend, "encode_request", None)
        self._key_prefix: bytes | None = None

    def key_for(
        self, messages: MessagesLike, schema: type[BaseModel], *, max_tokens: int | None = None
    ) -> str:
        """The cache key under which :meth:`ask` looks up and stores this request's answer."""
        msgs = with_schema_instruction(as_messages(messages), schema)
        limit = max_tokens if max_tokens is not None else self.max_tokens
        return self._request_key(msgs, schema, json_schema_of(schema), limit)[0]

    def _request_key(
        self,
        msgs: list[dict[str, str]],
        schema: type[BaseModel],
        json_schema: dict[str, Any],
        limit: int | None,
    ) -> tuple[str, bytes | None]:
        """The cache key of a request, and its body when the backend encodes requests.

        The key hashes what is sent (the backend's request body: model, sampling, messages,
        response format) after what is not (the backend's identity: provider, endpoint;
        the response mode), with :data:`~clineval.judges.cache.KEY_VERSION` first.
        """
        if self._key_prefix is None:
            self._key_prefix = key_prefix({"backend": self.backend.identity(), "mode": self.mode})
        if self._encode is not None:
            body = self._encode(
                msgs, schema_name=schema.__name__, json_schema=json_schema, mode=self.mode, max_tokens=limit
            )
            return request_key(self._key_prefix, body), body
        material = json.dumps(
            [schema.__name__, _schema_json(schema), limit, msgs], ensure_ascii=False, separators=(",", ":")
        )
        return request_key(self._key_prefix, material.encode("utf-8")), None

    @property
    def name(self) -> str:
        return self.backend.name

    def describe(self) -> dict[str, Any]:
        return {**self.backend.identity(), "response_format": self.mode, "reask": self.reask}

    async def ask(
        self, messages: MessagesLike, schema: type[T], *, max_tokens: int | None = None
    ) -> JudgeAnswer[T]:
        msgs = with_schema_instruction(as_messages(messages), schema)
        json_schema = json_schema_of(schema)
        limit = max_tokens if max_tokens is not None else self.max_tokens
        key = ""
        body: bytes | None = None
        if self.cache is not None:
            key, body = self._request_key(msgs, schema, json_schema, limit)
            hit = self.cache.get(key)
            if hit is not None:
                raw, _stored_usage = hit
                try:
                    output = parse_answer(raw, schema)
                except ValueError:
                    pass  # a stale entry that no longer validates: ask again
                else:
                    return JudgeAnswer(output=output, raw=raw, usage=Usage(cached=1), cached=True)

        usage = Usage()
        completion = await self._chat(msgs, schema, json_schema, limit, usage, body)
        try:
            output = parse_answer(completion.text, schema)
            raw = completion.text
        except ValueError as first:
            if not self.reask:
                raise JudgeError(
                    f"judge answer rejected: {first}", raw=completion.text, usage=usage
                ) from None
            usage.reasks += 1
            retry_msgs = [
                *msgs,
                {"role": "assistant", "content": completion.text},
                {"role": "user", "content": REASK_TEMPLATE.format(problem=first)},
            ]
            second = await self._chat(retry_msgs, schema, json_schema, limit, usage)
            try:
                output = parse_answer(second.text, schema)
                raw = second.text
            except ValueError as again:
                raise JudgeError(
                    f"judge answer rejected after one re-ask: {again}", raw=second.text, usage=usage
                ) from None
        if self.cache is not None:
            self.cache.put(key, raw, usage, completion.model)
        return JudgeAnswer(output=output, raw=raw, usage=usage, cached=False)

    async def _chat(
        self,
        msgs: list[dict[str, str]],
        schema: type[BaseModel],
        json_schema: dict[str, Any],
        max_tokens: int | None,
        usage: Usage,
        body: bytes | None = None,
    ) -> Completion:
        try:
            if body is not None:  # only a backend with encode_request made one
                completion = await self.backend.chat(  # type: ignore[call-arg]
                    msgs,
                    schema_name=schema.__name__,
                    json_schema=json_schema,
                    mode=self.mode,
                    max_tokens=max_tokens,
                    body=body,
                )
            else:
                completion = await self.backend.chat(
                    msgs,
                    schema_name=schema.__name__,
                    json_schema=json_schema,
                    mode=self.mode,
                    max_tokens=max_tokens,
                )
        except JudgeError as exc:
            exc.usage.add(usage)
            raise
        usage.record(
            calls=completion.attempts,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
        )
        return completion

    async def aclose(self) -> None:
        await self.backend.aclose()
        if self.cache is not None:
            self.cache.close()
