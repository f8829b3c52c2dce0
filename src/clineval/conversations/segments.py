"""Split a conversation into what one agent said, each with what came just before.

Definitions (the same rules as the public evaluation code of the Healthcare Agent
Orchestrator, except where noted):

- An agent's **run** is a maximal sequence of consecutive messages made of ``assistant``
  messages whose speaker is the agent (compared case-insensitively) and of the ``tool``
  messages that answer the calls made in the run (a ``tool`` message answers a call when
  its ``tool_call_id`` is the id of a call of the run, or, having no ``tool_call_id``,
  when the run has made a call). Any other message ends the run.
- A **segment** is one run (its ``response``: every message of the run, not only the
  last one as in the public code) with its ``context``: up to ``context_window``
  messages just before the run, counted as messages (tool messages included), but
  never reaching back before the end of the previous segment of the same agent. So what
  the agent already said is never the context of its next answer; the context is what
  happened since. ``context_window=0`` gives no context.
- A segment's ``response_text`` is the response with its tool calls and results rendered
  (what a judge should see); ``answer_text`` is only the agent's own words (what
  reference-based scores such as ROUGE and TBFact should compare).
- A **user turn** is a ``user`` message with the agents that answered it: the speakers of
  the ``assistant`` messages after it and before the next user message, in order of
  first appearance (used by agent selection accuracy).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.conversations.model import Conversation, Message, render_transcript

__all__ = ["Segment", "UserTurn", "agent_segments", "user_turns"]


class Segment(BaseModel):
    """One run of an agent's messages (``response``) and the messages just before it
    (``context``). ``index`` counts the agent's segments from 0."""

    model_config = ConfigDict(extra="forbid")

    index: int
    agent: str
    """The agent's name as asked for."""
    context: list[Message] = Field(default_factory=list)
    response: list[Message]
    start: int = 0
    """Position in the conversation of the first response message."""
    end: int = 0
    """Position in the conversation just after the last response message."""

    @property
    def response_text(self) -> str:
        """The response as text: each agent message's text, then its tool calls and their
        results (``[tool call name({...})]``, ``[tool result name: ...]``); messages are
        separated by blank lines. A tool message's text appears only when its result is not
        already on the call it answers."""
        answered = {
            call.id
            for message in self.response
            for call in message.tool_calls
            if call.id is not None and call.result is not None
        }
        blocks: list[str] = []
        for message in self.response:
            lines: list[str] = []
            if message.role == "tool":
                if message.tool_call_id in answered or not message.text.strip():
                    continue
                lines.append(f"[tool result: {message.text.strip()}]")
            else:
                if message.text.strip():
                    lines.append(message.text.strip())
                for call in message.tool_calls:
                    lines.append(f"[tool call {call.name}({_compact(call.arguments)})]")
                    if call.result is not None:
                        lines.append(f"[tool result {call.name}: {_compact(call.result)}]")
            if lines:
                blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    @property
    def answer_text(self) -> str:
        """Only what the agent wrote: the text of its messages in the response, separated
        by blank lines (no tool calls, no tool results). Reference-based metrics (ROUGE,
        TBFact) should read this, so that tool output is not taken for the agent's answer."""
        return "\n\n".join(m.text.strip() for m in self.response if m.role == "assistant" and m.text.strip())

    @property
    def request(self) -> str:
        """The text of the last user message in the context, or ``""``."""
        for message in reversed(self.context):
            if message.role == "user":
                return message.text
        return ""

    def transcript(self, *, with_tools: bool = True) -> str:
        """Context and response as one transcript (:func:`render_transcript`)."""
        return render_transcript([*self.context, *self.response], with_tools=with_tools)


class UserTurn(BaseModel):
    """A user message and the agents that answered it. ``index`` counts the user turns
    from 0; ``position`` is the message's position in the conversation."""

    model_config = ConfigDict(extra="forbid")

    index: int
    position: int
    message: Message
    agents: list[str] = Field(default_factory=list)
    """Speakers of the assistant messages before the next user message, in order of first
    appearance."""
    responses: list[Message] = Field(default_factory=list)
    """Every message after this one and before the next user message."""

    @property
    def first_agent(self) -> str | None:
        """The agent that answered first, if any."""
        return self.agents[0] if self.agents else None

    @property
    def gold_agent(self) -> str | None:
        """The agent that should have answered, when the dataset says."""
        return self.message.gold_agent


def agent_segments(conversation: Conversation, agent: str, *, context_window: int = 5) -> list[Segment]:
    """The agent's segments, in order (none when the agent never speaks).

    See the module docstring for the definitions of runs, context and the rule that the
    context never reaches back before the agent's previous segment.
    """
    if context_window < 0:
        raise ValueError(f"context_window must be >= 0, got {context_window}")
    wanted = agent.casefold()
    messages = conversation.messages
    segments: list[Segment] = []
    previous_end = 0
    position = 0
    while position < len(messages):
        message = messages[position]
        if not _is_agent(message, wanted):
            position += 1
            continue
        start = position
        call_ids: set[str] = set()
        made_call = False
        while position < len(messages):
            current = messages[position]
            if _is_agent(current, wanted):
                for call in current.tool_calls:
                    made_call = True
                    if call.id is not None:
                        call_ids.add(call.id)
            elif not (
                current.role == "tool"
                and (
                    (current.tool_call_id is not None and current.tool_call_id in call_ids)
                    or (current.tool_call_id is None and made_call)
                )
            ):
                break
            position += 1
        context_start = max(start - context_window, previous_end)
        segments.append(
            Segment(
                index=len(segments),
                agent=agent,
                context=list(messages[context_start:start]) if context_window else [],
                response=list(messages[start:position]),
                start=start,
                end=position,
            )
        )
        previous_end = position
    return segments


def user_turns(conversation: Conversation) -> list[UserTurn]:
    """One :class:`UserTurn` per user message, in order."""
    turns: list[UserTurn] = []
    positions = [i for i, m in enumerate(conversation.messages) if m.role == "user"]
    for n, position in enumerate(positions):
        stop = positions[n + 1] if n + 1 < len(positions) else len(conversation.messages)
        responses = conversation.messages[position + 1 : stop]
        agents: dict[str, None] = {}
        for message in responses:
            if message.role == "assistant":
                agents.setdefault(message.speaker, None)
        turns.append(
            UserTurn(
                index=n,
                position=position,
                message=conversation.messages[position],
                agents=list(agents),
                responses=list(responses),
            )
        )
    return turns


def _is_agent(message: Message, wanted: str) -> bool:
    return message.role == "assistant" and message.speaker.casefold() == wanted


def _compact(value: Any, limit: int = 1500) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"
