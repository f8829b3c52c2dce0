"""Agreement statistics on two paired arrays (a metric and human labels, or two raters).

Every function returns an :class:`Estimate`: a value, or ``None`` with a note saying why
the statistic is undefined on these data (never NaN, never an exception for degenerate
data). The rules:

* fewer than two cases: ``None``;
* a statistic whose formula divides by zero on these data is ``None``: a correlation with
  a constant array, Cohen's κ when both raters used one and the same category (chance
  agreement is 1), ROC AUC when the human labels have one class, F1 when the positive
  class occurs in neither array;
* a statistic that is defined but degenerate keeps its value and gets a note: κ is 0
  by construction when only one rater is constant, ROC AUC is 0.5 for constant scores.

Invalid calls (arrays of different lengths, missing values, labels outside ``labels``,
weighted κ on text without an order) raise :class:`ValueError`.

Kappa, ROC AUC and F1 are computed by scikit-learn, correlations by SciPy (both imported
on first use). :func:`bootstrap_ci` resamples cases jointly across the arrays. For the
statistics of this module except Kendall's τ (given as is, or with keywords bound by
``functools.partial``) it computes all resamples at once with NumPy, by the same formulas
(2,000 calls to scikit-learn would take seconds); the tests check both give one interval.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

Weights = Literal["linear", "quadratic"]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Names = tuple[str, str]
_NAMES: Names = ("first values", "second values")


@dataclass(frozen=True)
class Estimate:
    """A statistic's value, or ``None`` when undefined; ``note`` says why, or flags a degenerate case."""

    value: float | None
    note: str | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class Interval:
    """A bootstrap confidence interval; ``low``/``high`` are ``None`` when it cannot be given."""

    low: float | None
    high: float | None
    resamples: int
    """Resamples on which the statistic was defined (the interval is taken over these)."""
    note: str | None = None


def _sklearn() -> Any:
    """``sklearn.metrics``, imported on first use (it takes a second to load)."""
    import sklearn.metrics

    return sklearn.metrics


# --- input checks ---------------------------------------------------------------------


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float | np.floating):
        return bool(np.isnan(value))
    return False


def _array(values: Any) -> npt.NDArray[Any]:
    """``values`` as an array; a list mixing text and other values stays an array of objects."""
    if isinstance(values, np.ndarray):
        return values
    if hasattr(values, "to_numpy"):  # a pandas Series
        return np.asarray(values.to_numpy())
    items = list(values) if not isinstance(values, str | bytes) else values
    array = np.asarray(items)
    if array.dtype.kind in "US" and not all(isinstance(v, str | np.str_) for v in items):
        return np.asarray(items, dtype=object)
    return array


def _as_1d(values: Any, name: str) -> npt.NDArray[Any]:
    array = _array(values)
    if array.ndim == 0:
        raise ValueError(f"{name}: expected a sequence of values, got a single value")
    if array.ndim != 1:
        raise ValueError(f"{name}: expected one value per case (1-D), got shape {array.shape}")
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise ValueError(f"{name}: contains missing values (NaN); drop those cases first")
    if array.dtype.kind == "O" and any(_is_missing(v) for v in array):
        raise ValueError(f"{name}: contains missing values (None/NaN); drop those cases first")
    return array


def _pair(a: Any, b: Any, names: Names) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    x, y = _as_1d(a, names[0]), _as_1d(b, names[1])
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"{names[0]} and {names[1]} differ in length ({x.shape[0]} vs {y.shape[0]})")
    return x, y


def _numbers(array: npt.NDArray[Any], name: str) -> FloatArray:
    try:
        numbers = np.asarray(array, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected numbers") from None
    if not np.isfinite(numbers).all():
        raise ValueError(f"{name}: contains a missing or infinite value")
    return numbers


def _too_few(n: int) -> Estimate | None:
    if n < 2:
        return Estimate(None, f"fewer than 2 cases ({n}): undefined")
    return None


def _show(value: Any) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, str) else str(value)


def _constant(array: npt.NDArray[Any]) -> bool:
    return len(set(array.tolist())) <= 1


def _codes(values: npt.NDArray[Any], index: dict[Hashable, int], name: str) -> IntArray:
    out = np.empty(values.shape[0], dtype=np.int64)
    unknown: dict[str, None] = {}
    for i, value in enumerate(values.tolist()):
        code = index.get(value)
        if code is None:
            unknown[_show(value)] = None
            out[i] = -1
        else:
            out[i] = code
    if unknown:
        known = ", ".join(_show(v) for v in index)
        raise ValueError(f"{name}: value(s) {', '.join(unknown)} not among the labels ({known})")
    return out


def _category_index(x: npt.NDArray[Any], y: npt.NDArray[Any], labels: Sequence[Any] | None) -> list[Any]:
    if labels is not None:
        cats = list(labels)
        if len(set(cats)) != len(cats):
            raise ValueError(f"labels contain duplicates: {cats}")
        return cats
    return list(dict.fromkeys([*x.tolist(), *y.tolist()]))


# --- Cohen's kappa --------------------------------------------------------------------


@dataclass(frozen=True)
class _KappaData:
    x: IntArray
    y: IntArray
    k: int
    weights: Weights | None
    cats: list[Any]


def _integer_levels(x: npt.NDArray[Any], y: npt.NDArray[Any]) -> list[int] | None:
    try:
        values = np.concatenate([np.asarray(x, dtype=float), np.asarray(y, dtype=float)])
    except (TypeError, ValueError):
        return None
    if values.size == 0 or not np.all(np.isfinite(values)) or not np.all(values == np.round(values)):
        return None
    return list(range(int(values.min()), int(values.max()) + 1))


def _kappa_data(
    a: Any, b: Any, weights: Weights | None, labels: Sequence[Any] | None, names: Names
) -> _KappaData:
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    x, y = _pair(a, b, names)
    if labels is None and weights is not None:
        levels = _integer_levels(x, y)
        if levels is None and x.size:
            raise ValueError(
                "weighted kappa needs ordered categories: pass labels=[lowest, ..., highest] "
                "or integer levels"
            )
        cats: list[Any] = [*(levels or [])]
        if levels is not None:
            x, y = np.asarray(x, dtype=float).astype(np.int64), np.asarray(y, dtype=float).astype(np.int64)
    else:
        cats = _category_index(x, y, labels)
    index = {c: i for i, c in enumerate(cats)}
    return _KappaData(_codes(x, index, names[0]), _codes(y, index, names[1]), len(cats), weights, cats)


def cohen_kappa(
    a: Any,
    b: Any,
    weights: Weights | None = None,
    labels: Sequence[Any] | None = None,
    *,
    names: Names = _NAMES,
) -> Estimate:
    """Cohen's κ between two raters, unweighted or with linear/quadratic weights.

    κ = (p_o − p_e) / (1 − p_e): observed agreement corrected for the agreement expected
    by chance from each rater's marginal frequencies. Weighted κ counts disagreements by
    their distance: ``labels`` gives the order of the categories (lowest first); without
    it, weighted κ needs integer levels (every integer between the lowest and the
    highest counts as a level). ``names`` is how notes refer to the two arrays.
    """
    data = _kappa_data(a, b, weights, labels, names)
    n = data.x.shape[0]
    if (few := _too_few(n)) is not None:
        return few
    x_const, y_const = _constant(data.x), _constant(data.y)
    if x_const and y_const and data.x[0] == data.y[0]:
        only = _show(data.cats[int(data.x[0])])
        return Estimate(
            None,
            f"both the {names[0]} and the {names[1]} are only {only}: chance agreement is 1, κ undefined",
        )
    value = float(
        _sklearn().cohen_kappa_score(data.x, data.y, labels=list(range(data.k)), weights=data.weights)
    )
    note = None
    if x_const or y_const:
        which, array = (names[0], data.x) if x_const else (names[1], data.y)
        only = _show(data.cats[int(array[0])])
        note = f"the {which} are only {only}: κ is 0 by construction, whatever the accuracy"
    return Estimate(value, note)


def _kappa_weights(k: int, weights: Weights | None) -> FloatArray:
    i, j = np.indices((k, k))
    if weights is None:
        return np.asarray(i != j, dtype=np.float64)
    if weights == "linear":
        return np.asarray(np.abs(i - j), dtype=np.float64)
    return ((i - j) ** 2).astype(float)


def _confusions(x: IntArray, y: IntArray, k: int) -> IntArray:
    """Per resample (rows of ``x`` and ``y``), the k×k table of counts."""
    rows = x.shape[0]
    flat = (np.arange(rows, dtype=np.int64)[:, None] * (k * k) + x * k + y).ravel()
    return np.bincount(flat, minlength=rows * k * k).reshape(rows, k, k)


def _kappa_batch(
    idx: IntArray,
    a: Any,
    b: Any,
    weights: Weights | None = None,
    labels: Sequence[Any] | None = None,
    *,
    names: Names = _NAMES,
) -> FloatArray:
    data = _kappa_data(a, b, weights, labels, names)
    counts = _confusions(data.x[idx], data.y[idx], data.k).astype(float)
    n = idx.shape[1]
    w = _kappa_weights(data.k, data.weights)
    expected = counts.sum(axis=2)[:, :, None] * counts.sum(axis=1)[:, None, :] / n
    observed_d = (w * counts).sum(axis=(1, 2))
    expected_d = (w * expected).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected_d > 1e-12, 1.0 - observed_d / expected_d, np.nan)


# --- Fleiss' kappa --------------------------------------------------------------------


def _fleiss_counts(ratings: Any, counts: bool) -> tuple[FloatArray, list[Any]]:
    matrix = np.asarray(ratings)
    if matrix.ndim != 2:
        raise ValueError(f"ratings: expected a 2-D table (subjects × raters), got shape {matrix.shape}")
    if counts:
        table = _numbers(matrix, "ratings")
        if (table < 0).any() or not np.all(table == np.round(table)):
            raise ValueError("ratings: counts must be non-negative integers")
        if table.shape[0] and not np.all(table.sum(axis=1) == table[0].sum()):
            raise ValueError("ratings: every subject needs the same number of ratings")
        return table, list(range(table.shape[1]))
    float_gaps = matrix.dtype.kind == "f" and bool(np.isnan(matrix).any())
    object_gaps = matrix.dtype.kind == "O" and any(_is_missing(v) for v in matrix.ravel())
    if float_gaps or object_gaps:
        raise ValueError("ratings: missing ratings; Fleiss' κ needs every rater to rate every subject")
    cats = list(dict.fromkeys(matrix.ravel().tolist()))
    index = {c: i for i, c in enumerate(cats)}
    table = np.zeros((matrix.shape[0], len(cats)))
    for s, row in enumerate(matrix.tolist()):
        for value in row:
            table[s, index[value]] += 1
    return table, cats


def fleiss_kappa(ratings: Any, *, counts: bool = False) -> Estimate:
    """Fleiss' κ for several raters (e.g. three physicians) rating every subject.

    ``ratings``: one row per subject, one column per rater, holding categories; or, with
    ``counts=True``, one column per category holding how many raters chose it.
    κ = (P̄ − P_e) / (1 − P_e), where P̄ is the mean proportion of agreeing rater pairs per
    subject and P_e the chance agreement from the overall category frequencies.
    """
    table, cats = _fleiss_counts(ratings, counts)
    subjects = table.shape[0]
    if (few := _too_few(subjects)) is not None:
        return few
    raters = float(table[0].sum())
    if raters < 2:
        return Estimate(None, f"fewer than 2 raters per subject ({raters:g}): undefined")
    p_j = table.sum(axis=0) / (subjects * raters)
    p_i = ((table**2).sum(axis=1) - raters) / (raters * (raters - 1))
    p_bar, p_e = float(p_i.mean()), float((p_j**2).sum())
    if p_e >= 1 - 1e-12:
        only = _show(cats[int(np.argmax(p_j))])
        return Estimate(None, f"every rating is {only}: chance agreement is 1, κ undefined")
    return Estimate((p_bar - p_e) / (1 - p_e))


# --- accuracy -------------------------------------------------------------------------


def _match_codes(a: Any, b: Any, names: Names) -> tuple[IntArray, IntArray]:
    x, y = _pair(a, b, names)
    index = {c: i for i, c in enumerate(_category_index(x, y, None))}
    return _codes(x, index, names[0]), _codes(y, index, names[1])


def accuracy(a: Any, b: Any, *, names: Names = _NAMES) -> Estimate:
    """The share of cases on which the two arrays agree exactly."""
    x, y = _match_codes(a, b, names)
    if (few := _too_few(x.shape[0])) is not None:
        return few
    return Estimate(float(np.mean(x == y)))


def _accuracy_batch(idx: IntArray, a: Any, b: Any, *, names: Names = _NAMES) -> FloatArray:
    x, y = _match_codes(a, b, names)
    return np.asarray(np.mean(x[idx] == y[idx], axis=1), dtype=np.float64)


def _levels(a: Any, b: Any, labels: Sequence[Any] | None, names: Names) -> tuple[FloatArray, FloatArray]:
    x, y = _pair(a, b, names)
    if labels is not None:
        index = {c: i for i, c in enumerate(_category_index(x, y, labels))}
        return _codes(x, index, names[0]).astype(float), _codes(y, index, names[1]).astype(float)
    try:
        return _numbers(x, names[0]), _numbers(y, names[1])
    except ValueError:
        raise ValueError(
            "within-one accuracy needs ordered levels: pass labels=[lowest, ..., highest] or numbers"
        ) from None


def within_one_accuracy(
    a: Any, b: Any, labels: Sequence[Any] | None = None, *, names: Names = _NAMES
) -> Estimate:
    """The share of cases whose two ordinal ratings are at most one level apart.

    ``labels`` orders the levels (lowest first); without it the values must be numbers,
    taken as levels one apart (1, 2, 3, ...).
    """
    x, y = _levels(a, b, labels, names)
    if (few := _too_few(x.shape[0])) is not None:
        return few
    return Estimate(float(np.mean(np.abs(x - y) <= 1 + 1e-9)))


def _within_one_batch(
    idx: IntArray, a: Any, b: Any, labels: Sequence[Any] | None = None, *, names: Names = _NAMES
) -> FloatArray:
    x, y = _levels(a, b, labels, names)
    return np.asarray(np.mean(np.abs(x[idx] - y[idx]) <= 1 + 1e-9, axis=1), dtype=np.float64)


# --- correlations ---------------------------------------------------------------------


def _correlation_input(x_in: Any, y_in: Any, names: Names) -> tuple[FloatArray, FloatArray, Estimate | None]:
    x, y = _pair(x_in, y_in, names)
    xs, ys = _numbers(x, names[0]), _numbers(y, names[1])
    if (few := _too_few(xs.shape[0])) is not None:
        return xs, ys, few
    for name, values in ((names[0], xs), (names[1], ys)):
        if np.ptp(values) == 0:
            return (
                xs,
                ys,
                Estimate(None, f"the {name} are constant (all {_show(values[0])}): correlation undefined"),
            )
    return xs, ys, None


def _small_note(n: int) -> str | None:
    return "only 2 cases: a correlation is ±1 by construction" if n == 2 else None


def pearson(x: Any, y: Any, *, names: Names = _NAMES) -> Estimate:
    """Pearson's r: the linear correlation of the two arrays."""
    xs, ys, degenerate = _correlation_input(x, y, names)
    if degenerate is not None:
        return degenerate
    from scipy.stats import pearsonr

    return Estimate(float(pearsonr(xs, ys).statistic), _small_note(xs.shape[0]))


def spearman(x: Any, y: Any, *, names: Names = _NAMES) -> Estimate:
    """Spearman's ρ: Pearson's r of the ranks (ties get their average rank)."""
    xs, ys, degenerate = _correlation_input(x, y, names)
    if degenerate is not None:
        return degenerate
    from scipy.stats import spearmanr

    return Estimate(float(spearmanr(xs, ys).statistic), _small_note(xs.shape[0]))


def kendall(x: Any, y: Any, *, names: Names = _NAMES) -> Estimate:
    """Kendall's τ-b: (concordant − discordant pairs), corrected for ties in either array."""
    xs, ys, degenerate = _correlation_input(x, y, names)
    if degenerate is not None:
        return degenerate
    from scipy.stats import kendalltau

    return Estimate(float(kendalltau(xs, ys, variant="b").statistic), _small_note(xs.shape[0]))


def _pearson_rows(x: FloatArray, y: FloatArray) -> FloatArray:
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(den > 0, (xc * yc).sum(axis=1) / den, np.nan)
    return np.clip(r, -1.0, 1.0)


def _constant_rows(values: FloatArray) -> npt.NDArray[np.bool_]:
    return np.asarray(np.ptp(values, axis=1) == 0, dtype=np.bool_)


def _pearson_batch(idx: IntArray, x: Any, y: Any, *, names: Names = _NAMES) -> FloatArray:
    xs, ys, _ = _correlation_input(x, y, names)
    xr, yr = xs[idx], ys[idx]
    r = _pearson_rows(xr, yr)
    return np.where(_constant_rows(xr) | _constant_rows(yr), np.nan, r)


def _spearman_batch(idx: IntArray, x: Any, y: Any, *, names: Names = _NAMES) -> FloatArray:
    from scipy.stats import rankdata

    xs, ys, _ = _correlation_input(x, y, names)
    xr, yr = xs[idx], ys[idx]
    r = _pearson_rows(rankdata(xr, axis=1), rankdata(yr, axis=1))
    return np.where(_constant_rows(xr) | _constant_rows(yr), np.nan, r)


# --- ROC AUC and F1 -------------------------------------------------------------------


def _binary_truth(values: npt.NDArray[Any], positive: Any, name: str) -> npt.NDArray[np.bool_]:
    classes = list(dict.fromkeys(values.tolist()))
    if len(classes) > 2:
        shown = ", ".join(_show(c) for c in classes[:6])
        raise ValueError(f"{name}: a binary statistic needs two classes, got {len(classes)} ({shown})")
    if len(classes) == 2 and positive not in classes:
        raise ValueError(
            f"{name}: the positive class {_show(positive)} is not one of the labels "
            f"({', '.join(_show(c) for c in classes)})"
        )
    return np.asarray(values == positive, dtype=bool)


def _auc_input(
    human: Any, scores: Any, positive: Any, names: Names
) -> tuple[npt.NDArray[np.bool_], FloatArray]:
    h, s = _pair(human, scores, names)
    return _binary_truth(h, positive, names[0]), _numbers(s, names[1])


def roc_auc(
    human_binary: Any,
    metric_scores: Any,
    *,
    positive: Any = 1,
    names: Names = ("human labels", "metric scores"),
) -> Estimate:
    """ROC AUC of ``metric_scores`` for predicting the binary human judgement.

    The probability that a random positive case scores higher than a random negative one
    (ties count one half); 0.5 is chance, 1 perfect separation. ``positive`` names the
    positive class of ``human_binary``; higher scores are taken to mean "positive".
    """
    y, s = _auc_input(human_binary, metric_scores, positive, names)
    if (few := _too_few(y.shape[0])) is not None:
        return few
    if y.all() or not y.any():
        which = "positive" if y.all() else "negative"
        return Estimate(None, f"the {names[0]} are all {which}: ROC AUC needs both classes")
    value = float(_sklearn().roc_auc_score(y, s))
    note = None
    if np.ptp(s) == 0:
        note = f"the {names[1]} are constant: AUC is 0.5 by construction"
    elif len(np.unique(s)) == 2:
        note = f"the {names[1]} take two values: the AUC of a single operating point"
    return Estimate(value, note)


def _auc_batch(
    idx: IntArray,
    human: Any,
    scores: Any,
    *,
    positive: Any = 1,
    names: Names = ("human labels", "metric scores"),
) -> FloatArray:
    from scipy.stats import rankdata

    y, s = _auc_input(human, scores, positive, names)
    yr = y[idx]
    ranks = rankdata(s[idx], axis=1)
    pos = yr.sum(axis=1).astype(float)
    neg = idx.shape[1] - pos
    with np.errstate(divide="ignore", invalid="ignore"):
        auc = ((ranks * yr).sum(axis=1) - pos * (pos + 1) / 2) / (pos * neg)
    return np.where((pos > 0) & (neg > 0), auc, np.nan)


F1Average = Literal["binary", "macro"]


def _f1_binary_input(
    y_true: Any, y_pred: Any, positive: Any, names: Names
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    t, p = _pair(y_true, y_pred, names)
    both = np.asarray([*t.tolist(), *p.tolist()], dtype=object)
    _binary_truth(both, positive, f"{names[0]} and {names[1]}")
    return np.asarray(t == positive, dtype=bool), np.asarray(p == positive, dtype=bool)


def f1(
    y_true: Any,
    y_pred: Any,
    *,
    positive: Any = 1,
    average: F1Average = "binary",
    names: Names = ("human labels", "metric predictions"),
) -> Estimate:
    """F1 of the predictions against the truth: 2·TP / (2·TP + FP + FN).

    ``average="binary"``: F1 of the ``positive`` class (both arrays hold at most two
    classes). ``average="macro"``: the unweighted mean of every class's F1, over the
    classes that occur in either array.
    """
    if average not in ("binary", "macro"):
        raise ValueError(f"average must be 'binary' or 'macro', got {average!r}")
    f1_score = _sklearn().f1_score
    if average == "macro":
        t, p = _match_codes(y_true, y_pred, names)
        if (few := _too_few(t.shape[0])) is not None:
            return few
        return Estimate(float(f1_score(t, p, average="macro", zero_division=0.0)))
    tb, pb = _f1_binary_input(y_true, y_pred, positive, names)
    if (few := _too_few(tb.shape[0])) is not None:
        return few
    if not tb.any() and not pb.any():
        return Estimate(None, f"the positive class {_show(positive)} occurs in neither array: F1 undefined")
    value = float(f1_score(tb, pb, pos_label=True, average="binary", zero_division=0.0))
    note = None if pb.any() else "nothing predicted positive: F1 is 0"
    return Estimate(value, note)


def _f1_batch(
    idx: IntArray,
    y_true: Any,
    y_pred: Any,
    *,
    positive: Any = 1,
    average: F1Average = "binary",
    names: Names = ("human labels", "metric predictions"),
) -> FloatArray:
    if average == "macro":
        t, p = _match_codes(y_true, y_pred, names)
        k = int(max(t.max(initial=0), p.max(initial=0))) + 1
        counts = _confusions(t[idx], p[idx], k).astype(float)
        tp = np.diagonal(counts, axis1=1, axis2=2)
        fp = counts.sum(axis=1) - tp
        fn = counts.sum(axis=2) - tp
        den = 2 * tp + fp + fn
        present = den > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            per_class = np.where(present, 2 * tp / den, 0.0)
        return np.asarray(per_class.sum(axis=1) / present.sum(axis=1), dtype=np.float64)
    tb, pb = _f1_binary_input(y_true, y_pred, positive, names)
    tr, pr = tb[idx], pb[idx]
    tp = (tr & pr).sum(axis=1).astype(float)
    fp = (~tr & pr).sum(axis=1)
    fn = (tr & ~pr).sum(axis=1)
    den = 2 * tp + fp + fn
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, 2 * tp / den, np.nan)


# --- bootstrap ------------------------------------------------------------------------

StatFn = Callable[..., "Estimate | float | None"]
_BatchFn = Callable[..., FloatArray]

_FAST: dict[Callable[..., Any], _BatchFn] = {
    cohen_kappa: _kappa_batch,
    accuracy: _accuracy_batch,
    within_one_accuracy: _within_one_batch,
    pearson: _pearson_batch,
    spearman: _spearman_batch,
    roc_auc: _auc_batch,
    f1: _f1_batch,
}


def _fast_path(stat_fn: StatFn) -> Callable[[IntArray, tuple[Any, ...]], FloatArray] | None:
    """The vectorised form of a statistic of this module (maybe with keywords bound), if any."""
    func: Any = stat_fn
    keywords: dict[str, Any] = {}
    if isinstance(stat_fn, functools.partial):
        if stat_fn.args:
            return None
        func, keywords = stat_fn.func, dict(stat_fn.keywords)
    try:
        batch = _FAST.get(func)
    except TypeError:  # an unhashable callable
        return None
    if batch is None:
        return None
    return lambda idx, arrays: batch(idx, *arrays, **keywords)


def _as_float(result: Estimate | float | None) -> float:
    if isinstance(result, Estimate):
        result = result.value
    if result is None:
        return math.nan
    value = float(result)
    return value if math.isfinite(value) else math.nan


def resample_indices(n: int, *, n_resamples: int = 2000, seed: int = 0) -> IntArray:
    """The case indices of each bootstrap resample (one row per resample), reproducible by seed."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(n_resamples, n), dtype=np.int64)


def bootstrap_ci(
    stat_fn: StatFn,
    *arrays: Any,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """Percentile bootstrap interval of ``stat_fn(*arrays)``, resampling cases jointly.

    Every resample draws n cases with replacement and takes the same cases from each array
    (paired), so the interval reflects which cases happened to be labelled. With the same
    seed the resamples are the same, for every statistic. Resamples on which the statistic
    is undefined (e.g. one class only) are left out and counted; when more than half are,
    no interval is given. ``stat_fn`` returns an :class:`Estimate`, a float or ``None``.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if not arrays:
        raise ValueError("bootstrap_ci needs at least one array")
    data = [_array(a) for a in arrays]
    n = data[0].shape[0] if data[0].ndim else 0
    if any(d.ndim == 0 or d.shape[0] != n for d in data):
        raise ValueError("bootstrap_ci: every array needs one entry per case, of the same length")
    if n < 2:
        return Interval(None, None, 0, f"fewer than 2 cases ({n}): no interval")
    idx = resample_indices(n, n_resamples=n_resamples, seed=seed)
    fast = _fast_path(stat_fn)
    if fast is not None:
        values = np.asarray(fast(idx, tuple(data)), dtype=float)
    else:
        values = np.array([_as_float(stat_fn(*(d[row] for d in data))) for row in idx], dtype=float)
    defined = values[np.isfinite(values)]
    undefined = n_resamples - defined.size
    if defined.size * 2 < n_resamples:
        return Interval(
            None,
            None,
            int(defined.size),
            f"defined on only {defined.size} of {n_resamples} resamples: no interval",
        )
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    note = f"from {defined.size}/{n_resamples} resamples (undefined on the rest)" if undefined else None
    return Interval(float(low), float(high), int(defined.size), note)


def difference_ci(
    stat_fn: StatFn,
    first: Sequence[Any],
    second: Sequence[Any],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[Estimate, Interval]:
    """``stat_fn(*first) - stat_fn(*second)`` on the same cases, with a paired percentile
    bootstrap interval: every resample draws the same cases for both sides, so the interval
    is that of the difference (e.g. a judge's ROC AUC minus a baseline's, against the same
    human labels). ``first`` and ``second`` are tuples of arrays with one entry per case."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    data_a = [_array(a) for a in first]
    data_b = [_array(b) for b in second]
    n = data_a[0].shape[0] if data_a and data_a[0].ndim else 0
    if any(d.ndim == 0 or d.shape[0] != n for d in (*data_a, *data_b)):
        raise ValueError("difference_ci: every array needs one entry per case, of the same length")
    left, right = _as_float(stat_fn(*data_a)), _as_float(stat_fn(*data_b))
    if not (math.isfinite(left) and math.isfinite(right)):
        return Estimate(None, "the statistic is undefined on one side"), Interval(None, None, 0, None)
    estimate = Estimate(left - right)
    if n < 2:
        return estimate, Interval(None, None, 0, f"fewer than 2 cases ({n}): no interval")
    idx = resample_indices(n, n_resamples=n_resamples, seed=seed)
    fast = _fast_path(stat_fn)
    if fast is not None:
        values = np.asarray(fast(idx, tuple(data_a)), dtype=float) - np.asarray(
            fast(idx, tuple(data_b)), dtype=float
        )
    else:
        values = np.array(
            [
                _as_float(stat_fn(*(d[row] for d in data_a))) - _as_float(stat_fn(*(d[row] for d in data_b)))
                for row in idx
            ],
            dtype=float,
        )
    defined = values[np.isfinite(values)]
    if defined.size * 2 < n_resamples:
        return estimate, Interval(None, None, int(defined.size), "defined on too few resamples: no interval")
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return estimate, Interval(float(low), float(high), int(defined.size), None)
