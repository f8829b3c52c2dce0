"""The judge answer cache: answers committed by a writer thread, in batches, never lost on close."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from clineval.judges.base import Usage
from clineval.judges.cache import JudgeCache


def _rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0])


def test_a_put_is_found_at_once_and_on_disk_after_close(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = JudgeCache(path)
    cache.put("k1", '{"verdict": "yes"}', Usage(calls=1, prompt_tokens=12), model="m")
    assert cache.get("k1") == ('{"verdict": "yes"}', Usage(calls=1, prompt_tokens=12))  # pending or stored
    cache.close()
    again = JudgeCache(path)
    assert again.get("k1") == ('{"verdict": "yes"}', Usage(calls=1, prompt_tokens=12))
    assert len(again) == 1
    again.close()


def test_many_puts_are_committed_in_few_transactions_off_the_caller_thread(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = JudgeCache(path)
    writers: set[str] = set()
    real_commit = cache._commit
    batches: list[int] = []

    def spy(rows: list[tuple[str, str | None, str, str, float]]) -> None:
        writers.add(threading.current_thread().name)
        batches.append(len(rows))
        real_commit(rows)

    cache._commit = spy  # type: ignore[method-assign]
    for i in range(500):
        cache.put(f"k{i}", f'{{"n": {i}}}', Usage(calls=1))
    cache.close()
    assert sum(batches) == 500
    assert len(batches) < 100  # batched: one transaction per burst, not one per answer
    assert writers == {"clineval-judge-cache"}
    assert _rows(path) == 500


def test_a_later_answer_for_the_same_key_wins(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = JudgeCache(path)
    cache.put("k", "first", Usage())
    cache.put("k", "second", Usage())
    assert cache.get("k") == ("second", Usage())
    cache.close()
    again = JudgeCache(path)
    assert again.get("k") == ("second", Usage())
    again.close()


def test_len_and_a_put_after_flush(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "cache.db")
    cache.put("a", "1", Usage())
    assert len(cache) == 1  # len commits what is pending first
    cache.put("b", "2", Usage())  # the writer starts again
    assert len(cache) == 2
    cache.close()


def test_an_in_memory_cache_works_the_same(tmp_path: Path) -> None:
    cache = JudgeCache(":memory:")
    cache.put("a", "1", Usage())
    assert cache.get("a") == ("1", Usage())
    assert len(cache) == 1
    cache.close()


class _CountingConnection:
    """A sqlite3 connection wrapper that counts the look-ups (SELECTs on judge_cache)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.selects = 0

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql.startswith("SELECT raw"):
            self.selects += 1
        return self.conn.execute(sql, *args)

    def close(self) -> None:
        self.conn.close()


def test_a_cache_empty_at_open_misses_without_a_query_and_finds_what_it_stored(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = JudgeCache(path)
    counting = _CountingConnection(cache._conn)  # type: ignore[arg-type]
    cache._conn = counting  # type: ignore[assignment]
    assert cache.get("never-stored") is None
    assert counting.selects == 0  # empty at open: a miss is known without SQLite
    cache.put("k", "answer", Usage(calls=1))
    cache.flush()  # committed: no longer among the pending answers, found by a query
    assert cache.get("k") == ("answer", Usage(calls=1))
    assert counting.selects == 1
    cache.close()
    # a cache that held answers at open looks every key up
    again = JudgeCache(path)
    counting = _CountingConnection(again._conn)  # type: ignore[arg-type]
    again._conn = counting  # type: ignore[assignment]
    assert again.get("never-stored") is None
    assert again.get("k") == ("answer", Usage(calls=1))
    assert counting.selects == 2
    again.close()
