"""A model configuration for evaluators that ask for one (AutoAuth suite schema).

An evaluator whose constructor has a ``model_config`` parameter gets one from the suite
(``args.model_config``), or else from the environment:

* Azure OpenAI, when ``AZURE_OPENAI_ENDPOINT`` is set: ``azure_endpoint``, ``api_key``
  (``AZURE_OPENAI_API_KEY``, or ``AZURE_OPENAI_KEY``), ``azure_deployment``
  (``AZURE_OPENAI_DEPLOYMENT``, or ``AZURE_OPENAI_CHAT_DEPLOYMENT_ID``) and
  ``api_version`` (``AZURE_OPENAI_API_VERSION``, default ``2024-06-01``) -- the dict
  azure-ai-evaluation's evaluators take;
* otherwise the suite's judge, when it is an OpenAI-compatible endpoint: ``type:
  openai``, ``model``, ``base_url`` and ``api_key`` (the key the judge would send, by
  the rule of :func:`clineval.judges.config.openai_key`).

The key is read when the evaluator is built and never stored or printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clineval.judges.config import JudgeConfig, openai_key

AZURE_DEFAULT_API_VERSION = "2024-06-01"


def _first(env: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        value = env.get(name)
        if value:
            return value
    return None


def model_config_from_environment(env: Mapping[str, str], judge: JudgeConfig | None) -> dict[str, Any] | None:
    """The model configuration the environment (or the judge) gives, or ``None``."""
    endpoint = env.get("AZURE_OPENAI_ENDPOINT")
    if endpoint:
        return {
            "azure_endpoint": endpoint,
            "api_key": _first(env, "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_KEY"),
            "azure_deployment": _first(env, "AZURE_OPENAI_DEPLOYMENT", "AZURE_OPENAI_CHAT_DEPLOYMENT_ID"),
            "api_version": env.get("AZURE_OPENAI_API_VERSION") or AZURE_DEFAULT_API_VERSION,
        }
    if judge is not None and judge.provider == "openai" and judge.model:
        return {
            "type": "openai",
            "model": judge.model,
            "base_url": judge.base_url or env.get("OPENAI_BASE_URL") or "https://api.openai.com/v1",
            "api_key": openai_key(judge, env),
        }
    return None


def missing_model_config_message(name: str) -> str:
    return (
        f"evaluator {name!r} needs a model configuration: give args.model_config, set "
        "AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY and AZURE_OPENAI_DEPLOYMENT, or give the suite an "
        "OpenAI-compatible judge (judge: openai:MODEL[@BASE_URL])"
    )


def secret_values(config: Mapping[str, Any] | None) -> set[str]:
    if not config:
        return set()
    return {str(v) for k, v in config.items() if v and ("key" in k.lower() or "token" in k.lower())}


def model_label(config: Mapping[str, Any] | None) -> str | None:
    """The model a configuration names, as a judge is named: ``azure:DEPLOYMENT`` or
    ``openai:MODEL`` (``None`` when it names none)."""
    if not isinstance(config, Mapping):
        return None
    deployment = config.get("azure_deployment")
    if deployment or config.get("azure_endpoint"):
        return f"azure:{deployment or '(deployment not given)'}"
    model = config.get("model")
    return f"{config.get('type') or 'openai'}:{model}" if model else None
