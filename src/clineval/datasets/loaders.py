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
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from clineval.errors import DatasetError, field_errors
from clineval.model import CASE_FIELDS, Case

if TYPE_CHECKING:
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


@dataclass
class Dataset:
    """Validated cases plus where they came from."""

    cases: list[Case]
    source: str
    metadata_columns: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def fingerprint(self) -> str:
        return fingerprint_cases(self.cases)


def fingerprint_cases(cases: Sequence[Case]) -> str:
    """A SHA-256 (first 16 hex digits) of the cases' canonical JSON: same data, same print."""
    digest = hashlib.sha256()
    for case in cases:
        digest.update(json.dumps(case.model_dump(mode="json"), sort_keys=True).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()[:16]


def load_dataset(
    source: str | Path | pd.DataFrame | Iterable[Mapping[str, Any] | Case],
    *,
    mapping: Mapping[str, str] | None = None,
    format: str | None = None,
) -> Dataset:
    """Load and validate cases from a file path, a DataFrame or an iterable of dicts.

    A folder path loads the saved conversations in it, one case per conversation (see
    :func:`clineval.conversations.loaders.load_conversations`).
    """
    mapping = dict(mapping or {})
    _check_mapping(mapping)
    if isinstance(source, str | Path):
        path = Path(source)
        fmt = (format or path.suffix.lstrip(".")).lower()
        if not path.exists():
            raise DatasetError(f"dataset file not found: {path}")
        if path.is_dir():
            # A folder holds saved conversations (one case per conversation).
            from clineval.conversations.loaders import conversations_dataset

            if mapping:
                raise DatasetError(f"{path}: a column mapping does not apply to a folder of conversations")
            return conversations_dataset(path)
        if fmt == "jsonl":
            rows = _read_jsonl(path)
        elif fmt == "json":
            rows = _read_json(path)
        elif fmt == "csv":
            rows = _read_csv(path)
        else:
            raise DatasetError(f"{path}: unknown dataset format {fmt!r}; use .jsonl, .json or .csv")
        return _build(rows, str(path), mapping, "item" if fmt == "json" else "line", from_text=(fmt == "csv"))
    if _is_dataframe(source):
        frame: Any = source
        rows = [(i + 1, _clean_frame_row(rec)) for i, rec in enumerate(frame.to_dict(orient="records"))]
        return _build(rows, "DataFrame", mapping, "row", from_text=False)
    if isinstance(source, Mapping):
        raise DatasetError("expected a list of cases, got a single mapping")
    rows = []
    for i, item in enumerate(source):
        rows.append((i + 1, item.model_dump(exclude_none=True) if isinstance(item, Case) else item))
    return _build(rows, "list", mapping, "item", from_text=False)


def _check_mapping(mapping: Mapping[str, str]) -> None:
    for column, target in mapping.items():
        head = target.split(".", 1)[0]
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


def _read_jsonl(path: Path) -> list[tuple[int, Any]]:
    rows: list[tuple[int, Any]] = []
    problems: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})")
    _raise_if(problems)
    return rows


def _read_json(path: Path) -> list[tuple[int, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if isinstance(data, dict):
        for key in ("cases", "data", "examples"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON list of cases (or an object with a 'cases' list)")
    return [(i + 1, item) for i, item in enumerate(data)]


def _read_csv(path: Path) -> list[tuple[int, Any]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            return []
        duplicated = {c for c in reader.fieldnames if reader.fieldnames.count(c) > 1}
        if duplicated:
            raise DatasetError(f"{path}: duplicated column name(s): {', '.join(sorted(duplicated))}")
        rows: list[tuple[int, Any]] = []
        for record in reader:
            if None in record:
                raise DatasetError(f"{path}:{reader.line_num}: more cells than columns")
            rows.append((reader.line_num, {k: (v if v != "" else None) for k, v in record.items()}))
        return rows


def _raise_if(problems: list[str]) -> None:
    if problems:
        shown = problems[:_MAX_REPORTED]
        more = len(problems) - len(shown)
        tail = f"\n... and {more} more" if more > 0 else ""
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
        parsed = json.loads(text)
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
    for column, value in row.items():
        target = _target(str(column), mapping)
        head, _, rest = target.partition(".")
        if from_text and not rest:
            try:
                value = _parse_cell(head, value)
            except ValueError as exc:
                raise _CellError(str(column), str(exc)) from None
        if head == "metadata" and rest:
            if value is not None:
                metadata[rest] = value
        elif head == "agent_run" and rest:
            if value is not None:
                agent_run[rest] = value
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
    rows: list[tuple[int, Any]], source: str, mapping: Mapping[str, str], unit: str, *, from_text: bool
) -> Dataset:

    def where(number: int) -> str:
        return f"{source}:{number}" if unit == "line" else f"{source} {unit} {number}"

    problems: list[str] = []
    cases: list[Case] = []
    first_seen: dict[str, int] = {}
    metadata_columns: dict[str, None] = {}
    for index, (number, row) in enumerate(rows, start=1):
        if not isinstance(row, Mapping):
            problems.append(f"{where(number)}: expected an object with case fields, got {type(row).__name__}")
            continue
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
        cases.append(case)
    _raise_if(problems)
    if not cases:
        raise DatasetError(f"{source}: the dataset has no cases")
    return Dataset(cases=cases, source=source, metadata_columns=list(metadata_columns))
