"""Paired tests for comparing two runs case by case.

Two runs of the same cases give, per metric, pairs ``(a_i, b_i)``: the score of case ``i``
in run A and in run B. The tests here ask whether B differs from A more than chance
would explain, using the pairing (each case is its own control).

``mcnemar_exact``
    For binary metrics (every value 0 or 1). Only the *discordant* pairs carry
    information: ``b`` cases went 1 → 0 and ``c`` cases went 0 → 1. Under the null
    hypothesis (no difference) each discordant pair is equally likely to go either way,
    so ``b ~ Binomial(b + c, 1/2)``. The p-value is the two-sided exact binomial test
    (:func:`scipy.stats.binomtest`): the probability, under the null, of an outcome at
    most as likely as the one observed. For ``b + c = 0`` it is 1.

``paired_permutation_test``
    For continuous metrics. With differences ``d_i = b_i − a_i``, under the null each
    ``d_i`` is as likely to be ``+|d_i|`` as ``−|d_i|``. The statistic is
    ``|mean(d)|``; the p-value is the share of sign assignments whose statistic is at
    least the observed one. Differences of zero do not change the statistic under any
    sign, so they are set aside: with at most 16 non-zero differences all ``2^k`` sign
    assignments are enumerated (exact); otherwise 10,000 random assignments are drawn
    with a fixed seed and ``p = (count + 1) / (10,000 + 1)`` (the +1 counts the observed
    assignment, so that p is never 0).

``paired_bootstrap_ci``
    The percentile bootstrap interval of ``mean(d)``: cases are resampled with
    replacement 2,000 times (seed 0, so the same data always give the same interval) and
    the 2.5th and 97.5th percentiles of the resampled means are the 95 % interval.

``min_detectable_changes``
    How many cases must change, all in one direction, before either test can reach
    ``p < alpha``. With ``k`` changed cases (discordant pairs for McNemar, non-zero
    differences for the sign-flip test) the smallest p either exact test can give is
    ``2 · (1/2)^k = 2^(1 − k)``: every change in one direction. So fewer than the
    smallest ``k`` with ``2^(1 − k) < alpha`` can never be significant, whatever ``n``:
    6 for ``alpha = 0.05`` (``2^-5 = 0.031``; 5 changes give at best ``0.0625``). Holm
    over ``m`` metrics multiplies the smallest p by ``m``: a metric that changed alone
    needs ``2^(1 − k) · m < alpha`` (7 for three metrics: ``3 · 2^-6 = 0.047``).

``holm``
    Holm's step-down adjustment of ``m`` p-values for testing several metrics at once:
    sorted ascending, ``p_(i)`` becomes ``max_{j ≤ i} min(1, (m − j + 1) · p_(j))``. It
    controls the family-wise error rate (the chance of calling any unchanged metric
    changed) at ``alpha`` without assuming independence, and is never less powerful than
    Bonferroni.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from clineval.results.aggregate import bootstrap_ci

FloatArray = npt.NDArray[np.float64]

#: Largest number of non-zero differences for which the permutation test enumerates every sign.
EXACT_MAX_N = 16
#: Random sign assignments when the exact test is too large.
PERMUTATIONS = 10_000
#: Bootstrap resamples of the mean difference.
BOOTSTRAP_RESAMPLES = 2_000


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` (1 → 0) and ``c`` (0 → 1).

    ``b ~ Binomial(b + c, 1/2)`` under the null; ``p = 1`` when ``b + c = 0``.
    Example: ``b = 1, c = 7`` gives ``2 · (1 + 8) / 2^8 = 0.0703125``.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must not be negative, got b={b}, c={c}")
    if b + c == 0:
        return 1.0
    from scipy.stats import binomtest

    # scipy caps the two-sided p-value at 1
    return float(binomtest(int(b), int(b + c), 0.5, alternative="two-sided").pvalue)


def _differences(a: Sequence[float], b: Sequence[float]) -> FloatArray:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:  # equal shapes: y has x's dimensions
        raise ValueError(
            f"paired values must be two 1-D sequences of one length, got {x.shape} and {y.shape}"
        )
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("paired values must be finite numbers")
    difference: FloatArray = y - x
    return difference


def paired_permutation_test(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_resamples: int = PERMUTATIONS,
    seed: int = 0,
    exact_max_n: int = EXACT_MAX_N,
) -> float:
    """Two-sided sign-flip permutation p-value of the mean paired difference ``mean(b − a)``.

    Zero differences are set aside (they never change the statistic). With at most
    ``exact_max_n`` non-zero differences every sign assignment is enumerated and
    ``p = #{signs: |Σ s_i d_i| ≥ |Σ d_i|} / 2^k``; otherwise ``n_resamples`` random
    assignments (fixed ``seed``) give ``p = (count + 1) / (n_resamples + 1)``.
    ``p = 1`` when every difference is zero.
    """
    d = _differences(a, b)
    d = d[d != 0]
    if d.size == 0:
        return 1.0
    observed = abs(float(d.sum()))
    # Sums that equal the observed one up to rounding count as "at least as extreme".
    tolerance = 1e-9 * max(1.0, float(np.abs(d).sum()))
    if d.size <= exact_max_n:
        bits = (np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1
        signs = 1.0 - 2.0 * bits
        sums = np.abs(signs @ d)
        return float(np.count_nonzero(sums >= observed - tolerance) / signs.shape[0])
    rng = np.random.default_rng(seed)
    count = 0
    chunk = max(1, min(n_resamples, 2_000_000 // d.size))
    done = 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        signs = rng.choice((-1.0, 1.0), size=(size, d.size))
        count += int(np.count_nonzero(np.abs(signs @ d) >= observed - tolerance))
        done += size
    return (count + 1) / (n_resamples + 1)


def paired_bootstrap_ci(
    a: Sequence[float],
    b: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``mean(b − a)`` (cases resampled jointly, fixed seed).

    ``None`` with fewer than two pairs; ``(d, d)`` when every difference is ``d``.
    """
    d = _differences(a, b)
    return bootstrap_ci(d.tolist(), confidence=confidence, n_resamples=n_resamples, seed=seed)


def min_detectable_changes(alpha: float, n_tests: int = 1) -> int:
    """The fewest changed cases (all in one direction) whose exact paired test can give
    ``p · n_tests < alpha``: the smallest ``k ≥ 1`` with ``2^(1 − k) · n_tests < alpha``.

    Holds for :func:`mcnemar_exact` and the exact :func:`paired_permutation_test` alike
    (both give at best ``2^(1 − k)`` with ``k`` changed cases). Examples: ``alpha = 0.05``
    gives 6; with ``n_tests = 3`` (Holm, the metric changed alone) 7; ``alpha = 0.01`` gives 8.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    if n_tests < 1:
        raise ValueError(f"n_tests must be at least 1, got {n_tests}")
    k = 1
    while 2.0 ** (1 - k) * n_tests >= alpha:
        k += 1
    return k


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the order given.

    Sorted ascending, ``p_(i)`` (1-based) becomes ``max_{j ≤ i} min(1, (m − j + 1) · p_(j))``.
    Example: ``[0.01, 0.04, 0.03]`` → ``[0.03, 0.06, 0.06]``.
    """
    m = len(pvalues)
    for p in pvalues:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p}")
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted: dict[int, float] = {}
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[index]))
        adjusted[index] = running
    return [adjusted[i] for i in range(m)]


def is_binary(values: Sequence[float]) -> bool:
    """True when every value is 0 or 1 (and there is at least one)."""
    return len(values) > 0 and all(v in (0.0, 1.0) for v in values)
