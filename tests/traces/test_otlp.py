"""Decoding OTLP trace exports (clineval.traces.otlp): protobuf built with opentelemetry-proto's
own classes and OTLP JSON written by hand give the same, hand-worked SpanRecord."""

from __future__ import annotations

import json

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from clineval.model.trace import SpanEvent, SpanRecord
from clineval.traces.otlp import (
    TracePayloadError,
    decode_json,
    decode_protobuf,
    encode_response,
    is_credential_key,
)

TRACE = "5b8efff798038103d269b633813fc60c"
SPAN = "eee19b7ec3c1b174"
PARENT = "0102030405060708"

EXPECTED = SpanRecord(
    trace_id=TRACE,
    span_id=SPAN,
    parent_span_id=PARENT,
    name="chat gpt-4o",
    kind="client",
    start_time_unix_nano=1_700_000_000_000_000_000,
    end_time_unix_nano=1_700_000_001_500_000_000,
    status="error",
    status_message="rate limited",
    attributes={
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": "conv-1",
        "gen_ai.usage.input_tokens": 42,
        "gen_ai.request.temperature": 0.5,
        "gen_ai.request.stream": False,
        "gen_ai.response.finish_reasons": ["stop", "tool_calls"],
        "extra": {"a": 1, "b": "two"},
        "http.request.header.authorization": ["***"],
        "openai.api_key": "***",
        "note": "sent with Bearer ***",
    },
    events=(
        SpanEvent(
            name="gen_ai.user.message",
            time_unix_nano=1_700_000_000_100_000_000,
            attributes={"content": "Dose?"},
        ),
    ),
    resource={"service.name": "triage-agent"},
    scope="opentelemetry.instrumentation.openai_v2",
    source="test",
)


def _kv(key: str, value: AnyValue) -> KeyValue:
    return KeyValue(key=key, value=value)


def _protobuf_request() -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(_kv("service.name", AnyValue(string_value="triage-agent")))
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "opentelemetry.instrumentation.openai_v2"
    span = scope_spans.spans.add()
    span.trace_id = bytes.fromhex(TRACE)
    span.span_id = bytes.fromhex(SPAN)
    span.parent_span_id = bytes.fromhex(PARENT)
    span.name = "chat gpt-4o"
    span.kind = Span.SPAN_KIND_CLIENT
    span.start_time_unix_nano = 1_700_000_000_000_000_000
    span.end_time_unix_nano = 1_700_000_001_500_000_000
    span.status.code = Status.STATUS_CODE_ERROR
    span.status.message = "rate limited"
    span.attributes.extend(
        [
            _kv("gen_ai.operation.name", AnyValue(string_value="chat")),
            _kv("gen_ai.conversation.id", AnyValue(string_value="conv-1")),
            _kv("gen_ai.usage.input_tokens", AnyValue(int_value=42)),
            _kv("gen_ai.request.temperature", AnyValue(double_value=0.5)),
            _kv("gen_ai.request.stream", AnyValue(bool_value=False)),
            _kv(
                "gen_ai.response.finish_reasons",
                AnyValue(
                    array_value=ArrayValue(
                        values=[AnyValue(string_value="stop"), AnyValue(string_value="tool_calls")]
                    )
                ),
            ),
            _kv(
                "extra",
                AnyValue(
                    kvlist_value=KeyValueList(
                        values=[_kv("a", AnyValue(int_value=1)), _kv("b", AnyValue(string_value="two"))]
                    )
                ),
            ),
            _kv(
                "http.request.header.authorization",
                AnyValue(array_value=ArrayValue(values=[AnyValue(string_value="Bearer abcdefghijklmnop")])),
            ),
            _kv("openai.api_key", AnyValue(string_value="not-shaped-like-a-key")),
            _kv("note", AnyValue(string_value="sent with Bearer abcdefghijklmnop")),
        ]
    )
    event = span.events.add()
    event.name = "gen_ai.user.message"
    event.time_unix_nano = 1_700_000_000_100_000_000
    event.attributes.append(_kv("content", AnyValue(string_value="Dose?")))
    return request


JSON_REQUEST = {
    "resourceSpans": [
        {
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "triage-agent"}}]},
            "scopeSpans": [
                {
                    "scope": {"name": "opentelemetry.instrumentation.openai_v2", "version": "2.0"},
                    "spans": [
                        {
                            "traceId": TRACE.upper(),  # hex, either case (OTLP/JSON)
                            "spanId": SPAN,
                            "parentSpanId": PARENT,
                            "name": "chat gpt-4o",
                            "kind": 3,
                            "startTimeUnixNano": "1700000000000000000",  # int64 as a string
                            "endTimeUnixNano": 1700000001500000000,  # or as a number
                            "status": {"code": 2, "message": "rate limited"},
                            "attributes": [
                                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                                {"key": "gen_ai.conversation.id", "value": {"stringValue": "conv-1"}},
                                {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "42"}},
                                {"key": "gen_ai.request.temperature", "value": {"doubleValue": 0.5}},
                                {"key": "gen_ai.request.stream", "value": {"boolValue": False}},
                                {
                                    "key": "gen_ai.response.finish_reasons",
                                    "value": {
                                        "arrayValue": {
                                            "values": [{"stringValue": "stop"}, {"stringValue": "tool_calls"}]
                                        }
                                    },
                                },
                                {
                                    "key": "extra",
                                    "value": {
                                        "kvlistValue": {
                                            "values": [
                                                {"key": "a", "value": {"intValue": 1}},
                                                {"key": "b", "value": {"stringValue": "two"}},
                                            ]
                                        }
                                    },
                                },
                                {
                                    "key": "http.request.header.authorization",
                                    "value": {
                                        "arrayValue": {"values": [{"stringValue": "Bearer abcdefghijklmnop"}]}
                                    },
                                },
                                {"key": "openai.api_key", "value": {"stringValue": "not-shaped-like-a-key"}},
                                {
                                    "key": "note",
                                    "value": {"stringValue": "sent with Bearer abcdefghijklmnop"},
                                },
                            ],
                            "events": [
                                {
                                    "name": "gen_ai.user.message",
                                    "timeUnixNano": "1700000000100000000",
                                    "attributes": [{"key": "content", "value": {"stringValue": "Dose?"}}],
                                }
                            ],
                            "links": [{"traceId": TRACE, "spanId": PARENT}],
                            "someFutureField": {"ignored": True},  # unknown fields are ignored
                        }
                    ],
                }
            ],
        }
    ]
}


def test_protobuf_decodes_to_the_hand_worked_span() -> None:
    spans = decode_protobuf(_protobuf_request().SerializeToString(), source="test")
    assert spans == [EXPECTED]


def test_otlp_json_decodes_to_the_same_span() -> None:
    assert decode_json(json.dumps(JSON_REQUEST), source="test") == [EXPECTED]
    assert decode_json(json.dumps(JSON_REQUEST).encode(), source="test") == [EXPECTED]


def test_unspecified_kind_and_status_and_no_parent() -> None:
    body = {
        "resourceSpans": [
            {"scopeSpans": [{"spans": [{"traceId": TRACE, "spanId": SPAN, "parentSpanId": "", "name": "x"}]}]}
        ]
    }
    (span,) = decode_json(json.dumps(body))
    assert (span.kind, span.status, span.parent_span_id, span.scope, span.resource) == (
        "internal",
        "unset",
        None,
        "",
        {},
    )
    assert span.source == "otlp-http"


def test_an_empty_request_has_no_spans() -> None:
    assert decode_json("{}") == []
    assert decode_protobuf(b"") == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "{",
            "OTLP JSON: not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2",
        ),
        ("[]", "expected an OTLP JSON object with resourceSpans, got list"),
        ('{"resourceSpans": {}}', "resourceSpans: expected a JSON array, got dict"),
        (
            json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": SPAN}]}]}]}),
            'resourceSpans[0].scopeSpans[0].spans[0].traceId: expected 32 hexadecimal digits, got "zz"',
        ),
        (
            json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": TRACE}]}]}]}),
            "resourceSpans[0].scopeSpans[0].spans[0]: spanId must be 8 bytes, not all zero (got empty)",
        ),
        (
            json.dumps(
                {
                    "resourceSpans": [
                        {"scopeSpans": [{"spans": [{"traceId": TRACE, "spanId": SPAN, "name": 5}]}]}
                    ]
                }
            ),
            "not a valid OTLP JSON ExportTraceServiceRequest",
        ),
    ],
)
def test_bad_json_is_one_clear_line(body: str, message: str) -> None:
    with pytest.raises(TracePayloadError) as caught:
        decode_json(body)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bad_protobuf_is_one_clear_line() -> None:
    with pytest.raises(
        TracePayloadError, match=r"^not a valid OTLP protobuf ExportTraceServiceRequest \(6 bytes\)"
    ):
        decode_protobuf(b"\x0a\xff\xff\xff\xff\x0f")  # a length that runs past the end
    request = _protobuf_request()
    request.resource_spans[0].scope_spans[0].spans[0].trace_id = b"\x01\x02"
    with pytest.raises(TracePayloadError) as caught:
        decode_protobuf(request.SerializeToString())
    assert str(caught.value) == (
        "resourceSpans[0].scopeSpans[0].spans[0]: traceId must be 16 bytes, not all zero (got 0102)"
    )


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("http.request.header.authorization", True),
        ("x-api-key", True),
        ("openai.api_key", True),
        ("accessToken", True),
        ("set-cookie", True),
        ("db.password", True),
        ("client_secret", True),
        ("gen_ai.usage.input_tokens", False),
        ("gen_ai.request.max_tokens", False),
        ("gen_ai.conversation.id", False),
        ("session.id", False),
        ("author", False),
    ],
)
def test_credential_keys(key: str, secret: bool) -> None:
    assert is_credential_key(key) is secret


def test_a_token_count_under_a_credential_looking_key_is_kept() -> None:
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": TRACE,
                                "spanId": SPAN,
                                "name": "llm",
                                "attributes": [
                                    {"key": "llm.token_count.prompt", "value": {"intValue": "12"}},
                                    {"key": "auth.token", "value": {"stringValue": "s3cr3t-value"}},
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    (span,) = decode_json(json.dumps(body))
    assert span.attributes == {"llm.token_count.prompt": 12, "auth.token": "***"}


def test_responses_in_the_request_encoding() -> None:
    assert encode_response(as_json=True) == b"{}"
    assert encode_response(as_json=False) == b""
    assert json.loads(encode_response(as_json=True, rejected=2, message="bad")) == {
        "partialSuccess": {"rejectedSpans": "2", "errorMessage": "bad"}
    }
