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

import queue
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from clineval.errors import StoreError
from clineval.judges.base import Usage
from clineval.model import AgentOutput, Case, ResultRecord, RunRecord, RunStatus, Score

DEFAULT_STORE = ".clineval/clineval.db"
SCHEMA_VERSION = 1

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
"""


_INSERT_OUTPUT = "INSERT INTO outputs (run_id, case_id, data, created_at) VALUES (?, ?, ?, ?)"
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
        score.model_dump_json(exclude={"status"}),
        result.usage.model_dump_json(),
        result.duration_s,
        result.created_at or time.time(),
    )


class RunStore:
    """Access to one store file (created on first use)."""

    def __init__(self, path: str | Path = DEFAULT_STORE):
        self.path = Path(path)
        memory = str(path) == ":memory:"
        if not memory:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA busy_timeout=10000")
            if not memory:
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.executescript(_SCHEMA)
            self._conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a usable clineval store ({exc})") from None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # runs -------------------------------------------------------------------------

    def create_run(self, record: RunRecord, cases: Sequence[Case]) -> None:
        """Insert a run and its cases in one transaction."""
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.execute(
                    "INSERT INTO runs (id, created_at, status, record) VALUES (?, ?, ?, ?)",
                    (record.id, record.created_at, record.status, record.model_dump_json()),
                )
                self._conn.executemany(
                    "INSERT INTO cases (run_id, idx, case_id, data) VALUES (?, ?, ?, ?)",
                    [(record.id, i, c.id, c.model_dump_json(exclude_none=True)) for i, c in enumerate(cases)],
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def update_run(self, record: RunRecord) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE runs SET status = ?, record = ? WHERE id = ?",
                (record.status, record.model_dump_json(), record.id),
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
        """A run by id, unique id prefix, ``latest`` or ``latest~N``."""
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
            self._conn.execute(_INSERT_OUTPUT, (run_id, case_id, output.model_dump_json(), time.time()))

    def load_outputs(self, run_id: str) -> dict[str, AgentOutput]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT case_id, data FROM outputs WHERE run_id = ?", (run_id,)
            ).fetchall()
        return {r[0]: AgentOutput.model_validate_json(r[1]) for r in rows}

    def merged_cases(self, run_id: str) -> list[Case]:
        """The run's cases with the agent's outputs applied, in dataset order."""
        outputs = self.load_outputs(run_id)
        return [outputs[c.id].apply_to(c) if c.id in outputs else c for c in self.load_cases(run_id)]

    # results -----------------------------------------------------------------------

    def save_result(self, result: ResultRecord) -> None:
        with self._lock:
            self._conn.execute(_INSERT_RESULT, _result_row(result))

    def write_batch(
        self, outputs: Sequence[tuple[str, str, AgentOutput]], results: Sequence[ResultRecord]
    ) -> None:
        """Commit agent outputs, then results, in one transaction."""
        output_rows = [(run, case, out.model_dump_json(), time.time()) for run, case, out in outputs]
        result_rows = [_result_row(r) for r in results]
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany(_INSERT_OUTPUT, output_rows)
                self._conn.executemany(_INSERT_RESULT, result_rows)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def background_writer(self) -> BackgroundWriter:
        return BackgroundWriter(self)

    def load_results(self, run_id: str) -> list[ResultRecord]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT r.case_id, r.metric, r.score, r.usage, r.duration_s, r.created_at"
                " FROM results r LEFT JOIN cases c ON c.run_id = r.run_id AND c.case_id = r.case_id"
                " WHERE r.run_id = ? ORDER BY c.idx, r.metric",
                (run_id,),
            ).fetchall()
        return [
            ResultRecord(
                run_id=run_id,
                case_id=r[0],
                metric=r[1],
                score=Score.model_validate_json(r[2]),
                usage=Usage.model_validate_json(r[3]),
                duration_s=r[4],
                created_at=r[5],
            )
            for r in rows
        ]

    def done_pairs(self, run_id: str) -> set[tuple[str, str]]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT case_id, metric FROM results WHERE run_id = ?", (run_id,)
            ).fetchall()
        return {(r[0], r[1]) for r in rows}

    def delete_error_results(self, run_id: str, metrics: Iterable[str] | None = None) -> int:
        """Forget error results so that a resumed run scores those cases again."""
        with self._lock:
            if metrics is None:
                cur = self._conn.execute(
                    "DELETE FROM results WHERE run_id = ? AND status = 'error'", (run_id,)
                )
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
        calls the agent on those cases again."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT case_id FROM outputs"
                " WHERE run_id = ? AND json_extract(data, '$.agent_run.failed') = 1",
                (run_id,),
            ).fetchall()
            for (case_id,) in rows:
                self._conn.execute("DELETE FROM results WHERE run_id = ? AND case_id = ?", (run_id, case_id))
                self._conn.execute("DELETE FROM outputs WHERE run_id = ? AND case_id = ?", (run_id, case_id))
        return len(rows)

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


_STOP = object()


class BackgroundWriter:
    """Commits outputs and results on a thread, in order, as soon as they arrive."""

    def __init__(self, store: RunStore):
        self._store = store
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="clineval-store-writer", daemon=True)
        self._thread.start()

    def output(self, run_id: str, case_id: str, output: AgentOutput) -> None:
        self._check()
        self._queue.put((run_id, case_id, output))

    def result(self, result: ResultRecord) -> None:
        self._check()
        self._queue.put(result)

    def _check(self) -> None:
        if self._error is not None:
            raise StoreError(f"writing to the run store failed: {self._error}") from self._error

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
            if not (outputs or results) or self._error is not None:
                continue
            try:
                self._store.write_batch(outputs, results)
            except BaseException as exc:  # reported to the runner by _check() / close()
                self._error = exc

    def close(self) -> None:
        """Commit everything queued, stop the thread, and raise if a write failed."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()
        self._check()
