"""Multi-agent conversations (as in the Healthcare Agent Orchestrator): ordered messages
between a user and named agents, with tool calls and their results, and what the
conversation is about.

A :class:`Conversation` is what the loaders produce from saved transcripts (native
JSONL, OpenAI-style message lists, Semantic Kernel chat histories), what the simulator
writes, and what the conversation metrics read. The native form is this model as JSON,
one conversation per line of a ``.jsonl`` file (see docs/conversations.md).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

Role = Literal["system", "user", "assistant", "tool"]
USER = "user"
"""The ``speaker`` of messages written by the (real or simulated) user."""


class ToolCallRecord(BaseModel):
    """A tool (function) call made by an agent, with its result once known."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    name: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    result: JsonValue = None
    """The tool's output, when the transcript has it (filled from the matching tool message)."""


class TokenUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Message(BaseModel):
    """One message: who spoke, what they said, which tools they called."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    speaker: str
    """The agent's name (``Orchestrator``, ``PatientHistory``), ``user``, or ``tool``."""
    text: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    tool_call_id: str | None = None
    """For a ``tool`` message: the id of the call it answers."""
    timestamp: str | None = None
    """ISO 8601 when known."""
    usage: TokenUsage | None = None
    gold_agent: str | None = None
    """On a user message: the agent that should answer it (a turn-level label, when the
    dataset has one; agent selection accuracy uses it)."""
    gold_tools: list[str] | None = None
    """On a user message: the tools the answer should call (names; a turn-level label, when
    the dataset has one; tool selection accuracy uses it). An empty list: no tool."""
    metadata: dict[str, JsonValue] = Field(default_factory=dict)


class Conversation(BaseModel):
    """A conversation and what it is about."""

    model_config = ConfigDict(extra="forbid")

    id: str
    messages: list[Message]
    patient_id: str | None = None
    """The patient the conversation is about: set by the scenario or the file, not only
    inferred from a tool call."""
    scenario: str | None = None
    trial: int | None = None
    system_version: str | None = None
    source: str | None = None
    """Where it was loaded from (file and line)."""
    metadata: dict[str, JsonValue] = Field(default_factory=dict)

    @property
    def agents(self) -> list[str]:
        """The agents that spoke, in order of first appearance."""
        seen: dict[str, None] = {}
        for message in self.messages:
            if message.role == "assistant":
                seen.setdefault(message.speaker, None)
        return list(seen)


def render_message(message: Message, *, with_tools: bool = True) -> str:
    """A message as transcript text for a judge: speaker, text, then tool calls and results."""
    lines = [f"{message.speaker} ({message.role}):"]
    if message.text.strip():
        lines.append(message.text.strip())
    if with_tools:
        for call in message.tool_calls:
            lines.append(f"[tool call {call.name}({_compact(call.arguments)})]")
            if call.result is not None:
                lines.append(f"[tool result {call.name}: {_compact(call.result)}]")
        if message.role == "tool" and not message.text.strip():
            lines.append("[tool result]")
    return "\n".join(lines)


def render_transcript(messages: list[Message], *, with_tools: bool = True) -> str:
    """Messages as one transcript, separated by blank lines."""
    return "\n\n".join(render_message(m, with_tools=with_tools) for m in messages)


def _compact(value: Any, limit: int = 1500) -> str:
    import json

    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"
