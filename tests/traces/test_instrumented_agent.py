"""A real instrumented agent, end to end: examples/traffic's clinical agent (its ``agent.py``,
imported from the example, not copied) on the ``openai`` client, instrumented by the official
OpenAI instrumentation (opentelemetry-instrumentation-openai-v2, message content in the span
attributes), answered by the local OpenAI-compatible server with tool calls, exporting with
the real OTLP/HTTP exporter to a ``clineval collect`` process. One conversation of two turns,
the Labs agent then the Pharmacy agent: the stored spans assemble into what the agents did
(the messages, each tool call with its arguments and result, the agent of each turn), and
``clineval traces score`` scores it offline. The same spans written as OTLP JSON lines by the
example's ``generate.py`` and imported with ``clineval traces import`` give the same
conversation and scores."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import openai
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation._semconv import _OpenTelemetrySemanticConventionStability
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tests.clirun import clineval

from clineval.conversations.model import Conversation
from clineval.model.trace import SpanRecord
from clineval.store.sqlite import RunStore
from clineval.store.traces import TraceStore
from clineval.testing import ScriptedServer
from clineval.traces.assemble import assemble

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "traffic"
CONVERSATION = "clinic-0042"


def load_example() -> tuple[ModuleType, ModuleType]:
    """examples/traffic's ``agent`` and ``generate`` modules, loaded from their files (generate.py
    imports ``agent`` by name, as when it is run from its folder); ``sys.modules`` is left as it was."""
    saved = {name: sys.modules.get(name) for name in ("agent", "generate")}
    try:
        modules = []
        for name in ("agent", "generate"):
            spec = importlib.util.spec_from_file_location(name, EXAMPLE / f"{name}.py")
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            modules.append(module)
        return modules[0], modules[1]
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous


@dataclass
class Collector:
    """A running ``clineval collect`` process and the traces URL it printed."""

    proc: subprocess.Popen[str]
    url: str
    stderr: str = ""


def start_clineval(cwd: Path, *args: str) -> subprocess.Popen[str]:
    """``clineval ARGS`` started in ``cwd`` (pipes for its output, text), without the settings
    a developer's shell may hold (token, store, judge, key) and with wide lines."""
    ignored = ("CLINEVAL_COLLECT_TOKEN", "CLINEVAL_STORE", "CLINEVAL_JUDGE", "OPENAI_API_KEY")
    env = {k: v for k, v in os.environ.items() if k not in ignored}
    return subprocess.Popen(
        [sys.executable, "-m", "clineval.cli.main", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "COLUMNS": "200"},
    )


@contextmanager
def running_collect(store: Path, cwd: Path) -> Iterator[Collector]:
    """``clineval collect --port 0 --store STORE`` in ``cwd``, as a user starts it; stopped with
    Ctrl-C (SIGINT) at the end of the block, its exit code (130) and stderr checked."""
    proc = start_clineval(cwd, "collect", "--port", "0", "--store", str(store))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/v1/traces", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        collector = Collector(proc, match.group(0))
        yield collector
        proc.send_signal(signal.SIGINT)
        _, collector.stderr = proc.communicate(timeout=30)
        assert proc.returncode == 130, collector.stderr
        assert "Traceback" not in collector.stderr
    finally:
        proc.kill()
        proc.communicate(timeout=30)


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ModuleType, ModuleType]]:
    """The example's modules, with the instrumentation's settings read afresh from the
    environment (another test may have fixed them for this process) and restored after."""
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    monkeypatch.setattr(_OpenTelemetrySemanticConventionStability, "_initialized", False)
    yield load_example()
    monkeypatch.setattr(_OpenTelemetrySemanticConventionStability, "_initialized", False)


def _conversation(spans: list[SpanRecord]) -> Conversation:
    traffic = assemble(spans, idle_seconds=0)
    assert traffic.pending == [] and traffic.skipped == {}
    (conversation,) = traffic.conversations
    return conversation


def _assert_what_the_agents_did(conversation: Conversation, agent: ModuleType) -> None:
    """Two turns: Labs looks up the potassium, Pharmacy the medication list (the example's
    first two scenarios), each answer restating its tool's result."""
    labs, pharmacy = agent.SCENARIOS[0], agent.SCENARIOS[1]
    potassium = "Potassium 5.9 mmol/L (reference 3.5-5.1), drawn 2026-11-30 07:40."
    medications = "Active medications: lisinopril 20 mg daily, spironolactone 25 mg daily."
    assert conversation.id == CONVERSATION
    assert [(m.role, m.speaker, m.text) for m in conversation.messages] == [
        ("user", "user", "What is the latest potassium of patient MRN 0042?"),
        ("assistant", "Labs", ""),
        ("tool", "tool", potassium),
        ("assistant", "Labs", "Potassium is 5.9 mmol/L (reference 3.5-5.1), drawn 2026-11-30 07:40."),
        ("user", "user", "Which medications is patient MRN 0042 taking?"),
        ("assistant", "Pharmacy", ""),
        ("tool", "tool", medications),
        ("assistant", "Pharmacy", "The patient takes lisinopril 20 mg daily and spironolactone 25 mg daily."),
    ]
    calls = [(c.id, c.name, c.arguments, c.result) for m in conversation.messages for c in m.tool_calls]
    # the scripted model numbers its calls by scenario: call_000 is the first's, call_001 the second's
    assert calls == [
        ("call_000", "get_labs", {"mrn": "0042", "test": "potassium"}, potassium),
        ("call_001", "get_medications", {"mrn": "0042"}, medications),
    ]
    assert (labs.tool, pharmacy.tool) == ("get_labs", "get_medications")
    assert [m.tool_call_id for m in conversation.messages if m.role == "tool"] == ["call_000", "call_001"]
    assert {m.metadata["model"] for m in conversation.messages if m.role == "assistant"} == {"gpt-clinic"}


def traces_score(cwd: Path, db: Path, *metrics: str) -> None:
    """``clineval traces score`` of the last hour's conversations in ``db``, none held back."""
    metric_args = [arg for metric in metrics for arg in ("-m", metric)]
    window = ("--since", "1h", "--idle", "0")
    proc = clineval("traces", "score", "--store", str(db), *window, "-q", *metric_args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def _score(cwd: Path, db: Path) -> dict[str, Any]:
    traces_score(cwd, db, "conversational_faithfulness", "latency")
    store = RunStore(db)
    try:
        (run,) = store.list_runs()
        assert run.tags["source"] == "traces"
        (case,) = store.load_cases(run.id)
        results = {r.metric: r for r in store.iter_results(run.id)}
        return {"case": case, "scores": {name: r.score.value for name, r in results.items()}}
    finally:
        store.close()


def _stored(db: Path, trace_ids: list[str]) -> list[SpanRecord]:
    store = RunStore(db)
    try:
        return [span for trace_id in trace_ids for span in TraceStore(store).trace(trace_id)]
    finally:
        store.close()


def test_instrumented_agent_through_clineval_collect_and_a_trace_file(
    tmp_path: Path, example: tuple[ModuleType, ModuleType]
) -> None:
    agent, generate = example
    live = tmp_path / "live"
    live.mkdir()
    db = live / "traffic.db"
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "clinic-agents"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentor = agent.instrument(provider)
    try:
        with running_collect(db, live) as collector:
            provider.add_span_processor(
                SimpleSpanProcessor(OTLPSpanExporter(endpoint=collector.url, timeout=10))
            )
            tracer = provider.get_tracer("clinic.test")
            with (
                ScriptedServer(agent.script(agent.SCENARIOS)) as llm,
                openai.OpenAI(base_url=llm.base_url, api_key="test", max_retries=0) as client,
            ):
                for scenario in agent.SCENARIOS[:2]:
                    answer = agent.run_turn(client, tracer, scenario.agent, CONVERSATION, scenario.question)
                    assert answer == scenario.answer
                # each turn's second model call carried the tool call and its result back
                requests = [r["body"]["messages"] for r in llm.requests()]
                assert [[m["role"] for m in messages] for messages in requests] == [
                    ["user"],
                    ["user", "assistant", "tool"],
                ] * 2
            assert provider.force_flush()
        assert "8 requests · 8 spans received · 8 stored · 0 duplicates" in collector.stderr
    finally:
        instrumentor.uninstrument()
        provider.shutdown()

    # what the instrumentation and the agent emitted: per turn, two chat spans with the
    # messages in attributes, the tool's span, inside the agent's invoke_agent span
    spans = list(memory.get_finished_spans())
    assert [s.name for s in spans] == [
        "chat gpt-clinic",
        "execute_tool get_labs",
        "chat gpt-clinic",
        "invoke_agent Labs",
        "chat gpt-clinic",
        "execute_tool get_medications",
        "chat gpt-clinic",
        "invoke_agent Pharmacy",
    ]
    chat = spans[0].attributes or {}
    assert chat["gen_ai.operation.name"] == "chat"
    assert json.loads(str(chat["gen_ai.output.messages"]))[0]["parts"][0] == {
        "type": "tool_call",
        "id": "call_000",
        "name": "get_labs",
        "arguments": {"mrn": "0042", "test": "potassium"},
    }
    assert spans[0].parent is not None and spans[0].parent.span_id == spans[3].context.span_id
    trace_ids = [f"{spans[3].context.trace_id:032x}", f"{spans[7].context.trace_id:032x}"]
    assert trace_ids[0] != trace_ids[1]  # a trace per turn, one conversation id

    # the receiver's store: the two traces are one conversation, what the agents did
    stored = _stored(db, trace_ids)
    assert len(stored) == 8 and {s.source for s in stored} == {"otlp-http"}
    _assert_what_the_agents_did(_conversation(stored), agent)
    scored = _score(live, db)
    case = scored["case"]
    assert case.metadata["trace_ids"] == trace_ids
    assert case.input == "Which medications is patient MRN 0042 taking?"
    assert case.response == agent.SCENARIOS[1].answer
    # both answers restate their tool's result (the case's contexts): every claim is supported
    assert scored["scores"]["conversational_faithfulness"] == 1.0
    assert 0 < scored["scores"]["latency"] < 10

    # the same spans through an OTLP JSON lines file, written as generate.py --file writes it
    from_file = tmp_path / "file"
    from_file.mkdir()
    trace_file = from_file / "traces.jsonl"
    trace_file.write_text(generate.otlp_json_line(spans) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "clineval.cli.main", "traces", "import", str(trace_file), "--store", "t.db"],
        cwd=from_file,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    imported = _stored(from_file / "t.db", trace_ids)
    assert [s.span_id for s in imported] == [s.span_id for s in stored]
    _assert_what_the_agents_did(_conversation(imported), agent)
    rescored = _score(from_file, from_file / "t.db")
    assert rescored["case"].metadata["trace_ids"] == trace_ids
    assert rescored["scores"] == scored["scores"]
    assert rescored["case"].response == case.response
