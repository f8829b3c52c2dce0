"""Agreement of a run's metric and judge with its reviewers, checked against hand-worked values.

The small run below has three cases with two TBFact facts each and a factuality review per
case; every expected value is worked out by hand in the comments.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from clineval.agreement import cluster, stats
from clineval.calibration.baselines import content_word_share
from clineval.errors import ConfigError
from clineval.model import Case, ResultRecord, ReviewRecord, RunRecord, Score
from clineval.model.run import DatasetInfo
from clineval.review.agreement import review_agreement
from clineval.review.rows import Reviewed, collect, cross_fitted
from clineval.review.schema import DEFAULT_SCHEMA

RUN = "run-1"


def _record() -> RunRecord:
    return RunRecord(
        id=RUN,
        created_at=0.0,
        metrics=["tbfact"],
        dataset=DatasetInfo(source="test", fingerprint="x", n_cases=4),
        clineval_version="0",
        python="3.11",
        platform="test",
    )


def _fact(
    direction: str, n: int, text: str, label: str, support: float | None = None, importance: str = "high"
) -> dict:
    return {
        "direction": direction,
        "id": n,
        "fact": text,
        "category": "treatment",
        "importance": importance,
        "label": label,
        "reason": None if label == "entailed" else "missing",
        "evidence": "",
        "explanation": "",
        "support": support,
    }


# Six facts in three cases. Judge:    entailed, entailed, partial(0.5), not, entailed, not
#                           Reviewer: entailed, partly,   partly,       not, not,      not
FACTS = {
    "c1": [
        _fact("precision", 1, "aspirin 75 mg daily", "entailed", 1.0),
        _fact("precision", 2, "ticagrelor for 6 months", "entailed", 1.0),
    ],
    "c2": [
        _fact("precision", 1, "ramipril started", "partial", 0.5),
        _fact("recall", 1, "potassium check in two weeks", "not_entailed", 0.0),
    ],
    "c3": [
        _fact("precision", 1, "metformin stopped", "entailed", 1.0),
        _fact("recall", 1, "cardiac rehabilitation referral", "not_entailed", 0.0),
    ],
}
REVIEWED = {
    ("c1", "fact/tbfact/precision/1"): "entailed",
    ("c1", "fact/tbfact/precision/2"): "partly",
    ("c2", "fact/tbfact/precision/1"): "partly",
    ("c2", "fact/tbfact/recall/1"): "not",
    ("c3", "fact/tbfact/precision/1"): "not",
    ("c3", "fact/tbfact/recall/1"): "not",
}
VALUES = {"c1": 0.9, "c2": 0.6, "c3": 0.2, "c4": 0.4}
# factuality, first reviewer (ann) and second (bob)
ANN = {"c1": "correct", "c2": "partly", "c3": "incorrect", "c4": "correct"}
BOB = {"c1": "correct", "c2": "incorrect", "c3": "incorrect", "c4": "partly"}


def _loaded() -> dict[str, tuple[Case, list[ResultRecord]]]:
    loaded = {}
    for case_id, value in VALUES.items():
        case = Case(
            id=case_id,
            input="Summarise the discharge.",
            response="aspirin 75 mg daily and ticagrelor",
            reference="aspirin 75 mg daily; ticagrelor 90 mg twice daily for 12 months",
        )
        score = Score(value=value, details={"facts": FACTS.get(case_id, []), "judge": "offline"})
        loaded[case_id] = (case, [ResultRecord(run_id=RUN, case_id=case_id, metric="tbfact", score=score)])
    return loaded


def _reviews(*, with_bob: bool = True) -> list[ReviewRecord]:
    out: list[ReviewRecord] = []
    seq = 0

    def add(**kw: object) -> None:
        nonlocal seq
        seq += 1
        out.append(ReviewRecord(run_id=RUN, seq=seq, **kw))  # type: ignore[arg-type]

    for case_id, verdict in ANN.items():
        add(case_id=case_id, scale="factuality", reviewer="ann", verdict=verdict)
    for (case_id, item), verdict in REVIEWED.items():
        add(case_id=case_id, item=item, scale="verdict", reviewer="ann", verdict=verdict)
    if with_bob:
        for case_id, verdict in BOB.items():
            add(case_id=case_id, scale="factuality", reviewer="bob", verdict=verdict)
    return out


@pytest.fixture(scope="module")
def report():
    return review_agreement(_record(), DEFAULT_SCHEMA, _reviews(), _loaded())


def test_fact_level_kappa_accuracy_auc_by_hand(report) -> None:
    row = report.row("fact/tbfact/verdict")
    assert row is not None and row.n == 6 and row.cases == 3
    # confusion judge × reviewer (E, P, N): E [1, 1, 1], P [0, 1, 0], N [0, 0, 2]
    # p_o = 4/6; p_e = (3·1 + 1·2 + 2·3)/36 = 11/36; κ = (4/6 − 11/36)/(25/36) = 0.52
    assert row.get("cohen_kappa3").value == pytest.approx(0.52)
    assert row.get("accuracy").value == pytest.approx(4 / 6)
    # entailed or not: judge yes on f1, f2, f5; reviewers only on f1: p_o = 4/6, p_e = 18/36 → 1/3
    assert row.get("cohen_kappa2").value == pytest.approx(1 / 3)
    # credit of the one reviewer-entailed fact (1.0) against the five others (1, .5, 0, 1, 0):
    # ties count ½: (½ + 1 + 1 + ½ + 1)/5 = 0.8
    assert row.get("roc_auc").value == pytest.approx(0.8)
    # quadratic weights, order not < partly < entailed: observed 1 + 4 = 5; expected 29/3
    assert row.get("weighted_kappa").value == pytest.approx(1 - 5 / (29 / 3))
    for figure in row.statistics:
        assert figure.ci_low is not None and figure.ci_high is not None
        assert figure.ci_low <= figure.value <= figure.ci_high


def test_case_level_correlation_auc_kappa_by_hand(report) -> None:
    row = report.row("case/factuality/tbfact")
    assert row is not None and row.n == 4
    # ranks of the values [4, 3, 1, 2] and of the levels [3.5, 2, 1, 3.5]: ρ = 3 / √22.5
    assert row.get("spearman").value == pytest.approx(3 / math.sqrt(22.5))
    # correct: 0.9 and 0.4 against 0.6 and 0.2: 3 of 4 pairs ordered right
    assert row.get("roc_auc").value == pytest.approx(0.75)
    # value ≥ 0.5 says correct: c1, c2; the reviewers: c1, c4: p_o = ½ = p_e → κ 0
    assert row.get("cohen_kappa2").value == pytest.approx(0.0)


def test_reviewers_with_each_other_are_the_ceiling(report) -> None:
    row = report.row("case/factuality/tbfact")
    # ann [2, 1, 0, 2] and bob [2, 0, 0, 1]: agree on c1, c3: p_o = ½; p_e = (1·2 + 1·1 + 2·1)/16
    kappa = row.reviewer("cohen_kappa")
    assert row.reviewer_pairs == 4
    assert kappa.value == pytest.approx((0.5 - 5 / 16) / (1 - 5 / 16))
    assert row.reviewer("accuracy").value == pytest.approx(0.5)


def test_ties_of_two_reviewers_go_to_the_first(report) -> None:
    # c2: ann partly, bob incorrect → partly (ann answered first); c4 correct vs partly → correct
    assert (
        collect(_reviews())[("c2", "case", "factuality")].consensus(["correct", "partly", "incorrect"])
        == "partly"
    )
    entry = Reviewed("c9", "case", "factuality", {"a": "partly", "b": "incorrect", "c": "incorrect"})
    assert entry.consensus(["correct", "partly", "incorrect"]) == "incorrect"


def test_disagreements_list_the_serious_first_with_links(report) -> None:
    items = [(d.case_id, d.item) for d in report.disagreements if d.level == "fact"]
    # reviewers say not, judge entailed (c3) comes before reviewers partly, judge entailed (c1)
    assert items == [("c3", "fact/tbfact/precision/1"), ("c1", "fact/tbfact/precision/2")]
    cases = [d for d in report.disagreements if d.level == "case"]
    # c4: the reviewers say correct, tbfact 0.4 < 0.5
    assert [(d.case_id, d.metric_says) for d in cases] == [("c4", "0.4")]
    assert cases[0].link == "/runs/run-1/cases/c4"
    assert report.disagreements[0].link == "/runs/run-1/cases/c3#review-fact%2Ftbfact%2Fprecision%2F1"


def test_baselines_stand_beside_with_paired_differences(report) -> None:
    row = report.row("fact/tbfact/verdict")
    share = row.baseline("word_share", "roc_auc")
    assert share is not None
    shares = [
        content_word_share(text, evidence)
        for text, evidence in [
            ("aspirin 75 mg daily", "aspirin 75 mg daily; ticagrelor 90 mg twice daily for 12 months"),
            ("ticagrelor for 6 months", "aspirin 75 mg daily; ticagrelor 90 mg twice daily for 12 months"),
            ("ramipril started", "aspirin 75 mg daily; ticagrelor 90 mg twice daily for 12 months"),
            ("potassium check in two weeks", "aspirin 75 mg daily and ticagrelor"),
            ("metformin stopped", "aspirin 75 mg daily; ticagrelor 90 mg twice daily for 12 months"),
            ("cardiac rehabilitation referral", "aspirin 75 mg daily and ticagrelor"),
        ]
    ]
    # aspirin 75 mg daily: all 4 content words found; ticagrelor 6 months: 2 of 3 (no 6) ...
    assert shares == [1.0, pytest.approx(2 / 3), 0.0, 0.0, 0.0, 0.0]
    # the one entailed fact has the top share: AUC 1 for the baseline, 0.8 for the judge
    assert share.value.value == pytest.approx(1.0)
    assert share.difference.value == pytest.approx(0.8 - 1.0)
    assert share.difference.ci_low is not None and share.difference.ci_low <= share.difference.value


def test_one_reviewer_only_and_unknown_reviewer() -> None:
    only_bob = review_agreement(_record(), DEFAULT_SCHEMA, _reviews(), _loaded(), reviewer="bob")
    row = only_bob.row("case/factuality/tbfact")
    assert row is not None and row.reviewer_pairs == 0 and only_bob.reviewers == ["bob"]
    assert only_bob.row("fact/tbfact/verdict") is None  # bob reviewed no fact
    with pytest.raises(ConfigError, match="--reviewer carol"):
        review_agreement(_record(), DEFAULT_SCHEMA, _reviews(), _loaded(), reviewer="carol")


def test_no_reviews_says_what_to_do() -> None:
    empty = review_agreement(_record(), DEFAULT_SCHEMA, [], {})
    assert empty.rows == [] and "clineval review plan run-1" in empty.notes[0]


def test_unknown_metric_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="--metric rouge: run run-1 has no result of this metric"):
        review_agreement(_record(), DEFAULT_SCHEMA, _reviews(), _loaded(), metrics=["rouge"])


def test_undone_and_retracted_verdicts_do_not_count() -> None:
    reviews = _reviews(with_bob=False)
    reviews.append(
        ReviewRecord(run_id=RUN, seq=99, case_id="c4", scale="factuality", reviewer="ann", retracted=True)
    )
    found = collect(reviews)
    # the current rows are what ReviewStore.current gives; a retracted row is not among them,
    # so collect() only has to skip verdict-less rows
    assert found[("c4", "case", "factuality")].verdicts == {"ann": "correct"}


# --------------------------------------------------------------------------- the statistics underneath


def test_cluster_bootstrap_keeps_the_facts_of_a_case_together() -> None:
    # 10 cases of 5 facts: resampling cases gives a wider interval than resampling facts
    rng = np.random.default_rng(1)
    a = rng.integers(0, 3, 50)
    b = np.where(rng.random(50) < 0.6, a, rng.integers(0, 3, 50))
    groups = np.repeat(np.arange(10), 5)
    by_case = cluster.cluster_interval(cluster.kappa(a, b, labels=[0, 1, 2]), groups)
    assert by_case.value == pytest.approx(stats.cohen_kappa(a, b).value)
    weights = rng.integers(0, 3, 50).astype(float)
    repeated = np.repeat(np.arange(50), weights.astype(int))
    # multiplicities are the same as repeating the items
    assert cluster.kappa(a, b, labels=[0, 1, 2])(weights[None])[0] == pytest.approx(
        stats.cohen_kappa(a[repeated], b[repeated]).value
    )
    scores = rng.random(50)
    assert cluster.roc_auc(a == 0, scores)(weights[None])[0] == pytest.approx(
        stats.roc_auc((a == 0)[repeated], scores[repeated], positive=True).value
    )


def test_cluster_interval_of_one_case_has_no_interval() -> None:
    found = cluster.cluster_interval(cluster.accuracy([1, 1], [1, 0]), ["c1", "c1"])
    assert found.value == 0.5 and found.low is None and "one case" in (found.note or "")


def test_cross_fitted_threshold_is_chosen_on_the_other_half() -> None:
    scores = [0.1, 0.4, 0.35, 0.8, 0.7, 0.9, 0.2, 0.6]
    truth = [False, False, True, True, True, True, False, False]
    flags = cross_fitted(scores, truth, list("abcdefgh"))
    assert len(flags) == 8 and all(isinstance(f, bool) for f in flags)
    # every flag is 'score ≥ a threshold' within its half: the flagged items of a half score higher
    # than its unflagged ones
    from clineval.calibration.protocols import _half

    for half in (0, 1):
        members = [(s, f) for s, f, g in zip(scores, flags, "abcdefgh", strict=True) if _half(g) == half]
        flagged = [s for s, f in members if f]
        unflagged = [s for s, f in members if not f]
        assert not flagged or not unflagged or min(flagged) > max(unflagged)
