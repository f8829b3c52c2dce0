"""Reading what a review needs from the run store: a case with its results and items, the
schema that applies, and each reviewer's progress on a case."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from clineval.errors import StoreError
from clineval.model import AgentOutput, Case, ResultRecord, ReviewQueue, ReviewRecord, RunRecord, Score
from clineval.model.run import run_kind
from clineval.redaction import redact_json
from clineval.review.items import CaseItems, case_items
from clineval.review.schema import ReviewSchema, schema_for_run, schema_from_data
from clineval.store.sqlite import RunStore


def review_schema(record: RunRecord, queue: ReviewQueue | None = None) -> ReviewSchema:
    """The schema of a review: the queue's, else the run's own (its run file's ``review:``),
    else the defaults for its kind."""
    if queue is not None and queue.schema_:
        return schema_from_data(queue.schema_, f"review queue {queue.id}")
    return schema_for_run(record.config, run_kind(record))


def load_case(store: RunStore, run_id: str, case_id: str) -> tuple[Case, list[ResultRecord]] | None:
    """The case with the agent's output applied, and its results (masked), or ``None``."""
    rows = store.query("SELECT data FROM cases WHERE run_id = ? AND case_id = ?", (run_id, case_id))
    if not rows:
        return None
    case = Case.model_validate_json(redact_json(str(rows[0][0])))
    output = store.query("SELECT data FROM outputs WHERE run_id = ? AND case_id = ?", (run_id, case_id))
    if output:
        case = AgentOutput.model_validate_json(redact_json(str(output[0][0]))).apply_to(case)
    results = [
        ResultRecord(
            run_id=run_id,
            case_id=case_id,
            metric=str(r[0]),
            score=Score.model_validate_json(redact_json(str(r[1]))),
        )
        for r in store.query(
            "SELECT metric, score FROM results WHERE run_id = ? AND case_id = ? ORDER BY metric",
            (run_id, case_id),
        )
    ]
    return case, results


def items_of(
    store: RunStore, record: RunRecord, case_id: str, schema: ReviewSchema
) -> tuple[Case, list[ResultRecord], CaseItems]:
    loaded = load_case(store, record.id, case_id)
    if loaded is None:
        raise StoreError(f"run {record.id} has no case {case_id!r}")
    case, results = loaded
    order = {m: i for i, m in enumerate(record.metrics)}
    results.sort(key=lambda r: (order.get(r.metric, len(order)), r.metric))
    return case, results, case_items(case, results, schema)


def required_questions(items: CaseItems, schema: ReviewSchema) -> list[tuple[str, str]]:
    """The (item, scale) pairs a reviewer must answer for the case to count as reviewed."""
    out: list[tuple[str, str]] = []
    for item in items.items:
        for scale in schema.scales_of(item.kind):
            if scale.required:
                out.append((item.id, scale.name))
    return out


@dataclass
class CaseProgress:
    """How far each reviewer got with one case."""

    case_id: str
    required: int
    answered: dict[str, int] = field(default_factory=dict)
    """Reviewer -> required questions answered."""

    def complete(self, reviewer: str) -> bool:
        return self.answered.get(reviewer, -1) >= self.required

    @property
    def completed_by(self) -> set[str]:
        return {r for r, n in self.answered.items() if n >= self.required}


def progress_of(items: CaseItems, schema: ReviewSchema, verdicts: Iterable[ReviewRecord]) -> CaseProgress:
    required = set(required_questions(items, schema))
    answered: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for record in verdicts:
        key = (record.item, record.scale)
        if key in required and (record.verdict is not None or record.comment):
            answered[record.reviewer].add(key)
    return CaseProgress(items.case_id, len(required), {r: len(keys) for r, keys in answered.items()})


@dataclass
class QueueState:
    """A queue as one reviewer sees it: which cases are theirs, done, or taken by others."""

    queue: ReviewQueue
    progress: dict[str, CaseProgress]
    claims: dict[str, set[str]]

    def _taken_by_others(self, case_id: str, reviewer: str) -> int:
        progress = self.progress.get(case_id)
        done = progress.completed_by if progress else set()
        started = {r for r, n in progress.answered.items() if n > 0} if progress else set()
        return len((done | started | self.claims.get(case_id, set())) - {reviewer})

    def is_open(self, case_id: str, reviewer: str) -> bool:
        """The reviewer has this case (answered, opened) or there is room for one more reviewer."""
        progress = self.progress.get(case_id)
        mine = reviewer in self.claims.get(case_id, set()) or (
            progress is not None and progress.answered.get(reviewer, 0) > 0
        )
        return mine or self._taken_by_others(case_id, reviewer) < self.queue.per_case

    def cases_for(self, reviewer: str) -> list[str]:
        """The queue's cases this reviewer may review, in queue order."""
        return [c for c in self.queue.case_ids if self.is_open(c, reviewer)]

    def done_by(self, reviewer: str) -> list[str]:
        return [c for c in self.queue.case_ids if c in self.progress and self.progress[c].complete(reviewer)]

    def next_for(self, reviewer: str, after: str | None = None) -> str | None:
        """The first case after ``after`` (or from the start) that this reviewer may take and
        has not finished; then, wrapping round, any before it."""
        mine = self.cases_for(reviewer)
        start = mine.index(after) + 1 if after in mine else 0
        for case_id in [*mine[start:], *mine[:start]]:
            progress = self.progress.get(case_id)
            if progress is None or not progress.complete(reviewer):
                return case_id
        return None

    def candidates_for(self, reviewer: str, after: str | None = None) -> list[tuple[str, frozenset[str]]]:
        """The cases this reviewer has not finished, in the order :meth:`next_for` takes them
        (after ``after``, then wrapping round), each with the other reviewers who answered it:
        for :meth:`clineval.store.reviews.ReviewStore.claim_next`, which checks the claims again."""
        order = list(self.queue.case_ids)
        start = order.index(after) + 1 if after in order else 0
        out: list[tuple[str, frozenset[str]]] = []
        for case_id in [*order[start:], *order[:start]]:
            progress = self.progress.get(case_id)
            if progress is not None and progress.complete(reviewer):
                continue
            if case_id not in self.progress:
                continue
            answered = (
                frozenset(r for r, n in progress.answered.items() if n > 0) if progress else frozenset()
            )
            out.append((case_id, answered - {reviewer}))
        return out

    def neighbours(self, reviewer: str, case_id: str) -> tuple[str | None, str | None]:
        """The previous and next case of the reviewer's part of the queue (``j``/``k``)."""
        mine = self.cases_for(reviewer)
        if case_id not in mine:
            nxt = (
                next(
                    (c for c in mine if self.queue.case_ids.index(c) > self.queue.case_ids.index(case_id)),
                    None,
                )
                if case_id in self.queue.case_ids
                else None
            )
            return None, nxt
        i = mine.index(case_id)
        return (mine[i - 1] if i > 0 else None, mine[i + 1] if i + 1 < len(mine) else None)

    @property
    def fully_reviewed(self) -> int:
        """Cases with as many complete reviews as the queue asks for."""
        return sum(
            1
            for c in self.queue.case_ids
            if c in self.progress and len(self.progress[c].completed_by) >= self.queue.per_case
        )


def queue_state(
    store: RunStore, record: RunRecord, queue: ReviewQueue, claims: dict[str, set[str]]
) -> QueueState:
    """Every case's progress in the queue (reads the cases' results and current verdicts)."""
    from clineval.store.reviews import ReviewStore

    schema = review_schema(record, queue)
    verdicts: dict[str, list[ReviewRecord]] = defaultdict(list)
    for review in ReviewStore(store).current(record.id, case_ids=queue.case_ids):
        verdicts[review.case_id].append(review)
    progress: dict[str, CaseProgress] = {}
    for case_id in queue.case_ids:
        loaded = load_case(store, record.id, case_id)
        if loaded is None:
            continue
        case, results = loaded
        progress[case_id] = progress_of(case_items(case, results, schema), schema, verdicts.get(case_id, []))
    return QueueState(queue=queue, progress=progress, claims=claims)


def case_ids_with_reviews(reviews: Sequence[ReviewRecord]) -> list[str]:
    return list(dict.fromkeys(r.case_id for r in reviews))
