"""Fact extraction offline: sentences -> atomic claims -> category and importance.

Categories come from word lists (:mod:`clineval.nlp.lexicon`): each claim scores for
diagnosis (problem words and suffixes such as -itis, -emia), treatment (drugs, drug
classes, doses, procedures), biomarker (labs, markers, vital signs with values), symptom
and demographics (age, sex); the highest score wins, ``other`` when nothing matches.
User categories are mapped onto these by name ("medications" -> treatment, "labs" ->
biomarker); a claim whose category has no counterpart goes to ``other`` if offered, else
to the last category.

Importance: ``high`` for affirmed diagnoses, treatments with a dose or frequency, values
of labs and vital signs, allergies and negated critical findings ("no pneumothorax");
``low`` for social, administrative and courtesy content without clinical terms;
``medium`` otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from clineval.judges.offline.conversation import classify_sentence
from clineval.judges.primitives import DEFAULT_CATEGORIES, Fact, Importance
from clineval.nlp.analysis import Analysis, analyze
from clineval.nlp.atomic import atomic_claims
from clineval.nlp.biomarkers import biomarker_statuses
from clineval.nlp.clinical import is_drug
from clineval.nlp.lexicon import (
    ALLERGY_WORDS,
    BIOMARKER_WORDS,
    CRITICAL_FINDINGS,
    DEMOGRAPHIC_WORDS,
    DIAGNOSIS_SUFFIXES,
    DIAGNOSIS_WORDS,
    DRUG_ROLE,
    SOCIAL_ADMIN_WORDS,
    SYMPTOM_WORDS,
    TREATMENT_WORDS,
)
from clineval.nlp.null_answers import null_answer
from clineval.nlp.sentences import split_claims, split_sentences_with_sections
from clineval.nlp.terms import stem

__all__ = ["categorize", "extract_facts", "importance", "map_categories"]

INTERNAL = ("demographics", "diagnosis", "treatment", "symptom", "biomarker", "other")

_ALIASES: dict[str, frozenset[str]] = {
    "demographics": frozenset(
        [
            "demographic",
            "demographics",
            "patient",
            "info",
            "information",
            "age",
            "sex",
            "gender",
            "social",
            "identity",
            "background",
            "personal",
        ]
    ),
    "diagnosis": frozenset(
        [
            "diagnosis",
            "diagnoses",
            "diagnostic",
            "condition",
            "conditions",
            "problem",
            "problems",
            "disease",
            "diseases",
            "finding",
            "findings",
            "impression",
            "assessment",
            "pathology",
            "comorbidity",
            "comorbidities",
            "disorder",
            "disorders",
            "history",
            "staging",
            "stage",
        ]
    ),
    "treatment": frozenset(
        [
            "treatment",
            "treatments",
            "medication",
            "medications",
            "drug",
            "drugs",
            "therapy",
            "therapies",
            "plan",
            "plans",
            "procedure",
            "procedures",
            "intervention",
            "interventions",
            "management",
            "prescription",
            "prescriptions",
            "surgery",
            "surgeries",
            "regimen",
            "medicine",
            "medicines",
            "recommendation",
            "recommendations",
            "advice",
            "instructions",
            "followup",
        ]
    ),
    "symptom": frozenset(
        ["symptom", "symptoms", "complaint", "complaints", "presentation", "sign", "signs", "clinical"]
    ),
    "biomarker": frozenset(
        [
            "biomarker",
            "biomarkers",
            "lab",
            "labs",
            "laboratory",
            "test",
            "tests",
            "result",
            "results",
            "measurement",
            "measurements",
            "vital",
            "vitals",
            "genomic",
            "genomics",
            "genetic",
            "genetics",
            "molecular",
            "marker",
            "markers",
            "imaging",
            "values",
            "value",
        ]
    ),
    "other": frozenset(["other", "others", "misc", "miscellaneous", "general"]),
}


def _stems(words: frozenset[str]) -> frozenset[str]:
    return frozenset(stem(w) for w in words if "_" not in w) | frozenset(w for w in words if "_" in w)


_DIAGNOSIS = _stems(DIAGNOSIS_WORDS)
_SYMPTOM = _stems(SYMPTOM_WORDS)
_BIOMARKER = _stems(BIOMARKER_WORDS)
_TREATMENT = _stems(TREATMENT_WORDS)
_DEMOGRAPHIC = _stems(DEMOGRAPHIC_WORDS)
_SOCIAL = _stems(SOCIAL_ADMIN_WORDS)
_ALLERGY = _stems(ALLERGY_WORDS)
_CRITICAL = _stems(CRITICAL_FINDINGS)
_PROCEDURE = re.compile(r"\w+(?:ectomy|otomy|ostomy|plasty|scopy|pexy|graphy)\b")
_LAB_DIMENSIONS = frozenset(
    {
        "conc_mgdl",
        "conc_gdl",
        "conc_mmol",
        "conc_ngml",
        "conc_pgml",
        "conc_ul",
        "percent",
        "pressure",
        "rate",
        "temperature",
        "temperature_c",
        "ratio",
        "count_ul",
        "mmol_per_mol",
        "gfr",
    }
)
_DOSE_DIMENSIONS = frozenset(
    {"mass", "units", "volume", "count_tab", "count_puff", "count_drop", "dose_per_kg"}
)


def map_categories(categories: Sequence[str]) -> tuple[dict[str, str], str]:
    """Internal category -> the user's category, and the fallback for the rest."""
    cleaned = [c.strip().lower() for c in categories if c and c.strip()] or list(DEFAULT_CATEGORIES)
    mapping: dict[str, str] = {}
    for internal in INTERNAL:
        if internal in cleaned:
            mapping[internal] = internal
    for user in cleaned:
        words = set(re.findall(r"[a-z]+", user))
        best, score = None, 0
        for internal, aliases in _ALIASES.items():
            hits = len(words & aliases)
            if hits > score:
                best, score = internal, hits
        if best is not None and best not in mapping:
            mapping[best] = user
    fallback = "other" if "other" in cleaned else cleaned[-1]
    return mapping, fallback


def _scores(a: Analysis) -> dict[str, float]:
    scores = dict.fromkeys(INTERNAL, 0.0)
    words = set(a.terms)
    for term in words:
        if term in _DIAGNOSIS or (len(term) > 5 and term.endswith(DIAGNOSIS_SUFFIXES)):
            scores["diagnosis"] += 2.0
        if term in _SYMPTOM:
            scores["symptom"] += 1.5
        if term in _BIOMARKER:
            scores["biomarker"] += 1.5
        if term in DRUG_ROLE or is_drug(term):
            scores["treatment"] += 2.0
        elif term in _TREATMENT:
            scores["treatment"] += 1.0
        if term in _DEMOGRAPHIC:
            scores["demographics"] += 1.5
    if _PROCEDURE.search(a.normalized):
        scores["treatment"] += 2.0
    # What the clinical vocabulary says a named concept is: a disease is a diagnosis (a
    # diabetes type is not demographics), a drug or drug class a treatment (an
    # anticoagulant is not a biomarker), a finding a symptom or a diagnosis.
    for mention in a.concepts:
        if mention.type == "disease" or any(_names_a_disease(i) for i in mention.ids):
            scores["diagnosis"] += 3.0
        elif mention.type == "drug":
            scores["treatment"] += 1.5
        elif mention.type == "phenotype":
            scores["symptom"] += 1.5
            scores["diagnosis"] += 1.0
    # A biomarker result ("ER positive", "EGFR exon 19 deletion detected") is a biomarker.
    if biomarker_statuses(a.normalized):
        scores["biomarker"] += 4.0
    for q in a.quantities:
        if q.dimension == "age":
            scores["demographics"] += 2.5
        elif q.dimension in _DOSE_DIMENSIONS:
            scores["treatment"] += 1.0
        elif q.dimension in _LAB_DIMENSIONS or (q.dimension == "number" and q.anchor & _BIOMARKER):
            scores["biomarker"] += 2.0
    return scores


def _names_a_disease(concept_id: str) -> bool:
    """A concept of a disease vocabulary (ICD-10-CM's chapter R holds symptoms and signs)."""
    return concept_id.startswith(("MONDO:", "DOID:")) or (
        concept_id.startswith("ICD10CM:") and not concept_id.startswith("ICD10CM:R")
    )


_PRIORITY = ("diagnosis", "treatment", "biomarker", "symptom", "demographics")


def categorize(text: str) -> str:
    """One of the internal categories for a claim."""
    scores = _scores(analyze(text))
    best = max(_PRIORITY, key=lambda c: (scores[c], -_PRIORITY.index(c)))
    return best if scores[best] > 0 else "other"


def importance(text: str, category: str) -> Importance:
    a = analyze(text)
    words = set(a.terms)
    affirmed = [t for t in words if not a.status.get(t)]
    if words & _ALLERGY or "allerg" in a.normalized or "no known drug allergies" in a.normalized:
        return "high"
    negated_critical = [t for t in words if t in _CRITICAL and "negated" in a.status.get(t, frozenset())]
    if negated_critical:
        return "high"
    if category == "diagnosis" and any(
        (t in _DIAGNOSIS or (len(t) > 5 and t.endswith(DIAGNOSIS_SUFFIXES)))
        and "hypothetical" not in a.status.get(t, ())
        and "family" not in a.status.get(t, ())
        and "negated" not in a.status.get(t, ())
        and "possible" not in a.status.get(t, ())
        for t in words
    ):
        return "high"
    has_drug = any(t in DRUG_ROLE or is_drug(t) for t in words)
    if has_drug and (any(q.dimension in _DOSE_DIMENSIONS for q in a.quantities) or a.frequencies):
        return "high"
    if any(
        q.dimension in _LAB_DIMENSIONS or (q.dimension == "number" and q.anchor & _BIOMARKER)
        for q in a.quantities
    ):
        return "high"
    if category == "biomarker" and (
        a.quantities or any(t.startswith("n:") for t in words) or biomarker_statuses(a.normalized)
    ):
        return "high"
    if not a.key_terms and (words & _SOCIAL or (category == "other" and affirmed and len(words) <= 3)):
        return "low"
    return "medium"


def extract_facts(text: str, categories: Sequence[str] = DEFAULT_CATEGORIES) -> list[Fact]:
    """Facts of ``text`` in order (see the module docstring)."""
    mapping, fallback = map_categories(categories)
    facts: list[Fact] = []
    seen: set[str] = set()
    for sentence in split_sentences_with_sections(text):
        null = null_answer(sentence.text)
        if null is not None:
            # "None.", "NKDA", "Not on any medications.": one fact saying there is nothing to
            # report; under a header ("ALLERGIES" / "None.") the fact names what is absent.
            claim = sentence.text
            if null.topic is None and sentence.section:
                claim = f"{sentence.section.strip().capitalize()}: {claim}"
            key = claim.lower()
            if key not in seen:
                seen.add(key)
                internal = categorize(claim)
                facts.append(
                    Fact(
                        text=claim,
                        category=mapping.get(internal, fallback),
                        importance=importance(claim, internal),
                    )
                )
            continue
        if classify_sentence(sentence.text) != "informative":
            continue
        for claim in (c for whole in split_claims(sentence.text) for c in atomic_claims(whole)):
            key = claim.lower()
            if key in seen or classify_sentence(claim) != "informative":
                continue
            analysis = analyze(claim)
            if not analysis.terms:
                continue
            seen.add(key)
            internal = categorize(claim)
            facts.append(
                Fact(
                    text=claim,
                    category=mapping.get(internal, fallback),
                    importance=importance(claim, internal),
                )
            )
    return facts
