"""Judge backend for any OpenAI-compatible chat completions endpoint, and Azure OpenAI.

OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server and most gateways speak this API.
Requests go out at temperature 0 with a fixed seed (where the server honours one), a
timeout per attempt, bounded retries that honour ``Retry-After`` and an adaptive
concurrency cap.

The transport is ``aiohttp`` posting JSON to ``/chat/completions``. A judge call needs
one endpoint and a JSON body; on a small machine the CPU spent per HTTP exchange is what
limits judge throughput at high concurrency, and aiohttp's C parser spends about a fifth
of what the ``openai`` SDK's stack does (``benchmarks/judge_throughput.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any, Literal

import aiohttp
from yarl import URL

from clineval.errors import ConfigError, JudgeConfigurationError
from clineval.judges.base import JudgeError, Usage
from clineval.judges.budget import RequestBudget
from clineval.judges.structured import Completion, ResponseMode
from clineval.redaction import redact
from clineval.resilience import (
    AdaptiveLimiter,
    Failure,
    RetryPolicy,
    asks_too_long,
    call_with_retries,
    classify_failure,
)

DEFAULT_AZURE_API_VERSION = "2024-10-21"
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"

FormatStage = Literal["json_schema", "json_object_schema", "json_object", "text"]
"""How the output format is asked for, from the most to the least constrained.

``json_schema``: OpenAI structured outputs (``{"type": "json_schema", "json_schema": ...}``);
``json_object_schema``: JSON mode with the schema beside it (``{"type": "json_object",
"schema": ...}``), which llama.cpp-style servers (llama-cpp-python, whose server refuses
``json_schema``) turn into a grammar that constrains the output to the schema;
``json_object``: plain JSON mode; ``text``: no ``response_format`` at all.
When the server refuses a stage's ``response_format``, the backend falls back to the next
stage (and stays there for later calls)."""

_FALLBACK: dict[FormatStage, FormatStage] = {
    "json_schema": "json_object_schema",
    "json_object_schema": "json_object",
    "json_object": "text",
}
_STAGE_ORDER: tuple[FormatStage, ...] = ("json_schema", "json_object_schema", "json_object", "text")


class EndpointError(Exception):
    """An HTTP error status from the endpoint, with the server's message and headers."""

    def __init__(self, status_code: int, body: bytes, headers: Mapping[str, str]):
        self.status_code = status_code
        self.headers = headers
        self.message = redact(_error_message(body))  # a server may echo the key it refused
        super().__init__(f"HTTP {status_code}: {self.message}")


class MalformedCompletion(ValueError):
    """A 200 answer that is not a chat completion (not JSON, no choices, no message)."""


def _error_message(body: bytes) -> str:
    text = body.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        return text[:300] or "(empty body)"
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
        if isinstance(error, str):
            return error[:300]
        if data.get("message"):
            return str(data["message"])[:300]
    return str(data)[:300]


def _mentions_response_format(exc: BaseException) -> bool:
    text = str(getattr(exc, "message", "") or exc).lower()
    return "response_format" in text or "json_schema" in text


def classify_openai_failure(exc: BaseException) -> Failure:
    if isinstance(exc, aiohttp.ClientConnectionError | aiohttp.ClientPayloadError):
        return "transient"
    if isinstance(exc, MalformedCompletion):
        return "transient"  # a garbled body (a proxy hiccup); the next attempt may be fine
    if isinstance(exc, EndpointError) and _mentions_response_format(exc):
        return "fatal"  # the server does not support the response format: retrying cannot help
    return classify_failure(exc)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, EndpointError):
        return f"HTTP {exc.status_code}: {exc.message}"[:500]
    if isinstance(exc, TimeoutError):
        return "the request timed out"
    return f"{type(exc).__name__}: {exc}"[:500]


def _completion(body: bytes) -> Completion:
    try:
        data = json.loads(body)
    except ValueError:
        raise MalformedCompletion(f"the body is not JSON: {body[:200]!r}") from None
    try:
        message = data["choices"][0]["message"]
        usage = data.get("usage") or {}
        return Completion(
            text=str(message.get("content") or ""),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            model=data.get("model"),
        )
    except (KeyError, IndexError, TypeError, AttributeError, ValueError):
        raise MalformedCompletion(f"expected a chat completion, got: {str(data)[:200]}") from None


def _proxy_for(url: str) -> str | None:
    """The proxy the environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) names for ``url``, if any."""
    parts = urllib.parse.urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


@functools.lru_cache(maxsize=1024)
def _encoded_message(role: str, content: str) -> str:
    return json.dumps({"role": role, "content": content}, ensure_ascii=False)


def _request_body(
    payload: dict[str, Any] | str, messages: list[dict[str, str]], response_format: dict[str, Any] | None
) -> bytes:
    """The JSON request body. Messages that repeat from call to call (a metric's
    instructions with the output schema, the worked examples) are encoded once and reused:
    they are the same string objects every time (see :mod:`clineval.prompts`), so looking
    them up costs a pointer comparison; a case's own message is encoded and soon evicted.
    ``payload`` is the request's other fields, or their JSON object without its closing brace."""
    parts = [_encoded_message(m["role"], m["content"]) for m in messages]
    head = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)[:-1]
    text = f'{head}, "messages": [{", ".join(parts)}]'
    if response_format is not None:
        text += f', "response_format": {_format_json(response_format)}'
    return (text + "}").encode("utf-8")


def _format_json(response_format: dict[str, Any]) -> str:
    # The JSON schema dict is the same object for every call with one output schema (see
    # structured.json_schema_of), so its encoding is kept by identity; the entry holds the
    # dict itself, so the id cannot be reused by another object while it is cached.
    # The same holds for JSON mode with the schema beside it ({"type": "json_object", "schema"}).
    spec = response_format.get("json_schema")
    if spec is not None:
        schema, name = spec["schema"], spec["name"]
    elif response_format.get("schema") is not None:
        schema, name = response_format["schema"], ""
    else:
        return json.dumps(response_format)
    key = (id(schema), str(response_format.get("type")), name)
    cached = _FORMAT_CACHE.get(key)
    if cached is None or cached[0] is not schema:
        cached = (schema, json.dumps(response_format, ensure_ascii=False))
        _FORMAT_CACHE[key] = cached
    return cached[1]


_FORMAT_CACHE: dict[tuple[int, str, str], tuple[Any, str]] = {}


class OpenAIBackend:
    """Chat transport for OpenAI-compatible servers and Azure OpenAI."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        azure_endpoint: str | None = None,
        api_version: str | None = None,
        temperature: float = 0.0,
        seed: int | None = 0,
        policy: RetryPolicy | None = None,
        concurrency: int = 8,
        budget: RequestBudget | None = None,
    ):
        self.model = model
        self.budget = budget
        """Paces requests (``--judge-rpm``/``--judge-tpm``, or a cluster-wide budget on Ray):
        ``acquire()`` before every request, retries included, and ``spent(tokens)`` after
        each, with the tokens its response reported (0 for a failed request)."""
        self.temperature = temperature
        self.seed = seed
        self.policy = policy or RetryPolicy()
        self.limiter = AdaptiveLimiter(concurrency)
        self.retries = 0
        self._fallback_stage: FormatStage | None = None
        self._heads: dict[int | None, str] = {}
        self._concurrency = max(concurrency, 1)
        self.azure = azure_endpoint is not None
        self._headers = {"content-type": "application/json", "accept": "application/json"}
        if self.azure:
            assert azure_endpoint is not None
            self.base_url = azure_endpoint.rstrip("/")
            url = URL(f"{self.base_url}/openai/deployments/{model}/chat/completions").with_query(
                {"api-version": api_version or DEFAULT_AZURE_API_VERSION}
            )
            if api_key:
                self._headers["api-key"] = api_key
        else:
            self.base_url = (base_url or DEFAULT_OPENAI_BASE_URL).rstrip("/")
            url = URL(f"{self.base_url}/chat/completions")
            if api_key:
                self._headers["authorization"] = f"Bearer {api_key}"
        self._url = url  # parsed once, not on every request
        self._session: aiohttp.ClientSession | None = None
        self._proxy = _proxy_for(str(url))

    def _client(self) -> aiohttp.ClientSession:
        # Created on first use, inside the event loop that runs the requests.
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                connector=aiohttp.TCPConnector(limit=self._concurrency),
                # No timer of aiohttp's own: every request runs under the attempt's timeout
                # (call_with_retries, policy.timeout_s), and a second timer per request costs
                # CPU on the event loop for nothing.
                timeout=aiohttp.ClientTimeout(total=None),
                # Proxy settings are read once (see _proxy_for), not looked up on every request.
                trust_env=False,
            )
        return self._session

    @property
    def name(self) -> str:
        return f"{'azure' if self.azure else 'openai'}:{self.model}"

    def identity(self) -> dict[str, Any]:
        return {
            "provider": "azure" if self.azure else "openai",
            "base_url": self.base_url,
            "model": self.model,
            "temperature": self.temperature,
            "seed": self.seed,
        }

    def _stage(self, mode: ResponseMode) -> FormatStage:
        """The stage a request in ``mode`` goes out with: the mode, or a fallback past it."""
        if self._fallback_stage is None:
            return mode
        return max(mode, self._fallback_stage, key=_STAGE_ORDER.index)

    def _fall_back_from(self, stage: FormatStage) -> None:
        """The server refused ``stage``: later requests use the next stage (never an earlier
        one, when concurrent requests refused different stages)."""
        following = _FALLBACK.get(stage, "text")
        if self._fallback_stage is None or _STAGE_ORDER.index(following) > _STAGE_ORDER.index(
            self._fallback_stage
        ):
            self._fallback_stage = following

    @staticmethod
    def _response_format(
        stage: FormatStage, schema_name: str, json_schema: dict[str, Any]
    ) -> dict[str, Any] | None:
        if stage == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": schema_name[:64], "schema": json_schema, "strict": False},
            }
        if stage == "json_object_schema":
            return {"type": "json_object", "schema": json_schema}
        if stage == "json_object":
            return {"type": "json_object"}
        return None

    async def _post(self, body: bytes) -> Completion:
        async with self._client().post(self._url, data=body, proxy=self._proxy) as response:
            content = await response.read()
            if response.status >= 400:
                raise EndpointError(response.status, content, response.headers)
        return _completion(content)

    def _head(self, max_tokens: int | None) -> str:
        """The request's fields other than messages and format, as a JSON object without its
        closing brace (encoded once per ``max_tokens``)."""
        head = self._heads.get(max_tokens)
        if head is None:
            payload: dict[str, Any] = {"model": self.model, "temperature": self.temperature}
            if self.seed is not None:
                payload["seed"] = self.seed
            if max_tokens is not None:
                payload["max_tokens"] = max_tokens
            head = self._heads[max_tokens] = json.dumps(payload, ensure_ascii=False)[:-1]
        return head

    def encode_request(
        self,
        messages: list[dict[str, str]],
        *,
        schema_name: str,
        json_schema: dict[str, Any],
        mode: ResponseMode,
        max_tokens: int | None,
    ) -> bytes:
        """The body of the request :meth:`chat` sends for these arguments, in ``mode`` (before
        any fallback). The judge cache keys answers by it, and passes it back to :meth:`chat`
        so that a request is encoded once."""
        response_format = self._response_format(mode, schema_name, json_schema)
        return _request_body(self._head(max_tokens), messages, response_format)

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        schema_name: str,
        json_schema: dict[str, Any],
        mode: ResponseMode,
        max_tokens: int | None,
        body: bytes | None = None,
    ) -> Completion:
        """One answer. ``body``: what :meth:`encode_request` returned for the same arguments,
        used as is unless the server refused ``mode`` and a fallback format goes out."""
        stage = self._stage(mode)
        if body is None or stage != mode:
            response_format = self._response_format(stage, schema_name, json_schema)
            body = _request_body(self._head(max_tokens), messages, response_format)

        def note_retry(exc: BaseException, attempt: int) -> None:
            self.retries += 1

        sent = 0
        budget = self.budget

        async def attempt() -> Completion:
            nonlocal sent
            sent += 1  # every request sent is accounted for, failed attempts included
            if budget is None:
                return await self._post(body)
            tokens = 0
            try:
                completion = await self._post(body)
                tokens = completion.prompt_tokens + completion.completion_tokens
                return completion
            finally:
                budget.spent(tokens)  # every acquire() is matched by one spent()

        try:
            completion = await call_with_retries(
                attempt,
                policy=self.policy,
                limiter=self.limiter,
                classify=classify_openai_failure,
                on_retry=note_retry,
                pace=None if budget is None else budget.acquire,
            )
            return completion if sent == 1 else dataclasses.replace(completion, attempts=sent)
        except EndpointError as exc:
            if exc.status_code in (401, 403):
                hint = "check the API key"
                if "authorization" not in self._headers and "api-key" not in self._headers:
                    hint = (
                        "no API key was sent: set the key's variable, and for an endpoint other than "
                        "api.openai.com or a local host name it with api_key_env in the judge settings"
                    )
                raise JudgeConfigurationError(
                    f"the judge endpoint refused the credentials ({_describe(exc)}); {hint}"
                ) from None
            if exc.status_code == 404:
                raise JudgeConfigurationError(
                    f"the judge endpoint does not know model {self.model!r} or the URL is wrong "
                    f"({_describe(exc)})"
                ) from None
            if stage != "text" and _mentions_response_format(exc):  # a response_format was sent
                self._fall_back_from(stage)
                try:
                    again = await self.chat(
                        messages,
                        schema_name=schema_name,
                        json_schema=json_schema,
                        mode=mode,
                        max_tokens=max_tokens,
                    )
                except JudgeError as failed:
                    failed.usage.calls += sent
                    raise
                return dataclasses.replace(again, attempts=again.attempts + sent)
            raise JudgeError(self._failure(exc, sent), usage=Usage(calls=sent)) from None
        except MalformedCompletion as exc:
            raise JudgeError(
                f"the judge endpoint sent a response that is not a valid chat completion "
                f"after {sent} attempt(s): {exc}",
                usage=Usage(calls=sent),
            ) from None
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise JudgeError(
                f"judge call failed after {sent} attempt(s): {_describe(exc)}", usage=Usage(calls=sent)
            ) from None

    def _failure(self, exc: EndpointError, sent: int) -> str:
        """Why a request failed, saying whether it was retried and why not."""
        asked = asks_too_long(self.policy, exc)
        if asked is not None:
            return (
                f"judge call failed (HTTP {exc.status_code}, not retried: the server asked to wait "
                f"{asked:.0f} s, more than max_retry_after_s = {self.policy.retry_after_cap_s:g} s; "
                f"resume with --retry-errors later): {exc.message}"
            )
        if classify_openai_failure(exc) == "fatal":
            return f"judge call failed (HTTP {exc.status_code}, not retried): {exc.message}"
        return f"judge call failed after {sent} attempt(s): {_describe(exc)}"

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


def azure_settings_from_env(
    *, deployment_given: bool = False, endpoint_given: bool = False
) -> dict[str, str]:
    """Azure OpenAI endpoint, key, deployment and API version from the environment.

    Reads ``AZURE_OPENAI_ENDPOINT``, ``AZURE_OPENAI_API_KEY`` (or ``AZURE_OPENAI_KEY``),
    ``AZURE_OPENAI_DEPLOYMENT`` (or ``AZURE_OPENAI_CHAT_DEPLOYMENT_ID``) and
    ``AZURE_OPENAI_API_VERSION``. Raises :class:`ConfigError` naming what is missing (the
    deployment is not needed when the judge spec names it, ``azure:DEPLOYMENT``).
    """
    env = os.environ
    settings = {
        "azure_endpoint": env.get("AZURE_OPENAI_ENDPOINT", ""),
        "api_key": env.get("AZURE_OPENAI_API_KEY") or env.get("AZURE_OPENAI_KEY", ""),
        "deployment": env.get("AZURE_OPENAI_DEPLOYMENT") or env.get("AZURE_OPENAI_CHAT_DEPLOYMENT_ID", ""),
        "api_version": env.get("AZURE_OPENAI_API_VERSION", DEFAULT_AZURE_API_VERSION),
    }
    missing = [
        name
        for name, key in (
            ("AZURE_OPENAI_ENDPOINT", "azure_endpoint"),
            ("AZURE_OPENAI_API_KEY", "api_key"),
            ("AZURE_OPENAI_DEPLOYMENT", "deployment"),
        )
        if not settings[key]
        and not (key == "deployment" and deployment_given)
        and not (key == "azure_endpoint" and endpoint_given)
    ]
    if missing:
        raise ConfigError("the Azure OpenAI judge needs these environment variables: " + ", ".join(missing))
    return settings
