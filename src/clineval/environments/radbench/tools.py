"""Tool cards of the radiology agent benchmark: one card per tool variant, with the inputs,
outputs and performance rules of its category, and the helpers that say which tools suit a
record and how they rank.

Numbers (research note 1.4, from the public RadABench code): a card's performance is a
lower bound ``L``, an upper bound ``U`` and a ``step``. A call scores ``L`` times the
lowest score of its compulsory inputs, then gains ``step`` times the score of each
optional input it passes, up to ``U``.

========================  =================  ==================  ====================
category                  universal (L / U)  specific (L / U)    step
========================  =================  ==================  ====================
Anatomy Classifier        0.95 / 0.95        --                  0
Modality Classifier       0.95 / 0.95        --                  0
Organ Segmentor           0.80 / 0.80        0.85 / 0.85         0
Anomaly Detector          0.75 / 0.75        0.80 / 0.80         0
Disease Diagnoser         0.70 / 0.70        0.75 / 0.75         0
Disease Inferencer        0.80 / 0.80        --                  0
Biomarker Quantifier      0.75 / 0.80        --                  0.05
Indicator Evaluator       0.80 / 0.80        --                  0
Report Generator basic    0.35 / 0.35        0.40 / 0.40         0
Report Generator text     0.35 / 0.65        0.40 / 0.70         0.03
Report Generator mask     0.35 / 0.71        0.40 / 0.76         0.09
Report Generator t+mask   0.35 / 0.83        0.40 / 0.88         0.04
Treatment Recommender     0.80 / 0.98        --                  0.02
========================  =================  ==================  ====================

A *specific* tool serves one anatomy-modality pair and needs only ``$Image$``; its
universal twin also needs ``$Anatomy$`` and ``$Modality$``. A *label-restricted* tool
lists the labels it can output (organs, anomalies, diseases, biomarker dimensions or
indicator names) and in exchange scores higher: with ``n`` labels and ``gap = 0.95 - U``,
one label lifts the bounds to ``(L + gap, 0.95)``, more lift both by
``gap * max(0, (11 - n) / 10)``.

Deviations from the public code (fixes of its defects, research note 1.7):

* ``$IndicatorName$`` was a compulsory input of the indicator evaluator that no tool
  produced, so tasks 01235678 and 012356789 could never run it. Here the evaluator needs
  the image, the patient information and one biomarker (object, dimension, quantity),
  takes ``$IndicatorName$`` as an optional input, and outputs both ``$IndicatorName$`` and
  ``$IndicatorValue$``. Every compulsory input of every card is now produced by some tool
  of a solvable set or present from the start (``$Image$``, ``$Information$``).
* Report generators and the treatment recommender listed the phantom ``$ValueName$``
  and refused ``$IndicatorValue$``; here both accept ``$IndicatorName$`` and
  ``$IndicatorValue$`` as optional inputs.
* Ranking (used by the oracle and the optimal tool score) is by expected score: upper
  bound, then lower bound. Indicator evaluators of the two biomarker kinds produce the
  same outputs, so they compete with each other; biomarker quantifiers of different kinds
  do not. Tools with identical bounds share a rank (competition ranking), so choosing
  either of two equally good tools counts as optimal; :func:`performance_rank` still
  lists them in a fixed order (by tool number, then name) so the oracle is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from clineval.environments.radbench.model import BiomarkerKind, LabelField, Record, ReportType, ToolCard
from clineval.environments.radbench.vocab import Category, task

__all__ = [
    "BOOST_CEILING",
    "LABEL_VARIABLE",
    "REPORT_TYPES",
    "NeededStep",
    "adjust_performance",
    "describe",
    "has_label",
    "label_field_of",
    "make_card",
    "performance_rank",
    "rank_of",
    "restrict",
    "same_label",
    "steps_for_chain",
    "suitable",
    "task_steps",
    "tool_number",
    "true_label",
]

C = Category
REPORT_TYPES: tuple[ReportType, ...] = ("basic", "text", "mask", "text_mask")
BOOST_CEILING = 0.95
"""Label-restricted tools are lifted toward this score."""

#: The memory-bank variable whose value a label list restricts.
LABEL_VARIABLE: dict[LabelField, str] = {
    "organ": "$OrganObject$",
    "anomaly": "$AnomalyObject$",
    "disease": "$Disease$",
    "organ_dim": "$OrganDim$",
    "anomaly_dim": "$AnomalyDim$",
    "indicator": "$IndicatorName$",
}

_SIMPLE: dict[Category, tuple[float, float]] = {
    C.ANATOMY_CLASSIFIER: (0.95, 0.95),
    C.MODALITY_CLASSIFIER: (0.95, 0.95),
    C.DISEASE_INFERENCER: (0.80, 0.80),
    C.INDICATOR_EVALUATOR: (0.80, 0.80),
}
#: (universal, specific) score of the scoped categories (L = U, step 0).
_SCOPED: dict[Category, tuple[float, float]] = {
    C.ORGAN_SEGMENTOR: (0.80, 0.85),
    C.ANOMALY_DETECTOR: (0.75, 0.80),
    C.DISEASE_DIAGNOSER: (0.70, 0.75),
}
_SCOPED_OUTPUTS: dict[Category, list[str]] = {
    C.ORGAN_SEGMENTOR: ["$OrganMask$", "$OrganObject$"],
    C.ANOMALY_DETECTOR: ["$AnomalyMask$", "$AnomalyObject$"],
    C.DISEASE_DIAGNOSER: ["$Disease$"],
}
#: Report generator: (universal upper, step) per type; specific tools add 0.05 to both bounds.
_REPORT: dict[ReportType, tuple[float, float]] = {
    "basic": (0.35, 0.0),
    "text": (0.65, 0.03),
    "mask": (0.71, 0.09),
    "text_mask": (0.83, 0.04),
}
_REPORT_LOWER = 0.35
_SPECIFIC_BONUS = 0.05
_TEXT_INPUTS = [
    "$Information$",
    "$OrganObject$",
    "$AnomalyObject$",
    "$Disease$",
    "$OrganDim$",
    "$OrganQuant$",
    "$AnomalyDim$",
    "$AnomalyQuant$",
    "$IndicatorName$",
    "$IndicatorValue$",
]
_MASK_INPUTS = ["$OrganMask$", "$OrganObject$", "$AnomalyMask$", "$AnomalyObject$"]
_TREATMENT_OPTIONAL = [
    "$Disease$",
    "$OrganDim$",
    "$OrganQuant$",
    "$AnomalyDim$",
    "$AnomalyQuant$",
    "$IndicatorName$",
    "$IndicatorValue$",
]


def _x(kind: BiomarkerKind, suffix: str) -> str:
    """``$OrganDim$`` / ``$AnomalyDim$`` ..."""
    return f"${kind.capitalize()}{suffix}$"


def _report_optional(report_type: ReportType) -> list[str]:
    if report_type == "basic":
        return []
    if report_type == "text":
        return list(_TEXT_INPUTS)
    if report_type == "mask":
        return list(_MASK_INPUTS)
    return list(dict.fromkeys(_TEXT_INPUTS + _MASK_INPUTS))


def make_card(
    category: Category,
    *,
    anatomy: str | None = None,
    modality: str | None = None,
    kind: BiomarkerKind | None = None,
    report_type: ReportType | None = None,
    name: str = "",
) -> ToolCard:
    """The card of one tool variant, unrestricted (``labels=None``).

    ``anatomy``/``modality`` given: a specific tool (only for the organ segmentor, anomaly
    detector, disease diagnoser and report generator). ``kind`` is required for biomarker
    quantifiers and indicator evaluators, ``report_type`` for report generators (default
    ``text_mask``).
    """
    category = Category(category)
    specific = anatomy is not None or modality is not None
    scoped = category in _SCOPED or category == C.REPORT_GENERATOR
    if specific and not scoped:
        raise ValueError(f"{category.title} has no anatomy/modality-specific variant")
    scope_inputs = ["$Image$"] if specific else ["$Image$", "$Anatomy$", "$Modality$"]
    fields: dict[str, Any] = {"name": name, "category": category, "anatomy": anatomy, "modality": modality}
    if category in (C.ANATOMY_CLASSIFIER, C.MODALITY_CLASSIFIER):
        out = "$Anatomy$" if category == C.ANATOMY_CLASSIFIER else "$Modality$"
        lower, upper = _SIMPLE[category]
        fields.update(compulsory=["$Image$"], outputs=[out], lower=lower, upper=upper)
    elif category in _SCOPED:
        score = _SCOPED[category][1 if specific else 0]
        fields.update(
            compulsory=scope_inputs, outputs=list(_SCOPED_OUTPUTS[category]), lower=score, upper=score
        )
    elif category == C.DISEASE_INFERENCER:
        lower, upper = _SIMPLE[category]
        compulsory = ["$Image$", "$Information$", *_MASK_INPUTS]
        fields.update(compulsory=compulsory, outputs=["$Disease$"], lower=lower, upper=upper)
    elif category == C.BIOMARKER_QUANTIFIER:
        if kind is None:
            raise ValueError("a biomarker quantifier needs a kind (organ or anomaly)")
        fields.update(
            kind=kind,
            compulsory=["$Image$", _x(kind, "Object"), _x(kind, "Mask")],
            optional=[_x(kind, "Dim")],
            outputs=[_x(kind, "Dim"), _x(kind, "Quant")],
            lower=0.75,
            upper=0.80,
            step=0.05,
        )
    elif category == C.INDICATOR_EVALUATOR:
        if kind is None:
            raise ValueError("an indicator evaluator needs a kind (organ or anomaly)")
        lower, upper = _SIMPLE[category]
        fields.update(
            kind=kind,
            compulsory=["$Image$", "$Information$", _x(kind, "Object"), _x(kind, "Dim"), _x(kind, "Quant")],
            optional=["$IndicatorName$"],
            outputs=["$IndicatorName$", "$IndicatorValue$"],
            lower=lower,
            upper=upper,
        )
    elif category == C.REPORT_GENERATOR:
        rtype: ReportType = report_type or "text_mask"
        upper, step = _REPORT[rtype]
        bonus = _SPECIFIC_BONUS if specific else 0.0
        fields.update(
            report_type=rtype,
            compulsory=scope_inputs,
            optional=_report_optional(rtype),
            outputs=["$Report$"],
            lower=round(_REPORT_LOWER + bonus, 4),
            upper=round(upper + bonus, 4),
            step=step,
        )
    else:  # treatment recommender
        fields.update(
            compulsory=["$Information$", "$Report$"],
            optional=list(_TREATMENT_OPTIONAL),
            outputs=["$Treatment$"],
            lower=0.80,
            upper=0.98,
            step=0.02,
        )
    return ToolCard(**fields)


def label_field_of(category: Category, kind: BiomarkerKind | None = None) -> LabelField | None:
    """Which record field a label list of this category restricts (None: not restrictable)."""
    if category == C.ORGAN_SEGMENTOR:
        return "organ"
    if category == C.ANOMALY_DETECTOR:
        return "anomaly"
    if category in (C.DISEASE_DIAGNOSER, C.DISEASE_INFERENCER):
        return "disease"
    if category == C.BIOMARKER_QUANTIFIER:
        return "organ_dim" if kind == "organ" else "anomaly_dim"
    if category == C.INDICATOR_EVALUATOR:
        return "indicator"
    return None


def adjust_performance(lower: float, upper: float, n_labels: int) -> tuple[float, float]:
    """Bounds of a label-restricted variant: fewer labels, higher score (see module docs)."""
    gap = max(0.0, BOOST_CEILING - upper)
    if n_labels <= 1:
        return round(lower + gap, 4), round(max(upper, BOOST_CEILING), 4)
    boost = gap * max(0.0, (11 - n_labels) / 10)
    return round(lower + boost, 4), round(upper + boost, 4)


def restrict(card: ToolCard, labels: Sequence[str]) -> ToolCard:
    """The label-restricted variant of a card: only ``labels`` as outputs, boosted bounds."""
    field = label_field_of(card.category, card.kind)
    if field is None:
        raise ValueError(f"{card.category.title} cannot be label-restricted")
    if not labels:
        raise ValueError("a restricted tool needs at least one label")
    lower, upper = adjust_performance(card.lower, card.upper, len(labels))
    return card.model_copy(
        update={"labels": list(labels), "label_field": field, "lower": lower, "upper": upper}
    )


def true_label(record: Record, field: LabelField) -> str:
    """The record's true value of a label field (what an unrestricted tool outputs)."""
    return record.value_of(LABEL_VARIABLE[field])


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def same_label(a: str, b: str) -> bool:
    """Labels are compared ignoring case and repeated whitespace."""
    return _norm(a) == _norm(b)


def has_label(card: ToolCard, label: str) -> bool:
    """True when the card's label list (if any) contains ``label``."""
    return card.labels is None or any(same_label(x, label) for x in card.labels)


def suitable(card: ToolCard, record: Record) -> bool:
    """A tool suits a record when its anatomy and modality scope (if any) are the record's
    and its label list (if any) contains the record's true label for that field."""
    if card.anatomy is not None and not same_label(card.anatomy, record.anatomy):
        return False
    if card.modality is not None and not same_label(card.modality, record.modality):
        return False
    if card.labels is None or card.label_field is None:
        return True
    return has_label(card, true_label(record, card.label_field))


def tool_number(name: str) -> int:
    """``TOOL12`` → 12 (a large number for other names, so they sort last)."""
    match = re.fullmatch(r"\s*TOOL(\d+)\s*", name, flags=re.IGNORECASE)
    return int(match.group(1)) if match else 10**9


def _expected(card: ToolCard) -> tuple[float, float]:
    return (card.upper, card.lower)


def _competes(card: ToolCard, category: Category, kind: BiomarkerKind | None) -> bool:
    if card.category != category:
        return False
    return not (category == C.BIOMARKER_QUANTIFIER and kind is not None and card.kind != kind)


def performance_rank(
    tools: Iterable[ToolCard], record: Record, category: Category, kind: BiomarkerKind | None = None
) -> list[ToolCard]:
    """The tools of ``category`` (and, for biomarker quantifiers, ``kind``) that suit the
    record, best first: by upper bound, then lower bound, then tool number and name."""
    pool = [t for t in tools if _competes(t, category, kind) and suitable(t, record)]
    return sorted(pool, key=lambda t: (-t.upper, -t.lower, tool_number(t.name), t.name))


def rank_of(card: ToolCard, tools: Iterable[ToolCard], record: Record) -> tuple[int | None, int]:
    """(rank, number of suitable tools) of a card among the suitable tools of its category
    (and kind, for biomarker quantifiers). Rank 1 is the best; tools with equal bounds share
    a rank; an unsuitable card has rank None."""
    pool = performance_rank(tools, record, card.category, card.kind)
    if not suitable(card, record):
        return None, len(pool)
    better = sum(1 for t in pool if _expected(t) > _expected(card))
    return better + 1, len(pool)


class NeededStep(NamedTuple):
    """One call of a ground-truth chain: the category and, for biomarker quantifiers, the kind."""

    category: Category
    kind: BiomarkerKind | None = None


def steps_for_chain(chain: Sequence[Category]) -> list[NeededStep]:
    """The calls of a category chain with biomarker kinds filled in: with two quantifiers,
    the organ one then the anomaly one; with one, organ if the chain segments organs,
    else anomaly. Indicator evaluators of either kind serve (kind None)."""
    n_bq = sum(1 for c in chain if c == C.BIOMARKER_QUANTIFIER)
    single: BiomarkerKind = "organ" if C.ORGAN_SEGMENTOR in chain else "anomaly"
    steps: list[NeededStep] = []
    seen = 0
    for category in chain:
        category = Category(category)
        if category == C.BIOMARKER_QUANTIFIER:
            kind: BiomarkerKind = ("organ" if seen == 0 else "anomaly") if n_bq > 1 else single
            seen += 1
            steps.append(NeededStep(category, kind))
        else:
            steps.append(NeededStep(category))
    return steps


def task_steps(key: str) -> list[NeededStep]:
    """The ground-truth calls of a task (its chain with biomarker kinds)."""
    return steps_for_chain(task(key).chain)


# display ------------------------------------------------------------------------------

_ABILITY: dict[Category, str] = {
    C.ANATOMY_CLASSIFIER: "Determine the anatomy of the Image.",
    C.MODALITY_CLASSIFIER: "Determine the modality of the Image.",
    C.ORGAN_SEGMENTOR: "segment the organs",
    C.ANOMALY_DETECTOR: "determine the location and type of abnormality",
    C.DISEASE_DIAGNOSER: "diagnose the disease",
    C.DISEASE_INFERENCER: (
        "Infer the disease from the Image, the patient information and the organ and anomaly masks "
        "and labels."
    ),
    C.TREATMENT_RECOMMENDER: (
        "Recommend a treatment from the patient information, the radiology report and any other findings."
    ),
}
_LABEL_NOUN: dict[LabelField, str] = {
    "organ": "organs",
    "anomaly": "anomalies",
    "disease": "diseases",
    "organ_dim": "organ biomarkers",
    "anomaly_dim": "anomaly biomarkers",
    "indicator": "indicators",
}
_REPORT_TYPE_TEXT: dict[ReportType, str] = {
    "basic": "Basic",
    "text": "Text",
    "mask": "Mask",
    "text_mask": "Text and Mask",
}


def _scope(card: ToolCard) -> str:
    return " ".join(x for x in (card.anatomy, card.modality) if x)


def _ability(card: ToolCard) -> str:
    cat = card.category
    if cat in _SCOPED:
        lead = f"Given the {_scope(card)} Image" if not card.universal else "Given the modality and anatomy"
        text = f"{lead}, {_ABILITY[cat]}."
    elif cat == C.BIOMARKER_QUANTIFIER:
        text = f"Measure the {card.kind} biomarker of the Image from its {card.kind} mask and label."
    elif cat == C.INDICATOR_EVALUATOR:
        text = (
            f"From the patient information and an {card.kind} biomarker (object, dimension, quantity), "
            "name and evaluate the clinical indicator (a score or a grading)."
        )
    elif cat == C.REPORT_GENERATOR:
        lead = (
            f"Given the {_scope(card)} Image"
            if not card.universal
            else "Given the Image, its anatomy and modality"
        )
        extra = {
            "basic": "",
            "text": " and any other text information",
            "mask": " and organ/anomaly masks and labels",
            "text_mask": ", any other text information and organ/anomaly masks and labels",
        }[card.report_type or "text_mask"]
        text = f"{lead}{extra}, generate a radiology report."
    else:
        text = _ABILITY[cat]
    if card.labels is not None and card.label_field is not None:
        text += f" Only supports the {_LABEL_NOUN[card.label_field]}: {', '.join(card.labels)}."
    return text


def _property(card: ToolCard) -> str:
    title = card.category.title
    if card.category in (C.BIOMARKER_QUANTIFIER, C.INDICATOR_EVALUATOR) and card.kind:
        title = f"{card.kind.capitalize()} {title}"
    suffix = ""
    if card.category == C.REPORT_GENERATOR:
        suffix = f" with {_REPORT_TYPE_TEXT[card.report_type or 'text_mask']}"
    if card.universal:
        text = f"Universal {title}{suffix}"
    else:
        text = f"{title} only suitable for {_scope(card)} image{suffix}"
    if card.labels is not None:
        text += " (restricted labels)"
    if card.built:
        text += " (built on request)"
    return text


def describe(card: ToolCard) -> dict[str, Any]:
    """The card as the agent sees it (RadA-BenchPlat's tool-card fields)."""
    return {
        "Name": card.name,
        "Category": card.category.title,
        "Ability": _ability(card),
        "Property": _property(card),
        "Compulsory Input": list(card.compulsory),
        "Optional Input": list(card.optional),
        "Output": list(card.outputs),
        "Performance": f"Score from {card.lower:g} to {card.upper:g}, increases with optional inputs",
    }
