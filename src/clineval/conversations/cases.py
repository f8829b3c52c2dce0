"""Conversations as clineval cases, and back.

A saved conversation becomes a case whose ``input`` is its messages (as
:class:`~clineval.model.Turn`), whose ``response`` is the last agent message, and whose
metadata holds the whole conversation (key ``conversation``) with its patient, scenario
and trial. A simulated conversation is the output of the simulator (the runner keeps it
under ``metadata.agent_output.conversation``). Conversation metrics read either with
:func:`conversation_of`.
"""

from __future__ import annotations

from typing import Any

from clineval.conversations.model import Conversation
from clineval.model import Case, ToolCall, Turn

CONVERSATION_KEY = "conversation"


def to_turns(conversation: Conversation) -> list[Turn]:
    turns = []
    for message in conversation.messages:
        turns.append(
            Turn(
                role=message.role,
                content=message.text,
                name=message.speaker,
                tool_calls=[
                    ToolCall(name=c.name, arguments=c.arguments, output=c.result, id=c.id)
                    for c in message.tool_calls
                ],
                tool_call_id=message.tool_call_id,
            )
        )
    return turns


def conversation_to_case(conversation: Conversation) -> Case:
    """A saved conversation as a case (its id is the conversation's id)."""
    last = next((m.text for m in reversed(conversation.messages) if m.role == "assistant" and m.text), None)
    metadata: dict[str, Any] = {
        "patient_id": conversation.patient_id,
        "scenario": conversation.scenario,
        "trial": conversation.trial,
        "system_version": conversation.system_version,
        CONVERSATION_KEY: conversation.model_dump(mode="json", exclude_none=True),
    }
    return Case(
        id=conversation.id,
        input=to_turns(conversation),
        response=last,
        metadata={k: v for k, v in metadata.items() if v is not None},
    )


def conversation_of(case: Case) -> Conversation | None:
    """The conversation a case holds: the simulator's output, else the loaded transcript."""
    output = case.metadata.get("agent_output")
    if isinstance(output, dict) and isinstance(output.get(CONVERSATION_KEY), dict):
        return Conversation.model_validate(output[CONVERSATION_KEY])
    stored = case.metadata.get(CONVERSATION_KEY)
    if isinstance(stored, dict):
        return Conversation.model_validate(stored)
    return None
