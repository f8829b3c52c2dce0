"""How well a metric agrees with human labels: the statistics that fit the kind of label.

:func:`agreement` takes the metric's values and the human labels of the same cases and
reports, per statistic, the value, a 95 % percentile bootstrap interval (2,000 resamples
of cases, seed 0) and a note when the statistic is undefined or degenerate:

``binary``      human yes/no (the metric a score): ROC AUC, then Cohen's κ, accuracy and
                F1 of the metric thresholded at ``threshold`` (default 0.5 for scores
                in [0, 1]; a score at or above it predicts the positive class)
``ordinal``     ordered levels (low < medium < high, or 1–5): κ, quadratic-weighted κ,
                accuracy, accuracy within one level, Spearman, Kendall, Pearson
``nominal``     unordered categories: κ, accuracy, macro F1
``continuous``  numbers: Pearson, Spearman, Kendall

:func:`rater_agreement` compares two annotators' labels of the same cases in the same
way (human–human agreement, the ceiling a metric can be expected to reach): both sides
are labels, so binary labels get κ, accuracy and F1 but no ROC AUC.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from clineval.agreement import stats
from clineval.errors import ClinevalError

Kind = Literal["binary", "ordinal", "nominal", "continuous"]
KINDS: tuple[Kind, ...] = ("binary", "ordinal", "nominal", "continuous")
HUMAN = "human labels"
METRIC = "metric values"

#: Two-valued text labels whose positive class is known (the first of each pair).
BINARY_PAIRS: tuple[tuple[str, str], ...] = (
    ("yes", "no"),
    ("y", "n"),
    ("true", "false"),
    ("pass", "fail"),
    ("correct", "incorrect"),
    ("positive", "negative"),
    ("present", "absent"),
    ("agree", "disagree"),
)


class AgreementError(ClinevalError, ValueError):
    """Labels or metric values that do not fit the requested analysis."""


class StatisticResult(BaseModel):
    """One statistic: its value (``None`` when undefined), bootstrap interval, cases and a note."""

    model_config = ConfigDict(extra="forbid")

    name: str
    title: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int
    note: str | None = None


class JoinSummary(BaseModel):
    """How a run's cases and a labels file were matched, and what was left out."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    metric: str
    score: str
    labels_source: str
    id_column: str
    label_column: str
    run_cases: int
    label_rows: int
    matched: int
    """Run cases that have a label row."""
    used: int
    """Matched cases that entered the statistics."""
    cases_without_label: int
    labels_without_case: int
    empty_labels: int
    """Matched cases whose label cell is empty."""
    unscored: int
    """Matched cases the metric could not score (error scores, or no result)."""
    not_applicable: int
    no_value: int
    """Matched, scored cases with no value for the chosen score (e.g. a missing sub-score)."""
    example_cases_without_label: list[str] = Field(default_factory=list)
    example_labels_without_case: list[str] = Field(default_factory=list)


class RaterJoinSummary(BaseModel):
    """How two annotators' label tables were matched by case id, and what was left out."""

    model_config = ConfigDict(extra="forbid")

    first_source: str
    second_source: str
    first_column: str
    second_column: str
    first_rows: int
    second_rows: int
    matched: int
    """Ids with a row for both annotators."""
    used: int
    """Matched ids with a label from both."""
    only_first: int
    only_second: int
    empty_first: int
    """Matched ids whose first label is empty (also counted when both are)."""
    empty_second: int
    example_only_first: list[str] = Field(default_factory=list)
    example_only_second: list[str] = Field(default_factory=list)


class AgreementReport(BaseModel):
    """Agreement of a metric with human labels: one entry per statistic that fits ``kind``."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind
    kind_inferred: bool = False
    n: int
    """Cases with both a metric value and a human label."""
    dropped_missing: int = 0
    """Pairs left out because the metric value or the label was missing."""
    threshold: float | None = None
    positive: str | None = None
    label_order: list[str] | None = None
    level: float = 0.95
    n_resamples: int = 2000
    seed: int = 0
    statistics: list[StatisticResult]
    notes: list[str] = Field(default_factory=list)
    join: JoinSummary | None = None
    raters: list[str] | None = None
    """The two annotators compared (:func:`rater_agreement`), the first being the reference
    for F1; ``None`` when a metric is compared with labels."""
    rater_join: RaterJoinSummary | None = None

    def get(self, name: str) -> StatisticResult:
        for stat in self.statistics:
            if stat.name == name:
                return stat
        raise KeyError(f"no statistic {name!r} in this report; it has {', '.join(self.names)}")

    def value(self, name: str) -> float | None:
        return self.get(name).value

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.statistics]

    def values(self) -> dict[str, float | None]:
        """``{statistic name: value}``."""
        return {s.name: s.value for s in self.statistics}


# --- value handling -------------------------------------------------------------------


def is_missing(value: Any) -> bool:
    """``None``, NaN, pandas' missing markers, and empty text."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, float | np.floating):
        return bool(np.isnan(value))
    return type(value).__name__ in {"NAType", "NaTType"}


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value.strip() if isinstance(value, str) else value


def as_number(value: Any) -> float | None:
    """A number from a number, a boolean or numeric text; ``None`` otherwise."""
    value = _plain(value)
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def label_key(value: Any) -> str:
    """How labels are compared: numbers by value (``1``, ``1.0`` and ``"1"`` are one label),
    text without regard to case or surrounding spaces, booleans as ``true``/``false``."""
    value = _plain(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    number = as_number(value)
    if number is not None:
        return str(int(number)) if number.is_integer() else repr(number)
    return str(value).casefold()


def _show(value: Any) -> str:
    value = _plain(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _examples(values: Sequence[Any], limit: int = 5) -> str:
    shown = list(dict.fromkeys(_show(v) for v in values))
    more = f", … ({len(shown)} in all)" if len(shown) > limit else ""
    return ", ".join(repr(v) for v in shown[:limit]) + more


# --- kinds ----------------------------------------------------------------------------


def infer_kind(
    human_labels: Sequence[Any], *, label_order: Sequence[Any] | None = None, positive: Any = None
) -> Kind:
    """The kind of the labels, when not given.

    With an order: ``binary`` for two levels, else ``ordinal``. Otherwise ``binary`` when
    the labels are booleans, 0/1, a known pair such as yes/no, or two values one of which
    is ``positive``; ``ordinal`` for other whole numbers; ``continuous`` for other numbers;
    ``nominal`` for text.
    """
    values = [v for v in human_labels if not is_missing(v)]
    keys = {label_key(v) for v in values}
    if label_order is not None:
        return "binary" if len(label_order) == 2 else "ordinal"
    if positive is not None and len(keys) <= 2 and label_key(positive) in keys:
        return "binary"
    if keys and (keys <= {"0", "1"} or keys <= {"true", "false"} or _known_pair(keys) is not None):
        return "binary"
    numbers = [as_number(v) for v in values]
    if values and all(n is not None for n in numbers):
        return "ordinal" if all(n is not None and n.is_integer() for n in numbers) else "continuous"
    return "nominal"


def _known_pair(keys: set[str]) -> str | None:
    for pos, neg in BINARY_PAIRS:
        if keys and keys <= {pos, neg}:
            return pos
    return None


def _binary_codes(
    values: Sequence[Any], who: str, *, positive: Any, label_order: Sequence[Any] | None
) -> tuple[list[int], str]:
    """0/1 per value (1 = positive) and how the positive class is shown."""
    keys = [label_key(v) for v in values]
    distinct = list(dict.fromkeys(keys))
    if positive is not None:
        pos_key, pos_show = label_key(positive), _show(positive)
    elif label_order is not None:
        if len(label_order) != 2:
            raise AgreementError(
                f"binary labels need exactly two labels in the order (negative, positive), got "
                f"{len(label_order)}: {', '.join(_show(v) for v in label_order)}"
            )
        pos_key, pos_show = label_key(label_order[1]), _show(label_order[1])
        allowed = {label_key(v) for v in label_order}
        unknown = [v for v, k in zip(values, keys, strict=True) if k not in allowed]
        if unknown:
            raise AgreementError(
                f"{who} {_examples(unknown)} not in the label order "
                f"({', '.join(_show(v) for v in label_order)})"
            )
    elif set(distinct) <= {"0", "1"}:
        pos_key, pos_show = "1", "1"
    elif set(distinct) <= {"true", "false"}:
        pos_key, pos_show = "true", "true"
    elif (known := _known_pair(set(distinct))) is not None:
        pos_key, pos_show = known, known
    else:
        raise AgreementError(
            f"cannot tell which of the {who} ({_examples(values)}) is the positive class: "
            "give positive= (--positive LABEL) or the order negative,positive (--order)"
        )
    if len(distinct) > 2:
        raise AgreementError(
            f"binary {who} must take two values, got {len(distinct)}: {_examples(values)} "
            "(for more levels use kind 'ordinal' or 'nominal')"
        )
    if len(distinct) == 2 and pos_key not in distinct:
        raise AgreementError(f"the positive class {pos_show!r} is not one of the {who} ({_examples(values)})")
    return [1 if k == pos_key else 0 for k in keys], pos_show


def _level_index(label_order: Sequence[Any]) -> dict[str, int]:
    index: dict[str, int] = {}
    for i, label in enumerate(label_order):
        key = label_key(label)
        if key in index:
            raise AgreementError(f"label order names {_show(label)!r} twice")
        index[key] = i
    return index


# --- the report -----------------------------------------------------------------------

_TITLES = {
    "roc_auc": "ROC AUC",
    "cohen_kappa": "Cohen's κ",
    "weighted_kappa": "quadratic-weighted κ",
    "accuracy": "accuracy",
    "within_one_accuracy": "accuracy within one level",
    "f1": "F1",
    "macro_f1": "macro F1",
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "kendall": "Kendall τ-b",
}


class _Builder:
    def __init__(self, n_resamples: int, seed: int, level: float) -> None:
        self.n_resamples, self.seed, self.level = n_resamples, seed, level
        self.results: list[StatisticResult] = []

    def add(
        self,
        name: str,
        fn: Callable[..., stats.Estimate],
        *arrays: Any,
        title: str | None = None,
        note: str | None = None,
    ) -> None:
        point = fn(*arrays)
        n = len(arrays[0])
        low = high = None
        notes = [note] if note else []
        if point.note:
            notes.append(point.note)
        if point.value is not None:
            interval = stats.bootstrap_ci(
                fn, *arrays, n_resamples=self.n_resamples, seed=self.seed, level=self.level
            )
            low, high = interval.low, interval.high
            if interval.note:
                notes.append(f"CI: {interval.note}")
        self.results.append(
            StatisticResult(
                name=name,
                title=title or _TITLES[name],
                value=point.value,
                ci_low=low,
                ci_high=high,
                n=n,
                note="; ".join(notes) or None,
            )
        )

    def skip(self, name: str, n: int, note: str, title: str | None = None) -> None:
        self.results.append(
            StatisticResult(name=name, title=title or _TITLES[name], value=None, n=n, note=note)
        )


def _check_options(
    kind: Kind, threshold: float | None, label_order: Sequence[Any] | None, positive: Any
) -> None:
    if kind not in KINDS:
        raise AgreementError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if threshold is not None and kind != "binary":
        raise AgreementError(f"a threshold applies to binary labels only (kind is {kind})")
    if threshold is not None and not math.isfinite(threshold):
        raise AgreementError(f"threshold must be a finite number, got {threshold}")
    if positive is not None and kind != "binary":
        raise AgreementError(f"a positive class applies to binary labels only (kind is {kind})")
    if label_order is not None and kind not in ("binary", "ordinal"):
        raise AgreementError(f"a label order applies to ordinal or binary labels only (kind is {kind})")
    if label_order is not None and len(label_order) < 2:
        raise AgreementError("a label order needs at least two labels")


def agreement(
    metric_values: Sequence[Any] | Any,
    human_labels: Sequence[Any] | Any,
    *,
    kind: Kind | None = None,
    threshold: float | None = None,
    label_order: Sequence[Any] | None = None,
    positive: Any = None,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> AgreementReport:
    """The agreement statistics that fit ``kind`` between a metric and human labels.

    ``metric_values`` and ``human_labels`` are paired by position (one entry per case);
    pairs with a missing value on either side are left out and counted. Labels may be
    numbers or text; text labels of an ordinal scale need ``label_order`` (lowest first,
    e.g. ``["low", "medium", "high"]``). For binary labels ``positive`` names the positive
    class (default: 1, true, yes, ..., or the second of a two-label ``label_order``).
    ``kind=None`` infers the kind from the labels (see :func:`infer_kind`).
    """
    return _agreement(
        metric_values,
        human_labels,
        names=(HUMAN, METRIC),
        raters=False,
        kind=kind,
        threshold=threshold,
        label_order=label_order,
        positive=positive,
        n_resamples=n_resamples,
        seed=seed,
        level=level,
    )


def rater_agreement(
    first: Sequence[Any] | Any,
    second: Sequence[Any] | Any,
    *,
    names: tuple[str, str] = ("first annotator", "second annotator"),
    kind: Kind | None = None,
    label_order: Sequence[Any] | None = None,
    positive: Any = None,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> AgreementReport:
    """Agreement between two annotators' labels of the same cases (paired by position).

    The statistics are those of :func:`agreement` for the kind, with both sides read as
    labels: binary labels get Cohen's κ, accuracy and F1 of the positive class (no ROC
    AUC, which needs a score); ordinal levels get κ, quadratic-weighted κ, accuracy
    (strict), accuracy within one level (relaxed), Spearman, Kendall and Pearson; nominal
    labels κ, accuracy and macro F1; numbers the correlations. κ, accuracy, F1 and the
    correlations do not depend on which annotator comes first. ``kind=None`` infers the
    kind from both annotators' labels together. ``names`` name the two in notes and errors.
    """
    if len(names) != 2 or names[0] == names[1]:
        raise AgreementError(f"give two different names for the annotators, got {names!r}")
    first_list, second_list = list(first), list(second)
    if len(first_list) != len(second_list):
        raise AgreementError(
            f"{names[0]} has {len(first_list)} labels, {names[1]} {len(second_list)}: "
            "they are paired by position"
        )
    if kind is None:
        both = [v for v in [*first_list, *second_list] if not is_missing(v)]
        kind = infer_kind(both, label_order=label_order, positive=positive)
        inferred = True
    else:
        inferred = False
    report = _agreement(
        second_list,
        first_list,
        names=names,
        raters=True,
        kind=kind,
        threshold=None,
        label_order=label_order,
        positive=positive,
        n_resamples=n_resamples,
        seed=seed,
        level=level,
    )
    notes = report.notes
    if inferred:
        hint = "; for ordered levels give their order (--order)" if kind == "nominal" else ""
        notes = [f"kind {kind!r} inferred from the labels; set kind (--kind) to choose{hint}", *notes]
    return report.model_copy(update={"raters": list(names), "kind_inferred": inferred, "notes": notes})


def _agreement(
    metric_values: Sequence[Any] | Any,
    human_labels: Sequence[Any] | Any,
    *,
    names: tuple[str, str],
    raters: bool,
    kind: Kind | None,
    threshold: float | None,
    label_order: Sequence[Any] | None,
    positive: Any,
    n_resamples: int,
    seed: int,
    level: float,
) -> AgreementReport:
    """:func:`agreement` and :func:`rater_agreement`: ``names`` are (reference, other), as
    notes and errors call them; ``raters`` reads both sides as labels."""
    human_name, metric_name = names
    metric_list, human_list = list(metric_values), list(human_labels)
    if len(metric_list) != len(human_list):
        raise AgreementError(
            f"{len(metric_list)} {metric_name} but {len(human_list)} {human_name}: "
            "they are paired by position"
        )
    pairs = [
        (_plain(m), _plain(h))
        for m, h in zip(metric_list, human_list, strict=True)
        if not is_missing(m) and not is_missing(h)
    ]
    dropped = len(metric_list) - len(pairs)
    metric = [m for m, _ in pairs]
    human = [h for _, h in pairs]
    inferred = kind is None
    chosen: Kind = kind if kind is not None else infer_kind(human, label_order=label_order, positive=positive)
    _check_options(chosen, threshold, label_order, positive)
    builder = _Builder(n_resamples, seed, level)
    notes: list[str] = []
    if inferred:
        hint = "; for ordered levels give their order (--order)" if chosen == "nominal" else ""
        notes.append(f"kind {chosen!r} inferred from the labels; set kind (--kind) to choose{hint}")
    if dropped:
        missing = "a label missing on either side" if raters else "a missing metric value or label"
        notes.append(f"{dropped} pair(s) with {missing} left out")
    report_threshold: float | None = None
    report_positive: str | None = None
    if chosen == "binary":
        report_threshold, report_positive = _binary(
            builder, metric, human, threshold, label_order, positive, names=names, raters=raters
        )
    elif chosen == "ordinal":
        _ordinal(builder, metric, human, label_order, names=names, raters=raters)
    elif chosen == "nominal":
        _nominal(builder, metric, human, notes, names=names, raters=raters)
    else:
        _continuous(builder, metric, human, names=names)
    return AgreementReport(
        kind=chosen,
        kind_inferred=inferred,
        n=len(pairs),
        dropped_missing=dropped,
        threshold=report_threshold,
        positive=report_positive,
        label_order=[_show(v) for v in label_order] if label_order is not None else None,
        level=level,
        n_resamples=n_resamples,
        seed=seed,
        statistics=builder.results,
        notes=notes,
    )


def _binary(
    builder: _Builder,
    metric: list[Any],
    human: list[Any],
    threshold: float | None,
    label_order: Sequence[Any] | None,
    positive: Any,
    *,
    names: tuple[str, str] = (HUMAN, METRIC),
    raters: bool = False,
) -> tuple[float | None, str | None]:
    human_name, other_name = names
    y, pos_show = _binary_codes(human, human_name, positive=positive, label_order=label_order)
    truth = np.asarray(y, dtype=np.int64)
    n = len(y)
    pair = (human_name, other_name if raters else "metric predictions")
    numbers = [as_number(v) for v in metric]
    if not raters and all(v is not None for v in numbers):
        scores = np.asarray(numbers, dtype=float)
        builder.add(
            "roc_auc",
            functools.partial(stats.roc_auc, positive=1, names=(HUMAN, "metric scores")),
            truth,
            scores,
        )
        used = threshold
        if used is None and scores.size and scores.min() >= 0 and scores.max() <= 1:
            used = 0.5
        if used is None:
            note = "metric scores lie outside [0, 1]: give a threshold (--threshold) to classify them"
            for name in ("cohen_kappa", "accuracy", "f1"):
                builder.skip(name, n, note, title=f"F1 (positive: {pos_show})" if name == "f1" else None)
            return None, pos_show
        predicted = (scores >= used).astype(np.int64)
    else:
        who = other_name if raters else "metric labels"
        try:
            codes, _ = _binary_codes(metric, who, positive=positive, label_order=label_order)
        except AgreementError as exc:
            if raters:
                raise
            raise AgreementError(f"{exc} (the metric values are labels, not scores)") from None
        predicted = np.asarray(codes, dtype=np.int64)
        if not raters:
            builder.add(
                "roc_auc",
                functools.partial(stats.roc_auc, positive=1, names=(HUMAN, "metric labels")),
                truth,
                predicted.astype(float),
                note="from the metric's labels (0/1), not scores",
            )
        used = None
    builder.add(
        "cohen_kappa",
        functools.partial(stats.cohen_kappa, labels=[0, 1], names=pair),
        truth,
        predicted,
    )
    builder.add("accuracy", functools.partial(stats.accuracy, names=pair), truth, predicted)
    builder.add(
        "f1",
        functools.partial(stats.f1, positive=1, names=pair),
        truth,
        predicted,
        title=f"F1 (positive: {pos_show})",
    )
    return used, pos_show


def _integer_like(values: Sequence[float | None]) -> bool:
    return all(v is not None and v.is_integer() for v in values)


def _ordinal(
    builder: _Builder,
    metric: list[Any],
    human: list[Any],
    label_order: Sequence[Any] | None,
    *,
    names: tuple[str, str] = (HUMAN, METRIC),
    raters: bool = False,
) -> None:
    human_name, metric_name = names
    n = len(human)
    metric_numbers = [as_number(v) for v in metric]
    metric_codes: list[float] | None
    if label_order is not None:
        index = _level_index(label_order)
        unknown = [h for h in human if label_key(h) not in index]
        if unknown:
            raise AgreementError(
                f"{human_name} {_examples(unknown)} not in the label order "
                f"({', '.join(_show(v) for v in label_order)})"
            )
        human_codes = [float(index[label_key(h)]) for h in human]
        if all(label_key(m) in index for m in metric):
            metric_codes = [float(index[label_key(m)]) for m in metric]
        elif all(v is not None for v in metric_numbers):
            metric_codes = None
        else:
            unknown = [m for m in metric if label_key(m) not in index]
            raise AgreementError(
                f"{metric_name} {_examples(unknown)} are neither levels of the label order "
                f"({', '.join(_show(v) for v in label_order)}) nor numbers"
            )
        levels: list[int] = list(range(len(label_order)))
    else:
        human_numbers = [as_number(h) for h in human]
        if not all(v is not None for v in human_numbers):
            text = [h for h, v in zip(human, human_numbers, strict=True) if v is None]
            raise AgreementError(
                f"ordinal {human_name} are text ({_examples(text)}): give their order, lowest first "
                "(label_order=[...], --order low,medium,high)"
            )
        if not _integer_like(human_numbers):
            fractional = [
                h for h, v in zip(human, human_numbers, strict=True) if v is not None and not v.is_integer()
            ]
            raise AgreementError(
                f"ordinal {human_name} must be levels (whole numbers), got e.g. {_examples(fractional)}"
                "; for measurements use kind 'continuous'"
            )
        human_codes = [float(v) for v in human_numbers if v is not None]
        if not all(v is not None for v in metric_numbers):
            text = [m for m, v in zip(metric, metric_numbers, strict=True) if v is None]
            raise AgreementError(
                f"{metric_name} {_examples(text)} are text but the {human_name} are numbers; "
                "use numbers for both, or text labels for both with a label order"
            )
        metric_codes = (
            [float(v) for v in metric_numbers if v is not None] if _integer_like(metric_numbers) else None
        )
        everything = human_codes + (metric_codes or [])
        levels = list(range(int(min(everything)), int(max(everything)) + 1)) if everything else []
    h = np.asarray(human_codes, dtype=float)
    if metric_codes is None and raters:
        fractional = [
            m for m, v in zip(metric, metric_numbers, strict=True) if v is None or not v.is_integer()
        ]
        raise AgreementError(
            f"ordinal {metric_name} must be levels of the scale (whole numbers or the labels of the order), "
            f"got e.g. {_examples(fractional)}"
        )
    if metric_codes is None:
        off = "metric values are scores, not levels of the scale: see the correlations"
        for name in ("cohen_kappa", "weighted_kappa", "accuracy", "within_one_accuracy"):
            builder.skip(name, n, off)
        m = np.asarray([v for v in metric_numbers if v is not None], dtype=float)
    else:
        m = np.asarray(metric_codes, dtype=float)
        hi, mi = h.astype(np.int64), m.astype(np.int64)
        builder.add("cohen_kappa", functools.partial(stats.cohen_kappa, labels=levels, names=names), hi, mi)
        builder.add(
            "weighted_kappa",
            functools.partial(stats.cohen_kappa, weights="quadratic", labels=levels, names=names),
            hi,
            mi,
        )
        builder.add("accuracy", functools.partial(stats.accuracy, names=names), hi, mi)
        builder.add("within_one_accuracy", functools.partial(stats.within_one_accuracy, names=names), h, m)
    for name, fn in (("spearman", stats.spearman), ("kendall", stats.kendall), ("pearson", stats.pearson)):
        builder.add(name, functools.partial(fn, names=names), h, m)


def _nominal(
    builder: _Builder,
    metric: list[Any],
    human: list[Any],
    notes: list[str],
    *,
    names: tuple[str, str] = (HUMAN, METRIC),
    raters: bool = False,
) -> None:
    h = np.asarray([label_key(v) for v in human], dtype=object)
    m = np.asarray([label_key(v) for v in metric], dtype=object)
    if len(h) and not set(m.tolist()) & set(h.tolist()):
        if raters:
            notes.append(
                f"the annotators share no label ({names[0]}: {_examples(human)}; "
                f"{names[1]}: {_examples(metric)})"
            )
        else:
            notes.append(
                f"no metric value is one of the human labels (metric: {_examples(metric)}; "
                f"human: {_examples(human)}); compare labels with labels (score 'label')"
            )
    builder.add("cohen_kappa", functools.partial(stats.cohen_kappa, names=names), h, m)
    builder.add("accuracy", functools.partial(stats.accuracy, names=names), h, m)
    builder.add("macro_f1", functools.partial(stats.f1, average="macro", names=names), h, m)


def _continuous(
    builder: _Builder, metric: list[Any], human: list[Any], *, names: tuple[str, str] = (HUMAN, METRIC)
) -> None:
    arrays = []
    for who, values in ((names[0], human), (names[1], metric)):
        numbers = [as_number(v) for v in values]
        text = [v for v, x in zip(values, numbers, strict=True) if x is None]
        if text:
            raise AgreementError(f"continuous {who} must be numbers, got {_examples(text)}")
        arrays.append(np.asarray(numbers, dtype=float))
    for name, fn in (("pearson", stats.pearson), ("spearman", stats.spearman), ("kendall", stats.kendall)):
        builder.add(name, functools.partial(fn, names=names), *arrays)
