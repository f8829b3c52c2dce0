"""``clineval traces import`` of Langfuse and Phoenix exports: through the real command line,
into the store, assembled into the conversations the files describe (hand-worked).

The files under tests/traces/data/ are written for these tests (invented clinical
conversations) in the shapes the tools give:

* langfuse_trace.json: a trace downloaded from the Langfuse UI (``{trace, observations,
  scores}``), UUID ids, a session, an AGENT with two GENERATIONs and a TOOL (the Python
  SDK's ``{args, kwargs}`` input);
* langfuse_observations.jsonl: the observations table's JSONL export (hexadecimal ids of the
  OpenTelemetry-based SDK, input and output as JSON strings, no session), the tool a
  ``SPAN`` named like the call, one ``EVENT``;
* phoenix_spans.json: Phoenix's ``GET /v1/projects/{project}/spans`` answer (flattened
  OpenInference attributes), an AGENT, two LLM spans and a TOOL;
* phoenix_dataframe.jsonl: ``get_spans_dataframe().reset_index().to_json(orient="records", lines=True)``
  (``context.*`` and ``attributes.*`` columns, epoch milliseconds, float token counts).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.clirun import clineval

from clineval.conversations.model import Conversation
from clineval.errors import ConfigError
from clineval.store.sqlite import RunStore
from clineval.store.traces import TraceStore
from clineval.traces.assemble import assemble, cases_from_traffic
from clineval.traces.files import FORMATS, detect_format, read_trace_file

DATA = Path(__file__).parent / "data"
LANGFUSE_TRACE = DATA / "langfuse_trace.json"
LANGFUSE_JSONL = DATA / "langfuse_observations.jsonl"
PHOENIX_SPANS = DATA / "phoenix_spans.json"
PHOENIX_DATAFRAME = DATA / "phoenix_dataframe.jsonl"

MED_QUESTION = "Can I take ibuprofen with my lisinopril? My kidneys were checked recently."
MED_ANSWER = (
    "Your latest creatinine was 1.4 mg/dL on 2 May 2024, slightly above the usual range. Ibuprofen can "
    "raise blood pressure and, taken with lisinopril, strain the kidneys, so avoid it for now: paracetamol "
    "is the safer choice, and ask your doctor before taking ibuprofen."
)
A1C_ANSWER = "Your last HbA1c was 6.8% on 12 March 2024, just under the 7% target agreed with your care team."
RASH_ANSWER = "Stop co-trimoxazole and see a doctor today: a rash can be the start of a severe reaction."
K_ANSWER = (
    "Your potassium was 5.6 mmol/L on 1 May 2024, above the normal range. Spironolactone can raise "
    "potassium, so do not stop or change it on your own: contact your doctor today, who may adjust the "
    "dose and repeat the test."
)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return clineval("traces", "import", *args, cwd=cwd, timeout=60, columns=250)


def _stored(store: Path) -> list[object]:
    opened = RunStore(store, readonly=True)
    try:
        return list(TraceStore(opened).since(0))
    finally:
        opened.close()


def _count(store: Path) -> int:
    opened = RunStore(store, readonly=True)
    try:
        return TraceStore(opened).count()
    finally:
        opened.close()


def _shape(conversation: Conversation) -> list[tuple[str, str, str]]:
    return [(m.role, m.speaker, m.text) for m in conversation.messages]


def test_langfuse_and_phoenix_exports_import_through_the_cli_and_assemble(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    files = [str(p) for p in (LANGFUSE_TRACE, LANGFUSE_JSONL, PHOENIX_SPANS, PHOENIX_DATAFRAME)]
    first = _cli("--store", str(store), *files, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert f"{LANGFUSE_TRACE}: 4 spans, 4 new, 0 already stored" in first.stdout
    assert f"{LANGFUSE_JSONL}: 4 spans, 4 new, 0 already stored" in first.stdout
    assert f"{PHOENIX_SPANS}: 4 spans, 4 new, 0 already stored" in first.stdout
    assert f"{PHOENIX_DATAFRAME}: 1 spans, 1 new, 0 already stored" in first.stdout

    again = _cli("--store", str(store), *files, cwd=tmp_path)  # idempotent
    assert again.returncode == 0, again.stderr
    assert f"{LANGFUSE_TRACE}: 4 spans, 0 new, 4 already stored" in again.stdout
    assert f"{PHOENIX_SPANS}: 4 spans, 0 new, 4 already stored" in again.stdout
    assert _count(store) == 13

    traffic = assemble(_stored(store), idle_seconds=0)  # type: ignore[arg-type]
    assert traffic.pending == []
    assert traffic.skipped == {"no GenAI attribute or event": 1}  # the Langfuse EVENT
    by_id = {c.id: c for c in traffic.conversations}
    assert sorted(by_id) == [
        "4bf92f3577b34da6a3ce929d0e0e4736",
        "sess-feeding-2",
        "sess-labs-3",
        "sess-med-7",
    ]

    # Langfuse UI download: the session is the conversation, the AGENT answers, the TOOL fills the call.
    med = by_id["sess-med-7"]
    lab = '{"creatinine_mg_dl": 1.4, "date": "2024-05-02"}'
    assert _shape(med) == [
        (
            "system",
            "system",
            "You are a pharmacy assistant. Check the patient's labs before advising on medicines.",
        ),
        ("user", "user", MED_QUESTION),
        ("assistant", "Pharmacy", ""),
        ("tool", "tool", lab),
        ("assistant", "Pharmacy", MED_ANSWER),
    ]
    (call,) = med.messages[2].tool_calls
    assert (call.id, call.name, call.arguments, call.result) == (
        "call_lab_1",
        "get_lab_results",
        {"patient_id": "P-1042", "test": "creatinine"},
        {"creatinine_mg_dl": 1.4, "date": "2024-05-02"},
    )
    assert med.messages[3].tool_call_id == "call_lab_1"
    answer = med.messages[4]
    assert answer.metadata["model"] == "gpt-4o-mini"
    assert answer.usage is not None and (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (
        110,
        45,
    )
    assert med.metadata["usage"] == {"input_tokens": 52 + 110, "output_tokens": 18 + 45}
    assert med.metadata["latency_s"] == pytest.approx(4.0)  # the AGENT's 10:00:00.000 to 10:00:04.000
    assert med.source == "langfuse:langfuse_trace.json"

    # Langfuse JSONL export without a session: the trace is the conversation; the SPAN named
    # like the call is the tool.
    a1c = by_id["4bf92f3577b34da6a3ce929d0e0e4736"]
    a1c_result = '{"test": "HbA1c", "value": "6.8%", "date": "2024-03-12"}'
    assert _shape(a1c) == [
        ("user", "user", "What was my last HbA1c, and is it on target?"),
        ("assistant", "assistant", ""),
        ("tool", "tool", a1c_result),
        ("assistant", "assistant", A1C_ANSWER),
    ]
    (a1c_call,) = a1c.messages[1].tool_calls
    assert (a1c_call.id, a1c_call.name, a1c_call.arguments) == ("call_a1c", "lookup_lab", {"test": "HbA1c"})
    assert a1c_call.result == {"test": "HbA1c", "value": "6.8%", "date": "2024-03-12"}
    assert a1c.messages[1].metadata["span_id"] == "00f067aa0ba902b7"  # hexadecimal ids kept as they are
    assert a1c.metadata["usage"] == {"input_tokens": 30 + 64, "output_tokens": 12 + 24}

    # Phoenix REST spans: OpenInference messages, the AGENT span's agent.name, the TOOL span.
    labs = by_id["sess-labs-3"]
    k_result = '{"potassium_mmol_l": 5.6, "date": "2024-05-01"}'
    assert _shape(labs) == [
        ("system", "system", "You are a clinical lab assistant. Look up results before answering."),
        ("user", "user", "My potassium was high last week, should I keep taking spironolactone?"),
        ("assistant", "Labs", ""),
        ("tool", "tool", k_result),
        ("assistant", "Labs", K_ANSWER),
    ]
    (k_call,) = labs.messages[2].tool_calls
    assert (k_call.id, k_call.name, k_call.arguments, k_call.result) == (
        "call_k7",
        "get_lab_results",
        {"patient_id": "P-2210", "test": "potassium"},
        {"potassium_mmol_l": 5.6, "date": "2024-05-01"},
    )
    assert labs.messages[4].metadata["model"] == "gpt-4o-2024-08-06"
    assert labs.metadata["usage"] == {"input_tokens": 61 + 120, "output_tokens": 19 + 52}  # "19" read as 19

    # Phoenix dataframe rows: epoch milliseconds, float token counts.
    feeding = by_id["sess-feeding-2"]
    assert _shape(feeding) == [
        ("user", "user", "Is it safe to take amoxicillin while breastfeeding?"),
        (
            "assistant",
            "assistant",
            "Amoxicillin is generally considered compatible with breastfeeding; watch the baby for diarrhoea "
            "or rash and tell your midwife or doctor if you notice either.",
        ),
    ]
    assert feeding.metadata["started"] == "2024-05-09T07:00:00+00:00"
    assert feeding.metadata["latency_s"] == pytest.approx(1.5)
    assert feeding.metadata["usage"] == {"input_tokens": 21, "output_tokens": 33}

    cases = {c.id: c for c in cases_from_traffic(traffic)}
    med_case = cases["sess-med-7"]
    assert (med_case.input, med_case.response) == (MED_QUESTION, MED_ANSWER)
    assert [(t.name, t.arguments, t.output) for t in med_case.trajectory or []] == [
        ("get_lab_results", {"patient_id": "P-1042", "test": "creatinine"}, call.result)
    ]
    assert med_case.contexts == [lab]  # no retrieval: the tool result
    assert (med_case.metadata["agent"], med_case.metadata["model"]) == ("Pharmacy", "gpt-4o-mini")
    assert cases["sess-labs-3"].metadata["agent"] == "Labs"


def test_format_names_and_auto_detection(tmp_path: Path) -> None:
    assert sorted(FORMATS) == ["langfuse", "otlp-json", "phoenix"]
    assert detect_format(LANGFUSE_TRACE) == "langfuse"
    assert detect_format(LANGFUSE_JSONL) == "langfuse"
    assert detect_format(PHOENIX_SPANS) == "phoenix"
    assert detect_format(PHOENIX_DATAFRAME) == "phoenix"
    otlp = tmp_path / "otlp.jsonl"
    otlp.write_text(json.dumps({"resourceSpans": []}) + "\n")
    assert detect_format(otlp) == "otlp-json"
    api = tmp_path / "observations.json"  # GET /api/public/observations, pretty-printed
    api.write_text(
        json.dumps({"data": [json.loads(LANGFUSE_JSONL.read_text().splitlines()[0])], "meta": {}}, indent=2)
    )
    assert detect_format(api) == "langfuse"
    assert len(read_trace_file(api).spans) == 1
    session = tmp_path / "session-sess-med-7.json"  # a session downloaded from the UI: {id, traces}
    session.write_text(json.dumps({"id": "sess-med-7", "traces": [json.loads(LANGFUSE_TRACE.read_text())]}))
    assert detect_format(session) == "langfuse"
    assert len(read_trace_file(session).spans) == 4

    # --format by name: the same spans as auto; the wrong reader says what it expected.
    named = read_trace_file(PHOENIX_SPANS, "phoenix")
    assert [s.span_id for s in named.spans] == [s.span_id for s in read_trace_file(PHOENIX_SPANS).spans]
    wrong = read_trace_file(LANGFUSE_JSONL, "phoenix")
    assert wrong.spans == [] and wrong.bad_lines == 4
    assert (
        wrong.errors[0]
        == f"{LANGFUSE_JSONL}:1: context.trace_id: expected the span's OpenTelemetry id (a string)"
    )

    unknown = tmp_path / "notes.json"
    unknown.write_text('{"patient": "P-1", "note": "stable"}')
    with pytest.raises(
        ConfigError, match=r"notes\.json: cannot tell its format \(expected OTLP JSON lines, a "
    ):
        read_trace_file(unknown)
    empty = tmp_path / "empty.json"
    empty.write_text("\n\n")
    with pytest.raises(ConfigError, match="empty, cannot tell its format"):
        detect_format(empty)
    with pytest.raises(
        ConfigError, match=r"--format 'langsmith': expected auto or one of otlp-json, langfuse, phoenix"
    ):
        read_trace_file(LANGFUSE_TRACE, "langsmith")


def test_malformed_exports_are_reported_by_line_or_item_and_store_nothing(tmp_path: Path) -> None:
    rows = LANGFUSE_JSONL.read_text().splitlines()
    bad_lines = tmp_path / "observations.jsonl"
    bad_row = json.loads(rows[2])
    bad_row["startTime"] = "yesterday"
    bad_lines.write_text("\n".join([rows[0], '{"id": "x",', json.dumps(bad_row), rows[3]]) + "\n")

    spans = json.loads(PHOENIX_SPANS.read_text())["data"]
    del spans[1]["context"]["span_id"]
    bad_items = tmp_path / "spans.json"
    bad_items.write_text(json.dumps(spans, indent=1))

    download = json.loads(LANGFUSE_TRACE.read_text())
    download["observations"][2]["endTime"] = True
    bad_nested = tmp_path / "trace.json"
    bad_nested.write_text(json.dumps(download, indent=2))

    store = tmp_path / "store.db"
    result = _cli("--store", str(store), str(bad_lines), str(bad_items), str(bad_nested), cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = " ".join(result.stderr.split())
    assert (
        f"error: {bad_lines}:2: not valid JSON (Expecting property name enclosed in double quotes "
        "at column 12)" in errors
    )
    assert f'error: {bad_lines}:3: startTime: expected an ISO 8601 time, got "yesterday"' in errors
    assert f"{bad_lines}: nothing imported (2 bad lines or items)" in errors
    assert (
        f"error: {bad_items}: item 2: context.span_id: expected the span's OpenTelemetry id (a string)"
        in errors
    )
    assert f"error: {bad_nested}: observations[2].endTime: expected an ISO 8601 time, got true" in errors
    assert _count(store) == 0  # all or nothing: not even the good lines

    first_bad = tmp_path / "first_bad.jsonl"  # JSON lines whose first line is broken: still per line
    first_bad.write_text("{oops\n" + "\n".join(rows) + "\n")
    read = read_trace_file(first_bad)
    assert read.errors == [
        f"{first_bad}:1: not valid JSON (Expecting property name enclosed in double quotes at column 2)"
    ]

    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"id": "a",\n   "traceId": }\n]\n')
    read = read_trace_file(broken, "langfuse")
    assert read.errors == [f"{broken}:3: not valid JSON (Expecting value at column 15)"] and read.spans == []


def test_ids_are_deterministic_and_a_trace_without_generations_gives_its_own_messages(tmp_path: Path) -> None:
    first, second = read_trace_file(LANGFUSE_TRACE), read_trace_file(LANGFUSE_TRACE)
    assert [(s.trace_id, s.span_id, s.parent_span_id) for s in first.spans] == [
        (s.trace_id, s.span_id, s.parent_span_id) for s in second.spans
    ]
    (trace_ids,) = {s.trace_id for s in first.spans}
    assert len(trace_ids) == 32 and trace_ids != "0b6c9b0e3f1a4c559a576f2d8e1c4a10"  # a UUID is hashed
    agent = next(s for s in first.spans if s.attributes["langfuse.observation.type"] == "AGENT")
    assert {s.parent_span_id for s in first.spans if s is not agent} == {agent.span_id}

    # A row of the traces table's export: the trace's own input and output; level ERROR.
    rows = tmp_path / "traces.jsonl"
    rows.write_text(
        json.dumps(
            {
                "id": "t-77",
                "timestamp": "2024-05-10T09:00:00Z",
                "sessionId": "sess-rash-1",
                "input": {"question": "A new rash appeared after starting co-trimoxazole."},
                "output": RASH_ANSWER,
            }
        )
        + "\n"
        + json.dumps(
            {
                "id": "obs-1",
                "traceId": "t-78",
                "type": "GENERATION",
                "startTime": "2024-05-10T09:05:00Z",
                "endTime": "2024-05-10T09:05:02Z",
                "input": "Is 40 mg of furosemide a day a lot?",
                "level": "ERROR",
                "statusMessage": "upstream timeout",
            }
        )
        + "\n"
    )
    read = read_trace_file(rows)
    traffic = assemble(read.spans, idle_seconds=0)
    by_id = {c.id: c for c in traffic.conversations}
    assert _shape(by_id["sess-rash-1"]) == [
        ("user", "user", '{"question": "A new rash appeared after starting co-trimoxazole."}'),
        ("assistant", "assistant", RASH_ANSWER),
    ]
    failed = by_id["t-78"]
    assert _shape(failed) == [("user", "user", "Is 40 mg of furosemide a day a lot?")]
    errors = failed.metadata["errors"]
    assert isinstance(errors, list) and [e["error"] for e in errors if isinstance(e, dict)] == [
        "upstream timeout"
    ]
    (case,) = cases_from_traffic([failed])
    assert case.agent_run is not None and case.agent_run.failed and case.agent_run.error == "upstream timeout"
