"""A case: one thing to evaluate, with everything a metric may look at.

A case holds what went into the system (``input``), what came out (``response``,
``trajectory``, ``contexts``), the reference material to judge it against
(``reference``, ``reference_trajectory``, ``gold_facts``, ``expected``) and free
``metadata``. When clineval ran the agent itself, ``agent_run`` records latency and
failure. A field that is ``None`` is *missing*; an empty string or list is present
and empty, and metrics treat the two differently.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, JsonValue, model_validator


def _as_str(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and not (isinstance(value, float) and math.isnan(value)):
        return str(int(value)) if float(value).is_integer() else str(value)
    return value


CaseId = Annotated[str, BeforeValidator(_as_str), Field(min_length=1)]


class ToolCall(BaseModel):
    """One tool call of a trajectory: a tool name, its arguments and, optionally, its output.

    Accepts the common spellings found in agent logs: ``{"tool_name", "tool_input"}``
    (cloud agent evaluation datasets), ``{"name", "arguments"}`` with arguments as an
    object or a JSON string (OpenAI), ``{"function": {"name", "arguments"}}`` (OpenAI
    message tool calls), ``{"name", "args"}``, or a bare tool name.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    output: JsonValue = None
    id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"name": data}
        if not isinstance(data, dict):
            return data
        data = dict(data)
        function = data.pop("function", None)
        data.pop("type", None)
        if isinstance(function, dict):
            data.setdefault("name", function.get("name"))
            if "arguments" in function:
                data.setdefault("arguments", function.get("arguments"))
        for alias, field in (
            ("tool_name", "name"),
            ("tool_input", "arguments"),
            ("args", "arguments"),
            ("input", "arguments"),
            ("tool_output", "output"),
            ("result", "output"),
        ):
            if alias in data:
                if field in data and data[field] is not None:
                    raise ValueError(f"both '{alias}' and '{field}' are given; use one")
                data[field] = data.pop(alias)
        arguments = data.get("arguments")
        if arguments is None:
            data["arguments"] = {}
        elif isinstance(arguments, str):
            text = arguments.strip()
            if not text:
                data["arguments"] = {}
            else:
                try:
                    parsed = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"tool arguments are not valid JSON: {exc.msg}") from exc
                if not isinstance(parsed, dict):
                    raise ValueError("tool arguments must be a JSON object")
                data["arguments"] = parsed
        return data


def trajectory_from_text(value: Any) -> Any:
    """A trajectory given as a JSON string of a list (as cloud agent evaluation datasets
    allow) as that list; anything else unchanged, for the field's own validation."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"expected a list of tool calls, or a JSON string of one; got text that is not JSON ({exc.msg})"
        ) from None
    if not isinstance(parsed, list):
        raise ValueError(f"expected a list of tool calls, got a JSON {type(parsed).__name__}")
    return parsed


Trajectory = Annotated[list[ToolCall], BeforeValidator(trajectory_from_text)]
"""A list of tool calls, also read from a JSON string of one."""


class Turn(BaseModel):
    """One message of a conversation given as a case's input."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str = ""
    name: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _null_content(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("content") is None and "content" in data:
            data = {**data, "content": ""}
        return data


class GoldFact(BaseModel):
    """A curated reference fact, optionally with a category and an importance."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    category: str | None = None
    importance: Literal["high", "medium", "low"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"text": data}
        return data


class AgentRun(BaseModel):
    """What happened when clineval ran the agent under test on this case."""

    model_config = ConfigDict(extra="forbid")

    latency_s: float | None = Field(default=None, ge=0)
    failed: bool = False
    error: str | None = None
    attempts: int = Field(default=1, ge=1)


class Case(BaseModel):
    """One evaluation case. See the module docstring for the meaning of missing fields."""

    model_config = ConfigDict(extra="forbid")

    id: CaseId
    input: str | list[Turn] | None = None
    response: str | None = None
    trajectory: Trajectory | None = None
    contexts: list[str] | None = None
    reference: str | None = None
    reference_trajectory: Trajectory | None = None
    gold_facts: list[GoldFact] | None = None
    expected: JsonValue = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    agent_run: AgentRun | None = None

    @model_validator(mode="before")
    @classmethod
    def _single_context(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("contexts"), str):
            data = {**data, "contexts": [data["contexts"]]}
        if isinstance(data, dict):
            # A blank trajectory string is a missing trajectory, as an empty CSV cell is.
            blank = [
                key
                for key in ("trajectory", "reference_trajectory")
                if isinstance(data.get(key), str) and not data[key].strip()
            ]
            if blank:
                data = {**data, **dict.fromkeys(blank)}
        return data

    def has(self, field: str) -> bool:
        """True when ``field`` is present (not ``None``) on this case."""
        return getattr(self, field) is not None

    def input_text(self) -> str:
        """The input as plain text: the query, or the conversation rendered line by line."""
        if self.input is None:
            return ""
        if isinstance(self.input, str):
            return self.input
        return "\n".join(f"{turn.name or turn.role}: {turn.content}" for turn in self.input)


#: Names of the case fields a metric may require.
CASE_FIELDS: tuple[str, ...] = tuple(Case.model_fields)
