"""The review tables of the run store (clineval.store.reviews.ReviewStore): the history of
verdicts, the current ones, undo, claims, the run lock, all-or-nothing imports, old stores."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.review.conftest import ReviewStoreData

from clineval.errors import RunLockedError, StoreError
from clineval.model import ReviewQueue, ReviewRecord
from clineval.store.reviews import CLAIM_TTL_S, MAX_COMMENT, ReviewStore
from clineval.store.sqlite import RunStore


@pytest.fixture
def store(review_store: ReviewStoreData, tmp_path: Path) -> Iterator[RunStore]:
    """A copy of the module's store, to write to."""
    opened = RunStore(review_store.copy(tmp_path / "copy.db"))
    yield opened
    opened.close()


def _verdict(run_id: str, verdict: str | None, *, scale: str = "factuality", **extra: object) -> ReviewRecord:
    fields: dict[str, object] = {"case_id": "c01", "reviewer": "ann", **extra}
    return ReviewRecord(run_id=run_id, scale=scale, verdict=verdict, **fields)  # type: ignore[arg-type]


def _current(reviews: ReviewStore, run_id: str) -> list[tuple[str, str, str, str | None, str | None]]:
    return [(r.case_id, r.scale, r.reviewer, r.verdict, r.comment) for r in reviews.current(run_id)]


def test_history_keeps_every_row_and_current_is_the_newest_not_undone(
    store: RunStore, review_store: ReviewStoreData
) -> None:
    run = review_store.run_id
    reviews = ReviewStore(store)
    first = reviews.add(_verdict(run, "correct"))
    reviews.add(_verdict(run, "incorrect"))
    reviews.add(_verdict(run, "minor", scale="harm"))
    reviews.add(_verdict(run, "partly", reviewer="bob"))
    assert first.seq is not None and first.created_at > 0
    assert _current(reviews, run) == [
        ("c01", "factuality", "ann", "incorrect", None),
        ("c01", "harm", "ann", "minor", None),
        ("c01", "factuality", "bob", "partly", None),
    ]
    assert [r.verdict for r in reviews.history(run)] == ["correct", "incorrect", "minor", "partly"]
    assert reviews.current(run, reviewer="bob")[0].verdict == "partly"
    assert reviews.current(run, case_ids=["c02"]) == []
    assert reviews.reviewers(run) == ["ann", "bob"]
    assert reviews.runs_with_reviews() == {run: 3}
    assert reviews.current(review_store.other_id) == []


def test_a_retracted_row_leaves_the_item_unanswered(store: RunStore, review_store: ReviewStoreData) -> None:
    run = review_store.run_id
    reviews = ReviewStore(store)
    reviews.add(_verdict(run, None, scale="comment", comment="Too long."))
    reviews.add(_verdict(run, "correct"))
    reviews.add(_verdict(run, None, scale="comment", comment="", retracted=True))
    assert _current(reviews, run) == [("c01", "factuality", "ann", "correct", None)]
    history = list(reviews.history(run))
    assert [r.retracted for r in history] == [False, False, True]


def test_undo_is_a_stack_that_restores_the_verdict_before(
    store: RunStore, review_store: ReviewStoreData
) -> None:
    run = review_store.run_id
    reviews = ReviewStore(store)
    reviews.add(_verdict(run, "correct"))
    reviews.add(_verdict(run, "incorrect"))
    reviews.add(_verdict(run, "major", scale="harm"))
    reviews.add(_verdict(run, "partly", reviewer="bob"))
    undone = reviews.undo(run, "c01", "ann")  # ann's newest: harm major
    assert undone is not None and (undone.scale, undone.verdict) == ("harm", "major")
    assert _current(reviews, run) == [
        ("c01", "factuality", "ann", "incorrect", None),
        ("c01", "factuality", "bob", "partly", None),
    ]
    reviews.undo(run, "c01", "ann")  # factuality incorrect: correct is current again
    assert reviews.current(run, reviewer="ann")[0].verdict == "correct"
    reviews.undo(run, "c01", "ann")
    assert reviews.current(run, reviewer="ann") == []
    assert reviews.undo(run, "c01", "ann") is None
    # bob's verdict was never touched; the undone rows stay in the history, with the time
    assert reviews.current(run, reviewer="bob")[0].verdict == "partly"
    marked = [r for r in reviews.history(run) if "undone_at" in r.shown]
    assert [r.verdict for r in marked] == ["correct", "incorrect", "major"]


def test_claims_expire(store: RunStore, review_store: ReviewStoreData) -> None:
    reviews = ReviewStore(store)
    queue = ReviewQueue(
        id="q-test",
        run_id=review_store.run_id,
        created_at=time.time(),
        strategy="random",
        case_ids=["c01", "c02"],
    )
    reviews.create_queue(queue)
    reviews.claim("q-test", "c01", "ann")
    reviews.claim("q-test", "c02", "bob")
    assert reviews.claims("q-test") == {"c01": {"ann"}, "c02": {"bob"}}
    # ann's claim is older than the claim time-to-live: it lapsed
    with sqlite3.connect(store.path) as conn:
        conn.execute(
            "UPDATE review_claims SET claimed_at = claimed_at - ? WHERE reviewer = 'ann'", (CLAIM_TTL_S + 1,)
        )
    assert reviews.claims("q-test") == {"c02": {"bob"}}
    # a verdict given from the queue claims the case again
    reviews.add(_verdict(review_store.run_id, "correct", queue_id="q-test"))
    assert reviews.claims("q-test") == {"c01": {"ann"}, "c02": {"bob"}}
    assert reviews.get_queue("q-te").case_ids == ["c01", "c02"]


def test_add_is_refused_while_a_live_process_holds_the_run_lock(
    store: RunStore, review_store: ReviewStoreData
) -> None:
    run = review_store.run_id
    reviews = ReviewStore(store)
    lease = store.acquire_lease(run)  # this process, alive: as `clineval run --resume` would
    try:
        with pytest.raises(RunLockedError, match=f"^run {run} is being run by pid "):
            reviews.add(_verdict(run, "correct"))
        with pytest.raises(RunLockedError):
            reviews.add_many([_verdict(run, "correct")])
        with pytest.raises(RunLockedError):
            reviews.undo(run, "c01", "ann")
    finally:
        lease.release()
    assert list(reviews.history(run)) == []
    reviews.add(_verdict(run, "correct"))
    assert len(reviews.current(run)) == 1


def test_add_many_is_all_or_nothing(store: RunStore, review_store: ReviewStoreData) -> None:
    run = review_store.run_id
    reviews = ReviewStore(store)
    good = [_verdict(run, "correct"), _verdict(run, "none", scale="harm")]
    unknown_run = _verdict("no-such-run", "correct")  # the foreign key fails inside the transaction
    with pytest.raises(sqlite3.IntegrityError):
        reviews.add_many([good[0], unknown_run, good[1]], respect_lock=False)
    assert list(reviews.history(run)) == []
    too_long = _verdict(run, None, scale="comment", comment="x" * (MAX_COMMENT + 1))
    with pytest.raises(StoreError, match="at most 10,000 characters"):
        reviews.add_many([*good, too_long])
    assert list(reviews.history(run)) == []
    assert reviews.add_many(good) == 2
    assert len(reviews.current(run)) == 2


def test_a_read_only_store_without_review_tables_reads_as_empty(
    review_store: ReviewStoreData, tmp_path: Path
) -> None:
    path = review_store.copy(tmp_path / "old.db")
    with sqlite3.connect(path) as conn:  # a store written before the review tables existed
        for table in ("review_claims", "review_queue_cases", "review_queues", "reviews"):
            conn.execute(f"DROP TABLE {table}")
    store = RunStore(path, readonly=True)
    try:
        reviews = ReviewStore(store)
        assert not reviews.available
        assert reviews.current(review_store.run_id) == []
        assert list(reviews.history(review_store.run_id)) == []
        assert reviews.queues() == [] and reviews.reviewers(review_store.run_id) == []
        assert reviews.runs_with_reviews() == {} and reviews.claims("q") == {}
        with pytest.raises(StoreError, match="no review queue"):
            reviews.get_queue("latest")
    finally:
        store.close()


def test_claim_next_gives_two_reviewers_asking_at_once_different_cases(
    review_store: ReviewStoreData, tmp_path: Path
) -> None:
    """Two viewers on one store, each asking for its reviewer's next case at the same moment:
    with one reviewer per case they never get the same case (looking and claiming are one
    transaction); with two per case they share."""
    import threading

    store_path = review_store.copy(tmp_path / "claims.db")
    cases = ["c01", "c02", "c03", "c04"]
    with RunStore(store_path) as store:
        reviews = ReviewStore(store)
        for per_case, queue_id in ((1, "q-one"), (2, "q-two")):
            reviews.create_queue(
                ReviewQueue(
                    id=queue_id,
                    run_id=review_store.run_id,
                    created_at=1.0,
                    strategy="random",
                    per_case=per_case,
                    case_ids=cases,
                )
            )
    candidates = [(c, frozenset[str]()) for c in cases]
    for queue_id, per_case in (("q-one", 1), ("q-two", 2)):
        for _ in range(5):  # a few rounds: a race shows up now and then, not always
            got: dict[str, str | None] = {}
            start = threading.Barrier(2)
            with RunStore(store_path) as store:
                store.query("SELECT 1")
                with store.transaction() as conn:
                    conn.execute("DELETE FROM review_claims")

            def ask(
                reviewer: str,
                queue_id: str = queue_id,
                per_case: int = per_case,
                start: threading.Barrier = start,
                got: dict[str, str | None] = got,
            ) -> None:
                with RunStore(store_path) as own:  # a connection of its own, as each viewer has
                    start.wait()
                    got[reviewer] = ReviewStore(own).claim_next(queue_id, reviewer, candidates, per_case)

            threads = [threading.Thread(target=ask, args=(who,)) for who in ("ann", "bob")]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert got["ann"] is not None and got["bob"] is not None
            assert (got["ann"] == got["bob"]) is (per_case == 2), got
    with RunStore(store_path) as store:
        reviews = ReviewStore(store)
        held = reviews.claim_next("q-one", "ann", candidates, 1)
        # asking again keeps the case one holds; nobody else is given it
        assert reviews.claim_next("q-one", "ann", candidates, 1) == held
        assert reviews.claim_next("q-one", "carol", [(str(held), frozenset[str]())], 1) is None
        # someone else who has answered a case fills it too
        assert reviews.claim_next("q-one", "carol", [("c04", frozenset({"dan"}))], 1) is None
