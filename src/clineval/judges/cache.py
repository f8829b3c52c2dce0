"""A persistent cache of judge answers, so that a re-run costs nothing.

The key is a SHA-256 of everything that shapes an answer: the backend identity
(provider, endpoint, model), the sampling parameters, the response format, the output
schema and the exact messages. A prompt change therefore changes the key. Only answers
that validated are stored; failures are asked again on the next run.

Writes never wait on the disk: :meth:`JudgeCache.put` hands the answer to a writer thread
that commits what arrived in one transaction (a few milliseconds later), and until then
:meth:`JudgeCache.get` finds it among the pending answers. :meth:`JudgeCache.close` commits
what is pending. A process killed before that loses only those last answers, which are
asked again on the next run.
"""

from __future__ import annotations

import hashlib
import json
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from clineval.errors import warn_once
from clineval.judges.base import Usage


def cache_key(payload: dict[str, Any]) -> str:
    """A stable SHA-256 of a JSON-serialisable payload (keys sorted)."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class JudgeCache:
    """SQLite-backed map from a request key to the validated raw answer and its usage.

    A cache that cannot be written (a read-only file or folder, a full disk) never costs
    an answer: the judge's answers are used, not stored, and one warning says so. One
    that cannot even be read is skipped the same way.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self.writable = True
        # answers handed to the writer thread and not committed yet: key -> row
        self._pending: dict[str, tuple[str, str | None, str, str, float]] = {}
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        try:
            self._conn = self._open(path)
        except (OSError, sqlite3.Error) as exc:
            self._conn = self._open_read_only(exc)

    def _open(self, path: str | Path) -> sqlite3.Connection:
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout=10000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS judge_cache ("
                " key TEXT PRIMARY KEY, model TEXT, raw TEXT NOT NULL, usage TEXT NOT NULL,"
                " created_at REAL NOT NULL)"
            )
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_read_only(self, reason: BaseException) -> sqlite3.Connection | None:
        """The cache opened for reading only (hits still count), or ``None`` when that fails too."""
        self.writable = False
        if self.path.is_file():
            # mode=ro needs the WAL's shared-memory file; immutable=1 reads a folder that
            # cannot hold one (nothing writes the file: it could not be opened for writing).
            for query in ("mode=ro", "mode=ro&immutable=1"):
                uri = f"{self.path.resolve().as_uri()}?{query}"
                try:
                    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
                except (OSError, ValueError, sqlite3.Error):
                    continue
                try:
                    conn.execute("SELECT COUNT(*) FROM judge_cache").fetchone()
                except sqlite3.Error:
                    conn.close()
                    continue
                self._warn(reason, "it is read, but new answers are not stored")
                return conn
        self._warn(reason, "it is not used this run")
        return None

    def _warn(self, reason: BaseException, consequence: str) -> None:
        warn_once(f"judge cache {self.path} cannot be written ({_why(reason)}); {consequence}")

    def get(self, key: str) -> tuple[str, Usage] | None:
        pending = self._pending.get(key)
        if pending is not None:
            return pending[2], Usage.model_validate_json(pending[3])
        if self._conn is None:
            return None
        try:
            with self._lock:
                row = self._conn.execute(
                    "SELECT raw, usage FROM judge_cache WHERE key = ?", (key,)
                ).fetchone()
        except sqlite3.Error as exc:
            warn_once(f"judge cache {self.path} cannot be read ({_why(exc)}); it is skipped")
            return None
        if row is None:
            return None
        return row[0], Usage.model_validate_json(row[1])

    def put(self, key: str, raw: str, usage: Usage, model: str | None = None) -> None:
        """Store an answer (committed by the writer thread); a cache that cannot be written is
        skipped (one warning), the answer kept."""
        if self._conn is None or not self.writable:
            return
        self._pending[key] = (key, model, raw, usage.model_dump_json(), time.time())
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="clineval-judge-cache", daemon=True)
            self._writer.start()
        self._queue.put(key)

    def _write_loop(self) -> None:
        stop = False
        while not stop:
            keys = [self._queue.get()]
            time.sleep(0.005)  # let a batch gather: one transaction for what arrives meanwhile
            while True:
                try:
                    keys.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = None in keys
            rows = {k: self._pending[k] for k in keys if k is not None and k in self._pending}
            if rows and self.writable:
                self._commit(list(rows.values()))
            for k, row in rows.items():
                if self._pending.get(k) is row:
                    del self._pending[k]

    def _commit(self, rows: list[tuple[str, str | None, str, str, float]]) -> None:
        assert self._conn is not None
        try:
            with self._lock:
                self._conn.execute("BEGIN")
                try:
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO judge_cache (key, model, raw, usage, created_at)"
                        " VALUES (?, ?, ?, ?, ?)",
                        rows,
                    )
                    self._conn.execute("COMMIT")
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            self.writable = False
            self._warn(exc, "answers are used but not stored")

    def flush(self) -> None:
        """Commit every pending answer (the writer thread stops; a later put starts it again)."""
        writer = self._writer
        if writer is not None and writer.is_alive():
            self._queue.put(None)
            writer.join()
        self._writer = None
        while True:  # keys that arrived after the writer's last look
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        rest = list(self._pending.values())
        if rest and self._conn is not None and self.writable:
            self._commit(rest)
        self._pending.clear()

    def __len__(self) -> int:
        self.flush()
        if self._conn is None:
            return 0
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0])

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._conn is not None:
                self._conn.close()


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)
