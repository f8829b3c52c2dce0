"""Redaction of spans before they are stored: hand-worked patterns, shifted dates, the hook,
bad configs, and the store file free of the original identifiers through the receiver (real
HTTP) and through ``clineval traces import``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from tests.clirun import clineval

from clineval.errors import ConfigError
from clineval.model.trace import SpanEvent, SpanRecord
from clineval.store.sqlite import RunStore
from clineval.store.traces import TraceStore
from clineval.traces.receiver import create_receiver
from clineval.traces.redact import DateOptions, RedactConfig, RedactionError, SpanRedactor, load_redactor

# The identifiers of a made-up patient, none of which may reach the store.
NAME = "Marjorie Quill"
MRN = "40213377"
PHONE = "555-867-5309"
DATE = "2023-11-14"
SHIFTED = "2023-10-05"  # 2023-11-14 minus 40 days: 14 - 40 = -26 -> 31 + (-26) = October 5

HOOK = """
from clineval.model.trace import SpanRecord

def rename(span: SpanRecord) -> SpanRecord:
    def swap(value):
        if isinstance(value, str):
            return value.replace("Marjorie Quill", "[PATIENT]").replace("Marjorie", "[PATIENT]")
        return value
    return span.model_copy(update={"attributes": {k: swap(v) for k, v in span.attributes.items()}})

def explode(span: SpanRecord) -> SpanRecord:
    raise RuntimeError("name list\\nunavailable")
"""

CONFIG = """
builtins: [mrn, phone, date]
dates: {mode: shift, shift_days: -40}
patterns:
  - {name: bed, regex: 'Bed (\\d+)', replacement: 'Bed [BED]'}
hook: hooks.py:rename
"""


def _messages() -> str:
    return json.dumps(
        [
            {
                "role": "user",
                "parts": [
                    {
                        "type": "text",
                        "content": f"{NAME}, MRN {MRN}, Bed 12, call {PHONE}; admitted {DATE}, seen {DATE}.",
                    }
                ],
            }
        ]
    )


def _span(**attributes: object) -> SpanRecord:
    return SpanRecord(
        trace_id="ab" * 16,
        span_id="cd" * 8,
        name="chat gpt-4o",
        start_time_unix_nano=1_700_000_000_000_000_000,
        end_time_unix_nano=1_700_000_001_000_000_000,
        attributes=attributes,
    )


def _config_dir(tmp_path: Path, config: str = CONFIG) -> Path:
    (tmp_path / "hooks.py").write_text(HOOK)
    path = tmp_path / "redact.yaml"
    path.write_text(config)
    return path


# -- the redactor itself ---------------------------------------------------------------------


def test_mrn_and_phone_in_a_message_json_string_are_replaced() -> None:
    redactor = SpanRedactor(RedactConfig(builtins=("mrn", "phone")))
    tool_args = json.dumps({"query": f"labs for MRN: {MRN}", "callback": PHONE, "patient_id": int(MRN)})
    span = _span(**{"gen_ai.input.messages": _messages(), "gen_ai.tool.call.arguments": tool_args, "n": 3})
    out = redactor.span(span)
    (message,) = json.loads(str(out.attributes["gen_ai.input.messages"]))
    assert message["parts"][0]["content"] == (
        f"{NAME}, MRN [MRN], Bed 12, call [PHONE]; admitted {DATE}, seen {DATE}."
    )
    assert json.loads(str(out.attributes["gen_ai.tool.call.arguments"])) == {
        "query": "labs for MRN: [MRN]",
        "callback": "[PHONE]",
        "patient_id": "[MRN]",  # a record number's key masks its value, a number too
    }
    assert out.attributes["n"] == 3


def test_event_attributes_and_status_message_are_redacted() -> None:
    redactor = SpanRedactor(RedactConfig(builtins=("mrn",)))
    body = json.dumps({"content": f"MRN {MRN}"})
    span = _span().model_copy(
        update={
            "events": (SpanEvent(name="gen_ai.user.message", attributes={"gen_ai.event.content": body}),),
            "status_message": f"no chart for patient id {MRN}",
        }
    )
    out = redactor.span(span)
    assert json.loads(str(out.events[0].attributes["gen_ai.event.content"])) == {"content": "MRN [MRN]"}
    assert out.status_message == "no chart for patient id [MRN]"


def test_a_date_is_shifted_by_the_configured_days_consistently() -> None:
    redactor = SpanRedactor(RedactConfig(builtins=("date",), dates=DateOptions(shift_days=-40)))
    assert redactor.text(f"admitted {DATE}, seen {DATE}") == f"admitted {SHIFTED}, seen {SHIFTED}"
    # the same day in other spellings: US slashes (11/14/2023) and written out
    assert redactor.text("11/14/2023 and 14 November 2023") == "10/05/2023 and 5 October 2023"
    # an ISO timestamp keeps its time; a date that does not exist is masked, not kept
    assert redactor.text("2023-11-14T08:30:00Z 2023-02-30") == "2023-10-05T08:30:00Z [DATE]"
    masked = SpanRedactor(RedactConfig(builtins=("date",), dates=DateOptions(mode="mask")))
    assert masked.text(f"seen {DATE}") == "seen [DATE]"


def test_nhs_numbers_need_a_valid_check_digit() -> None:
    redactor = SpanRedactor(RedactConfig(builtins=("nhs_number",)))
    # 943 476 5919: 9*10+4*9+3*8+4*7+7*6+6*5+5*4+9*3+1*2 = 299; 299 % 11 = 2; 11 - 2 = 9 = the last digit
    assert redactor.text("NHS 943 476 5919, order 943 476 5918") == "NHS [NHS], order 943 476 5918"


def test_the_hook_renames_a_patient(tmp_path: Path) -> None:
    redactor = load_redactor(_config_dir(tmp_path))
    out = redactor.span(_span(**{"gen_ai.input.messages": _messages()}))
    (message,) = json.loads(str(out.attributes["gen_ai.input.messages"]))
    assert message["parts"][0]["content"] == (
        f"[PATIENT], MRN [MRN], Bed [BED], call [PHONE]; admitted {SHIFTED}, seen {SHIFTED}."
    )


def test_a_hook_that_raises_is_one_line_naming_the_hook_and_span(tmp_path: Path) -> None:
    redactor = load_redactor(_config_dir(tmp_path, "hook: hooks.py:explode\n"))
    with pytest.raises(RedactionError) as caught:
        redactor.spans([_span(a="x")])
    message = str(caught.value)
    assert message == (
        f"redaction hook 'hooks.py:explode' failed on span {'cd' * 8} of trace {'ab' * 16}: "
        "RuntimeError: name list unavailable"
    )


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            "patterns:\n  - {name: bad, regex: 'MRN(', replacement: x}\n",
            "field 'patterns.0': pattern 'bad': regex",
        ),
        ("hook: no_such_module_here:scrub\n", "field 'hook' 'no_such_module_here:scrub': module"),
        (
            "hook: hooks.py:missing\n",
            "field 'hook' 'hooks.py:missing': 'hooks.py' has no attribute 'missing'",
        ),
        ("builtins: [mrn, postcode]\n", "field 'builtins.1'"),
        ("builtins: [date]\n", "builtin 'date' needs"),
        (
            "dates: {mode: shift}\nbuiltins: [date]\n",
            "field 'dates': mode 'shift' needs a non-zero shift_days",
        ),
        ("patterns: [{name: x, regex: a, replacment: b}]\n", "field 'patterns.0.replacment': unknown field"),
        ("- just a list\n", "expected a mapping"),
    ],
)
def test_a_bad_config_is_a_one_line_error_naming_the_file(tmp_path: Path, config: str, expected: str) -> None:
    path = _config_dir(tmp_path, config)
    with pytest.raises(ConfigError) as caught:
        load_redactor(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert "\n" not in message


def test_a_missing_config_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: no such redaction file"):
        load_redactor(tmp_path / "nope.yaml")


# -- end to end: nothing of the patient in the store file -------------------------------------


def _otlp_json() -> bytes:
    attributes = [
        {"key": "gen_ai.conversation.id", "value": {"stringValue": "conv-9"}},
        {"key": "gen_ai.input.messages", "value": {"stringValue": _messages()}},
        {"key": "patient.mrn", "value": {"intValue": MRN}},
    ]
    span = {
        "traceId": "ef" * 16,
        "spanId": "12" * 8,
        "name": "chat gpt-4o",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": attributes,
    }
    return json.dumps(
        {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "s"}, "spans": [span]}]}]}
    ).encode()


def _store_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.glob("store.db*")))


def _assert_no_patient(folder: Path) -> None:
    data = _store_bytes(folder)
    assert b"[PATIENT], MRN [MRN]" in data  # the redacted span is there ...
    for identifier in (NAME, "Marjorie", MRN, PHONE, DATE):
        assert identifier.encode() not in data, identifier  # ... and nothing of the original


def _serve(traces: TraceStore, redactor: SpanRedactor) -> Iterator[str]:
    app = create_receiver(traces, redactor=redactor)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1/traces"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _post(url: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_through_the_receiver_the_store_file_holds_no_identifier(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store.db")
    traces = TraceStore(store)
    for url in _serve(traces, load_redactor(_config_dir(tmp_path))):
        status, _ = _post(url, _otlp_json())
        assert status == 200
    (span,) = traces.conversation("conv-9")
    assert span.attributes["patient.mrn"] == "[MRN]"  # a record number's key masks its value
    store.close()
    _assert_no_patient(tmp_path)


def test_a_failing_hook_is_500_with_one_line_and_stores_nothing(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store.db")
    traces = TraceStore(store)
    for url in _serve(traces, load_redactor(_config_dir(tmp_path, "hook: hooks.py:explode\n"))):
        status, body = _post(url, _otlp_json())
        assert status == 500
        answer = json.loads(body)
        assert answer["code"] == 13
        assert answer["message"].startswith(
            "redaction hook 'hooks.py:explode' failed on span 1212121212121212"
        )
        assert "\n" not in answer["message"]
    assert traces.count() == 0
    store.close()
    assert MRN.encode() not in _store_bytes(tmp_path)


def _import(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return clineval("traces", "import", "--store", "store.db", *args, cwd=tmp_path, timeout=60)


def test_through_traces_import_the_store_file_holds_no_identifier(tmp_path: Path) -> None:
    _config_dir(tmp_path)
    (tmp_path / "traffic.jsonl").write_bytes(_otlp_json() + b"\n")
    done = _import(tmp_path, "--redact", "redact.yaml", "traffic.jsonl")
    assert done.returncode == 0, done.stderr
    assert "1 spans, 1 new" in done.stdout
    _assert_no_patient(tmp_path)


def test_traces_import_with_a_bad_config_or_failing_hook_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "traffic.jsonl").write_bytes(_otlp_json() + b"\n")
    _config_dir(tmp_path, "hook: not_a_module_anywhere:scrub\n")
    done = _import(tmp_path, "--redact", "redact.yaml", "traffic.jsonl")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "redact.yaml: field 'hook' 'not_a_module_anywhere:scrub'" in " ".join(done.stderr.split())
    _config_dir(tmp_path, "hook: hooks.py:explode\n")
    done = _import(tmp_path, "--redact", "redact.yaml", "traffic.jsonl")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "traffic.jsonl: redaction hook 'hooks.py:explode' failed" in done.stderr
    assert "traffic.jsonl: nothing imported" in done.stderr
    assert not (tmp_path / "store.db").exists() or MRN.encode() not in _store_bytes(tmp_path)


REDACT = ("--redact", "redact.yaml")


def test_collect_with_a_bad_redaction_file_stops_before_listening(tmp_path: Path) -> None:
    _config_dir(tmp_path, "builtins: [date]\n")
    done = subprocess.run(
        [sys.executable, "-m", "clineval.cli.main", "collect", "--port", "0", "--store", "store.db", *REDACT],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200"},
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "redact.yaml: builtin 'date' needs 'dates:" in done.stderr
    assert not (tmp_path / "store.db").exists()
