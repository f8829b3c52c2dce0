"""A persistent cache of judge answers, so that a re-run costs nothing.

The key is a SHA-256 of everything that shapes an answer: :data:`KEY_VERSION`, the
backend's identity (provider, endpoint, model, sampling) and response mode, then the
request body exactly as it is sent (model, sampling, the messages with the schema
instruction, the response format with the output schema). The body is the bytes the
backend builds for the request anyway, hashed once: nothing is re-encoded for the key. A
prompt change therefore changes the key. Only answers that validated are stored; failures
are asked again on the next run.

Keys are stable within a :data:`KEY_VERSION`. A version that keys requests differently
changes it, and the entries written under the old one are simply never found again (they
are asked again and stored under the new key); delete the cache file to reclaim their space.

Writes never wait on the disk: :meth:`JudgeCache.put` leaves the answer among the pending
ones, and a writer thread with its own connection commits what is pending in one
transaction every :attr:`JudgeCache.write_interval_s` (50 ms); until then
:meth:`JudgeCache.get` finds it among the pending answers. A put does not wake the writer
(on a busy event loop each wake-up is a hand-over of the GIL), and reads never wait for a
commit: they use another connection (SQLite's WAL lets readers go on during a write).
:meth:`JudgeCache.close` commits what is pending. A process killed before that loses only
those last answers, which are asked again on the next run.

A cache that holds no answer when it is opened (a first run) answers a look-up from memory:
a key it has not stored itself is a miss without a query. An answer another process stores
in the same file meanwhile is then not found by this one; the request is simply asked
(and stored) again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from clineval.errors import warn_once
from clineval.judges.base import Usage

KEY_VERSION = b"clineval-judge-cache/2\n"
"""The first bytes of every key's hashed material; version 1 hashed a sorted JSON
re-encoding of the request's parts instead of its body."""


def key_prefix(identity: dict[str, Any]) -> bytes:
    """The part of a request's key that is not in its body (computed once per judge):
    :data:`KEY_VERSION` and ``identity`` as sorted JSON."""
    return KEY_VERSION + json.dumps(identity, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"


def request_key(prefix: bytes, body: bytes) -> str:
    """The cache key of one request: a SHA-256 of ``prefix`` then the request ``body``."""
    digest = hashlib.sha256(prefix)
    # Fed in pieces under 2 KiB: hashlib releases the GIL for a larger piece, and taking it
    # back from the judge cache's or the store's writer thread can cost milliseconds of the
    # event loop's time, much more than hashing a request body (about 1 us per KiB).
    view = memoryview(body)
    for start in range(0, len(view), _HASH_PIECE):
        digest.update(view[start : start + _HASH_PIECE])
    return digest.hexdigest()


_HASH_PIECE = 2047


class JudgeCache:
    """SQLite-backed map from a request key to the validated raw answer and its usage.

    A cache that cannot be written (a read-only file or folder, a full disk) never costs
    an answer: the judge's answers are used, not stored, and one warning says so. One
    that cannot even be read is skipped the same way.
    """

    write_interval_s = 0.05
    """How often the writer thread commits the pending answers."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self.writable = True
        # answers not committed yet: key -> row (mutated under _pending_lock)
        self._pending: dict[str, tuple[str, str | None, str, str, float]] = {}
        self._pending_lock = threading.Lock()
        self._stop = threading.Event()
        self._writer: threading.Thread | None = None
        # the writer's connection (opened on the first put) and its lock: another connection
        # than the readers', except for an in-memory cache (one database per connection)
        self._wconn: sqlite3.Connection | None = None
        self._wlock = self._lock
        # Set when the file held no answer at open: only keys stored through this object can
        # then be found, and ``_stored`` holds their hashes (a hash shared by two keys only
        # costs a query), so a miss costs no query on the event loop's thread.
        self._empty_at_open = False
        self._stored: set[int] = set()
        try:
            self._conn = self._open(path)
        except (OSError, sqlite3.Error) as exc:
            self._conn = self._open_read_only(exc)
        else:
            with contextlib.suppress(sqlite3.Error):  # unknown: every miss is looked up
                first = self._conn.execute("SELECT 1 FROM judge_cache LIMIT 1").fetchone()
                self._empty_at_open = first is None

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
        if self._conn is None or (self._empty_at_open and hash(key) not in self._stored):
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
        row = (key, model, raw, usage.model_dump_json(), time.time())
        with self._pending_lock:
            self._pending[key] = row
        self._stored.add(hash(key))
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="clineval-judge-cache", daemon=True)
            self._writer.start()

    def _write_loop(self) -> None:
        while not self._stop.wait(self.write_interval_s):
            self._write_pending()
        self._write_pending()  # what arrived before flush() asked the writer to stop

    def _write_pending(self) -> None:
        with self._pending_lock:
            rows = dict(self._pending)
        if not rows:
            return
        if self.writable:
            self._commit(list(rows.values()))
        with self._pending_lock:
            for k, row in rows.items():
                if self._pending.get(k) is row:  # not replaced by a later answer meanwhile
                    del self._pending[k]

    def _writer_connection(self) -> sqlite3.Connection:
        if self._wconn is None:
            assert self._conn is not None
            if str(self.path) == ":memory:":
                self._wconn = self._conn
            else:
                self._wconn = self._open(self.path)
                self._wlock = threading.Lock()
        return self._wconn

    def _commit(self, rows: list[tuple[str, str | None, str, str, float]]) -> None:
        try:
            conn = self._writer_connection()
            with self._wlock:
                conn.execute("BEGIN")
                try:
                    conn.executemany(
                        "INSERT OR REPLACE INTO judge_cache (key, model, raw, usage, created_at)"
                        " VALUES (?, ?, ?, ?, ?)",
                        rows,
                    )
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        except (OSError, sqlite3.Error) as exc:
            self.writable = False
            self._warn(exc, "answers are used but not stored")

    def flush(self) -> None:
        """Commit every pending answer (the writer thread stops; a later put starts it again)."""
        writer = self._writer
        if writer is not None and writer.is_alive():
            self._stop.set()
            writer.join()
        self._stop.clear()
        self._writer = None
        self._write_pending()  # answers put while the writer stopped
        with self._pending_lock:
            self._pending.clear()  # a cache that cannot be written keeps nothing

    def __len__(self) -> int:
        self.flush()
        if self._conn is None:
            return 0
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0])

    def close(self) -> None:
        self.flush()
        with self._wlock:
            if self._wconn is not None and self._wconn is not self._conn:
                self._wconn.close()
            self._wconn = None
        with self._lock:
            if self._conn is not None:
                self._conn.close()


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)
