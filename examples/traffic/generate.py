"""Generate traffic: N conversations of the example's clinical agents, traced with OpenTelemetry.

    python examples/traffic/generate.py --file traffic.jsonl     # OTLP JSON lines, no receiver
    python examples/traffic/generate.py                          # to `clineval collect` (OTLP/HTTP)
    python examples/traffic/generate.py -n 50 --endpoint http://127.0.0.1:4318/v1/traces
    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 python examples/traffic/generate.py

Without ``--endpoint``, the spans go where the OpenTelemetry exporter variables say
(``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, the full URL; or ``OTEL_EXPORTER_OTLP_ENDPOINT``, the
base URL, to which ``/v1/traces`` is added), else to ``http://127.0.0.1:4318/v1/traces``, where
``clineval collect`` listens by default.

Each conversation is one turn of the Labs or the Pharmacy agent (agent.py), answered by the
scripted local model; the spans carry the real clock, so they are finished conversations as
soon as they are written (score them with ``--idle 0``).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import socket
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

import openai
from agent import SCENARIOS, instrument, run_turn, script
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from clineval.testing import ScriptedServer

DEFAULT_ENDPOINT = "http://127.0.0.1:4318/v1/traces"


def traces_endpoint(given: str | None) -> str:
    """The OTLP/HTTP traces URL: ``given``, else the exporter's standard variables, else the default."""
    if given:
        return given
    if full := os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return full
    if base := os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return base.removesuffix("/") + "/v1/traces"
    return DEFAULT_ENDPOINT


def unreachable(endpoint: str) -> str | None:
    """Why nothing listens at ``endpoint`` (None when something does): checked before the
    conversations run, so a missing receiver is said at once rather than after the
    exporter's retries."""
    url = urlsplit(endpoint)
    if url.scheme not in ("http", "https") or not url.hostname:
        return f"endpoint {endpoint!r}: expected an http(s) URL such as {DEFAULT_ENDPOINT}"
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname, port), timeout=3).close()
    except OSError as exc:
        return f"nothing answers at {endpoint} ({exc.strerror or exc}); is `clineval collect` running there?"
    return None


class CountingExporter(SpanExporter):
    """The OTLP/HTTP exporter, counting the spans it could not deliver."""

    def __init__(self, endpoint: str) -> None:
        self.inner = OTLPSpanExporter(endpoint=endpoint, timeout=10)
        self.sent = 0
        self.failed = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = self.inner.export(spans)
        if result is SpanExportResult.SUCCESS:
            self.sent += len(spans)
        else:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()  # type: ignore[no-untyped-call]


def otlp_json_line(spans: Sequence[ReadableSpan]) -> str:
    """Spans as one OTLP JSON line, as the OpenTelemetry Collector's file exporter writes it:
    the protobuf request in protobuf's JSON mapping, trace and span ids in hexadecimal."""
    data = json_format.MessageToDict(encode_spans(spans))
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(data, separators=(",", ":"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("-n", "--conversations", type=int, default=20, help="how many (default 20)")
    parser.add_argument(
        "--endpoint",
        help="OTLP/HTTP traces URL, as `clineval collect` prints it (default: OTEL_EXPORTER_OTLP_TRACES_"
        f"ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else {DEFAULT_ENDPOINT})",
    )
    parser.add_argument("--file", type=Path, help="write OTLP JSON lines to this file instead of exporting")
    args = parser.parse_args(argv)
    if args.conversations < 1:
        parser.error("--conversations must be at least 1")

    endpoint = traces_endpoint(args.endpoint)
    if args.file is None and (problem := unreachable(endpoint)):
        print(f"error: {problem}", file=sys.stderr)
        return 1

    provider = TracerProvider(resource=Resource.create({"service.name": "clinic-agents"}))
    memory = InMemorySpanExporter()
    exporter: CountingExporter | None = None
    if args.file is not None:
        provider.add_span_processor(SimpleSpanProcessor(memory))
    else:
        # as a deployed agent would: spans batched in the background, flushed before exit
        exporter = CountingExporter(endpoint)
        provider.add_span_processor(BatchSpanProcessor(exporter))
    instrumentor = instrument(provider)
    tracer = provider.get_tracer("clinic.traffic_example")
    try:
        with (
            ScriptedServer(script(SCENARIOS)) as llm,
            openai.OpenAI(base_url=llm.base_url, api_key="local", max_retries=0) as client,
        ):
            for i in range(args.conversations):
                scenario = SCENARIOS[i % len(SCENARIOS)]
                run_turn(client, tracer, scenario.agent, f"traffic-{i + 1:04d}", scenario.question)
        provider.force_flush()
    finally:
        instrumentor.uninstrument()
        provider.shutdown()

    if args.file is not None:
        by_trace: defaultdict[int, list[ReadableSpan]] = defaultdict(list)
        for span in memory.get_finished_spans():
            by_trace[span.context.trace_id].append(span)
        with args.file.open("w", encoding="utf-8") as out:
            for spans in by_trace.values():  # one line per conversation (one trace each)
                out.write(otlp_json_line(spans) + "\n")
        print(f"{args.file}: {args.conversations} conversations, {sum(map(len, by_trace.values()))} spans")
        return 0
    assert exporter is not None
    print(f"{endpoint}: {args.conversations} conversations, {exporter.sent} spans sent")
    if exporter.failed:
        print(
            f"error: {exporter.failed} spans could not be sent to {endpoint} "
            "(is `clineval collect` running there?)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
