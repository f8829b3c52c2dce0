"""Planning a review queue (clineval.review.queue.plan_queue) on hand-made scores.

The store (see conftest.py): c01-c10 answered, with alpha and beta as listed in SCORES;
c11 the agent failed on; c12 answered but scored by neither alpha nor beta. Expected
values are worked out by hand in the comments.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.review.conftest import ReviewStoreData

from clineval.errors import ConfigError
from clineval.model import RunRecord
from clineval.review.queue import plan_queue
from clineval.review.schema import DEFAULT_SCHEMA
from clineval.store.sqlite import RunStore

FAILED = "the agent failed on the case (nothing to review)"


@pytest.fixture(scope="module")
def store(review_store: ReviewStoreData) -> Iterator[RunStore]:
    opened = RunStore(review_store.path, readonly=True)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def record(store: RunStore, review_store: ReviewStoreData) -> RunRecord:
    return store.get_run(review_store.run_id)


# --- random ---------------------------------------------------------------------------


def test_random_is_reproducible_by_seed_and_differs_across_seeds(store: RunStore, record: RunRecord) -> None:
    first = plan_queue(store, record, n=5, seed=3, schema=DEFAULT_SCHEMA)
    again = plan_queue(store, record, n=5, seed=3, schema=DEFAULT_SCHEMA)
    assert first.queue.case_ids == again.queue.case_ids
    assert len(first.queue.case_ids) == 5 and len(set(first.queue.case_ids)) == 5
    others = [plan_queue(store, record, n=5, seed=s, schema=DEFAULT_SCHEMA).queue.case_ids for s in (4, 5, 6)]
    assert any(o != first.queue.case_ids for o in others)
    # the answered cases: c01-c10 and c12 (c11 failed), whatever the seed
    everything = plan_queue(store, record, n=50, seed=1, schema=DEFAULT_SCHEMA)
    assert sorted(everything.queue.case_ids) == [f"c{i:02d}" for i in range(1, 11)] + ["c12"]
    assert everything.eligible == 11
    assert everything.left_out == {FAILED: 1, "asked for 50, only 11 case(s) could be planned": 39}
    assert first.queue.strategy == "random" and first.queue.seed == 3 and first.queue.metrics == []


# --- stratified -------------------------------------------------------------------------

# alpha over the ten scored, answered cases, in order:
#   c01 0, c02 0, c03 0, c04 .1, c05 .2, c06 .5, c07 .5, c08 .8, c09 .9, c10 1
# Five strata of two cases would cut the ties 0/0/0 and .5/.5; each boundary inside a run of
# ties moves past it: [c01 c02 c03] [c04] [c05 c06 c07] [c08] [c09 c10].


def test_stratified_equal_allocation_with_ties(store: RunStore, record: RunRecord) -> None:
    plan = plan_queue(store, record, n=5, strategy="stratified", metrics=["alpha"], schema=DEFAULT_SCHEMA)
    assert plan.strata == [
        (0.0, 0.0, 3, 1),
        (0.1, 0.1, 1, 1),
        (0.2, 0.5, 3, 1),
        (0.8, 0.8, 1, 1),
        (0.9, 1.0, 2, 1),
    ]
    chosen = set(plan.queue.case_ids)
    assert len(chosen & {"c01", "c02", "c03"}) == 1 and "c04" in chosen and "c08" in chosen
    assert len(chosen & {"c05", "c06", "c07"}) == 1 and len(chosen & {"c09", "c10"}) == 1
    assert plan.eligible == 10
    # c12 is not scored by alpha; c11 failed
    assert plan.left_out == {FAILED: 1, "not scored by alpha": 1}
    assert plan.queue.metrics == ["alpha"]
    assert plan.queue.notes["c04"] == "alpha 0.100, stratum 2 of 5 (0.100–0.100)"


def test_stratified_a_stratum_too_small_gives_its_share_to_the_others(
    store: RunStore, record: RunRecord
) -> None:
    # n = 8 over strata of 3, 1, 3, 1, 2 cases: one from each (5), then one more from each
    # stratum that has room (the 1-case strata have none): 2, 1, 2, 1, 2
    plan = plan_queue(store, record, n=8, strategy="stratified", metrics=["alpha"], schema=DEFAULT_SCHEMA)
    assert [row[3] for row in plan.strata] == [2, 1, 2, 1, 2]
    assert len(plan.queue.case_ids) == 8
    assert {"c04", "c08", "c09", "c10"} <= set(plan.queue.case_ids)


def test_stratified_order_is_mixed_but_seeded(store: RunStore, record: RunRecord) -> None:
    plans = [
        plan_queue(
            store, record, n=10, strategy="stratified", metrics=["alpha"], seed=s, schema=DEFAULT_SCHEMA
        )
        for s in (0, 0, 1)
    ]
    assert plans[0].queue.case_ids == plans[1].queue.case_ids
    assert (
        sorted(plans[0].queue.case_ids)
        == sorted(plans[2].queue.case_ids)
        == [f"c{i:02d}" for i in range(1, 11)]
    )
    ordered = sorted(plans[0].queue.case_ids)
    assert plans[0].queue.case_ids != ordered or plans[2].queue.case_ids != ordered


def test_stratified_without_a_metric_takes_the_first_with_values_in_0_1(
    store: RunStore, record: RunRecord
) -> None:
    # the default schema compares factuality with tbfact, which the run has
    plan = plan_queue(store, record, n=4, strategy="stratified", schema=DEFAULT_SCHEMA)
    assert plan.queue.metrics == ["tbfact"]


# --- disagreement ---------------------------------------------------------------------

# Percentile ranks (ties share their mean rank; (rank - 1) / 9) over c01-c10:
#   alpha: c01-c03 1/9, c04 3/9, c05 4/9, c06 c07 5.5/9, c08 7/9, c09 8/9, c10 1
#   beta:  c01 0, c10 1/9, c02 2/9, c03 3/9, c04 4/9, c05 5/9, c06 6/9, c07 7/9, c08 8/9, c09 1
# gaps: c10 8/9, c03 2/9, c07 1.5/9, c06 .5/9, the others 1/9. The top three are c10, c03,
# c07; raw differences would have put c04 and c05 (0.2 each) before c07 (0.1).


def test_disagreement_of_two_metrics_ranks_percentile_ranks(store: RunStore, record: RunRecord) -> None:
    plan = plan_queue(
        store, record, n=3, strategy="disagreement", metrics=["alpha", "beta"], schema=DEFAULT_SCHEMA
    )
    assert sorted(plan.queue.case_ids) == ["c03", "c07", "c10"]
    assert plan.queue.notes["c10"] == "alpha 1.000 vs beta 0.050 (difference of percentile ranks 0.889)"
    assert plan.left_out == {FAILED: 1, "not scored by both": 1}
    assert plan.eligible == 10


def test_disagreement_of_two_runs_ranks_raw_differences(
    store: RunStore, record: RunRecord, review_store: ReviewStoreData
) -> None:
    # the other run's alpha differs on c02 (0 -> 0.9), c04 (0.1 -> 0.5), c09 (0.9 -> 0.7):
    # raw gaps 0.9, 0.4, 0.2. (Percentile ranks would put c05 and c09 before c04.)
    other = store.get_run(review_store.other_id)
    plan = plan_queue(
        store,
        record,
        n=2,
        strategy="disagreement",
        metrics=["alpha"],
        compare=(other, store),
        schema=DEFAULT_SCHEMA,
    )
    assert sorted(plan.queue.case_ids) == ["c02", "c04"]
    assert plan.queue.compare_run == other.id
    note = plan.queue.notes["c02"]
    assert note == f"alpha ({record.id}) 0.000 vs alpha ({other.id}) 0.900 (difference 0.900)"


# --- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "--n 0: plan at least one case"),
        ({"n": 3, "seed": -1}, "--seed -1: a seed is a whole number from 0"),
        ({"n": 3, "per_case": 0}, "--reviewers-per-case 0: from 1 to 20 reviewers per case"),
        ({"n": 3, "per_case": 21}, "--reviewers-per-case 21: from 1 to 20 reviewers per case"),
        ({"n": 3, "strategy": "stratified", "strata": 0}, "--strata 0: at least one stratum"),
        (
            {"n": 3, "strategy": "sorted"},
            "--strategy sorted: expected one of random, stratified, disagreement",
        ),
        ({"n": 3, "metrics": ["alpha"]}, "--metric and --vs choose what a stratified or disagreement plan"),
        (
            {"n": 3, "strategy": "stratified", "metrics": ["alpha", "beta"]},
            "a stratified plan looks at one metric",
        ),
        ({"n": 3, "strategy": "stratified", "metrics": ["gamma"]}, "--metric gamma: run "),
        (
            {"n": 3, "strategy": "disagreement", "metrics": ["alpha"]},
            "a disagreement plan compares two scores",
        ),
        ({"n": 3, "strategy": "disagreement", "metrics": ["alpha", "alpha"]}, "--metric alpha twice"),
        ({"n": 3, "strategy": "disagreement", "metrics": ["alpha", "gamma"]}, "--metric gamma: run "),
    ],
)
def test_errors(store: RunStore, record: RunRecord, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        plan_queue(store, record, schema=DEFAULT_SCHEMA, **kwargs)  # type: ignore[arg-type]
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_disagreement_errors_with_another_run(
    store: RunStore, record: RunRecord, review_store: ReviewStoreData
) -> None:
    other = store.get_run(review_store.other_id)
    with pytest.raises(ConfigError, match=rf"^--vs {other.id}: that run has no scored result of beta$"):
        plan_queue(
            store,
            record,
            n=2,
            strategy="disagreement",
            metrics=["beta"],
            compare=(other, store),
            schema=DEFAULT_SCHEMA,
        )
    with pytest.raises(ConfigError, match="takes one metric scored in both runs"):
        plan_queue(
            store,
            record,
            n=2,
            strategy="disagreement",
            metrics=["alpha", "beta"],
            compare=(other, store),
            schema=DEFAULT_SCHEMA,
        )
