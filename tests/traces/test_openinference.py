"""Spans written by the OpenInference instrumentations (openinference-instrumentation-openai
and friends), received over OTLP with only OpenInference attributes, assemble into the
conversation they record, as Phoenix's exports do."""

from __future__ import annotations

import json
from typing import Any

from clineval.traces.assemble import assemble, cases_from_traffic
from clineval.traces.otlp import decode_json

TRACE = "ab" * 16
BASE = 1_790_000_000 * 10**9
ANSWER = "Yes: hold spironolactone and recheck potassium today."


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    def value(v: Any) -> dict[str, Any]:
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": str(v)}

    return [{"key": k, "value": value(v)} for k, v in values.items()]


def _span(
    sid: str, name: str, start_s: float, attributes: dict[str, Any], parent: str | None = None
) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": TRACE,
        "spanId": sid * 8,
        "name": name,
        "startTimeUnixNano": str(BASE + int(start_s * 1e9)),
        "endTimeUnixNano": str(BASE + int((start_s + 0.5) * 1e9)),
        "attributes": _attrs({"session.id": "sess-9", **attributes}),
    }
    if parent:
        span["parentSpanId"] = parent * 8
    return span


def _request() -> str:
    question = "Is 5.9 mmol/L potassium dangerous with spironolactone?"
    spans = [
        _span("01", "Pharmacist", 0, {"openinference.span.kind": "AGENT", "agent.name": "Pharmacist"}),
        _span(
            "02",
            "ChatCompletion",
            1,
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o-mini",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": question,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_7",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_labs",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"test": "K"}',
                "llm.token_count.prompt": 30,
                "llm.token_count.completion": 9,
            },
            parent="01",
        ),
        _span(
            "03",
            "get_labs",
            2,
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "get_labs",
                "tool_call.id": "call_7",
                "input.value": '{"test": "K"}',
                "output.value": "K 5.9 mmol/L (3.5-5.1)",
            },
            parent="01",
        ),
        _span(
            "04",
            "ChatCompletion",
            3,
            {
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": question,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": ANSWER,
            },
            parent="01",
        ),
    ]
    return json.dumps(
        {
            "resourceSpans": [
                {"resource": {}, "scopeSpans": [{"scope": {"name": "openinference"}, "spans": spans}]}
            ]
        }
    )


def test_openinference_spans_over_otlp_assemble_into_the_conversation() -> None:
    traffic = assemble(decode_json(_request()), idle_seconds=0, now_ns=BASE + 10**12)
    (conversation,) = traffic.conversations
    assert conversation.id == "sess-9"  # session.id is the conversation
    roles = [(m.role, m.speaker, m.text) for m in conversation.messages]
    assert roles[0] == ("user", "user", "Is 5.9 mmol/L potassium dangerous with spironolactone?")
    assert roles[-1] == ("assistant", "Pharmacist", ANSWER)
    (call,) = [c for m in conversation.messages for c in m.tool_calls]
    assert (call.name, call.arguments, call.result) == ("get_labs", {"test": "K"}, "K 5.9 mmol/L (3.5-5.1)")
    (case,) = cases_from_traffic(traffic)
    assert case.contexts == ["K 5.9 mmol/L (3.5-5.1)"] and [t.name for t in case.trajectory or []] == [
        "get_labs"
    ]
    assert traffic.skipped == {}
