"""Trace files for ``clineval traces import``: OTLP JSON lines, and the JSON exports of
Langfuse and Arize Phoenix.

``otlp-json``: the OpenTelemetry Collector's file exporter (``file`` exporter, JSON format)
writes one OTLP JSON ``ExportTraceServiceRequest`` per line; a ``.gz`` file is read through
gzip. Blank lines are skipped. ``langfuse`` (:mod:`clineval.traces.langfuse`) and ``phoenix``
(:mod:`clineval.traces.phoenix`) read those tools' exports. ``auto`` tells the format by the
content: the first line that parses (or the whole document) and its first item.

A file is taken **all or nothing**: every line (or item) is decoded first, and when any does
not parse, each bad one is reported as ``FILE:LINE: reason`` (``FILE: item N: field: reason``
in a JSON document) and nothing of that file is stored (fix it and import the file again).
Importing a file again stores nothing twice: spans are identified by their trace and span ids.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clineval.errors import ClinevalError, ConfigError
from clineval.traces.exports import MAX_ERRORS, TraceFile, file_errors, open_text, read_text
from clineval.traces.langfuse import looks_like_langfuse, read_langfuse
from clineval.traces.otlp import decode_json
from clineval.traces.phoenix import looks_like_phoenix, read_phoenix

__all__ = ["FORMATS", "MAX_ERRORS", "TraceFile", "detect_format", "read_otlp_json_lines", "read_trace_file"]


def read_otlp_json_lines(path: str | Path) -> TraceFile:
    """The spans of an OTLP JSON lines file, or the FILE:LINE errors of its bad lines."""
    file = Path(path)
    result = TraceFile(path=file)
    source = f"otlp-json:{file.name}"
    with file_errors(file, lambda: f"{file}:{result.lines + 1}"), open_text(file) as handle:
        for number, line in enumerate(handle, start=1):
            result.lines = number
            if not line.strip():
                continue
            try:
                spans = decode_json(line, source=source)
            except ClinevalError as exc:
                result.fail(f"{file}:{number}", str(exc))
                continue
            if result.ok:
                result.spans.extend(spans)
    return result.close()


#: The trace file formats ``clineval traces import --format`` reads, by name.
FORMATS: dict[str, Callable[[str | Path], TraceFile]] = {
    "otlp-json": read_otlp_json_lines,
    "langfuse": read_langfuse,
    "phoenix": read_phoenix,
}

#: Lines looked at for a first line that parses, when telling the format of JSON lines.
_SNIFF_LINES = 20


def _kind(value: Any) -> str | None:
    """The format one parsed line or document looks like."""
    if isinstance(value, list):
        return _kind(value[0]) if value else None
    if not isinstance(value, dict):
        return None
    if "resourceSpans" in value:
        return "otlp-json"
    data = value.get("data")
    if isinstance(data, list):
        if data:
            return _kind(data[0])
        return "phoenix" if "next_cursor" in value else "langfuse" if "meta" in value else None
    if looks_like_phoenix(value):
        return "phoenix"
    if looks_like_langfuse(value):
        return "langfuse"
    return None


def detect_format(path: str | Path) -> str:
    """The name in :data:`FORMATS` of the file's format, told by its content: the first
    line that parses as JSON (JSON lines), else the whole document; its first item decides.
    A one-line :class:`ConfigError` when it cannot be told."""
    file = Path(path)
    expected = (
        f"expected OTLP JSON lines, a Langfuse or a Phoenix export; name it with --format {'|'.join(FORMATS)}"
    )
    with file_errors(file), open_text(file) as handle:
        looked = 0
        for line in handle:
            if not line.strip():
                continue
            looked += 1
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                if line.lstrip().startswith("{") and looked < _SNIFF_LINES:
                    continue  # a bad first line of JSON lines, or a pretty-printed document
                break
            kind = _kind(value)
            if kind is not None:
                return kind
            break
        else:
            if looked == 0:
                raise ConfigError(f"{file}: empty, cannot tell its format ({expected})")
    try:
        kind = _kind(json.loads(read_text(file)))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{file}:{exc.lineno}: not valid JSON ({exc.msg}), cannot tell its format ({expected})"
        ) from None
    if kind is None:
        raise ConfigError(f"{file}: cannot tell its format ({expected})")
    return kind


def read_trace_file(path: str | Path, fmt: str = "auto") -> TraceFile:
    """A trace file in one of :data:`FORMATS` (``auto``: told by its content, see
    :func:`detect_format`)."""
    if fmt == "auto":
        fmt = detect_format(path)
    reader = FORMATS.get(fmt)
    if reader is None:
        raise ConfigError(f"--format {fmt!r}: expected auto or one of {', '.join(FORMATS)}")
    return reader(path)
