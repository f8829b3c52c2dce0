"""Bootstrap intervals for items that come in clusters: the facts of one case.

The facts (or sentences, or turns) of one case are not independent: a reviewer who reads a
case carefully, or a judge that misreads its reference, moves all of its items together.
Resampling items as if they were independent gives intervals that are too narrow. Here
**cases** are resampled with replacement (2,000 times, seed 0, as everywhere in
:mod:`clineval.agreement`) and every item of a drawn case comes along, as often as its
case was drawn. With one item per case this is the ordinary case bootstrap.

A resample is a vector of multiplicities, one per item, so the statistics are computed
from weighted counts, for all resamples at once:

* Cohen's κ (unweighted, linear or quadratic weights) from the weighted confusion table;
* accuracy: the weighted share of agreeing items;
* ROC AUC: the weighted probability that a positive item scores above a negative one,
  ties counting ½.

:func:`cluster_interval` gives the percentile interval of one statistic, and
:func:`cluster_difference` the paired interval of the difference between two sides
computed on the same resamples (a judge against a baseline, against the same reviewers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Weights = Literal["linear", "quadratic"] | None
#: A statistic over a (resamples × items) matrix of multiplicities: one value per row.
BatchStat = Callable[[FloatArray], FloatArray]


def cluster_weights(groups: Sequence[Any], *, n_resamples: int = 2000, seed: int = 0) -> FloatArray:
    """Multiplicities of each item in each resample (rows): its cluster's number of draws."""
    labels, index = np.unique(np.asarray([str(g) for g in groups], dtype=object), return_inverse=True)
    k = len(labels)
    if k == 0:
        return np.zeros((n_resamples, 0), dtype=float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, k, size=(n_resamples, k), dtype=np.int64)
    flat = (np.arange(n_resamples, dtype=np.int64)[:, None] * k + draws).ravel()
    counts = np.bincount(flat, minlength=n_resamples * k).reshape(n_resamples, k).astype(float)
    return counts[:, np.asarray(index, dtype=np.int64)]


def _codes(
    a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any] | None
) -> tuple[IntArray, IntArray, int]:
    cats = list(labels) if labels is not None else sorted({*map(str, a), *map(str, b)})
    index = {str(c): i for i, c in enumerate(cats)}
    try:
        x = np.asarray([index[str(v)] for v in a], dtype=np.int64)
        y = np.asarray([index[str(v)] for v in b], dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f"label {exc.args[0]!r} is not one of {', '.join(map(str, cats))}") from None
    return x, y, len(cats)


def kappa(
    a: Sequence[Any], b: Sequence[Any], *, labels: Sequence[Any] | None = None, weights: Weights = None
) -> BatchStat:
    """Cohen's κ of two label sequences (``labels``: the categories, lowest first when weighted)."""
    x, y, k = _codes(a, b, labels)
    onehot = np.zeros((len(x), k * k), dtype=float)
    onehot[np.arange(len(x)), x * k + y] = 1.0
    i, j = np.indices((k, k))
    if weights is None:
        cost = (i != j).astype(float)
    elif weights == "linear":
        cost = np.abs(i - j).astype(float)
    else:
        cost = ((i - j) ** 2).astype(float)

    def stat(w: FloatArray) -> FloatArray:
        counts = (w @ onehot).reshape(-1, k, k)
        n = counts.sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = counts.sum(axis=2)[:, :, None] * counts.sum(axis=1)[:, None, :] / n[:, None, None]
            observed_d = (cost * counts).sum(axis=(1, 2))
            expected_d = (cost * expected).sum(axis=(1, 2))
            return np.where(expected_d > 1e-12, 1.0 - observed_d / expected_d, np.nan)

    return stat


def accuracy(a: Sequence[Any], b: Sequence[Any]) -> BatchStat:
    same = np.asarray([str(x) == str(y) for x, y in zip(a, b, strict=True)], dtype=float)

    def stat(w: FloatArray) -> FloatArray:
        total = w.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total > 0, (w @ same) / total, np.nan)

    return stat


def roc_auc(truth: Sequence[bool], scores: Sequence[float]) -> BatchStat:
    """ROC AUC of ``scores`` for the positive items (``truth`` True)."""
    t = np.asarray(truth, dtype=bool)
    s = np.asarray(scores, dtype=float)
    levels, level_of = np.unique(s, return_inverse=True)
    pos = np.zeros((len(s), len(levels)), dtype=float)
    neg = np.zeros((len(s), len(levels)), dtype=float)
    rows = np.arange(len(s))
    pos[rows[t], level_of[t]] = 1.0
    neg[rows[~t], level_of[~t]] = 1.0

    def stat(w: FloatArray) -> FloatArray:
        p = w @ pos  # weighted positives at each score level
        q = w @ neg
        below = np.cumsum(q, axis=1) - q
        wins = (p * (below + 0.5 * q)).sum(axis=1)
        total = p.sum(axis=1) * q.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total > 0, wins / total, np.nan)

    return stat


@dataclass(frozen=True)
class ClusterInterval:
    value: float | None
    low: float | None
    high: float | None
    n: int
    clusters: int
    note: str | None = None


def _point(stat: BatchStat, n: int) -> float | None:
    value = float(stat(np.ones((1, n), dtype=float))[0])
    return value if np.isfinite(value) else None


def _percentiles(
    values: FloatArray, n_resamples: int, level: float
) -> tuple[float | None, float | None, str | None]:
    defined = values[np.isfinite(values)]
    if defined.size * 2 < n_resamples:
        return None, None, f"defined on only {defined.size} of {n_resamples} resamples: no interval"
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    note = None
    if defined.size < n_resamples:
        note = f"from {defined.size}/{n_resamples} resamples (undefined on the rest)"
    return float(low), float(high), note


def cluster_interval(
    stat: BatchStat,
    groups: Sequence[Any],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    undefined: str = "undefined on these items",
) -> ClusterInterval:
    """The statistic on all items and its percentile interval over case resamples."""
    n, clusters = len(groups), len(set(map(str, groups)))
    value = _point(stat, n) if n else None
    if value is None:
        return ClusterInterval(None, None, None, n, clusters, undefined if n else "no items")
    if clusters < 2:
        return ClusterInterval(value, None, None, n, clusters, "items of one case only: no interval")
    weights = cluster_weights(groups, n_resamples=n_resamples, seed=seed)
    low, high, note = _percentiles(stat(weights), n_resamples, level)
    if low is not None and high is not None and high - low < 1e-12:
        note = "; ".join(
            n_
            for n_ in (
                note,
                f"every resample of the {clusters} cases gives {value:.2f}: the interval "
                "says nothing yet (too few cases, or one side always the same)",
            )
            if n_
        )
    return ClusterInterval(value, low, high, n, clusters, note)


def cluster_difference(
    first: BatchStat,
    second: BatchStat,
    groups: Sequence[Any],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> ClusterInterval:
    """``first - second`` on the same items, with its paired interval (the same case
    resamples for both sides)."""
    n, clusters = len(groups), len(set(map(str, groups)))
    a, b = (_point(first, n), _point(second, n)) if n else (None, None)
    if a is None or b is None:
        return ClusterInterval(None, None, None, n, clusters, "the statistic is undefined on one side")
    if clusters < 2:
        return ClusterInterval(a - b, None, None, n, clusters, "items of one case only: no interval")
    weights = cluster_weights(groups, n_resamples=n_resamples, seed=seed)
    low, high, note = _percentiles(first(weights) - second(weights), n_resamples, level)
    return ClusterInterval(a - b, low, high, n, clusters, note)
