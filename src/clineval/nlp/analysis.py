"""One cached analysis per short text (a claim or an evidence span): its content terms with
their assertion statuses, quantities, dates, sides, frequencies and drugs.

Content terms are stems of non-stopword tokens, after synonym normalisation, minus cue
words ("denies", "possible"), discourse markers ("moreover"), unit words and numbers. A
number with a unit becomes one term standing for its normalised value ("q:mass:0.02" for
"20 mg"), so "20 mg" and "0.02 g" meet; a calendar date becomes "d:2021-03-03".

Each term has a weight: the specificity of its word in general English
(:mod:`clineval.nlp.specificity`), at least 0.6 for a clinical key term, at most 0.5 for a
generic clinical word ("continue", "levels"), and two fifths of that inside parentheses,
where notes put aliases ("permethrin (Elimite)"); quantities and dates weigh 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from clineval.nlp import vocabulary
from clineval.nlp.assertions import AssertionResult, Status, detect_assertions
from clineval.nlp.biomarkers import BiomarkerStatus, biomarker_statuses
from clineval.nlp.clinical import (
    DateMention,
    Quantity,
    SideMention,
    extract_dates,
    extract_frequencies,
    extract_quantities,
    extract_sides,
    is_drug,
)
from clineval.nlp.lexicon import (
    BIOMARKER_WORDS,
    BODY_SITES,
    DIAGNOSIS_SUFFIXES,
    DIAGNOSIS_WORDS,
    DRUG_CLASS,
    DRUG_ROLE,
    INFECTIONS,
    SYMPTOM_WORDS,
)
from clineval.nlp.specificity import DISCOURSE_MARKERS, specificity
from clineval.nlp.staging import StageMention, stage_mentions
from clineval.nlp.terms import is_stopword, normalize, stem, term_weight

__all__ = ["Analysis", "analyze", "is_key_term", "is_problem_term", "merge"]

_INFECTIONS = frozenset(stem(w) for w in INFECTIONS) | INFECTIONS
_UNIT_WORDS = frozenset(
    [
        "mg",
        "mcg",
        "g",
        "gm",
        "kg",
        "ml",
        "l",
        "cc",
        "mmhg",
        "bpm",
        "units",
        "unit",
        "iu",
        "percent",
        "lb",
        "lbs",
        "pounds",
        "degrees",
        "f",
        "c",
        "mm",
        "cm",
        "mmol",
        "meq",
        "dl",
        "mg/dl",
        "mmol/l",
        "tablet",
        "tablets",
        "tab",
        "tabs",
        "capsule",
        "capsules",
        "puff",
        "puffs",
        "drop",
        "drops",
        "hours",
        "hour",
        "hr",
        "hrs",
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
        "minutes",
        "minute",
        "min",
        "mins",
        "times",
        "x",
        "ago",
    ]
)
_KEY_WORDS = frozenset(
    stem(w) for w in (DIAGNOSIS_WORDS | SYMPTOM_WORDS | BIOMARKER_WORDS | BODY_SITES) if "_" not in w
) | frozenset(w for w in (DIAGNOSIS_WORDS | SYMPTOM_WORDS | BIOMARKER_WORDS) if "_" in w)
_EXTRA_KEYS = frozenset(
    {
        "npo",
        "prn",
        "allerg",
        "allergy",
        "pregnancy",
        "pregnant",
        "smok",
        "alcohol",
        "transplant",
        "surgery",
        "biopsy",
        "xray",
        "computed_tomography",
        "magnetic_resonance",
        "ultrasound",
        "electrocardiogram",
        "echocardiogram",
        "colonoscopy",
        "vaccin",
        "vaccination",
    }
)
_NOT_KEY = frozenset(
    stem(w)
    for w in (
        "level",
        "levels",
        "test",
        "value",
        "values",
        "count",
        "upper",
        "lower",
        "side",
        "positive",
        "symptom",
        "symptoms",
        "lab",
        "labs",
        "panel",
        "marker",
        "markers",
        # "-osis" words that name no disease
        "diagnosis",
        "diagnoses",
        "prognosis",
    )
)


def is_key_term(term: str) -> bool:
    """A term that carries the clinical point: a drug, problem, symptom, lab, body site,
    quantity or date (missing one keeps a claim from being fully supported)."""
    if term.startswith(("q:", "d:")):
        return True
    if term in _NOT_KEY:
        return False
    if term in _KEY_WORDS or term in _EXTRA_KEYS or term in DRUG_ROLE or is_drug(term):
        return True
    return len(term) > 5 and term.endswith(DIAGNOSIS_SUFFIXES)


_PROBLEMS = frozenset(stem(w) for w in (DIAGNOSIS_WORDS | SYMPTOM_WORDS) if "_" not in w) | frozenset(
    w for w in (DIAGNOSIS_WORDS | SYMPTOM_WORDS) if "_" in w
)


def is_problem_term(term: str) -> bool:
    """A diagnosis, finding or symptom term: what assertion status (negated, possible) is about."""
    return term in _PROBLEMS or (len(term) > 5 and term.endswith(DIAGNOSIS_SUFFIXES))


@dataclass(frozen=True)
class ConceptMention:
    """A name of the clinical vocabulary (:mod:`clineval.nlp.vocabulary`) in a text: a
    disease, finding, drug or body part, with the content terms it covers."""

    start: int
    end: int
    """Character offsets in the analysis' ``normalized`` text."""
    ids: tuple[str, ...]
    type: str
    terms: tuple[str, ...]
    surface: str


_CONCEPT_TYPES = frozenset({"disease", "phenotype", "drug", "anatomy"})
_ARTICLES = re.compile(r"(?<=\bof) (?:the|a|an)\b")


def concept_mentions(
    normalized: str, term_spans: dict[str, tuple[int, int]], original: str = ""
) -> tuple[ConceptMention, ...]:
    """The vocabulary's diseases, findings, drugs and body parts named in ``normalized``
    (longest match first), each with the content terms inside it; plus the abbreviations
    the vocabulary knows in capitals only ("GAD", "PE", "CBT"), found in ``original`` (the
    text before normalisation lower-cased it). Empty when the vocabulary file is missing."""
    # Articles inside a name ("the tail of the pancreas") are blanked, not removed, so that
    # offsets stay those of ``normalized``.
    blanked = _ARTICLES.sub(lambda m: " " * len(m.group()), normalized)
    try:
        found = [(m.start, m.end, m) for m in vocabulary.mentions(blanked)]
        taken = [(a, b) for a, b, _ in found]
        for m in vocabulary.mentions(original) if original else ():
            if any(c.islower() for c in m.surface):
                continue
            for hit in re.finditer(r"(?<!\w)" + re.escape(m.surface.lower()) + r"(?!\w)", normalized):
                a, b = hit.span()
                if not any(x < b and a < y for x, y in taken):
                    found.append((a, b, m))
                    taken.append((a, b))
    except vocabulary.VocabularyMissing:
        return ()
    out = []
    for a_, b_, m in sorted(found, key=lambda x: x[0]):
        if m.type not in _CONCEPT_TYPES:
            continue
        terms = tuple(t for t, (a, b) in term_spans.items() if a_ <= a and b <= b_)
        if terms:
            out.append(ConceptMention(a_, b_, tuple(m.concepts), m.type, terms, normalized[a_:b_]))
    return tuple(out)


@dataclass(frozen=True)
class Analysis:
    """What the matching rules need to know about one text."""

    text: str
    normalized: str
    terms: tuple[str, ...]
    """Distinct content terms in order (stems, quantity and date terms)."""
    weights: dict[str, float]
    status: dict[str, frozenset[Status]]
    """Assertion statuses per term (empty: plainly affirmed)."""
    quantities: tuple[Quantity, ...]
    dates: tuple[DateMention, ...]
    sides: tuple[SideMention, ...]
    frequencies: tuple[tuple[str, float, frozenset[str]], ...]
    drugs: frozenset[str]
    assertions: AssertionResult
    negation_head: dict[str, str] = field(default_factory=dict)
    """Negated term -> the stem of the first content word of its negation scope."""
    implied: frozenset[str] = frozenset()
    """Broader terms the text implies without saying them: a named drug implies
    "medication" and its role ("glipizide" -> "antidiabetic", which meets "diabetes")."""
    term_spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Character span in ``normalized`` of each term's first mention (for its embedding)."""
    surface: dict[str, str] = field(default_factory=dict)
    """The word (as normalised) behind each word term, e.g. "coughing" for "cough"."""
    parenthetical: frozenset[str] = frozenset()
    """Terms mentioned only inside parentheses (aliases: "permethrin (Elimite)")."""
    concepts: tuple[ConceptMention, ...] = ()
    """The clinical vocabulary's concepts named in the text (:func:`concept_mentions`)."""
    biomarkers: tuple[BiomarkerStatus, ...] = ()
    """Biomarker results with their status (:func:`clineval.nlp.biomarkers.biomarker_statuses`)."""
    stages: tuple[StageMention, ...] = ()
    """Stages, classes and grades (:func:`clineval.nlp.staging.stage_mentions`)."""

    def terms_between(self, start: int, end: int) -> tuple[str, ...]:
        """The content terms whose first mention lies inside ``[start, end)`` of ``normalized``."""
        return tuple(t for t, (a, b) in self.term_spans.items() if start <= a and b <= end)

    @property
    def key_terms(self) -> tuple[str, ...]:
        return tuple(t for t in self.terms if is_key_term(t))

    @property
    def total_weight(self) -> float:
        return sum(self.weights.values())

    def hedged(self) -> bool:
        return self.assertions.has("possible")


_SYSTEM_LABEL = re.compile(
    r"^(?:constitutional|general|heent|head|eyes|ears|ent|neck|cardiovascular|cardiac|heart|respiratory|pulmonary|lungs"
    r"|chest|gastrointestinal|gi|abdomen|abdominal|genitourinary|gu|musculoskeletal|msk|extremities|skin|integumentary"
    r"|neurological|neurologic|neuro|psychiatric|psych|endocrine|hematologic|heme|lymphatic|allergic|immunologic"
    r"|vitals|vital signs"
    # labels that file a statement by kind ("Diagnosis: NSTEMI", "Discharge medications: ...");
    # not allergies or family history, which change what the statement means
    r"|(?:(?:discharge|admission|admitting|primary|secondary|final|working|principal)\s+)?diagnos[ie]s"
    r"|assessment|impression|plan|(?:(?:discharge|current|home)\s+)?medications|procedures?|treatment"
    r"|problems?|problem list|chief complaint|reason for (?:admission|visit|referral)|indication"
    r"|follow[- ]up|disposition)\s*:\s*",
    re.IGNORECASE,
)


@lru_cache(maxsize=32768)
def analyze(text: str) -> Analysis:
    """The analysis of ``text`` (cached). A body-system label in front ("Neurological:
    denies dizziness") or a label of the statement's kind ("Diagnosis: NSTEMI") only files
    the statement and is left out of the terms."""
    text = text.strip()
    content = _SYSTEM_LABEL.sub("", text, count=1)
    normalized = normalize(content)
    assertions = detect_assertions(content)
    quantities = tuple(extract_quantities(normalized))
    dates = tuple(extract_dates(normalized))
    covered: list[tuple[int, int]] = [(q.start, q.start + len(q.text)) for q in quantities]
    covered += [(d.start, d.start + len(d.text)) for d in dates]
    cue_positions = assertions.cue_positions
    terms: list[str] = []
    weights: dict[str, float] = {}
    per_term: dict[str, list[frozenset[Status]]] = {}
    negation_head: dict[str, str] = {}
    term_spans: dict[str, tuple[int, int]] = {}
    surface: dict[str, str] = {}
    outside: set[str] = set()
    depth = 0
    for index, (token, statuses) in enumerate(zip(assertions.tokens, assertions.statuses, strict=True)):
        if token.kind == "punct":
            depth = depth + 1 if token.text == "(" else max(0, depth - 1) if token.text == ")" else depth
            continue
        if index in cue_positions:
            continue
        if any(a <= token.start < b for a, b in covered):
            continue
        if token.kind == "number":
            term = "n:" + token.text
        else:
            if is_stopword(token) or token.text in _UNIT_WORDS or token.text in DISCOURSE_MARKERS:
                continue
            if token.text == "old" and index and assertions.tokens[index - 1].text in _UNIT_WORDS:
                continue  # "6 months old", "a 3-week-old": an age, not "old" as in "an old infarct"
            term = token.stem
        per_term.setdefault(term, []).append(statuses)
        head = assertions.heads[index] if assertions.heads else -1
        if head >= 0 and term not in negation_head:
            negation_head[term] = assertions.tokens[head].stem
        weight = _weight(term, token.text) * (0.4 if depth else 1.0)
        if not depth:
            outside.add(term)
        if term not in weights:
            terms.append(term)
            weights[term] = weight
            term_spans[term] = (token.start, token.start + len(token.text))
            if token.kind == "word":
                surface[term] = token.text
        elif weight > weights[term]:
            weights[term] = weight  # also said outside parentheses
    for q in quantities:
        term = q.key()
        if term not in weights:
            terms.append(term)
            weights[term] = 1.0
            term_spans[term] = (q.start, q.start + len(q.text))
        per_term.setdefault(term, []).append(_status_at(assertions, q.start))
    for d in dates:
        term = f"d:{d.year or ''}-{d.month or ''}-{d.day or ''}"
        if term not in weights:
            terms.append(term)
            weights[term] = 1.0
            term_spans[term] = (d.start, d.start + len(d.text))
        per_term.setdefault(term, []).append(_status_at(assertions, d.start))
    status = {}
    for term, occurrences in per_term.items():
        # A term counts as negated/hedged only if every mention of it is.
        shared = frozenset.intersection(*occurrences) if occurrences else frozenset()
        status[term] = shared
    drugs = frozenset(
        t.text for t in assertions.tokens if t.kind == "word" and (t.text in DRUG_ROLE or is_drug(t.text))
    )
    implied = _implied(drugs)
    if any(term in _INFECTIONS for term in terms):
        implied |= {"infection"}
    return Analysis(
        text=text,
        normalized=normalized,
        terms=tuple(terms),
        weights=weights,
        status=status,
        quantities=quantities,
        dates=dates,
        sides=tuple(extract_sides(normalized)),
        frequencies=tuple(extract_frequencies(normalized)),
        drugs=drugs,
        assertions=assertions,
        negation_head=negation_head,
        implied=implied,
        term_spans=term_spans,
        surface=surface,
        parenthetical=frozenset(t for t in terms if t not in outside and not t.startswith(("q:", "d:"))),
        concepts=concept_mentions(normalized, term_spans, content),
        biomarkers=biomarker_statuses(normalized),
        stages=stage_mentions(normalized),
    )


def _weight(term: str, word: str) -> float:
    """A content term's weight (see the module docstring), before any parenthesis."""
    if term.startswith("n:"):
        return 1.0
    weight = specificity(word)
    if term_weight(term) < 1.0:
        weight = min(weight, 0.5)
    if is_key_term(term):
        weight = max(weight, 0.6)
    return weight


# What each drug role is for, in words a question or claim would use.
_ROLE_WORDS: dict[str, tuple[str, ...]] = {
    "antihypertensive": ("hypertension", "blood_pressure"),
    "diuretic": ("diuretic", "fluid"),
    "lipid": ("statin", "cholesterol", "lipid"),
    "anticoagulant": ("anticoagulant",),
    "antiplatelet": ("antiplatelet",),
    "antidiabetic": ("diabetes", "glucose"),
    "thyroid": ("thyroid",),
    "analgesic": ("pain", "analgesic"),
    "opioid": ("opioid", "pain"),
    "steroid": ("steroid",),
    "antibiotic": ("antibiotic", "infection"),
    "antiviral": ("antiviral",),
    "antifungal": ("antifungal",),
    "antidepressant": ("antidepressant", "depression"),
    "anxiolytic": ("anxiety",),
    "hypnotic": ("sleep",),
    "antiepileptic": ("seizure", "epilepsy"),
    "respiratory": ("inhaler", "asthma"),
    "antihistamine": ("antihistamine", "allergy"),
    "acid": ("acid", "reflux"),
}


def _implied(drugs: frozenset[str]) -> frozenset[str]:
    if not drugs:
        return frozenset()
    out = {"medication"}
    for drug in drugs:
        role = DRUG_ROLE.get(drug)
        if role:
            out.add(role)
            out.update(w if "_" in w else stem(w) for w in _ROLE_WORDS.get(role, ()))
        drug_class = DRUG_CLASS.get(drug)
        if drug_class:
            out.add(drug_class if "_" in drug_class else stem(drug_class))
    return frozenset(out)


def _status_at(assertions: AssertionResult, offset: int) -> frozenset[Status]:
    for token, statuses in zip(assertions.tokens, assertions.statuses, strict=True):
        if token.start >= offset:
            return statuses
    return frozenset()


def merge(first: Analysis, second: Analysis) -> Analysis:
    """One analysis for two texts read together (for a claim stated across two sentences)."""
    shift = len(first.normalized) + 1
    terms = list(first.terms) + [t for t in second.terms if t not in first.weights]
    weights = {**second.weights, **first.weights}
    status: dict[str, frozenset[Status]] = {}
    for term in terms:
        if term in first.status and term in second.status:
            status[term] = first.status[term] & second.status[term]
        else:
            status[term] = first.status.get(term, second.status.get(term, frozenset()))
    return Analysis(
        text=first.text + " " + second.text,
        normalized=first.normalized + " " + second.normalized,
        terms=tuple(terms),
        weights=weights,
        status=status,
        quantities=first.quantities + second.quantities,
        dates=first.dates + second.dates,
        sides=first.sides + second.sides,
        frequencies=first.frequencies + second.frequencies,
        drugs=first.drugs | second.drugs,
        assertions=first.assertions,
        negation_head={**second.negation_head, **first.negation_head},
        implied=first.implied | second.implied,
        concepts=first.concepts
        + tuple(replace(c, start=c.start + shift, end=c.end + shift) for c in second.concepts),
        biomarkers=first.biomarkers
        + tuple(replace(b, start=b.start + shift, end=b.end + shift) for b in second.biomarkers),
        stages=first.stages
        + tuple(replace(m, start=m.start + shift, end=m.end + shift) for m in second.stages),
    )
