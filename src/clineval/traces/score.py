"""Scoring traffic: the stored spans of a time window, assembled into conversations and
cases, scored as a normal clineval run (``clineval traces score``).

Each case keeps its trace and conversation ids in its metadata, so a score leads back to
what the deployed agent did. Conversations whose last span is younger than the idle time
are held back (they may still be arriving) and counted.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clineval.conversations.gold import GoldLabels
from clineval.datasets.streams import CaseStream, GeneratedCases
from clineval.errors import ConfigError
from clineval.store.traces import TraceEntry

__all__ = [
    "BATCH_SPANS",
    "TrafficSelection",
    "parse_duration",
    "parse_since",
    "score_traffic",
    "select_traffic",
]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(value: str, *, option: str = "--every") -> float:
    """A duration ("15m", "1h", "30s", "1d") in seconds; a clear error for anything else."""
    match = _DURATION.match(value)
    if not match or float(match.group(1)) <= 0:
        raise ConfigError(f"{option} {value!r}: expected a positive duration such as 30s, 15m, 1h or 1d")
    return float(match.group(1)) * _SECONDS[match.group(2)]


def parse_since(value: str, *, now: float | None = None) -> int:
    """``--since``: a duration back from now ("24h", "30m", "7d", "2w") or an ISO date or
    time ("2026-11-28", "2026-11-28T08:00:00Z"), as Unix nanoseconds."""
    now = time.time() if now is None else now
    match = _DURATION.match(value)
    if match:
        return int((now - float(match.group(1)) * _SECONDS[match.group(2)]) * 1e9)
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(
            f"--since {value!r}: expected a duration (24h, 30m, 7d, 2w) or an ISO date or time (2026-11-28)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1e9)


#: Spans read and assembled at a time (whole conversations: a batch holds at least one).
BATCH_SPANS = 5_000


@dataclass
class TrafficSelection:
    """The cases to score (read a batch of conversations at a time when iterated) and what
    was left out."""

    cases: CaseStream
    conversations: int = 0
    pending: int = 0
    spans: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    not_this_agent: int = 0
    not_sampled: int = 0
    already_scored: int = 0
    conversation_ids: list[str] = field(default_factory=list)
    gold: dict[str, int] = field(default_factory=dict)
    """With a gold file: how its rows met the chosen conversations (:meth:`GoldLabels.join_counts`)."""


@dataclass
class _Unit:
    """Traces that share conversations (closed: assembling them alone gives the same
    conversations as assembling the whole window)."""

    trace_ids: list[str]
    spans: int
    first_start_ns: int


def _units(entries: Sequence[TraceEntry]) -> list[_Unit]:
    """Traces joined by the conversations they name (union-find), first started first."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        root = key
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[key] != root:
            parent[key], key = root, parent[key]
        return root

    for entry in entries:
        a = find("t:" + entry.trace_id)
        if entry.conversation_id is not None:
            b = find("c:" + entry.conversation_id)
            if a != b:
                parent[b] = a
    units: dict[str, _Unit] = {}
    for entry in entries:  # first started first: the index is in that order
        unit = units.setdefault(find("t:" + entry.trace_id), _Unit([], 0, entry.first_start_ns))
        if entry.trace_id not in unit.trace_ids:
            unit.trace_ids.append(entry.trace_id)
        unit.spans += entry.spans
        unit.first_start_ns = min(unit.first_start_ns, entry.first_start_ns)
    return sorted(units.values(), key=lambda u: u.first_start_ns)


def _batches(units: Sequence[_Unit], batch_spans: int) -> list[list[_Unit]]:
    batches: list[list[_Unit]] = []
    current: list[_Unit] = []
    size = 0
    for unit in units:
        if current and size + unit.spans > batch_spans:
            batches.append(current)
            current, size = [], 0
        current.append(unit)
        size += unit.spans
    if current:
        batches.append(current)
    return batches


def select_traffic(
    store_path: str | Path,
    *,
    since_ns: int,
    agent: str | None = None,
    sample: int | None = None,
    seed: int = 0,
    idle_seconds: float = 300.0,
    per_turn: bool = False,
    now_ns: int | None = None,
    exclude: Set[str] = frozenset(),
    batch_spans: int = BATCH_SPANS,
    gold: GoldLabels | None = None,
) -> TrafficSelection:
    """The cases of the conversations stored since ``since_ns`` (see the module docstring);
    finished conversations whose id is in ``exclude`` (already scored) are counted, not kept.

    Memory stays bounded at any size of window: the spans are read and assembled a batch of
    whole conversations at a time (traces joined by the conversations they name, about
    ``batch_spans`` spans a batch), once to choose the conversations (agent, sample, already
    scored) and again, lazily, when the cases are read. Both readings see the store as it
    was when this was called (spans arriving later wait for the next call).

    ``gold``: labels joined to the chosen conversations and their cases
    (:mod:`clineval.conversations.gold`)."""
    from clineval.store.sqlite import RunStore
    from clineval.store.traces import TraceStore
    from clineval.traces.assemble import assemble

    now = time.time_ns() if now_ns is None else now_ns
    store = RunStore(Path(store_path), readonly=True)  # (a run may be writing the store meanwhile)
    try:
        traces = TraceStore(store)
        until_seq = traces.last_seq()
        entries = traces.trace_index(since_ns, until_seq=until_seq) if traces.available else []
    finally:
        store.close()
    batches = _batches(_units(entries), batch_spans)

    def read(batch: Sequence[_Unit]) -> Any:
        store = RunStore(Path(store_path), readonly=True)
        try:
            spans = TraceStore(store).traces_since(
                [t for unit in batch for t in unit.trace_ids], since_ns, until_seq=until_seq
            )
        finally:
            store.close()
        return assemble(spans, idle_seconds=idle_seconds, now_ns=now)

    # first reading: which conversations there are, and whose
    found: list[tuple[str, int, int]] = []  # (conversation id, batch, cases it gives)
    agents_of: dict[str, set[str]] = {}
    turns_of: dict[str, int] = {}
    selection = TrafficSelection(cases=GeneratedCases(read=list, source="", n_cases=0, fingerprint_value=""))
    for number, batch in enumerate(batches):
        traffic = read(batch)
        selection.spans += traffic.spans_read
        selection.pending += len(traffic.pending)
        for reason, n in traffic.skipped.items():
            selection.skipped[reason] = selection.skipped.get(reason, 0) + n
        for conversation in traffic.conversations:
            turns_of[conversation.id] = sum(1 for m in conversation.messages if m.role == "user")
            found.append((conversation.id, number, turns_of[conversation.id] if per_turn else 1))
            agents_of[conversation.id] = _agents(conversation)
    conversations = [c for c in found if c[0] not in exclude]
    kept = [c for c in conversations if agent is None or agent in agents_of[c[0]]]
    selection.conversations = len(conversations)
    selection.not_this_agent = len(conversations) - len(kept)
    selection.already_scored = len(found) - len(conversations)
    if sample is not None and sample < len(kept):
        chosen = set(random.Random(seed).sample(range(len(kept)), sample))
        selection.not_sampled = len(kept) - sample
        kept = [c for i, c in enumerate(kept) if i in chosen]
    selection.conversation_ids = [c[0] for c in kept]
    wanted = set(selection.conversation_ids)
    in_batches = sorted({c[1] for c in kept})
    if gold is not None:
        selection.gold = gold.join_counts({cid: turns_of[cid] for cid in wanted}, per_turn=per_turn)

    def cases() -> Iterator[Any]:
        """Second reading: the chosen conversations' cases, a batch at a time."""
        from clineval.traces.assemble import cases_from_traffic

        for number in in_batches:
            traffic = read(batches[number])
            for conversation in traffic.conversations:
                if conversation.id not in wanted:
                    continue
                if gold is None:
                    yield from cases_from_traffic([conversation], per_turn=per_turn)
                    continue
                for case in cases_from_traffic([gold.apply(conversation)], per_turn=per_turn):
                    turn = case.metadata.get("turn") if per_turn else None
                    yield gold.complete(case, conversation.id, turn if isinstance(turn, int) else None)

    digest = hashlib.sha256()
    for entry in entries:
        digest.update(f"{entry.trace_id}\t{entry.conversation_id}\t{entry.spans}\n".encode())
    digest.update(json.dumps([selection.conversation_ids, per_turn, gold.digest if gold else None]).encode())
    selection.cases = GeneratedCases(
        read=cases,
        source=f"traces in {store_path} since {_iso(since_ns)}",
        n_cases=sum(c[2] for c in kept),
        fingerprint_value=digest.hexdigest()[:16],
    )
    return selection


def _agents(conversation: Any) -> set[str]:
    return {m.speaker for m in conversation.messages if m.role == "assistant" and m.speaker}


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def score_traffic(
    selection: TrafficSelection,
    metrics: Sequence[Any],
    *,
    store: str | Path,
    judge: Any = None,
    name: str | None = None,
    tags: dict[str, str] | None = None,
    progress: Any = None,
    settings: Mapping[str, Any] | None = None,
) -> Any:
    """Score the selected cases as a stored run (its tags say it came from traces).

    ``settings``: further :func:`clineval.api.evaluate` settings, e.g. ``executor="ray"``,
    ``ray_address``, ``judge_concurrency``. The cases go to the store as they are
    assembled and the results stay there (the returned result reads them back)."""
    from clineval.api import evaluate

    if not selection.cases:
        raise ConfigError(
            f"no conversation to score: {selection.spans:,} span(s) in the window, "
            f"{selection.conversations} finished conversation(s), {selection.pending} still arriving, "
            f"{selection.not_this_agent} of another agent"
        )
    return evaluate(
        selection.cases,
        list(metrics),
        judge=judge,
        store=store,
        name=name or "traffic",
        tags={"source": "traces", **(tags or {})},
        progress=progress,
        keep_results=False,
        **dict(settings or {}),
    )
