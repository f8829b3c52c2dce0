"""Arize Phoenix span exports for ``clineval traces import --format phoenix``.

Read, in any of the shapes of :func:`clineval.traces.exports.json_items` (a JSON array, an
object with ``data: [...]``, JSON lines, one object; ``.gz`` too):

* the REST API's spans, ``GET /v1/projects/{project}/spans`` (``{data: [...],
  next_cursor}``; each span ``{name, context: {trace_id, span_id}, span_kind, parent_id,
  start_time, end_time, status_code, status_message, attributes, events}`` with the
  attributes flattened: ``llm.input_messages.0.message.role``);
* the Phoenix CLI: ``px span list FILE`` (an array of those spans), ``px trace get ID
  --file FILE`` and ``px trace list`` (traces ``{traceId, spans: [...]}``);
* ``client.spans.get_spans_dataframe(...)`` written with ``reset_index().to_json(
  orient="records", lines=True)`` (the frame is indexed by ``context.span_id``; columns
  ``context.trace_id``, ``context.span_id``, ``attributes.*``; nested values are flattened
  the same way; epoch-millisecond times are read).

Attributes are kept as they are (OpenInference names; ``span_kind`` as
``openinference.span.kind``), and the GenAI attributes the assembly reads are added when the
span lacks them, by ``span_kind``, as :mod:`clineval.traces.openinference` maps them.

``session.id`` is the conversation (read by the assembly). ``status_code`` ``ERROR`` ->
span status error. A span or trace id that is not 16/32 hexadecimal digits is hashed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from clineval.model.trace import SpanEvent, SpanRecord, SpanStatus
from clineval.traces.exports import (
    ItemProblem,
    TraceFile,
    json_items,
    read_text,
    span_id,
    time_ns,
    trace_id,
    walk,
)
from clineval.traces.openinference import add_genai

__all__ = ["looks_like_phoenix", "read_phoenix"]

_NS = "phoenix"
_STATUS: dict[str, SpanStatus] = {"OK": "ok", "ERROR": "error", "UNSET": "unset", "": "unset"}


def looks_like_phoenix(value: Any) -> bool:
    """Whether one item of a file looks like Phoenix's (for ``--format auto``)."""
    if not isinstance(value, Mapping):
        return False
    if isinstance(value.get("spans"), list) and ("traceId" in value or "rootSpan" in value):
        return True
    context = value.get("context")
    return (isinstance(context, Mapping) and "span_id" in context) or "context.span_id" in value


def _id_field(raw: Mapping[str, Any], key: str) -> str:
    context = raw.get("context")
    value = context.get(key) if isinstance(context, Mapping) else raw.get(f"context.{key}")
    if not isinstance(value, str) or not value:
        raise ItemProblem(f"context.{key}", "expected the span's OpenTelemetry id (a string)")
    return value


def _span(raw: Any, source: str) -> SpanRecord:
    if not isinstance(raw, Mapping):
        raise ItemProblem("", f"expected a Phoenix span object, got {type(raw).__name__}")
    trace_value = _id_field(raw, "trace_id")
    span_value = _id_field(raw, "span_id")
    name = raw.get("name")
    if not isinstance(name, str):
        raise ItemProblem("name", "expected the span's name (a string)")
    start = time_ns(raw.get("start_time"), "start_time")
    end = time_ns(raw["end_time"], "end_time") if raw.get("end_time") is not None else start
    parent = raw.get("parent_id")
    if parent is not None and not isinstance(parent, str):
        raise ItemProblem("parent_id", f"expected a span id or null, got {json.dumps(parent)[:60]}")
    status = str(raw.get("status_code") or "").upper()
    if status not in _STATUS:
        got = json.dumps(raw.get("status_code"))
        raise ItemProblem("status_code", f"expected OK, ERROR or UNSET, got {got}")
    nested = raw.get("attributes", {})
    if not isinstance(nested, Mapping):
        raise ItemProblem("attributes", "expected an object")
    attributes: dict[str, JsonValue] = dict(walk(nested))
    for key, value in raw.items():  # a dataframe's columns: attributes.llm.input_messages, ...
        if key.startswith("attributes.") and value is not None:
            attributes.update(walk(value, key.removeprefix("attributes.")))
    for key, value in attributes.items():  # a dataframe's float columns: 61.0 tokens
        if key.startswith("llm.token_count.") and isinstance(value, float) and value.is_integer():
            attributes[key] = int(value)
    kind = str(raw.get("span_kind") or attributes.get("openinference.span.kind") or "").upper()
    if kind and kind != "UNKNOWN":
        attributes.setdefault("openinference.span.kind", kind)
    add_genai(kind, name, attributes)
    return SpanRecord(
        trace_id=trace_id(trace_value, _NS),
        span_id=span_id(span_value, _NS),
        parent_span_id=span_id(parent, _NS) if parent else None,
        name=name,
        start_time_unix_nano=start,
        end_time_unix_nano=max(end, start),
        status=_STATUS[status],
        status_message=str(raw.get("status_message") or ""),
        attributes=attributes,
        events=_events(raw.get("events")),
        scope="phoenix",
        source=source,
    )


def _events(value: Any) -> tuple[SpanEvent, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ItemProblem("events", "expected a list of events")
    events: list[SpanEvent] = []
    for index, event in enumerate(value):
        if not isinstance(event, Mapping) or not isinstance(event.get("name"), str):
            raise ItemProblem(f"events[{index}]", "expected an event {name, timestamp, attributes}")
        when = event.get("timestamp")
        events.append(
            SpanEvent(
                name=event["name"],
                time_unix_nano=time_ns(when, f"events[{index}].timestamp") if when is not None else 0,
                attributes=dict(walk(event.get("attributes") or {})),
            )
        )
    return tuple(events)


def _spans_of(value: Any, source: str) -> list[SpanRecord]:
    """The spans of one item: a span, or a trace of the Phoenix CLI (``{traceId, spans}``)."""
    if isinstance(value, Mapping) and isinstance(value.get("spans"), list):
        spans: list[SpanRecord] = []
        for index, raw in enumerate(value["spans"]):
            try:
                spans.append(_span(raw, source))
            except ItemProblem as problem:
                raise problem.under(f"spans[{index}]") from None
        return spans
    return [_span(value, source)]


def read_phoenix(path: str | Path) -> TraceFile:
    """The spans of a Phoenix export, or the errors of its bad lines or items."""
    file = Path(path)
    result = TraceFile(path=file)
    source = f"phoenix:{file.name}"
    seen: set[tuple[str, str]] = set()
    for item in json_items(file, read_text(file), result):
        try:
            spans = _spans_of(item.value, source)
        except ItemProblem as problem:
            result.fail(item.where, str(problem))
            continue
        for span in spans:
            if (span.trace_id, span.span_id) not in seen:
                seen.add((span.trace_id, span.span_id))
                result.spans.append(span)
    return result.close()
