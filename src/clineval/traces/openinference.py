"""OpenInference spans read as GenAI ones: the attributes Arize Phoenix and the OpenInference
instrumentations (openinference-instrumentation-openai, -langchain, -llama-index, ...) write,
mapped to the GenAI semantic conventions' attributes the assembly reads.

By ``openinference.span.kind``:

* ``LLM``: a ``chat`` span; ``llm.input_messages`` -> ``gen_ai.input.messages``,
  ``llm.output_messages`` -> ``gen_ai.output.messages`` (roles, ``message.content`` or its
  text ``message.contents``, ``message.tool_calls``, ``message.tool_call_id``; several
  assistant output messages are one answer); without them ``input.value`` /
  ``output.value`` (a request's ``messages``, a response's ``choices``, or text).
  ``llm.model_name`` and ``llm.token_count.*`` are read by the assembly as they are;
* ``TOOL``: ``execute_tool``; ``tool.name``, ``input.value`` as arguments, ``output.value``
  as result, ``tool_call.id`` when recorded;
* ``AGENT``: ``invoke_agent`` with ``gen_ai.agent.name`` = ``agent.name``, else the span name;
* ``RETRIEVER``: ``retrieval.documents.N.document.content`` is read by the assembly as it is.

Used by the Phoenix export reader (:mod:`clineval.traces.phoenix`) and by the assembly for
spans received over OTLP (:func:`with_genai`). The original attributes are kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import JsonValue

from clineval.model.trace import SpanRecord
from clineval.traces.exports import ChatMessage, chat_message, genai_messages, merged_answer, messages_from

__all__ = ["KIND", "add_genai", "with_genai"]

#: The attribute that says what an OpenInference span is.
KIND = "openinference.span.kind"


def _indexed(flat: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.rest`` keys as one dict of ``rest`` keys per N, in order of N."""
    groups: dict[int, dict[str, Any]] = {}
    head = prefix + "."
    for key, value in flat.items():
        if key.startswith(head):
            index, _, rest = key[len(head) :].partition(".")
            if index.isdigit() and rest:
                groups.setdefault(int(index), {})[rest] = value
    return [groups[n] for n in sorted(groups)]


def _oi_message(fields: Mapping[str, Any], role: str) -> ChatMessage | None:
    """An OpenInference message (``message.role``, ``message.content``, ...) read as an
    OpenAI chat message."""
    raw: dict[str, Any] = {"role": fields.get("message.role") or role}
    if "message.content" in fields:
        raw["content"] = fields["message.content"]
    contents = _indexed(fields, "message.contents")
    if contents and "content" not in raw:
        raw["content"] = [
            {"type": part.get("message_content.type") or "text", "text": part.get("message_content.text")}
            for part in contents
            if part.get("message_content.type") in (None, "text")
        ]
    calls = _indexed(fields, "message.tool_calls")
    if calls:
        raw["tool_calls"] = [
            {
                "id": call.get("tool_call.id"),
                "function": {
                    "name": call.get("tool_call.function.name"),
                    "arguments": call.get("tool_call.function.arguments"),
                },
            }
            for call in calls
        ]
    for key, target in (("message.tool_call_id", "tool_call_id"), ("message.name", "name")):
        if key in fields:
            raw[target] = fields[key]
    return chat_message(raw)


def _messages(flat: Mapping[str, Any], prefix: str, value_key: str, role: str) -> list[ChatMessage]:
    found = [m for fields in _indexed(flat, prefix) if (m := _oi_message(fields, role)) is not None]
    return found or messages_from(flat.get(value_key), role)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def add_genai(kind: str, name: str, attributes: dict[str, JsonValue]) -> None:
    """Add to ``attributes`` (in place) the GenAI attributes the assembly reads, from the
    OpenInference ones of a span of this kind (``LLM``, ``TOOL``, ``AGENT``) and name; a
    span that already names its GenAI operation is left as it is."""
    if "gen_ai.operation.name" in attributes:
        return
    if kind == "LLM":
        attributes["gen_ai.operation.name"] = "chat"
        if "gen_ai.input.messages" not in attributes:
            inputs = _messages(attributes, "llm.input_messages", "input.value", "user")
            if inputs:
                attributes["gen_ai.input.messages"] = genai_messages(inputs)
        if "gen_ai.output.messages" not in attributes:
            outputs = _messages(attributes, "llm.output_messages", "output.value", "assistant")
            if outputs:
                attributes["gen_ai.output.messages"] = genai_messages(merged_answer(outputs))
    elif kind == "TOOL":
        attributes["gen_ai.operation.name"] = "execute_tool"
        tool = attributes.get("tool.name") or attributes.get("tool_call.function.name") or name
        attributes["gen_ai.tool.name"] = str(tool)
        arguments = attributes.get("tool_call.function.arguments", attributes.get("input.value"))
        if arguments is not None:
            attributes["gen_ai.tool.call.arguments"] = _text(arguments)
        if attributes.get("output.value") is not None:
            attributes["gen_ai.tool.call.result"] = _text(attributes["output.value"])
        if isinstance(attributes.get("tool_call.id"), str):
            attributes["gen_ai.tool.call.id"] = attributes["tool_call.id"]
    elif kind == "AGENT":
        attributes["gen_ai.operation.name"] = "invoke_agent"
        attributes["gen_ai.agent.name"] = str(attributes.get("agent.name") or name or "agent")


def with_genai(span: SpanRecord) -> SpanRecord:
    """The span with GenAI attributes added from its OpenInference ones (the span itself
    when it has no ``openinference.span.kind`` or already names its GenAI operation)."""
    kind = span.attributes.get(KIND)
    if not isinstance(kind, str) or "gen_ai.operation.name" in span.attributes:
        return span
    attributes = dict(span.attributes)
    add_genai(kind.upper(), span.name, attributes)
    return span.model_copy(update={"attributes": attributes}) if attributes != span.attributes else span
