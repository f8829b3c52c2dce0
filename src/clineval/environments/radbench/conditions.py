"""Tool sets of the eight evaluation conditions (RadA-BenchPlat, "Dynamic Tool Set Simulation").

:func:`build_tool_set` builds the tools one episode sees, from the record (its anatomy,
modality and true labels), the task and the condition. Everything random is drawn from a
``random.Random`` seeded with (seed, record id, task key, condition), so the same inputs
always give the same set. Tools are built category by category (the variants of a
category in random order), named ``TOOL1``, ``TOOL2``, ... in build order, and then
presented in a random order, so neither the name nor the position of a card tells which
tool is the right one.

Sizes and recipes (A, M: the record's anatomy and modality; "specific": a tool for one
anatomy-modality pair; "the singletons": the anatomy and modality classifiers, the
disease inferencer, the organ and anomaly biomarker quantifiers and indicator
evaluators, and the treatment recommender -- 8 tools):

* ``baseline`` (12): one universal tool per category, the report generator of type text
  and mask, two biomarker quantifiers and two indicator evaluators (organ, anomaly).
* ``redundant_regular`` (13-15): the baseline plus one extra tool in 1-3 of the four
  categories that have variants (segmentor, detector, diagnoser: a specific tool for the
  case, better, or for another pair, unusable; report generator: another universal type,
  worse, or a specific one for the case or for another pair).
* ``redundant_medium`` (27-32): the singletons; segmentor, detector and diagnoser each get
  the case's specific tool plus 2-3 specific tools for other pairs (same modality other
  anatomy or same anatomy other modality first, any other pair when those run out); the
  report generator gets the case's four types plus 6-8 specific tools for other pairs.
* ``redundant_high`` (169): every scope (universal and the 22 pairs) of segmentor,
  detector and diagnoser (3 x 23), every scope and type of report generator (23 x 4), and
  the singletons.
* ``insufficient_1`` (14-17): the standard set (18: the singletons, universal and
  specific segmentor, detector and diagnoser, report generators of two random universal
  and two random specific types) without one category the task needs (research note 1.5).
* ``insufficient_2`` (16-17): the target category of the task has only two specific
  tools for other pairs; the other scoped categories have universal and specific tools.
* ``insufficient_3`` (18): the standard set in which every tool of the task's target
  type carries a list of 3-5 labels that lacks the record's true label.
* ``differentiated`` (17-18): universal and specific tools of every scoped category,
  plus, for the task's target type, a label-restricted tool whose list holds the true
  label, so universal < specific < restricted and the best suitable tool is unique.

Deviations from the public code (research note 1.5), each a fix:

* Everything is seeded (the public builders use the unseeded global ``random``).
* ``redundant_regular`` is RadA-BenchPlat's "necessary tools plus at most one extra per
  category"; the public ``build_tools_basic`` (15 tools) was never used by a pipeline.
  At least one extra tool is always added, so the set is never identical to the baseline.
* ``redundant_medium`` draws other pairs from the whole list when the same-modality and
  same-anatomy pools run short, so every pair gets 27-32 tools (the public code gave
  Breast-Mammography 23).
* ``insufficient_1`` removes only categories the task needs: for the public "Disease
  Judge" it removes the diagnoser for 014 and the inferencer for 0123568 (not both); for
  0126/0136 it removes both biomarker quantifiers, so the category is really missing.
* ``insufficient_2`` keeps the disease inferencer (the public builder never created it,
  which made tasks needing it unsolvable for the wrong reason).
* ``insufficient_3`` restricts every tool that could give the needed label (diagnosers
  and inferencer for disease tasks, both indicator evaluators for indicator tasks), and
  all restricted tools are callable (the public restricted inferencer was not).
* ``differentiated`` adds one restricted indicator evaluator (the public code added two,
  tied at the top).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict

from clineval.environments.radbench.model import (
    BiomarkerKind,
    Gap,
    LabelField,
    Record,
    ReportType,
    ToolCard,
    ToolSet,
)
from clineval.environments.radbench.tools import (
    REPORT_TYPES,
    NeededStep,
    label_field_of,
    make_card,
    restrict,
    same_label,
    true_label,
)
from clineval.environments.radbench.vocab import CONDITIONS, PAIRS, Category, Condition, task

__all__ = [
    "CAPABILITY_TARGET",
    "MISSING_CATEGORY",
    "SPECIFIC_TARGET",
    "EntityVocabulary",
    "build_tool_set",
    "condition_rng",
    "load_entity_dict",
]

C = Category
SCOPED: tuple[Category, ...] = (C.ORGAN_SEGMENTOR, C.ANOMALY_DETECTOR, C.DISEASE_DIAGNOSER)

#: insufficient_1: the category removed per task (the study's mapping, needed categories only).
MISSING_CATEGORY: dict[str, NeededStep] = {
    "012": NeededStep(C.ANATOMY_CLASSIFIER),
    "013": NeededStep(C.MODALITY_CLASSIFIER),
    "014": NeededStep(C.DISEASE_DIAGNOSER),
    "0123": NeededStep(C.ORGAN_SEGMENTOR),
    "01235": NeededStep(C.ANOMALY_DETECTOR),
    "0126": NeededStep(C.BIOMARKER_QUANTIFIER, "organ"),
    "0136": NeededStep(C.BIOMARKER_QUANTIFIER, "anomaly"),
    "01348": NeededStep(C.ANOMALY_DETECTOR),
    "0123568": NeededStep(C.DISEASE_INFERENCER),
    "01235678": NeededStep(C.REPORT_GENERATOR),
    "012356789": NeededStep(C.TREATMENT_RECOMMENDER),
}
#: insufficient_2: the category with no tool for the record's pair.
SPECIFIC_TARGET: dict[str, Category] = {
    "012": C.ORGAN_SEGMENTOR,
    "0123": C.ORGAN_SEGMENTOR,
    "0126": C.ORGAN_SEGMENTOR,
    "013": C.ANOMALY_DETECTOR,
    "01235": C.ANOMALY_DETECTOR,
    "0136": C.ANOMALY_DETECTOR,
    "01348": C.ANOMALY_DETECTOR,
    "014": C.DISEASE_DIAGNOSER,
    "0123568": C.REPORT_GENERATOR,
    "01235678": C.REPORT_GENERATOR,
    "012356789": C.REPORT_GENERATOR,
}
#: insufficient_3 and differentiated: the category (and kind) whose labels matter per task.
CAPABILITY_TARGET: dict[str, NeededStep] = {
    "012": NeededStep(C.ORGAN_SEGMENTOR),
    "0123": NeededStep(C.ORGAN_SEGMENTOR),
    "013": NeededStep(C.ANOMALY_DETECTOR),
    "01348": NeededStep(C.ANOMALY_DETECTOR),
    "014": NeededStep(C.DISEASE_DIAGNOSER),
    "01235": NeededStep(C.DISEASE_INFERENCER),
    "0123568": NeededStep(C.DISEASE_INFERENCER),
    "0126": NeededStep(C.BIOMARKER_QUANTIFIER, "organ"),
    "0136": NeededStep(C.BIOMARKER_QUANTIFIER, "anomaly"),
    "01235678": NeededStep(C.INDICATOR_EVALUATOR),
    "012356789": NeededStep(C.INDICATOR_EVALUATOR),
}

_ENTITY_KEYS: dict[LabelField, str] = {
    "organ": "organ_list",
    "anomaly": "anomaly_list",
    "disease": "disease_list",
    "organ_dim": "organ_dim_list",
    "anomaly_dim": "anomaly_dim_list",
    "indicator": "indicator_list",
}


class EntityVocabulary(BaseModel):
    """The label lists restricted tools draw from (``data/entity_dict.json``, MIT, from the
    public RadABench repository)."""

    model_config = ConfigDict(extra="ignore")

    organ_list: list[str]
    anomaly_list: list[str]
    disease_list: list[str]
    organ_dim_list: list[str]
    anomaly_dim_list: list[str]
    indicator_list: list[str]

    def labels(self, field: LabelField) -> list[str]:
        values: list[str] = getattr(self, _ENTITY_KEYS[field])
        return values


@lru_cache(maxsize=1)
def _packaged_entities() -> EntityVocabulary:
    source = resources.files("clineval.environments.radbench").joinpath("data", "entity_dict.json")
    return EntityVocabulary.model_validate(json.loads(source.read_text(encoding="utf-8")))


def load_entity_dict(entity_dict: dict[str, Any] | EntityVocabulary | None = None) -> EntityVocabulary:
    """The given label vocabulary (validated), or the packaged one."""
    if entity_dict is None:
        return _packaged_entities()
    if isinstance(entity_dict, EntityVocabulary):
        return entity_dict
    return EntityVocabulary.model_validate(entity_dict)


def condition_rng(seed: int, record_id: str, task_key: str, condition: str) -> random.Random:
    """The random generator of one tool set, derived only from its identity."""
    text = "\x1f".join(("radbench-tools", str(seed), record_id, task_key, condition))
    return random.Random(int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big"))


@dataclass
class _Builder:
    """The state of one build: the record, the task, the generator and the groups built."""

    record: Record
    key: str
    rng: random.Random
    entities: EntityVocabulary
    groups: list[list[ToolCard]] = field(default_factory=list)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.record.anatomy, self.record.modality)

    def add(self, *cards: ToolCard) -> None:
        """Add the tools of one category (their order is shuffled when the set is named)."""
        self.groups.append(list(cards))

    def specific(self, category: Category, pair: tuple[str, str] | None = None, **kw: Any) -> ToolCard:
        anatomy, modality = pair or self.pair
        return make_card(category, anatomy=anatomy, modality=modality, **kw)

    def other_pairs(self) -> list[tuple[str, str]]:
        return [p for p in PAIRS if not (same_label(p[0], self.pair[0]) and same_label(p[1], self.pair[1]))]

    def pools(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """The confusable other pairs: (same modality, other anatomy), (same anatomy, other modality)."""
        anatomy, modality = self.pair
        others = self.other_pairs()
        return [p for p in others if same_label(p[1], modality)], [
            p for p in others if same_label(p[0], anatomy)
        ]

    def draw_pairs(self, n: int, *, per_pool: int) -> list[tuple[str, str]]:
        """``n`` distinct other pairs: up to ``per_pool`` from each confusable pool, then any."""
        same_mod, same_anat = self.pools()
        picked = self.rng.sample(same_mod, min(per_pool, len(same_mod)))
        picked += self.rng.sample(same_anat, min(per_pool, len(same_anat)))
        self.rng.shuffle(picked)
        picked = picked[:n]
        if len(picked) < n:
            remaining = [p for p in self.other_pairs() if p not in picked]
            picked += self.rng.sample(remaining, n - len(picked))
        return picked

    def draw_labels(self, field_: LabelField, n: int) -> list[str]:
        """``n`` distinct labels of a field from the vocabulary, never the record's true one."""
        truth = " ".join(true_label(self.record, field_).split()).casefold()
        pool = [label for norm, label in _normalised_pool(self.entities, field_) if norm != truth]
        return self.rng.sample(pool, n)


@lru_cache(maxsize=64)
def _pool_of(labels: tuple[str, ...]) -> list[tuple[str, str]]:
    pool: dict[str, str] = {}
    for label in labels:
        norm = " ".join(label.split()).casefold()
        if label.strip() and norm not in pool:
            pool[norm] = label
    return sorted(pool.items(), key=lambda item: item[1])


def _normalised_pool(entities: EntityVocabulary, field_: LabelField) -> list[tuple[str, str]]:
    """A field's distinct labels, sorted, each with its normalised form (computed once per label list)."""
    return _pool_of(tuple(entities.labels(field_)))


def _add_in_order(b: _Builder, by_category: dict[Category, list[ToolCard]]) -> None:
    for category in Category:
        if by_category.get(category):
            b.add(*by_category[category])


def _singletons(b: _Builder) -> dict[Category, list[ToolCard]]:
    return {
        C.ANATOMY_CLASSIFIER: [make_card(C.ANATOMY_CLASSIFIER)],
        C.MODALITY_CLASSIFIER: [make_card(C.MODALITY_CLASSIFIER)],
        C.DISEASE_INFERENCER: [make_card(C.DISEASE_INFERENCER)],
        C.BIOMARKER_QUANTIFIER: [make_card(C.BIOMARKER_QUANTIFIER, kind=k) for k in ("organ", "anomaly")],
        C.INDICATOR_EVALUATOR: [make_card(C.INDICATOR_EVALUATOR, kind=k) for k in ("organ", "anomaly")],
        C.TREATMENT_RECOMMENDER: [make_card(C.TREATMENT_RECOMMENDER)],
    }


def _standard(b: _Builder) -> dict[Category, list[ToolCard]]:
    """The 18-tool set of insufficient_1 and insufficient_3 before removal or restriction."""
    tools = _singletons(b)
    for category in SCOPED:
        tools[category] = [make_card(category), b.specific(category)]
    universal_types = b.rng.sample(REPORT_TYPES, 2)
    specific_types = b.rng.sample(REPORT_TYPES, 2)
    tools[C.REPORT_GENERATOR] = [make_card(C.REPORT_GENERATOR, report_type=t) for t in universal_types] + [
        b.specific(C.REPORT_GENERATOR, report_type=t) for t in specific_types
    ]
    return tools


# builders -----------------------------------------------------------------------------


def _baseline(b: _Builder) -> Gap | None:
    tools = _singletons(b)
    for category in SCOPED:
        tools[category] = [make_card(category)]
    tools[C.REPORT_GENERATOR] = [make_card(C.REPORT_GENERATOR, report_type="text_mask")]
    _add_in_order(b, tools)
    return None


def _redundant_regular(b: _Builder) -> Gap | None:
    tools = _singletons(b)
    for category in SCOPED:
        tools[category] = [make_card(category)]
    tools[C.REPORT_GENERATOR] = [make_card(C.REPORT_GENERATOR, report_type="text_mask")]
    varied = [*SCOPED, C.REPORT_GENERATOR]
    for category in b.rng.sample(varied, b.rng.randint(1, 3)):
        tools[category].append(_regular_extra(b, category))
    _add_in_order(b, tools)
    return None


def _regular_extra(b: _Builder, category: Category) -> ToolCard:
    """One extra tool: usable (and better or worse) or for another pair (unusable)."""
    other = b.rng.choice(b.other_pairs())
    if category != C.REPORT_GENERATOR:
        return b.specific(category) if b.rng.random() < 0.5 else b.specific(category, other)
    choice = b.rng.randrange(3)
    if choice == 0:
        rtype: ReportType = b.rng.choice(("basic", "text", "mask"))
        return make_card(category, report_type=rtype)
    if choice == 1:
        return b.specific(category, report_type="text_mask")
    return b.specific(category, other, report_type=b.rng.choice(REPORT_TYPES))


def _redundant_medium(b: _Builder) -> Gap | None:
    tools = _singletons(b)
    for category in SCOPED:
        extra = b.draw_pairs(b.rng.randint(2, 3), per_pool=2)
        tools[category] = [b.specific(category)] + [b.specific(category, p) for p in extra]
    reports = [b.specific(C.REPORT_GENERATOR, report_type=t) for t in REPORT_TYPES]
    for p in b.draw_pairs(b.rng.randint(6, 8), per_pool=4):
        reports.append(b.specific(C.REPORT_GENERATOR, p, report_type=b.rng.choice(REPORT_TYPES)))
    tools[C.REPORT_GENERATOR] = reports
    _add_in_order(b, tools)
    return None


def _redundant_high(b: _Builder) -> Gap | None:
    tools = _singletons(b)
    scopes: list[tuple[str, str] | None] = [None, *PAIRS]
    for category in SCOPED:
        tools[category] = [make_card(category) if s is None else b.specific(category, s) for s in scopes]
    tools[C.REPORT_GENERATOR] = [
        make_card(C.REPORT_GENERATOR, report_type=t)
        if s is None
        else b.specific(C.REPORT_GENERATOR, s, report_type=t)
        for s in scopes
        for t in REPORT_TYPES
    ]
    _add_in_order(b, tools)
    return None


def _insufficient_1(b: _Builder) -> Gap | None:
    tools = _standard(b)
    missing = MISSING_CATEGORY[b.key]
    del tools[missing.category]
    _add_in_order(b, tools)
    return Gap(kind="CategoryMissing", category=missing.category, biomarker_kind=missing.kind)


def _insufficient_2(b: _Builder) -> Gap | None:
    tools = _singletons(b)
    target = SPECIFIC_TARGET[b.key]
    for category in SCOPED:
        if category == target:
            tools[category] = [b.specific(category, p) for p in b.rng.sample(b.other_pairs(), 2)]
        else:
            tools[category] = [make_card(category), b.specific(category)]
    if target == C.REPORT_GENERATOR:
        tools[target] = [
            b.specific(target, p, report_type=b.rng.choice(REPORT_TYPES))
            for p in b.rng.sample(b.other_pairs(), 2)
        ]
    else:
        reports = [
            b.specific(C.REPORT_GENERATOR, report_type="text_mask"),
            make_card(C.REPORT_GENERATOR, report_type="basic"),
        ]
        if b.rng.random() < 0.5:
            reports.append(make_card(C.REPORT_GENERATOR, report_type="text_mask"))
        tools[C.REPORT_GENERATOR] = reports
    _add_in_order(b, tools)
    anatomy, modality = b.pair
    return Gap(kind="SpecificToolMissing", category=target, anatomy=anatomy, modality=modality)


def _restricted_by(target: NeededStep, card: ToolCard) -> bool:
    """insufficient_3: whether a card is one of the tools that could give the needed label."""
    disease = (C.DISEASE_DIAGNOSER, C.DISEASE_INFERENCER)
    if target.category in disease:
        return card.category in disease
    if card.category != target.category:
        return False
    return target.kind is None or card.kind == target.kind


def _needed_field(target: NeededStep) -> LabelField:
    field_ = label_field_of(target.category, target.kind)
    assert field_ is not None
    return field_


def _insufficient_3(b: _Builder) -> Gap | None:
    tools = _standard(b)
    target = CAPABILITY_TARGET[b.key]
    for category, cards in tools.items():
        restricted = []
        for card in cards:
            if _restricted_by(target, card):
                card_field = label_field_of(card.category, card.kind)
                assert card_field is not None
                card = restrict(card, b.draw_labels(card_field, b.rng.randint(3, 5)))
            restricted.append(card)
        tools[category] = restricted
    _add_in_order(b, tools)
    needed = _needed_field(target)
    anatomy, modality = b.pair
    return Gap(
        kind="InsufficientCapability",
        category=target.category,
        anatomy=anatomy,
        modality=modality,
        label_field=needed,
        needed_label=true_label(b.record, needed),
        biomarker_kind=target.kind,
    )


def _with_true_label(b: _Builder, card: ToolCard) -> ToolCard:
    """The restricted variant of a card whose 4-5 labels include the record's true one."""
    card_field = label_field_of(card.category, card.kind)
    assert card_field is not None
    labels = [true_label(b.record, card_field), *b.draw_labels(card_field, b.rng.randint(3, 4))]
    b.rng.shuffle(labels)
    return restrict(card, labels)


def _differentiated(b: _Builder) -> Gap | None:
    tools = _singletons(b)
    for category in SCOPED:
        tools[category] = [make_card(category), b.specific(category)]
    tools[C.REPORT_GENERATOR] = [
        make_card(C.REPORT_GENERATOR, report_type="text_mask"),
        b.specific(C.REPORT_GENERATOR, report_type="text_mask"),
    ]
    target = CAPABILITY_TARGET[b.key]
    if target.category in (C.DISEASE_DIAGNOSER, C.DISEASE_INFERENCER):
        tools[C.DISEASE_DIAGNOSER].append(_with_true_label(b, b.specific(C.DISEASE_DIAGNOSER)))
        tools[C.DISEASE_INFERENCER].append(_with_true_label(b, make_card(C.DISEASE_INFERENCER)))
    elif target.category in SCOPED:
        tools[target.category].append(_with_true_label(b, b.specific(target.category)))
    elif target.category == C.BIOMARKER_QUANTIFIER:
        tools[target.category].append(_with_true_label(b, make_card(target.category, kind=target.kind)))
    else:
        kind: BiomarkerKind = b.rng.choice(("organ", "anomaly"))
        tools[target.category].append(_with_true_label(b, make_card(target.category, kind=kind)))
    _add_in_order(b, tools)
    return None


_BUILDERS: dict[str, Callable[[_Builder], Gap | None]] = {
    "baseline": _baseline,
    "redundant_regular": _redundant_regular,
    "redundant_medium": _redundant_medium,
    "redundant_high": _redundant_high,
    "insufficient_1": _insufficient_1,
    "insufficient_2": _insufficient_2,
    "insufficient_3": _insufficient_3,
    "differentiated": _differentiated,
}
assert set(_BUILDERS) == set(CONDITIONS)


def build_tool_set(
    condition: Condition,
    record: Record,
    task_key: str,
    *,
    seed: int,
    entity_dict: dict[str, Any] | EntityVocabulary | None = None,
) -> ToolSet:
    """The tool set of one episode: ``condition`` for this record and task (see module docs).

    Deterministic in (seed, record id, task key, condition); ``entity_dict`` supplies the
    label lists of restricted tools (default: the packaged vocabulary).
    """
    if condition not in _BUILDERS:
        raise ValueError(f"unknown condition {condition!r}: use one of {', '.join(CONDITIONS)}")
    key = task(task_key).key
    rng = condition_rng(seed, record.id, key, condition)
    builder = _Builder(record, key, rng, load_entity_dict(entity_dict))
    gap = _BUILDERS[condition](builder)
    cards: list[ToolCard] = []
    for group in builder.groups:
        group = list(group)
        rng.shuffle(group)
        cards.extend(group)
    named = [card.model_copy(update={"name": f"TOOL{i}"}) for i, card in enumerate(cards, start=1)]
    rng.shuffle(named)
    return ToolSet(condition=condition, seed=seed, tools=named, gap=gap)
