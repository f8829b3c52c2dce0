"""Export and import of reviews: CSV and JSON lines, for spreadsheets and other tools.

**Export** (``clineval review export RUN``) writes a run's current verdicts (newest per
reviewer, case, item and scale, not undone, not retracted), or with ``history`` every row
ever written (undone and retracted rows marked), one row per verdict with the columns of
:data:`EXPORT_COLUMNS`. Times are ISO 8601 in UTC.

**Import** (``clineval review import FILE``) reads ``.csv``, ``.tsv`` or ``.jsonl``
(``.ndjson``) in one of two layouts:

*long*
    one verdict per row: ``case_id``, ``scale``, ``verdict`` and/or ``comment``, and
    optionally ``item`` (default ``case``), ``reviewer``, ``run_id``, ``created_at``,
    ``queue_id``, ``blind``, ``item_text`` (what an export writes);
*wide*
    one case per row, as a spreadsheet is made: ``case_id``, optionally ``reviewer`` and
    ``run_id``, and one column per case scale of the run's review schema, found by name
    (``factuality``, ``harm``, ``comment`` ...). An empty cell is a question not answered.

Every row is checked against the run before anything is written: the case is in the run,
the item is in the case, the scale belongs to the item's kind, the verdict is an option of
the scale (its value, ignoring case, or its number), a reviewer is named. Every problem is
reported as ``FILE:LINE: field 'NAME': what is wrong`` and a file with any problem imports
nothing. Otherwise the rows are written in one transaction, with the source
``import:FILENAME``; rows equal to the reviewer's current verdict are skipped, so importing
the same file twice adds nothing the second time.
"""

from __future__ import annotations

import csv
import datetime as dt
import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from clineval.errors import ConfigError, StoreError
from clineval.model import ReviewQueue, ReviewRecord, RunRecord
from clineval.model.review import reviewer_problem
from clineval.review.data import items_of, review_schema
from clineval.review.items import CASE_ITEM, CaseItems
from clineval.review.schema import ReviewScale, ReviewSchema
from clineval.store.reviews import MAX_COMMENT, ReviewStore
from clineval.store.sqlite import RunStore

Format = Literal["csv", "jsonl"]
Layout = Literal["long", "wide"]
FORMATS: tuple[Format, ...] = ("csv", "jsonl")
IMPORT_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson")
#: The columns of an export, in order.
EXPORT_COLUMNS = (
    "run_id",
    "case_id",
    "item",
    "scale",
    "reviewer",
    "verdict",
    "comment",
    "created_at",
    "blind",
    "item_text",
    "source",
    "queue_id",
)
#: An export with ``history`` adds these: the row's order, and whether it was taken back.
HISTORY_COLUMNS = (*EXPORT_COLUMNS, "seq", "retracted", "undone_at")
#: Problems listed in an import error; the rest are counted.
MAX_LISTED = 20
#: Columns of the long layout (beside the scales' own, nothing else is read).
_LONG = ("case_id", "item", "scale", "verdict", "comment", "reviewer", "run_id", "created_at")
_LONG_EXTRA = ("blind", "item_text", "queue_id", "source")
#: Columns of the wide layout that are not scales.
_WIDE = ("case_id", "reviewer", "run_id")
_TRUE = {"true", "yes", "1", "y"}
_FALSE = {"false", "no", "0", "n"}


# --------------------------------------------------------------------------- export


def iso_time(timestamp: float) -> str:
    """``2026-11-28T21:15:15.123Z``: ISO 8601, UTC, milliseconds."""
    moment = dt.datetime.fromtimestamp(timestamp, tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _export_row(record: ReviewRecord, history: bool) -> dict[str, Any]:
    shown = dict(record.shown)
    blind = shown.get("blind")
    text = shown.get("item_text", shown.get("text"))
    row: dict[str, Any] = {
        "run_id": record.run_id,
        "case_id": record.case_id,
        "item": record.item,
        "scale": record.scale,
        "reviewer": record.reviewer,
        "verdict": record.verdict,
        "comment": record.comment,
        "created_at": iso_time(record.created_at),
        "blind": blind if isinstance(blind, bool) else None,
        "item_text": text if isinstance(text, str) else None,
        "source": record.source,
        "queue_id": record.queue_id,
    }
    if history:
        undone = shown.get("undone_at")
        row["seq"] = record.seq
        row["retracted"] = record.retracted
        row["undone_at"] = iso_time(float(undone)) if isinstance(undone, int | float) else None
    return row


def export_rows(store: RunStore, record: RunRecord, *, history: bool = False) -> list[dict[str, Any]]:
    """The run's current verdicts (``history``: every row ever written), oldest first, as
    rows of :data:`EXPORT_COLUMNS` (and :data:`HISTORY_COLUMNS`)."""
    reviews = ReviewStore(store)
    records: Iterable[ReviewRecord] = reviews.history(record.id) if history else reviews.current(record.id)
    return [_export_row(r, history) for r in records]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def write_rows(
    rows: Sequence[Mapping[str, Any]], stream: TextIO, fmt: Format, *, history: bool = False
) -> None:
    """Write export rows as CSV (a header, then one quoted-as-needed row each: a comment with
    newlines, commas and quotes reads back as it was) or JSON lines."""
    columns = HISTORY_COLUMNS if history else EXPORT_COLUMNS
    if fmt == "jsonl":
        for row in rows:
            stream.write(json.dumps({c: row.get(c) for c in columns}, ensure_ascii=False) + "\n")
        return
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])


# --------------------------------------------------------------------------- reading a file


@dataclass(frozen=True)
class ImportProblem:
    """One thing wrong with an import file."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        what = f"field '{self.field}': " if self.field else ""
        return f"{where}: {what}{self.message}"


class ReviewImportError(ConfigError):
    """An import file with problems: nothing was imported. The message lists the first
    :data:`MAX_LISTED` problems and counts the rest."""

    def __init__(self, file: str, problems: Sequence[ImportProblem]):
        self.problems = list(problems)
        listed = [str(p) for p in self.problems[:MAX_LISTED]]
        if len(self.problems) == 1:
            super().__init__(f"{listed[0]} (nothing imported)")
            return
        more = len(self.problems) - len(listed)
        lines = [f"{file}: {len(self.problems)} problems, nothing imported:", *(f"  {p}" for p in listed)]
        if more:
            lines.append(f"  ... and {more} more problem(s)")
        super().__init__("\n".join(lines))


def _column_name(text: str) -> str:
    """A header as a column name: ``Case ID`` -> ``case_id``."""
    return re.sub(r"[\s\-]+", "_", text.strip().lower())


@dataclass
class _Table:
    """A file's rows as read: (line, {column: cell}), columns as named (``Case ID``: ``case_id``)."""

    file: Path
    columns: list[str]
    rows: list[tuple[int, dict[str, Any]]]


def _fail(file: Path, line: int | None, message: str) -> ReviewImportError:
    return ReviewImportError(str(file), [ImportProblem(str(file), line, None, message)])


def _read_delimited(file: Path, delimiter: str) -> _Table:
    last = 0
    try:
        with file.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter=delimiter, strict=True)  # an unclosed quote is an error
            header: list[str] | None = None
            header_line = 0
            rows: list[tuple[int, dict[str, Any]]] = []
            for cells in reader:
                start, last = last + 1, reader.line_num
                if not any(c.strip() for c in cells):
                    continue
                if header is None:
                    header, header_line = [_column_name(c) for c in cells], start
                    continue
                if len(cells) > len(header):
                    extra = [c for c in cells[len(header) :] if c.strip()]
                    if extra:
                        raise _fail(
                            file,
                            start,
                            f"{len(cells)} cells, but the header (line {header_line}) names "
                            f"{len(header)} columns",
                        )
                rows.append(
                    (start, {name: cells[i] if i < len(cells) else "" for i, name in enumerate(header)})
                )
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        kind = "TSV" if delimiter == "\t" else "CSV"
        raise ConfigError(f"{file}:{last + 1}: not valid {kind} ({exc})") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read ({(exc.strerror or str(exc)).lower()})") from None
    if header is None:
        raise ConfigError(f"{file}: empty file (expected a header row: case_id, scale, verdict, ...)")
    empty = [i for i, name in enumerate(header) if not name]
    if empty:
        raise _fail(file, header_line, f"column {empty[0] + 1} of the header has no name")
    twice = sorted({n for n in header if header.count(n) > 1})
    if twice:
        raise _fail(file, header_line, f"column(s) {', '.join(twice)} named twice in the header")
    return _Table(file, header, rows)


def _read_jsonl(file: Path) -> _Table:
    rows: list[tuple[int, dict[str, Any]]] = []
    columns: dict[str, None] = {}
    problems: list[ImportProblem] = []
    try:
        with file.open(encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as exc:
                    problems.append(ImportProblem(str(file), number, None, f"not valid JSON ({exc.msg})"))
                    continue
                if not isinstance(value, dict):
                    problems.append(ImportProblem(str(file), number, None, "expected a JSON object per line"))
                    continue
                row = {_column_name(str(k)): v for k, v in value.items()}
                columns.update(dict.fromkeys(row))
                rows.append((number, row))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read ({(exc.strerror or str(exc)).lower()})") from None
    if problems:
        raise ReviewImportError(str(file), problems)
    return _Table(file, list(columns), rows)


def _read_table(path: str | Path) -> _Table:
    file = Path(path)
    if not file.exists():
        raise ConfigError(f"review file not found: {file}")
    if file.is_dir():
        raise ConfigError(f"{file} is a folder, not a review file")
    suffix = file.suffix.lower()
    if suffix not in IMPORT_SUFFIXES:
        raise ConfigError(
            f"{file}: unknown format {suffix or '(no suffix)'!r}; use one of {', '.join(IMPORT_SUFFIXES)}"
        )
    if suffix in (".jsonl", ".ndjson"):
        return _read_jsonl(file)
    return _read_delimited(file, "\t" if suffix == ".tsv" else ",")


# --------------------------------------------------------------------------- import


@dataclass
class ImportPlan:
    """What an import writes (or, for a dry run, would write)."""

    file: Path
    layout: Layout
    rows: int
    """Data rows read from the file."""
    records: list[ReviewRecord] = field(default_factory=list)
    unchanged: int = 0
    """Verdicts equal to the reviewer's current one: skipped."""
    empty: int = 0
    """Wide layout: cells left empty (questions not answered): skipped."""
    ignored_columns: list[str] = field(default_factory=list)
    written: bool = False

    @property
    def reviewers(self) -> list[str]:
        return list(dict.fromkeys(r.reviewer for r in self.records))

    @property
    def cases(self) -> list[tuple[str, str]]:
        """(run id, case id) of the imported verdicts."""
        return list(dict.fromkeys((r.run_id, r.case_id) for r in self.records))

    @property
    def runs(self) -> list[str]:
        return list(dict.fromkeys(r.run_id for r in self.records))


def _text(value: Any) -> str | None:
    """A cell as text (``None`` when empty); ``true``/``false`` of JSON as ``yes``/``no``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value)
    return text if text.strip() else None


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = _text(value)
    if text is None:
        return None
    word = text.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError(f"{text!r} is not true or false")


def parse_time(value: Any) -> float | None:
    """An ISO 8601 time (UTC when it names no zone) or seconds since 1970; ``None`` when empty."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    text = _text(value)
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO 8601 time (e.g. 2026-11-28T21:15:15Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def _did_you_mean(name: str, options: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(options), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


_CurrentKey = tuple[str, str, str, str]


@dataclass(frozen=True)
class _Answer:
    """Where one verdict of a file goes."""

    line: int
    record: RunRecord
    case_id: str
    item: str
    scale: str
    reviewer: str | None
    queue_id: str | None
    created_at: float | None
    shown: dict[str, Any]


class _Importer:
    """Checks the rows of one file against the store, resolving runs, queues, cases and
    items once each, and collects the verdicts to write and every problem."""

    def __init__(self, store: RunStore, table: _Table, run: RunRecord | None, reviewer: str | None):
        self.store = store
        self.reviews = ReviewStore(store)
        self.table = table
        self.run = run
        self.reviewer = reviewer
        self.layout: Layout = "long" if "scale" in table.columns else "wide"
        self.plan = ImportPlan(file=table.file, layout=self.layout, rows=len(table.rows))
        self.problems: list[ImportProblem] = []
        self.source = f"import:{table.file.name}"
        self.wide_scales: set[str] = set()
        self._runs: dict[str, RunRecord | str] = {}
        self._queues: dict[str, dict[str, ReviewQueue]] = {}
        self._items: dict[tuple[str, str], CaseItems | str] = {}
        self._schemas: dict[tuple[str, str | None], ReviewSchema] = {}
        self._current: dict[str, dict[_CurrentKey, tuple[str | None, str | None]]] = {}
        self._seen: dict[tuple[str, str, str, str, str], int] = {}

    # resolving, once each --------------------------------------------------------------

    def record(self, ref: str | None) -> RunRecord | str:
        """The row's run (its ``run_id``, else ``--run``), or why there is none."""
        if ref is None:
            return self.run if self.run is not None else "no run: give --run RUN, or a run_id column"
        if ref not in self._runs:
            try:
                self._runs[ref] = self.store.get_run(ref)
            except StoreError as exc:
                self._runs[ref] = str(exc)
        found = self._runs[ref]
        if isinstance(found, RunRecord) and self.run is not None and found.id != self.run.id:
            return f"{ref!r} is not the run given by --run ({self.run.id}); leave out --run or the column"
        return found

    def queue(self, record: RunRecord, queue_id: str | None) -> ReviewQueue | None:
        if queue_id is None:
            return None
        if record.id not in self._queues:
            self._queues[record.id] = {q.id: q for q in self.reviews.queues(record.id)}
        return self._queues[record.id].get(queue_id)

    def schema(self, record: RunRecord, queue: ReviewQueue | None) -> ReviewSchema:
        """The case scales of the queue (else of the run) with every kind of item and every
        fact: an item of the case exists whatever a queue chose to review."""
        key = (record.id, queue.id if queue else None)
        if key not in self._schemas:
            schema = review_schema(record, queue)
            self._schemas[key] = ReviewSchema(
                scales=schema.scales, items=("fact", "sentence", "turn"), max_facts=None
            )
        return self._schemas[key]

    def case_items(self, record: RunRecord, case_id: str, schema: ReviewSchema) -> CaseItems | str:
        key = (record.id, case_id)
        if key not in self._items:
            try:
                self._items[key] = items_of(self.store, record, case_id, schema)[2]
            except StoreError:
                self._items[key] = f"{case_id!r} is not a case of run {record.id}"
        return self._items[key]

    def current(self, run_id: str) -> dict[_CurrentKey, tuple[str | None, str | None]]:
        if run_id not in self._current:
            self._current[run_id] = {
                (r.case_id, r.item, r.scale, r.reviewer): (r.verdict, r.comment or None)
                for r in self.reviews.current(run_id)
            }
        return self._current[run_id]

    # checking --------------------------------------------------------------------------

    @property
    def schemas_used(self) -> list[ReviewSchema]:
        return list(self._schemas.values())

    def report(self, line: int, column: str | None, message: str) -> None:
        self.problems.append(ImportProblem(str(self.table.file), line, column, message))

    def who(self, line: int, row: Mapping[str, Any]) -> str | None:
        given = _text(row.get("reviewer"))
        name = given.strip() if given is not None else self.reviewer
        if name is None:
            self.report(line, "reviewer", "no reviewer: give a reviewer column or --reviewer NAME")
            return None
        problem = reviewer_problem(name)
        if problem:
            self.report(line, "reviewer", problem)
            return None
        return name

    def row(self, line: int, row: Mapping[str, Any]) -> None:
        run_ref = _text(row.get("run_id"))
        record = self.record(run_ref.strip() if run_ref else None)
        if isinstance(record, str):
            self.report(line, "run_id", record)
            return
        reviewer = self.who(line, row)
        case_text = _text(row.get("case_id"))
        if case_text is None:
            self.report(line, "case_id", "empty")
            return
        case_id = case_text.strip()
        queue_text = _text(row.get("queue_id")) if self.layout == "long" else None
        queue_id = queue_text.strip() if queue_text else None
        schema = self.schema(record, self.queue(record, queue_id))
        items = self.case_items(record, case_id, schema)
        if isinstance(items, str):
            self.report(line, "case_id", items)
            return
        if self.layout == "wide":
            self.wide_row(line, row, record, case_id, reviewer, schema, items)
            return
        shown: dict[str, Any] = {"imported": True}
        created: float | None = None
        try:
            created = parse_time(row.get("created_at"))
        except ValueError as exc:
            self.report(line, "created_at", str(exc))
        try:
            blind = _flag(row.get("blind"))
            if blind is not None:
                shown["blind"] = blind
        except ValueError as exc:
            self.report(line, "blind", str(exc))
        text = _text(row.get("item_text"))
        if text is not None:
            shown["text"] = text
        item_id = (_text(row.get("item")) or CASE_ITEM).strip()
        scale_name = (_text(row.get("scale")) or "").strip()
        if not scale_name:
            self.report(line, "scale", "empty")
            return
        answer = _Answer(line, record, case_id, item_id, scale_name, reviewer, queue_id, created, shown)
        self.verdict(answer, schema, items, row.get("verdict"), row.get("comment"), column=None)

    def wide_row(
        self,
        line: int,
        row: Mapping[str, Any],
        record: RunRecord,
        case_id: str,
        reviewer: str | None,
        schema: ReviewSchema,
        items: CaseItems,
    ) -> None:
        for scale in schema.scales:
            if scale.name not in self.table.columns:
                continue
            self.wide_scales.add(scale.name)
            cell = row.get(scale.name)
            if _text(cell) is None:
                self.plan.empty += 1
                continue
            answer = _Answer(
                line, record, case_id, CASE_ITEM, scale.name, reviewer, None, None, {"imported": True}
            )
            text = scale.kind == "text"
            self.verdict(
                answer, schema, items, None if text else cell, cell if text else None, column=scale.name
            )

    def verdict(
        self,
        answer: _Answer,
        schema: ReviewSchema,
        items: CaseItems,
        verdict_cell: Any,
        comment_cell: Any,
        *,
        column: str | None,
    ) -> None:
        """Check one verdict (``column``: the wide layout's scale column) and keep it."""
        line, case_id, item_id = answer.line, answer.case_id, answer.item
        item = items.get(item_id)
        if item is None:
            self.report(
                line, "item", f"{item_id!r} is not an item of case {case_id} (its items: {_listed(items)})"
            )
            return
        scales = schema.scales_of(item.kind)
        scale = next((s for s in scales if s.name == answer.scale.lower()), None)
        if scale is None:
            names = [s.name for s in scales]
            what = "the case" if item.kind == "case" else f"a {item.kind}"
            self.report(
                line,
                "scale",
                f"{answer.scale!r} is not a scale of {what} (expected {', '.join(names)})"
                + _did_you_mean(answer.scale, names),
            )
            return
        comment = _text(comment_cell)
        if comment is not None and len(comment) > MAX_COMMENT:
            self.report(
                line, "comment", f"{len(comment):,} characters; a comment holds at most {MAX_COMMENT:,}"
            )
            return
        try:
            verdict, comment = _answer(scale, _text(verdict_cell), comment)
        except ValueError as exc:
            field_name = column or ("comment" if scale.kind == "text" else "verdict")
            self.report(line, field_name, str(exc))
            return
        if answer.reviewer is None:
            return  # reported
        key = (answer.record.id, case_id, item_id, scale.name, answer.reviewer)
        if key in self._seen:
            self.report(
                line,
                column or "scale",
                f"{answer.reviewer}'s {scale.name} of {_where(item_id, case_id)} is given twice "
                f"(first on line {self._seen[key]})",
            )
            return
        self._seen[key] = line
        if self.current(answer.record.id).get(key[1:]) == (verdict, comment):
            self.plan.unchanged += 1
            return
        self.plan.records.append(
            ReviewRecord(
                run_id=answer.record.id,
                case_id=case_id,
                item=item_id,
                scale=scale.name,
                reviewer=answer.reviewer,
                verdict=verdict,
                comment=comment,
                created_at=answer.created_at or 0.0,
                shown=answer.shown,
                source=self.source,
                queue_id=answer.queue_id,
            )
        )


def _where(item_id: str, case_id: str) -> str:
    return f"case {case_id}" if item_id == CASE_ITEM else f"{item_id} in case {case_id}"


def _listed(items: CaseItems) -> str:
    ids = [i.id for i in items.items]
    return ", ".join(ids[:6]) + (f" and {len(ids) - 6} more" if len(ids) > 6 else "")


def _answer(scale: ReviewScale, verdict: str | None, comment: str | None) -> tuple[str | None, str | None]:
    """(verdict, comment) as stored: a choice scale's option value and any comment; a free-text
    scale's text as the comment. A :class:`ValueError` says what is wrong."""
    if scale.kind == "text":
        text = comment if comment is not None else verdict
        if text is None:
            raise ValueError(f"no text for {scale.name} (a free-text scale: give it in 'comment')")
        return None, text
    if verdict is None:
        raise ValueError(f"empty; {scale.name} needs one of {', '.join(scale.values)}")
    return scale.option(verdict), comment


def plan_import(
    store: RunStore,
    path: str | Path,
    *,
    run: str | None = None,
    reviewer: str | None = None,
) -> ImportPlan:
    """Read and check an import file against the store; nothing is written. A
    :class:`ReviewImportError` lists every problem."""
    table = _read_table(path)
    file = table.file
    if "case_id" not in table.columns and "id" in table.columns:  # a dataset's own id column
        table.columns = ["case_id" if c == "id" else c for c in table.columns]
        for _, row in table.rows:
            row["case_id"] = row.pop("id", None)
    columns = table.columns
    if "case_id" not in columns:
        raise _fail(file, 1, f"no case_id column (its columns: {', '.join(columns) or 'none'})")
    if "undone_at" in columns or "retracted" in columns:
        raise ConfigError(
            f"{file}: a --history export (every row ever written, undone ones too) cannot be imported; "
            "import a plain export (clineval review export RUN)"
        )
    if "scale" in columns and "verdict" not in columns and "comment" not in columns:
        raise _fail(file, 1, "a row per verdict (a 'scale' column) needs a 'verdict' or 'comment' column")
    if run is None and "run_id" not in columns:
        raise ConfigError(f"{file}: which run? give --run RUN (the file has no run_id column)")
    if reviewer is not None:
        problem = reviewer_problem(reviewer)
        if problem:
            raise ConfigError(f"--reviewer: {problem}")
    importer = _Importer(store, table, store.get_run(run) if run is not None else None, reviewer)
    for line, row in table.rows:
        importer.row(line, row)
    plan = importer.plan
    if plan.layout == "wide" and importer.schemas_used and not importer.wide_scales:
        names = list(dict.fromkeys(s.name for schema in importer.schemas_used for s in schema.scales))
        raise _fail(
            file,
            1,
            f"no column names a case scale of the run's review schema (expected {', '.join(names)}), "
            "and no 'scale' column for a row per verdict",
        )
    if importer.problems:
        raise ReviewImportError(str(file), importer.problems)
    known = set(_LONG + _LONG_EXTRA) if plan.layout == "long" else {*_WIDE, *importer.wide_scales}
    plan.ignored_columns = [c for c in columns if c not in known]
    return plan


def import_reviews(
    store: RunStore,
    path: str | Path,
    *,
    run: str | None = None,
    reviewer: str | None = None,
    dry_run: bool = False,
) -> ImportPlan:
    """Check an import file and, unless ``dry_run``, write its verdicts in one transaction
    (all or none; refused while a live process runs the run)."""
    plan = plan_import(store, path, run=run, reviewer=reviewer)
    if not dry_run and plan.records:
        ReviewStore(store).add_many(plan.records)
        plan.written = True
    return plan
