"""Load cases from JSONL, JSON, CSV, a pandas DataFrame or a list of dicts.

Column names become case fields in this order:

1. the user's ``mapping`` (``{"their_column": "case_field"}``; a target may be dotted,
   e.g. ``metadata.ward`` or ``agent_run.latency_s``);
2. a column already named after a case field;
3. a few well-known names from other tools (``prompt``/``query``/``question`` → input,
   ``predicted_trajectory`` → trajectory, ``context`` → contexts, ``ground_truth`` →
   reference, ``latency_in_seconds`` and ``failure`` → agent_run, ...);
4. any other column goes to ``metadata`` under its own name, and is listed in
   :attr:`Dataset.metadata_columns` so that a misspelt column does not go unnoticed.

Every row must become a valid case: a bad row raises :class:`~clineval.errors.DatasetError`
naming the file, the line (or row) and the field, for every bad row at once. No row is
ever dropped. In CSV files an empty cell is a missing value, and cells of list or object
fields (trajectories, contexts, gold facts, metadata, conversation input) are JSON.

Files are read as UTF-8 (a byte-order mark is skipped) unless ``encoding`` names another
codec; a byte that does not decode is reported with its line and column. A quote that
opens a CSV cell and never closes where it should (which would swallow the rows after
it into one cell) is reported with its line, and JSON nested more than
:data:`MAX_JSON_DEPTH` levels deep is refused.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from clineval.datasets.dataset import Dataset as Dataset  # re-exported: its home before it had one
from clineval.datasets.dataset import _fingerprint_update
from clineval.datasets.dataset import fingerprint_cases as fingerprint_cases
from clineval.datasets.streams import CaseStream
from clineval.errors import ColumnMappingError, DatasetError, field_errors
from clineval.model import CASE_FIELDS, Case

if TYPE_CHECKING:  # pragma: no mutate (pandas is imported for type checking only)
    import pandas as pd

KNOWN_ALIASES: dict[str, str] = {
    "case_id": "id",
    "instance_id": "id",
    "prompt": "input",
    "query": "input",
    "question": "input",
    "messages": "input",
    "predicted_trajectory": "trajectory",
    "context": "contexts",
    "retrieved_contexts": "contexts",
    "ground_truth": "reference",
    "expected_answer": "expected",
    "latency_in_seconds": "agent_run.latency_s",
    "failure": "agent_run.failed",
}

#: Fields whose CSV cells must be JSON when they start with [ or {.
_JSON_FIELDS = {"trajectory", "reference_trajectory", "contexts", "gold_facts", "metadata", "agent_run"}
#: Fields whose CSV cells are read as JSON when they parse, and kept as text otherwise
#: (an input may be a conversation, or a note that starts with "[URGENT]").
_MAYBE_JSON_FIELDS = {"input", "expected"}
_MAX_REPORTED = 25
#: JSON values nested deeper than this are refused (no case field needs a tenth of it).
MAX_JSON_DEPTH = 100


@dataclass
class StreamedDataset(CaseStream):
    """A JSONL file checked in full but not held in memory: iterating it reads it again.

    :func:`stream_dataset` validates every line first (every bad line is reported at
    once, with its ``FILE:LINE``, as :func:`load_dataset` does) and keeps only the count,
    the fingerprint and the metadata columns; each iteration then reads and validates the
    file once more, one line at a time, and raises :class:`DatasetError` if the file no
    longer gives the same cases (it changed while the run started).
    """

    path: Path
    source: str
    mapping: dict[str, str]
    codec: str
    n_cases: int
    fingerprint_value: str
    metadata_columns: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[Case]:
        digest = hashlib.sha256()
        problems: list[str] = []
        for case in _validated(
            _iter_jsonl(self.path, self.codec, problems),
            self.source,
            self.mapping,
            "line",
            from_text=False,
            problems=problems,
            metadata_columns={},
        ):
            _fingerprint_update(digest, case)
            yield case
        # the fingerprint covers the number of cases too
        if problems or digest.hexdigest()[:16] != self.fingerprint_value:
            raise DatasetError(f"{self.source}: the file changed while it was read; run again")


def stream_dataset(
    path: str | Path, *, mapping: Mapping[str, str] | None = None, encoding: str | None = None
) -> StreamedDataset | Dataset:
    """A ``.jsonl`` file as a :class:`StreamedDataset` (validated, not held in memory); any
    other source as :func:`load_dataset` loads it."""
    path = Path(path)
    if path.suffix.lower() != ".jsonl" or path.is_dir() or not path.exists():
        return load_dataset(path, mapping=mapping, encoding=encoding)
    mapping = dict(mapping or {})
    check_mapping(mapping)
    codec = check_encoding(encoding)
    source = str(path)
    problems: list[str] = []
    json_problems: list[str] = []
    metadata_columns: dict[str, None] = {}
    digest = hashlib.sha256()
    n = 0
    for case in _validated(
        _iter_jsonl(path, codec, json_problems),
        source,
        mapping,
        "line",
        from_text=False,
        problems=problems,
        metadata_columns=metadata_columns,
    ):
        _fingerprint_update(digest, case)
        n += 1
    _raise_if(json_problems)  # as load_dataset: lines that are not JSON are reported first, alone
    _raise_if(problems)
    if n == 0:
        raise DatasetError(f"{source}: the dataset has no cases")
    return StreamedDataset(
        path=path,
        source=source,
        mapping=mapping,
        codec=codec,
        n_cases=n,
        fingerprint_value=digest.hexdigest()[:16],
        metadata_columns=list(metadata_columns),
    )


def load_dataset(
    source: str | Path | pd.DataFrame | Iterable[Mapping[str, Any] | Case],
    *,
    mapping: Mapping[str, str] | None = None,
    format: str | None = None,
    encoding: str | None = None,
) -> Dataset:
    """Load and validate cases from a file path, a DataFrame or an iterable of dicts.

    A folder path is read by a folder format that a plugin registers
    (:mod:`clineval.datasets.formats`; built in: ``conversations``, a folder of saved
    conversations, one case per conversation); ``format`` names it when several could.
    ``encoding`` is the text encoding of a file (default UTF-8, with or without a
    byte-order mark).
    """
    mapping = dict(mapping or {})
    check_mapping(mapping)
    if isinstance(source, str | Path):
        path = Path(source)
        codec = check_encoding(encoding)
        fmt = check_source(path, format)
        if path.is_dir():
            # A folder is read by a format a feature package registers (e.g. saved conversations).
            from clineval.datasets.formats import load_folder

            if mapping:
                raise DatasetError(f"{path}: a column mapping does not apply to a folder")
            return load_folder(path, format)
        rows = _READERS[fmt](path, codec)
        return _build(rows, str(path), mapping, "item" if fmt == "json" else "line", from_text=(fmt == "csv"))
    if _is_dataframe(source):
        frame: Any = source
        rows = [(i + 1, _clean_frame_row(rec)) for i, rec in enumerate(frame.to_dict(orient="records"))]
        return _build(rows, "DataFrame", mapping, "row", from_text=False)
    if isinstance(source, Mapping):
        raise DatasetError("expected a list of cases, got a single mapping")
    rows = []
    for i, item in enumerate(source):
        rows.append((i + 1, item.model_dump() if isinstance(item, Case) else item))
    return _build(rows, "list", mapping, "item", from_text=False)


def check_source(path: Path, format: str | None = None) -> str:
    """The format of a dataset file (``jsonl``, ``json``, ``csv``; ``folder`` for a folder);
    a :class:`DatasetError` when it does not exist or has no known format."""
    if not path.exists():
        raise DatasetError(f"dataset file not found: {path}")
    if path.is_dir():
        return "folder"
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt not in ("jsonl", "json", "csv"):
        raise DatasetError(f"{path}: unknown dataset format {fmt!r}; use .jsonl, .json or .csv")
    return fmt


def check_mapping(mapping: Mapping[str, str]) -> None:
    """A :class:`DatasetError` unless every target of a column mapping is a case field."""
    for column, target in mapping.items():
        head = target.partition(".")[0]
        if head not in CASE_FIELDS:
            raise DatasetError(
                f"column mapping {column!r} -> {target!r}: {head!r} is not a case field "
                f"(fields: {', '.join(CASE_FIELDS)})"
            )
        if "." in target and head not in ("metadata", "agent_run"):
            raise DatasetError(
                f"column mapping {column!r} -> {target!r}: "
                "only metadata.* and agent_run.* take a dotted target"
            )


def _is_dataframe(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "to_dict")


def _clean_frame_row(record: Mapping[Any, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in record.items():
        if (isinstance(value, float) and math.isnan(value)) or (
            value is not None and type(value).__name__ in ("NaTType", "NAType")
        ):
            value = None
        elif hasattr(value, "tolist") and not isinstance(value, str):
            value = value.tolist()
        out[str(key)] = value
    return out


def check_encoding(encoding: str | None) -> str:
    """The codec to read a dataset with: UTF-8 (skipping a byte-order mark) unless another is named."""
    if encoding is None or not encoding.strip():
        return "utf-8-sig"
    try:
        name = codecs.lookup(encoding.strip()).name
        io.TextIOWrapper(io.BytesIO(), encoding=name)  # a text encoding, not a codec such as zlib
    except LookupError:
        raise DatasetError(
            f"unknown encoding {encoding!r}; use a Python codec name such as utf-8, cp1252 or latin-1"
        ) from None
    return "utf-8-sig" if name in ("utf-8", "utf-8-sig") else name


def _read_text(path: Path, codec: str) -> str:
    """The file's text; a byte that does not decode is reported as FILE:LINE:COLUMN."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        # the line starts after its newline, or after the file's byte-order mark
        bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        prefix = data[max(data.rfind(b"\n", 0, exc.start) + 1, bom) : exc.start]
        column = len(prefix.decode(codec, "replace")) + 1
        byte = data[exc.start]
        what = "UTF-8" if codec == "utf-8-sig" else codec
        hint = (
            "; pass --encoding cp1252 (or latin-1) if the file uses another encoding"
            if codec == "utf-8-sig"
            else "; is it the file's encoding?"
        )
        raise DatasetError(f"{path}:{line}:{column}: not valid {what} (byte 0x{byte:02x}){hint}") from None


class _TooDeep(ValueError):
    pass


def _json_loads(text: str) -> Any:
    """``json.loads``, refusing values nested more than :data:`MAX_JSON_DEPTH` levels deep."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise _TooDeep(f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)") from None
    if isinstance(value, list | dict) and _depth_exceeds(value, MAX_JSON_DEPTH):
        raise _TooDeep(f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)")
    return value


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, list | dict))
    return False


def read_records(path: str | Path, *, encoding: str | None = None) -> list[tuple[int, Any]]:
    """The records of a ``.jsonl``, ``.json`` or ``.csv`` file, each with its line (JSON: its
    position in the list), read as strictly as datasets are (every bad line reported with
    ``FILE:LINE``): for side files that are not cases (gold labels, mappings)."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    codec = check_encoding(encoding)
    reader = _READERS.get(path.suffix.lower().lstrip("."))
    if reader is None:
        raise DatasetError(f"{path}: expected a .jsonl, .json or .csv file")
    return reader(path, codec)


def _read_jsonl(path: Path, codec: str = "utf-8-sig") -> list[tuple[int, Any]]:
    problems: list[str] = []
    rows = list(_iter_jsonl(path, codec, problems))
    _raise_if(problems)
    return rows


def _iter_jsonl(path: Path, codec: str, problems: list[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` per non-blank line, read one line at a time; a line that is
    not JSON is added to ``problems``; a byte that does not decode raises at once, with its
    line and column (:func:`_read_text`)."""
    try:
        with path.open(encoding=codec, newline=None) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    value = _json_loads(line)
                except json.JSONDecodeError as exc:
                    problems.append(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})")
                    continue
                except _TooDeep as exc:
                    problems.append(f"{path}:{number}: {exc}")
                    continue
                yield number, value
    except UnicodeDecodeError:
        _read_text(path, codec)  # raises DatasetError naming the line and column
        raise
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _read_json(path: Path, codec: str = "utf-8-sig") -> list[tuple[int, Any]]:
    try:
        data = _json_loads(_read_text(path, codec))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except _TooDeep as exc:
        raise DatasetError(f"{path}:1: {exc}") from None
    if isinstance(data, dict):
        for key in ("cases", "data", "examples"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON list of cases (or an object with a 'cases' list)")
    return [(i + 1, item) for i, item in enumerate(data)]


def _read_csv(path: Path, codec: str = "utf-8-sig") -> list[tuple[int, Any]]:
    text = _read_text(path, codec)
    lines = io.StringIO(text, newline="").readlines()
    # strict: a quote must close right before a comma or the end of a line, so that a
    # stray quote is reported instead of swallowing the rows after it into one cell
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        fieldnames = reader.fieldnames
    except csv.Error as exc:
        raise DatasetError(_csv_error(path, 1, reader.line_num, exc)) from None
    if fieldnames is None:
        return []
    duplicated = {c for c in fieldnames if fieldnames.count(c) > 1}
    if duplicated:
        raise DatasetError(f"{path}: duplicated column name(s): {', '.join(sorted(duplicated))}")
    records: list[tuple[int, int, dict[str, Any]]] = []
    end = reader.line_num
    while True:
        start = _first_nonblank(lines, end)
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise DatasetError(_csv_error(path, start, reader.line_num, exc)) from None
        end = reader.line_num
        if None in record:
            raise DatasetError(f"{path}:{end}: more cells than columns")
        records.append((start, end, record))
    # What the first cells (ids, usually) of one-line rows look like, digits aside.
    shapes = {_id_shape(r[fieldnames[0]]) for s, e, r in records if s == e and r.get(fieldnames[0])}
    for start, end, record in records:
        if _swallowed_rows(record, len(fieldnames), shapes):  # (false for a row on one line)
            raise DatasetError(_unmatched_quote(path, start, end, None))
        # a short row (csv gives its missing columns None); an empty last cell, as in
        # 'a,b,', is a cell (''), read as no value
        missing = [column for column, value in record.items() if value is None]
        if missing:
            raise DatasetError(
                f"{path}:{start}: fewer cells than columns: no cell for {', '.join(map(repr, missing))} "
                "(end the row with a comma for an empty cell)"
            )
    return [(end, {k: (v or None) for k, v in record.items()}) for _, end, record in records]


_READERS = {"jsonl": _read_jsonl, "json": _read_json, "csv": _read_csv}
"""The reader of each dataset file format."""


def _first_nonblank(lines: list[str], after: int) -> int:
    """The number of the first line after line ``after`` that is not blank (csv skips blank lines)."""
    number = after + 1
    while number <= len(lines) and not lines[number - 1].strip("\r\n"):
        number += 1
    return number


def _id_shape(text: str) -> str:
    """``case-017`` as ``case-0``: the shape of an id, whatever its number."""
    return re.sub(r"\d+", "0", text.strip())


def _swallowed_rows(record: Mapping[str | Any, Any], width: int, shapes: set[str]) -> bool:
    """Whether a record spread over several lines looks like rows swallowed by a stray quote:
    one of its cells holds a line that is itself a whole row of the file, i.e. as many
    cells as the header, the first one an id with a number in it, shaped like the first
    cells of the file's one-line rows (so prose with commas in a note is not mistaken)."""
    if width < 2:
        return False
    for value in record.values():
        if not isinstance(value, str) or "\n" not in value:
            continue
        for line in value.splitlines()[1:]:
            cells = next(csv.reader([line]), [])
            first = cells[0].strip() if cells else ""
            if (
                len(cells) == width
                and re.fullmatch(r"[\w.:/-]*\d[\w.:/-]*", first)
                and (not shapes or _id_shape(first) in shapes)
            ):
                return True
    return False


def _csv_error(path: Path, start: int, end: int, exc: csv.Error) -> str:
    """The message for an error of the csv reader in the row that starts on line ``start``."""
    if "field larger than field limit" in str(exc):
        return (
            f"{path}:{start}: a cell longer than {csv.field_size_limit():,} characters, the most "
            "a CSV cell may hold; use a .jsonl file for longer text"
        )
    return _unmatched_quote(path, start, end, exc)


def _unmatched_quote(path: Path, line: int, end: int, exc: csv.Error | None) -> str:
    """A row that starts on ``line`` spans more than one line only through a quoted cell,
    so the quote that opened it is on that line."""
    if exc is not None and "unexpected end of data" in str(exc):
        runs_to = "the end of the file"
    elif end > line:
        runs_to = f"line {end}"
    else:
        runs_to = ""
    where = (
        f"the quoted cell opened on this line runs on to {runs_to}, swallowing the rows after it"
        if runs_to
        else "text follows a closing quote"
    )
    return (
        f"{path}:{line}: an unmatched quote ({where}); a quote must open and close a whole cell, "
        'and a quote inside a quoted cell is written twice ("")'
    )


def _raise_if(problems: list[str]) -> None:
    if problems:
        shown = problems[:_MAX_REPORTED]
        more = len(problems) - len(shown)
        tail = f"\n... and {more} more" if more else ""
        raise DatasetError(f"{len(problems)} bad row(s):\n" + "\n".join(shown) + tail)


def _target(column: str, mapping: Mapping[str, str]) -> str:
    if column in mapping:
        return mapping[column]
    if column in CASE_FIELDS:
        return column
    if column in KNOWN_ALIASES:
        return KNOWN_ALIASES[column]
    return f"metadata.{column}"


def _parse_cell(field_name: str, value: Any) -> Any:
    if not isinstance(value, str) or field_name not in _JSON_FIELDS | _MAYBE_JSON_FIELDS:
        return value
    text = value.strip()
    if text[:1] not in ("[", "{"):
        return value
    try:
        parsed = _json_loads(text)
    except json.JSONDecodeError as exc:
        if field_name in _MAYBE_JSON_FIELDS:
            return value
        raise ValueError(f"not valid JSON ({exc.msg} at position {exc.pos})") from None
    if field_name == "input" and not (isinstance(parsed, list) and all(isinstance(t, dict) for t in parsed)):
        return value  # JSON, but not a conversation: the text itself is the input
    return parsed


def _row_to_case_dict(row: Mapping[str, Any], mapping: Mapping[str, str], from_text: bool) -> dict[str, Any]:
    data: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    agent_run: dict[str, Any] = {}
    dotted = {"metadata": metadata, "agent_run": agent_run}  # check_mapping allows no other
    for column, value in row.items():
        target = _target(str(column), mapping)
        head, _, rest = target.partition(".")
        if from_text and not rest:
            try:
                value = _parse_cell(head, value)
            except ValueError as exc:
                raise _CellError(str(column), str(exc)) from None
        if rest:
            if value is not None:
                dotted[head][rest] = value
        elif head == "metadata":
            if value is not None and not isinstance(value, Mapping):
                raise _CellError(str(column), "metadata must be an object")
            metadata.update(value or {})
        else:
            if head in data and data[head] is not None and value is not None:
                raise _CellError(str(column), f"a second column also gives field {head!r}")
            if value is not None or head not in data:
                data[head] = value
    if metadata:
        data["metadata"] = metadata
    if agent_run:
        if "failed" in agent_run:
            agent_run["failed"] = _as_bool(agent_run["failed"])
        data["agent_run"] = {**(data.get("agent_run") or {}), **agent_run}
    return {k: v for k, v in data.items() if v is not None}


def _as_bool(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("1", "true", "yes", "error", "failed"):
            return True
        if lowered in ("0", "false", "no", "ok", ""):
            return False
        try:
            return bool(float(lowered))
        except ValueError:
            return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return bool(value)
    return value


class _CellError(Exception):
    def __init__(self, column: str, message: str):
        super().__init__(message)
        self.column = column
        self.message = message


def _build(
    rows: list[tuple[int, Any]],
    source: str,
    mapping: Mapping[str, str],
    unit: str,
    *,
    from_text: bool,
) -> Dataset:
    problems: list[str] = []
    metadata_columns: dict[str, None] = {}
    cases = list(
        _validated(
            rows,
            source,
            mapping,
            unit,
            from_text=from_text,
            problems=problems,
            metadata_columns=metadata_columns,
        )
    )
    _raise_if(problems)
    if not cases:
        raise DatasetError(f"{source}: the dataset has no cases")
    return Dataset(cases=cases, source=source, metadata_columns=list(metadata_columns))


def _validated(
    rows: Iterable[tuple[int, Any]],
    source: str,
    mapping: Mapping[str, str],
    unit: str,
    *,
    from_text: bool,
    problems: list[str],
    metadata_columns: dict[str, None],
) -> Iterator[Case]:
    """The valid cases of ``rows``, one at a time; each bad row's messages go to ``problems``
    and the columns kept as metadata to ``metadata_columns``. Only the ids seen are kept
    (to report a repeated id with the line of its first use), never the cases."""

    def where(number: int) -> str:
        return f"{source}:{number}" if unit == "line" else f"{source} {unit} {number}"

    first_seen: dict[str, int] = {}
    columns: dict[str, None] = {}  # every column of every row, for a mapping that names none of them
    for index, (number, row) in enumerate(rows, start=1):
        if not isinstance(row, Mapping):
            problems.append(f"{where(number)}: expected an object with case fields, got {type(row).__name__}")
            continue
        columns.update(dict.fromkeys(map(str, row)))
        for column in row:
            if _target(str(column), mapping).startswith("metadata.") and column not in mapping:
                metadata_columns[str(column)] = None
        try:
            data = _row_to_case_dict(row, mapping, from_text)
        except _CellError as exc:
            problems.append(f"{where(number)}: column '{exc.column}': {exc.message}")
            continue
        data.setdefault("id", str(index))
        try:
            case = Case.model_validate(data)
        except ValidationError as exc:
            problems.extend(f"{where(number)}: {msg}" for msg in field_errors(exc))
            continue
        if case.id in first_seen:
            problems.append(
                f"{where(number)}: field 'id': case id {case.id!r} is already used at "
                f"{unit} {first_seen[case.id]}"
            )
            continue
        first_seen[case.id] = number
        yield case
    check_mapped_columns(mapping, columns, source, unit)


def check_mapped_columns(
    mapping: Mapping[str, str], columns: Mapping[str, None], source: str, unit: str
) -> None:
    """A :class:`ColumnMappingError` when the mapping names a column that no row has (a
    misspelt column would otherwise leave its field empty in every case, silently); not
    for a dataset without rows, which is reported as such."""
    if not columns:
        return
    unknown = [column for column in mapping if column not in columns]
    if unknown:
        pairs = ", ".join(f"{column!r} -> {mapping[column]!r}" for column in unknown)
        raise ColumnMappingError(
            f"column mapping {pairs}: no {unit} of {source} has the column "
            f"{' or '.join(repr(c) for c in unknown)} (its columns: {', '.join(columns)})"
        )
