"""Which model a run used, as its header says it: the judge's, else the agent's.

A run's ``judge`` record names the judge (``offline``, ``openai:gpt-4o``, or, for a suite
whose evaluators were given a model configuration -- the Azure AI evaluators --, that
model). A run without a judge may still have used a model: the agent under test may be an
LLM, as the radiology benchmark's LLM core is (its endpoint is in the run's
``environment`` settings, ``llm.endpoint``), or a run may say so itself
(``config.agent_model``). :func:`models_label` gives ``openai:gpt-4o`` for a judge (and
`` · evaluators azure:gpt-4o`` when a suite's evaluators had a model of their own),
``none · agent openai:gpt-4o`` for such an agent, ``none`` otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clineval.model import RunRecord
from clineval.redaction import redact

#: The keys an environment's LLM settings name its endpoint by (a judge spec or config).
_ENDPOINT_KEYS = ("endpoint", "judge", "llm")


def judge_name(judge: Mapping[str, Any] | None) -> str:
    """The judge as recorded: its name, with the model when the name does not hold it."""
    if not judge:
        return "none"
    name = str(judge.get("name") or "none")
    model = judge.get("model")
    if name != "none" and model and str(model) not in name:
        name = f"{name} ({model})"
    return redact(name)


def _endpoint_label(value: Any) -> str | None:
    if value is None or value == "":
        return None
    from pydantic import ValidationError

    from clineval.judges.config import JudgeConfig  # here: `clineval runs` loads no judge code

    try:
        config = JudgeConfig.model_validate(value)
    except (ValidationError, ValueError, TypeError):
        return None
    return None if config.provider in ("none", "offline") else config.label


def agent_model(config: Mapping[str, Any]) -> str | None:
    """The model of the agent under test, when the run's configuration names one."""
    given = config.get("agent_model")
    if given:
        return str(given)
    environment = config.get("environment")
    llm = environment.get("llm") if isinstance(environment, Mapping) else None
    if isinstance(llm, Mapping):
        for key in _ENDPOINT_KEYS:
            label = _endpoint_label(llm.get(key))
            if label:
                return label
    elif llm:
        return _endpoint_label(llm)
    return None


def models_label(run: RunRecord) -> str:
    """``openai:gpt-4o`` (the judge), ``none · agent openai:gpt-4o`` (no judge, an LLM agent)
    or ``none``: what follows "judge" in a run's header."""
    judge = judge_name(run.judge)
    if judge != "none":
        extra = (run.judge or {}).get("evaluator_models")
        models = extra.get("models") if isinstance(extra, Mapping) else None
        if models:
            judge += f" · evaluators {redact(', '.join(str(m) for m in models))}"
        return judge
    agent = agent_model(run.config)
    return f"none · agent {redact(agent)}" if agent else "none"
