"""Human reviews in the run store: verdicts, queues of cases to review, and who took which case.

Reviews live in their own tables beside the run (``reviews``, ``review_queues``,
``review_queue_cases``, ``review_claims``) and never change a score. The ``reviews`` table is
a history: every verdict is a new row, committed before the call returns (a killed viewer
loses nothing it confirmed), and the **current** verdict of a reviewer on an item's scale is
the newest row for it that was not undone. *Undo* marks a reviewer's newest row undone (it
stays in the table, with the time), which brings back the verdict before it; a *retracted*
row (a cleared answer, an emptied comment) leaves the item unanswered.

Writes go through :meth:`RunStore.transaction` (the store's lock, one ``BEGIN IMMEDIATE``
transaction, SQLite's errors as one-line store errors) and are refused while a live process
holds the run's lock (``clineval run --resume`` may be changing what the reviewer reads).
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from clineval.errors import RunLockedError, StoreError
from clineval.model import ReviewQueue, ReviewRecord
from clineval.redaction import redact, redact_json
from clineval.store.sqlite import RunStore

#: A claim on a case (a reviewer opened it from the queue) lapses after this long without a verdict.
CLAIM_TTL_S = 30 * 60.0
#: Longest comment kept (characters); longer ones are refused.
MAX_COMMENT = 10_000

_COLUMNS = (
    "seq, run_id, case_id, item, scale, reviewer, verdict, comment, created_at, shown, source, queue_id,"
    " retracted"
)
_CURRENT = (
    "SELECT MAX(seq) FROM reviews WHERE run_id = ? AND undone_at IS NULL"
    " GROUP BY case_id, item, scale, reviewer"
)


def _record(row: Sequence[Any]) -> ReviewRecord:
    return ReviewRecord(
        seq=row[0],
        run_id=row[1],
        case_id=row[2],
        item=row[3],
        scale=row[4],
        reviewer=row[5],
        verdict=row[6],
        comment=row[7],
        created_at=row[8],
        shown=json.loads(redact_json(row[9])) if row[9] else {},
        source=row[10],
        queue_id=row[11],
        retracted=bool(row[12]),
    )


def new_queue_id(now: float | None = None) -> str:
    """``q-20261128-211515-3fa9``: sortable, short, unique."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now or time.time()))
    return f"q-{stamp}-{uuid.uuid4().hex[:4]}"


class ReviewStore:
    """The review tables of one run store."""

    def __init__(self, store: RunStore):
        self.store = store

    @property
    def available(self) -> bool:
        """The store has the review tables (a store last written by an older clineval and
        opened read-only does not: it reads as one without reviews)."""
        return self.store.has_table("reviews")

    # writing ---------------------------------------------------------------------------

    def _check_lock(self, run_id: str) -> None:
        holder = self.store.lease_holder(run_id)
        if holder is not None:
            raise RunLockedError(
                f"run {run_id} is being run by {holder.describe()}: reviews are saved once it has "
                "finished (what the reviewer reads may still change)"
            )

    def _insert(self, conn: sqlite3.Connection, record: ReviewRecord, now: float) -> int:
        cur = conn.execute(
            "INSERT INTO reviews (run_id, case_id, item, scale, reviewer, verdict, comment, created_at,"
            " shown, source, queue_id, retracted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.run_id,
                record.case_id,
                record.item,
                record.scale,
                record.reviewer,
                record.verdict,
                redact(record.comment) if record.comment else record.comment,
                record.created_at or now,
                redact_json(json.dumps(record.shown, ensure_ascii=False, default=str)),
                record.source,
                record.queue_id,
                int(record.retracted),
            ),
        )
        return int(cur.lastrowid or 0)

    def add(self, record: ReviewRecord, *, respect_lock: bool = True) -> ReviewRecord:
        """Save one verdict; committed when this returns. Its ``seq`` and time are filled in."""
        if respect_lock:
            self._check_lock(record.run_id)
        if record.comment is not None and len(record.comment) > MAX_COMMENT:
            raise StoreError(f"a comment may hold at most {MAX_COMMENT:,} characters")
        now = time.time()
        with self.store.transaction() as conn:
            seq = self._insert(conn, record, now)
            if record.queue_id:
                conn.execute(
                    "INSERT OR REPLACE INTO review_claims (queue_id, case_id, reviewer, claimed_at)"
                    " VALUES (?, ?, ?, ?)",
                    (record.queue_id, record.case_id, record.reviewer, now),
                )
        return record.model_copy(update={"seq": seq, "created_at": record.created_at or now})

    def add_many(self, records: Iterable[ReviewRecord], *, respect_lock: bool = True) -> int:
        """Save many verdicts in one transaction (an import): all or none."""
        rows = list(records)
        for record in rows:
            if record.comment is not None and len(record.comment) > MAX_COMMENT:
                raise StoreError(
                    f"case {record.case_id}: a comment may hold at most {MAX_COMMENT:,} characters "
                    "(nothing saved)"
                )
        if respect_lock:
            for run_id in sorted({r.run_id for r in rows}):
                self._check_lock(run_id)
        now = time.time()
        with self.store.transaction() as conn:
            for record in rows:
                self._insert(conn, record, now)
        return len(rows)

    def undo(
        self, run_id: str, case_id: str, reviewer: str, *, respect_lock: bool = True
    ) -> ReviewRecord | None:
        """Take back the reviewer's newest verdict on this case (``None``: nothing to undo).
        The verdict before it, if any, is current again."""
        if respect_lock:
            self._check_lock(run_id)
        with self.store.transaction() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM reviews WHERE run_id = ? AND case_id = ? AND reviewer = ?"
                " AND undone_at IS NULL ORDER BY seq DESC LIMIT 1",
                (run_id, case_id, reviewer),
            ).fetchone()
            if row is None:
                return None
            conn.execute("UPDATE reviews SET undone_at = ? WHERE seq = ?", (time.time(), row[0]))
        return _record(row)

    # reading ---------------------------------------------------------------------------

    def current(
        self,
        run_id: str,
        *,
        case_ids: Sequence[str] | None = None,
        reviewer: str | None = None,
    ) -> list[ReviewRecord]:
        """The current verdicts (newest per reviewer, case, item and scale, not undone, not
        retracted), oldest first."""
        if not self.available:
            return []
        where = [f"seq IN ({_CURRENT})", "retracted = 0"]
        params: list[Any] = [run_id]
        if reviewer is not None:
            where.append("reviewer = ?")
            params.append(reviewer)
        out: list[ReviewRecord] = []
        if case_ids is None:
            rows = self.store.query(
                f"SELECT {_COLUMNS} FROM reviews WHERE {' AND '.join(where)} ORDER BY seq", params
            )
            return [_record(r) for r in rows]
        ids = list(dict.fromkeys(case_ids))
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self.store.query(
                f"SELECT {_COLUMNS} FROM reviews WHERE {' AND '.join(where)} AND case_id IN ({marks})"
                " ORDER BY seq",
                [*params, *part],
            )
            out.extend(_record(r) for r in rows)
        out.sort(key=lambda r: r.seq or 0)
        return out

    def history(self, run_id: str) -> Iterator[ReviewRecord]:
        """Every row ever written for the run, oldest first (undone rows included)."""
        if not self.available:
            return
        last = 0
        while True:
            rows = self.store.query(
                f"SELECT {_COLUMNS}, undone_at FROM reviews WHERE run_id = ? AND seq > ?"
                " ORDER BY seq LIMIT 1000",
                (run_id, last),
            )
            if not rows:
                return
            for row in rows:
                record = _record(row)
                if row[13] is not None:
                    record.shown = {**record.shown, "undone_at": row[13]}
                yield record
            last = rows[-1][0]

    def reviewers(self, run_id: str) -> list[str]:
        if not self.available:
            return []
        return [
            str(r[0])
            for r in self.store.query(
                f"SELECT reviewer, MIN(seq) FROM reviews WHERE seq IN ({_CURRENT}) AND retracted = 0"
                " GROUP BY reviewer ORDER BY MIN(seq)",
                (run_id,),
            )
        ]

    def runs_with_reviews(self) -> dict[str, int]:
        """Run id -> number of current verdicts, for every run that has any."""
        if not self.available:
            return {}
        rows = self.store.query(
            "SELECT run_id, COUNT(*) FROM reviews r WHERE retracted = 0 AND undone_at IS NULL AND seq ="
            " (SELECT MAX(seq) FROM reviews x WHERE x.run_id = r.run_id AND x.case_id = r.case_id"
            " AND x.item = r.item AND x.scale = r.scale AND x.reviewer = r.reviewer AND x.undone_at IS NULL)"
            " GROUP BY run_id"
        )
        return {str(r[0]): int(r[1]) for r in rows}

    # queues ----------------------------------------------------------------------------

    def create_queue(self, queue: ReviewQueue) -> ReviewQueue:
        spec = queue.model_dump(
            mode="json", by_alias=True, exclude={"id", "run_id", "created_at", "case_ids"}
        )
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO review_queues (id, run_id, created_at, spec) VALUES (?, ?, ?, ?)",
                (queue.id, queue.run_id, queue.created_at, redact_json(json.dumps(spec))),
            )
            conn.executemany(
                "INSERT INTO review_queue_cases (queue_id, position, case_id, note) VALUES (?, ?, ?, ?)",
                [
                    (queue.id, i, case_id, queue.notes.get(case_id))
                    for i, case_id in enumerate(queue.case_ids)
                ],
            )
        return queue

    def _queue(self, row: Sequence[Any]) -> ReviewQueue:
        spec = json.loads(row[3])
        cases = self.store.query(
            "SELECT case_id, note FROM review_queue_cases WHERE queue_id = ? ORDER BY position", (row[0],)
        )
        spec.pop("notes", None)
        return ReviewQueue.model_validate(
            {
                **spec,
                "id": row[0],
                "run_id": row[1],
                "created_at": row[2],
                "case_ids": [str(c[0]) for c in cases],
                "notes": {str(c[0]): redact(str(c[1])) for c in cases if c[1]},
            }
        )

    def queues(self, run_id: str | None = None) -> list[ReviewQueue]:
        """The queues (of one run, or all), newest first."""
        if not self.available:
            return []
        sql = "SELECT id, run_id, created_at, spec FROM review_queues"
        params: tuple[Any, ...] = ()
        if run_id is not None:
            sql += " WHERE run_id = ?"
            params = (run_id,)
        return [self._queue(r) for r in self.store.query(sql + " ORDER BY created_at DESC, id DESC", params)]

    def get_queue(self, ref: str, run_id: str | None = None) -> ReviewQueue:
        """A queue by id, unique id prefix or ``latest`` (of the run, when given)."""
        queues = self.queues(run_id)
        if not queues:
            where = f" of run {run_id}" if run_id else ""
            raise StoreError(
                f"no review queue{where} in {self.store.path}; plan one: clineval review plan RUN --n 20"
            )
        if ref == "latest":
            return queues[0]
        exact = [q for q in queues if q.id == ref]
        if exact:
            return exact[0]
        found = [q for q in queues if q.id.startswith(ref)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise StoreError(f"no review queue {ref!r} (queues: {', '.join(q.id for q in queues[:5])})")
        raise StoreError(f"{ref!r} matches {len(found)} review queues: {', '.join(q.id for q in found[:5])}")

    def claim(self, queue_id: str, case_id: str, reviewer: str) -> None:
        """Record that the reviewer has this case of the queue open (others are given other cases)."""
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO review_claims (queue_id, case_id, reviewer, claimed_at)"
                " VALUES (?, ?, ?, ?)",
                (queue_id, case_id, reviewer, time.time()),
            )

    def claim_next(
        self,
        queue_id: str,
        reviewer: str,
        candidates: Sequence[tuple[str, frozenset[str]]],
        per_case: int,
    ) -> str | None:
        """Claim for ``reviewer`` the first of ``candidates`` (case id, the other reviewers who
        have answered it) that still has room (fewer than ``per_case`` other reviewers who
        answered it or hold a fresh claim on it), and return it; ``None`` when none has.

        Looking and claiming are one ``BEGIN IMMEDIATE`` transaction, so two reviewers asking
        at the same moment (two viewers on one store) are never given the same case when a
        queue gives each case to one reviewer."""
        cutoff = time.time() - CLAIM_TTL_S
        with self.store.transaction() as conn:
            for case_id, others in candidates:
                holders = {
                    str(r[0])
                    for r in conn.execute(
                        "SELECT reviewer FROM review_claims"
                        " WHERE queue_id = ? AND case_id = ? AND claimed_at >= ?",
                        (queue_id, case_id, cutoff),
                    )
                }
                if reviewer in holders or len((holders | others) - {reviewer}) < per_case:
                    conn.execute(
                        "INSERT OR REPLACE INTO review_claims (queue_id, case_id, reviewer, claimed_at)"
                        " VALUES (?, ?, ?, ?)",
                        (queue_id, case_id, reviewer, time.time()),
                    )
                    return case_id
        return None

    def claims(self, queue_id: str, *, since: float | None = None) -> dict[str, set[str]]:
        """Case id -> reviewers who opened it (since ``since``; default: within :data:`CLAIM_TTL_S`)."""
        if not self.available:
            return {}
        cutoff = time.time() - CLAIM_TTL_S if since is None else since
        found: dict[str, set[str]] = defaultdict(set)
        for case_id, reviewer in self.store.query(
            "SELECT case_id, reviewer FROM review_claims WHERE queue_id = ? AND claimed_at >= ?",
            (queue_id, cutoff),
        ):
            found[str(case_id)].add(str(reviewer))
        return dict(found)
