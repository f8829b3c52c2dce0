"""Paired tests against values worked out by hand."""

from __future__ import annotations

import pytest

from clineval.compare import holm, is_binary, mcnemar_exact, paired_bootstrap_ci, paired_permutation_test

# --- McNemar ---------------------------------------------------------------------------


def test_mcnemar_exact_by_hand() -> None:
    # b = 1, c = 7: under the null b ~ Binomial(8, 1/2).
    # P(b ≤ 1) = (C(8,0) + C(8,1)) / 2^8 = 9 / 256; two-sided: 2 · 9/256 = 0.0703125
    assert mcnemar_exact(1, 7) == pytest.approx(0.0703125, abs=1e-12)
    assert mcnemar_exact(7, 1) == pytest.approx(0.0703125, abs=1e-12)  # symmetric
    # b = 0, c = 5: 2 · (1/2)^5 = 0.0625
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625, abs=1e-12)
    # b = 12, c = 0: 2 / 2^12
    assert mcnemar_exact(12, 0) == pytest.approx(2 / 4096, abs=1e-15)


def test_mcnemar_without_discordant_pairs_or_balanced() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


# --- sign-flip permutation test ------------------------------------------------------------


def test_permutation_test_enumerated_by_hand() -> None:
    # d = b − a = [1, 2, 3, 4], Σd = 10. Of the 2^4 = 16 sign assignments only all-plus and
    # all-minus reach |Σ s·d| ≥ 10, so p = 2/16.
    assert paired_permutation_test([0, 0, 0, 0], [1, 2, 3, 4]) == 0.125
    # d = [1, −2, 3, 4], |Σd| = 6. Flipping a subset S of {1, 2, 3, 4} (as magnitudes) gives
    # |10 − 2·ΣS|, which is ≥ 6 when ΣS ≤ 2 ({}, {1}, {2}) or ΣS ≥ 8 ({1,3,4}, {2,3,4},
    # {1,2,3,4}): 6 of 16, p = 0.375.
    assert paired_permutation_test([0, 2, 0, 0], [1, 0, 3, 4]) == 0.375


def test_permutation_test_sets_zero_differences_aside() -> None:
    assert paired_permutation_test([5, 5, 0, 0, 0, 0], [5, 5, 1, 2, 3, 4]) == 0.125
    assert paired_permutation_test([0.3, 0.7], [0.3, 0.7]) == 1.0


def test_permutation_test_random_branch_is_seeded_and_close_to_exact() -> None:
    a = [0.0] * 4
    b = [1.0, 2.0, 3.0, 4.0]
    first = paired_permutation_test(a, b, exact_max_n=0)
    assert first == paired_permutation_test(a, b, exact_max_n=0)  # fixed seed
    assert first == pytest.approx(0.125, abs=0.015)
    # 40 differences of one sign: no random assignment reaches the observed sum -> (0 + 1) / 10,001
    assert paired_permutation_test([1.0] * 40, [0.5] * 40) == pytest.approx(1 / 10_001)


def test_permutation_test_checks_its_input() -> None:
    with pytest.raises(ValueError, match="one length"):
        paired_permutation_test([1, 2], [1])
    with pytest.raises(ValueError, match="finite"):
        paired_permutation_test([1, float("nan")], [1, 2])


# --- bootstrap interval of the mean difference ---------------------------------------------


def test_paired_bootstrap_ci() -> None:
    a = [0.2, 0.4, 0.6, 0.8, 1.0, 0.5, 0.3, 0.9]
    b = [0.1, 0.5, 0.4, 0.6, 0.7, 0.5, 0.2, 0.6]
    mean_delta = sum(y - x for x, y in zip(a, b, strict=True)) / len(a)  # −0.1375
    ci = paired_bootstrap_ci(a, b)
    assert ci is not None
    low, high = ci
    assert low <= mean_delta <= high and high - low > 0
    assert paired_bootstrap_ci(a, b) == ci  # seed 0: the same interval every time
    assert paired_bootstrap_ci([1, 2, 3], [1.5, 2.5, 3.5]) == (0.5, 0.5)  # one constant difference
    assert paired_bootstrap_ci([1], [2]) is None


def test_paired_bootstrap_default_is_95_percent_with_a_hand_worked_width() -> None:
    # a = 0 everywhere, b = 50 ones and 50 zeros: the differences are those of
    # tests/results/test_aggregate.py, Binomial(100, 1/2) / 100 per resample: the 95 %
    # interval is (0.40, 0.60) (quantiles 40 and 60 of the binomial), a 90 % one (0.42, 0.58).
    b = [1.0] * 50 + [0.0] * 50
    ci = paired_bootstrap_ci([0.0] * 100, b)
    assert ci is not None
    assert ci[0] == pytest.approx(0.40, abs=0.005) and ci[1] == pytest.approx(0.60, abs=0.005)
    ci90 = paired_bootstrap_ci([0.0] * 100, b, confidence=0.90)
    assert ci90 is not None and ci90[1] - ci90[0] == pytest.approx(0.16, abs=0.01)


# --- Holm -------------------------------------------------------------------------------


def test_holm_by_hand() -> None:
    # sorted: 0.01 · 3 = 0.03; 0.03 · 2 = 0.06; 0.04 · 1 = 0.04 -> max(0.06, 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    # capped at 1, and monotone: 0.5 · 2 = 1.0; 0.6 · 1 = 0.6 -> 1.0
    assert holm([0.6, 0.5]) == pytest.approx([1.0, 1.0])
    assert holm([0.02]) == [0.02]
    assert holm([]) == []
    with pytest.raises(ValueError):
        holm([1.5])


def test_is_binary() -> None:
    assert is_binary([0.0, 1.0, 1.0])
    assert not is_binary([0.0, 0.5])
    assert not is_binary([])
