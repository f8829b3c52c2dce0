"""Agreement statistics against values worked out by hand, degenerate inputs, and the bootstrap."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from clineval.agreement import (
    Estimate,
    accuracy,
    bootstrap_ci,
    cohen_kappa,
    f1,
    fleiss_kappa,
    kendall,
    pearson,
    roc_auc,
    spearman,
    within_one_accuracy,
)

# --- Cohen's kappa ------------------------------------------------------------------


def test_kappa_of_a_2x2_table() -> None:
    #            b: yes   b: no
    # a: yes       20       5     (a says yes 25/50 = 0.5)
    # a: no        10      15     (b says yes 30/50 = 0.6)
    # p_o = (20 + 15) / 50 = 0.7
    # p_e = 0.5·0.6 + 0.5·0.4 = 0.5
    # κ = (0.7 − 0.5) / (1 − 0.5) = 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    result = cohen_kappa(a, b)
    assert result.value == pytest.approx(0.4)
    assert result.note is None
    assert cohen_kappa(b, a).value == pytest.approx(0.4)  # symmetric


# Three levels, six cases:   a = 0 0 1 1 2 2
#                            b = 0 1 1 2 2 1
# Disagreements: (0,1), (1,2), (2,1): three, each one level apart.
# Marginals: a = (2, 2, 2), b = (1, 3, 2); expected count E[i][j] = a_i·b_j / 6 = b_j / 3.
LEVELS_A = [0, 0, 1, 1, 2, 2]
LEVELS_B = [0, 1, 1, 2, 2, 1]


def test_unweighted_kappa_on_three_levels() -> None:
    # p_o = 3/6; p_e = (2·1 + 2·3 + 2·2) / 36 = 1/3; κ = (1/2 − 1/3) / (2/3) = 0.25
    assert cohen_kappa(LEVELS_A, LEVELS_B).value == pytest.approx(0.25)


def test_quadratic_weighted_kappa_on_three_levels() -> None:
    # κ_w = 1 − Σ w·O / Σ w·E with w = (i − j)².
    # Σ w·O = 1 + 1 + 1 = 3.
    # Σ w·E = Σ_j (b_j / 3) · Σ_i (i − j)² = (1·5 + 3·2 + 2·5) / 3 = 21/3 = 7.
    # κ_w = 1 − 3/7 = 4/7
    assert cohen_kappa(LEVELS_A, LEVELS_B, weights="quadratic").value == pytest.approx(4 / 7)


def test_linear_weighted_kappa_on_three_levels() -> None:
    # w = |i − j|: Σ w·O = 3; Σ w·E = (1·3 + 3·2 + 2·3) / 3 = 5; κ_w = 1 − 3/5 = 0.4
    assert cohen_kappa(LEVELS_A, LEVELS_B, weights="linear").value == pytest.approx(0.4)


def test_weighted_kappa_on_text_levels_follows_the_given_order() -> None:
    names = ["low", "medium", "high"]
    a = [names[i] for i in LEVELS_A]
    b = [names[i] for i in LEVELS_B]
    assert cohen_kappa(a, b, weights="quadratic", labels=names).value == pytest.approx(4 / 7)
    with pytest.raises(ValueError, match="ordered categories"):
        cohen_kappa(a, b, weights="quadratic")  # alphabetical order would be wrong
    with pytest.raises(ValueError, match="not among the labels"):
        cohen_kappa(a, b, labels=["low", "high"])


def test_weighted_kappa_counts_unused_integer_levels() -> None:
    # Levels 1..3 with nobody choosing 2: 1 and 3 are two levels apart, not adjacent.
    a, b = [1, 1, 3, 3], [1, 3, 3, 1]
    assert cohen_kappa(a, b, weights="linear").value == pytest.approx(
        cohen_kappa(a, b, weights="linear", labels=[1, 2, 3]).value
    )


def test_kappa_degenerate_cases() -> None:
    both_constant = cohen_kappa(["yes"] * 4, ["yes"] * 4)
    assert both_constant.value is None and "chance agreement is 1" in (both_constant.note or "")
    # One rater constant: p_o = p_e, so κ = 0 exactly, whatever the accuracy; said in the note.
    one_constant = cohen_kappa(["yes"] * 4, ["yes", "yes", "yes", "no"])
    assert one_constant.value == pytest.approx(0.0)
    assert "0 by construction" in (one_constant.note or "")
    assert cohen_kappa([1], [1]).value is None
    assert cohen_kappa([], []).value is None
    with pytest.raises(ValueError, match="differ in length"):
        cohen_kappa([1, 2], [1])
    with pytest.raises(ValueError, match="missing"):
        cohen_kappa([1.0, float("nan")], [1.0, 0.0])


# --- Fleiss' kappa ------------------------------------------------------------------


def test_fleiss_kappa_of_three_raters() -> None:
    # Subjects (three raters each) -> counts (a, b) -> P_i = (Σ n_ij² − 3) / (3·2)
    #   a a a -> (3, 0) -> (9 − 3)/6     = 1
    #   a a b -> (2, 1) -> (4 + 1 − 3)/6 = 1/3
    #   b b b -> (0, 3) -> 1
    #   a b b -> (1, 2) -> 1/3
    # P̄ = (1 + 1/3 + 1 + 1/3) / 4 = 2/3; p_a = p_b = 6/12 = 0.5, P_e = 0.5
    # κ = (2/3 − 1/2) / (1 − 1/2) = 1/3
    ratings = [["a", "a", "a"], ["a", "a", "b"], ["b", "b", "b"], ["a", "b", "b"]]
    assert fleiss_kappa(ratings).value == pytest.approx(1 / 3)
    counts = [[3, 0], [2, 1], [0, 3], [1, 2]]
    assert fleiss_kappa(counts, counts=True).value == pytest.approx(1 / 3)


def test_fleiss_kappa_degenerate_cases() -> None:
    assert fleiss_kappa([["a", "a"], ["a", "a"]]).value is None  # one category only
    assert fleiss_kappa([["a", "b", "a"]]).value is None  # one subject
    single = fleiss_kappa([["a"], ["b"]])
    assert single.value is None and "raters" in (single.note or "")
    with pytest.raises(ValueError, match="missing"):
        fleiss_kappa([["a", None], ["a", "b"]])
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[3, 0], [1, 1]], counts=True)


# --- accuracy -----------------------------------------------------------------------


def test_accuracy_and_within_one_level() -> None:
    # human  = low  medium high   high low        (levels 0 1 2 2 0)
    # metric = low  high   medium low  medium     (levels 0 2 1 0 1)
    # exact agreement: case 1 only -> 1/5 = 0.2
    # |difference| = 0 1 1 2 1 -> within one level: 4/5 = 0.8
    order = ["low", "medium", "high"]
    human = ["low", "medium", "high", "high", "low"]
    metric = ["low", "high", "medium", "low", "medium"]
    assert accuracy(human, metric).value == pytest.approx(0.2)
    assert within_one_accuracy(human, metric, labels=order).value == pytest.approx(0.8)
    assert within_one_accuracy([0, 1, 2, 2, 0], [0, 2, 1, 0, 1]).value == pytest.approx(0.8)
    with pytest.raises(ValueError, match="ordered levels"):
        within_one_accuracy(human, metric)


def test_accuracy_compares_numbers_by_value() -> None:
    assert accuracy([1, 0, 1], [1.0, 0.0, 0.0]).value == pytest.approx(2 / 3)
    assert accuracy([1], [1]).value is None


# --- correlations -------------------------------------------------------------------


def test_pearson_by_hand() -> None:
    # x = 1 2 3, y = 1 3 2: deviations (−1 0 1) and (−1 1 0); Σ products = 1, Σ squares 2 and 2
    # r = 1 / √(2·2) = 0.5
    assert pearson([1, 2, 3], [1, 3, 2]).value == pytest.approx(0.5)


def test_spearman_by_hand() -> None:
    # ranks x = 1 2 3 4 5, y = 2 1 4 3 5: d = −1 1 −1 1 0, Σd² = 4
    # ρ = 1 − 6·4 / (5·(25 − 1)) = 1 − 24/120 = 0.8
    assert spearman([10, 20, 30, 40, 50], [0.2, 0.1, 0.4, 0.3, 0.5]).value == pytest.approx(0.8)


def test_kendall_tau_b_with_ties() -> None:
    # x = 1 2 2 3, y = 1 2 3 3; the six pairs:
    #   (1,2) C  (1,3) C  (1,4) C  (2,3) tied in x  (2,4) C  (3,4) tied in y
    # C = 4, D = 0, n0 = 6, ties in x = 1, ties in y = 1
    # τ_b = (C − D) / √((n0 − 1)(n0 − 1)) = 4 / 5 = 0.8
    assert kendall([1, 2, 2, 3], [1, 2, 3, 3]).value == pytest.approx(0.8)


@pytest.mark.parametrize("fn", [pearson, spearman, kendall])
def test_correlations_with_a_constant_array_are_undefined(fn: Any) -> None:
    result = fn([0.5, 0.5, 0.5], [1.0, 2.0, 3.0])
    assert result.value is None and "constant" in (result.note or "")
    assert fn([1.0], [2.0]).value is None
    assert fn([], []).value is None
    two = fn([1.0, 2.0], [3.0, 5.0])
    assert two.value == pytest.approx(1.0) and "only 2 cases" in (two.note or "")


# --- ROC AUC ------------------------------------------------------------------------


def test_roc_auc_with_a_tie() -> None:
    # positives score 0.9 0.6 0.4, negatives 0.6 0.3 0.1: nine (positive, negative) pairs
    #   0.9 beats all three                          -> 3
    #   0.6 ties 0.6 (½), beats 0.3 and 0.1          -> 2.5
    #   0.4 loses to 0.6, beats 0.3 and 0.1          -> 2
    # AUC = 7.5 / 9
    human = [1, 1, 1, 0, 0, 0]
    scores = [0.9, 0.6, 0.4, 0.6, 0.3, 0.1]
    assert roc_auc(human, scores).value == pytest.approx(7.5 / 9)
    text = ["yes", "yes", "yes", "no", "no", "no"]
    assert roc_auc(text, scores, positive="yes").value == pytest.approx(7.5 / 9)
    assert roc_auc(text, scores, positive="no").value == pytest.approx(1.5 / 9)


def test_roc_auc_degenerate_cases() -> None:
    one_class = roc_auc([1, 1, 1], [0.2, 0.5, 0.9])
    assert one_class.value is None and "both classes" in (one_class.note or "")
    constant = roc_auc([1, 0, 1, 0], [0.5, 0.5, 0.5, 0.5])
    assert constant.value == pytest.approx(0.5) and "constant" in (constant.note or "")
    assert roc_auc([1], [0.3]).value is None
    with pytest.raises(ValueError, match="two classes"):
        roc_auc([0, 1, 2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="positive class"):
        roc_auc(["a", "b"], [0.1, 0.2], positive="c")


# --- F1 -----------------------------------------------------------------------------


def test_f1_with_either_positive_class() -> None:
    # truth 1 1 1 1 0 0, prediction 1 1 1 0 1 0
    # positive 1: TP 3, FP 1 (case 5), FN 1 (case 4): F1 = 2·3 / (6 + 1 + 1) = 0.75
    # positive 0: TP 1 (case 6), FP 1 (case 4), FN 1 (case 5): F1 = 2 / (2 + 1 + 1) = 0.5
    truth = [1, 1, 1, 1, 0, 0]
    pred = [1, 1, 1, 0, 1, 0]
    assert f1(truth, pred).value == pytest.approx(0.75)
    assert f1(truth, pred, positive=0).value == pytest.approx(0.5)


def test_macro_f1_by_hand() -> None:
    # truth a a b b c c, prediction a b b b c a
    # a: TP 1, FP 1, FN 1 -> 2/4 = 0.5;  b: TP 2, FP 1, FN 0 -> 4/5 = 0.8;  c: TP 1, FN 1 -> 2/3
    # macro F1 = (0.5 + 0.8 + 2/3) / 3
    result = f1(list("aabbcc"), list("abbbca"), average="macro")
    assert result.value == pytest.approx((0.5 + 0.8 + 2 / 3) / 3)


def test_f1_degenerate_cases() -> None:
    no_positive = f1([0, 0, 0], [0, 0, 0])
    assert no_positive.value is None and "neither" in (no_positive.note or "")
    never_predicted = f1([1, 0, 1], [0, 0, 0])
    assert never_predicted.value == pytest.approx(0.0) and never_predicted.note
    assert f1([1], [1]).value is None
    with pytest.raises(ValueError, match="two classes"):
        f1([0, 1, 2], [0, 1, 1])


# --- bootstrap ----------------------------------------------------------------------


def _paired_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    human = rng.integers(0, 3, 60)
    metric = np.clip(human + rng.integers(-1, 2, 60), 0, 2)
    scores = rng.random(60)
    binary = (scores + rng.normal(0, 0.25, 60) > 0.5).astype(int)
    return human, metric, scores, binary


def test_bootstrap_is_deterministic_and_contains_the_estimate() -> None:
    human, metric, _, _ = _paired_data()
    fn = functools.partial(cohen_kappa, weights="quadratic", labels=[0, 1, 2])
    first = bootstrap_ci(fn, human, metric)
    again = bootstrap_ci(fn, human, metric)
    assert first == again
    assert first.resamples == 2000 and first.note is None
    point = fn(human, metric).value
    assert point is not None and first.low is not None and first.high is not None
    assert first.low <= point <= first.high
    other_seed = bootstrap_ci(fn, human, metric, seed=1)
    assert (other_seed.low, other_seed.high) != (first.low, first.high)
    narrower = bootstrap_ci(fn, human, metric, level=0.5)
    assert narrower.low is not None and narrower.high is not None
    assert first.low <= narrower.low <= narrower.high <= first.high


def _generic(fn: Any) -> Any:
    """The same statistic, wrapped so that bootstrap_ci cannot use its vectorised form."""
    return lambda *arrays: fn(*arrays)


@pytest.mark.parametrize(
    ("fn", "columns"),
    [
        (functools.partial(cohen_kappa, weights="quadratic", labels=[0, 1, 2]), ("human", "metric")),
        (cohen_kappa, ("human", "metric")),
        (accuracy, ("human", "metric")),
        (within_one_accuracy, ("human", "metric")),
        (pearson, ("human", "scores")),
        (spearman, ("human", "scores")),
        (kendall, ("human", "metric")),
        (roc_auc, ("binary", "scores")),
        (f1, ("binary", "predicted")),
        (functools.partial(f1, average="macro"), ("human", "metric")),
    ],
)
def test_vectorised_bootstrap_matches_calling_the_statistic(fn: Any, columns: tuple[str, str]) -> None:
    human, metric, scores, binary = _paired_data()
    data = {
        "human": human,
        "metric": metric,
        "scores": scores,
        "binary": binary,
        "predicted": (scores > 0.5).astype(int),
    }
    arrays = [data[c] for c in columns]
    fast = bootstrap_ci(fn, *arrays, n_resamples=300)
    slow = bootstrap_ci(_generic(fn), *arrays, n_resamples=300)
    assert fast.resamples == slow.resamples
    assert fast.low == pytest.approx(slow.low) and fast.high == pytest.approx(slow.high)


def test_bootstrap_resamples_cases_jointly() -> None:
    # Identical arrays stay identical in every paired resample: κ is 1 on each of them.
    values = [0, 1, 2, 0, 1, 2, 2, 1]
    interval = bootstrap_ci(_generic(cohen_kappa), values, values, n_resamples=200)
    assert (interval.low, interval.high) == (1.0, 1.0)


def test_bootstrap_degenerate_cases() -> None:
    assert bootstrap_ci(accuracy, [1], [1]).low is None
    # One positive among 20: about (19/20)^20 ≈ 36 % of resamples have no positive, no AUC.
    human = [1] + [0] * 19
    scores = [0.9] + [0.1] * 19
    rare = bootstrap_ci(roc_auc, human, scores, n_resamples=500)
    assert rare.low == 1.0 and 250 < rare.resamples < 400 and "undefined on the rest" in (rare.note or "")

    # A statistic defined on fewer than half of the resamples gets no interval.
    def needs_case_0_twice(values: np.ndarray) -> float | None:
        return 1.0 if int(np.sum(values == 0)) >= 2 else None

    seldom = bootstrap_ci(needs_case_0_twice, np.arange(10), n_resamples=500)
    assert seldom.low is None and seldom.resamples < 250 and "no interval" in (seldom.note or "")
    # Some resamples lose a class: they are left out and counted.
    mixed = bootstrap_ci(roc_auc, [1, 0, 1, 0, 1, 1], [0.9, 0.2, 0.8, 0.4, 0.3, 0.7], n_resamples=500)
    assert mixed.low is not None and mixed.resamples < 500 and "resamples" in (mixed.note or "")


def test_bootstrap_accepts_any_statistic() -> None:
    def mean_difference(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.mean(a) - np.mean(b))

    interval = bootstrap_ci(mean_difference, [1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 2.0, 3.0], n_resamples=100)
    assert interval.low == pytest.approx(1.0) and interval.high == pytest.approx(1.0)

    def undefined(a: np.ndarray) -> Estimate:
        return Estimate(None, "never defined")

    assert bootstrap_ci(undefined, [1, 2, 3], n_resamples=50).low is None
    with pytest.raises(ValueError, match="same length"):
        bootstrap_ci(accuracy, [1, 2], [1, 2, 3])
