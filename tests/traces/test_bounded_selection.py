"""Selecting traffic reads and assembles a batch of whole conversations at a time: the cases
are the same whatever the batch size, a conversation spread over several traces is never
cut in two, and the cases are read lazily (what keeps 100,000 spans under 500 MB; the figure
is benchmarks/traces_scale.py's)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from tests.traces.test_assemble import S, single_agent_current, span, text

from clineval.conversations.cases import conversation_of
from clineval.datasets.streams import GeneratedCases
from clineval.errors import DatasetError
from clineval.model import Case
from clineval.model.trace import SpanRecord
from clineval.store.sqlite import RunStore
from clineval.store.traces import TraceStore
from clineval.traces.score import TrafficSelection, select_traffic


def _moved(
    spans: list[SpanRecord], *, trace: str, conversation: str | None, shift_s: float
) -> list[SpanRecord]:
    moved = []
    for s in spans:
        attributes = {k: v for k, v in s.attributes.items() if k != "gen_ai.conversation.id"}
        if conversation is not None and "gen_ai.conversation.id" in s.attributes:
            attributes["gen_ai.conversation.id"] = conversation
        moved.append(
            s.model_copy(
                update={
                    "trace_id": trace,
                    "attributes": attributes,
                    "start_time_unix_nano": s.start_time_unix_nano + int(shift_s * S),
                    "end_time_unix_nano": s.end_time_unix_nano + int(shift_s * S),
                }
            )
        )
    return moved


def _second_turn(trace: str, at: float, key: str, conversation: str) -> SpanRecord:
    """A later chat call of the same conversation, in a trace of its own."""
    return span(
        9,
        "chat m-1",
        at,
        at + 1,
        trace=trace,
        attrs={
            key: conversation,
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps([text("user", "And the sodium?")]),
            "gen_ai.output.messages": json.dumps([text("assistant", "Sodium is 139 mmol/L.")]),
        },
    )


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    return traffic_store(tmp_path)


def traffic_store(tmp_path: Path) -> Path:
    """Five conversations, 30 s apart, an hour ago: ``c0``..``c2`` in one trace each; ``c3``
    in two traces 10 s apart (a second turn), with another conversation's trace between
    them; ``s-legacy`` named only by OpenInference's ``session.id``, in two traces, stored
    as an older clineval stored it (no conversation column)."""
    base = time.time() - 3600 - 100
    spans: list[SpanRecord] = []
    for n in range(3):
        spans += _moved(
            single_agent_current(), trace=f"{n:032x}", conversation=f"c{n}", shift_s=base + 30 * n
        )
    spans += _moved(single_agent_current(), trace="a" * 32, conversation="c3", shift_s=base + 90)
    spans.append(_second_turn("b" * 32, base + 100 + 120, "gen_ai.conversation.id", "c3"))
    legacy = _moved(single_agent_current(), trace="c" * 32, conversation=None, shift_s=base + 95)
    legacy = [s.model_copy(update={"attributes": {**s.attributes, "session.id": "s-legacy"}}) for s in legacy]
    spans += legacy
    spans.append(_second_turn("d" * 32, base + 100 + 125, "session.id", "s-legacy"))
    db = tmp_path / "clineval.db"
    run_store = RunStore(db)
    try:
        assert TraceStore(run_store).add(spans).stored == len(spans)
        with run_store.transaction() as conn:  # as an older clineval stored session.id spans
            conn.execute(
                "UPDATE spans SET conversation_id = NULL WHERE trace_id IN (?, ?)", ("c" * 32, "d" * 32)
            )
    finally:
        run_store.close()
    return db


def _read(
    db: Path, batch_spans: int, *, per_turn: bool = False, sample: int | None = None, seed: int = 0
) -> tuple[TrafficSelection, list[Case]]:
    selection = select_traffic(
        db,
        since_ns=int((time.time() - 7200) * S),
        idle_seconds=0,
        batch_spans=batch_spans,
        per_turn=per_turn,
        sample=sample,
        seed=seed,
    )
    return selection, list(selection.cases)


def test_the_batch_size_changes_nothing_but_memory(store: Path) -> None:
    one, cases_one = _read(store, batch_spans=1)  # a conversation (its traces) per batch
    whole, cases_whole = _read(store, batch_spans=1_000_000)  # everything in one batch
    assert [c.model_dump() for c in cases_one] == [c.model_dump() for c in cases_whole]
    assert [c.id for c in cases_one] == ["c0", "c1", "c2", "c3", "s-legacy"]  # first started first
    assert one.spans == whole.spans == 3 * 4 + 5 + 5
    assert len(one.cases) == 5


def test_a_conversation_over_two_traces_is_one_case(store: Path) -> None:
    _, cases = _read(store, batch_spans=1)
    by_id = {c.id: c for c in cases}
    for cid, trace_ids in (("c3", ["a" * 32, "b" * 32]), ("s-legacy", ["c" * 32, "d" * 32])):
        case = by_id[cid]
        assert case.metadata["trace_ids"] == trace_ids
        assert case.input == "And the sodium?" and case.response == "Sodium is 139 mmol/L."
        conversation = conversation_of(case)
        assert conversation is not None and [m.role for m in conversation.messages].count("user") == 2


def test_per_turn_counts_and_sampling_hold_across_batches(store: Path) -> None:
    selection, cases = _read(store, batch_spans=1, per_turn=True)
    assert len(selection.cases) == len(cases) == 7
    assert [c.id for c in cases if c.id.startswith("c3")] == ["c3#turn1", "c3#turn2"]
    sampled, cases = _read(store, batch_spans=1, sample=2, seed=3)
    assert len(cases) == 2 and sampled.not_sampled == 3
    assert [c.id for c in cases] == sampled.conversation_ids
    _, cases_again = _read(store, batch_spans=1_000, sample=2, seed=3)
    assert [c.id for c in cases_again] == [c.id for c in cases]


def test_spans_arriving_after_the_selection_wait_for_the_next(store: Path) -> None:
    selection = select_traffic(store, since_ns=int((time.time() - 7200) * S), idle_seconds=0, batch_spans=1)
    run_store = RunStore(store)
    try:  # a late span of c0 arrives between choosing and reading
        late = _second_turn("0" * 32, time.time() - 3600, "gen_ai.conversation.id", "c0")
        assert TraceStore(run_store).add([late.model_copy(update={"span_id": "f" * 16})]).stored == 1
    finally:
        run_store.close()
    cases = list(selection.cases)
    assert cases[0].id == "c0" and cases[0].response == "Potassium is high at 5.9 mmol/L."


def test_generated_cases_that_change_while_read_are_an_error() -> None:
    cases = [Case(id="a", input="q"), Case(id="b", input="q")]
    stream = GeneratedCases(
        read=lambda: iter(cases), source="traces in x.db", n_cases=3, fingerprint_value="f"
    )
    with pytest.raises(DatasetError, match=r"traces in x\.db: gave 2 case"):
        list(stream)
    stream = GeneratedCases(
        read=lambda: iter(cases), source="traces in x.db", n_cases=1, fingerprint_value="f"
    )
    with pytest.raises(DatasetError, match="more than 1"):
        list(stream)
    assert [
        c.id for c in GeneratedCases(read=lambda: cases, source="s", n_cases=2, fingerprint_value="f")
    ] == ["a", "b"]


def test_a_traffic_run_resumes_like_any_run(store: Path) -> None:
    """The cases are in the store from the start, so `clineval run --resume` finishes an
    interrupted traffic run without reading the spans again."""
    from clineval.api import evaluate
    from clineval.traces.score import score_traffic

    selection = select_traffic(store, since_ns=int((time.time() - 7200) * S), idle_seconds=0, batch_spans=1)
    first = score_traffic(selection, ["conversational_faithfulness", "latency"], store=store, progress=False)
    run_store = RunStore(store)
    try:  # as if interrupted after three conversations
        with run_store.transaction() as conn:
            conn.execute(
                "DELETE FROM results WHERE run_id = ? AND case_id IN ('c3', 's-legacy')", (first.run_id,)
            )
            conn.execute("UPDATE runs SET status = 'interrupted' WHERE id = ?", (first.run_id,))
            conn.execute("DELETE FROM spans")  # the spans are not needed any more
    finally:
        run_store.close()
    resumed = evaluate(resume=str(first.run_id), store=str(store), progress=False)
    assert resumed.run.status == "completed" and resumed.run.tags["source"] == "traces"
    values = {(r.case_id, r.metric): r.score.value for r in resumed.results}
    assert len(values) == 10
    # c3 and s-legacy answer the sodium question from a potassium result: not grounded
    assert [values[(c, "conversational_faithfulness")] for c in ("c0", "c1", "c2", "c3", "s-legacy")] == [
        1.0,
        1.0,
        1.0,
        0.0,
        0.0,
    ]
