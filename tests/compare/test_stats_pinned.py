"""Paired tests pinned to values worked out by hand from their definitions (see the
docstring of clineval.compare.stats): boundaries, error messages and documented defaults
that the tests beside them leave open."""

from __future__ import annotations

import pytest

from clineval.compare.stats import (
    EXACT_MAX_N,
    holm,
    is_binary,
    mcnemar_exact,
    min_detectable_changes,
    paired_bootstrap_ci,
    paired_permutation_test,
)

# --- McNemar ---------------------------------------------------------------------------


@pytest.mark.parametrize(("b", "c"), [(-1, 2), (2, -1), (-3, -1)])
def test_mcnemar_refuses_a_negative_count_and_says_which(b: int, c: int) -> None:
    with pytest.raises(ValueError, match=rf"must not be negative, got b={b}, c={c}$"):
        mcnemar_exact(b, c)


def test_mcnemar_two_sided_by_hand() -> None:
    # b = 2, c = 8: P(X ≤ 2) for X ~ Binomial(10, 1/2) is (1 + 10 + 45) / 1024 = 56/1024;
    # two-sided (the distribution is symmetric): 112/1024 = 0.109375
    assert mcnemar_exact(2, 8) == pytest.approx(0.109375, abs=1e-12)
    # b = c = 1: every outcome is at most as likely as the observed one, p = 1
    assert mcnemar_exact(1, 1) == 1.0


# --- input checks of the paired tests ----------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([[0.1, 0.2]], [[0.3, 0.4]]),  # 2-D, same shape: refused, not flattened
        (0.5, 0.7),  # single numbers, not sequences
        ([0.1, 0.2], [0.3]),
    ],
    ids=["two-dimensional", "scalars", "lengths-differ"],
)
def test_paired_values_must_be_one_dimensional_of_one_length(a: object, b: object) -> None:
    with pytest.raises(ValueError, match="two 1-D sequences of one length"):
        paired_permutation_test(a, b)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="two 1-D sequences of one length"):
        paired_bootstrap_ci(a, b)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([0.1, 0.2], [0.3, float("inf")]),
        ([float("-inf"), 0.2], [0.3, 0.4]),
        ([0.1, 0.2], [float("nan"), 0.4]),
    ],
)
def test_paired_values_must_be_finite_on_either_side(a: list[float], b: list[float]) -> None:
    with pytest.raises(ValueError, match="paired values must be finite numbers"):
        paired_permutation_test(a, b)


# --- sign-flip permutation test ------------------------------------------------------------


def test_permutation_test_on_five_pairs_by_hand() -> None:
    # d = [1, −2, 3, 4, 5], |Σd| = 11. A sign assignment makes a set N of the magnitudes
    # {1, ..., 5} negative: |15 − 2·ΣN| ≥ 11 when ΣN ≤ 2 ({}, {1}, {2}) or ΣN ≥ 13 (their
    # complements): 6 of 32, p = 0.1875.
    assert paired_permutation_test([0, 2, 0, 0, 0], [1, 0, 3, 4, 5]) == 0.1875


def test_permutation_test_counts_sums_equal_up_to_rounding_as_ties() -> None:
    # d = b − a = [0.7, 0.3, 0.1, 0.7], all one way: all-plus and all-minus reach |Σd|, 2/16.
    # In floating point 0.9 − 0.2 etc. and their sums in another order differ in the last bit,
    # so without the tolerance not even the observed assignment would count (p = 0)
    assert paired_permutation_test([0.2, 0.0, 0.8, 0.0], [0.9, 0.3, 0.9, 0.7]) == 0.125
    # d = [0.1, 0.2, −0.3, 1.0], Σd = 1. Flipping a set T of the signed differences gives
    # |1 − 2·ΣT| ≥ 1 when ΣT ≤ 0 or ΣT ≥ 1: {}, {−0.3}, {1.0}, {0.1, −0.3}, {0.2, −0.3},
    # {0.1, 1.0}, {0.2, 1.0}, {0.1, 0.2, −0.3}, {0.1, 0.2, 1.0}, all four: 10 of 16
    assert paired_permutation_test([0.0] * 4, [0.1, 0.2, -0.3, 1.0]) == 0.625


def test_permutation_test_treats_differences_below_rounding_as_no_difference() -> None:
    # five differences of 1e-10 sum to 5e-10, within the rounding tolerance (1e-9) of every
    # sign assignment's sum: no assignment is less extreme, p = 1 (not 2/32)
    assert paired_permutation_test([0.0] * 5, [1e-10] * 5) == 1.0


def test_permutation_test_is_exact_up_to_sixteen_changes_then_drawn() -> None:
    assert EXACT_MAX_N == 16
    # 16 changes, all one way: only all-plus and all-minus reach the observed sum, 2 / 2^16
    assert paired_permutation_test([0.0] * 16, [1.0] * 16) == 2 / 2**16
    # 17: 10,000 random assignments, each reaching it with chance 2^-16 (0.15 expected in
    # all), so p = (count + 1) / 10,001 with a count of 0, 1 or 2, not the exact 2 / 2^17
    p = paired_permutation_test([0.0] * 17, [1.0] * 17)
    assert p in (1 / 10_001, 2 / 10_001, 3 / 10_001)


def test_permutation_test_draws_in_chunks_over_many_cases() -> None:
    # 300 differences (more than one chunk of drawn signs): 150 of +1 and 150 of −1 have
    # mean 0, so every assignment is at least as extreme: (10,000 + 1) / (10,000 + 1) = 1
    assert paired_permutation_test([0.0] * 300, [1.0] * 150 + [-1.0] * 150) == 1.0
    # all 300 one way: none of 10,000 assignments reaches the observed sum
    assert paired_permutation_test([1.0] * 300, [0.0] * 300) == pytest.approx(1 / 10_001, rel=1e-12)


def test_permutation_test_default_draw_is_the_documented_one() -> None:
    # 10,000 draws with seed 0 by default, so a p-value reported earlier can be reproduced
    a = [0.0] * 20
    b = [0.3, -0.1, 0.4, 0.2, -0.5, 0.1, 0.6, -0.2, 0.3, 0.1] * 2
    default = paired_permutation_test(a, b, exact_max_n=0)
    assert default == paired_permutation_test(a, b, exact_max_n=0, n_resamples=10_000, seed=0)
    assert default != paired_permutation_test(a, b, exact_max_n=0, seed=1)


def test_options_are_keyword_only() -> None:
    # a third positional number would be ambiguous (resamples? confidence? seed?)
    with pytest.raises(TypeError):
        paired_permutation_test([0.0], [1.0], 100)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        paired_bootstrap_ci([0.0, 0.0], [1.0, 0.0], 0.9)  # type: ignore[call-arg]


# --- bootstrap interval of the mean difference ---------------------------------------------


def test_paired_bootstrap_on_three_pairs_by_hand() -> None:
    # d = [0, 0, 1]: a resample of three holds k ones, k ~ Binomial(3, 1/3), so its mean is
    # 0, 1/3, 2/3, 1 with probabilities 8/27, 12/27, 6/27, 1/27. The 2.5 % quantile is 0
    # (8/27 > 2.5 %); P(mean = 1) = 1/27 = 3.7 % > 2.5 %, so the 97.5 % quantile is 1, while
    # P(mean ≥ 2/3) = 7/27 > 5 % > 1/27 puts the 95 % quantile at 2/3. Of 2,000 resamples
    # about 74 are 1: the interval (percentile method, linear interpolation) lands on the atoms.
    a, b = [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]
    assert paired_bootstrap_ci(a, b) == (0.0, 1.0)
    ci90 = paired_bootstrap_ci(a, b, confidence=0.90)
    assert ci90 is not None and ci90[0] == 0.0 and ci90[1] == pytest.approx(2 / 3)


def test_paired_bootstrap_two_pairs_give_an_interval() -> None:
    # two differences 0 and 1: resampled means 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4
    assert paired_bootstrap_ci([0.0, 0.0], [0.0, 1.0]) == (0.0, 1.0)


def test_paired_bootstrap_defaults_are_the_documented_ones() -> None:
    # 95 %, 2,000 resamples, seed 0: the same data always give the same interval
    a = [0.0] * 12
    b = [0.31, -0.12, 0.45, 0.08, -0.27, 0.19, 0.66, -0.41, 0.05, 0.23, -0.09, 0.37]
    default = paired_bootstrap_ci(a, b)
    assert default == paired_bootstrap_ci(a, b, confidence=0.95, n_resamples=2_000, seed=0)
    assert default != paired_bootstrap_ci(a, b, n_resamples=2_001)
    assert default != paired_bootstrap_ci(a, b, seed=1)


# --- fewest changes that can be significant ---------------------------------------------------


@pytest.mark.parametrize(
    ("alpha", "n_tests", "expected"),
    [
        (0.0625, 1, 6),  # 2^-4 = 0.0625 is not < 0.0625; 2^-5 is
        (0.0625, 2, 7),  # 2 · 2^(1−k) < 2^-4 needs k ≥ 7
        (0.5, 1, 3),  # 2^-1 = 0.5 is not < 0.5; 2^-2 is
        (0.999, 1, 2),  # one change gives at best p = 1; two give 0.5
        (0.05, 1, 6),
        (0.05, 3, 7),
    ],
)
def test_min_detectable_changes_needs_p_strictly_below_alpha(
    alpha: float, n_tests: int, expected: int
) -> None:
    assert min_detectable_changes(alpha, n_tests) == expected


@pytest.mark.parametrize(
    ("alpha", "n_tests", "message"),
    [
        (0.0, 1, "alpha must be between 0 and 1 (exclusive), got 0.0"),
        (1.0, 1, "alpha must be between 0 and 1 (exclusive), got 1.0"),
        (0.05, 0, "n_tests must be at least 1, got 0"),
    ],
)
def test_min_detectable_changes_refuses_bad_arguments(alpha: float, n_tests: int, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        min_detectable_changes(alpha, n_tests)
    assert str(raised.value) == message


# --- Holm -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pvalues", "expected"),
    [
        # sorted 0.01·4 = 0.04, 0.03·3 = 0.09, 0.04·2 = 0.08 → 0.09 (monotone), 0.2·1 = 0.2
        ([0.04, 0.01, 0.03, 0.2], [0.09, 0.04, 0.09, 0.2]),
        # 0.01·3 = 0.03; 0.6·2 = 1.2 capped at 1; 0.7·1 = 0.7 → 1 (monotone)
        ([0.01, 0.6, 0.7], [0.03, 1.0, 1.0]),
        # the ends of [0, 1] are valid p-values: 0·2 = 0, 1·1 = 1
        ([1.0, 0.0], [1.0, 0.0]),
        # ties: 0.02·2 = 0.04, then max(0.04, 0.02·1) = 0.04
        ([0.02, 0.02], [0.04, 0.04]),
    ],
)
def test_holm_by_hand(pvalues: list[float], expected: list[float]) -> None:
    assert holm(pvalues) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("bad", [-0.01, 1.01])
def test_holm_refuses_a_p_value_outside_zero_one(bad: float) -> None:
    with pytest.raises(ValueError, match=rf"^p-values must lie in \[0, 1\], got {bad}$"):
        holm([0.5, bad])


def test_is_binary_on_single_values() -> None:
    assert is_binary([1.0]) and is_binary([0.0]) and is_binary([0, 1])
    assert not is_binary([2.0]) and not is_binary([-1.0]) and not is_binary([1.0, 0.999])
