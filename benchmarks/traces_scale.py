"""Traces at scale: 100,000 GenAI spans received and assembled, beside a plain protobuf decode.

The script generates ``--spans`` spans (100,000 by default) of ``--conversations``
conversations (10,000): per conversation one ``invoke_agent`` span, five ``chat`` spans
(input and output messages as JSON attributes, the history re-sent on each call, tokens,
models) and four ``execute_tool`` spans (arguments, result), ended over the six hours before
the last hour. They
are encoded as OTLP protobuf ``ExportTraceServiceRequest`` bodies of ``--batch`` spans
(500), what an OpenTelemetry SDK's OTLP/HTTP exporter posts. Then, each in its own process
(peak RSS read from the kernel with ``os.wait4``, time measured inside around the work,
after imports; the bodies are read from a file one at a time, inside the timing):

1. **floor, protobuf decode**: ``ExportTraceServiceRequest.ParseFromString`` of each body
   with opentelemetry-proto alone, touching every span's attributes (the peer);
2. **clineval receive**: what ``POST /v1/traces`` does without HTTP: ``decode_protobuf``
   into ``SpanRecord`` objects, then ``TraceStore.add`` of each batch into a fresh run store;
3. **all spans at once** (for comparison; what ``clineval traces score`` did before it
   read in batches): read every stored span of the window back (``TraceStore.since``),
   ``assemble`` them into conversations and ``cases_from_traffic``, all in memory;
4. **clineval select**: what ``clineval traces score`` and ``clineval monitor`` do before
   scoring: ``select_traffic`` (an index of the traces, then batches of whole
   conversations of about ``BATCH_SPANS`` spans, read and assembled once to choose and
   again to make the cases), every case read;
5. **clineval traces score**: the same, then the cases scored and stored as a run
   (``score_traffic``) with two metrics that need no judge (``latency``, ``failure``), so
   the figure is the traces path and the store, not a judge.

Target (issue 23): 100,000 spans received and assembled in under 500 MB.

Run with ``python benchmarks/traces_scale.py`` (``--spans 20000`` for a quick look).
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

S = 1_000_000_000
SPANS_PER_CONVERSATION = 10

_QUESTION = (
    "Patient {n} on the cardiology ward: what was the last potassium, and does it change the "
    "furosemide dose we started yesterday? Please also check the creatinine trend."
)
_ANSWER = (
    "The last potassium for patient {n} was 3.{k} mmol/L (reference 3.5-5.1), measured this morning; "
    "creatinine has risen from 88 to 97 umol/L over two days. Keep furosemide at the current dose, "
    "add potassium replacement and recheck electrolytes tomorrow."
)
_TOOL_RESULT = (
    '{{"patient_id": "p{n}", "test": "{test}", "value": {v}, "unit": "mmol/L", '
    '"taken": "2026-11-27T06:{m:02d}:00Z", "reference": "3.5-5.1", "status": "final"}}'
)
_TOOLS = ("get_labs", "get_medications", "get_vitals", "search_guidelines")


def _part(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _conversation_spans(n: int, trace_id: bytes, end_ns: int) -> list[Any]:
    """One conversation's 10 spans as protobuf Span messages."""
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    def kv(attrs: dict[str, Any]) -> list[KeyValue]:
        out = []
        for key, value in attrs.items():
            if isinstance(value, int):
                out.append(KeyValue(key=key, value=AnyValue(int_value=value)))
            else:
                out.append(KeyValue(key=key, value=AnyValue(string_value=str(value))))
        return out

    def sid(i: int) -> bytes:
        return struct.pack(">II", n + 1, i + 1)

    start = end_ns - 20 * S
    cid = f"conv-{n:06d}"
    spans = [
        Span(
            trace_id=trace_id,
            span_id=sid(0),
            name="invoke_agent Ward assistant",
            kind=Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=start,
            end_time_unix_nano=end_ns,
            attributes=kv(
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "Ward assistant",
                    "gen_ai.conversation.id": cid,
                    "gen_ai.provider.name": "openai",
                }
            ),
        )
    ]
    history: list[dict[str, Any]] = [_part("user", _QUESTION.format(n=n))]
    t = start + S // 10
    for step in range(5):
        last = step == 4
        if last:
            output: dict[str, Any] = {
                **_part("assistant", _ANSWER.format(n=n, k=n % 5)),
                "finish_reason": "stop",
            }
        else:
            call = {
                "type": "tool_call",
                "id": f"call_{n}_{step}",
                "name": _TOOLS[step],
                "arguments": {"patient_id": f"p{n}", "test": "potassium"},
            }
            output = {"role": "assistant", "parts": [call], "finish_reason": "tool_call"}
        spans.append(
            Span(
                trace_id=trace_id,
                span_id=sid(1 + 2 * step),
                parent_span_id=sid(0),
                name="chat gpt-4o",
                kind=Span.SPAN_KIND_CLIENT,
                start_time_unix_nano=t,
                end_time_unix_nano=t + 2 * S,
                attributes=kv(
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": "gpt-4o",
                        "gen_ai.response.model": "gpt-4o-2024-08-06",
                        "gen_ai.system_instructions": json.dumps(
                            [{"type": "text", "content": "You are a ward assistant; cite the lab results."}]
                        ),
                        "gen_ai.input.messages": json.dumps(history),
                        "gen_ai.output.messages": json.dumps([output]),
                        "gen_ai.usage.input_tokens": 120 + 40 * step,
                        "gen_ai.usage.output_tokens": 20 + n % 30,
                    }
                ),
            )
        )
        t += 2 * S
        if last:
            break
        result = _TOOL_RESULT.format(n=n, test=_TOOLS[step], v=3 + (n % 9) / 10, m=step * 7)
        spans.append(
            Span(
                trace_id=trace_id,
                span_id=sid(2 + 2 * step),
                parent_span_id=sid(0),
                name=f"execute_tool {_TOOLS[step]}",
                kind=Span.SPAN_KIND_INTERNAL,
                start_time_unix_nano=t,
                end_time_unix_nano=t + S // 2,
                attributes=kv(
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": _TOOLS[step],
                        "gen_ai.tool.call.id": f"call_{n}_{step}",
                        "gen_ai.tool.call.arguments": json.dumps({"patient_id": f"p{n}"}),
                        "gen_ai.tool.call.result": result,
                    }
                ),
            )
        )
        t += S
        history = [
            *history,
            output,
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": f"call_{n}_{step}", "response": result}],
            },
        ]
    return spans


def generate(path: Path, conversations: int, batch: int, now_ns: int) -> tuple[int, int]:
    """Write length-prefixed protobuf bodies to ``path``; (spans, bodies). Conversations end
    an hour before ``now_ns``, spread over the six hours before that."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans

    per_batch = max(1, batch // SPANS_PER_CONVERSATION)
    spans = bodies = 0
    spread = 6 * 3600 * S
    with path.open("wb") as out:
        for first in range(0, conversations, per_batch):
            members = []
            for n in range(first, min(conversations, first + per_batch)):
                end = now_ns - 3600 * S - spread + spread * n // conversations
                members.extend(_conversation_spans(n, struct.pack(">QQ", 0xC0FFEE, n + 1), end))
            request = ExportTraceServiceRequest(
                resource_spans=[
                    ResourceSpans(
                        resource=Resource(
                            attributes=[
                                KeyValue(key="service.name", value=AnyValue(string_value="ward-agent"))
                            ]
                        ),
                        scope_spans=[
                            ScopeSpans(
                                scope=InstrumentationScope(name="opentelemetry.instrumentation.openai_v2"),
                                spans=members,
                            )
                        ],
                    )
                ]
            )
            body = request.SerializeToString()
            out.write(struct.pack(">I", len(body)))
            out.write(body)
            spans += len(members)
            bodies += 1
    return spans, bodies


def _bodies(path: Path) -> Iterator[bytes]:
    """The request bodies, one at a time (a receiver holds one request at a time too)."""
    with path.open("rb") as f:
        while header := f.read(4):
            (size,) = struct.unpack(">I", header)
            yield f.read(size)


# -- the measured phases, each run in a child process ---------------------------------------


def phase_floor(payloads: Path) -> dict[str, Any]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    started = time.perf_counter()
    spans = attributes = 0
    for body in _bodies(payloads):
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    spans += 1
                    attributes += len(span.attributes)
    return {"spans": spans, "seconds": time.perf_counter() - started, "attributes": attributes}


def phase_receive(payloads: Path, store_path: Path) -> dict[str, Any]:
    from clineval.store.sqlite import RunStore
    from clineval.store.traces import TraceStore
    from clineval.traces.otlp import decode_protobuf

    store = RunStore(store_path)
    traces = TraceStore(store)
    started = time.perf_counter()
    received = stored = 0
    decode_s = 0.0
    for body in _bodies(payloads):
        t0 = time.perf_counter()
        spans = decode_protobuf(body)
        decode_s += time.perf_counter() - t0
        result = traces.add(spans)
        received += result.received
        stored += result.stored
    seconds = time.perf_counter() - started
    store.close()
    return {"spans": received, "stored": stored, "seconds": seconds, "decode_seconds": decode_s}


def phase_all_at_once(store_path: Path, idle_s: float) -> dict[str, Any]:
    from clineval.store.sqlite import RunStore
    from clineval.store.traces import TraceStore
    from clineval.traces.assemble import assemble, cases_from_traffic

    store = RunStore(store_path)
    traces = TraceStore(store)
    first = store.query("SELECT MIN(start_ns) FROM spans")[0][0]
    started = time.perf_counter()
    spans = traces.since(first)
    read_s = time.perf_counter() - started
    traffic = assemble(spans, idle_seconds=idle_s)
    cases = len(cases_from_traffic(traffic))
    seconds = time.perf_counter() - started
    store.close()
    return {
        "spans": len(spans),
        "conversations": len(traffic.conversations),
        "pending": len(traffic.pending),
        "cases": cases,
        "seconds": seconds,
        "read_seconds": read_s,
    }


def phase_select(store_path: Path, idle_s: float, score: bool) -> dict[str, Any]:
    from clineval.store.sqlite import RunStore
    from clineval.traces.score import score_traffic, select_traffic

    store = RunStore(store_path)
    first = store.query("SELECT MIN(start_ns) FROM spans")[0][0]
    store.close()
    started = time.perf_counter()
    selection = select_traffic(store_path, since_ns=first, idle_seconds=idle_s)
    chosen_s = time.perf_counter() - started
    if score:
        result = score_traffic(selection, ["latency", "failure"], store=store_path, progress=False)
        cases = result.case_count()
    else:
        cases = sum(1 for _ in selection.cases)
    seconds = time.perf_counter() - started
    return {
        "spans": selection.spans,
        "conversations": selection.conversations,
        "pending": selection.pending,
        "cases": cases,
        "seconds": seconds,
        "read_seconds": chosen_s,
    }


def _child(args: list[str]) -> tuple[dict[str, Any], float]:
    """Run this script's phase in a child; its JSON answer and peak RSS in MB (the kernel's)."""
    proc = subprocess.Popen(
        [sys.executable, __file__, "--phase", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    stdout = proc.stdout.read()
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"phase {args[0]} failed:\n{stderr.decode()}")
    return json.loads(stdout), usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500, help="spans per export request")
    parser.add_argument("--phase", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        name, *rest = args.phase
        if name == "floor":
            answer = phase_floor(Path(rest[0]))
        elif name == "receive":
            answer = phase_receive(Path(rest[0]), Path(rest[1]))
        elif name == "all":
            answer = phase_all_at_once(Path(rest[0]), 300.0)
        else:
            answer = phase_select(Path(rest[0]), 300.0, score=name == "score")
        print(json.dumps(answer))
        return

    conversations = args.spans // SPANS_PER_CONVERSATION
    with tempfile.TemporaryDirectory(prefix="clineval-traces-scale-") as tmp:
        payloads = Path(tmp) / "payloads.bin"
        store = Path(tmp) / "clineval.db"
        t0 = time.perf_counter()
        spans, bodies = generate(payloads, conversations, args.batch, time.time_ns())
        size = payloads.stat().st_size
        print(
            f"generated {spans:,} spans of {conversations:,} conversations in {bodies} OTLP protobuf "
            f"requests ({size / 1e6:.1f} MB, {size / bodies / 1e3:.0f} kB each) "
            f"in {time.perf_counter() - t0:.1f} s",
            flush=True,
        )
        rows = []
        floor, rss = _child(["floor", str(payloads)])
        rows.append(("floor: protobuf decode (opentelemetry-proto)", floor, rss))
        receive, rss = _child(["receive", str(payloads), str(store)])
        rows.append(("clineval receive: decode_protobuf + TraceStore.add", receive, rss))
        db_mb = sum(p.stat().st_size for p in Path(tmp).glob("clineval.db*")) / 1e6
        at_once, rss = _child(["all", str(store)])
        rows.append(("all spans at once (before; for comparison)", at_once, rss))
        select, rss = _child(["select", str(store)])
        rows.append(("clineval select: batches of conversations", select, rss))
        scored, rss = _child(["score", str(store)])
        rows.append(("clineval traces score (latency, failure)", scored, rss))

    print(f"\n{'':52} {'spans':>9} {'seconds':>8} {'spans/s':>9} {'vs floor':>9} {'peak RSS':>9}")
    floor_rate = floor["spans"] / floor["seconds"]
    for label, answer, rss in rows:
        rate = answer["spans"] / answer["seconds"]
        print(
            f"{label:52} {answer['spans']:>9,} {answer['seconds']:>8.2f} {rate:>9,.0f} "
            f"{floor_rate / rate:>8.1f}x {rss:>6.0f} MB"
        )
    print(
        f"\nreceive: decode_protobuf {receive['decode_seconds']:.2f} s, store writes "
        f"{receive['seconds'] - receive['decode_seconds']:.2f} s; {receive['stored']:,} stored; "
        f"store {db_mb:.0f} MB"
    )
    for label, answer, what in (
        ("all at once", at_once, "reading spans back"),
        ("select", select, "choosing (first reading)"),
        ("traces score", scored, "choosing (first reading)"),
    ):
        print(
            f"{label}: {what} {answer['read_seconds']:.2f} s, "
            f"{answer['conversations']:,} conversations, {answer['cases']:,} cases, "
            f"{answer['pending']} pending"
        )


if __name__ == "__main__":
    main()
