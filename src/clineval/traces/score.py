"""Scoring traffic: the stored spans of a time window, assembled into conversations and
cases, scored as a normal clineval run (``clineval traces score``).

Each case keeps its trace and conversation ids in its metadata, so a score leads back to
what the deployed agent did. Conversations whose last span is younger than the idle time
are held back (they may still be arriving) and counted.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Sequence, Set
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clineval.errors import ConfigError

__all__ = ["TrafficSelection", "parse_duration", "parse_since", "score_traffic", "select_traffic"]

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


@dataclass
class TrafficSelection:
    """The cases to score and what was left out."""

    cases: list[Any]
    conversations: int = 0
    pending: int = 0
    spans: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    not_this_agent: int = 0
    not_sampled: int = 0
    already_scored: int = 0
    conversation_ids: list[str] = field(default_factory=list)


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
) -> TrafficSelection:
    """The cases of the conversations stored since ``since_ns`` (see the module docstring);
    finished conversations whose id is in ``exclude`` (already scored) are counted, not kept."""
    from clineval.store.sqlite import RunStore
    from clineval.store.traces import TraceStore
    from clineval.traces.assemble import assemble, cases_from_traffic

    store = RunStore(Path(store_path))
    try:
        traces = TraceStore(store)
        spans = traces.since(since_ns) if traces.available else []
    finally:
        store.close()
    traffic = assemble(spans, idle_seconds=idle_seconds, now_ns=now_ns)
    finished = list(traffic.conversations)
    conversations = [c for c in finished if c.id not in exclude]
    kept = [c for c in conversations if agent is None or agent in _agents(c)]
    selection = TrafficSelection(
        cases=[],
        conversations=len(conversations),
        pending=len(traffic.pending),
        spans=len(spans),
        skipped=dict(traffic.skipped),
        not_this_agent=len(conversations) - len(kept),
        already_scored=len(finished) - len(conversations),
    )
    if sample is not None and sample < len(kept):
        chosen = set(random.Random(seed).sample(range(len(kept)), sample))
        selection.not_sampled = len(kept) - sample
        kept = [c for i, c in enumerate(kept) if i in chosen]
    selection.conversation_ids = [c.id for c in kept]
    selection.cases = cases_from_traffic(kept, per_turn=per_turn)
    return selection


def _agents(conversation: Any) -> set[str]:
    return {m.speaker for m in conversation.messages if m.role == "assistant" and m.speaker}


def score_traffic(
    selection: TrafficSelection,
    metrics: Sequence[Any],
    *,
    store: str | Path,
    judge: Any = None,
    name: str | None = None,
    tags: dict[str, str] | None = None,
    progress: Any = None,
) -> Any:
    """Score the selected cases as a stored run (its tags say it came from traces)."""
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
    )
