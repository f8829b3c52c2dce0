"""Spans of OpenTelemetry traces, as clineval keeps them (``clineval collect``, ``clineval
traces import``): one :class:`SpanRecord` per span, whatever it came in as (OTLP protobuf,
OTLP JSON, an observability tool's export).

Attribute values keep their OTLP type as JSON: strings, numbers, booleans, lists, and the
``gen_ai.input.messages`` / ``gen_ai.output.messages`` JSON strings as they were sent. Events
keep their name, time and attributes (the older GenAI event form of messages).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = ["SpanEvent", "SpanRecord", "SpanStatus"]

SpanStatus = Literal["unset", "ok", "error"]


class SpanEvent(BaseModel):
    """An event recorded on a span (``gen_ai.user.message``, ``exception``, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    time_unix_nano: int = 0
    attributes: dict[str, JsonValue] = Field(default_factory=dict)


class SpanRecord(BaseModel):
    """One span. ``trace_id`` and ``span_id`` are lower-case hex (32 and 16 digits); the pair
    identifies the span, so receiving the same span twice stores it once."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trace_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    span_id: str = Field(pattern=r"^[0-9a-f]{16}$")
    parent_span_id: str | None = Field(default=None, pattern=r"^[0-9a-f]{16}$")
    name: str
    kind: str = "internal"
    """``internal``, ``server``, ``client``, ``producer`` or ``consumer``."""
    start_time_unix_nano: int
    end_time_unix_nano: int
    status: SpanStatus = "unset"
    status_message: str = ""
    attributes: dict[str, JsonValue] = Field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    resource: dict[str, JsonValue] = Field(default_factory=dict)
    """The resource's attributes (``service.name``, ...)."""
    scope: str = ""
    """The instrumentation scope's name (``opentelemetry.instrumentation.openai_v2``, ...)."""
    source: str = ""
    """Where the span came from: ``otlp-http``, ``otlp-json:FILE``, ``phoenix:FILE``, ..."""

    @property
    def duration_s(self) -> float:
        return max(0, self.end_time_unix_nano - self.start_time_unix_nano) / 1e9
