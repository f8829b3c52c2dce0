"""Decoding OTLP trace exports into :class:`~clineval.model.trace.SpanRecord`.

An OTLP/HTTP export request (``ExportTraceServiceRequest``) arrives as protobuf
(``application/x-protobuf``, what the OpenTelemetry SDKs send by default) or as OTLP JSON
(``application/json``; also one request per line in the OpenTelemetry Collector's file
exporter). Both are decoded with the OpenTelemetry project's own generated classes
(``opentelemetry-proto``); OTLP JSON differs from protobuf's canonical JSON only in its
trace and span ids, which are hexadecimal, so they are turned into protobuf's base64
before parsing.

Attribute values keep their type as JSON (strings, integers, doubles, booleans, arrays,
key-value lists as objects; bytes as base64 text). Credentials are never kept: the string
value of an attribute whose key names a credential (``authorization``, ``api_key``,
``token``, ``password``, ``cookie``, ``secret``, ...) becomes ``***``, and every other
string goes through :mod:`clineval.redaction` (bearer tokens, API keys, secret
environment variables' values).

Bad input raises :class:`TracePayloadError` with one line naming what was wrong.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status
from pydantic import JsonValue, ValidationError

from clineval.errors import ClinevalError
from clineval.model.trace import SpanEvent, SpanRecord, SpanStatus
from clineval.redaction import MASK, Masker

__all__ = [
    "JSON",
    "PROTOBUF",
    "TracePayloadError",
    "decode_json",
    "decode_protobuf",
    "encode_response",
    "is_credential_key",
    "scrub_attributes",
    "spans_from_request",
]

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class TracePayloadError(ClinevalError):
    """An OTLP trace export that cannot be decoded (malformed protobuf or JSON, bad ids)."""


_KINDS = {
    Span.SPAN_KIND_UNSPECIFIED: "internal",  # the specification: unspecified is taken as internal
    Span.SPAN_KIND_INTERNAL: "internal",
    Span.SPAN_KIND_SERVER: "server",
    Span.SPAN_KIND_CLIENT: "client",
    Span.SPAN_KIND_PRODUCER: "producer",
    Span.SPAN_KIND_CONSUMER: "consumer",
}
_STATUSES: dict[int, SpanStatus] = {
    Status.STATUS_CODE_UNSET: "unset",
    Status.STATUS_CODE_OK: "ok",
    Status.STATUS_CODE_ERROR: "error",
}

# Attribute keys that name a credential, as words of the key (split at anything not a letter
# or digit, and at lower-to-upper case changes): "token" but not "tokens" (token counts).
_CREDENTIAL_WORDS = frozenset(
    {
        "authorization",
        "auth",
        "password",
        "passwd",
        "secret",
        "cookie",
        "cookies",
        "token",
        "apikey",
        "credential",
        "credentials",
        "bearer",
        "jwt",
        "signature",
    }
)
_CREDENTIAL_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key")})
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def is_credential_key(key: str) -> bool:
    """Whether an attribute key names a credential (``http.request.header.authorization``,
    ``x-api-key``, ``db.password``, ``accessToken``, ``set-cookie``, ...). Token counts
    (``gen_ai.usage.input_tokens``) do not."""
    words = [w for w in _WORD_SPLIT.split(_CAMEL.sub("_", key).lower()) if w]
    if any(w in _CREDENTIAL_WORDS or (w.endswith("token") and len(w) > 5) for w in words):
        return True
    return any(pair in _CREDENTIAL_PAIRS for pair in itertools.pairwise(words))


def _mask_credential(value: JsonValue) -> JsonValue:
    """A credential attribute's value: strings masked (all of them, in lists too); numbers and
    booleans kept (an OpenInference ``llm.token_count.*`` is a count, not a token)."""
    if isinstance(value, str):
        return MASK if value else value
    if isinstance(value, list):
        return [_mask_credential(v) for v in value]
    if isinstance(value, dict):
        return {k: _mask_credential(v) for k, v in value.items()}
    return value


def scrub_attributes(attributes: Mapping[str, JsonValue], masker: Masker) -> dict[str, JsonValue]:
    """Attributes as clineval stores them: credential keys' values masked, every other string
    passed through :class:`~clineval.redaction.Masker` (credential-shaped text, secret values)."""
    scrubbed: dict[str, JsonValue] = {}
    for key, value in attributes.items():
        if is_credential_key(key):
            scrubbed[key] = _mask_credential(value)
        else:
            scrubbed[key] = masker.data(value)
    return scrubbed


def _any_value(value: AnyValue) -> JsonValue:
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "int_value":
        return value.int_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "double_value":
        number = value.double_value
        return number if math.isfinite(number) else str(number)  # JSON has no NaN or infinity
    if kind == "array_value":
        return [_any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return _key_values(value.kvlist_value.values)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return None  # an empty AnyValue


def _key_values(pairs: Iterable[KeyValue]) -> dict[str, JsonValue]:
    return {pair.key: _any_value(pair.value) for pair in pairs}


def _hex_id(raw: bytes, size: int, where: str, what: str, *, optional: bool = False) -> str | None:
    if not raw and optional:
        return None
    if len(raw) != size or not any(raw):
        shown = raw.hex() or "empty"
        raise TracePayloadError(f"{where}: {what} must be {size} bytes, not all zero (got {shown})")
    return raw.hex()


def spans_from_request(request: ExportTraceServiceRequest, *, source: str = "") -> list[SpanRecord]:
    """The spans of a decoded export request, with their resource's attributes and scope name."""
    masker = Masker()
    records: list[SpanRecord] = []
    for r, resource_spans in enumerate(request.resource_spans):
        resource = scrub_attributes(_key_values(resource_spans.resource.attributes), masker)
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            scope = scope_spans.scope.name
            for i, span in enumerate(scope_spans.spans):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{i}]"
                trace_id = _hex_id(span.trace_id, 16, where, "traceId")
                span_id = _hex_id(span.span_id, 8, where, "spanId")
                parent = _hex_id(span.parent_span_id, 8, where, "parentSpanId", optional=True)
                events = tuple(
                    SpanEvent(
                        name=event.name,
                        time_unix_nano=event.time_unix_nano,
                        attributes=scrub_attributes(_key_values(event.attributes), masker),
                    )
                    for event in span.events
                )
                try:
                    record = SpanRecord(
                        trace_id=trace_id or "",
                        span_id=span_id or "",
                        parent_span_id=parent,
                        name=span.name,
                        kind=_KINDS.get(span.kind, "internal"),
                        start_time_unix_nano=span.start_time_unix_nano,
                        end_time_unix_nano=span.end_time_unix_nano,
                        status=_STATUSES.get(span.status.code, "unset"),
                        status_message=masker.text(span.status.message),
                        attributes=scrub_attributes(_key_values(span.attributes), masker),
                        events=events,
                        resource=resource,
                        scope=scope,
                        source=source,
                    )
                except ValidationError as exc:  # not expected: the ids were checked above
                    first = exc.errors()[0]
                    field = ".".join(str(p) for p in first["loc"])
                    raise TracePayloadError(f"{where}: {field}: {first['msg']}") from None
                records.append(record)
    return records


def decode_protobuf(body: bytes, *, source: str = "otlp-http") -> list[SpanRecord]:
    """The spans of a protobuf ``ExportTraceServiceRequest``."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except (DecodeError, ValueError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TracePayloadError(
            f"not a valid OTLP protobuf ExportTraceServiceRequest ({len(body)} bytes): {detail}"
        ) from None
    return spans_from_request(request, source=source)


# OTLP JSON field names, in their JSON (lowerCamelCase) and protobuf (snake_case) spellings.
_RESOURCE_SPANS = ("resourceSpans", "resource_spans")
_SCOPE_SPANS = ("scopeSpans", "scope_spans")
_ID_FIELDS = (("traceId", "trace_id", 16), ("spanId", "span_id", 8), ("parentSpanId", "parent_span_id", 8))
_HEX = re.compile(r"^(?:[0-9a-fA-F]{2})*$")


def _items(value: Any, key: tuple[str, ...], where: str) -> list[tuple[str, Any]]:
    """The list under one of ``key``'s spellings in the object ``value`` (with where each is)."""
    if not isinstance(value, dict):
        what = type(value).__name__
        raise TracePayloadError(f"{where or 'the request'}: expected a JSON object, got {what}")
    for name in key:
        if name in value:
            items = value[name]
            if items is None:
                return []
            if not isinstance(items, list):
                path = f"{where}.{name}" if where else name
                raise TracePayloadError(f"{path}: expected a JSON array, got {type(items).__name__}")
            path = f"{where}.{name}" if where else name
            return [(f"{path}[{i}]", item) for i, item in enumerate(items)]
    return []


def _hex_to_base64(holder: dict[str, Any], where: str) -> None:
    """Turn the hexadecimal ids of a span (or link) into the base64 protobuf's JSON parser reads."""
    for camel, snake, size in _ID_FIELDS:
        for name in (camel, snake):
            if name not in holder:
                continue
            value = holder[name]
            if value in (None, ""):
                holder[name] = ""
                continue
            if not isinstance(value, str) or len(value) != 2 * size or not _HEX.match(value):
                raise TracePayloadError(
                    f"{where}.{name}: expected {2 * size} hexadecimal digits, got {json.dumps(value)[:60]}"
                )
            holder[name] = base64.b64encode(binascii.unhexlify(value)).decode("ascii")


def request_from_json(data: Any) -> ExportTraceServiceRequest:
    """An ``ExportTraceServiceRequest`` from decoded OTLP JSON (changed in place: ids to base64)."""
    if not isinstance(data, dict):
        raise TracePayloadError(f"expected an OTLP JSON object with resourceSpans, got {type(data).__name__}")
    for rwhere, resource_spans in _items(data, _RESOURCE_SPANS, ""):
        for swhere, scope_spans in _items(resource_spans, _SCOPE_SPANS, rwhere):
            for where, span in _items(scope_spans, ("spans",), swhere):
                if not isinstance(span, dict):
                    raise TracePayloadError(f"{where}: expected a JSON object, got {type(span).__name__}")
                _hex_to_base64(span, where)
                for lwhere, link in _items(span, ("links",), where):
                    if isinstance(link, dict):
                        _hex_to_base64(link, lwhere)
    request = ExportTraceServiceRequest()
    try:
        # unknown fields are ignored, as the OTLP specification asks of receivers
        json_format.ParseDict(data, request, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError) as exc:
        detail = " ".join(str(exc).split())
        raise TracePayloadError(f"not a valid OTLP JSON ExportTraceServiceRequest: {detail[:300]}") from None
    return request


def decode_json(body: bytes | str, *, source: str = "otlp-http") -> list[SpanRecord]:
    """The spans of an OTLP JSON ``ExportTraceServiceRequest``."""
    try:
        data = json.loads(body)
    except UnicodeDecodeError:
        raise TracePayloadError("OTLP JSON: the body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise TracePayloadError(
            f"OTLP JSON: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    return spans_from_request(request_from_json(data), source=source)


def encode_response(*, as_json: bool, rejected: int = 0, message: str = "") -> bytes:
    """The ``ExportTraceServiceResponse`` OTLP/HTTP answers a successful export with, in the
    request's encoding (a partial success when ``rejected`` spans were not accepted)."""
    response = ExportTraceServiceResponse()
    if rejected or message:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    if as_json:
        return json.dumps(json_format.MessageToDict(response)).encode("utf-8")
    return response.SerializeToString()
