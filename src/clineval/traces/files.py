"""Trace files for ``clineval traces import``: OTLP JSON lines.

The OpenTelemetry Collector's file exporter (``file`` exporter, JSON format) writes one OTLP
JSON ``ExportTraceServiceRequest`` per line; a ``.gz`` file is read through gzip. Blank
lines are skipped.

A file is taken **all or nothing**: every line is decoded first, and when any line does not
parse, each bad line is reported as ``FILE:LINE: reason`` and nothing of that file is stored
(fix the lines and import the file again). Importing a file again stores nothing twice: spans
are identified by their trace and span ids.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from clineval.errors import ClinevalError, ConfigError
from clineval.model.trace import SpanRecord
from clineval.traces.otlp import decode_json

__all__ = ["FORMATS", "MAX_ERRORS", "TraceFile", "read_otlp_json_lines", "read_trace_file"]

#: Bad lines reported per file (the count of the rest is given).
MAX_ERRORS = 20


@dataclass
class TraceFile:
    """One trace file read: its spans, and the errors of its bad lines (then nothing is stored)."""

    path: Path
    lines: int = 0
    spans: list[SpanRecord] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bad_lines: int = 0

    @property
    def ok(self) -> bool:
        return self.bad_lines == 0


def _open(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8")


def read_otlp_json_lines(path: str | Path) -> TraceFile:
    """The spans of an OTLP JSON lines file, or the FILE:LINE errors of its bad lines."""
    file = Path(path)
    result = TraceFile(path=file)
    source = f"otlp-json:{file.name}"
    try:
        with _open(file) as handle:
            for number, line in enumerate(handle, start=1):
                result.lines = number
                if not line.strip():
                    continue
                try:
                    spans = decode_json(line, source=source)
                except ClinevalError as exc:
                    result.bad_lines += 1
                    if len(result.errors) < MAX_ERRORS:
                        result.errors.append(f"{file}:{number}: {exc}")
                    continue
                if result.bad_lines == 0:
                    result.spans.extend(spans)
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{file}: a folder, not a trace file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}:{result.lines + 1}: not UTF-8 text ({exc.reason})") from None
    except (OSError, EOFError) as exc:
        raise ConfigError(f"{file}: cannot be read ({exc})") from None
    if result.bad_lines:
        if result.bad_lines > len(result.errors):
            result.errors.append(f"{file}: {result.bad_lines - len(result.errors)} more bad lines")
        result.spans = []
    return result


#: The trace file formats ``clineval traces import --format`` reads, by name.
FORMATS: dict[str, Callable[[str | Path], TraceFile]] = {"otlp-json": read_otlp_json_lines}


def read_trace_file(path: str | Path, fmt: str = "auto") -> TraceFile:
    """A trace file in one of :data:`FORMATS` (``auto``: told by its content)."""
    if fmt == "auto":
        return read_otlp_json_lines(path)
    reader = FORMATS.get(fmt)
    if reader is None:
        raise ConfigError(f"--format {fmt!r}: expected auto or one of {', '.join(FORMATS)}")
    return reader(path)
