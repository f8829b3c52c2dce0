"""Scoring traffic on a schedule (``clineval monitor``): each round scores the conversations
not scored before, as one run tagged ``source=traces`` and ``monitor=1``.

Which conversations were scored, and in which run, is kept in the run store
(``traffic_scored``, :meth:`clineval.store.traces.TraceStore.mark_scored`), so a cron job
(one round per call) or a long-lived process (a round every few minutes) never scores a
conversation twice. A conversation still arriving (its last span younger than the idle
time) is held back and picked up by a later round. Conversations are marked scored only
after their run is stored, and with SIGINT/SIGTERM held off for that one transaction: an
interrupted round leaves its run marked interrupted and its conversations unmarked, to be
scored again by the next round.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clineval.conversations.gold import GoldLabels
from clineval.traces.score import TrafficSelection, score_traffic, select_traffic

__all__ = ["RoundOutcome", "describe", "mark_finished_rounds", "monitor_round", "run_monitor"]


@dataclass
class RoundOutcome:
    """One round: what was selected, the run it made (``None`` when nothing was new)."""

    selection: TrafficSelection
    result: Any = None

    @property
    def run_id(self) -> str | None:
        return None if self.result is None else str(self.result.run_id)


def describe(selection: TrafficSelection, window: str) -> str:
    """The one line a round prints about what it found."""
    return (
        f"{selection.spans:,} span(s) since {window}: {len(selection.conversation_ids)} new conversation(s) "
        f"to score, {selection.already_scored} already scored, {selection.pending} still arriving "
        f"(held back), {selection.not_this_agent} of another agent"
        + (f", {selection.not_sampled} not sampled (left for a later round)" if selection.not_sampled else "")
    )


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends (on the main thread, where they arrive)."""
    held = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def monitor_round(
    store_path: str | Path,
    metrics: Sequence[Any],
    *,
    since_ns: int,
    agent: str | None = None,
    idle_seconds: float = 300.0,
    sample: int | None = None,
    seed: int = 0,
    gold: GoldLabels | None = None,
    judge: Any = None,
    name: str | None = None,
    tags: dict[str, str] | None = None,
    progress: Any = None,
    now_ns: int | None = None,
    on_selected: Callable[[TrafficSelection], None] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> RoundOutcome:
    """Score the finished conversations since ``since_ns`` not scored before, as one run.

    With ``sample``, at most that many of them, drawn at random, seeded by ``seed`` plus
    the number of conversations already scored (each round draws afresh; the same round run
    again draws the same); those not drawn are not marked scored, so a later round may
    draw them.

    ``settings``: further :func:`clineval.api.evaluate` settings (``executor="ray"``, ...)."""
    from clineval.store.sqlite import RunStore
    from clineval.store.traces import TraceStore

    store = RunStore(Path(store_path))
    try:
        mark_finished_rounds(store)
        scored = TraceStore(store).scored_conversations()
    finally:
        store.close()
    selection = select_traffic(
        store_path,
        since_ns=since_ns,
        agent=agent,
        idle_seconds=idle_seconds,
        now_ns=now_ns,
        exclude=scored,
        sample=sample,
        seed=seed + len(scored),
        gold=gold,
    )
    if on_selected is not None:
        on_selected(selection)
    if not selection.cases:
        return RoundOutcome(selection)
    result = score_traffic(
        selection,
        metrics,
        store=store_path,
        judge=judge,
        name=name or "traffic monitor",
        tags={"monitor": "1", **(tags or {})},
        progress=progress,
        settings=settings,
    )
    store = RunStore(Path(store_path))
    try:
        with _signals_held():
            TraceStore(store).mark_scored(selection.conversation_ids, str(result.run_id))
    finally:
        store.close()
    return RoundOutcome(selection, result)


def mark_finished_rounds(store: Any) -> int:
    """Mark the conversations of completed monitor runs that are not marked yet: a round
    stopped by a signal after its run was stored as completed and before its conversations
    were marked (a narrow gap) would otherwise have them scored again by the next round.
    How many conversations this marked."""
    from clineval.store.traces import TraceStore

    if not store.has_table("traffic_scored"):
        return 0
    marked_runs = {row[0] for row in store.query("SELECT DISTINCT run_id FROM traffic_scored")}
    traces = TraceStore(store)
    marked = 0
    for run in store.list_runs():
        tags = run.tags or {}
        if tags.get("monitor") != "1" or tags.get("source") != "traces" or run.status != "completed":
            continue
        if run.id in marked_runs:
            continue
        cases = (case for chunk in store.iter_cases(run.id) for case in chunk)
        ids = [str(case.metadata.get("conversation_id", case.id)) for case in cases]
        with _signals_held():
            marked += traces.mark_scored(ids, run.id)
    return marked


def run_monitor(
    round_fn: Callable[[], RoundOutcome],
    *,
    every_s: float | None,
    sleep: Callable[[float], None] = time.sleep,
    rounds: int | None = None,
) -> list[RoundOutcome]:
    """One round (``every_s`` None), or a round every ``every_s`` seconds (counted from each
    round's start) until interrupted, or ``rounds`` rounds (for tests)."""
    outcomes: list[RoundOutcome] = []
    while True:
        started = time.monotonic()
        outcomes.append(round_fn())
        if every_s is None or (rounds is not None and len(outcomes) >= rounds):
            return outcomes
        sleep(max(0.0, every_s - (time.monotonic() - started)))
