"""From stored spans to clineval conversations and cases.

:func:`assemble` groups spans by conversation (``gen_ai.conversation.id``, else the trace),
holds back conversations still receiving spans, and builds one
:class:`~clineval.conversations.model.Conversation` per group; :func:`cases_from_traffic`
makes cases of them for clineval's metrics. Which attribute gives which field is
:mod:`clineval.traces.semconv`'s table; docs/traces-semconv.md explains the rules.

Building a conversation, spans in time order:

* a model call (``chat``, ``text_completion``, ``generate_content``) contributes the history
  it sent (``gen_ai.system_instructions``, ``gen_ai.input.messages`` or the older message
  events) and its answer (``gen_ai.output.messages`` or the ``gen_ai.choice`` event). Each
  call re-sends the history, so the messages sent are matched, in order, against the
  conversation so far and only those not found are added; the answer is always added,
  with the agent, model, token usage, latency and error of its span;
* an agent span (``invoke_agent``) contributes its messages at its end, matched the same
  way (so an agent that records only its input and final answer still gives them);
* an ``execute_tool`` span fills the arguments and result of the assistant's tool call of
  the same ``gen_ai.tool.call.id`` (or adds the call to the latest assistant message
  before it) and the ``tool`` message that answers it;
* retrieved documents and errors of every span are kept in the conversation's metadata.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from clineval.conversations.cases import conversation_to_case
from clineval.conversations.loaders import TranscriptProblem as _Problem  # the OpenAI-format reader's error
from clineval.conversations.loaders import openai_message as _openai_message
from clineval.conversations.model import USER, Conversation, Message, TokenUsage, ToolCallRecord
from clineval.model import AgentRun, Case, ToolCall
from clineval.model.trace import SpanRecord
from clineval.traces import openinference, semconv
from clineval.traces.exports import json_or_text

__all__ = [
    "AssembledTraffic",
    "PendingConversation",
    "assemble",
    "cases_from_traffic",
]

SKIP_NO_GENAI = "no GenAI attribute or event"
SKIP_DUPLICATE = "duplicate span (same trace and span id)"
SKIP_UNREADABLE = "unreadable message (not in the conventions' form)"
SKIP_EMPTY = "conversation without messages or tool calls"


class PendingConversation(BaseModel):
    """A conversation still receiving spans: held back until idle."""

    model_config = ConfigDict(extra="forbid")

    id: str
    trace_ids: list[str]
    spans: int
    last_span_end_unix_nano: int
    idle_s: float


class AssembledTraffic(BaseModel):
    """What :func:`assemble` made of a batch of spans."""

    model_config = ConfigDict(extra="forbid")

    conversations: list[Conversation] = Field(default_factory=list)
    pending: list[PendingConversation] = Field(default_factory=list)
    skipped: dict[str, int] = Field(default_factory=dict)
    """Reason -> count: spans (no GenAI attribute, duplicates), messages, conversations."""
    spans_read: int = 0
    conventions: str = semconv.CONVENTIONS


# -- assembling --------------------------------------------------------------------------


def assemble(
    spans: Iterable[SpanRecord], *, idle_seconds: float, now_ns: int | None = None
) -> AssembledTraffic:
    """Conversations from spans; those whose last span ended less than ``idle_seconds``
    before ``now_ns`` (default: now) are returned as pending instead."""
    now = time.time_ns() if now_ns is None else now_ns
    skipped: dict[str, int] = {}
    by_id: dict[tuple[str, str], SpanRecord] = {}
    read = 0
    for span in spans:
        read += 1
        key = (span.trace_id, span.span_id)
        if key in by_id:
            _count(skipped, SKIP_DUPLICATE)
            continue
        by_id[key] = openinference.with_genai(span)  # OpenInference instrumentations' spans
    genai = [s for s in by_id.values() if _is_genai(s)]
    for _ in range(len(by_id) - len(genai)):
        _count(skipped, SKIP_NO_GENAI)

    trace_conversations: dict[str, list[str]] = {}
    for span in genai:
        cid = _first_str(span.attributes, semconv.names("conversation.id"))
        if cid and cid not in trace_conversations.setdefault(span.trace_id, []):
            trace_conversations[span.trace_id].append(cid)
    groups: dict[str, list[SpanRecord]] = {}
    for span in genai:
        groups.setdefault(_conversation_id(span, by_id, trace_conversations), []).append(span)

    traffic = AssembledTraffic(spans_read=read)
    for cid, members in groups.items():
        members.sort(key=lambda s: (s.start_time_unix_nano, s.end_time_unix_nano, s.span_id))
        trace_ids = list(dict.fromkeys(s.trace_id for s in members))
        last_end = max(s.end_time_unix_nano for s in members)
        if now - last_end < idle_seconds * 1e9:
            traffic.pending.append(
                PendingConversation(
                    id=cid,
                    trace_ids=trace_ids,
                    spans=len(members),
                    last_span_end_unix_nano=last_end,
                    idle_s=max(0.0, (now - last_end) / 1e9),
                )
            )
            continue
        conversation = _Builder(cid, members, by_id, skipped).build()
        if conversation is None:
            _count(skipped, SKIP_EMPTY)
            continue
        traffic.conversations.append(conversation)
    traffic.skipped = skipped
    return traffic


def _count(skipped: dict[str, int], reason: str, n: int = 1) -> None:
    skipped[reason] = skipped.get(reason, 0) + n


def _is_genai(span: SpanRecord) -> bool:
    if any(key.startswith(semconv.GENAI_PREFIXES) for key in span.attributes):
        return True
    return any(event.name.startswith("gen_ai.") for event in span.events)


def _conversation_id(
    span: SpanRecord, by_id: Mapping[tuple[str, str], SpanRecord], per_trace: Mapping[str, list[str]]
) -> str:
    for ancestor in _lineage(span, by_id):
        cid = _first_str(ancestor.attributes, semconv.names("conversation.id"))
        if cid:
            return cid
    ids = per_trace.get(span.trace_id, [])
    return ids[0] if len(ids) == 1 else span.trace_id


def _lineage(span: SpanRecord, by_id: Mapping[tuple[str, str], SpanRecord]) -> Iterable[SpanRecord]:
    """The span, then its parent, grandparent, ... as far as they were received."""
    seen: set[str] = set()
    current: SpanRecord | None = span
    while current is not None and current.span_id not in seen:
        seen.add(current.span_id)
        yield current
        parent = current.parent_span_id
        current = by_id.get((current.trace_id, parent)) if parent else None


def _operation(span: SpanRecord) -> str:
    value = _first_str(span.attributes, semconv.names("span.operation"))
    if value:
        return value
    return span.name.split(" ", 1)[0] if span.name else ""


def _first_str(attributes: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _first_int(attributes: Mapping[str, Any], keys: Sequence[str]) -> int | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
    return None


def _iso(ns: int) -> str:
    return (datetime.fromtimestamp(0, tz=UTC) + timedelta(microseconds=ns // 1000)).isoformat()


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


# -- reading messages ---------------------------------------------------------------------


_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}


def _parts_messages(raw: Any) -> list[Message]:
    """Messages of the 1.37+ form ``{role, parts, name}`` (a tool_call_response part is a
    ``tool`` message of its own)."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("parts"), list):
        raise _Problem("expected a message object with 'role' and 'parts'")
    role = _ROLES.get(str(raw.get("role", "")).lower())
    if role is None:
        raise _Problem(f"unknown role {raw.get('role')!r}")
    name = raw.get("name") if isinstance(raw.get("name"), str) and raw.get("name") else None
    texts: list[str] = []
    calls: list[ToolCallRecord] = []
    results: list[Message] = []
    skipped: list[str] = []
    for part in raw["parts"]:
        if not isinstance(part, Mapping):
            raise _Problem("a message part is not an object")
        kind = part.get("type")
        if kind == "text":
            texts.append(_text(part.get("content")))
        elif kind == "tool_call":
            tool = part.get("name")
            if not isinstance(tool, str) or not tool:
                raise _Problem("a tool_call part has no name")
            calls.append(
                ToolCallRecord(
                    id=part.get("id") if isinstance(part.get("id"), str) else None,
                    name=tool,
                    arguments=_arguments(part.get("arguments")),
                )
            )
        elif kind == "tool_call_response":
            result = part.get("response", part.get("result"))
            results.append(
                Message(
                    role="tool",
                    speaker="tool",
                    text=_text(result),
                    tool_call_id=part.get("id") if isinstance(part.get("id"), str) else None,
                )
            )
        else:
            skipped.append(str(kind))
    messages: list[Message] = []
    if texts or calls or not results:
        speaker = name or (USER if role == "user" else role)
        metadata: dict[str, JsonValue] = {"skipped_items": list(skipped)} if skipped else {}
        if role == "tool" and not calls:
            messages.append(Message(role="tool", speaker="tool", text="\n".join(texts), metadata=metadata))
        else:
            messages.append(
                Message(
                    role=role,
                    speaker=speaker,
                    text="\n".join(texts),
                    tool_calls=calls if role == "assistant" else [],
                    metadata=metadata,
                )
            )
    return messages + results


def _arguments(value: Any) -> dict[str, JsonValue]:
    value = json_or_text(value)
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    return {"_raw": _text(value)}


def _message_list(value: Any) -> list[Message]:
    raw = json_or_text(value)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _Problem("expected a list of messages")
    out: list[Message] = []
    for item in raw:
        out.extend(_parts_messages(item))
    return out


def _system_messages(value: Any) -> list[Message]:
    raw = json_or_text(value)
    if raw is None:
        return []
    if isinstance(raw, str):
        return [Message(role="system", speaker="system", text=raw)]
    if not isinstance(raw, list):
        raise _Problem("gen_ai.system_instructions: expected a list of parts")
    texts = [_text(p.get("content")) for p in raw if isinstance(p, Mapping) and p.get("type") == "text"]
    return [Message(role="system", speaker="system", text="\n".join(texts))] if texts else []


def _event_body(attributes: Mapping[str, Any]) -> dict[str, Any]:
    content = attributes.get("gen_ai.event.content")
    if content is not None:
        body = json_or_text(content)
        return dict(body) if isinstance(body, Mapping) else {"content": body}
    return dict(attributes)


def _event_message(role: str, body: Mapping[str, Any]) -> Message:
    """An older-form event body as a message, read as an OpenAI chat message."""
    raw: dict[str, Any] = {"role": body.get("role") or role, "content": body.get("content")}
    if body.get("tool_calls") is not None:
        raw["tool_calls"] = json_or_text(body["tool_calls"])
    if role == "tool" and isinstance(body.get("id"), str):
        raw["tool_call_id"] = body["id"]
    return _openai_message(raw)


# -- building one conversation ------------------------------------------------------------


@dataclass
class _Entry:
    message: Message
    time_ns: int


@dataclass
class _Builder:
    cid: str
    spans: list[SpanRecord]
    by_id: Mapping[tuple[str, str], SpanRecord]
    skipped: dict[str, int]
    entries: list[_Entry] = field(default_factory=list)
    system_seen: set[str] = field(default_factory=set)
    errors: list[dict[str, JsonValue]] = field(default_factory=list)
    retrieved: list[dict[str, JsonValue]] = field(default_factory=list)

    def build(self) -> Conversation | None:
        steps: list[tuple[int, int, SpanRecord]] = []
        for order, span in enumerate(self.spans):
            op = _operation(span)
            if op in semconv.AGENT_CALLS:
                steps.append((span.end_time_unix_nano, order, span))
            elif op not in semconv.TOOL_CALLS:
                steps.append((span.start_time_unix_nano, order, span))
        for _, _, span in sorted(steps, key=lambda step: (step[0], step[1])):
            self._messages_of(span, agent_span=_operation(span) in semconv.AGENT_CALLS)
        for span in self.spans:
            if _operation(span) in semconv.TOOL_CALLS:
                self._tool(span)
            self._error(span)
            self._documents(span)
        messages = [entry.message for entry in self.entries]
        _results_onto_calls(messages)
        if not messages:
            return None
        first = min(s.start_time_unix_nano for s in self.spans)
        last = max(s.end_time_unix_nano for s in self.spans)
        models = list(
            dict.fromkeys(m.metadata["model"] for m in messages if isinstance(m.metadata.get("model"), str))
        )
        services = list(
            dict.fromkeys(
                s.resource["service.name"]
                for s in self.spans
                if isinstance(s.resource.get("service.name"), str)
            )
        )
        metadata: dict[str, JsonValue] = {
            "conversation_id": self.cid,
            "trace_ids": list(dict.fromkeys(s.trace_id for s in self.spans)),
            "spans": len(self.spans),
            "started": _iso(first),
            "ended": _iso(last),
            "latency_s": (last - first) / 1e9,
            "models": list(models),
            "usage": _usage_total(messages),
            "errors": list(self.errors),
            "retrieved": list(self.retrieved),
        }
        if services:
            metadata["services"] = list(services)
        sources = list(dict.fromkeys(s.source for s in self.spans if s.source))
        return Conversation(
            id=self.cid,
            messages=messages,
            source=", ".join(sources) or "traces",
            metadata=metadata,
        )

    # -- messages --

    def _messages_of(self, span: SpanRecord, *, agent_span: bool) -> None:
        attributes: dict[str, Any] = dict(span.attributes)
        for event in span.events:
            if event.name == semconv.DETAILS_EVENT:
                for key, value in event.attributes.items():
                    attributes.setdefault(key, value)
        sent: list[Message] = []
        answer: list[Message] = []
        try:
            sent.extend(_system_messages(attributes.get("gen_ai.system_instructions")))
            sent.extend(_message_list(attributes.get("gen_ai.input.messages")))
            outputs = _message_list(attributes.get("gen_ai.output.messages"))
            answer.extend(outputs[:1] if outputs and outputs[0].role == "assistant" else outputs)
        except _Problem:
            _count(self.skipped, SKIP_UNREADABLE)
            sent, answer = [], []
        for event in span.events:
            try:
                if event.name in semconv.MESSAGE_EVENTS:
                    sent.append(
                        _event_message(semconv.MESSAGE_EVENTS[event.name], _event_body(event.attributes))
                    )
                elif event.name == semconv.CHOICE_EVENT:
                    body = _event_body(event.attributes)
                    if int(body.get("index") or 0) == 0:
                        inner = json_or_text(body.get("message"))
                        inner = (
                            dict(inner) if isinstance(inner, Mapping) else {"content": body.get("content")}
                        )
                        answer.append(_event_message("assistant", inner))
            except (_Problem, ValueError, TypeError):
                _count(self.skipped, SKIP_UNREADABLE)
        agent = _agent_of(span, self.by_id)
        if agent_span:  # an agent's record of its turn: matched like history, never forced in
            self._merge([*sent, *answer], span, agent, start=False)
            return
        self._merge(sent, span, agent, start=True)
        for message in answer:
            self._append(self._answer(message, span, agent), span.end_time_unix_nano)

    def _answer(self, message: Message, span: SpanRecord, agent: str | None) -> Message:
        attrs = span.attributes
        metadata: dict[str, JsonValue] = dict(message.metadata)
        metadata.update({"trace_id": span.trace_id, "span_id": span.span_id, "latency_s": span.duration_s})
        model = _first_str(attrs, semconv.names("message.metadata.model"))
        if model:
            metadata["model"] = model
        agent_id = _first_str(attrs, semconv.names("message.metadata.agent_id"))
        if agent_id:
            metadata["agent_id"] = agent_id
        error = _error_text(span)
        if error:
            metadata["error"] = error
        prompt = _first_int(attrs, semconv.names("message.usage.prompt_tokens"))
        completion = _first_int(attrs, semconv.names("message.usage.completion_tokens"))
        usage = (
            TokenUsage(prompt_tokens=prompt, completion_tokens=completion)
            if prompt is not None or completion is not None
            else None
        )
        speaker = agent or (message.speaker if message.speaker != "assistant" else None) or "assistant"
        return message.model_copy(update={"speaker": speaker, "usage": usage, "metadata": metadata})

    def _merge(self, sent: list[Message], span: SpanRecord, agent: str | None, *, start: bool) -> None:
        """Adds the messages of ``sent`` not already in the conversation, matching in order."""
        when = span.start_time_unix_nano if start else span.end_time_unix_nano
        pointer = 0
        for message in sent:
            if message.role == "system":
                if message.text not in self.system_seen:
                    self.system_seen.add(message.text)
                    self._append(message, when)
                continue
            key = _key(message)
            found = next(
                (i for i in range(pointer, len(self.entries)) if _key(self.entries[i].message) == key),
                None,
            )
            if found is not None:
                pointer = found + 1
                continue
            if message.role == "assistant" and agent and message.speaker == "assistant":
                message = message.model_copy(update={"speaker": agent})
            self._append(message, when)
            pointer = len(self.entries)

    def _append(self, message: Message, when: int) -> None:
        metadata = dict(message.metadata)
        metadata.setdefault("time_unix_nano", when)
        self.entries.append(
            _Entry(message.model_copy(update={"timestamp": _iso(when), "metadata": metadata}), when)
        )

    # -- tools --

    def _tool(self, span: SpanRecord) -> None:
        attrs = span.attributes
        name = (
            _first_str(attrs, semconv.names("tool_call.name"))
            or span.name.removeprefix("execute_tool ").strip()
        )
        call_id = _first_str(attrs, semconv.names("tool_call.id"))
        arguments = _arguments(attrs.get("gen_ai.tool.call.arguments"))
        has_result = "gen_ai.tool.call.result" in attrs
        result = json_or_text(attrs.get("gen_ai.tool.call.result")) if has_result else None
        index, call = self._find_call(call_id, name, span.start_time_unix_nano)
        if call is None:
            index = self._host(span)
            call = ToolCallRecord(id=call_id, name=name or "tool", arguments=arguments)
            self.entries[index].message.tool_calls.append(call)
        if not call.arguments and arguments:
            call.arguments = arguments
        if call.result is None and has_result:
            call.result = result
        tool_meta: dict[str, JsonValue] = {
            "trace_id": span.trace_id,
            "span_id": span.span_id,
            "latency_s": span.duration_s,
        }
        error = _error_text(span)
        if error:
            tool_meta["error"] = error
        answered = next(
            (
                e
                for e in self.entries
                if e.message.role == "tool" and call.id and e.message.tool_call_id == call.id
            ),
            None,
        )
        if answered is not None:
            if not answered.message.text and call.result is not None:
                answered.message.text = _text(call.result)
            answered.message.metadata.update(tool_meta)
            return
        at = index + 1
        while at < len(self.entries) and self.entries[at].message.role == "tool":
            at += 1
        message = Message(
            role="tool",
            speaker="tool",
            text=_text(call.result) if call.result is not None else (error or ""),
            tool_call_id=call.id,
            timestamp=_iso(span.end_time_unix_nano),
            metadata={**tool_meta, "time_unix_nano": span.end_time_unix_nano},
        )
        self.entries.insert(at, _Entry(message, span.end_time_unix_nano))

    def _find_call(self, call_id: str | None, name: str, before: int) -> tuple[int, ToolCallRecord | None]:
        if call_id:
            for i, entry in enumerate(self.entries):
                for call in entry.message.tool_calls:
                    if call.id == call_id:
                        return i, call
            return -1, None
        for i in range(len(self.entries) - 1, -1, -1):  # no id: the latest open call of that name
            entry = self.entries[i]
            if entry.time_ns <= before:
                for call in entry.message.tool_calls:
                    if call.name == name and call.result is None:
                        return i, call
        return -1, None

    def _host(self, span: SpanRecord) -> int:
        """The assistant message a tool call without a match belongs to: the latest one
        before the tool ran, else a new empty one from the tool span's agent."""
        for i in range(len(self.entries) - 1, -1, -1):
            entry = self.entries[i]
            if entry.message.role == "assistant" and entry.time_ns <= span.start_time_unix_nano:
                return i
        host = Message(
            role="assistant",
            speaker=_agent_of(span, self.by_id) or "assistant",
            timestamp=_iso(span.start_time_unix_nano),
            metadata={"time_unix_nano": span.start_time_unix_nano, "trace_id": span.trace_id},
        )
        at = next(
            (i for i, e in enumerate(self.entries) if e.time_ns > span.start_time_unix_nano),
            len(self.entries),
        )
        self.entries.insert(at, _Entry(host, span.start_time_unix_nano))
        return at

    # -- errors and documents --

    def _error(self, span: SpanRecord) -> None:
        text = _error_text(span)
        if text:
            self.errors.append(
                {
                    "trace_id": span.trace_id,
                    "span_id": span.span_id,
                    "span": span.name,
                    "operation": _operation(span),
                    "error": text,
                    "time_unix_nano": span.end_time_unix_nano,
                }
            )

    def _documents(self, span: SpanRecord) -> None:
        texts: list[str] = []
        docs = json_or_text(span.attributes.get("gen_ai.retrieval.documents"))
        if isinstance(docs, list):
            for doc in docs:
                if isinstance(doc, Mapping):
                    content = doc.get("content", doc.get("text"))
                    if isinstance(content, str) and content.strip():
                        texts.append(content)
        prefix, suffix = semconv.OPENINFERENCE_DOCUMENT
        numbered: list[tuple[int, str]] = []
        for key, value in span.attributes.items():
            if key.startswith(prefix) and key.endswith(suffix) and isinstance(value, str):
                index = key[len(prefix) : -len(suffix)]
                if index.isdigit() and value.strip():
                    numbered.append((int(index), value))
        texts.extend(text for _, text in sorted(numbered))
        for text in texts:
            self.retrieved.append(
                {"text": text, "span_id": span.span_id, "time_unix_nano": span.end_time_unix_nano}
            )


def _results_onto_calls(messages: Sequence[Message]) -> None:
    """A ``tool`` message's text onto the call it answers, when no tool span gave a result."""
    calls: dict[str, ToolCallRecord] = {}
    for message in messages:
        for call in message.tool_calls:
            if call.id:
                calls[call.id] = call
        call_id = message.tool_call_id
        if message.role == "tool" and call_id in calls and calls[call_id].result is None and message.text:
            calls[call_id].result = message.text


def _key(message: Message) -> tuple[Any, ...]:
    calls = tuple(c.id or f"{c.name}:{json.dumps(c.arguments, sort_keys=True)}" for c in message.tool_calls)
    return (message.role, message.text.strip(), calls, message.tool_call_id)


def _agent_of(span: SpanRecord, by_id: Mapping[tuple[str, str], SpanRecord]) -> str | None:
    """``gen_ai.agent.name`` of the nearest enclosing invoke_agent span, else the span's own."""
    keys = semconv.names("message.speaker (assistant)")
    for ancestor in _lineage(span, by_id):
        if _operation(ancestor) == "invoke_agent":
            name = _first_str(ancestor.attributes, keys)
            if name:
                return name
    return _first_str(span.attributes, keys)


def _error_text(span: SpanRecord) -> str | None:
    error_type = _first_str(span.attributes, semconv.names("error.type"))
    if span.status != "error" and not error_type:
        return None
    parts = [p for p in (error_type, span.status_message.strip()) if p]
    return ": ".join(parts) or "error"


def _usage_total(messages: Sequence[Message]) -> dict[str, JsonValue]:
    prompt = [m.usage.prompt_tokens for m in messages if m.usage and m.usage.prompt_tokens is not None]
    completion = [
        m.usage.completion_tokens for m in messages if m.usage and m.usage.completion_tokens is not None
    ]
    return {
        "input_tokens": sum(prompt) if prompt else None,
        "output_tokens": sum(completion) if completion else None,
    }


# -- cases ----------------------------------------------------------------------------------


def cases_from_traffic(
    traffic: AssembledTraffic | Iterable[Conversation],
    *,
    per_turn: bool = False,
    input_form: Literal["last_user", "conversation"] = "last_user",
    tool_results_as_contexts: bool = True,
) -> list[Case]:
    """One case per conversation (or per user turn with ``per_turn``), ready for the
    reference-free metrics: ``input`` the user's last message (or the conversation's turns
    with ``input_form="conversation"``), ``response`` the final assistant text,
    ``contexts`` the retrieved documents (else, with ``tool_results_as_contexts``, the tool
    results), ``trajectory`` the tool calls, ``agent_run`` the latency and whether it
    failed (an error and no answer), and the conversation itself under
    ``metadata.conversation`` for the conversation metrics."""
    conversations = traffic.conversations if isinstance(traffic, AssembledTraffic) else list(traffic)
    cases: list[Case] = []
    for conversation in conversations:
        if not per_turn:
            cases.append(
                _case(
                    conversation, conversation.messages, conversation.id, input_form, tool_results_as_contexts
                )
            )
            continue
        starts = [i for i, m in enumerate(conversation.messages) if m.role == "user"]
        for n, start in enumerate(starts, start=1):
            end = starts[n] if n < len(starts) else len(conversation.messages)
            turn = conversation.messages[start:end]
            prefix = conversation.model_copy(
                update={"id": f"{conversation.id}#turn{n}", "messages": conversation.messages[:end]}
            )
            until = _message_time(conversation.messages[end]) if end < len(conversation.messages) else None
            cases.append(
                _case(
                    prefix, turn, prefix.id, input_form, tool_results_as_contexts, turn_number=n, until=until
                )
            )
    return cases


def _case(
    conversation: Conversation,
    turn: Sequence[Message],
    case_id: str,
    input_form: str,
    tool_results_as_contexts: bool,
    *,
    turn_number: int | None = None,
    until: int | None = None,
) -> Case:
    base = conversation_to_case(conversation)
    answers = [m for m in turn if m.role == "assistant" and m.text]
    final = answers[-1] if answers else None
    users = [m for m in turn if m.role == "user"]
    calls = [c for m in turn for c in m.tool_calls]
    trajectory = [ToolCall(name=c.name, arguments=c.arguments, output=c.result, id=c.id) for c in calls]
    times = [t for m in turn if (t := _message_time(m)) is not None]
    low, high = (min(times), max(times)) if times else (0, 0)

    def in_turn(item: Mapping[str, Any]) -> bool:
        at = _int(item.get("time_unix_nano"))
        return turn_number is None or (low <= at and (until is None or at < until))

    retrieved = [r for r in _retrieved(conversation) if in_turn(r)]
    contexts = [str(r["text"]) for r in retrieved]
    contexts_source = "retrieval" if contexts else None
    if not contexts and tool_results_as_contexts:
        contexts = [_text(c.result) for c in calls if c.result is not None]
        contexts_source = "tool_results" if contexts else None
    errors = [e for e in _errors(conversation) if in_turn(e)]
    latency = (
        (high - low) / 1e9 if turn_number is not None else _float(conversation.metadata.get("latency_s"))
    )
    metadata: dict[str, JsonValue] = dict(base.metadata)
    metadata.update(
        {
            "trace_ids": conversation.metadata.get("trace_ids", []),
            "conversation_id": str(conversation.metadata.get("conversation_id", conversation.id)),
            "agent": final.speaker if final else None,
            "agents": list(dict.fromkeys(m.speaker for m in turn if m.role == "assistant")),
            "model": final.metadata.get("model") if final else None,
            "tokens": _usage_total(turn),
            "latency_s": latency,
            "started": _iso(low)
            if turn_number is not None and times
            else conversation.metadata.get("started"),
            "ended": _iso(high) if turn_number is not None and times else conversation.metadata.get("ended"),
            "errors": list(errors),
            "contexts_source": contexts_source,
        }
    )
    if turn_number is not None:
        metadata["turn"] = turn_number
    user_input: Any = base.input if input_form == "conversation" or not users else users[-1].text
    failed = bool(errors) and final is None
    return base.model_copy(
        update={
            "id": case_id,
            "input": user_input,
            "response": final.text if final else None,
            "trajectory": trajectory,
            "contexts": contexts or None,
            "metadata": metadata,
            "agent_run": AgentRun(
                latency_s=latency,
                failed=failed,
                error=str(errors[0]["error"]) if failed and errors else None,
            ),
        }
    )


def _retrieved(conversation: Conversation) -> list[Mapping[str, Any]]:
    value = conversation.metadata.get("retrieved")
    return (
        [r for r in value if isinstance(r, Mapping) and isinstance(r.get("text"), str)]
        if isinstance(value, list)
        else []
    )


def _errors(conversation: Conversation) -> list[dict[str, JsonValue]]:
    value = conversation.metadata.get("errors")
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def _message_time(message: Message) -> int | None:
    value = message.metadata.get("time_unix_nano")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
