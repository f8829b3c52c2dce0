"""Langfuse exports for ``clineval traces import --format langfuse``.

Read, in any of the shapes of :func:`clineval.traces.exports.json_items` (a JSON array, an
object with ``data: [...]``, JSON lines, one object; ``.gz`` too):

* a trace downloaded from the UI (**Download trace as JSON**: ``{trace, observations}``, or
  ``{observations, scores}`` from the newer download), a session (``{traces: [...]}``);
* the public API: ``GET /api/public/traces/{id}`` (the trace with its ``observations``),
  ``GET /api/public/observations`` and ``GET /api/public/v2/observations``
  (``{data: [...], meta}``; v2's input and output come as JSON strings);
* the observations or traces table's export (**Export**, JSON or JSONL), and the blob
  storage export's rows (``snake_case`` names).

Each observation becomes one span: ``id`` -> span id, ``traceId`` -> trace id,
``parentObservationId`` -> parent (an id that is not 32/16 hexadecimal digits is hashed,
so importing the file again stores nothing twice). By ``type``:

* ``GENERATION``: a ``chat`` span; ``input`` (messages in the OpenAI chat, LangChain or
  Anthropic form, ``{messages}``, or text) -> ``gen_ai.input.messages``; ``output`` ->
  ``gen_ai.output.messages``; ``model``, ``usageDetails``/``usage`` -> model and tokens;
* ``TOOL`` (and a ``SPAN`` named like a tool call an earlier generation of the trace
  asked for) -> ``execute_tool``: name, ``input`` as arguments (the Python SDK's
  ``{args, kwargs}`` unwrapped), ``output`` as result;
* ``AGENT`` -> ``invoke_agent`` with ``gen_ai.agent.name`` = its name;
* ``RETRIEVER`` with documents as output -> ``gen_ai.retrieval.documents``;
* other types (``SPAN``, ``EVENT``, ``CHAIN``, ...) are stored with their Langfuse
  attributes only (the assembly counts them as non-GenAI spans).

``sessionId`` (of the observation or its trace) is the conversation
(``gen_ai.conversation.id``, ``session.id``); without one, the Langfuse trace id is.
``level: ERROR`` -> span status error with ``statusMessage``. A trace whose generations
carry no input or output (the older UI download leaves observations' input and output out)
gives one ``chat`` span of the trace's own ``input`` and ``output``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from clineval.model.trace import SpanRecord
from clineval.traces.exports import (
    ChatMessage,
    ItemProblem,
    TraceFile,
    genai_messages,
    json_items,
    json_or_text,
    merged_answer,
    messages_from,
    read_text,
    span_id,
    time_ns,
    trace_id,
)

__all__ = ["looks_like_langfuse", "read_langfuse"]

_NS = "langfuse"


@dataclass
class _Trace:
    id: str
    start: int
    name: str | None = None
    session: str | None = None
    user: str | None = None
    input: Any = None
    output: Any = None


@dataclass
class _Observation:
    id: str
    trace: str
    type: str
    start: int
    end: int
    name: str | None = None
    parent: str | None = None
    model: str | None = None
    input: Any = None
    output: Any = None
    usage: tuple[int | None, int | None] = (None, None)
    level: str | None = None
    status_message: str | None = None
    session: str | None = None
    user: str | None = None
    trace_name: str | None = None
    metadata: Any = None


def _get(raw: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if raw.get(name) is not None:
            return raw[name]
    return None


def _str(raw: Mapping[str, Any], *names: str) -> str | None:
    value = _get(raw, *names)
    if value is None:
        return None
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value) or None
    raise ItemProblem(names[0], f"expected a string, got {json.dumps(value)[:60]}")


def _required_id(raw: Mapping[str, Any], what: str, *names: str) -> str:
    value = _str(raw, *names)
    if not value:
        raise ItemProblem(names[0], f"expected the {what}'s id (a string)")
    return value


def _trace(raw: Any) -> _Trace:
    if not isinstance(raw, Mapping):
        raise ItemProblem("", "expected a Langfuse trace object")
    when = _get(raw, "timestamp")
    return _Trace(
        id=_required_id(raw, "trace", "id"),
        start=time_ns(when, "timestamp"),
        name=_str(raw, "name"),
        session=_str(raw, "sessionId", "session_id"),
        user=_str(raw, "userId", "user_id"),
        input=raw.get("input"),
        output=raw.get("output"),
    )


def _tokens(raw: Mapping[str, Any]) -> tuple[int | None, int | None]:
    def number(value: Any) -> int | None:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
        return None

    for key in ("usageDetails", "usage_details", "usage"):
        details = raw.get(key)
        if isinstance(details, Mapping):
            found = (
                number(_get(details, "input", "promptTokens", "prompt_tokens", "input_tokens")),
                number(_get(details, "output", "completionTokens", "completion_tokens", "output_tokens")),
            )
            if found != (None, None):
                return found
    return number(raw.get("inputUsage")), number(raw.get("outputUsage"))


def _observation(raw: Any, trace: _Trace | None) -> _Observation:
    if not isinstance(raw, Mapping):
        raise ItemProblem("", "expected a Langfuse observation object")
    kind = _str(raw, "type") or "SPAN"
    start = time_ns(_get(raw, "startTime", "start_time"), "startTime")
    end_raw = _get(raw, "endTime", "end_time")
    end = time_ns(end_raw, "endTime") if end_raw is not None else start
    trace_value = _str(raw, "traceId", "trace_id") or (trace.id if trace else None)
    if not trace_value:
        raise ItemProblem("traceId", "expected the observation's trace id (a string)")
    level = _str(raw, "level")
    return _Observation(
        id=_required_id(raw, "observation", "id"),
        trace=trace_value,
        type=kind.upper(),
        start=start,
        end=max(end, start),
        name=_str(raw, "name"),
        parent=_str(raw, "parentObservationId", "parent_observation_id"),
        model=_str(raw, "model", "providedModelName", "provided_model_name"),
        input=raw.get("input"),
        output=raw.get("output"),
        usage=_tokens(raw),
        level=level.upper() if level else None,
        status_message=_str(raw, "statusMessage", "status_message"),
        session=_str(raw, "sessionId", "session_id") or (trace.session if trace else None),
        user=_str(raw, "userId", "user_id") or (trace.user if trace else None),
        trace_name=_str(raw, "traceName", "trace_name") or (trace.name if trace else None),
        metadata=raw.get("metadata"),
    )


def _is_observation(raw: Mapping[str, Any]) -> bool:
    return any(k in raw for k in ("traceId", "trace_id", "startTime", "start_time", "parentObservationId"))


def _expand(value: Any) -> tuple[list[_Trace], list[_Observation]]:
    """The traces and observations of one item."""
    if not isinstance(value, Mapping):
        raise ItemProblem("", f"expected a Langfuse trace or observation object, got {type(value).__name__}")
    if isinstance(value.get("traces"), list):  # a session downloaded from the UI
        traces: list[_Trace] = []
        found_all: list[_Observation] = []
        for index, inner in enumerate(value["traces"]):
            try:
                more_traces, more = _expand(inner)
            except ItemProblem as problem:
                raise problem.under(f"traces[{index}]") from None
            traces.extend(more_traces)
            found_all.extend(more)
        return traces, found_all
    observations = value.get("observations")
    if isinstance(observations, list):
        trace: _Trace | None = None
        if isinstance(value.get("trace"), Mapping):
            try:
                trace = _trace(value["trace"])
            except ItemProblem as problem:
                raise problem.under("trace") from None
        elif "id" in value and "timestamp" in value:  # GET /api/public/traces/{id}
            trace = _trace(value)
        found: list[_Observation] = []
        for index, raw in enumerate(observations):
            if isinstance(raw, str):  # GET /api/public/traces lists observation ids only
                continue
            try:
                found.append(_observation(raw, trace))
            except ItemProblem as problem:
                raise problem.under(f"observations[{index}]") from None
        return ([trace] if trace else []), found
    if isinstance(value.get("trace"), Mapping):
        try:
            return [_trace(value["trace"])], []
        except ItemProblem as problem:
            raise problem.under("trace") from None
    if "type" in value or _is_observation(value):
        return [], [_observation(value, None)]
    if "id" in value and "timestamp" in value:
        return [_trace(value)], []
    raise ItemProblem(
        "",
        "expected a Langfuse trace (id, timestamp), observation (id, traceId, type, startTime) "
        "or trace download ({trace, observations})",
    )


def looks_like_langfuse(value: Any) -> bool:
    """Whether one item of a file looks like Langfuse's (for ``--format auto``)."""
    if not isinstance(value, Mapping):
        return False
    if any(isinstance(value.get(key), list) for key in ("observations", "traces")):
        return True
    if isinstance(value.get("trace"), Mapping):
        return True
    if "type" in value and _is_observation(value):
        return True
    trace_keys = ("sessionId", "userId", "input")
    return "id" in value and "timestamp" in value and any(k in value for k in trace_keys)


# -- spans ----------------------------------------------------------------------------------


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _arguments(value: Any) -> Any:
    """A tool's recorded input as its arguments (the Python SDK's ``@observe`` records
    ``{args: [...], kwargs: {...}}``)."""
    value = json_or_text(value)
    if isinstance(value, Mapping) and set(value) <= {"args", "kwargs"} and value:
        kwargs = value.get("kwargs")
        arguments: dict[str, Any] = dict(kwargs) if isinstance(kwargs, Mapping) else {}
        if value.get("args"):
            arguments["args"] = value["args"]
        return arguments
    return value


def _tool_call_id(metadata: Any) -> str | None:
    metadata = json_or_text(metadata)
    if not isinstance(metadata, Mapping):
        return None
    for holder in (metadata, metadata.get("attributes")):
        if isinstance(holder, Mapping):
            for key in ("gen_ai.tool.call.id", "tool_call_id", "tool_call.id"):
                if isinstance(holder.get(key), str) and holder[key]:
                    return str(holder[key])
    return None


def _documents(value: Any) -> list[dict[str, Any]]:
    value = json_or_text(value)
    if isinstance(value, Mapping) and isinstance(value.get("documents"), list):
        value = value["documents"]
    if not isinstance(value, list):
        return []
    documents: list[dict[str, Any]] = []
    for doc in value:
        if isinstance(doc, Mapping):
            text = _get(doc, "page_content", "content", "text")
            if isinstance(text, str) and text.strip():
                entry: dict[str, Any] = {"content": text}
                if isinstance(doc.get("id"), str):
                    entry["id"] = doc["id"]
                documents.append(entry)
    return documents


def _call_names(observation: _Observation) -> set[str]:
    answer = messages_from(observation.output, "assistant")
    return {name for message in answer for _, name, _ in message.calls}


def _common(trace: str, session: str | None) -> dict[str, JsonValue]:
    attributes: dict[str, JsonValue] = {"langfuse.trace.id": trace}
    if session:
        attributes["session.id"] = session
    return attributes


def _chat(attributes: dict[str, JsonValue], inputs: list[ChatMessage], outputs: list[ChatMessage]) -> None:
    attributes["gen_ai.operation.name"] = "chat"
    if inputs:
        attributes["gen_ai.input.messages"] = genai_messages(inputs)
    if outputs:
        attributes["gen_ai.output.messages"] = genai_messages(merged_answer(outputs))


def _span(observation: _Observation, tool_names: set[str], source: str) -> SpanRecord:
    attributes = _common(observation.trace, observation.session)
    attributes["langfuse.observation.id"] = observation.id
    attributes["langfuse.observation.type"] = observation.type
    for key, value in (
        ("user.id", observation.user),
        ("langfuse.trace.name", observation.trace_name),
        ("langfuse.observation.level", observation.level),
        ("langfuse.observation.status_message", observation.status_message),
    ):
        if value:
            attributes[key] = value
    if observation.metadata not in (None, {}, ""):
        attributes["langfuse.observation.metadata"] = _json_text(observation.metadata)
    conversation = observation.session or observation.trace
    kind = observation.type
    if kind == "GENERATION":
        _chat(
            attributes,
            messages_from(observation.input, "user"),
            messages_from(observation.output, "assistant"),
        )
        if observation.model:
            attributes["gen_ai.request.model"] = observation.model
        prompt, completion = observation.usage
        if prompt is not None:
            attributes["gen_ai.usage.input_tokens"] = prompt
        if completion is not None:
            attributes["gen_ai.usage.output_tokens"] = completion
    elif kind == "TOOL" or (kind == "SPAN" and observation.name in tool_names):
        attributes["gen_ai.operation.name"] = "execute_tool"
        attributes["gen_ai.tool.name"] = observation.name or "tool"
        if observation.input is not None:
            attributes["gen_ai.tool.call.arguments"] = _json_text(_arguments(observation.input))
        if observation.output is not None:
            attributes["gen_ai.tool.call.result"] = _json_text(observation.output)
        call_id = _tool_call_id(observation.metadata)
        if call_id:
            attributes["gen_ai.tool.call.id"] = call_id
    elif kind == "AGENT":
        attributes["gen_ai.operation.name"] = "invoke_agent"
        attributes["gen_ai.agent.name"] = observation.name or "agent"
    elif kind == "RETRIEVER":
        documents = _documents(observation.output)
        if documents:
            attributes["gen_ai.operation.name"] = "retrieval"
            attributes["gen_ai.retrieval.documents"] = json.dumps(documents, ensure_ascii=False)
    if "gen_ai.operation.name" in attributes:
        attributes["gen_ai.conversation.id"] = conversation
    error = observation.level == "ERROR"
    return SpanRecord(
        trace_id=trace_id(observation.trace, _NS),
        span_id=span_id(observation.id, _NS),
        parent_span_id=span_id(observation.parent, _NS) if observation.parent else None,
        name=observation.name or observation.type.lower(),
        start_time_unix_nano=observation.start,
        end_time_unix_nano=observation.end,
        status="error" if error else "unset",
        status_message=(observation.status_message or "") if error else "",
        attributes=attributes,
        scope="langfuse",
        source=source,
    )


def _trace_span(trace: _Trace, end: int, source: str) -> SpanRecord | None:
    """A trace's own input and output as one chat span (when no generation recorded them)."""
    inputs = messages_from(trace.input, "user")
    outputs = messages_from(trace.output, "assistant")
    if not inputs and not outputs:
        return None
    attributes = _common(trace.id, trace.session)
    if trace.user:
        attributes["user.id"] = trace.user
    if trace.name:
        attributes["langfuse.trace.name"] = trace.name
    _chat(attributes, inputs, outputs)
    attributes["gen_ai.conversation.id"] = trace.session or trace.id
    return SpanRecord(
        trace_id=trace_id(trace.id, _NS),
        span_id=span_id(f"trace:{trace.id}", _NS),
        name=trace.name or "trace",
        start_time_unix_nano=trace.start,
        end_time_unix_nano=max(end, trace.start),
        attributes=attributes,
        scope="langfuse",
        source=source,
    )


def read_langfuse(path: str | Path) -> TraceFile:
    """The spans of a Langfuse export, or the errors of its bad lines or items."""
    file = Path(path)
    result = TraceFile(path=file)
    traces: dict[str, _Trace] = {}
    observations: dict[tuple[str, str], _Observation] = {}
    for item in json_items(file, read_text(file), result):
        try:
            found_traces, found = _expand(item.value)
        except ItemProblem as problem:
            result.fail(item.where, str(problem))
            continue
        for trace in found_traces:
            traces.setdefault(trace.id, trace)
        for observation in found:
            observations.setdefault((observation.trace, observation.id), observation)
    if not result.ok:
        return result.close()
    return _spans(result, traces, list(observations.values()))


def _spans(result: TraceFile, traces: dict[str, _Trace], observations: list[_Observation]) -> TraceFile:
    source = f"langfuse:{result.path.name}"
    by_trace: dict[str, list[_Observation]] = {}
    for observation in observations:
        trace = traces.get(observation.trace)
        if trace is not None:  # the trace's session and user fill what the observation lacks
            observation.session = observation.session or trace.session
            observation.user = observation.user or trace.user
            observation.trace_name = observation.trace_name or trace.name
        by_trace.setdefault(observation.trace, []).append(observation)
    for members in by_trace.values():
        members.sort(key=lambda o: (o.start, o.end, o.id))
        asked: set[str] = set()
        for observation in members:
            result.spans.append(_span(observation, asked, source))
            if observation.type == "GENERATION":
                asked |= _call_names(observation)
    for trace in traces.values():
        members = by_trace.get(trace.id, [])
        recorded = any(
            o.type == "GENERATION" and (o.input is not None or o.output is not None) for o in members
        )
        if not recorded:
            span = _trace_span(trace, max((o.end for o in members), default=trace.start), source)
            if span is not None:
                result.spans.append(span)
    return result
