"""A persistent cache of judge answers, so that a re-run costs nothing.

The key is a SHA-256 of everything that shapes an answer: the backend identity
(provider, endpoint, model), the sampling parameters, the response format, the output
schema and the exact messages. A prompt change therefore changes the key. Only answers
that validated are stored; failures are asked again on the next run.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from clineval.judges.base import Usage


def cache_key(payload: dict[str, Any]) -> str:
    """A stable SHA-256 of a JSON-serialisable payload (keys sorted)."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class JudgeCache:
    """SQLite-backed map from a request key to the validated raw answer and its usage."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=10000")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS judge_cache ("
            " key TEXT PRIMARY KEY, model TEXT, raw TEXT NOT NULL, usage TEXT NOT NULL,"
            " created_at REAL NOT NULL)"
        )

    def get(self, key: str) -> tuple[str, Usage] | None:
        with self._lock:
            row = self._conn.execute("SELECT raw, usage FROM judge_cache WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return row[0], Usage.model_validate_json(row[1])

    def put(self, key: str, raw: str, usage: Usage, model: str | None = None) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO judge_cache (key, model, raw, usage, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, model, raw, usage.model_dump_json(), time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
