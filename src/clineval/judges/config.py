"""Judge settings and the one place that turns them into a judge.

A judge is chosen by one setting, a spec string (``--judge`` on the command line,
``judge:`` in a run file, or the ``CLINEVAL_JUDGE`` environment variable):

``offline`` (the default)
    the embedded offline judge: deterministic heuristics on CPU, no network, no key. It
    answers the factuality and RAG primitives (TBFact, the ASTRID triad, faithfulness,
    context relevance) as an approximation of an LLM judge; free-form judge metrics such
    as ``rubric`` need an LLM judge and report their cases as unscored.
``none``
    no judge: metrics that need one report their cases as unscored, with the reason.
``openai:MODEL`` or ``openai:MODEL@BASE_URL``
    any OpenAI-compatible endpoint; the URL from ``@BASE_URL`` or ``OPENAI_BASE_URL``, the
    key from the variable named by ``api_key_env``, else from ``OPENAI_API_KEY`` for
    api.openai.com, a local host or ``OPENAI_BASE_URL`` only (see :func:`openai_key`).
``azure`` or ``azure:DEPLOYMENT``
    Azure OpenAI from ``AZURE_OPENAI_ENDPOINT``, ``AZURE_OPENAI_API_KEY`` and
    ``AZURE_OPENAI_DEPLOYMENT`` (``AZURE_OPENAI_API_VERSION`` optional).
``scripted:FILE``
    the scripted judge with rules from a YAML file (for tests).
``nli:PATH``
    the offline judge with a local NLI or fact-checking model (an ONNX export or a
    transformers folder at PATH) checking each claim beside its own checks
    (:mod:`clineval.judges.nli`; ``pip install 'clineval[nli]'``).
"""

from __future__ import annotations

import ipaddress
import os
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clineval.errors import ConfigError, warn_once
from clineval.judges.base import Judge
from clineval.judges.cache import JudgeCache
from clineval.judges.scripted import ScriptedJudge
from clineval.judges.structured import ResponseMode, StructuredJudge
from clineval.redaction import register_secret
from clineval.resilience import RetryPolicy

Provider = Literal["offline", "none", "openai", "azure", "scripted", "nli"]


class JudgeConfig(BaseModel):
    """Everything needed to build a judge; stored with each run (secrets never are)."""

    model_config = ConfigDict(extra="forbid")

    provider: Provider = "offline"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    """The variable holding the ``openai`` key. Unset: ``OPENAI_API_KEY``, which is sent only
    to api.openai.com, a local host or an ``OPENAI_BASE_URL`` endpoint (see :func:`openai_key`)."""
    api_version: str | None = None
    temperature: float = Field(default=0.0, ge=0, le=2)
    seed: int | None = 0
    max_tokens: int | None = Field(default=None, gt=0)
    timeout_s: float = Field(default=60.0, gt=0)
    max_attempts: int = Field(default=4, ge=1, le=20)
    max_retry_after_s: float = Field(default=30.0, ge=0, le=86400)
    """The longest wait a server may ask for with ``Retry-After``; a longer one fails the
    request at once (unscored, with the reason) instead of stalling the run."""
    concurrency: int = Field(default=8, ge=1, le=1024)
    """Judge requests in flight at most (the adaptive limiter halves it on HTTP 429 and
    climbs back). 8 keeps a first run under a tier-1 hosted limit of 500 requests a minute
    at any judge latency from about 1 s (8 x 60 / 1 s = 480); see docs/judges.md."""
    rpm: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Requests per minute at most (``--judge-rpm``), retries included; unset: no limit."""
    tpm: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Tokens per minute at most (``--judge-tpm``), counted from the usage the responses
    report; unset: no limit. See :mod:`clineval.judges.budget` for how both count."""
    response_format: ResponseMode = "json_schema"
    reask: bool = True
    script: str | None = None
    model_path: str | None = None
    """The model folder of an ``nli`` judge (relative to the run file's folder in a run file)."""
    cache: bool = True

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            return parse_judge_spec(data)
        return data

    @model_validator(mode="after")
    def _check(self) -> JudgeConfig:
        if self.provider == "openai" and not self.model:
            raise ValueError("an openai judge needs a model, e.g. 'openai:gpt-4o-mini'")
        if self.provider == "scripted" and not self.script:
            raise ValueError("a scripted judge needs a rules file, e.g. 'scripted:rules.yaml'")
        if self.provider == "nli" and not self.model_path:
            raise ValueError("an nli judge needs a model folder, e.g. 'nli:models/deberta-v3-nli'")
        return self

    @property
    def label(self) -> str:
        if self.provider in ("none", "offline"):
            return self.provider
        if self.provider == "scripted":
            return f"scripted:{self.script}"
        if self.provider == "nli":
            return f"nli:{Path(self.model_path or '.').resolve().name}"
        return f"{self.provider}:{self.model or '(from environment)'}"


def parse_judge_spec(spec: str) -> dict[str, Any]:
    """``openai:gpt-4o-mini@http://localhost:8000/v1`` and friends as JudgeConfig fields."""
    spec = spec.strip()
    if spec in ("none", "off"):
        return {"provider": "none"}
    if spec in ("", "offline", "default"):
        return {"provider": "offline"}
    provider, _, rest = spec.partition(":")
    provider = provider.strip().lower()
    if provider == "openai":
        model, _, base_url = rest.partition("@")
        out: dict[str, Any] = {"provider": "openai", "model": model.strip() or None}
        if base_url:
            out["base_url"] = base_url.strip()
        return out
    if provider == "azure":
        return {"provider": "azure", "model": rest.strip() or None}
    if provider == "scripted":
        return {"provider": "scripted", "script": rest.strip() or None}
    if provider == "nli":
        return {"provider": "nli", "model_path": rest.strip() or None}
    raise ConfigError(
        f"unknown judge {spec!r}: use 'offline', 'none', 'openai:MODEL[@BASE_URL]', "
        "'azure[:DEPLOYMENT]', 'scripted:FILE' or 'nli:PATH'"
    )


DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_OPENAI_HOSTS = frozenset({"api.openai.com"})


def is_local_host(host: str | None) -> bool:
    """``localhost`` (and ``*.localhost``) or a loopback address."""
    if not host:
        return False
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def openai_key(config: JudgeConfig, env: Mapping[str, str]) -> str | None:
    """The key an ``openai`` judge sends, by one rule that keeps a key where it belongs.

    * ``api_key_env`` set: that variable's value, to whatever endpoint is configured;
    * not set: ``OPENAI_API_KEY``, but only to api.openai.com, a local host, or the
      endpoint in ``OPENAI_BASE_URL`` (the environment pairs that key with that URL, as
      the ``openai`` SDK does). A custom endpoint named in the judge spec or settings
      (``openai:MODEL@https://gateway.example.com/v1``) gets no key, with a warning, so
      that a mistyped or borrowed URL never receives your OpenAI key.

    A key sent over plain HTTP to a host that is not local is sent, with a warning.
    """
    name = config.api_key_env or DEFAULT_KEY_ENV
    key = env.get(name) or None
    if key is None:
        return None
    url = config.base_url or env.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    parts = urllib.parse.urlsplit(url)
    local = is_local_host(parts.hostname)
    known = local or (parts.hostname or "").lower() in _OPENAI_HOSTS
    if config.api_key_env is None and config.base_url is not None and not known:
        warn_once(
            f"${DEFAULT_KEY_ENV} is not sent to {parts.scheme}://{parts.netloc} (it goes only to "
            "api.openai.com, a local host or the $OPENAI_BASE_URL endpoint); if this endpoint "
            "needs a key, name its variable with api_key_env in the judge settings"
        )
        return None
    if parts.scheme == "http" and not local:
        warn_once(
            f"the judge key in ${name} is sent over plain HTTP to {parts.netloc}; anyone on the "
            "network path can read it: use https"
        )
    return key


def default_judge_config() -> JudgeConfig:
    """The judge named by ``CLINEVAL_JUDGE``, or the offline judge."""
    spec = os.environ.get("CLINEVAL_JUDGE", "").strip()
    return JudgeConfig.model_validate(spec or "offline")


def build_judge(
    config: JudgeConfig, *, cache_path: str | Path | None = None, base_dir: Path | None = None
) -> Judge | None:
    """The judge a config describes, or ``None`` for ``provider: none``."""
    if config.provider == "none":
        return None
    if config.provider == "offline":
        from clineval.judges.offline import OfflineJudge

        return OfflineJudge()
    if config.provider == "scripted":
        assert config.script is not None
        path = Path(config.script)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        return ScriptedJudge.from_file(path)
    if config.provider == "nli":
        from clineval.judges.nli import NliJudge

        assert config.model_path is not None
        folder = Path(config.model_path)
        if base_dir is not None and not folder.is_absolute():
            folder = base_dir / folder
        if not folder.is_dir():
            where = "" if str(folder) == config.model_path else f" ({folder})"
            raise ConfigError(f"judge nli:{config.model_path}: no such model folder{where}")
        return NliJudge(folder)
    # Imported here: the HTTP stack takes a noticeable time to import, and offline runs never need it.
    from clineval.judges.openai_compat import OpenAIBackend, azure_settings_from_env

    policy = RetryPolicy(
        max_attempts=config.max_attempts,
        timeout_s=config.timeout_s,
        max_retry_after_s=config.max_retry_after_s,
    )
    if config.provider == "azure":
        env = azure_settings_from_env(
            deployment_given=bool(config.model), endpoint_given=bool(config.base_url)
        )
        register_secret(env["api_key"])
        backend = OpenAIBackend(
            model=config.model or env["deployment"],
            azure_endpoint=config.base_url or env["azure_endpoint"],
            api_key=env["api_key"],
            api_version=config.api_version or env["api_version"],
            temperature=config.temperature,
            seed=config.seed,
            policy=policy,
            concurrency=config.concurrency,
        )
    else:
        assert config.model is not None
        base_url = config.base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = openai_key(config, os.environ)
        if not api_key and base_url is None:
            raise ConfigError(
                f"the judge 'openai:{config.model}' needs an API key in "
                f"${config.api_key_env or DEFAULT_KEY_ENV}, "
                "or a local endpoint: 'openai:MODEL@http://host:port/v1'"
            )
        register_secret(api_key)
        backend = OpenAIBackend(
            model=config.model,
            base_url=base_url,
            api_key=api_key,
            temperature=config.temperature,
            seed=config.seed,
            policy=policy,
            concurrency=config.concurrency,
        )
    if config.rpm is not None or config.tpm is not None:
        from clineval.judges.budget import RateBudget

        backend.budget = RateBudget(config.rpm, config.tpm)
    cache = JudgeCache(cache_path) if (config.cache and cache_path is not None) else None
    return StructuredJudge(
        backend,
        cache=cache,
        mode=config.response_format,
        reask=config.reask,
        max_tokens=config.max_tokens,
    )
