"""Judge backend for any OpenAI-compatible chat completions endpoint, and Azure OpenAI.

OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server and most gateways speak this API.
Requests go out at temperature 0 with a fixed seed (where the server honours one), a
timeout per attempt, bounded retries that honour ``Retry-After`` and an adaptive
concurrency cap. The SDK's own retries are switched off so that these rules are the only
ones in force.
"""

from __future__ import annotations

import json
import os
from typing import Any

import openai
from openai import AsyncAzureOpenAI, AsyncOpenAI

from clineval.errors import ConfigError, JudgeConfigurationError
from clineval.judges.base import JudgeError
from clineval.judges.structured import Completion, ResponseMode
from clineval.resilience import (
    AdaptiveLimiter,
    Failure,
    RetryPolicy,
    call_with_retries,
    classify_failure,
)

DEFAULT_AZURE_API_VERSION = "2024-10-21"


def _mentions_response_format(exc: BaseException) -> bool:
    text = str(getattr(exc, "message", "") or exc).lower()
    return "response_format" in text or "json_schema" in text


def classify_openai_failure(exc: BaseException) -> Failure:
    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
        return "transient"
    if isinstance(exc, json.JSONDecodeError | openai.APIResponseValidationError):
        return "transient"  # a garbled body (a proxy hiccup); the next attempt may be fine
    if isinstance(exc, openai.APIStatusError) and _mentions_response_format(exc):
        return "fatal"  # the server does not support the response format: retrying cannot help
    return classify_failure(exc)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, openai.APIStatusError):
        message = getattr(exc, "message", "") or str(exc)
        return f"HTTP {exc.status_code}: {message}"[:500]
    if isinstance(exc, TimeoutError | openai.APITimeoutError):
        return "the request timed out"
    return f"{type(exc).__name__}: {exc}"[:500]


class OpenAIBackend:
    """Chat transport over the ``openai`` SDK, for OpenAI-compatible servers and Azure OpenAI."""

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
    ):
        self.model = model
        self.temperature = temperature
        self.seed = seed
        self.policy = policy or RetryPolicy()
        self.limiter = AdaptiveLimiter(concurrency)
        self.retries = 0
        self._fallback_mode: ResponseMode | None = None
        self.azure = azure_endpoint is not None
        self.base_url: str | None
        self._client: AsyncOpenAI
        if self.azure:
            self.base_url = azure_endpoint
            assert azure_endpoint is not None
            self._client = AsyncAzureOpenAI(
                azure_endpoint=azure_endpoint,
                api_key=api_key,
                api_version=api_version or DEFAULT_AZURE_API_VERSION,
                max_retries=0,
                timeout=self.policy.timeout_s,
            )
        else:
            self.base_url = base_url
            self._client = AsyncOpenAI(
                base_url=base_url,
                api_key=api_key or "not-needed",
                max_retries=0,
                timeout=self.policy.timeout_s,
            )

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

    def _response_format(
        self, mode: ResponseMode, schema_name: str, json_schema: dict[str, Any]
    ) -> dict[str, Any] | None:
        mode = self._fallback_mode or mode
        if mode == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": schema_name[:64], "schema": json_schema, "strict": False},
            }
        if mode == "json_object":
            return {"type": "json_object"}
        return None

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        schema_name: str,
        json_schema: dict[str, Any],
        mode: ResponseMode,
        max_tokens: int | None,
    ) -> Completion:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        response_format = self._response_format(mode, schema_name, json_schema)
        if response_format is not None:
            kwargs["response_format"] = response_format

        def note_retry(exc: BaseException, attempt: int) -> None:
            self.retries += 1

        async def call() -> Any:
            return await self._client.chat.completions.create(**kwargs)

        try:
            response = await call_with_retries(
                call,
                policy=self.policy,
                limiter=self.limiter,
                classify=classify_openai_failure,
                on_retry=note_retry,
            )
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise JudgeConfigurationError(
                f"the judge endpoint refused the credentials ({_describe(exc)}); check the API key"
            ) from None
        except openai.NotFoundError as exc:
            raise JudgeConfigurationError(
                f"the judge endpoint does not know model {self.model!r} or the URL is wrong "
                f"({_describe(exc)})"
            ) from None
        except openai.APIStatusError as exc:
            if response_format is not None and _mentions_response_format(exc):
                if response_format["type"] == "json_schema":
                    self._fallback_mode = "json_object"
                else:
                    self._fallback_mode = "text"
                return await self.chat(
                    messages,
                    schema_name=schema_name,
                    json_schema=json_schema,
                    mode=mode,
                    max_tokens=max_tokens,
                )
            raise JudgeError(
                f"judge call failed after {self.policy.max_attempts} attempt(s) at most: {_describe(exc)}"
            ) from None
        except (json.JSONDecodeError, openai.APIResponseValidationError) as exc:
            raise JudgeError(
                f"the judge endpoint sent a response that is not a valid chat completion "
                f"after {self.policy.max_attempts} attempt(s): {_describe(exc)}"
            ) from None
        except (TimeoutError, openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise JudgeError(
                f"judge call failed after {self.policy.max_attempts} attempt(s): {_describe(exc)}"
            ) from None
        if not getattr(response, "choices", None):
            raise JudgeError("the judge endpoint returned no choices")
        message = response.choices[0].message
        text = message.content or ""
        usage = getattr(response, "usage", None)
        return Completion(
            text=text,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            model=getattr(response, "model", None),
        )

    async def aclose(self) -> None:
        await self._client.close()


def azure_settings_from_env() -> dict[str, str]:
    """Azure OpenAI endpoint, key, deployment and API version from the environment.

    Reads ``AZURE_OPENAI_ENDPOINT``, ``AZURE_OPENAI_API_KEY`` (or ``AZURE_OPENAI_KEY``),
    ``AZURE_OPENAI_DEPLOYMENT`` (or ``AZURE_OPENAI_CHAT_DEPLOYMENT_ID``) and
    ``AZURE_OPENAI_API_VERSION``. Raises :class:`ConfigError` naming what is missing.
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
    ]
    if missing:
        raise ConfigError("the Azure OpenAI judge needs these environment variables: " + ", ".join(missing))
    return settings
