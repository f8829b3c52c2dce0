"""The spans table (clineval.store.traces): idempotent batched writes and the reads."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from clineval.model.trace import SpanEvent, SpanRecord
from clineval.store.sqlite import RunStore
from clineval.store.traces import SpanGroup, TraceStore

T1 = "1" * 32
T2 = "2" * 32


def _span(trace: str, n: int, start: int, conversation: str | None = None, **extra: object) -> SpanRecord:
    attributes: dict[str, object] = {"gen_ai.operation.name": "chat"}
    if conversation is not None:
        attributes["gen_ai.conversation.id"] = conversation
    return SpanRecord.model_validate(
        {
            "trace_id": trace,
            "span_id": f"{n:016x}",
            "name": f"span {n}",
            "start_time_unix_nano": start,
            "end_time_unix_nano": start + 10,
            "attributes": attributes,
            **extra,
        }
    )


@pytest.fixture
def traces(tmp_path: Path) -> TraceStore:
    return TraceStore(RunStore(tmp_path / "store.db"))


def test_a_duplicate_export_stores_nothing_twice(traces: TraceStore) -> None:
    batch = [_span(T1, 1, 100, "c1"), _span(T1, 2, 110, "c1"), _span(T2, 3, 120)]
    first = traces.add(batch, now=1000.0)
    assert (first.received, first.stored, first.duplicates) == (3, 3, 0)
    again = traces.add([*batch[1:], _span(T2, 4, 130)], now=1001.0)
    assert (again.received, again.stored, again.duplicates) == (3, 1, 2)
    assert traces.count() == 4
    assert traces.counts() == {"spans": 4, "traces": 2, "conversations": 1}
    assert traces.add([]).received == 0


def test_the_first_copy_of_a_span_is_kept(traces: TraceStore) -> None:
    traces.add([_span(T1, 1, 100, name="first")])
    traces.add([_span(T1, 1, 100, name="second")])
    assert [s.name for s in traces.trace(T1)] == ["first"]


def test_reads_by_trace_conversation_and_time(traces: TraceStore) -> None:
    spans = [_span(T1, 2, 300, "c1"), _span(T1, 1, 100, "c1"), _span(T2, 3, 200, "c2"), _span(T2, 4, 400)]
    traces.add(spans, now=50.0)
    assert [s.span_id for s in traces.trace(T1)] == [f"{1:016x}", f"{2:016x}"]  # by start time
    assert traces.trace(T1.upper()) == traces.trace(T1)
    assert [s.span_id[-1] for s in traces.conversation("c1")] == ["1", "2"]
    assert traces.conversation("nope") == []
    assert [s.start_time_unix_nano for s in traces.since(200)] == [200, 300, 400]
    assert [s.start_time_unix_nano for s in traces.since(200, until_ns=400)] == [200, 300]
    assert [s.start_time_unix_nano for s in traces.since(0, limit=2)] == [100, 200]
    assert traces.trace(T1)[0] == spans[1]  # what went in comes out


def test_groups_give_the_last_span_times(traces: TraceStore) -> None:
    traces.add([_span(T1, 1, 100, "c1"), _span(T2, 3, 200, "c2")], now=10.0)
    traces.add([_span(T1, 2, 300, "c1")], now=20.0)
    assert traces.conversations() == [
        SpanGroup(
            key="c2", spans=1, first_start_ns=200, last_start_ns=200, last_end_ns=210, last_received_at=10.0
        ),
        SpanGroup(
            key="c1", spans=2, first_start_ns=100, last_start_ns=300, last_end_ns=310, last_received_at=20.0
        ),
    ]
    assert [(g.key, g.spans) for g in traces.traces()] == [(T2, 1), (T1, 2)]
    assert [(g.key, g.spans) for g in traces.traces(since_ns=250)] == [(T1, 1)]


def test_after_seq_gives_what_arrived_since(traces: TraceStore) -> None:
    traces.add([_span(T1, 1, 500), _span(T1, 2, 100)])
    seen, last = traces.after_seq(0)
    assert [s.span_id[-1] for s in seen] == ["1", "2"] and last == 2  # arrival order, not start time
    traces.add([_span(T1, 2, 100), _span(T1, 3, 50)])  # one duplicate, one new
    new, last = traces.after_seq(last)
    assert [s.span_id[-1] for s in new] == ["3"] and last == 3
    assert traces.after_seq(last) == ([], 3)


def test_columns_json_and_masking(traces: TraceStore, tmp_path: Path) -> None:
    span = _span(
        T1,
        1,
        100,
        "c1",
        events=[SpanEvent(name="gen_ai.user.message", attributes={"content": "Bearer abcdefghijklmnop"})],
        resource={"service.name": "agent"},
    )
    traces.add([span])
    traces.store.close()
    with sqlite3.connect(tmp_path / "store.db") as conn:
        row = conn.execute("SELECT conversation_id, attributes, events, resource FROM spans").fetchone()
    assert row[0] == "c1"
    assert row[1] == '{"gen_ai.operation.name": "chat", "gen_ai.conversation.id": "c1"}'
    assert "abcdefghijklmnop" not in row[2] and "Bearer ***" in row[2]
    assert row[3] == '{"service.name": "agent"}'


def test_a_store_without_the_table_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # a store written before the spans table existed
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    store = RunStore(path, readonly=True)
    try:
        traces = TraceStore(store)
        assert not traces.available
        assert traces.count() == 0 and traces.trace(T1) == [] and traces.conversations() == []
    finally:
        store.close()
