"""How far a run's metrics and judge agree with the clinicians who reviewed it.

From the stored reviews of a run (:mod:`clineval.store.reviews`) and the run's own scores,
one row per comparison, each with 95 % intervals:

**Items** (the facts, sentences and turns reviewers gave a verdict on): the reviewers'
verdict against the judge's verdict on the same item.

* facts (TBFact): Cohen's κ on the three verdicts (entailed / partly / not), quadratic-
  weighted κ on them as ordered levels, κ entailed-or-not, accuracy, and the ROC AUC of the
  fact's credit (1 entailed, a partial verdict's graded support, 0 otherwise) for the facts
  the reviewers call entailed; the facts' importance (high / medium / low) gets weighted κ
  and accuracy;
* sentences (RAGAS and ASTRID faithfulness): κ supported-or-not, accuracy, ROC AUC of the
  sentence's credit;
* turns (agent selection with gold labels): κ right-agent-or-not, accuracy.

**Cases**: each case scale of the review schema (``factuality`` correct / partly /
incorrect ...) against each metric it is compared with (``compare_with``, or ``--metric``):
Spearman ρ and Kendall τ-b of the metric's value with the reviewers' level (best option
highest), the ROC AUC of the value for the best option (``correct``) against the rest, and
κ of the value thresholded at ``threshold`` (default 0.5) against best-or-not. A metric
whose values are all 0 or 1 is read as a yes/no verdict.

Beside every evidence figure, the same figure for two **trivial baselines** on the same
items: ROUGE-L (of an item's text against what it is checked against: its precision; of
the response against the reference for a case: its F1) and the **content-word share**
(the share of the item's, or the response's, content words found in that text). A
baseline's κ uses a threshold chosen on the other half of the cases (cross-fitted), so it
is tuned as well as it can be without seeing the items it is scored on; the metric gets
no such help. The difference metric − baseline has a **paired** interval (the same
resamples for both).

**Reviewers with each other** (the ceiling): where an item or case has two reviewers, the
same statistics between the first two who answered it.

Intervals are percentile bootstrap intervals over **cases** (2,000 resamples, seed 0): an
item-level interval resamples whole cases with all their items (:mod:`clineval.agreement.cluster`),
since the facts of one case are not independent.

Several reviewers of one item are combined by majority; a tie takes the verdict of the
reviewer who answered first. ``reviewer=NAME`` uses one reviewer's verdicts only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from urllib.parse import quote

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from clineval.errors import ConfigError
from clineval.model import Case, ResultRecord, ReviewRecord, RunRecord
from clineval.review.items import CASE_ITEM, case_items, contexts_text, reference_text
from clineval.review.rows import (
    LEVEL,
    N_RESAMPLES,
    SEED,
    AgreementRow,
    CaseObservation,
    ItemObservation,
    Reviewed,
    RowLevel,
    case_row,
    collect,
    item_rows,
    judge_name,
    reviewers_row,
)
from clineval.review.schema import FACT_IMPORTANCE, ReviewScale, ReviewSchema
from clineval.store.sqlite import RunStore

#: Disagreements listed in a report (all are counted).
MAX_DISAGREEMENTS = 200


class Disagreement(BaseModel):
    """An item or case on which the reviewers and the metric disagree."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    item: str
    level: RowLevel
    text: str
    scale: str
    reviewers: dict[str, str]
    """Reviewer -> verdict."""
    reviewed: str
    """The reviewers' verdict (majority; ``(reviewers split)`` when they gave different ones)."""
    metric: str | None = None
    metric_says: str
    """The judge's verdict on the item, or the metric's value on the case."""
    link: str


class ReviewAgreementReport(BaseModel):
    """Agreement of a run's metrics and judge with its reviewers."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    reviewers: list[str]
    reviewer_filter: str | None = None
    verdicts: int
    cases_reviewed: int
    threshold: float
    level: float = LEVEL
    n_resamples: int = N_RESAMPLES
    seed: int = SEED
    rows: list[AgreementRow] = Field(default_factory=list)
    disagreements: list[Disagreement] = Field(default_factory=list)
    disagreement_count: int = 0
    notes: list[str] = Field(default_factory=list)

    def row(self, key: str) -> AgreementRow | None:
        return next((r for r in self.rows if r.key == key), None)


# --------------------------------------------------------------------------- the report


def _link(run_id: str, case_id: str, item: str) -> str:
    anchor = "" if item == CASE_ITEM else "#review-" + quote(item, safe="")
    return f"/runs/{quote(run_id, safe='')}/cases/{quote(case_id, safe='')}{anchor}"


_SERIOUS = {("not", "entailed"): 0, ("entailed", "not"): 1, ("not", "supported"): 0, ("supported", "not"): 1}


def _item_disagreements(
    run_id: str, observations: Sequence[ItemObservation]
) -> list[tuple[int, Disagreement]]:
    out = []
    for obs in observations:
        if obs.judge is None:
            continue
        said = obs.judge.importance if obs.reviewed.scale == FACT_IMPORTANCE.name else obs.judge.verdict
        if said is None or said == obs.consensus:
            continue
        rank = _SERIOUS.get((obs.consensus, said), 2 if obs.reviewed.scale != FACT_IMPORTANCE.name else 3)
        split = len(set(obs.reviewed.verdicts.values())) > 1
        if split:  # the reviewers themselves disagree: less telling than a judge against all of them
            rank += 10
        level: RowLevel = "importance" if obs.reviewed.scale == FACT_IMPORTANCE.name else obs.item.kind
        out.append(
            (
                rank,
                Disagreement(
                    case_id=obs.case_id,
                    item=obs.item.id,
                    level=level,
                    text=obs.item.text[:300],
                    scale=obs.reviewed.scale,
                    reviewers=dict(obs.reviewed.verdicts),
                    reviewed=obs.consensus + (" (reviewers split)" if split else ""),
                    metric=obs.item.metric,
                    metric_says=said + (" (contradicted)" if obs.judge.contradicted else ""),
                    link=_link(run_id, obs.case_id, obs.item.id),
                ),
            )
        )
    return out


def _case_disagreements(
    run_id: str,
    scale: ReviewScale,
    metric: str,
    observations: Sequence[CaseObservation],
    threshold: float,
    lower_is_better: bool,
) -> list[tuple[int, Disagreement]]:
    out = []
    best, worst = scale.values[0], scale.values[-1]
    for obs in observations:
        if obs.value is None:
            continue
        high = obs.value <= threshold if lower_is_better else obs.value >= threshold
        if (obs.consensus == best and not high) or (obs.consensus == worst and high):
            out.append(
                (
                    2,
                    Disagreement(
                        case_id=obs.case_id,
                        item=CASE_ITEM,
                        level="case",
                        text=obs.response[:300],
                        scale=scale.name,
                        reviewers=dict(obs.reviewed.verdicts),
                        reviewed=obs.consensus,
                        metric=metric,
                        metric_says=f"{obs.value:.3g}",
                        link=_link(run_id, obs.case_id, CASE_ITEM),
                    ),
                )
            )
    return out


def _metrics_for(scale: ReviewScale, present: Sequence[str], chosen: Sequence[str] | None) -> list[str]:
    wanted = list(chosen) if chosen else list(scale.compare_with)
    return [m for m in wanted if m in present]


def review_agreement(
    record: RunRecord,
    schema: ReviewSchema,
    reviews: Sequence[ReviewRecord],
    loaded: Mapping[str, tuple[Case, list[ResultRecord]]],
    *,
    metrics: Sequence[str] | None = None,
    reviewer: str | None = None,
    threshold: float = 0.5,
) -> ReviewAgreementReport:
    """The agreement report of a run from its current reviews and its reviewed cases
    (``loaded``: case id -> the case with the agent's output and its results)."""
    if not np.isfinite(threshold):
        raise ConfigError(f"--threshold {threshold}: give a finite number")
    found = collect(reviews, reviewer)
    by_case: dict[str, list[tuple[str, str, Reviewed]]] = defaultdict(list)
    for (cid, item_id, scale_name), entry in found.items():
        by_case[cid].append((item_id, scale_name, entry))
    notes: list[str] = []
    if reviewer is not None and not found:
        raise ConfigError(f"--reviewer {reviewer}: no verdict of this reviewer on run {record.id}")
    present = sorted({r.metric for _, results in loaded.values() for r in results})
    for name in metrics or ():
        if name not in present:
            raise ConfigError(
                f"--metric {name}: run {record.id} has no result of this metric on the reviewed cases "
                f"(its metrics: {', '.join(present) or 'none'})"
            )
    item_obs: list[ItemObservation] = []
    case_obs: dict[tuple[str, str], list[CaseObservation]] = defaultdict(list)
    case_reviewed: dict[str, list[Reviewed]] = defaultdict(list)
    unknown_items = 0
    judges: dict[str, str | None] = {}
    for case_id, (case, results) in loaded.items():
        items = case_items(case, results, schema.model_copy(update={"max_facts": None}))
        for item_id, scale_name, entry in by_case.get(case_id, []):
            if item_id == CASE_ITEM:
                try:
                    scale = schema.scale("case", scale_name)
                except KeyError:
                    continue
                if scale.kind != "choice" or any(v not in scale.values for v in entry.verdicts.values()):
                    continue
                case_reviewed[scale_name].append(entry)
                consensus = entry.consensus(scale.values)
                evidence = reference_text(case) or contexts_text(case)
                for metric in _metrics_for(scale, present, metrics):
                    result = next((r for r in results if r.metric == metric), None)
                    value = (
                        result.score.value if result is not None and result.score.status == "scored" else None
                    )
                    case_obs[(scale_name, metric)].append(
                        CaseObservation(case_id, entry, consensus, value, case.response or "", evidence)
                    )
                continue
            item = items.get(item_id)
            if item is None:
                unknown_items += 1
                continue
            try:
                scale = schema.scale(item.kind, scale_name)
            except KeyError:
                continue
            if any(v not in scale.values for v in entry.verdicts.values()):
                continue
            if metrics and item.metric is not None and item.metric not in metrics:
                continue
            if item.metric is not None and item.metric not in judges:
                judges[item.metric] = judge_name(results, item.metric)
            item_obs.append(ItemObservation(item, case_id, entry, entry.consensus(scale.values), item.judge))
    if unknown_items:
        notes.append(f"{unknown_items} verdict(s) name an item the case's scores no longer hold (left out)")
    rows: list[AgreementRow] = []
    disagreements: list[tuple[int, Disagreement]] = []
    lower = set(record.lower_is_better)
    for scale in schema.scales:
        if scale.kind != "choice":
            continue
        compared = False
        for metric in _metrics_for(scale, present, metrics):
            observations = case_obs.get((scale.name, metric), [])
            if not observations:
                continue
            if all(o.value is None for o in observations):
                notes.append(
                    f"{metric}: none of the {len(observations)} case(s) reviewed for {scale.name} has a "
                    f"score of {metric} (unscored or not applicable): not compared"
                )
                continue
            compared = True
            pairs = [p for o in observations if (p := o.reviewed.first_two()) is not None]
            judge = next((judge_name(loaded[o.case_id][1], metric) for o in observations), None)
            rows.append(
                case_row(
                    scale,
                    metric,
                    observations,
                    threshold=threshold,
                    lower_is_better=metric in lower,
                    judge=judge,
                    pairs=pairs,
                )
            )
            disagreements.extend(
                _case_disagreements(record.id, scale, metric, observations, threshold, metric in lower)
            )
        if not compared and case_reviewed.get(scale.name):
            rows.append(reviewers_row(scale, case_reviewed[scale.name]))
    by_metric: dict[str | None, list[ItemObservation]] = defaultdict(list)
    for item_ob in item_obs:
        by_metric[item_ob.item.metric].append(item_ob)
    for item_metric, group in by_metric.items():
        rows.extend(item_rows(group, judge=judges.get(item_metric) if item_metric else None))
    disagreements.extend(_item_disagreements(record.id, item_obs))
    disagreements.sort(key=lambda d: (d[0], d[1].case_id, d[1].item))
    reviewers = list(dict.fromkeys(r for entry in found.values() for r in entry.verdicts))
    if not found and record.tags.get("reviews_of"):
        notes.append(
            f"run {record.id} is a calibration of the reviews of run {record.tags['reviews_of']} "
            f"(clineval calibrate --reviews): its reviews are there: clineval agreement "
            f"{record.tags['reviews_of']} --reviews"
        )
    elif not found:
        notes.append(
            f"run {record.id} has no reviews yet: plan a queue (clineval review plan {record.id} --n 20), "
            "review it (clineval view --review), or import labels (clineval review import FILE)"
        )
    return ReviewAgreementReport(
        run_id=record.id,
        reviewers=reviewers,
        reviewer_filter=reviewer,
        verdicts=sum(len(e.verdicts) for e in found.values()),
        cases_reviewed=len({k[0] for k in found}),
        threshold=threshold,
        rows=rows,
        disagreements=[d for _, d in disagreements[:MAX_DISAGREEMENTS]],
        disagreement_count=len(disagreements),
        notes=notes,
    )


def agreement_from_store(
    store: RunStore,
    record: RunRecord,
    *,
    metrics: Sequence[str] | None = None,
    reviewer: str | None = None,
    threshold: float = 0.5,
    schema: ReviewSchema | None = None,
) -> ReviewAgreementReport:
    """:func:`review_agreement` of a stored run: its current reviews and the reviewed cases.

    The schema is the run's (or the one of its newest queue that brings one)."""
    from clineval.review.data import load_case, review_schema
    from clineval.store.reviews import ReviewStore

    reviews_store = ReviewStore(store)
    reviews = reviews_store.current(record.id)
    if schema is None:
        queues = [q for q in reviews_store.queues(record.id) if q.schema_]
        schema = review_schema(record, queues[0] if queues else None)
    loaded: dict[str, tuple[Case, list[ResultRecord]]] = {}
    for case_id in dict.fromkeys(r.case_id for r in reviews):
        found = load_case(store, record.id, case_id)
        if found is not None:
            loaded[case_id] = found
    return review_agreement(
        record, schema, reviews, loaded, metrics=metrics, reviewer=reviewer, threshold=threshold
    )
