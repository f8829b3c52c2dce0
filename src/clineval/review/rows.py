"""Agreement rows: one comparison of reviewers with a metric, with its statistics, the
trivial baselines beside it and the reviewers' own agreement (the ceiling).

See :mod:`clineval.review.agreement` for what each row holds and how it is computed; this
module computes the rows from observations (a reviewed item with the judge's verdict, a
reviewed case with the metric's value), so that :mod:`clineval.review.calibrate` can compute
the same rows for other judges.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clineval.agreement import cluster, stats
from clineval.agreement.report import StatisticResult
from clineval.calibration.baselines import content_word_share, rouge_l
from clineval.calibration.protocols import cross_fitted_labels, kappa_value
from clineval.model import ResultRecord, ReviewRecord
from clineval.review.items import JudgeVerdict, ReviewItem
from clineval.review.schema import FACT_IMPORTANCE, FACT_VERDICT, ReviewScale

LEVEL = 0.95
N_RESAMPLES = 2000
SEED = 0
BASELINES = {"rouge_l": "ROUGE-L", "word_share": "content-word share"}
Verdict = Literal["beats", "worse", "unclear"]
RowLevel = Literal["case", "fact", "importance", "sentence", "turn"]


class Figure(StatisticResult):
    """One statistic with its interval (:class:`clineval.agreement.StatisticResult`, whose
    ``n`` may be left out here)."""

    n: int = 0

    @property
    def width(self) -> float | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return self.ci_high - self.ci_low


class BaselineFigure(BaseModel):
    """A baseline's value of one statistic on the same items, and metric − baseline."""

    model_config = ConfigDict(extra="forbid")

    baseline: str
    statistic: str
    value: Figure
    difference: Figure

    @property
    def verdict(self) -> Verdict:
        d = self.difference
        if d.ci_low is not None and d.ci_low > 0:
            return "beats"
        if d.ci_high is not None and d.ci_high < 0:
            return "worse"
        return "unclear"


class AgreementRow(BaseModel):
    """One comparison: reviewers against a metric (or its judge) on one kind of item."""

    model_config = ConfigDict(extra="forbid")

    key: str
    level: RowLevel
    title: str
    scale: str
    metric: str | None = None
    judge: str | None = None
    n: int
    """Items (or cases) compared."""
    cases: int
    statistics: list[Figure] = Field(default_factory=list)
    baselines: list[BaselineFigure] = Field(default_factory=list)
    reviewers: list[Figure] = Field(default_factory=list)
    """Agreement of the first two reviewers of the items that have two."""
    reviewer_pairs: int = 0
    headline: str | None = None
    """The statistic whose interval width says how precise the row is."""
    notes: list[str] = Field(default_factory=list)

    def get(self, name: str) -> Figure | None:
        return next((f for f in self.statistics if f.name == name), None)

    def baseline(self, baseline: str, statistic: str) -> BaselineFigure | None:
        return next((b for b in self.baselines if b.baseline == baseline and b.statistic == statistic), None)

    def reviewer(self, name: str) -> Figure | None:
        return next((f for f in self.reviewers if f.name == name), None)

    @property
    def width(self) -> float | None:
        figure = self.get(self.headline) if self.headline else None
        return figure.width if figure is not None else None


# --------------------------------------------------------------------------- observations


@dataclass
class Reviewed:
    """The reviewers' verdicts on one (case, item, scale), in the order they were first given."""

    case_id: str
    item: str
    scale: str
    verdicts: dict[str, str] = field(default_factory=dict)

    def consensus(self, order: Sequence[str]) -> str:
        """The majority verdict; a tie goes to the first reviewer's verdict among the tied."""
        counts: dict[str, int] = defaultdict(int)
        for verdict in self.verdicts.values():
            counts[verdict] += 1
        top = max(counts.values())
        tied = [v for v in counts if counts[v] == top]
        if len(tied) == 1:
            return tied[0]
        for reviewer in self.verdicts:
            if self.verdicts[reviewer] in tied:
                return self.verdicts[reviewer]
        return sorted(tied, key=lambda v: order.index(v) if v in order else len(order))[0]

    def first_two(self) -> tuple[str, str] | None:
        values = list(self.verdicts.values())
        return (values[0], values[1]) if len(values) >= 2 else None


def collect(
    reviews: Sequence[ReviewRecord], reviewer: str | None = None
) -> dict[tuple[str, str, str], Reviewed]:
    """(case, item, scale) -> the verdicts on it (current verdicts, oldest first)."""
    found: dict[tuple[str, str, str], Reviewed] = {}
    for record in sorted(reviews, key=lambda r: r.seq or 0):
        if (
            record.verdict is None
            or record.retracted
            or (reviewer is not None and record.reviewer != reviewer)
        ):
            continue
        key = (record.case_id, record.item, record.scale)
        entry = found.setdefault(key, Reviewed(*key))
        entry.verdicts.setdefault(record.reviewer, record.verdict)
    return found


@dataclass
class ItemObservation:
    """A reviewed item with what the judge said of it."""

    item: ReviewItem
    case_id: str
    reviewed: Reviewed
    consensus: str
    judge: JudgeVerdict | None


@dataclass
class CaseObservation:
    """A reviewed case scale with the metric's value and the texts the baselines compare."""

    case_id: str
    reviewed: Reviewed
    consensus: str
    value: float | None
    response: str
    evidence: str


# --------------------------------------------------------------------------- helpers


def cross_fitted(scores: Sequence[float], truth: Sequence[bool], groups: Sequence[str]) -> list[bool]:
    """Binary labels ``score >= t``, ``t`` for each half of the cases chosen on the other half
    to maximise κ against ``truth`` (cases split in two by a hash of their id; when one half
    is empty, on all items): the calibration's cross-fitting, with κ."""
    return cross_fitted_labels(scores, truth, groups, kappa_value)


def _figure(name: str, title: str, interval: cluster.ClusterInterval, note: str | None = None) -> Figure:
    notes = [n for n in (note, interval.note) if n]
    return Figure(
        name=name,
        title=title,
        value=interval.value,
        ci_low=interval.low,
        ci_high=interval.high,
        n=interval.n,
        note="; ".join(notes) or None,
    )


def _cluster_figure(
    name: str, title: str, stat: cluster.BatchStat, groups: Sequence[str], undefined: str
) -> Figure:
    return _figure(name, title, cluster.cluster_interval(stat, groups, undefined=undefined))


def _has_both(flags: Sequence[bool]) -> bool:
    return any(flags) and not all(flags)


_UNDEFINED_KAPPA = "κ undefined: both sides use one label only"
_UNDEFINED_AUC = "AUC undefined: the reviewers' verdicts are all of one class"


def _baseline_scores(items: Sequence[ItemObservation], part: str) -> dict[str, list[float]]:
    return {
        "rouge_l": [rouge_l(o.item.text, o.item.evidence_text, part=part) for o in items],
        "word_share": [content_word_share(o.item.text, o.item.evidence_text) for o in items],
    }


def _baselines_binary(
    positive: Sequence[bool],
    judge_flags: Sequence[bool],
    judge_credit: Sequence[float],
    scores: Mapping[str, Sequence[float]],
    groups: Sequence[str],
) -> list[BaselineFigure]:
    """Each baseline's AUC and cross-fitted κ against the reviewers, and metric − baseline."""
    out: list[BaselineFigure] = []
    for name, values in scores.items():
        flags = cross_fitted(values, positive, groups)
        for stat_name, title, mine, theirs, undefined in (
            (
                "roc_auc",
                "ROC AUC",
                cluster.roc_auc(positive, judge_credit),
                cluster.roc_auc(positive, values),
                _UNDEFINED_AUC,
            ),
            (
                "cohen_kappa2",
                "κ (yes or no)",
                cluster.kappa(judge_flags, positive, labels=[False, True]),
                cluster.kappa(flags, positive, labels=[False, True]),
                _UNDEFINED_KAPPA,
            ),
        ):
            value = _cluster_figure(stat_name, title, theirs, groups, undefined)
            diff = cluster.cluster_difference(mine, theirs, groups)
            out.append(
                BaselineFigure(
                    baseline=name,
                    statistic=stat_name,
                    value=value,
                    difference=_figure(stat_name, f"{title}: metric − {BASELINES[name]}", diff),
                )
            )
    return out


def _reviewer_figures(
    pairs: Sequence[tuple[str, str]],
    groups: Sequence[str],
    labels: Sequence[str],
    *,
    ordered: bool,
    kappa_name: str = "cohen_kappa",
    positive: str | None = None,
) -> list[Figure]:
    """The first two reviewers of each item with each other: κ on every label (named
    ``kappa_name``, as the row names the metric's), weighted κ for ordered levels, κ of
    ``positive`` or not, accuracy."""
    if len(pairs) < 2:
        return []
    first, second = [p[0] for p in pairs], [p[1] for p in pairs]
    out = [
        _cluster_figure(
            kappa_name, "κ", cluster.kappa(first, second, labels=labels), groups, _UNDEFINED_KAPPA
        ),
    ]
    if ordered and len(labels) > 2:
        out.append(
            _cluster_figure(
                "weighted_kappa",
                "quadratic-weighted κ",
                cluster.kappa(first, second, labels=list(reversed(labels)), weights="quadratic"),
                groups,
                _UNDEFINED_KAPPA,
            )
        )
    if positive is not None:
        out.append(
            _cluster_figure(
                "cohen_kappa2",
                f"κ ({positive} or not)",
                cluster.kappa(
                    [v == positive for v in first], [v == positive for v in second], labels=[False, True]
                ),
                groups,
                _UNDEFINED_KAPPA,
            )
        )
    out.append(_cluster_figure("accuracy", "accuracy", cluster.accuracy(first, second), groups, "no pairs"))
    return out


def judge_name(results: Sequence[ResultRecord], metric: str) -> str | None:
    for result in results:
        if result.metric == metric:
            settings = result.score.details.get("judge_settings")
            if isinstance(settings, Mapping) and settings.get("heuristic_version"):
                return str(settings["heuristic_version"])
            judge = result.score.details.get("judge")
            if judge:
                return str(judge)
    return None


# --------------------------------------------------------------------------- item rows


def item_rows(observations: Sequence[ItemObservation], *, judge: str | None = None) -> list[AgreementRow]:
    """The rows of the reviewed items, per kind and metric (see the module docstring)."""
    rows: list[AgreementRow] = []
    grouped: dict[tuple[str, str | None, str], list[ItemObservation]] = defaultdict(list)
    for obs in observations:
        grouped[(obs.item.kind, obs.item.metric, obs.reviewed.scale)].append(obs)
    for (kind, metric, scale), group in grouped.items():
        if kind == "fact" and scale == FACT_VERDICT.name:
            rows.append(_fact_row(metric, group, judge))
        elif kind == "fact" and scale == FACT_IMPORTANCE.name:
            rows.append(_importance_row(metric, group, judge))
        elif kind == "sentence":
            rows.append(_sentence_row(metric, group, judge))
        elif kind == "turn":
            rows.append(_turn_row(group))
    return rows


def _pairs(group: Sequence[ItemObservation]) -> tuple[list[tuple[str, str]], list[str]]:
    pairs, groups = [], []
    for obs in group:
        pair = obs.reviewed.first_two()
        if pair is not None:
            pairs.append(pair)
            groups.append(obs.case_id)
    return pairs, groups


def _fact_row(metric: str | None, group: Sequence[ItemObservation], judge: str | None) -> AgreementRow:
    labels = FACT_VERDICT.values  # entailed, partly, not: best first
    judged = [o for o in group if o.judge is not None]
    groups = [o.case_id for o in judged]
    reviewed = [o.consensus for o in judged]
    said = [o.judge.verdict for o in judged if o.judge is not None]
    credit = [o.judge.credit for o in judged if o.judge is not None]
    positive = [v == "entailed" for v in reviewed]
    flags = [v == "entailed" for v in said]
    ordered = list(reversed(labels))  # lowest first for weighted κ
    statistics = [
        _cluster_figure(
            "cohen_kappa3",
            "κ (3 verdicts)",
            cluster.kappa(said, reviewed, labels=labels),
            groups,
            _UNDEFINED_KAPPA,
        ),
        _cluster_figure(
            "weighted_kappa",
            "quadratic-weighted κ",
            cluster.kappa(said, reviewed, labels=ordered, weights="quadratic"),
            groups,
            _UNDEFINED_KAPPA,
        ),
        _cluster_figure(
            "cohen_kappa2",
            "κ (entailed or not)",
            cluster.kappa(flags, positive, labels=[False, True]),
            groups,
            _UNDEFINED_KAPPA,
        ),
        _cluster_figure(
            "accuracy", "accuracy (3 verdicts)", cluster.accuracy(said, reviewed), groups, "no items"
        ),
        _cluster_figure(
            "roc_auc",
            "ROC AUC of the fact's credit",
            cluster.roc_auc(positive, credit),
            groups,
            _UNDEFINED_AUC,
        ),
    ]
    notes: list[str] = []
    if not _has_both(positive):
        notes.append("the reviewers call every fact the same (all entailed, or none): AUC and κ say little")
    baselines = (
        _baselines_binary(positive, flags, credit, _baseline_scores(judged, "p"), groups) if judged else []
    )
    pairs, pair_groups = _pairs(group)
    return AgreementRow(
        key=f"fact/{metric}/verdict",
        level="fact",
        title=f"Facts of {metric}: does the other text state the fact?",
        scale=FACT_VERDICT.name,
        metric=metric,
        judge=judge,
        n=len(judged),
        cases=len(set(groups)),
        statistics=statistics,
        baselines=baselines,
        reviewers=_reviewer_figures(
            pairs, pair_groups, labels, ordered=True, kappa_name="cohen_kappa3", positive="entailed"
        ),
        reviewer_pairs=len(pairs),
        headline="cohen_kappa2",
        notes=notes,
    )


def _importance_row(metric: str | None, group: Sequence[ItemObservation], judge: str | None) -> AgreementRow:
    labels = FACT_IMPORTANCE.values  # high, medium, low
    judged = [o for o in group if o.judge is not None and o.judge.importance in labels]
    groups = [o.case_id for o in judged]
    reviewed = [o.consensus for o in judged]
    said = [str(o.judge.importance) for o in judged if o.judge is not None]
    ordered = list(reversed(labels))
    within = [abs(labels.index(a) - labels.index(b)) <= 1 for a, b in zip(said, reviewed, strict=True)]
    pairs, pair_groups = _pairs(group)
    return AgreementRow(
        key=f"fact/{metric}/importance",
        level="importance",
        title=f"Importance of the facts of {metric}",
        scale=FACT_IMPORTANCE.name,
        metric=metric,
        judge=judge,
        n=len(judged),
        cases=len(set(groups)),
        statistics=[
            _cluster_figure(
                "cohen_kappa", "κ", cluster.kappa(said, reviewed, labels=labels), groups, _UNDEFINED_KAPPA
            ),
            _cluster_figure(
                "weighted_kappa",
                "quadratic-weighted κ",
                cluster.kappa(said, reviewed, labels=ordered, weights="quadratic"),
                groups,
                _UNDEFINED_KAPPA,
            ),
            _cluster_figure("accuracy", "accuracy", cluster.accuracy(said, reviewed), groups, "no items"),
            _cluster_figure(
                "within_one_accuracy",
                "accuracy within one level",
                cluster.accuracy(within, [True] * len(within)),
                groups,
                "no items",
            ),
        ],
        reviewers=_reviewer_figures(pairs, pair_groups, labels, ordered=True),
        reviewer_pairs=len(pairs),
        headline="weighted_kappa",
        notes=["no text baseline: importance is a clinical judgement, not a text comparison"],
    )


def _sentence_row(metric: str | None, group: Sequence[ItemObservation], judge: str | None) -> AgreementRow:
    judged = [o for o in group if o.judge is not None]
    groups = [o.case_id for o in judged]
    positive = [o.consensus == "supported" for o in judged]
    flags = [o.judge.verdict == "supported" for o in judged if o.judge is not None]
    credit = [o.judge.credit for o in judged if o.judge is not None]
    pairs, pair_groups = _pairs(group)
    return AgreementRow(
        key=f"sentence/{metric}/verdict",
        level="sentence",
        title=f"Sentences of {metric}: supported by the contexts?",
        scale="verdict",
        metric=metric,
        judge=judge,
        n=len(judged),
        cases=len(set(groups)),
        statistics=[
            _cluster_figure(
                "cohen_kappa2",
                "κ (supported or not)",
                cluster.kappa(flags, positive, labels=[False, True]),
                groups,
                _UNDEFINED_KAPPA,
            ),
            _cluster_figure("accuracy", "accuracy", cluster.accuracy(flags, positive), groups, "no items"),
            _cluster_figure(
                "roc_auc",
                "ROC AUC of the sentence's credit",
                cluster.roc_auc(positive, credit),
                groups,
                _UNDEFINED_AUC,
            ),
        ],
        baselines=_baselines_binary(positive, flags, credit, _baseline_scores(judged, "p"), groups)
        if judged
        else [],
        reviewers=_reviewer_figures(
            pairs, pair_groups, ["supported", "not"], ordered=False, kappa_name="cohen_kappa2"
        ),
        reviewer_pairs=len(pairs),
        headline="cohen_kappa2",
    )


def _turn_row(group: Sequence[ItemObservation]) -> AgreementRow:
    judged = [o for o in group if o.judge is not None]
    groups = [o.case_id for o in judged]
    reviewed = [o.consensus == "yes" for o in judged]
    said = [o.judge.verdict == "yes" for o in judged if o.judge is not None]
    pairs, pair_groups = _pairs(group)
    notes = ["no text baseline: the agent a request went to is not a text comparison"]
    if len(judged) < len(group):
        notes.append(
            f"{len(group) - len(judged)} reviewed turn(s) have no gold agent label: "
            "no metric verdict to compare"
        )
    return AgreementRow(
        key="turn/right_agent",
        level="turn",
        title="Turns: did the orchestrator choose the right agent? (agent selection against gold labels)",
        scale="right_agent",
        metric="agent_selection_accuracy",
        n=len(judged),
        cases=len(set(groups)),
        statistics=[
            _cluster_figure(
                "cohen_kappa2",
                "κ (right agent or not)",
                cluster.kappa(said, reviewed, labels=[False, True]),
                groups,
                _UNDEFINED_KAPPA,
            ),
            _cluster_figure("accuracy", "accuracy", cluster.accuracy(said, reviewed), groups, "no items"),
        ],
        reviewers=_reviewer_figures(
            pairs, pair_groups, ["yes", "no"], ordered=False, kappa_name="cohen_kappa2"
        ),
        reviewer_pairs=len(pairs),
        headline="cohen_kappa2",
        notes=notes,
    )


# --------------------------------------------------------------------------- case rows


#: How the statistics' notes name the two sides of a case-level comparison.
_NAMES = ("metric's values", "reviewers' verdicts")


def _levels(scale: ReviewScale, verdicts: Sequence[str]) -> list[float]:
    """Best option highest: for [correct, partly, incorrect] 2, 1, 0."""
    values = scale.values
    return [float(len(values) - 1 - values.index(v)) for v in verdicts]


def _stat(
    fn: Callable[..., stats.Estimate], name: str, title: str, *arrays: Sequence[Any], **kw: Any
) -> Figure:
    bound = functools.partial(fn, **kw) if kw else fn
    estimate = bound(*arrays)
    n = len(arrays[0]) if arrays else 0
    if estimate.value is None:
        return Figure(name=name, title=title, value=None, n=n, note=estimate.note)
    interval = stats.bootstrap_ci(bound, *arrays, n_resamples=N_RESAMPLES, seed=SEED, level=LEVEL)
    notes = [n_ for n_ in (estimate.note, interval.note) if n_]
    if interval.low is not None and interval.high is not None and interval.high - interval.low < 1e-12:
        notes.append(
            f"every resample of the {n} cases gives {estimate.value:.2f}: the interval says nothing yet "
            "(too few cases, or one side always the same)"
        )
    return Figure(
        name=name,
        title=title,
        value=estimate.value,
        ci_low=interval.low,
        ci_high=interval.high,
        n=n,
        note="; ".join(notes) or None,
    )


def _difference(
    fn: Callable[..., stats.Estimate], title: str, mine: tuple[Any, ...], theirs: tuple[Any, ...], **kw: Any
) -> Figure:
    bound = functools.partial(fn, **kw) if kw else fn
    estimate, interval = stats.difference_ci(
        bound, mine, theirs, n_resamples=N_RESAMPLES, seed=SEED, level=LEVEL
    )
    return Figure(
        name="difference",
        title=title,
        value=estimate.value,
        ci_low=interval.low,
        ci_high=interval.high,
        n=len(mine[0]) if mine else 0,
        note=estimate.note or interval.note,
    )


def case_row(
    scale: ReviewScale,
    metric: str,
    observations: Sequence[CaseObservation],
    *,
    threshold: float,
    lower_is_better: bool = False,
    judge: str | None = None,
    pairs: Sequence[tuple[str, str]] = (),
) -> AgreementRow:
    """A case scale against a metric's value on the reviewed cases (see the module docstring)."""
    scored = [o for o in observations if o.value is not None]
    ids = [o.case_id for o in scored]
    levels = _levels(scale, [o.consensus for o in scored])
    best = scale.values[0]
    positive = [o.consensus == best for o in scored]
    raw = [float(o.value) for o in scored if o.value is not None]
    values = [-v for v in raw] if lower_is_better else raw
    notes: list[str] = []
    binary_metric = bool(raw) and all(v in (0.0, 1.0) for v in raw)
    if lower_is_better:
        notes.append(f"{metric} is lower-is-better: its values are negated for the correlations and AUC")
    if binary_metric:
        flags = [v == (0.0 if lower_is_better else 1.0) for v in raw]
        notes.append(f"{metric} takes only 0 and 1: read as a yes/no verdict ({best} when it says yes)")
    else:
        flags = [v >= threshold for v in raw] if not lower_is_better else [v <= threshold for v in raw]
    statistics = [
        _stat(stats.spearman, "spearman", "Spearman ρ", values, levels, names=_NAMES),
        _stat(
            stats.roc_auc,
            "roc_auc",
            f"ROC AUC for {best}",
            positive,
            values,
            positive=True,
            names=(_NAMES[1], _NAMES[0]),
        ),
        _stat(
            stats.cohen_kappa,
            "cohen_kappa2",
            f"κ ({best} or not" + ("" if binary_metric else f"; value ≥ {threshold:g}") + ")",
            flags,
            positive,
            labels=[False, True],
            names=_NAMES,
        ),
    ]
    baselines: list[BaselineFigure] = []
    with_evidence = [i for i, o in enumerate(scored) if o.evidence.strip()]
    if len(with_evidence) < len(scored):
        notes.append(
            f"{len(scored) - len(with_evidence)} case(s) without a reference or contexts have no baseline"
        )
    if len(with_evidence) >= 2:
        sub = [scored[i] for i in with_evidence]
        sub_values = [values[i] for i in with_evidence]
        sub_levels = [levels[i] for i in with_evidence]
        sub_positive = [positive[i] for i in with_evidence]
        for name, scores in (
            ("rouge_l", [rouge_l(o.response, o.evidence) for o in sub]),
            ("word_share", [content_word_share(o.response, o.evidence) for o in sub]),
        ):
            for stat_name, title, fn, mine, theirs, kw in (
                (
                    "spearman",
                    "Spearman ρ",
                    stats.spearman,
                    (sub_values, sub_levels),
                    (scores, sub_levels),
                    {},
                ),
                (
                    "roc_auc",
                    f"ROC AUC for {best}",
                    stats.roc_auc,
                    (sub_positive, sub_values),
                    (sub_positive, scores),
                    {"positive": True},
                ),
            ):
                baselines.append(
                    BaselineFigure(
                        baseline=name,
                        statistic=stat_name,
                        value=_stat(fn, stat_name, title, *theirs, **kw),
                        difference=_difference(
                            fn, f"{title}: metric − {BASELINES[name]}", mine, theirs, **kw
                        ),
                    )
                )
    if len(scored) < len(observations):
        notes.append(f"{len(observations) - len(scored)} reviewed case(s) not scored by {metric}, left out")
    return AgreementRow(
        key=f"case/{scale.name}/{metric}",
        level="case",
        title=f"{scale.label} against {metric}",
        scale=scale.name,
        metric=metric,
        judge=judge,
        n=len(scored),
        cases=len(set(ids)),
        statistics=statistics,
        baselines=baselines,
        reviewers=_case_reviewer_figures(scale, pairs),
        reviewer_pairs=len(pairs),
        headline="roc_auc" if not binary_metric else "cohen_kappa2",
        notes=notes,
    )


def _case_reviewer_figures(scale: ReviewScale, pairs: Sequence[tuple[str, str]]) -> list[Figure]:
    """Agreement of the first two reviewers of each case on a case scale: κ, weighted κ (ordered
    levels), Spearman ρ of their levels, κ of the best option or not, accuracy."""
    if len(pairs) < 2:
        return []
    first = _levels(scale, [p[0] for p in pairs])
    second = _levels(scale, [p[1] for p in pairs])
    codes = [float(i) for i in range(len(scale.values))]
    best = scale.values[0]
    out = [_stat(stats.cohen_kappa, "cohen_kappa", "κ", first, second, labels=codes)]
    if len(scale.values) > 2 and scale.ordered:
        out.append(
            _stat(
                stats.cohen_kappa,
                "weighted_kappa",
                "quadratic-weighted κ",
                first,
                second,
                weights="quadratic",
                labels=codes,
            )
        )
        out.append(_stat(stats.spearman, "spearman", "Spearman ρ", first, second))
        top = float(len(scale.values) - 1)
        out.append(
            _stat(
                stats.cohen_kappa,
                "cohen_kappa2",
                f"κ ({best} or not)",
                [v == top for v in first],
                [v == top for v in second],
                labels=[False, True],
            )
        )
    out.append(_stat(stats.accuracy, "accuracy", "accuracy", first, second))
    return out


def reviewers_row(scale: ReviewScale, reviewed: Sequence[Reviewed]) -> AgreementRow:
    """A case scale no metric is compared with: the reviewers' agreement with each other only."""
    pairs = [p for r in reviewed if (p := r.first_two()) is not None]
    return AgreementRow(
        key=f"case/{scale.name}",
        level="case",
        title=f"{scale.label} (reviewers only: no metric is compared with this scale)",
        scale=scale.name,
        n=len(reviewed),
        cases=len({r.case_id for r in reviewed}),
        reviewers=_case_reviewer_figures(scale, pairs),
        reviewer_pairs=len(pairs),
    )
