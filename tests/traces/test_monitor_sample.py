"""clineval monitor --sample: each round scores at most N new conversations, drawn at random;
those not drawn wait for a later round, and none is scored twice."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from tests.traces.test_bounded_selection import S, store  # noqa: F401 (the fixture)

from clineval.traces.monitor import monitor_round


def test_rounds_of_two_cover_five_conversations_once(store: Path) -> None:  # noqa: F811
    since = int((time.time() - 7200) * S)
    twin = store.with_name("twin.db")
    shutil.copyfile(store, twin)
    rounds = []
    scored: list[list[str] | None] = []
    for _ in range(4):
        outcome = monitor_round(
            store, ["latency"], since_ns=since, idle_seconds=0, sample=2, seed=1, progress=False
        )
        rounds.append(outcome.selection.conversation_ids)
        scored.append(None if outcome.result is None else sorted(c.id for c in outcome.result.cases))
    assert [len(r) for r in rounds] == [2, 2, 1, 0]
    # each round's run holds exactly the conversations it drew; the last drew none and made no run
    assert scored == [sorted(r) for r in rounds[:3]] + [None]
    seen = [cid for r in rounds for cid in r]
    assert sorted(seen) == ["c0", "c1", "c2", "c3", "s-legacy"]  # each exactly once
    # the same first round on a copy of the store draws the same conversations
    again = monitor_round(twin, ["latency"], since_ns=since, idle_seconds=0, sample=2, seed=1, progress=False)
    assert again.selection.conversation_ids == rounds[0]


def test_a_round_says_how_many_were_not_drawn(store: Path) -> None:  # noqa: F811
    from clineval.traces.monitor import describe

    since = int((time.time() - 7200) * S)
    outcome = monitor_round(store, ["latency"], since_ns=since, idle_seconds=0, sample=3, progress=False)
    line = describe(outcome.selection, "7d")
    assert "3 new conversation(s) to score" in line and "2 not sampled (left for a later round)" in line


def test_a_round_stored_but_not_marked_is_marked_not_scored_again(store: Path) -> None:  # noqa: F811
    """A signal between storing a round's run and marking its conversations: the next round
    marks them from the completed run instead of scoring them twice."""
    from clineval.store.sqlite import RunStore

    since = int((time.time() - 7200) * S)
    first = monitor_round(store, ["latency"], since_ns=since, idle_seconds=0, sample=2, progress=False)
    run_store = RunStore(store)
    try:
        with run_store.transaction() as conn:  # the gap: the run is completed, nothing marked
            conn.execute("DELETE FROM traffic_scored")
    finally:
        run_store.close()
    second = monitor_round(store, ["latency"], since_ns=since, idle_seconds=0, progress=False)
    assert second.selection.already_scored == 2
    assert sorted(second.selection.conversation_ids) == sorted(
        {"c0", "c1", "c2", "c3", "s-legacy"} - set(first.selection.conversation_ids)
    )
