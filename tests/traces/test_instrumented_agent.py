"""A real instrumented agent, end to end: a small clinical tool-using loop on the ``openai``
client, instrumented by the official OpenAI instrumentation (opentelemetry-instrumentation-
openai-v2, message content captured in the span attributes), talking to the local
OpenAI-compatible server with a tool call, exporting with the real OTLP/HTTP exporter to the
receiver; the stored spans assemble into the one conversation the agent had, and
``clineval traces score`` scores it offline. The same spans written as an OTLP JSON lines
file and imported with ``clineval traces import`` give the same conversation and score."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation._semconv import _OpenTelemetrySemanticConventionStability
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer
from tests.traces.test_receiver import Receiver, _serve

from clineval.conversations.model import Conversation
from clineval.store.sqlite import RunStore
from clineval.store.traces import TraceStore
from clineval.testing import ScriptedServer
from clineval.traces.assemble import assemble

AGENT = "lab-assistant"
CONVERSATION = "conv-k-0042"
QUESTION = "What is the latest potassium of patient MRN 0042?"
ARGUMENTS = {"mrn": "0042", "test": "potassium"}
LAB_RESULT = "Potassium 5.9 mmol/L (reference 3.5-5.1), drawn 2026-11-30 07:40."
ANSWER = "Potassium is 5.9 mmol/L (reference 3.5-5.1), drawn 2026-11-30 07:40."
SCRIPT = {
    "rules": [
        # once the tool result is in the history, the model answers in text ...
        {"pattern": "5.9 mmol/L", "content": ANSWER},
        # ... before that, it asks for the labs
        {"tool_calls": [{"name": "get_labs", "arguments": ARGUMENTS, "id": "call_k1"}]},
    ]
}
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_labs",
            "description": "Latest laboratory result of a patient.",
            "parameters": {
                "type": "object",
                "properties": {"mrn": {"type": "string"}, "test": {"type": "string"}},
                "required": ["mrn", "test"],
            },
        },
    }
]


def get_labs(mrn: str, test: str) -> str:
    assert (mrn, test) == ("0042", "potassium")
    return LAB_RESULT


def run_agent(client: openai.OpenAI, tracer: Tracer) -> str:
    """One turn of the agent: the model asks for a tool, the agent runs it (an execute_tool
    span: the instrumentation records model calls only), the model answers; all inside an
    invoke_agent span (GenAI conventions)."""
    with tracer.start_as_current_span(
        f"invoke_agent {AGENT}",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": AGENT,
            "gen_ai.conversation.id": CONVERSATION,
            "gen_ai.provider.name": "openai",
        },
    ):
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        for _ in range(3):
            reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS)
            message = reply.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                assert call.type == "function"
                with tracer.start_as_current_span(
                    f"execute_tool {call.function.name}",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": call.function.name,
                        "gen_ai.tool.call.id": call.id,
                        "gen_ai.tool.type": "function",
                        "gen_ai.tool.call.arguments": call.function.arguments,
                    },
                ) as span:
                    result = get_labs(**json.loads(call.function.arguments))
                    span.set_attribute("gen_ai.tool.call.result", result)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    raise AssertionError("the agent did not answer within 3 model calls")


@pytest.fixture
def instrumented(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A TracerProvider with the OpenAI instrumentation on it, content in span attributes."""
    # the latest GenAI conventions (gen_ai.input/output.messages) and content on the spans
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    monkeypatch.setattr(_OpenTelemetrySemanticConventionStability, "_initialized", False)
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "lab-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentor = OpenAIInstrumentor()  # type: ignore[no-untyped-call]
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider, memory
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
        monkeypatch.setattr(_OpenTelemetrySemanticConventionStability, "_initialized", False)


def _only_conversation(spans: list[Any]) -> Conversation:
    traffic = assemble(spans, idle_seconds=0)
    assert traffic.pending == [] and traffic.skipped == {}
    (conversation,) = traffic.conversations
    return conversation


def _assert_what_the_agent_did(conversation: Conversation) -> None:
    assert conversation.id == CONVERSATION
    shape = [(m.role, m.speaker, m.text) for m in conversation.messages]
    assert shape == [
        ("user", "user", QUESTION),
        ("assistant", AGENT, ""),
        ("tool", "tool", LAB_RESULT),
        ("assistant", AGENT, ANSWER),
    ]
    (call,) = conversation.messages[1].tool_calls
    assert (call.id, call.name, call.arguments, call.result) == ("call_k1", "get_labs", ARGUMENTS, LAB_RESULT)
    assert conversation.messages[2].tool_call_id == "call_k1"
    assert conversation.messages[3].metadata["model"] == "gpt-test"


def _score(tmp_path: Path, db: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "clineval.cli.main",
            "traces",
            "score",
            "--store",
            str(db),
            "--since",
            "1h",
            "--idle",
            "0",
            "-m",
            "conversational_faithfulness",
            "-m",
            "latency",
            "-q",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    store = RunStore(db)
    try:
        (run,) = store.list_runs()
        assert run.tags["source"] == "traces"
        (case,) = store.load_cases(run.id)
        results = {r.metric: r for r in store.iter_results(run.id)}
        return {
            "case": case,
            "scores": {name: r.score.value for name, r in results.items()},
        }
    finally:
        store.close()


def _otlp_json_line(spans: list[ReadableSpan]) -> str:
    """The spans as one OTLP JSON line, as the Collector's file exporter writes it: the
    protobuf request in protobuf's JSON mapping, with trace and span ids in hexadecimal."""
    data = json_format.MessageToDict(encode_spans(spans))
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(data, separators=(",", ":"))


def test_instrumented_agent_through_the_receiver_and_a_trace_file(
    tmp_path: Path, instrumented: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = instrumented
    db = tmp_path / "live" / ".clineval" / "clineval.db"
    db.parent.mkdir(parents=True)
    store = RunStore(db)
    receiver: Receiver
    for receiver in _serve(TraceStore(store)):
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.url, timeout=10)))
        with (
            ScriptedServer(SCRIPT) as llm,
            openai.OpenAI(base_url=llm.base_url, api_key="test", max_retries=0) as client,
        ):
            assert run_agent(client, provider.get_tracer("clinic.lab_agent")) == ANSWER
            # the agent's requests: the second carried the tool call and its result back
            second = llm.requests()[1]["body"]["messages"]
            assert [m["role"] for m in second] == ["user", "assistant", "tool"]
        provider.force_flush()
        assert receiver.counters.snapshot().stored == 4
    store.close()

    # what the instrumentation emitted: two chat spans with the messages in attributes
    spans = list(memory.get_finished_spans())
    assert [s.name for s in spans] == [
        "chat gpt-test",
        "execute_tool get_labs",
        "chat gpt-test",
        f"invoke_agent {AGENT}",
    ]
    chat = spans[0].attributes or {}
    assert chat["gen_ai.operation.name"] == "chat"
    assert json.loads(str(chat["gen_ai.output.messages"]))[0]["parts"][0] == {
        "type": "tool_call",
        "id": "call_k1",
        "name": "get_labs",
        "arguments": ARGUMENTS,
    }
    assert spans[0].parent is not None and spans[0].parent.span_id == spans[3].context.span_id

    # the receiver's store: its spans (one trace) are one conversation, what the agent did
    trace_id = f"{spans[3].context.trace_id:032x}"
    store = RunStore(db)
    try:
        stored = TraceStore(store).trace(trace_id)
    finally:
        store.close()
    assert len(stored) == 4 and {s.source for s in stored} == {"otlp-http"}
    _assert_what_the_agent_did(_only_conversation(stored))
    live = _score(tmp_path / "live", db)
    assert live["case"].metadata["trace_ids"] == [trace_id]
    assert live["case"].response == ANSWER
    # the answer restates the tool result (the case's context): every claim is supported
    assert live["case"].contexts == [LAB_RESULT]
    assert live["scores"]["conversational_faithfulness"] == 1.0
    assert 0 < live["scores"]["latency"] < 10

    # the same spans through an OTLP JSON lines file
    trace_file = tmp_path / "traces.jsonl"
    trace_file.write_text(_otlp_json_line(spans) + "\n")
    (tmp_path / "file").mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "clineval.cli.main", "traces", "import", str(trace_file)],
        cwd=tmp_path / "file",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    file_db = tmp_path / "file" / ".clineval" / "clineval.db"
    store = RunStore(file_db)
    try:
        imported = TraceStore(store).trace(trace_id)
    finally:
        store.close()
    assert [s.span_id for s in imported] == [s.span_id for s in stored]
    _assert_what_the_agent_did(_only_conversation(imported))
    from_file = _score(tmp_path / "file", file_db)
    assert from_file["case"].metadata["trace_ids"] == [trace_id]
    assert from_file["scores"] == live["scores"]
    assert from_file["case"].response == ANSWER
