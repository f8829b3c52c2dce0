"""The OTLP/HTTP receiver through a real HTTP server: the real OpenTelemetry SDK and its
OTLP/HTTP exporter send to it, and the store holds what they sent; refusals are clear."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from tests.waiting import PipeText, wait_for

from clineval.store.sqlite import RunStore
from clineval.store.traces import TraceStore
from clineval.traces.receiver import Counters, create_receiver

TOKEN = "collect-token-123456"


@dataclass
class Receiver:
    url: str
    traces: TraceStore
    counters: Counters


def _serve(traces: TraceStore, **options: object) -> Iterator[Receiver]:
    counters = Counters()
    app = create_receiver(traces, counters=counters, **options)  # type: ignore[arg-type]
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield Receiver(f"http://127.0.0.1:{sock.getsockname()[1]}/v1/traces", traces, counters)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    store = RunStore(tmp_path / "store.db")
    yield from _serve(TraceStore(store), max_bytes=64 * 1024)
    store.close()


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Receiver]:
    store = RunStore(tmp_path / "guarded.db")
    yield from _serve(TraceStore(store), token=TOKEN)
    store.close()


def _agent_spans() -> list[ReadableSpan]:
    """What a small instrumented agent records: an invoke_agent span over a chat span and an
    execute_tool span, with GenAI attributes (recorded in memory, exported by the tests)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "triage-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("clinic.agent")
    with tracer.start_as_current_span(
        "invoke_agent triage",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "triage",
            "gen_ai.conversation.id": "conv-42",
        },
    ):
        with tracer.start_as_current_span(
            "chat gpt-4o",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.conversation.id": "conv-42",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "Max paracetamol dose?"}]}]
                ),
                "http.request.header.authorization": "Bearer sk-abcdefghijklmnopqrstuv",
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool lookup_dose",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_dose"},
        ) as tool:
            tool.set_status(StatusCode.ERROR, "timeout")
    provider.shutdown()
    return list(memory.get_finished_spans())


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_the_real_sdk_exporter_stores_its_spans(receiver: Receiver, compression: Compression) -> None:
    spans = _agent_spans()
    exporter = OTLPSpanExporter(endpoint=receiver.url, compression=compression, timeout=10)
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    stored = receiver.traces.conversation("conv-42")
    assert [s.name for s in stored] == ["invoke_agent triage", "chat gpt-4o"]
    chat = stored[1]
    assert chat.kind == "client" and chat.scope == "clinic.agent" and chat.source == "otlp-http"
    assert chat.resource["service.name"] == "triage-agent"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 120
    assert json.loads(str(chat.attributes["gen_ai.input.messages"]))[0]["role"] == "user"
    assert chat.attributes["http.request.header.authorization"] == "***"  # never stored
    assert chat.parent_span_id == stored[0].span_id
    (trace,) = receiver.traces.traces()
    (tool,) = [s for s in receiver.traces.trace(trace.key) if s.name.startswith("execute_tool")]
    assert (tool.status, tool.status_message) == ("error", "timeout")
    # the same spans exported again (an exporter's retry): nothing is stored twice
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    assert receiver.traces.count() == 3
    totals = receiver.counters.snapshot()
    assert (totals.requests, totals.received, totals.stored, totals.duplicates) == (2, 6, 3, 3)
    exporter.shutdown()


def test_json_requests_get_json_answers(receiver: Receiver) -> None:
    body = {
        "resourceSpans": [
            {"scopeSpans": [{"spans": [{"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "chat"}]}]}
        ]
    }
    status, answer, headers = _post(
        receiver.url, json.dumps(body).encode(), {"Content-Type": "application/json; charset=utf-8"}
    )
    assert (status, answer, headers["content-type"]) == (200, b"{}", "application/json")
    assert [s.name for s in receiver.traces.trace("ab" * 16)] == ["chat"]


def test_malformed_payloads_are_400_with_a_reason_and_keep_earlier_spans(receiver: Receiver) -> None:
    good = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "ab" * 16, "spanId": "cd" * 8}]}]}]}
    assert _post(receiver.url, json.dumps(good).encode(), {"Content-Type": "application/json"})[0] == 200
    status, answer, _ = _post(receiver.url, b"{not json", {"Content-Type": "application/json"})
    assert status == 400
    assert json.loads(answer) == {
        "code": 3,
        "message": "OTLP JSON: not valid JSON (Expecting property name enclosed in double quotes"
        " at line 1 column 2)",
    }
    status, answer, headers = _post(
        receiver.url, b"\x0a\xff\xff\xff\xff\x0f", {"Content-Type": "application/x-protobuf"}
    )
    assert status == 400 and headers["content-type"] == "application/x-protobuf"
    assert answer.startswith(b"\x08\x03\x12")  # google.rpc.Status: code 3 (INVALID_ARGUMENT), message
    assert b"not a valid OTLP protobuf ExportTraceServiceRequest" in answer and b"Traceback" not in answer
    status, answer, _ = _post(
        receiver.url, b"not gzip", {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    )
    assert status == 400 and b"Content-Encoding gzip" in answer
    assert receiver.traces.count() == 1  # the good request's span is still there
    assert receiver.counters.snapshot().rejected == 3


def test_oversized_payloads_are_413(receiver: Receiver) -> None:
    big = b"x" * (64 * 1024 + 1)
    assert _post(receiver.url, big, {"Content-Type": "application/x-protobuf"})[0] == 413
    bomb = gzip.compress(b" " * (1024 * 1024))  # 1 KiB that inflates past the limit
    status, answer, _ = _post(
        receiver.url, bomb, {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    )
    assert status == 413 and b"once decompressed" in answer


def test_other_content_types_and_encodings_are_415(receiver: Receiver) -> None:
    status, answer, _ = _post(receiver.url, b"a", {"Content-Type": "text/plain"})
    assert (
        status == 415
        and answer == b"Content-Type must be application/x-protobuf or application/json, not text/plain\n"
    )
    status, _, _ = _post(receiver.url, b"a", {"Content-Type": "application/json", "Content-Encoding": "br"})
    assert status == 415


def test_a_token_is_required_when_set(guarded: Receiver) -> None:
    spans = _agent_spans()
    assert OTLPSpanExporter(endpoint=guarded.url, timeout=5).export(spans) == SpanExportResult.FAILURE
    status, _, headers = _post(guarded.url, b"", {"Content-Type": "application/x-protobuf"})
    assert status == 401 and headers["www-authenticate"] == "Bearer"
    wrong = {"Content-Type": "application/x-protobuf", "Authorization": "Bearer nope"}
    assert _post(guarded.url, b"", wrong)[0] == 401
    assert guarded.traces.count() == 0
    exporter = OTLPSpanExporter(endpoint=guarded.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    assert guarded.traces.count() == 3


def test_clineval_collect_receives_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    store = tmp_path / "collected.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "clineval.cli.main", "collect", "--port", "0", "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**{k: v for k, v in os.environ.items() if k != "CLINEVAL_COLLECT_TOKEN"}, "COLUMNS": "200"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/v1/traces", line)
        assert match, line
        assert proc.stderr is not None
        printed = PipeText(proc.stderr)
        assert (
            OTLPSpanExporter(endpoint=match.group(0), timeout=10).export(_agent_spans())
            == SpanExportResult.SUCCESS
        )
        # the progress line (printed once a second at most) is out: the test waits for it, bounded
        progress = "1 requests · 3 spans received · 3 stored · 0 duplicates"
        wait_for(lambda: progress in printed.text, "the progress line", 30, process=proc)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    stderr = printed.finish()
    assert proc.returncode == 130
    assert "Traceback" not in stderr
    assert "1 requests · 3 spans received · 3 stored · 0 duplicates" in stderr
    assert "stopped: 1 requests · 3 spans received · 3 stored" in stderr
    reopened = RunStore(store, readonly=True)
    assert TraceStore(reopened).count() == 3
    reopened.close()
