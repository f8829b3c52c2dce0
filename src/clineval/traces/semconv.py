"""The one table of which span attribute or event gives which clineval field.

:mod:`clineval.traces.assemble` reads spans only through this table (:func:`names`), so a
renamed attribute is one edit here. docs/traces-semconv.md shows the same table.

Conventions followed:

* **OpenTelemetry GenAI semantic conventions 1.37 and later** (``gen_ai.input.messages``,
  ``gen_ai.output.messages``, ``gen_ai.system_instructions`` as JSON in the
  ``{role, parts: [{type, ...}]}`` form; ``gen_ai.conversation.id``; ``invoke_agent``,
  ``execute_tool`` spans with ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``),
  including the conventions' later home, the ``semantic-conventions-genai`` repository
  (``gen_ai.retrieval.documents``; the inference span type renamed, names on the wire
  unchanged) and the ``gen_ai.client.inference.operation.details`` event, whose attributes
  are read as the span's own.
* **The older event form, 1.36 and before**: ``gen_ai.system.message``,
  ``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message`` and
  ``gen_ai.choice`` events whose body is OpenAI-like (``content``; ``tool_calls`` as
  ``[{id, type, function: {name, arguments}}]``; ``id`` on a tool message; ``message`` and
  ``index`` on a choice). The conventions send these as log records; a span keeps only span
  events, so the body is read from the event attribute ``gen_ai.event.content`` (a JSON
  string, as the Azure AI Inference and Semantic Kernel instrumentations record it), else
  from the event's attributes themselves (uncertain: no convention says so).
* **OpenInference** (Phoenix): ``retrieval.documents.N.document.content`` for retrieved
  documents, ``session.id`` for the conversation, ``llm.token_count.*`` and
  ``llm.model_name``.

Rows marked ``certain=False`` are names read on a best-effort basis; the note says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from clineval.store.traces import CONVERSATION_KEYS

__all__ = [
    "AGENT_CALLS",
    "CHOICE_EVENT",
    "CONVENTIONS",
    "DETAILS_EVENT",
    "GENAI_PREFIXES",
    "MESSAGE_EVENTS",
    "MODEL_CALLS",
    "OPENINFERENCE_DOCUMENT",
    "TABLE",
    "TOOL_CALLS",
    "Mapping",
    "names",
]

Where = Literal["span attribute", "event", "event attribute", "span name", "span status"]

#: The conventions this table follows, for the docs and the assembled traffic's metadata.
CONVENTIONS = (
    "OpenTelemetry GenAI semantic conventions 1.37+ (attributes form), read also in the "
    "1.36 event form; OpenInference for retrieved documents"
)


@dataclass(frozen=True)
class Mapping:
    """One clineval field and the names that give it, preferred first."""

    field: str
    names: tuple[str, ...]
    where: Where
    convention: str
    note: str = ""
    certain: bool = True


TABLE: tuple[Mapping, ...] = (
    # -- grouping and roles of spans ------------------------------------------------------
    Mapping(
        "conversation.id",
        CONVERSATION_KEYS,  # the store indexes spans by the same names
        "span attribute",
        "GenAI 1.37+; OpenInference session.id",
        "spans without one inherit their nearest ancestor's, else their trace's; else the "
        "trace id is the conversation",
    ),
    Mapping(
        "span.operation",
        ("gen_ai.operation.name",),
        "span attribute",
        "GenAI",
        "chat, text_completion, generate_content: a model call; invoke_agent, create_agent; "
        "execute_tool; embeddings; retrieval. Without it, the span name's first word.",
    ),
    Mapping("span.operation", ("{operation} {target}",), "span name", "GenAI", "fallback"),
    # -- the agent ---------------------------------------------------------------------------
    Mapping(
        "message.speaker (assistant)",
        ("gen_ai.agent.name",),
        "span attribute",
        "GenAI",
        "on the nearest enclosing invoke_agent span, else on the chat span itself, else the "
        "output message's name, else 'assistant'",
    ),
    Mapping(
        "message.metadata.agent_id",
        ("gen_ai.agent.id",),
        "span attribute",
        "GenAI",
        "removed from internal invoke_agent spans after 1.41; kept when present",
    ),
    # -- model and usage -----------------------------------------------------------------
    Mapping(
        "message.metadata.model",
        ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"),
        "span attribute",
        "GenAI; OpenInference llm.model_name",
    ),
    Mapping(
        "message.usage.prompt_tokens",
        ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"),
        "span attribute",
        "GenAI; older gen_ai.usage.prompt_tokens; OpenInference",
        "gen_ai.usage.prompt_tokens is the name before the input/output renaming",
    ),
    Mapping(
        "message.usage.completion_tokens",
        ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"),
        "span attribute",
        "GenAI; older gen_ai.usage.completion_tokens; OpenInference",
    ),
    # -- messages: the attributes form -----------------------------------------------------
    Mapping(
        "messages (history sent)",
        ("gen_ai.input.messages",),
        "span attribute",
        "GenAI 1.37+",
        "JSON string or structured list of {role, parts, name}; parts: text -> text, "
        "tool_call -> tool call, tool_call_response -> a tool message; deduplicated across "
        "the chat spans of a conversation",
    ),
    Mapping(
        "messages (model answer)",
        ("gen_ai.output.messages",),
        "span attribute",
        "GenAI 1.37+",
        "each message is one choice; only the first choice is kept",
    ),
    Mapping(
        "messages (system)",
        ("gen_ai.system_instructions",),
        "span attribute",
        "GenAI 1.37+",
        "list of text parts; one system message per distinct text",
    ),
    Mapping(
        "tool message.result",
        ("response", "result"),
        "span attribute",
        "GenAI 1.37+ (part keys)",
        "the tool_call_response part's key: the JSON schema says 'response', the 1.37 "
        "example shows 'result'; both read",
        certain=False,
    ),
    Mapping(
        "span attributes",
        ("gen_ai.client.inference.operation.details",),
        "event",
        "GenAI 1.37+",
        "the event's attributes are read as the span's (messages, model, usage)",
    ),
    # -- messages: the older event form ---------------------------------------------------
    Mapping(
        "message (by role)",
        (
            "gen_ai.system.message",
            "gen_ai.user.message",
            "gen_ai.assistant.message",
            "gen_ai.tool.message",
        ),
        "event",
        "GenAI 1.36 and before",
        "body: content, tool_calls, id (the tool call a tool message answers), role",
    ),
    Mapping(
        "message (model answer)",
        ("gen_ai.choice",),
        "event",
        "GenAI 1.36 and before",
        "body: index, finish_reason, message {content, tool_calls}; index 0 only",
    ),
    Mapping(
        "event body",
        ("gen_ai.event.content",),
        "event attribute",
        "Azure AI Inference, Semantic Kernel",
        "a JSON string of the body; without it the event's attributes are the body",
        certain=False,
    ),
    # -- tools ------------------------------------------------------------------------------
    Mapping("tool_call.name", ("gen_ai.tool.name",), "span attribute", "GenAI", "on execute_tool spans"),
    Mapping(
        "tool_call.id",
        ("gen_ai.tool.call.id",),
        "span attribute",
        "GenAI",
        "matches the execute_tool span to the assistant message's tool call of the same id",
    ),
    Mapping(
        "tool_call.arguments",
        ("gen_ai.tool.call.arguments",),
        "span attribute",
        "GenAI 1.37+",
        "JSON string or object; fills the call's arguments when the messages lack them",
    ),
    Mapping(
        "tool_call.result",
        ("gen_ai.tool.call.result",),
        "span attribute",
        "GenAI 1.37+",
        "fills the call's result and its tool message when the messages lack them",
    ),
    # -- errors ---------------------------------------------------------------------------
    Mapping("error", ("error",), "span status", "OpenTelemetry", "status code ERROR, with its message"),
    Mapping("error.type", ("error.type",), "span attribute", "OpenTelemetry (stable)"),
    # -- retrieved documents ------------------------------------------------------------------
    Mapping(
        "case.contexts",
        ("gen_ai.retrieval.documents",),
        "span attribute",
        "GenAI (semantic-conventions-genai, retrieval spans)",
        "documents are {id, score, ...}: the text is read from 'content' (else 'text'), "
        "which the schema allows but does not name",
        certain=False,
    ),
    Mapping(
        "case.contexts",
        ("retrieval.documents.{N}.document.content",),
        "span attribute",
        "OpenInference (Phoenix) retriever spans",
        "flattened list, N from 0",
    ),
)

#: Attribute prefixes that make a span a GenAI span (else it is skipped, counted).
GENAI_PREFIXES = ("gen_ai.", "retrieval.documents.", "openinference.span.kind")
#: Older-form message events and the role each gives.
MESSAGE_EVENTS: dict[str, str] = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
#: OpenInference's flattened document content: ``retrieval.documents.{N}.document.content``.
OPENINFERENCE_DOCUMENT = ("retrieval.documents.", ".document.content")

#: Operation names (gen_ai.operation.name) by what clineval does with the span.
MODEL_CALLS = frozenset({"chat", "text_completion", "generate_content"})
AGENT_CALLS = frozenset({"invoke_agent", "create_agent"})
TOOL_CALLS = frozenset({"execute_tool"})


def names(field: str) -> tuple[str, ...]:
    """The attribute names that give ``field``, preferred first (span attributes only)."""
    found = tuple(
        name for row in TABLE if row.field == field and row.where == "span attribute" for name in row.names
    )
    if not found:
        raise KeyError(f"no span attribute gives {field!r} in the semantic-conventions table")
    return found
