"""Aggregates with hand-worked values."""

from __future__ import annotations

import math

import pytest

from clineval.model import Case, ResultRecord, Score
from clineval.results import aggregate, bootstrap_ci


def _r(case_id: str, metric: str, score: Score) -> ResultRecord:
    return ResultRecord(run_id="r", case_id=case_id, metric=metric, score=score)


def test_mean_std_counts_exclude_errors_and_na() -> None:
    results = [
        _r("1", "m", Score(value=1.0)),
        _r("2", "m", Score(value=0.0)),
        _r("3", "m", Score(value=1.0)),
        _r("4", "m", Score(value=1.0)),
        _r("5", "m", Score.failed("judge timed out")),
        _r("6", "m", Score.not_applicable("no informative sentence")),
    ]
    (agg,) = aggregate(results)
    # mean of [1, 0, 1, 1] = 0.75; sample variance = (3 * 0.25**2 + 0.75**2) / 3 = 0.25 -> std 0.5
    assert (agg.n, agg.scored, agg.errors, agg.not_applicable) == (6, 4, 1, 1)
    assert agg.mean == 0.75 and math.isclose(agg.std or 0, 0.5)
    assert (agg.min, agg.max) == (0.0, 1.0)
    assert agg.ci_low is not None and agg.ci_high is not None
    assert 0.0 <= agg.ci_low <= 0.75 <= agg.ci_high <= 1.0
    assert aggregate(results) == aggregate(results)  # fixed seed: same interval every time


def test_sub_scores_and_groups() -> None:
    cases = [
        Case(id="1", metadata={"ward": "renal"}),
        Case(id="2", metadata={"ward": "cardio"}),
        Case(id="3"),
    ]
    results = [
        _r("1", "rouge", Score(value=0.5, sub_scores={"rouge1": 0.6})),
        _r("2", "rouge", Score(value=0.3, sub_scores={"rouge1": 0.4})),
        _r("3", "rouge", Score.failed("no reference")),
    ]
    overall = {a.metric: a for a in aggregate(results, cases=cases)}
    assert math.isclose(overall["rouge"].mean or 0, 0.4)
    assert math.isclose(overall["rouge.rouge1"].mean or 0, 0.5)
    assert overall["rouge.rouge1"].errors == 1  # shares its metric's unscored case
    grouped = {(a.metric, a.group): a for a in aggregate(results, cases=cases, by="ward")}
    assert grouped[("rouge", "renal")].mean == 0.5
    assert grouped[("rouge", "cardio")].mean == 0.3
    assert grouped[("rouge", "(missing)")].errors == 1 and grouped[("rouge", "(missing)")].mean is None


def test_bootstrap_edge_cases() -> None:
    assert bootstrap_ci([0.7]) is None
    assert bootstrap_ci([]) is None
    assert bootstrap_ci([2.0, 2.0, 2.0]) == (2.0, 2.0)
    low, high = bootstrap_ci([0.0] * 50 + [1.0] * 50) or (0, 0)
    # the mean of 100 Bernoulli(0.5) draws has s.e. 0.05: the 95% interval is about +-0.1
    assert 0.38 < low < 0.45 and 0.55 < high < 0.62


def test_single_value_has_no_std() -> None:
    (agg,) = aggregate([_r("1", "latency", Score(value=1.5))])
    assert agg.mean == 1.5 and agg.std is None and agg.ci_low is None


# 50 ones and 50 zeros: the mean of a resample of 100 is Binomial(100, 1/2) / 100. Its 2.5 %
# and 97.5 % quantiles are 40 and 60 (P(X <= 39) = 0.018 < 0.025 <= P(X <= 40) = 0.028, and
# symmetrically), its 5 % and 95 % quantiles 42 and 58 (P(X <= 41) = 0.044 < 0.05 <=
# P(X <= 42) = 0.067). So the 95 % interval is (0.40, 0.60), width 0.20, and a 90 % one
# (0.42, 0.58), width 0.16; 2,000 resamples on the fixed stream land on these values.
HALF_AND_HALF = [1.0] * 50 + [0.0] * 50


def test_the_default_interval_is_95_percent_with_a_hand_worked_width() -> None:
    low, high = bootstrap_ci(HALF_AND_HALF) or (math.nan, math.nan)
    assert low == pytest.approx(0.40, abs=0.005) and high == pytest.approx(0.60, abs=0.005)
    assert high - low == pytest.approx(0.20, abs=0.01)
    assert bootstrap_ci(HALF_AND_HALF, confidence=0.95) == (low, high)
    low90, high90 = bootstrap_ci(HALF_AND_HALF, confidence=0.90) or (math.nan, math.nan)
    assert high90 - low90 == pytest.approx(0.16, abs=0.01)
    # the table's interval is the default one
    (agg,) = aggregate([_r(str(i), "m", Score(value=v)) for i, v in enumerate(HALF_AND_HALF)])
    assert (agg.ci_low, agg.ci_high) == (low, high)
