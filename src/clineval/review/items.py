"""What a reviewer can give a verdict on in one case: the case itself and its items.

The items come from what the metrics recorded in their scores' details (chosen by the
shape of the details, not the metric's name, so a suite evaluator built on TBFact gets the
same items as ``tbfact``):

========  =====================================================  ==========================
kind      from                                                   id
========  =====================================================  ==========================
case      every case                                             ``case``
fact      ``details.facts`` rows with a ``direction`` (TBFact)   ``fact/METRIC/DIRECTION/N``
sentence  ``details.statements`` (RAGAS faithfulness) and the    ``sentence/METRIC/N``
          informative ``details.sentences`` (ASTRID
          conversational faithfulness)
turn      the user messages of the case's conversation           ``turn/N``
========  =====================================================  ==========================

Each item keeps what the judge said of it (:class:`JudgeVerdict`, on the item's own
scale: ``entailed``/``partly``/``not`` for a fact, ``supported``/``not`` for a sentence,
``yes``/``no`` for a turn whose gold agent is known), which the viewer hides while a
reviewer works blind, and the text it was checked against, which the trivial baselines
(ROUGE-L, content-word share) use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clineval.model import Case, ResultRecord
from clineval.review.schema import ItemKind, ReviewSchema

CASE_ITEM = "case"


@dataclass(frozen=True)
class JudgeVerdict:
    """What the judge (or the deterministic metric) said of one item."""

    verdict: str
    """On the item's scale: a fact ``entailed``/``partly``/``not``; a sentence
    ``supported``/``not``; a turn ``yes``/``no``."""
    credit: float
    """The item's credit in the metric (1 entailed, a partial verdict's graded support,
    0 otherwise): the score an AUC ranks."""
    label: str | None = None
    """The judge's own label (``partial``, ``not_entailed`` ...)."""
    reason: str | None = None
    support: float | None = None
    importance: str | None = None
    evidence: str | None = None
    explanation: str | None = None

    @property
    def contradicted(self) -> bool:
        return self.reason == "incorrect"


@dataclass(frozen=True)
class ReviewItem:
    """One thing a reviewer gives a verdict on."""

    id: str
    kind: ItemKind
    text: str
    metric: str | None = None
    direction: str | None = None
    """Facts: ``precision`` (a response fact, checked against the reference) or ``recall``
    (a reference fact, checked against the response)."""
    number: int | None = None
    against: str = ""
    """What the item is checked against, in words (``the reference``, ``the contexts`` ...)."""
    evidence_text: str = ""
    """The text it is checked against (the baselines compare the item's text with it)."""
    category: str | None = None
    answered_by: tuple[str, ...] = ()
    judge: JudgeVerdict | None = None
    checked_by: str = "facts"
    """How the metric checked it: ``facts`` (claims against a text: TBFact, RAGAS faithfulness)
    or ``grounding`` (an answer's sentence against the contexts, read as a reply to the
    question: ASTRID conversational faithfulness). Another judge checks it the same way."""

    @property
    def group(self) -> str:
        """The heading the item is listed under."""
        if self.kind == "fact":
            side = "Response facts" if self.direction == "precision" else "Reference facts"
            return f"{side}, checked against {self.against} ({self.metric})"
        if self.kind == "sentence":
            return f"Sentences of the response, checked against the contexts ({self.metric})"
        if self.kind == "turn":
            return "Requests of the conversation: did the orchestrator choose the right agent?"
        return "The response"


@dataclass
class CaseItems:
    """The reviewable items of one case, in the order a reviewer sees them."""

    case_id: str
    items: list[ReviewItem] = field(default_factory=list)

    def get(self, item_id: str) -> ReviewItem | None:
        return next((i for i in self.items if i.id == item_id), None)

    def of_kind(self, kind: ItemKind) -> list[ReviewItem]:
        return [i for i in self.items if i.kind == kind]


def item_kind(item_id: str) -> ItemKind | None:
    """The kind an item id names (``None``: not an item id)."""
    if item_id == CASE_ITEM:
        return "case"
    head = item_id.split("/", 1)[0]
    return head if head in ("fact", "sentence", "turn") else None  # type: ignore[return-value]


def fact_id(metric: str, direction: str, number: int) -> str:
    return f"fact/{metric}/{direction}/{number}"


def sentence_id(metric: str, number: int) -> str:
    return f"sentence/{metric}/{number}"


def turn_id(number: int) -> str:
    return f"turn/{number}"


def verdict_credit(label: Any, reason: Any, support: Any) -> float:
    """An item's credit: 1 entailed, a partial verdict's graded support (0.5 without one), else 0."""
    if label == "entailed":
        return 1.0
    if label == "partial" and reason != "incorrect":
        return 0.5 if not isinstance(support, int | float) else float(support)
    return 0.0


def fact_verdict(label: Any) -> str:
    """A judge's label on a fact's review scale: entailed, partly or not."""
    return {"entailed": "entailed", "partial": "partly"}.get(str(label), "not")


def _number(value: Any, fallback: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else fallback


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def reference_text(case: Case) -> str:
    """What a response fact is checked against: the reference, else the gold facts written
    as TBFact writes them (one ``- fact`` per line)."""
    if case.reference is not None:
        return case.reference
    if case.gold_facts:
        return "\n".join(f"- {f.text}" for f in case.gold_facts)
    return ""


def contexts_text(case: Case) -> str:
    return "\n\n".join(case.contexts or [])


def _fact_items(case: Case, result: ResultRecord) -> list[ReviewItem]:
    rows = result.score.details.get("facts")
    if not isinstance(rows, list):
        return []
    out: list[ReviewItem] = []
    seen: set[str] = set()
    for position, row in enumerate(rows, start=1):
        if not isinstance(row, Mapping) or row.get("direction") not in ("precision", "recall"):
            continue
        text = _text(row.get("fact")).strip()
        if not text:
            continue
        direction = str(row["direction"])
        number = _number(row.get("id"), position)
        item = fact_id(result.metric, direction, number)
        if item in seen:
            continue
        seen.add(item)
        label, reason, support = row.get("label"), row.get("reason"), row.get("support")
        precision = direction == "precision"
        out.append(
            ReviewItem(
                id=item,
                kind="fact",
                text=text,
                metric=result.metric,
                direction=direction,
                number=number,
                against="the reference" if precision else "the response",
                evidence_text=reference_text(case) if precision else (case.response or ""),
                category=_text(row.get("category")) or None,
                judge=JudgeVerdict(
                    verdict=fact_verdict(label),
                    credit=verdict_credit(label, reason, support),
                    label=_text(label) or None,
                    reason=_text(reason) or None,
                    support=float(support) if isinstance(support, int | float) else None,
                    importance=_text(row.get("importance")) or None,
                    evidence=_text(row.get("evidence")) or None,
                    explanation=_text(row.get("explanation")) or None,
                ),
            )
        )
    return out


def _sentence_items(case: Case, result: ResultRecord) -> list[ReviewItem]:
    details = result.score.details
    rows: list[tuple[int, str, Mapping[str, Any]]] = []
    statements = details.get("statements")
    sentences = details.get("sentences")
    checked_by = "facts" if isinstance(statements, list) else "grounding"
    if isinstance(statements, list):
        for position, row in enumerate(statements, start=1):
            if isinstance(row, Mapping) and "label" in row:
                rows.append((_number(row.get("id"), position), _text(row.get("statement")), row))
    elif isinstance(sentences, list):
        for position, row in enumerate(sentences, start=1):
            if isinstance(row, Mapping) and row.get("kind") == "informative" and "label" in row:
                rows.append((_number(row.get("id"), position), _text(row.get("sentence")), row))
    out: list[ReviewItem] = []
    seen: set[str] = set()
    evidence = contexts_text(case)
    for number, text, row in rows:
        item = sentence_id(result.metric, number)
        if not text.strip() or item in seen:
            continue
        seen.add(item)
        label, reason, support = row.get("label"), row.get("reason"), row.get("support")
        out.append(
            ReviewItem(
                id=item,
                kind="sentence",
                text=text.strip(),
                metric=result.metric,
                number=number,
                against="the contexts",
                evidence_text=evidence,
                checked_by=checked_by,
                judge=JudgeVerdict(
                    verdict="supported" if label == "entailed" else "not",
                    credit=verdict_credit(label, reason, support),
                    label=_text(label) or None,
                    reason=_text(reason) or None,
                    support=float(support) if isinstance(support, int | float) else None,
                    evidence=_text(row.get("evidence")) or None,
                    explanation=_text(row.get("explanation")) or None,
                ),
            )
        )
    return out


def _turn_verdicts(results: Iterable[ResultRecord]) -> dict[int, JudgeVerdict]:
    """Per user turn (1-based), whether the selected agent was the gold one, from a result
    that lists labelled turns (``agent_selection_accuracy``)."""
    verdicts: dict[int, JudgeVerdict] = {}
    for result in results:
        turns = result.score.details.get("turns")
        if not isinstance(turns, list):
            continue
        for row in turns:
            if not isinstance(row, Mapping) or not isinstance(row.get("correct"), bool):
                continue
            number = row.get("turn")
            if not isinstance(number, int) or number in verdicts:
                continue
            correct = bool(row["correct"])
            verdicts[number] = JudgeVerdict(
                verdict="yes" if correct else "no",
                credit=1.0 if correct else 0.0,
                label=f"gold {row.get('gold')}, selected {row.get('selected') or 'nobody'}",
                explanation=f"{result.metric}: gold agent {row.get('gold')}",
            )
    return verdicts


def _turn_items(case: Case, results: Sequence[ResultRecord]) -> list[ReviewItem]:
    from clineval.conversations.cases import conversation_of
    from clineval.conversations.segments import user_turns

    try:
        conversation = conversation_of(case)
    except ValueError:  # a damaged conversation: the viewer's evidence says so
        return []
    if conversation is None:
        return []
    verdicts = _turn_verdicts(results)
    out: list[ReviewItem] = []
    for turn in user_turns(conversation):
        number = turn.index + 1
        out.append(
            ReviewItem(
                id=turn_id(number),
                kind="turn",
                text=turn.message.text,
                number=number,
                against="the agents that answered",
                answered_by=tuple(turn.agents),
                judge=verdicts.get(number),
            )
        )
    return out


def _stable_rank(case_id: str, item_id: str) -> str:
    return hashlib.sha256(f"{case_id}\x00{item_id}".encode()).hexdigest()


def case_items(case: Case, results: Sequence[ResultRecord], schema: ReviewSchema) -> CaseItems:
    """The case and its items that ``schema`` reviews, in reading order: the case, the
    facts of each metric (response facts, then reference facts), the sentences, the turns."""
    found = CaseItems(case.id, [ReviewItem(id=CASE_ITEM, kind="case", text=case.response or "")])
    scored = [r for r in results if r.score.status == "scored"]
    if "fact" in schema.items:
        for result in scored:
            facts = _fact_items(case, result)
            if schema.max_facts is not None and len(facts) > schema.max_facts:
                keep = set(sorted(facts, key=lambda f: _stable_rank(case.id, f.id))[: schema.max_facts])
                facts = [f for f in facts if f in keep]
            found.items.extend(f for f in facts if f.direction == "precision")
            found.items.extend(f for f in facts if f.direction == "recall")
    if "sentence" in schema.items:
        for result in scored:
            found.items.extend(_sentence_items(case, result))
    if "turn" in schema.items:
        found.items.extend(_turn_items(case, results))
    return found
