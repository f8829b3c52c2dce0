"""The run store: one SQLite file holding every run, its cases, agent outputs and results.

Each agent output and each (case, metric) result is committed as soon as it is ready,
so a run killed at any moment (even by SIGKILL) keeps everything it finished and
``--resume`` picks up the rest. The primary keys make a repeated write impossible: a
result exists at most once per (run, case, metric).

During a run, writes go through a :class:`BackgroundWriter`: a thread that commits what
the runner hands it, in arrival order, in small transactions (everything that arrived
while the previous commit ran). The event loop never waits on the disk, and a result
is committed milliseconds after it is computed. Because outputs and results share one
queue, a committed result always has its agent output committed too. The connection is
in WAL mode with ``synchronous=NORMAL``, which survives a killed process (the operating
system holds the written pages).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from clineval.errors import (
    RunLockedError,
    StoreAccessError,
    StoreDamagedError,
    StoreError,
    StoreFullError,
    StoreVersionError,
)
from clineval.judges.base import Usage
from clineval.model import AgentOutput, Case, ResultRecord, RunRecord, RunStatus, Score
from clineval.redaction import redact_json
from clineval.store import DEFAULT_STORE as DEFAULT_STORE
from clineval.store.search import ensure_search_index

SCHEMA_VERSION = 1
# Older schema versions and the SQL that brings each to the next one. None yet: version 1 is the first.
_UPGRADES: dict[int, str] = {}
# The integrity check on opening a store stops after this long (a huge store is checked in part;
# damage elsewhere is still reported, as "damaged", when a command reads it).
QUICK_CHECK_BUDGET_S = 0.5
# Disk space set aside during a run, given back when the disk is full so the run can be marked stopped.
_RESERVE_BYTES = 256 * 1024
# For tests only: stores opened for writing fill up ("disk full") at this many pages.
_TEST_MAX_PAGES_ENV = "CLINEVAL_TEST_STORE_MAX_PAGES"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    status TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cases (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id)
);
CREATE TABLE IF NOT EXISTS outputs (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (run_id, case_id)
);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    metric TEXT NOT NULL,
    status TEXT NOT NULL,
    value REAL,
    score TEXT NOT NULL,
    usage TEXT NOT NULL,
    duration_s REAL NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (run_id, case_id, metric)
);
CREATE TABLE IF NOT EXISTS leases (
    run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    token TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started_at REAL NOT NULL,
    heartbeat_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS expected_results (
    run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    total INTEGER NOT NULL,
    by_metric TEXT NOT NULL
);
"""
# Human review (clineval.store.reviews): created in every store opened for writing. Added
# without a schema version change: the tables are new, nothing existing changes, and a store
# written before them reads as one without reviews.
_SCHEMA += """
CREATE TABLE IF NOT EXISTS reviews (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    item TEXT NOT NULL,
    scale TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    verdict TEXT,
    comment TEXT,
    created_at REAL NOT NULL,
    shown TEXT NOT NULL,
    source TEXT NOT NULL,
    queue_id TEXT,
    retracted INTEGER NOT NULL DEFAULT 0,
    undone_at REAL
);
CREATE INDEX IF NOT EXISTS reviews_by_case ON reviews (run_id, case_id, reviewer);
CREATE TABLE IF NOT EXISTS review_queues (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    created_at REAL NOT NULL,
    spec TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS review_queue_cases (
    queue_id TEXT NOT NULL REFERENCES review_queues(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    note TEXT,
    PRIMARY KEY (queue_id, position)
);
CREATE TABLE IF NOT EXISTS review_claims (
    queue_id TEXT NOT NULL REFERENCES review_queues(id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    PRIMARY KEY (queue_id, case_id, reviewer)
);
"""
# Spans of OpenTelemetry traces (clineval.store.traces): append-only, one row per (trace, span);
# added like the review tables, without a schema version change. traffic_scored: the conversations
# clineval monitor has scored (in which run), so that none is scored twice.
_SCHEMA += """
CREATE TABLE IF NOT EXISTS spans (
    seq INTEGER PRIMARY KEY,
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    parent_span_id TEXT,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    start_ns INTEGER NOT NULL,
    end_ns INTEGER NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT NOT NULL,
    conversation_id TEXT,
    attributes TEXT NOT NULL,
    events TEXT NOT NULL,
    resource TEXT NOT NULL,
    scope TEXT NOT NULL,
    source TEXT NOT NULL,
    received_at REAL NOT NULL,
    UNIQUE (trace_id, span_id)
);
CREATE INDEX IF NOT EXISTS spans_by_start ON spans (start_ns);
CREATE INDEX IF NOT EXISTS spans_by_conversation ON spans (conversation_id, start_ns)
    WHERE conversation_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS traffic_scored (
    conversation_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    scored_at REAL NOT NULL
);
"""
# Repeated trials (clineval.store.trials, clineval.results.trials): each trial's agent output and
# results, beside the case-level ``outputs`` (trial 1's) and ``results`` (the trials combined).
# Added like the review tables, without a schema version change: a store written before them
# reads as one without repeated trials.
_SCHEMA += """
CREATE TABLE IF NOT EXISTS trial_outputs (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    data TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (run_id, case_id, trial)
);
CREATE TABLE IF NOT EXISTS trial_results (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    metric TEXT NOT NULL,
    trial INTEGER NOT NULL,
    status TEXT NOT NULL,
    value REAL,
    score TEXT NOT NULL,
    usage TEXT NOT NULL,
    duration_s REAL NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (run_id, case_id, metric, trial)
);
"""


@dataclass(frozen=True)
class TrialOutput:
    """The agent's output of one trial of a case; ``trial == 1`` is also the case's output."""

    run_id: str
    case_id: str
    trial: int
    output: AgentOutput


@dataclass(frozen=True)
class TrialResult:
    """One trial's result of a (case, metric)."""

    trial: int
    result: ResultRecord


_INSERT_OUTPUT = "INSERT INTO outputs (run_id, case_id, data, created_at) VALUES (?, ?, ?, ?)"
_INSERT_TRIAL_OUTPUT = (
    "INSERT INTO trial_outputs (run_id, case_id, trial, data, created_at) VALUES (?, ?, ?, ?, ?)"
)
_INSERT_TRIAL_RESULT = (
    "INSERT INTO trial_results (run_id, case_id, metric, trial, status, value, score, usage, duration_s,"
    " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_RESULT = (
    "INSERT INTO results (run_id, case_id, metric, status, value, score, usage, duration_s, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _result_row(result: ResultRecord) -> tuple[object, ...]:
    score = result.score
    return (
        result.run_id,
        result.case_id,
        result.metric,
        score.status,
        score.value,
        redact_json(score.model_dump_json(exclude={"status"})),  # no secret is ever stored
        result.usage.model_dump_json(),
        result.duration_s,
        result.created_at or time.time(),
    )


def _trial_result_row(item: TrialResult) -> tuple[object, ...]:
    row = _result_row(item.result)
    return (*row[:3], item.trial, *row[3:])


def _result_record(run_id: str, row: Sequence[Any]) -> ResultRecord:
    """A result from ``(case_id, metric, score, usage, duration_s, created_at)`` as stored."""
    return ResultRecord(
        run_id=run_id,
        case_id=row[0],
        metric=row[1],
        # masked on the way out too: runs stored before masking existed may hold secrets
        score=Score.model_validate_json(redact_json(row[2])),
        usage=Usage.model_validate_json(row[3]),
        duration_s=row[4],
        created_at=row[5],
    )


_RESULT_COLUMNS = "case_id, metric, score, usage, duration_s, created_at"
#: Parameters per query when a list of case ids is looked up (SQLite allows 32,766).
_MAX_PARAMS = 900


def _chunked(items: Sequence[Any], size: int = 500) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def _permission_problem(path: Path, *, writing: bool) -> str | None:
    """What keeps this process from reading (or writing) the store at ``path``, if anything."""
    folder = path.parent
    if path.exists() and not os.access(path, os.R_OK):
        return "permission denied: the file cannot be read"
    if writing:
        if path.exists() and not os.access(path, os.W_OK):
            return "permission denied: the file is read-only"
        if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
            return f"permission denied: the folder {folder} is read-only (SQLite keeps journal files there)"
    return None


def store_error(exc: sqlite3.Error, path: Path, *, readonly: bool = False) -> StoreError | None:
    """The one-line user error for SQLite's report ``exc`` about the store at ``path``.

    A full disk, a damaged file, a file or folder that cannot be written and an I/O error
    become :class:`StoreError` subclasses; any other SQLite error (a bug) gives ``None``.
    """
    code = _primary_code(exc)
    detail = str(exc)
    if code is None and "database or disk is full" in detail:
        code = sqlite3.SQLITE_FULL
    if code == sqlite3.SQLITE_FULL:
        return StoreFullError(
            f"{path}: disk full: the run store cannot be written ({detail}); free some disk space "
            "(or use a store on another disk with --store PATH)"
        )
    if code == sqlite3.SQLITE_NOTADB:
        return StoreDamagedError(
            f"{path}: not a usable clineval store ({detail}): the file is damaged or is not a run store; "
            "pass --store PATH to use another store"
        )
    if code == sqlite3.SQLITE_CORRUPT:
        return StoreDamagedError(_damaged(path, detail))
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
        problem = _permission_problem(path, writing=not readonly)
        if readonly and code == sqlite3.SQLITE_READONLY:
            return StoreAccessError(f"{path}: the run store is open for reading only here ({detail})")
        if readonly:
            return StoreAccessError(f"{path}: cannot read the run store ({problem or detail})")
        if problem or code == sqlite3.SQLITE_READONLY:
            return StoreAccessError(
                f"{path}: cannot write the run store ({problem or detail}); write runs to a store you can "
                "write with --store PATH (or CLINEVAL_STORE); 'clineval runs', 'show', 'export' and "
                "'compare' can still read this one"
            )
        return StoreAccessError(f"{path}: cannot open the run store ({detail})")
    if code == sqlite3.SQLITE_IOERR:
        return StoreError(f"{path}: the run store cannot be read or written (disk I/O error: {detail})")
    return None


def _damaged(path: Path, detail: str) -> str:
    return (
        f"{path}: the run store is damaged ({detail}); keep a copy; "
        f"'sqlite3 {path} .recover | sqlite3 recovered.db' saves what can be read (then --store "
        "recovered.db), or start a new store with --store NEW_PATH"
    )


class _Guard:
    """The store's lock. SQLite's reports of a full disk, a damaged file or a file that cannot be
    written, raised inside a ``with`` block, leave it as :class:`StoreError` (one line for the user)."""

    def __init__(self, path: Path, readonly: bool):
        self._lock = threading.Lock()
        self._path = path
        self._readonly = readonly

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._lock.release()
        if isinstance(exc, sqlite3.Error):
            error = store_error(exc, self._path, readonly=self._readonly)
            if error is not None:
                raise error from exc


def _quick_check(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a damaged store (``PRAGMA quick_check``, stopped after :data:`QUICK_CHECK_BUDGET_S`)."""
    deadline = time.monotonic() + QUICK_CHECK_BUDGET_S
    conn.set_progress_handler(lambda: time.monotonic() > deadline, 20_000)
    try:
        rows = conn.execute("PRAGMA quick_check(3)").fetchall()
    except sqlite3.OperationalError as exc:
        if _primary_code(exc) == sqlite3.SQLITE_INTERRUPT:
            return  # a large store, checked in part
        raise
    finally:
        conn.set_progress_handler(None, 0)
    lines = [line for row in rows for line in str(row[0]).splitlines() if line and not line.startswith("***")]
    if lines and lines != ["ok"]:
        raise StoreDamagedError(_damaged(path, "; ".join(lines[:2])))


class RunStore:
    """Access to one store file (created on first use).

    ``readonly=True`` opens an existing store for reading only (SQLite's ``mode=ro``), which
    works on a read-only file in a read-only folder too; writing through it raises
    :class:`StoreAccessError`. Every open refuses a damaged store and one made by a newer clineval.
    """

    def __init__(self, path: str | Path = DEFAULT_STORE, *, readonly: bool = False):
        self.path = Path(path)
        self.readonly = readonly
        memory = str(path) == ":memory:"
        if not memory and not readonly:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreAccessError(
                    f"{path}: cannot create the folder {self.path.parent} for the run store "
                    f"({(exc.strerror or str(exc)).lower()}); run from a folder you can write, "
                    "or pass --store PATH (or set CLINEVAL_STORE)"
                ) from None
        self._lock = _Guard(self.path, readonly and not memory)
        self._reserve: Path | None = None
        try:
            if readonly and not memory:
                self._conn = self._open_readonly()
            else:
                self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
                self._conn.execute("PRAGMA busy_timeout=10000")
                self._check_version()
                if not memory:
                    _quick_check(self._conn, self.path)
                    self._conn.execute("PRAGMA journal_mode=WAL")
                    if os.environ.get(_TEST_MAX_PAGES_ENV):
                        self._conn.execute(f"PRAGMA max_page_count={int(os.environ[_TEST_MAX_PAGES_ENV])}")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.execute("PRAGMA foreign_keys=ON")
                self._conn.executescript(_SCHEMA)
                self._conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
                ensure_search_index(self._conn)
        except StoreError:
            self._close_quietly()
            raise
        except sqlite3.Error as exc:
            self._close_quietly()
            error = store_error(exc, self.path, readonly=readonly)
            raise error or StoreError(f"{path}: not a usable clineval store ({exc})") from None

    def _close_quietly(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _open_readonly(self) -> sqlite3.Connection:
        """A read-only connection that also works in a read-only folder."""
        if not self.path.exists():
            raise StoreError(f"no run store at {self.path}")
        uri = self.path.resolve().as_uri()
        self._conn = sqlite3.connect(
            f"{uri}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
        )
        try:
            self._conn.execute("PRAGMA busy_timeout=10000")
            self._check_version()
        except sqlite3.OperationalError as exc:
            # In a read-only folder SQLite cannot create the -shm file a WAL store needs. With no
            # write-ahead log left over (nothing uncommitted to the main file), reading the file
            # as immutable is exact; with one, its content would be missed, so say so instead.
            if _primary_code(exc) not in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
                raise
            wal = Path(f"{self.path}-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise StoreAccessError(
                    f"{self.path}: cannot read the run store ({exc}): its write-ahead log {wal.name} "
                    f"holds data that SQLite reads only with a {self.path.name}-shm file, which is "
                    f"missing or unusable and cannot be made in {self.path.parent} (permission denied "
                    "or read-only); open the store once where its folder can be written"
                ) from None
            self._conn.close()
            self._conn = sqlite3.connect(
                f"{uri}?mode=ro&immutable=1", uri=True, check_same_thread=False, isolation_level=None
            )
            self._check_version()
        _quick_check(self._conn, self.path)
        return self._conn

    def _check_version(self) -> None:
        """Refuse a store made by a newer clineval; bring an older one up to :data:`SCHEMA_VERSION`."""
        conn = self._conn
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" not in tables:
            if self.readonly and "runs" not in tables:
                raise StoreError(f"{self.path}: not a clineval run store (it has no clineval tables)")
            return  # a new store: the schema is created next
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            return
        try:
            version = int(row[0])
        except ValueError:
            raise StoreDamagedError(
                _damaged(self.path, f"schema_version {row[0]!r} is not a number")
            ) from None
        if version > SCHEMA_VERSION:
            raise StoreVersionError(
                f"{self.path}: this run store was made by a newer clineval (store schema version {version}; "
                f"this clineval knows versions up to {SCHEMA_VERSION}); upgrade clineval "
                "(pip install -U clineval) to use it"
            )
        if version < SCHEMA_VERSION:
            steps = range(version, SCHEMA_VERSION)
            if any(step not in _UPGRADES for step in steps):
                raise StoreVersionError(
                    f"{self.path}: unknown store schema version {version} "
                    f"(this clineval reads versions 1 to {SCHEMA_VERSION})"
                )
            if self.readonly:
                raise StoreVersionError(
                    f"{self.path}: this run store has an older layout (schema version {version}); "
                    "open it once for writing (e.g. 'clineval run ... --store PATH') to upgrade it"
                )
            script = "".join(_UPGRADES[step] for step in steps)
            conn.executescript(
                f"BEGIN IMMEDIATE; {script}; UPDATE meta SET value = '{SCHEMA_VERSION}'"
                " WHERE key = 'schema_version'; COMMIT;"
            )

    def close(self) -> None:
        with self._lock:
            self._conn.close()
        self._release_reserve()

    def _make_reserve(self) -> None:
        """Set a little disk space aside (a ``-reserve`` file beside the store) for the duration
        of a run, so that a run that fills the disk can still be marked as stopped."""
        if self.readonly or str(self.path) == ":memory:" or self._reserve is not None:
            return
        reserve = Path(f"{self.path}-reserve")
        try:
            with reserve.open("wb") as handle:
                handle.write(bytes(_RESERVE_BYTES))
        except OSError:
            with contextlib.suppress(OSError):
                reserve.unlink()
            return
        self._reserve = reserve

    def _release_reserve(self) -> bool:
        reserve, self._reserve = self._reserve, None
        if reserve is None:
            return False
        with contextlib.suppress(OSError):
            reserve.unlink()
        return True

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # runs -------------------------------------------------------------------------

    def create_run(self, record: RunRecord, cases: Iterable[Case]) -> None:
        """Insert a run and its cases in one transaction (``cases`` is read once, in order;
        an exception it raises, e.g. a streamed file that changed, rolls the run back)."""
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.execute(
                    "INSERT INTO runs (id, created_at, status, record) VALUES (?, ?, ?, ?)",
                    (record.id, record.created_at, record.status, redact_json(record.model_dump_json())),
                )
                self._conn.executemany(  # a generator: a streamed dataset is never held in memory
                    "INSERT INTO cases (run_id, idx, case_id, data) VALUES (?, ?, ?, ?)",
                    ((record.id, i, c.id, c.model_dump_json(exclude_none=True)) for i, c in enumerate(cases)),
                )
                self._conn.execute("COMMIT")
            except BaseException:
                # SQLite may already have rolled back (e.g. on a full disk): a second ROLLBACK
                # would hide the real error behind "no transaction is active".
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def update_run(self, record: RunRecord) -> None:
        with self._lock:
            try:
                self._update_run(record)
            except sqlite3.OperationalError as exc:
                # A full disk: give back the space set aside for this and try once more.
                if _primary_code(exc) != sqlite3.SQLITE_FULL or not self._release_reserve():
                    raise
                self._update_run(record)

    def _update_run(self, record: RunRecord) -> None:
        self._conn.execute(
            "UPDATE runs SET status = ?, record = ? WHERE id = ?",
            (record.status, redact_json(record.model_dump_json()), record.id),
        )

    def set_status(self, run_id: str, status: RunStatus, error: str | None = None) -> RunRecord:
        record = self.get_run(run_id)
        record.status = status
        record.error = error
        if status != "running":
            record.finished_at = time.time()
        record.usage = self.usage(run_id)
        self.update_run(record)
        return record

    def get_run(self, ref: str) -> RunRecord:
        """A run by id, ``latest`` or ``latest~N``, name, or unique id prefix (in that order).

        The one way every command finds a run. A name that several runs have is an error
        listing them with their ids (name runs apart with ``--name``, or give an id)."""
        with self._lock:
            if ref == "latest" or ref.startswith("latest~"):
                back = int(ref.partition("~")[2] or 0)
                row = self._conn.execute(
                    "SELECT record FROM runs ORDER BY created_at DESC LIMIT 1 OFFSET ?", (back,)
                ).fetchone()
                if row is None:
                    raise StoreError(f"no run {ref!r} in {self.path}")
                return RunRecord.model_validate_json(row[0])
            rows = self._conn.execute(
                "SELECT id, record FROM runs WHERE id = ? OR id LIKE ? ESCAPE '\\' ORDER BY created_at",
                (ref, ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"),
            ).fetchall()
        exact = [r for r in rows if r[0] == ref]
        if exact:
            return RunRecord.model_validate_json(exact[0][1])
        with self._lock:
            named = self._conn.execute(
                "SELECT id, created_at FROM runs WHERE json_extract(record, '$.name') = ? "
                "ORDER BY created_at",
                (ref,),
            ).fetchall()
        if len(named) == 1:
            return self.get_run(str(named[0][0]))
        if named:
            listed = ", ".join(
                f"{run_id} ({time.strftime('%Y-%m-%d %H:%M', time.localtime(created))})"
                for run_id, created in named[-10:]
            )
            raise StoreError(
                f"{len(named)} runs are named {ref!r}: {listed}; give a run id (or a unique prefix of one)"
            )
        if len(rows) == 1:
            return RunRecord.model_validate_json(rows[0][1])
        if not rows:
            raise StoreError(f"no run {ref!r} in {self.path} (see 'clineval runs')")
        raise StoreError(f"{ref!r} matches {len(rows)} runs: " + ", ".join(r[0] for r in rows[:10]))

    def list_runs(self, limit: int | None = None) -> list[RunRecord]:
        query = "SELECT record FROM runs ORDER BY created_at DESC"
        params: tuple[int, ...] = ()
        if limit is not None:
            query += " LIMIT ?"
            params = (limit,)
        with self._lock:
            rows = self._conn.execute(query, params).fetchall()
        return [RunRecord.model_validate_json(r[0]) for r in rows]

    # cases and outputs --------------------------------------------------------------

    def load_cases(self, run_id: str) -> list[Case]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT data FROM cases WHERE run_id = ? ORDER BY idx", (run_id,)
            ).fetchall()
        return [Case.model_validate_json(r[0]) for r in rows]

    def save_output(self, run_id: str, case_id: str, output: AgentOutput) -> None:
        with self._lock:
            data = redact_json(output.model_dump_json())
            self._conn.execute(_INSERT_OUTPUT, (run_id, case_id, data, time.time()))

    def load_outputs(self, run_id: str) -> dict[str, AgentOutput]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT case_id, data FROM outputs WHERE run_id = ?", (run_id,)
            ).fetchall()
        return {r[0]: AgentOutput.model_validate_json(redact_json(r[1])) for r in rows}

    def merged_cases(self, run_id: str) -> list[Case]:
        """The run's cases with the agent's outputs applied, in dataset order."""
        outputs = self.load_outputs(run_id)
        return [outputs[c.id].apply_to(c) if c.id in outputs else c for c in self.load_cases(run_id)]

    # results -----------------------------------------------------------------------

    def save_result(self, result: ResultRecord) -> None:
        with self._lock:
            self._conn.execute(_INSERT_RESULT, _result_row(result))

    def write_batch(
        self,
        outputs: Sequence[tuple[str, str, AgentOutput]],
        results: Sequence[ResultRecord],
        trials: Sequence[TrialOutput | TrialResult] = (),
    ) -> None:
        """Commit agent outputs, then results, in one transaction (trial outputs and results
        with them: a trial 1 output is also written as the case's output)."""
        now = time.time()
        output_rows = [(run, case, redact_json(out.model_dump_json()), now) for run, case, out in outputs]
        trial_outputs = [
            (t, redact_json(t.output.model_dump_json())) for t in trials if isinstance(t, TrialOutput)
        ]
        output_rows += [(t.run_id, t.case_id, data, now) for t, data in trial_outputs if t.trial == 1]
        trial_rows = [(t.run_id, t.case_id, t.trial, data, now) for t, data in trial_outputs]
        trial_result_rows = [_trial_result_row(t) for t in trials if isinstance(t, TrialResult)]
        result_rows = [_result_row(r) for r in results]
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany(_INSERT_OUTPUT, output_rows)
                self._conn.executemany(_INSERT_TRIAL_OUTPUT, trial_rows)
                self._conn.executemany(_INSERT_TRIAL_RESULT, trial_result_rows)
                self._conn.executemany(_INSERT_RESULT, result_rows)
                self._conn.execute("COMMIT")
            except BaseException:
                # SQLite may already have rolled back (e.g. on a full disk): a second ROLLBACK
                # would hide the real error behind "no transaction is active".
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def background_writer(self) -> BackgroundWriter:
        self._make_reserve()
        return BackgroundWriter(self)

    def load_results(self, run_id: str) -> list[ResultRecord]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT r.case_id, r.metric, r.score, r.usage, r.duration_s, r.created_at"
                " FROM results r LEFT JOIN cases c ON c.run_id = r.run_id AND c.case_id = r.case_id"
                " WHERE r.run_id = ? ORDER BY c.idx, r.metric",
                (run_id,),
            ).fetchall()
        return [_result_record(run_id, r) for r in rows]

    # streaming a run (bounded memory at any number of cases) --------------------------

    #: Cases read per query when a run's cases or results are streamed.
    stream_chunk: int = 500

    def count_cases(self, run_id: str) -> int:
        with self._lock:
            return int(
                self._conn.execute("SELECT COUNT(*) FROM cases WHERE run_id = ?", (run_id,)).fetchone()[0]
            )

    def count_outputs(self, run_id: str) -> int:
        with self._lock:
            row = self._conn.execute("SELECT COUNT(*) FROM outputs WHERE run_id = ?", (run_id,)).fetchone()
        return int(row[0])

    def iter_case_rows(self, run_id: str) -> Iterator[list[tuple[str, str]]]:
        """The run's cases as ``(case_id, case JSON)`` in dataset order, :attr:`stream_chunk` at a time.

        Each chunk is one short query on the row ids (:meth:`create_run` is the only writer of
        cases and inserts a run's cases in order in one transaction, so row-id order is dataset
        order), and the store's lock is not held
        between chunks: the background writer commits while a run streams its cases.
        """
        with self._lock:
            first = self._conn.execute("SELECT MIN(rowid) FROM cases WHERE run_id = ?", (run_id,)).fetchone()[
                0
            ]
        if first is None:
            return
        last_rowid = int(first) - 1
        while True:
            with self._lock:
                rows = self._conn.execute(
                    # +run_id: scan the row ids, not the (run_id, case_id) index
                    "SELECT rowid, case_id, data FROM cases WHERE rowid > ? AND +run_id = ?"
                    " ORDER BY rowid LIMIT ?",
                    (last_rowid, run_id, self.stream_chunk),
                ).fetchall()
            if not rows:
                return
            last_rowid = rows[-1][0]
            yield [(r[1], r[2]) for r in rows]

    def iter_cases(self, run_id: str, *, merged: bool = False) -> Iterator[list[Case]]:
        """The run's cases in dataset order, in chunks; with ``merged``, with the agent's outputs
        applied (as :meth:`merged_cases`, without holding them all)."""
        for rows in self.iter_case_rows(run_id):
            cases = [Case.model_validate_json(data) for _, data in rows]
            if merged:
                outputs = self.outputs_for(run_id, [c.id for c in cases])
                cases = [outputs[c.id].apply_to(c) if c.id in outputs else c for c in cases]
            yield cases

    def cases_for(self, run_id: str, case_ids: Sequence[str], *, merged: bool = False) -> dict[str, Case]:
        """These cases of the run (those it has) by id; with ``merged``, with the agent's
        outputs applied."""
        cases: dict[str, Case] = {}
        for part in _chunked(list(case_ids), _MAX_PARAMS):
            marks = ",".join("?" * len(part))
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT case_id, data FROM cases WHERE run_id = ? AND case_id IN ({marks})",
                    (run_id, *part),
                ).fetchall()
            cases.update((r[0], Case.model_validate_json(r[1])) for r in rows)
        if merged:
            outputs = self.outputs_for(run_id, list(cases))
            cases = {i: outputs[i].apply_to(c) if i in outputs else c for i, c in cases.items()}
        return cases

    def outputs_for(self, run_id: str, case_ids: Sequence[str]) -> dict[str, AgentOutput]:
        """The stored agent outputs of these cases (those that have one)."""
        out: dict[str, AgentOutput] = {}
        for part in _chunked(list(case_ids), _MAX_PARAMS):
            marks = ",".join("?" * len(part))
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT case_id, data FROM outputs WHERE run_id = ? AND case_id IN ({marks})",
                    (run_id, *part),
                ).fetchall()
            out.update((r[0], AgentOutput.model_validate_json(redact_json(r[1]))) for r in rows)
        return out

    def done_for(self, run_id: str, case_ids: Sequence[str]) -> set[tuple[str, str]]:
        """The (case, metric) pairs of these cases that have a result."""
        done: set[tuple[str, str]] = set()
        for part in _chunked(list(case_ids), _MAX_PARAMS):
            marks = ",".join("?" * len(part))
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT case_id, metric FROM results WHERE run_id = ? AND case_id IN ({marks})",
                    (run_id, *part),
                ).fetchall()
            done.update((r[0], r[1]) for r in rows)
        return done

    def expected_total(self, run_id: str) -> int:
        """The number of results the run should have, as recorded by :meth:`begin_run` (0 if none)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT total FROM expected_results WHERE run_id = ?", (run_id,)
            ).fetchone()
        return int(row[0]) if row else 0

    def count_results_of(self, run_id: str, metrics: Sequence[str]) -> int:
        """How many results the run has for these metrics."""
        if not metrics:
            return 0
        marks = ",".join("?" * len(metrics))
        with self._lock:
            row = self._conn.execute(
                f"SELECT COUNT(*) FROM results WHERE run_id = ? AND metric IN ({marks})", (run_id, *metrics)
            ).fetchone()
        return int(row[0])

    def iter_result_rows(self, run_id: str, columns: str) -> Iterator[tuple[Any, ...]]:
        """Rows of the run's results, selecting ``columns`` (SQL over the ``results`` table),
        in the order of :meth:`load_results` (dataset order, then metric), a chunk of cases at
        a time. Results of a case id the run does not have come first, as there."""
        with self._lock:
            orphans = self._conn.execute(
                f"SELECT {columns} FROM results WHERE run_id = ? AND NOT EXISTS (SELECT 1 FROM cases c"
                " WHERE c.run_id = results.run_id AND c.case_id = results.case_id) ORDER BY metric",
                (run_id,),
            ).fetchall()
        yield from orphans
        for rows in self.iter_case_rows(run_id):
            yield from self.result_rows_for(run_id, [case_id for case_id, _ in rows], columns)

    def result_rows_for(self, run_id: str, case_ids: Sequence[str], columns: str) -> list[tuple[Any, ...]]:
        """Rows (``columns`` of the ``results`` table) of these cases' results, in the order of
        ``case_ids`` and then metric."""
        position = {case_id: i for i, case_id in enumerate(case_ids)}
        found: list[tuple[Any, ...]] = []
        for part in _chunked(list(case_ids), _MAX_PARAMS):
            marks = ",".join("?" * len(part))
            with self._lock:
                found += self._conn.execute(
                    f"SELECT case_id, metric, {columns} FROM results"
                    f" WHERE run_id = ? AND case_id IN ({marks})",
                    (run_id, *part),
                ).fetchall()
        found.sort(key=lambda r: (position[r[0]], r[1]))
        return [row[2:] for row in found]

    def results_for(self, run_id: str, case_ids: Sequence[str]) -> list[ResultRecord]:
        """These cases' results (as :meth:`load_results` gives them), in the order of ``case_ids``."""
        rows = self.result_rows_for(run_id, case_ids, _RESULT_COLUMNS)
        return [_result_record(run_id, r) for r in rows]

    def iter_results(self, run_id: str) -> Iterator[ResultRecord]:
        """The run's results as :meth:`load_results` gives them, one at a time."""
        for r in self.iter_result_rows(run_id, _RESULT_COLUMNS):
            yield _result_record(run_id, r)

    def done_pairs(self, run_id: str) -> set[tuple[str, str]]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT case_id, metric FROM results WHERE run_id = ?", (run_id,)
            ).fetchall()
        return {(r[0], r[1]) for r in rows}

    def delete_error_results(self, run_id: str, metrics: Iterable[str] | None = None) -> int:
        """Forget error results so that a resumed run scores those cases again.

        A resumed run does this inside :meth:`begin_run`, in one transaction with marking
        the run ``running``, so that a kill in between cannot leave a ``completed`` run
        with results missing."""
        with self._lock:
            return self._delete_error_results(run_id, metrics)

    def _delete_error_results(self, run_id: str, metrics: Iterable[str] | None = None) -> int:
        names = None if metrics is None else list(metrics)
        # Repeated trials: the unscored trials, and the case results combined from them.
        which = "" if names is None else f" AND metric IN ({','.join('?' * len(names))})"
        erred = self._conn.execute(
            "SELECT DISTINCT case_id, metric FROM trial_results"
            f" WHERE run_id = ? AND status = 'error'{which}",
            (run_id, *(names or ())),
        ).fetchall()
        for case_id, metric in erred:
            self._conn.execute(
                "DELETE FROM results WHERE run_id = ? AND case_id = ? AND metric = ?",
                (run_id, case_id, metric),
            )
        self._conn.execute(
            f"DELETE FROM trial_results WHERE run_id = ? AND status = 'error'{which}",
            (run_id, *(names or ())),
        )
        metrics = names
        if metrics is None:
            cur = self._conn.execute("DELETE FROM results WHERE run_id = ? AND status = 'error'", (run_id,))
        else:
            names = list(metrics)
            marks = ",".join("?" * len(names))
            cur = self._conn.execute(
                f"DELETE FROM results WHERE run_id = ? AND status = 'error' AND metric IN ({marks})",
                (run_id, *names),
            )
        return cur.rowcount

    def delete_failed_outputs(self, run_id: str) -> int:
        """Forget the outputs of failed agent calls, and their results, so that a resumed run
        calls the agent on those cases again (see :meth:`begin_run`)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                deleted = self._delete_failed_outputs(run_id)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        return deleted

    def _delete_failed_outputs(self, run_id: str) -> int:
        rows = self._conn.execute(
            "SELECT case_id FROM outputs WHERE run_id = ? AND json_extract(data, '$.agent_run.failed') = 1",
            (run_id,),
        ).fetchall()
        for (case_id,) in rows:
            self._conn.execute("DELETE FROM results WHERE run_id = ? AND case_id = ?", (run_id, case_id))
            self._conn.execute("DELETE FROM outputs WHERE run_id = ? AND case_id = ?", (run_id, case_id))
        # Repeated trials: the failed trials, their results and the case results combined from them.
        trials = self._conn.execute(
            "SELECT case_id, trial FROM trial_outputs WHERE run_id = ?"
            " AND json_extract(data, '$.agent_run.failed') = 1",
            (run_id,),
        ).fetchall()
        for case_id, trial in trials:
            self._conn.execute("DELETE FROM results WHERE run_id = ? AND case_id = ?", (run_id, case_id))
            if trial == 1:
                self._conn.execute("DELETE FROM outputs WHERE run_id = ? AND case_id = ?", (run_id, case_id))
            for table in ("trial_results", "trial_outputs"):
                self._conn.execute(
                    f"DELETE FROM {table} WHERE run_id = ? AND case_id = ? AND trial = ?",
                    (run_id, case_id, trial),
                )
        return len(rows) + sum(1 for _, trial in trials if trial != 1)  # trial 1 is the case's output

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``) under the store's lock:
        committed when the block ends, rolled back if it raises. SQLite's reports of a full
        disk, a damaged or read-only file leave it as :class:`StoreError`."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def has_table(self, name: str) -> bool:
        """Whether the store has this table (a store written by an older clineval, opened
        read-only, may lack the newer ones)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
            ).fetchone()
        return row is not None

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read query (the viewer's paginated pages); SQLite errors as :class:`StoreError`."""
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    def count_results(self, run_id: str) -> int:
        with self._lock:
            return int(
                self._conn.execute("SELECT COUNT(*) FROM results WHERE run_id = ?", (run_id,)).fetchone()[0]
            )

    def usage(self, run_id: str) -> Usage:
        """Judge usage summed over the run's results (computed in SQLite)."""
        fields = ("prompt_tokens", "completion_tokens", "calls", "cached", "reasks")
        sums = ", ".join(f"COALESCE(SUM(json_extract(usage, '$.{f}')), 0)" for f in fields)
        with self._lock:
            row = self._conn.execute(f"SELECT {sums} FROM results WHERE run_id = ?", (run_id,)).fetchone()
        return Usage(**{f: int(v) for f, v in zip(fields, row, strict=True)})

    # the run lock, the start of a run, completeness ---------------------------------

    #: Seconds between two heartbeats of a run lock held by this process.
    lease_heartbeat_s: float = 5.0
    #: A lock whose last heartbeat is older than this is taken over: its process is presumed
    #: gone (a lock of a process that is gone from this host is taken over at once).
    lease_stale_s: float = 60.0

    def acquire_lease(self, run_id: str) -> RunLease:
        """Take the run's lock, or raise :class:`RunLockedError` naming the live process holding it.

        The check and the take are one ``BEGIN IMMEDIATE`` transaction, so of two processes
        asking at once exactly one gets the lock. A lock left by a process that is gone is
        taken over: on this host when its pid no longer runs, from another host when its
        heartbeat is older than :attr:`lease_stale_s`. The returned :class:`RunLease` keeps
        the lock fresh with a heartbeat thread until :meth:`RunLease.release`.
        """
        token = uuid.uuid4().hex
        now = time.time()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                holder = self._lease_row(run_id)
                if holder is not None and not holder.stale(self.lease_stale_s, now):
                    raise RunLockedError(holder.refusal(self.lease_stale_s, now))
                self._conn.execute(
                    "INSERT OR REPLACE INTO leases (run_id, token, pid, host, started_at, heartbeat_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (run_id, token, os.getpid(), socket.gethostname(), now, now),
                )
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        return RunLease(self, run_id, token)

    def lease_holder(self, run_id: str) -> LeaseInfo | None:
        """The live process holding the run's lock, or ``None`` (no lock, or a stale one)."""
        with self._lock:
            holder = self._lease_row(run_id)
        return holder if holder is not None and not holder.stale(self.lease_stale_s, time.time()) else None

    def is_stopped(self, record: RunRecord) -> bool:
        """Marked ``running``, but no live process holds its lock (killed, or its machine shut
        down): ``clineval runs`` and the viewer show it as *stopped*."""
        return record.status == "running" and self.lease_holder(record.id) is None

    def _lease_row(self, run_id: str) -> LeaseInfo | None:
        try:
            row = self._conn.execute(
                "SELECT run_id, token, pid, host, started_at, heartbeat_at FROM leases WHERE run_id = ?",
                (run_id,),
            ).fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # a store written before run locks, opened read-only
                return None
            raise
        return None if row is None else LeaseInfo(*row)

    def _beat(self, run_id: str, token: str) -> bool:
        """Refresh the lock's heartbeat; False when the lock is no longer this holder's."""
        with self._lock:
            cur = self._conn.execute(
                "UPDATE leases SET heartbeat_at = ? WHERE run_id = ? AND token = ?",
                (time.time(), run_id, token),
            )
        return cur.rowcount > 0

    def _unlease(self, run_id: str, token: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM leases WHERE run_id = ? AND token = ?", (run_id, token))

    def begin_run(
        self,
        record: RunRecord,
        lease: RunLease,
        *,
        expected: dict[str, int],
        delete_failed_outputs: bool = False,
        delete_error_results: bool = False,
    ) -> None:
        """Start (or restart) a run, in one transaction: check the lock is still ``lease``'s,
        forget failed work when asked (``--retry-errors``), mark the run ``running`` and
        record ``expected``, the number of (case, metric) results each metric should have.

        One transaction: a kill at any moment leaves either the run as it was, or the run
        ``running`` with the failed work forgotten; never a ``completed`` run with results
        missing.
        """
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                holder = self._lease_row(record.id)
                if holder is None or holder.token != lease.token:
                    raise RunLockedError(
                        f"run {record.id}: its lock was taken over by another process"
                        + (f" (pid {holder.pid} on {holder.host})" if holder else "")
                        + "; this one stops"
                    )
                if delete_failed_outputs:
                    self._delete_failed_outputs(record.id)
                if delete_error_results:
                    self._delete_error_results(record.id)
                record.status = "running"
                record.error = None
                self._update_run(record)
                self._conn.execute(
                    "INSERT OR REPLACE INTO expected_results (run_id, total, by_metric) VALUES (?, ?, ?)",
                    (record.id, sum(expected.values()), json.dumps(expected)),
                )
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def completeness(self, run_ref: str) -> RunCompleteness:
        """How complete a stored run is: its status, whether a live process is running it,
        and the (case, metric) results it has against those it should have."""
        record = self.get_run(run_ref)
        run_id = record.id
        with self._lock:
            try:
                row = self._conn.execute(
                    "SELECT by_metric FROM expected_results WHERE run_id = ?", (run_id,)
                ).fetchone()
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):
                    raise
                row = None
            counts = dict(
                self._conn.execute(
                    "SELECT metric, COUNT(*) FROM results WHERE run_id = ? GROUP BY metric", (run_id,)
                ).fetchall()
            )
            row_cases = self._conn.execute(
                "SELECT COUNT(*) FROM cases WHERE run_id = ?", (run_id,)
            ).fetchone()
            n_cases = int(row_cases[0])
            expected: dict[str, int] | None = json.loads(row[0]) if row else None
            if expected is None and record.config.get("kind") != "suite" and "calibration" not in record.tags:
                # Stored by a clineval that did not record it: every metric scores every case,
                # except in suites and calibration runs (judged by their status only).
                expected = dict.fromkeys(record.metrics, n_cases)
            complete_cases: int | None = None
            if expected is not None and expected and all(n == n_cases for n in expected.values()):
                names = list(expected)
                marks = ",".join("?" * len(names))
                complete_cases = int(
                    self._conn.execute(
                        "SELECT COUNT(*) FROM (SELECT case_id FROM results"
                        f" WHERE run_id = ? AND metric IN ({marks}) GROUP BY case_id HAVING COUNT(*) = ?)",
                        (run_id, *names, len(names)),
                    ).fetchone()[0]
                )
        holder = self.lease_holder(run_id)
        metrics = list(expected) if expected is not None else record.metrics
        return RunCompleteness(
            run_id=run_id,
            status=record.status,
            error=record.error,
            n_cases=n_cases,
            expected=sum(expected.values()) if expected is not None else None,
            present=sum(counts.get(m, 0) for m in metrics),
            complete_cases=complete_cases,
            missing={m: n - counts.get(m, 0) for m, n in (expected or {}).items() if n > counts.get(m, 0)},
            holder=holder,
        )


_STOP = object()


class BackgroundWriter:
    """Commits outputs and results on a thread, in order, as soon as they arrive."""

    def __init__(self, store: RunStore):
        self._store = store
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="clineval-store-writer", daemon=True)
        self._thread.start()

    def output(self, run_id: str, case_id: str, output: AgentOutput) -> None:
        self._check()
        self._queue.put((run_id, case_id, output))

    def result(self, result: ResultRecord) -> None:
        self._check()
        self._queue.put(result)

    def trial(self, item: TrialOutput | TrialResult) -> None:
        """One trial's output or result (see :mod:`clineval.results.trials`)."""
        self._check()
        self._queue.put(item)

    def _check(self) -> None:
        error = self._error
        if error is None:
            return
        if isinstance(error, StoreError):  # a full disk, a damaged file ...: already a clear message
            raise type(error)(str(error)) from error
        raise StoreError(f"writing to the run store failed: {error}") from error

    def _run(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            time.sleep(0.01)  # let a batch gather: fewer transactions and thread switches
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if batch[-1] is _STOP or _STOP in batch:
                stop = True
                batch = [item for item in batch if item is not _STOP]
            outputs = [item for item in batch if isinstance(item, tuple)]
            results = [item for item in batch if isinstance(item, ResultRecord)]
            trials = [item for item in batch if isinstance(item, TrialOutput | TrialResult)]
            if not (outputs or results or trials) or self._error is not None:
                continue
            try:
                self._store.write_batch(outputs, results, trials)
            except BaseException as exc:  # reported to the runner by _check() / close()
                self._error = exc

    def close(self) -> None:
        """Commit everything queued, stop the thread, and raise if a write failed (once: closing
        again, e.g. in a ``finally`` after the error was handled, does not raise it again)."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()
        self._store._release_reserve()  # the run's writes are done (on a full disk: room to mark it)
        if not self._closed:
            self._closed = True
            self._check()


# --------------------------------------------------------------------------- run locks


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (a zombie, killed but not yet reaped, does not)."""
    if os.name == "nt":  # os.kill(pid, 0) would terminate it there: rely on the heartbeat
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process: it exists
        return True
    with contextlib.suppress(OSError, IndexError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rpartition(")")[2].split()[0] == "Z":
            return False
    return True


def _clock(when: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when))


@dataclass(frozen=True)
class LeaseInfo:
    """A run's lock as stored: who holds it, since when, and its last heartbeat."""

    run_id: str
    token: str
    pid: int
    host: str
    started_at: float
    heartbeat_at: float

    def stale(self, stale_s: float, now: float) -> bool:
        """Presumed gone: a dead pid on this host, or no heartbeat for ``stale_s`` seconds."""
        if now - self.heartbeat_at > stale_s:
            return True
        return self.host == socket.gethostname() and not _pid_alive(self.pid)

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host} since {_clock(self.started_at)}"

    def refusal(self, stale_s: float, now: float) -> str:
        age = max(0.0, now - self.heartbeat_at)
        head = f"run {self.run_id} is being run by {self.describe()} (last heartbeat {age:.0f} s ago)"
        if self.host == socket.gethostname():
            return f"{head}; wait for it to finish, or stop it (kill {self.pid}) and run this again"
        return (
            f"{head}; wait for it to finish or, if that process is gone, run this again in "
            f"{max(1.0, stale_s - age):.0f} s (a lock whose heartbeat is older than {stale_s:.0f} s "
            "is taken over)"
        )


class RunLease:
    """The lock on one run held by this process; a thread refreshes its heartbeat until released."""

    def __init__(self, store: RunStore, run_id: str, token: str):
        self.store = store
        self.run_id = run_id
        self.token = token
        self.lost = False
        """True once the heartbeat found the lock taken over (this process was presumed gone)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._heartbeat, name="clineval-run-lock", daemon=True)
        self._thread.start()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.store.lease_heartbeat_s):
            try:
                if not self.store._beat(self.run_id, self.token):
                    self.lost = True
                    return
            except sqlite3.ProgrammingError:
                return  # the store was closed
            except (StoreError, sqlite3.Error):
                continue  # a busy or full store: the next beat tries again

    def release(self) -> None:
        """Stop the heartbeat and give the lock up (a no-op the second time)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(timeout=5)
        with contextlib.suppress(StoreError, sqlite3.Error):
            self.store._unlease(self.run_id, self.token)

    def __enter__(self) -> RunLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass(frozen=True)
class RunCompleteness:
    """A stored run's status against its results (see :meth:`RunStore.completeness`)."""

    run_id: str
    status: RunStatus
    error: str | None
    n_cases: int
    expected: int | None
    """(case, metric) results the run should have; ``None`` for runs stored before clineval recorded it."""
    present: int
    complete_cases: int | None
    """Cases with every result (``None`` when some metric scores only some cases)."""
    missing: dict[str, int] = field(default_factory=dict)
    """Results missing, by metric."""
    holder: LeaseInfo | None = None
    """The live process running it now, if any."""

    @property
    def missing_results(self) -> int:
        return max(0, (self.expected or 0) - self.present)

    @property
    def complete(self) -> bool:
        return self.status == "completed" and self.holder is None and self.missing_results == 0

    def progress(self) -> str:
        if self.expected is None:
            return f"{self.present} results (the number expected was not recorded)"
        if self.complete_cases is not None:
            return (
                f"{self.complete_cases} of {self.n_cases} cases scored "
                f"({self.present} of {self.expected} results)"
            )
        return f"{self.present} of {self.expected} results"

    def describe(self) -> str:
        """One line: ``run X is interrupted: 30 of 120 cases scored (150 of 600 results)``."""
        where = f"run {self.run_id}"
        if self.holder is not None:
            return f"{where} is running ({self.holder.describe()}): {self.progress()} so far"
        if self.status == "running":
            return (
                f"{where} was interrupted (marked running, but no process is running it): {self.progress()}"
            )
        if self.status == "failed":
            reason = (self.error or "").splitlines()[0][:200] if self.error else "no reason recorded"
            return f"{where} failed ({reason}): {self.progress()}"
        if self.status == "completed":
            if self.complete_cases is not None:
                return (
                    f"{where} is marked completed but has {self.complete_cases} of {self.n_cases} "
                    "cases scored "
                    f"({self.present} of {self.expected} results)"
                )
            return f"{where} is marked completed but has {self.progress()}"
        return f"{where} is {self.status}: {self.progress()}"
