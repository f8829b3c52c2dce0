"""Every judge against your own clinicians: re-score what the reviewers reviewed with each judge.

``clineval calibrate --reviews RUN --judge offline --judge openai:MODEL@URL ...``: the
reviewed material of a run is scored again by each judge, as one stored run per judge
(tagged ``calibration: reviews``, ``reviews_of: RUN``; resumable and exportable like any
run), and each judge is compared with the reviewers on exactly the same items:

* **the reviewed facts and sentences**, checked by the judge the way their metric checks them
  (a TBFact fact or a RAGAS statement against the text it was checked against: the
  ``check_facts`` primitive; an ASTRID sentence against the contexts, read as a reply to the
  question: ``check_grounding``). The reviewers labelled the facts the run's judge took
  from the texts; another judge is asked about the same facts, so the comparison is fair;
* **the reviewed cases**, scored again with each metric a case scale is compared with (tbfact,
  faithfulness ...), when the metric uses a judge.

The rows are those of ``clineval agreement --reviews`` (:mod:`clineval.review.rows`), on the
items every judge could score, so the judges' figures are paired: the difference of each
judge from the first has a paired interval (the same case resamples). Importance grades and
agent routing are not re-judged (no judge gives them here), and metrics that use no judge
score the same whatever the judge.
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.agreement import cluster, stats
from clineval.config import DEFAULT_CACHE
from clineval.errors import ConfigError
from clineval.metrics.registry import MetricSpec
from clineval.model import Case, ResultRecord, RunRecord
from clineval.review.items import (
    CASE_ITEM,
    JudgeVerdict,
    ReviewItem,
    case_items,
    contexts_text,
    fact_verdict,
    reference_text,
    verdict_credit,
)
from clineval.review.rows import (
    AgreementRow,
    CaseObservation,
    Figure,
    ItemObservation,
    Reviewed,
    case_row,
    collect,
    item_rows,
)
from clineval.review.schema import FACT_VERDICT, ReviewSchema
from clineval.store.sqlite import RunStore

#: The protocols of a review calibration's cases (``case.metadata["protocol"]``).
CLAIMS = "review_claims"
CASES = "review_case"


# --------------------------------------------------------------------------- the report


class JudgeResult(BaseModel):
    """One judge's agreement with the reviewers."""

    model_config = ConfigDict(extra="forbid")

    spec: str
    """The judge as given (``offline``, ``openai:MODEL@URL``, ``scripted:FILE``)."""
    label: str
    """What the judge was, from its run (``offline-heuristic/3.0``, a model name ...)."""
    run_id: str | None = None
    seconds: float | None = None
    unscored: int = 0
    """Claims or cases the judge could not score (left out for every judge)."""
    rows: list[AgreementRow] = Field(default_factory=list)

    def row(self, key: str) -> AgreementRow | None:
        return next((r for r in self.rows if r.key == key), None)


class JudgeDifference(BaseModel):
    """A judge's figure minus the first judge's, on the same items, with a paired interval."""

    model_config = ConfigDict(extra="forbid")

    key: str
    statistic: str
    judge: str
    versus: str
    difference: Figure


class ReviewCalibrationReport(BaseModel):
    """Several judges against the reviewers of one run, on the same items."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    reviewers: list[str]
    reviewer_filter: str | None = None
    cases_reviewed: int
    items: dict[str, int] = Field(default_factory=dict)
    """Reviewed items compared, by row key."""
    threshold: float = 0.5
    judges: list[JudgeResult] = Field(default_factory=list)
    differences: list[JudgeDifference] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def judge(self, spec: str) -> JudgeResult | None:
        return next((j for j in self.judges if j.spec == spec), None)

    def difference(self, key: str, statistic: str, judge: str) -> JudgeDifference | None:
        return next(
            (d for d in self.differences if d.key == key and d.statistic == statistic and d.judge == judge),
            None,
        )


# --------------------------------------------------------------------------- what was reviewed


class Material:
    """What the reviewers reviewed, ready to be scored again."""

    def __init__(
        self,
        record: RunRecord,
        schema: ReviewSchema,
        found: Mapping[tuple[str, str, str], Reviewed],
        loaded: Mapping[str, tuple[Case, list[ResultRecord]]],
        metrics: Sequence[str] | None,
    ) -> None:
        self.record = record
        self.schema = schema
        self.items: list[tuple[ReviewItem, Reviewed, str]] = []
        """(item, its verdicts, case id) of every reviewed fact verdict and sentence."""
        self.cases: list[tuple[str, str, Reviewed]] = []
        """(case id, metric, the case scale's verdicts)."""
        self.loaded = loaded
        self.metric_specs: dict[str, str] = {}
        self.notes: list[str] = []
        specs = [MetricSpec.model_validate(m) for m in record.config.get("metrics") or []]
        by_name = {spec.result_name: str(spec) for spec in specs}
        present = sorted({r.metric for _, results in loaded.values() for r in results})
        judged = _judge_metrics(present)
        for (case_id, item_id, scale_name), entry in found.items():
            if case_id not in loaded:
                continue
            case, results = loaded[case_id]
            if item_id == CASE_ITEM:
                try:
                    scale = schema.scale("case", scale_name)
                except KeyError:
                    continue
                if scale.kind != "choice" or any(v not in scale.values for v in entry.verdicts.values()):
                    continue
                wanted = list(metrics) if metrics else list(scale.compare_with)
                for metric in wanted:
                    if metric not in present:
                        continue
                    if metric not in judged:
                        self._note(
                            f"{metric} uses no judge: it scores the same whatever the judge (left out)"
                        )
                        continue
                    self.metric_specs[metric] = by_name.get(metric, metric)
                    self.cases.append((case_id, metric, entry))
                continue
            kind = item_id.split("/", 1)[0]
            if kind not in ("fact", "sentence") or scale_name != FACT_VERDICT.name:
                if kind == "turn":
                    self._note(
                        "agent routing (turns) is checked against gold labels, not by a judge (left out)"
                    )
                continue
            items = case_items(case, results, schema.model_copy(update={"max_facts": None}))
            item = items.get(item_id)
            if item is None or (metrics and item.metric not in metrics):
                continue
            scale = schema.scale(item.kind, scale_name)
            if any(v not in scale.values for v in entry.verdicts.values()):
                continue
            self.items.append((item, entry, case_id))

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def eval_cases(self) -> list[dict[str, Any]]:
        """The cases of a calibration run: one per group of claims checked against one text,
        one per reviewed case whose metric is scored again."""
        out: list[dict[str, Any]] = []
        groups: dict[tuple[str, str | None, str | None, str], list[ReviewItem]] = defaultdict(list)
        for item, _, case_id in self.items:
            groups[(case_id, item.metric, item.direction, item.checked_by)].append(item)
        for (case_id, metric, direction, checked_by), items in groups.items():
            case, _ = self.loaded[case_id]
            unique = list({i.id: i for i in items}.values())
            out.append(
                {
                    "id": f"claims/{case_id}/{metric}/{direction or 'sentences'}",
                    "input": case.input_text() or None,
                    "response": unique[0].evidence_text,
                    "metadata": {
                        "protocol": CLAIMS,
                        "case": case_id,
                        "items": [i.id for i in unique],
                        "claims": [i.text for i in unique],
                        "checked_by": checked_by,
                        "question": case.input_text(),
                    },
                }
            )
        for case_id in dict.fromkeys(c for c, _, _ in self.cases):
            case, _ = self.loaded[case_id]
            data = case.model_dump(mode="json", exclude_none=True, exclude={"agent_run"})
            data["id"] = f"case/{case_id}"
            data["metadata"] = {**case.metadata, "protocol": CASES, "case": case_id}
            out.append(data)
        return out

    def metric_list(self) -> list[str]:
        specs = []
        if self.items:
            check = f"ClaimCheck(protocols=[{CLAIMS!r}])"
            specs.append(f"reviewed_claims=clineval.calibration.metrics:{check}")
        for name, spec in self.metric_specs.items():
            specs.append(
                f"{name}=clineval.calibration.metrics:Restricted(metric={spec!r}, protocols=[{CASES!r}])"
            )
        return specs


def _judge_metrics(names: Sequence[str]) -> set[str]:
    """The metrics among ``names`` that use a judge."""
    from clineval.metrics.registry import build_metric

    out = set()
    for name in names:
        try:
            metric = build_metric(name)
        except Exception:  # a custom metric this process cannot build: assume it may use one
            out.add(name)
            continue
        if getattr(metric, "needs_judge", False):
            out.add(name)
    return out


def _judged_items(result: Any, material: Material) -> dict[tuple[str, str], JudgeVerdict]:
    """(case id, item id) -> this judge's verdict, from a calibration run's results."""
    verdicts: dict[tuple[str, str], JudgeVerdict] = {}
    scores = {(r.case_id, r.metric): r.score for r in result.results}
    for case in result.cases:
        if case.metadata.get("protocol") != CLAIMS:
            continue
        score = scores.get((case.id, "reviewed_claims"))
        rows = score.details.get("verdicts") if score is not None and score.status == "scored" else None
        ids = case.metadata.get("items") or []
        if not isinstance(rows, list) or len(rows) != len(ids):
            continue
        sentence = case.metadata.get("checked_by") == "grounding" or str(ids[0]).startswith("sentence/")
        for item_id, row in zip(ids, rows, strict=True):
            label, reason, support = row.get("label"), row.get("reason"), row.get("support")
            verdicts[(str(case.metadata["case"]), str(item_id))] = JudgeVerdict(
                verdict=("supported" if label == "entailed" else "not") if sentence else fact_verdict(label),
                credit=verdict_credit(label, reason, support),
                label=label,
                reason=reason,
                support=support if isinstance(support, int | float) else None,
                evidence=row.get("evidence"),
                explanation=row.get("explanation"),
            )
    return verdicts


def _judged_values(result: Any) -> dict[tuple[str, str], float]:
    """(case id, metric) -> this judge's value of the metric on the reviewed case."""
    origin = {c.id: str(c.metadata.get("case")) for c in result.cases if c.metadata.get("protocol") == CASES}
    return {
        (origin[r.case_id], r.metric): float(r.score.value)
        for r in result.results
        if r.case_id in origin and r.score.status == "scored" and r.score.value is not None
    }


def _label(result: Any, spec: str) -> str:
    judge = result.run.judge or {}
    if judge.get("heuristic_version"):
        return str(judge["heuristic_version"])
    if spec.startswith("scripted:"):  # the rules file by its name, not its whole path
        return "scripted:" + spec.partition(":")[2].replace("\\", "/").rsplit("/", 1)[-1]
    name = judge.get("config") or judge.get("name") or spec
    model = judge.get("model")
    return f"{name}" if not model or str(model) in str(name) else f"{name} ({model})"


# --------------------------------------------------------------------------- running


async def acalibrate_reviews(
    store: str,
    run_ref: str,
    judges: Sequence[tuple[str, Any]],
    *,
    metrics: Sequence[str] | None = None,
    reviewer: str | None = None,
    threshold: float = 0.5,
    progress: Any = False,
    cache: str | None = DEFAULT_CACHE,
    judge_concurrency: int | None = None,
) -> ReviewCalibrationReport:
    """Score the reviewed material of run ``run_ref`` again with each judge of ``judges``
    (``(spec as given, JudgeConfig or judge)``), store one run per judge, and compare them
    with the reviewers (see the module docstring)."""
    from clineval.api import aevaluate
    from clineval.review.data import load_case, review_schema
    from clineval.store.reviews import ReviewStore

    if not judges:
        raise ConfigError("give at least one judge: --judge offline --judge openai:MODEL@URL ...")
    with RunStore(store, readonly=True) as source:
        record = source.get_run(run_ref)
        reviews_store = ReviewStore(source)
        reviews = reviews_store.current(record.id)
        queues = [q for q in reviews_store.queues(record.id) if q.schema_]
        schema = review_schema(record, queues[0] if queues else None)
        loaded: dict[str, tuple[Case, list[ResultRecord]]] = {}
        for case_id in dict.fromkeys(r.case_id for r in reviews):
            found_case = load_case(source, record.id, case_id)
            if found_case is not None:
                loaded[case_id] = found_case
    found = collect(reviews, reviewer)
    if not found:
        who = f" by {reviewer}" if reviewer else ""
        origin = record.tags.get("reviews_of")
        if origin:
            raise ConfigError(
                f"run {record.id} is a calibration of the reviews of run {origin} (made by clineval "
                f"calibrate --reviews); give the reviewed run: clineval calibrate --reviews {origin} ..."
            )
        raise ConfigError(
            f"run {record.id} has no review{who} to calibrate against: review it first "
            f"(clineval review plan {record.id} --n 20, then clineval view --review), or import labels "
            "(clineval review import FILE)"
        )
    material = Material(record, schema, found, loaded, metrics)
    cases = material.eval_cases()
    if not cases:
        raise ConfigError(
            f"run {record.id}: nothing reviewed can be judged again (reviewed facts or sentences, or cases "
            "of a scale compared with a metric that uses a judge); "
            + ("; ".join(material.notes) or "review facts or a factuality scale first")
        )
    outcomes: list[tuple[str, Any, float]] = []
    for spec, judge in judges:
        started = time.perf_counter()
        kwargs: dict[str, Any] = {
            "judge": judge,
            "store": store,
            "progress": progress,
            "name": f"review calibration of {record.id}",
            "tags": {"calibration": "reviews", "reviews_of": record.id, "judge": spec},
            "cache": cache,
        }
        if judge_concurrency is not None:
            kwargs["judge_concurrency"] = judge_concurrency
        result = await aevaluate(cases, material.metric_list(), **kwargs)
        outcomes.append((spec, result, round(time.perf_counter() - started, 1)))
    return compare_judges(material, found, outcomes, reviewer=reviewer, threshold=threshold)


def _item_key(item: ReviewItem) -> str:
    return f"{item.kind}/{item.metric}/verdict"


def _case_key(scale: str, metric: str) -> str:
    return f"case/{scale}/{metric}"


def _first_error(result: Any, metric: str | None = None) -> str | None:
    for r in result.results:
        if r.score.status == "error" and (metric is None or r.metric == metric):
            return str(r.score.error or "").splitlines()[0][:160] or None
    return None


def compare_judges(
    material: Material,
    found: Mapping[tuple[str, str, str], Reviewed],
    outcomes: Sequence[tuple[str, Any, float | None]],
    *,
    reviewer: str | None = None,
    threshold: float = 0.5,
) -> ReviewCalibrationReport:
    """The report from each judge's finished calibration run (``(spec, EvalResult, seconds)``).

    Per comparison (the facts of a metric, a case scale against a metric), the judges that
    scored any of its items are compared on the items all of them scored; a judge that
    scored none of them (e.g. a judge that cannot extract facts, for TBFact on whole cases)
    is left out of that comparison, with a note."""
    record = material.record
    judged_items = [_judged_items(result, material) for _, result, _ in outcomes]
    judged_values = [_judged_values(result) for _, result, _ in outcomes]
    report = ReviewCalibrationReport(
        run_id=record.id,
        reviewers=list(dict.fromkeys(r for entry in found.values() for r in entry.verdicts)),
        reviewer_filter=reviewer,
        cases_reviewed=len({k[0] for k in found}),
        threshold=threshold,
        notes=list(material.notes),
    )
    # what each comparison holds, and which judges take part in it
    item_groups: dict[str, list[tuple[ReviewItem, Reviewed, str]]] = defaultdict(list)
    for reviewed_item in material.items:
        item_groups[_item_key(reviewed_item[0])].append(reviewed_item)
    case_groups: dict[str, list[tuple[str, str, Reviewed]]] = defaultdict(list)
    for reviewed_case in material.cases:
        case_groups[_case_key(reviewed_case[2].scale, reviewed_case[1])].append(reviewed_case)
    taking_part: dict[str, list[int]] = {}
    common_items: dict[str, list[tuple[ReviewItem, Reviewed, str]]] = {}
    common_cases: dict[str, list[tuple[str, str, Reviewed]]] = {}
    left_out = 0
    for key, members in item_groups.items():
        judges = [i for i, v in enumerate(judged_items) if any((c, it.id) in v for it, _, c in members)]
        common = [m for m in members if all((m[2], m[0].id) in judged_items[i] for i in judges)]
        taking_part[key], common_items[key] = judges, common
        left_out += len(members) - len(common)
    for key, rated in case_groups.items():
        judges = [i for i, v in enumerate(judged_values) if any((c, m) in v for c, m, _ in rated)]
        common_case = [r for r in rated if all((r[0], r[1]) in judged_values[i] for i in judges)]
        taking_part[key], common_cases[key] = judges, common_case
        left_out += len(rated) - len(common_case)
    for key, judges in taking_part.items():
        for index, (spec, result, _) in enumerate(outcomes):
            if index not in judges:
                metric = key.split("/")[-1] if key.startswith("case/") else None
                why = _first_error(result, metric) if metric else _first_error(result, "reviewed_claims")
                report.notes.append(
                    f"{spec} scored none of {key}"
                    + (f" ({why})" if why else "")
                    + ": left out of that comparison"
                )
    if left_out:
        report.notes.append(
            f"{left_out} reviewed item(s) or case(s) could not be scored by every judge of their comparison "
            "and are left out for all of them, so that the judges are measured on the same ones"
        )
    scale_of = {s.name: s for s in material.schema.scales}
    lower = set(record.lower_is_better)
    for index, ((spec, result, seconds), verdicts, values) in enumerate(
        zip(outcomes, judged_items, judged_values, strict=True)
    ):
        label = _label(result, spec)
        observations = [
            ItemObservation(
                item,
                case_id,
                entry,
                entry.consensus(material.schema.scale(item.kind, entry.scale).values),
                verdicts[(case_id, item.id)],
            )
            for key, members in common_items.items()
            if index in taking_part[key]
            for item, entry, case_id in members
        ]
        rows = [r for r in item_rows(observations, judge=label) if r.level in ("fact", "sentence")]
        for key, rated in common_cases.items():
            if index not in taking_part[key] or not rated:
                continue
            scale = scale_of[rated[0][2].scale]
            metric = rated[0][1]
            observed = []
            for case_id, _, entry in rated:
                case, _ = material.loaded[case_id]
                observed.append(
                    CaseObservation(
                        case_id,
                        entry,
                        entry.consensus(scale.values),
                        values[(case_id, metric)],
                        case.response or "",
                        reference_text(case) or contexts_text(case),
                    )
                )
            pairs = [p for o in observed if (p := o.reviewed.first_two()) is not None]
            rows.append(
                case_row(
                    scale,
                    metric,
                    observed,
                    threshold=threshold,
                    lower_is_better=metric in lower,
                    judge=label,
                    pairs=pairs,
                )
            )
        unscored = sum(1 for r in result.results if r.score.status == "error")
        report.judges.append(
            JudgeResult(
                spec=spec, label=label, run_id=result.run_id, seconds=seconds, unscored=unscored, rows=rows
            )
        )
    report.items = {key: len(members) for key, members in common_items.items() if members}
    report.items.update({key: len(rated) for key, rated in common_cases.items() if rated})
    report.differences = _differences(
        report, common_items, common_cases, taking_part, judged_items, judged_values, material
    )
    return report


def _judge_difference(
    key: str,
    statistic: str,
    judge: str,
    versus: str,
    figure: tuple[float | None, float | None, float | None, int, str | None],
) -> JudgeDifference:
    """``judge``'s figure minus ``versus``' (value, interval, items, note) as a report row."""
    value, low, high, n, note = figure
    return JudgeDifference(
        key=key,
        statistic=statistic,
        judge=judge,
        versus=versus,
        difference=Figure(
            name=statistic, title=f"{judge} − {versus}", value=value, ci_low=low, ci_high=high, n=n, note=note
        ),
    )


def _differences(
    report: ReviewCalibrationReport,
    common_items: Mapping[str, Sequence[tuple[ReviewItem, Reviewed, str]]],
    common_cases: Mapping[str, Sequence[tuple[str, str, Reviewed]]],
    taking_part: Mapping[str, Sequence[int]],
    judged_items: Sequence[Mapping[tuple[str, str], JudgeVerdict]],
    judged_values: Sequence[Mapping[tuple[str, str], float]],
    material: Material,
) -> list[JudgeDifference]:
    """Per comparison, each judge's figures minus those of the first judge taking part, on
    the same items, with paired case-resampled intervals."""
    out: list[JudgeDifference] = []
    specs = [j.spec for j in report.judges]
    for key, members in common_items.items():
        judges = list(taking_part[key])
        if len(judges) < 2 or not members:
            continue
        groups = [case_id for _, _, case_id in members]
        positive_word = "entailed" if key.startswith("fact/") else "supported"
        reviewed = [
            e.consensus(material.schema.scale(i.kind, e.scale).values) == positive_word for i, e, _ in members
        ]

        def sides(index: int) -> dict[str, cluster.BatchStat]:
            said = [judged_items[index][(c, i.id)] for i, _, c in members]  # noqa: B023
            return {
                "cohen_kappa2": cluster.kappa(
                    [v.verdict == positive_word for v in said],  # noqa: B023
                    reviewed,  # noqa: B023
                    labels=[False, True],
                ),
                "roc_auc": cluster.roc_auc(reviewed, [v.credit for v in said]),  # noqa: B023
            }

        base = sides(judges[0])
        for index in judges[1:]:
            other = sides(index)
            for statistic in ("cohen_kappa2", "roc_auc"):
                interval = cluster.cluster_difference(other[statistic], base[statistic], groups)
                out.append(
                    _judge_difference(
                        key,
                        statistic,
                        specs[index],
                        specs[judges[0]],
                        (interval.value, interval.low, interval.high, interval.n, interval.note),
                    )
                )
    scale_of = {s.name: s for s in material.schema.scales}
    for key, rated in common_cases.items():
        judges = list(taking_part[key])
        if len(judges) < 2 or not rated:
            continue
        scale = scale_of[rated[0][2].scale]
        metric = rated[0][1]
        top = len(scale.values) - 1
        levels = [float(top - scale.values.index(e.consensus(scale.values))) for _, _, e in rated]
        positive = [e.consensus(scale.values) == scale.values[0] for _, _, e in rated]
        a = [judged_values[judges[0]][(c, metric)] for c, _, _ in rated]
        for index in judges[1:]:
            b = [judged_values[index][(c, metric)] for c, _, _ in rated]
            comparisons: list[tuple[str, Any, tuple[Any, ...], tuple[Any, ...]]] = [
                ("spearman", stats.spearman, (b, levels), (a, levels)),
                ("roc_auc", functools.partial(stats.roc_auc, positive=True), (positive, b), (positive, a)),
            ]
            for statistic, fn, mine, theirs in comparisons:
                estimate, paired = stats.difference_ci(fn, mine, theirs)
                out.append(
                    _judge_difference(
                        key,
                        statistic,
                        specs[index],
                        specs[judges[0]],
                        (estimate.value, paired.low, paired.high, len(rated), estimate.note or paired.note),
                    )
                )
    return out
