"""``clineval traces import``: OTLP JSON lines through the real command line."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

from tests.clirun import clineval

from clineval.store.sqlite import RunStore
from clineval.store.traces import TraceStore
from clineval.traces.files import read_otlp_json_lines


def _request(trace: str, *span_ids: str) -> str:
    """One line of the collector's file exporter: an ExportTraceServiceRequest in OTLP JSON."""
    spans = [
        {
            "traceId": trace,
            "spanId": span_id,
            "name": "chat",
            "startTimeUnixNano": "1700000000000000000",
            "endTimeUnixNano": "1700000001000000000",
            "attributes": [{"key": "gen_ai.conversation.id", "value": {"stringValue": "conv-7"}}],
        }
        for span_id in span_ids
    ]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}]})


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return clineval("traces", "import", *args, cwd=cwd, timeout=60)


def _count(store: Path) -> int:
    opened = RunStore(store, readonly=True)
    try:
        return TraceStore(opened).count()
    finally:
        opened.close()


def test_import_is_idempotent_and_a_bad_file_is_reported_by_line(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(_request("a" * 32, "01" * 8, "02" * 8) + "\n\n" + _request("b" * 32, "03" * 8) + "\n")
    packed = tmp_path / "more.jsonl.gz"
    packed.write_bytes(gzip.compress((_request("a" * 32, "02" * 8, "04" * 8) + "\n").encode()))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_request("c" * 32, "05" * 8) + "\n" + "{oops\n" + _request("zz", "06" * 8) + "\n")
    store = tmp_path / "store.db"

    first = _cli("--store", str(store), str(good), str(packed), str(bad), cwd=tmp_path)
    assert first.returncode == 2, first.stderr
    assert "Traceback" not in first.stderr
    assert f"{good}: 3 spans, 3 new, 0 already stored" in first.stdout
    assert f"{packed}: 2 spans, 1 new, 1 already stored" in first.stdout
    errors = " ".join(first.stderr.split())
    assert (
        f"error: {bad}:2: OTLP JSON: not valid JSON (Expecting property name enclosed in double quotes"
        in errors
    )
    assert (
        f"error: {bad}:3: resourceSpans[0].scopeSpans[0].spans[0].traceId: expected 32 hexadecimal digits, "
        'got "zz"' in errors
    )
    assert f"{bad}: nothing imported (2 bad lines or items)" in errors
    assert _count(store) == 4  # nothing of bad.jsonl, not even its good first line

    again = _cli("--store", str(store), str(good), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"{good}: 3 spans, 0 new, 3 already stored" in again.stdout
    assert _count(store) == 4


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    result = _cli("--store", str(tmp_path / "s.db"), str(tmp_path / "nope.jsonl"), cwd=tmp_path)
    assert result.returncode == 2
    assert f"error: {tmp_path / 'nope.jsonl'}: no such file" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


def test_reader_keeps_the_source_and_counts_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_request("a" * 32, "01" * 8) + "\n")
    read = read_otlp_json_lines(path)
    assert read.ok and read.lines == 1 and read.errors == []
    assert [(s.span_id, s.source, s.scope) for s in read.spans] == [("01" * 8, "otlp-json:t.jsonl", "s")]
