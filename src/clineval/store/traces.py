"""Spans of OpenTelemetry traces in the run store (``clineval collect``, ``clineval traces import``).

The ``spans`` table is append-only: a span is identified by ``(trace_id, span_id)`` and is
stored once, so an exporter that sends the same spans again (a retry, a file imported twice)
adds nothing; :meth:`TraceStore.add` says how many were new. A batch is written in one
transaction (``executemany``), all or nothing. ``gen_ai.conversation.id``, when a span has
it, is kept in a column of its own, indexed, beside the start time; ``seq`` numbers rows in
the order they arrived (what a monitor has already seen), and ``received_at`` is when.
Attributes, events and resource attributes are JSON text, masked by
:mod:`clineval.redaction` on the way in. ``traffic_scored`` lists the conversations
``clineval monitor`` has scored, and in which run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from clineval.model.trace import SpanEvent, SpanRecord
from clineval.redaction import Masker
from clineval.store.sqlite import RunStore

__all__ = ["CONVERSATION_ID", "CONVERSATION_KEYS", "AddResult", "SpanGroup", "TraceEntry", "TraceStore"]

#: The GenAI semantic conventions' attribute that names the conversation a span belongs to.
CONVERSATION_ID = "gen_ai.conversation.id"
#: The attributes that name it, first found wins: the GenAI conventions', then OpenInference's
#: ``session.id`` (the same list as the ``conversation.id`` row of the semantic-conventions table).
CONVERSATION_KEYS = (CONVERSATION_ID, "session.id")
#: Largest number of ids in one ``IN (...)`` (SQLite's default limit on parameters is 999+).
_IN_BATCH = 500

_COLUMNS = (
    "trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status, status_message,"
    " conversation_id, attributes, events, resource, scope, source"
)
_INSERT = (
    "INSERT OR IGNORE INTO spans (trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status,"
    " status_message, conversation_id, attributes, events, resource, scope, source, received_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True)
class AddResult:
    """What one :meth:`TraceStore.add` did: spans handed in, and how many of them were new."""

    received: int
    stored: int

    @property
    def duplicates(self) -> int:
        return self.received - self.stored


@dataclass(frozen=True)
class SpanGroup:
    """A conversation or a trace as stored so far: its spans, and when its last one started,
    ended and arrived (a conversation idle for a while is taken as complete)."""

    key: str
    spans: int
    first_start_ns: int
    last_start_ns: int
    last_end_ns: int
    last_received_at: float


def _conversation_id(span: SpanRecord) -> str | None:
    for key in CONVERSATION_KEYS:
        value = span.attributes.get(key)
        if value is None or isinstance(value, dict | list):
            continue
        text = str(value)
        if text:
            return text
    return None


def _row(span: SpanRecord, masker: Masker, now: float) -> tuple[object, ...]:
    events = [event.model_dump(mode="json") for event in span.events]
    return (
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        span.name,
        span.kind,
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        span.status,
        masker.text(span.status_message),
        _conversation_id(span),
        masker.dumps(span.attributes),
        masker.dumps(events),
        masker.dumps(span.resource),
        span.scope,
        span.source,
        now,
    )


def _record(row: Sequence[Any]) -> SpanRecord:
    return SpanRecord(
        trace_id=row[0],
        span_id=row[1],
        parent_span_id=row[2],
        name=row[3],
        kind=row[4],
        start_time_unix_nano=row[5],
        end_time_unix_nano=row[6],
        status=row[7],
        status_message=row[8],
        # row[9] is the conversation id, also in the attributes
        attributes=json.loads(row[10]),
        events=tuple(SpanEvent.model_validate(event) for event in json.loads(row[11])),
        resource=json.loads(row[12]),
        scope=row[13],
        source=row[14],
    )


@dataclass(frozen=True)
class TraceEntry:
    """One trace (or the part of it naming one conversation) in the index a bounded reader
    plans its batches from: the conversation its spans name (``None``: none), how many
    spans, and when the first started."""

    trace_id: str
    conversation_id: str | None
    spans: int
    first_start_ns: int


def _group(row: Sequence[Any]) -> SpanGroup:
    return SpanGroup(
        key=row[0],
        spans=row[1],
        first_start_ns=row[2],
        last_start_ns=row[3],
        last_end_ns=row[4],
        last_received_at=row[5],
    )


class TraceStore:
    """The ``spans`` table of one run store."""

    def __init__(self, store: RunStore):
        self.store = store

    @property
    def available(self) -> bool:
        """The store has the spans table (one last written by an older clineval and opened
        read-only does not: it reads as a store without spans)."""
        return self.store.has_table("spans")

    # writing ---------------------------------------------------------------------------

    def add(self, spans: Iterable[SpanRecord], *, now: float | None = None) -> AddResult:
        """Store the spans not stored yet, in one transaction; committed when this returns."""
        masker = Masker()
        when = time.time() if now is None else now
        rows = [_row(span, masker, when) for span in spans]
        if not rows:
            return AddResult(received=0, stored=0)
        with self.store.transaction() as conn:
            before = conn.total_changes
            conn.executemany(_INSERT, rows)
            stored = conn.total_changes - before
        return AddResult(received=len(rows), stored=stored)

    # reading ---------------------------------------------------------------------------

    def _spans(self, where: str, params: Sequence[object], *, limit: int | None = None) -> list[SpanRecord]:
        if not self.available:
            return []
        sql = f"SELECT {_COLUMNS} FROM spans WHERE {where} ORDER BY start_ns, seq"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_record(row) for row in self.store.query(sql, params)]

    def trace(self, trace_id: str) -> list[SpanRecord]:
        """The spans of one trace, by start time."""
        return self._spans("trace_id = ?", (trace_id.lower(),))

    def conversation(self, conversation_id: str) -> list[SpanRecord]:
        """The spans that carry ``gen_ai.conversation.id = conversation_id``, by start time."""
        return self._spans("conversation_id = ?", (conversation_id,))

    def since(
        self, start_ns: int, *, until_ns: int | None = None, limit: int | None = None
    ) -> list[SpanRecord]:
        """The spans that started at or after ``start_ns`` (and before ``until_ns``), by start time."""
        where, params = "start_ns >= ?", [start_ns]
        if until_ns is not None:
            where += " AND start_ns < ?"
            params.append(until_ns)
        return self._spans(where, params, limit=limit)

    def last_seq(self) -> int:
        """The ``seq`` of the last span stored (0 when none): a reader that stops there sees
        the store as it was, whatever arrives while it reads."""
        if not self.available:
            return 0
        return int(self.store.query("SELECT COALESCE(MAX(seq), 0) FROM spans")[0][0])

    def trace_index(self, since_ns: int, *, until_seq: int | None = None) -> list[TraceEntry]:
        """Each trace with spans started since ``since_ns`` (stored up to row ``until_seq``),
        once per conversation its spans name, first started first: small (a few numbers a
        trace), read without the spans' attributes. Spans stored by an older clineval with
        only OpenInference's ``session.id`` are read by it too."""
        if not self.available:
            return []
        where, params = "start_ns >= ?", [since_ns]
        if until_seq is not None:
            where += " AND seq <= ?"
            params.append(until_seq)
        conversation = (
            "CASE WHEN conversation_id IS NULL AND instr(attributes, '\"session.id\"') > 0"
            " THEN json_extract(attributes, '$.\"session.id\"') ELSE conversation_id END"
        )
        rows = self.store.query(
            f"SELECT trace_id, {conversation} AS cid, COUNT(*), MIN(start_ns) FROM spans WHERE {where}"
            " GROUP BY trace_id, cid ORDER BY MIN(start_ns), trace_id",
            params,
        )
        return [
            TraceEntry(
                trace_id=row[0],
                conversation_id=None if row[1] in (None, "") else str(row[1]),
                spans=int(row[2]),
                first_start_ns=int(row[3]),
            )
            for row in rows
        ]

    def traces_since(
        self, trace_ids: Sequence[str], since_ns: int, *, until_seq: int | None = None
    ) -> list[SpanRecord]:
        """The spans of these traces started since ``since_ns`` (stored up to row ``until_seq``),
        by start time: one batch of a bounded read planned with :meth:`trace_index`."""
        spans: list[SpanRecord] = []
        ids = list(dict.fromkeys(trace_ids))
        for at in range(0, len(ids), _IN_BATCH):
            chunk = ids[at : at + _IN_BATCH]
            where = f"trace_id IN ({', '.join('?' * len(chunk))}) AND start_ns >= ?"
            params: list[object] = [*chunk, since_ns]
            if until_seq is not None:
                where += " AND seq <= ?"
                params.append(until_seq)
            spans.extend(self._spans(where, params))
        if len(ids) > _IN_BATCH:
            spans.sort(key=lambda s: s.start_time_unix_nano)
        return spans

    def after_seq(self, seq: int, *, limit: int = 10_000) -> tuple[list[SpanRecord], int]:
        """Spans that arrived after row ``seq`` (in arrival order), and the last row's ``seq``
        (``seq`` itself when none did): what a monitor has not seen yet."""
        if not self.available:
            return [], seq
        rows = self.store.query(
            f"SELECT {_COLUMNS}, seq FROM spans WHERE seq > ? ORDER BY seq LIMIT ?", (seq, int(limit))
        )
        return [_record(row) for row in rows], (rows[-1][-1] if rows else seq)

    def _groups(self, key: str, since_ns: int | None) -> list[SpanGroup]:
        if not self.available:
            return []
        where = f"{key} IS NOT NULL"
        params: list[object] = []
        if since_ns is not None:
            where += " AND start_ns >= ?"
            params.append(since_ns)
        rows = self.store.query(
            f"SELECT {key}, COUNT(*), MIN(start_ns), MAX(start_ns), MAX(end_ns), MAX(received_at)"
            f" FROM spans WHERE {where} GROUP BY {key} ORDER BY MAX(received_at), {key}",
            params,
        )
        return [_group(row) for row in rows]

    def conversations(self, *, since_ns: int | None = None) -> list[SpanGroup]:
        """Each conversation (``gen_ai.conversation.id``) with spans (started since ``since_ns``):
        its span count and when its last span started, ended and arrived; least recent first."""
        return self._groups("conversation_id", since_ns)

    def traces(self, *, since_ns: int | None = None) -> list[SpanGroup]:
        """Each trace with spans (started since ``since_ns``), as :meth:`conversations`."""
        return self._groups("trace_id", since_ns)

    # conversations clineval monitor has scored --------------------------------------------

    def scored_conversations(self) -> set[str]:
        """The ids of the conversations already scored by ``clineval monitor``."""
        if not self.store.has_table("traffic_scored"):
            return set()
        return {row[0] for row in self.store.query("SELECT conversation_id FROM traffic_scored")}

    def mark_scored(self, conversation_ids: Iterable[str], run_id: str, *, now: float | None = None) -> int:
        """Record that these conversations were scored in ``run_id`` (one transaction; one
        already recorded keeps its first run); how many were new."""
        when = time.time() if now is None else now
        rows = [(cid, run_id, when) for cid in dict.fromkeys(conversation_ids)]
        if not rows:
            return 0
        with self.store.transaction() as conn:
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO traffic_scored (conversation_id, run_id, scored_at) VALUES (?, ?, ?)",
                rows,
            )
            return conn.total_changes - before

    def count(self) -> int:
        """How many spans are stored."""
        if not self.available:
            return 0
        return int(self.store.query("SELECT COUNT(*) FROM spans")[0][0])

    def counts(self) -> dict[str, int]:
        """Spans, traces and conversations stored."""
        if not self.available:
            return {"spans": 0, "traces": 0, "conversations": 0}
        spans, traces, conversations = self.store.query(
            "SELECT COUNT(*), COUNT(DISTINCT trace_id), COUNT(DISTINCT conversation_id) FROM spans"
        )[0]
        return {"spans": int(spans), "traces": int(traces), "conversations": int(conversations)}
