"""Is a claim entailed by an evidence text? The offline heuristic behind ``check_facts``.

For each claim:

1. **Find spans.** The evidence is split into sentences and, where a sentence holds
   several claims, into clauses too ("units"). The claim is compared with the units most
   similar to it (MiniLM cosine) and with those sharing most words; when no single span
   supports the claim outright, pairs of the best four (from different sentences) are
   tried together, a span that opens with a pronoun is tried with the sentence before
   it, and finally the evidence as a whole (a claim the text states piece by piece).
2. **Match every content term.** A term is matched when the span has the same word, a
   stem variant, a synonym or an abbreviation of it, or a narrower term ("medication" by
   "metformin"). *Clinical* terms (drugs, diagnoses and symptoms, organisms, body sites,
   labs, numbers, dates, qualifiers such as "type 2", "limited", "benign", and rare words)
   must be matched that way. Other words may also be matched by a close contextual
   embedding neighbour ("seek medical attention" / "consult a doctor"; see
   :mod:`.alignment`), with credit growing with the cosine.
3. **Support** is the weighted share of the claim's content that the span matches, each
   term weighted by its specificity (a rare word says more than a common one; see
   :mod:`clineval.nlp.specificity`).
4. **Look for a conflict** with each span that is about the same thing (it covers most of
   the claim's other words and is similar enough): opposite polarity of the shared key
   terms ("no pneumothorax" / "small left pneumothorax"), another value for the same
   quantity ("5 mg" / "50 mg", "BP 120/80" / "140/90"), another side for the same body
   site, another drug for the same role, another date, another dosing frequency, another
   person ("mother had ..."), or a *substitution*: the claim names a clinical term the span
   does not, where the span names another of the same kind in the same frame ("culture
   grew *E. coli*" / "culture grew *Klebsiella*", "*type 1*" / "*type 2* diabetes",
   "*limited*" / "*diffuse*" sclerosis, "normal heart size" / "enlarged heart"). A conflict
   gives ``not_entailed``/``incorrect``, unless another span supports the claim outright.
5. **Decide.** Enough support with every clinical term matched is ``entailed``; the main
   concept with parts absent is ``partial``/``missing``; the same content hedged on one
   side only ("possible pneumonia") is ``partial``/``ambiguous``; anything else
   ``not_entailed``/``missing``.

Every verdict carries its graded ``support`` (0 for a contradicted claim), which metrics
use as the credit of a partly supported claim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from clineval.judges.offline.alignment import View, build_views, soft_scores, stack
from clineval.judges.offline.decision import DecisionModel, Signals
from clineval.judges.offline.thresholds import DEFAULT_THRESHOLDS, Thresholds
from clineval.judges.primitives import Verdict
from clineval.nlp import vocabulary
from clineval.nlp.analysis import Analysis, ConceptMention, is_key_term, is_problem_term, merge
from clineval.nlp.assertions import Status
from clineval.nlp.biomarkers import status_agreements, status_conflicts
from clineval.nlp.clinical import DateMention, drug_role, is_drug
from clineval.nlp.embeddings import FloatArray, SentenceEncoder, combine
from clineval.nlp.lexicon import (
    ALLERGY_WORDS,
    BODY_SITES,
    CARE_ROLES,
    CONTRAST_SETS,
    DRUG_CLASS,
    FINDINGS,
    GENERIC_ABNORMALITY,
    NORMAL_WORDS,
    ORGAN_WORDS,
    ORGANISMS,
    PATHOGEN_CLASSES,
    RELATION_WORDS,
)
from clineval.nlp.sentences import split_claims, split_sentences_with_sections
from clineval.nlp.specificity import specificity
from clineval.nlp.staging import stage_relations
from clineval.nlp.terms import stem, term_covers, terms_match

__all__ = ["EvidenceUnit", "check_claims", "evidence_units", "is_strict_term"]

# "denies any other injuries", "no new lesions", "do not take a double dose": a negation
# about further instances, which does not contradict the instance the other text mentions.
_RESTRICTED_NEGATION = re.compile(
    r"\b(?:no|not|denies|denied|without|negative\s+for)\s+(?:any\s+)?(?:other|additional|further|new|more|recent)\b"
)
_EXTRA_DOSE_NEGATION = re.compile(
    r"\b(?:no|not|never)\s+(?:\w+\s+){0,2}(?P<q>double|extra|additional|second)\s+(?:dose|doses|dosing|tablet|pill)"
)


def _restricted_negation(claim: Analysis, span: Analysis) -> bool:
    """A negation about further instances in either text (the doses of "do not take a
    double dose" are not denied unless the other text speaks of a double dose too)."""
    if _RESTRICTED_NEGATION.search(claim.normalized + " | " + span.normalized):
        return True
    for one, other in ((claim, span), (span, claim)):
        found = _EXTRA_DOSE_NEGATION.search(one.normalized)
        if found and found.group("q") not in other.normalized:
            return True
    return False


_EXAMPLES = re.compile(
    r"\b(?:include|includes|including|such as|for example|e\.g|options?|examples?|alternatives?)\b"
)
_PRONOUN_START = re.compile(
    r"^(?:it|its|they|their|them|this|these|that|those|he|she|his|her|such|both|the\s+(?:drug|medication|medicine|condition"
    r"|disease|treatment|infection|procedure|test|patient))\b",
    re.IGNORECASE,
)

_ORGANISM_STEMS = frozenset(stem(w) for w in ORGANISMS) | ORGANISMS
_PATHOGEN_CLASS_STEMS = frozenset(stem(w) for w in PATHOGEN_CLASSES) | PATHOGEN_CLASSES
_RELATION_STEMS = frozenset(stem(w) for w in RELATION_WORDS) | RELATION_WORDS
_CARE_ROLES = frozenset(stem(w) for w in CARE_ROLES) | CARE_ROLES
_ALLERGY = frozenset(stem(w) for w in ALLERGY_WORDS) | ALLERGY_WORDS
_ALLERGY_WORD = re.compile(r"\b(?:" + "|".join(sorted(ALLERGY_WORDS)) + r")\b", re.IGNORECASE)
_SITES = frozenset(stem(w) for w in BODY_SITES if w not in ("upper", "lower", "side")) | (
    BODY_SITES - {"upper", "lower", "side"}
)
_CONTRAST_OF: dict[str, frozenset[str]] = {}
_CLASSES_OF: dict[str, set[tuple[int, int]]] = {}
for _g, _group in enumerate(CONTRAST_SETS):
    _members: set[str] = set()
    for _v, _value in enumerate(_group):
        _words_of_value = {w for v in _value.split("/") for w in (v, stem(v))}
        for _word in _words_of_value:
            _CLASSES_OF.setdefault(_word, set()).add((_g, _v))
        _members |= _words_of_value
    for _word in _members:
        _CONTRAST_OF[_word] = _CONTRAST_OF.get(_word, frozenset()) | frozenset(_members)


def _same_class(a: str, b: str) -> bool:
    """Two qualifiers that say the same ("decreased", "reduced")."""
    return bool(_CLASSES_OF.get(a, set()) & _CLASSES_OF.get(b, set()))


@dataclass(frozen=True)
class EvidenceUnit:
    text: str
    """The string compared (a sentence or a clause of one)."""
    quote: str
    """Words quoted from the evidence for it."""
    sentence: int


def evidence_units(evidence: str) -> list[EvidenceUnit]:
    """Sentences of the evidence and, for sentences with several claims, their clauses."""
    units: list[EvidenceUnit] = []
    seen: set[str] = set()
    for index, item in enumerate(split_sentences_with_sections(evidence)):
        sentence = item.text
        if sentence not in seen:
            # Under an allergies header the header says what the line is ("ALLERGIES:
            # Penicillin (hives)"): the unit is read with it.
            text = sentence
            if _ALLERGY & set(re.findall(r"[a-z]+", item.section.lower())) and not _ALLERGY_WORD.search(
                sentence
            ):
                text = f"{item.section.strip().rstrip(':').capitalize()}: {sentence}"
            units.append(EvidenceUnit(text, sentence, index))
            seen.add(sentence)
        claims = split_claims(sentence)
        if len(claims) > 1:
            lowered = sentence.lower()
            for claim in claims:
                if claim in seen:
                    continue
                seen.add(claim)
                core = claim.rstrip(".").lower()
                units.append(EvidenceUnit(claim, claim.rstrip(".") if core in lowered else sentence, index))
    return units


# --- term classes ----------------------------------------------------------------------------


def _kind(term: str) -> str | None:
    """The class of a clinical term that a substitution must respect, or ``None``."""
    if term.startswith(("q:", "d:", "n:")):
        return None
    if term in _ORGANISM_STEMS or ("_" in term and term.split("_", 1)[0] in _ORGANISM_STEMS):
        return "organism"
    if drug_role(term) or is_drug(term):
        return "drug"
    if term in _CONTRAST_OF:
        return "qualifier"
    if is_problem_term(term) or ("_" in term and is_key_term(term)):
        return "problem"
    if term in _SITES:
        return "site"
    return None


def is_strict_term(term: str, analysis: Analysis, t: Thresholds = DEFAULT_THRESHOLDS) -> bool:
    """A term the evidence must state in the same words, a synonym or an abbreviation: a
    clinical term (drugs, problems, symptoms, labs, body sites, organisms, numbers, dates)
    or a rare word. Soft (embedding) matches never count for these. An alias given only in
    parentheses ("permethrin (Elimite)") is not strict."""
    if term in analysis.parenthetical:
        return False
    if term.startswith(("q:", "d:", "n:")) or "_" in term:
        return True
    if is_key_term(term) or term in _ORGANISM_STEMS or term in _PATHOGEN_CLASS_STEMS:
        return True
    word = analysis.surface.get(term, term)
    return specificity(word) >= t.strict_specificity


_NEVER_SOFT = frozenset(
    re.findall(
        r"\w+",
        """left right bilateral bilaterally unilateral both either neither none no not never without
        positive negative normal abnormal increase increased decrease decreased high low""",
    )
)


def _softly(term: str) -> bool:
    """Whether a (non-strict) term may be matched by a contextual neighbour: never a side,
    a polarity word or an exclusive qualifier, whose neighbours are their opposites."""
    return term not in _CONTRAST_OF and term not in _NEVER_SOFT and stem(term) not in _NEVER_SOFT


# --- comparing one claim with one span ----------------------------------------------------

Polarity = str  # affirmed | negated | uncertain | hypothetical | family | resolved


def _polarity(statuses: frozenset[Status]) -> Polarity:
    if "family" in statuses:
        # "no family history of colon cancer" denies what "a family history of" it states
        return "family negated" if statuses & {"negated", "advice"} else "family"
    if "hypothetical" in statuses:
        return "hypothetical"
    if "possible" in statuses:
        return "uncertain"
    if "advice" in statuses:
        return "advised against"
    if "negated" in statuses:
        return "negated"
    if "resolved" in statuses:
        return "resolved"
    return "affirmed"


def _polarity_of(a: Analysis, term: str) -> Polarity:
    """The polarity of ``term`` in ``a`` (affirmed when ``a`` has no status for it)."""
    return _polarity(a.status.get(term, frozenset()))


def _is_drug(a: Analysis, term: str) -> bool:
    """A drug or drug class of ``a``."""
    return bool(drug_role(term)) or term in a.drugs


@dataclass
class Comparison:
    """How one claim compares with one span (a unit, two units together, or the whole
    evidence)."""

    quote: str
    similarity: float
    coverage: float = 0.0
    """Weighted share of the claim's terms matched lexically (words, synonyms, values)."""
    support: float = 0.0
    """Weighted share of the claim's content supported: lexical matches, plus soft
    matches of non-clinical words."""
    rest_coverage: float = 0.0
    matched: dict[str, str] = field(default_factory=dict)
    """claim term -> the span term that matched it."""
    soft: dict[str, float] = field(default_factory=dict)
    """claim term (not matched lexically, not clinical) -> credit of its best soft match."""
    missing: list[str] = field(default_factory=list)
    missing_keys: list[str] = field(default_factory=list)
    strict_missing: list[str] = field(default_factory=list)
    """Clinical or rare terms of the claim the span does not state."""
    conflict: str | None = None
    """Which conflict check fired, with the detail, e.g. ``numbers: 5 mg vs 50 mg``."""
    conflict_partial: bool = False
    """A weaker conflict (one side vs both sides) that leaves the claim partly supported."""
    hedge: str | None = None
    """An assertion difference short of a contradiction (hedged, hypothetical, resolved)."""
    hedge_polarity: tuple[str, str] | None = None
    graded: float = 0.0
    """The support, plus close-in-meaning credit for clinical terms the span does not
    state: the credit of a ``partial`` verdict (never the label)."""
    result_terms: set[str] = field(default_factory=set)
    """Terms of the claim's biomarker results and stages: their polarity is the result's
    status ("no KRAS mutation" is KRAS wild-type), compared by the result checks."""
    single: bool = True
    whole: bool = False
    """Compared with the whole evidence rather than one or two spans."""


def _match_term(term: str, span: Analysis) -> str | None:
    if term in span.weights:
        return term
    if term.startswith(("q:", "n:", "d:")):
        return None
    for other in span.terms:
        if not other.startswith(("q:", "n:", "d:")) and term_covers(term, other):
            return other
    # A general word is covered by a specific one: "medication" by "metformin".
    for other in span.implied:
        if term_covers(term, other):
            return other
    # A qualifier by one that says the same ("reduced", "decreased").
    if term in _CLASSES_OF:
        for other in span.terms:
            if _same_class(term, other):
                return other
    return None


def _quantity_matches(claim: Analysis, span: Analysis) -> dict[str, str]:
    out: dict[str, str] = {}
    for q in claim.quantities:
        for other in span.quantities:
            if q.comparable(other) and q.same_value(other):
                out[q.key()] = other.key()
                break
        else:
            # A bare number in the span ("A1c 8") meets "8%"; and "n:" terms in the span.
            for term in span.terms:
                if (
                    term.startswith("n:")
                    and len(q.raw) == 1
                    and abs(float(term[2:].split("/")[0]) - q.raw[0]) < 1e-9
                ):
                    out[q.key()] = term
                    break
    return out


def _date_term(d: DateMention) -> str:
    return f"d:{d.year or ''}-{d.month or ''}-{d.day or ''}"


def _soft_credit(cosine: float, t: Thresholds) -> float:
    low, high = t.soft_low, t.soft_high
    return min(1.0, max(0.0, (cosine - low) / (high - low)))


def _compare(
    claim: View,
    span: Analysis,
    matrix: FloatArray,
    similarity: float,
    quote: str,
    t: Thresholds,
    *,
    conflicts: bool = True,
    polarity: bool = False,
) -> Comparison:
    a = claim.analysis
    comp = Comparison(quote=quote, similarity=similarity)
    quantity_hits = _quantity_matches(a, span)
    for term in a.terms:
        hit: str | None
        if term.startswith("q:"):
            hit = quantity_hits.get(term)
        elif term.startswith("n:"):
            hit = (
                term
                if term in span.weights
                else next(
                    (q.key() for q in span.quantities if len(q.raw) == 1 and f"n:{q.raw[0]:g}" == term), None
                )
            )
        elif term.startswith("d:"):
            hit = next((_date_term(d) for d in span.dates if _date_term(d) == term), None)
            if hit is None:
                mine = next((d for d in a.dates if _date_term(d) == term), None)
                if mine is not None and any(
                    not mine.conflicts(d) and _shares_date_part(mine, d) for d in span.dates
                ):
                    hit = term
        else:
            hit = _match_term(term, span)
        if hit is None:
            comp.missing.append(term)
            if is_key_term(term):
                comp.missing_keys.append(term)
            if is_strict_term(term, a, t):
                comp.strict_missing.append(term)
        else:
            comp.matched[term] = hit
    # A disease, finding, drug or body part of the clinical vocabulary is stated when the
    # span names the same concept in other words ("heart attack" / "myocardial infarction",
    # a brand for its generic) or a narrower one ("type 2 diabetes" states "diabetes").
    # A biomarker result or a stage stated in other words ("KRAS wild-type" / "no KRAS mutation
    # detected", "T2N0M0" / "T2, no regional lymph node metastasis and no distant metastasis",
    # "NYHA class III" / "New York Heart Association functional class 3").
    for start, end in _result_spans(a):
        comp.result_terms.update(a.terms_between(start, end))
    # "The tumor is HER2 negative": the negation is the marker's status, not the tumor's.
    if _negated_only_by_results(a):
        comp.result_terms.update(x for x in a.terms if "negated" in a.status.get(x, frozenset()))
    span_by_results = _negated_only_by_results(span)
    for (start, end), hit in _results_stated(a, span).items():
        _stated(comp, a.terms_between(start, end), hit)
    for mention, hit in _concepts_stated(a, span).items():
        _stated(comp, mention.terms, hit)
    if span_by_results:
        comp.result_terms.update(
            x for x, hit in comp.matched.items() if "negated" in span.status.get(hit, frozenset())
        )
    # An exclusive qualifier the span does not state, where the span states its opposite
    # ("continued" / "held", "lower" / "raise"), is missing as a clinical term is: never made
    # up by other words, even when the span is too far from the claim for a conflict.
    for term in comp.missing:
        rivals = _CONTRAST_OF.get(term)
        if (
            rivals
            and term not in comp.strict_missing
            and any(other in rivals and not _same_class(term, other) for other in span.terms)
        ):
            comp.strict_missing.append(term)
    total = a.total_weight
    got = sum(a.weights[t_] for t_ in comp.matched)
    comp.coverage = min(1.0, got / total) if total else 0.0
    soft_terms = [term for term in comp.missing if term not in comp.strict_missing and _softly(term)]
    if soft_terms:
        comp.soft = {
            term: _soft_credit(cos, t) for term, cos in soft_scores(claim, soft_terms, matrix).items()
        }
    credit = got + sum(a.weights[term] * value for term, value in comp.soft.items())
    comp.support = min(1.0, credit / total) if total else 0.0
    comp.graded = comp.support
    if comp.strict_missing and total:
        # The grade of a partly supported claim: a clinical term the span does not state
        # but names something close to ("proctitis" / "rectal sores") earns credit by its
        # nearest contextual neighbour, as other words do. Only the grade: the term is
        # still missing, so the claim is never entailed by it.
        words = [x for x in comp.strict_missing if not x.startswith(("q:", "d:", "n:")) and _softly(x)]
        near = soft_scores(claim, words, matrix)
        extra = sum(a.weights[term] * _soft_credit(cos, t) for term, cos in near.items())
        comp.graded = min(1.0, (credit + extra) / total)
    if conflicts:
        _check_conflicts(a, span, comp, t)
    elif polarity:
        # Two or more sentences read together: only what does not need one frame, the
        # polarity of shared problems and drugs (a term counts negated there only when every
        # mention of it is) and hedging.
        shared = [
            term
            for term in comp.matched
            if (is_problem_term(term) or _is_drug(a, term)) and term not in comp.result_terms
        ]
        generic = not shared
        if generic:
            shared = [
                term
                for term in comp.matched
                if not term.startswith(("q:", "d:", "n:")) and term not in comp.result_terms
            ]
        if shared:
            _polarity_conflict(a, span, comp, shared, generic, t)
    if (conflicts or polarity) and comp.conflict is None and comp.hedge is None:
        _check_assertion(a, span, comp)
    if (conflicts or polarity) and comp.conflict is None and comp.hedge is None:
        _check_advice_against(a, span, comp)
    return comp


def _stated(comp: Comparison, terms: Sequence[str], hit: str) -> None:
    """The span states ``terms`` of the claim (as ``hit``): no longer missing."""
    for term in terms:
        if term in comp.missing:
            comp.missing.remove(term)
            for lst in (comp.missing_keys, comp.strict_missing):
                if term in lst:
                    lst.remove(term)
            comp.matched[term] = hit


def _negated_only_by_results(a: Analysis) -> bool:
    """Every negation in the text is a biomarker's status or a stage ("HER2 negative", "no
    KRAS mutation detected", "no distant metastasis" = M0), not a denied finding."""
    results = _result_spans(a)
    if not results:
        return False
    cues = [c for c in a.assertions.cues if "negated" in c.statuses]
    starts = [a.assertions.tokens[c.first].start for c in cues]
    return bool(starts) and all(any(start <= x < end for start, end in results) for x in starts)


def _result_spans(a: Analysis) -> list[tuple[int, int]]:
    """Where the text gives a biomarker result or a stage."""
    return [(b.start, b.end) for b in a.biomarkers] + [(m.start, m.end) for m in a.stages]


def _results_stated(claim: Analysis, span: Analysis) -> dict[tuple[int, int], str]:
    """The claim's biomarker results and stages the span states (in other words or not),
    by their character span in the claim, each with a span term that says it (or a
    marker term for the span's own phrase)."""
    out: dict[tuple[int, int], str] = {}
    for mine, theirs in status_agreements(claim.biomarkers, span.biomarkers):
        terms = span.terms_between(theirs.start, theirs.end)
        out[(mine.start, mine.end)] = terms[0] if terms else f"biomarker:{theirs.marker}"
    for relation in stage_relations(claim.stages, span.stages):
        if relation.relation == "agree":
            terms = span.terms_between(relation.evidence.start, relation.evidence.end)
            out[(relation.claim.start, relation.claim.end)] = (
                terms[0] if terms else f"stage:{relation.evidence.system}"
            )
    return out


def _check_results(claim: Analysis, span: Analysis, comp: Comparison, t: Thresholds) -> None:
    """A biomarker with the opposite status ("EGFR wild-type" / "EGFR exon 19 deletion
    detected", "microsatellite stable" / "MSI-H") or another stage, class or grade of the
    same system ("CKD 3b" / "CKD 3a", "Gleason 3+4" / "4+3", "N0" / "N1") in a span about
    the same thing."""
    for mine, theirs in status_conflicts(claim.biomarkers, span.biomarkers):
        # The marker names the thing: a span as close as a conflict needs is about it.
        if comp.similarity >= t.conflict_similarity:
            comp.conflict = (
                f"biomarker status: '{claim.normalized[mine.start : mine.end]}' in the claim, "
                f"'{span.normalized[theirs.start : theirs.end]}' in the evidence"
            )
            return
    for relation in stage_relations(claim.stages, span.stages):
        if relation.relation != "conflict":
            continue
        ours, other = relation.claim, relation.evidence
        exclude = set(claim.terms_between(ours.start, ours.end)) | set(
            span.terms_between(other.start, other.end)
        )
        if _about_same(claim, comp, exclude, t, anchored=True):
            comp.conflict = (
                f"stage: '{claim.normalized[ours.start : ours.end]}' in the claim, "
                f"'{span.normalized[other.start : other.end]}' in the evidence"
            )
            return


def _concepts_stated(claim: Analysis, span: Analysis) -> dict[ConceptMention, str]:
    """The claim's vocabulary concepts the span states as the same concept or a narrower one,
    each with a span term that names it."""
    out: dict[ConceptMention, str] = {}
    for mine in claim.concepts:
        for theirs in span.concepts:
            if vocabulary.relation(theirs.ids, mine.ids) in ("same", "narrower"):
                out[mine] = theirs.terms[0]
                break
    return out


_KIND_OF_CONCEPT = {"disease": "diagnosis", "phenotype": "diagnosis", "drug": "drug", "anatomy": "body site"}


def _check_concept_substitution(claim: Analysis, span: Analysis, comp: Comparison, t: Thresholds) -> None:
    """The claim names a disease, finding, drug or body part where the span, about the same
    thing, names another of its kind that the vocabulary files beside it, under the same
    parent: type 1 / type 2 diabetes mellitus, ischaemic / haemorrhagic stroke, upper /
    lower lobe, penicillin / cephalosporin. Only one such rival (two or more: the claim's
    item is missing from a list, not replaced); a body part only inside a finding or
    diagnosis; not in general medical knowledge, where another item adds to a list."""
    if not claim.concepts or not span.concepts:
        return
    stated = _concepts_stated(claim, span)
    general = _generic(claim) or _generic(span)
    has_problem = any(c.type in ("disease", "phenotype") for c in claim.concepts) or any(
        is_problem_term(x) or _kind(x) == "problem" for x in claim.terms
    )
    used = set(comp.matched.values())
    for mine in claim.concepts:
        if mine in stated or all(term in comp.matched for term in mine.terms):
            continue
        if _polarity_of(claim, mine.terms[0]) != "affirmed":
            continue
        kind = _KIND_OF_CONCEPT[mine.type]
        if kind == "body site" and not (has_problem or _DIAGNOSTIC.search(claim.normalized)):
            continue
        if general and kind != "body site":
            continue
        rivals = [
            theirs
            for theirs in span.concepts
            if _KIND_OF_CONCEPT[theirs.type] == kind
            and not all(term in used for term in theirs.terms)
            and _polarity_of(span, theirs.terms[0]) == "affirmed"
            and vocabulary.relation(mine.ids, theirs.ids) == "sibling"
            and not any(vocabulary.relation(theirs.ids, c.ids) == "same" for c in claim.concepts if c != mine)
        ]
        if len({r.ids for r in rivals}) != 1:
            continue
        exclude = set(mine.terms) | set(rivals[0].terms)
        if _about_same(claim, comp, exclude, t) and (
            (comp.rest_coverage >= t.substitution_coverage and comp.similarity >= t.substitution_similarity)
            or comp.rest_coverage >= 0.999
        ):
            comp.conflict = (
                f"substitution ({kind}): '{mine.surface.replace('_', ' ')}' in the claim, "
                f"'{rivals[0].surface.replace('_', ' ')}' in the evidence "
                "(two of one kind in the clinical vocabulary)"
            )
            return


def _check_advice_against(claim: Analysis, span: Analysis, comp: Comparison) -> None:
    """A drug one text advises against and the other advises or allows ("ibuprofen is safe
    in pregnancy" / "avoid ibuprofen in the third trimester of pregnancy"): not supported,
    though not a contradiction when the advice against is about more than the claim says."""
    for mine, theirs in comp.matched.items():
        if not (_is_drug(claim, mine) or _is_drug(span, theirs)):
            continue
        pair = (
            _polarity_of(claim, mine),
            _polarity_of(span, theirs),
        )
        if set(pair) != {"affirmed", "advised against"}:
            continue
        advising = claim if pair[0] == "affirmed" else span
        if _ADVISING.search(advising.normalized):
            comp.hedge = "one text advises against what the other advises or allows"
            comp.hedge_polarity = pair
            return


def _shares_date_part(a: DateMention, b: DateMention) -> bool:
    return any(x is not None and x == y for x, y in ((a.year, b.year), (a.month, b.month), (a.day, b.day)))


def _rest_coverage(claim: Analysis, comp: Comparison, exclude: set[str]) -> float:
    """Coverage of the claim's terms other than ``exclude`` (the detail in conflict)."""
    total = sum(w for term, w in claim.weights.items() if term not in exclude)
    if total <= 0:
        return 0.0  # nothing besides the detail itself: "same thing" cannot be shown
    got = sum(claim.weights[term] for term in comp.matched if term not in exclude)
    got += sum(claim.weights[term] * v for term, v in comp.soft.items() if term not in exclude)
    return got / total


def _about_same(
    claim: Analysis, comp: Comparison, exclude: set[str], t: Thresholds, *, anchored: bool = False
) -> bool:
    """The span is about what the claim is about, apart from the detail in ``exclude``.
    ``anchored``: the detail's own anchor already names the same thing ("age", "blood
    pressure", "lisinopril 20 mg"), which is enough when the claim has no other words."""
    total = sum(w for term, w in claim.weights.items() if term not in exclude)
    if total <= 0:
        return anchored and comp.similarity >= t.conflict_similarity
    rest = _rest_coverage(claim, comp, exclude)
    comp.rest_coverage = rest
    return rest > t.conflict_coverage and comp.similarity >= t.conflict_similarity


def _anchors_meet(a: frozenset[str], b: frozenset[str]) -> bool:
    return any(terms_match(x, y) for x in a for y in b)


def _check_conflicts(claim: Analysis, span: Analysis, comp: Comparison, t: Thresholds) -> None:
    _check_results(claim, span, comp, t)
    if comp.conflict is not None:
        return
    # Numbers: the same quantity (dimension and anchor) with another value.
    for q in claim.quantities:
        if q.key() in comp.matched:
            continue
        rivals = [o for o in span.quantities if q.comparable(o) and _anchors_meet(q.anchor, o.anchor)]
        if not rivals and q.dimension in ("age", "pressure"):
            rivals = [o for o in span.quantities if o.dimension == q.dimension]
        # A limit is compared with limits of its kind only, and only an upper one ("up to 8 g"
        # / "no more than 4 g"): "more than 72 hours" and "more than 24 hours" are thresholds
        # of different things as often as not, and a limit is not a value.
        rivals = [o for o in rivals if o.bound == q.bound and q.bound in (None, "upper")]
        if rivals and not any(q.same_value(o) for o in rivals):
            exclude = {o.key() for o in claim.quantities} | {x for x in claim.terms if x.startswith("n:")}
            if _about_same(claim, comp, exclude, t, anchored=True):
                comp.conflict = f"numbers: '{q.text}' in the claim, '{rivals[0].text}' in the evidence"
                return
    # Dosing frequency for the same drug.
    for name, per_day, anchor in claim.frequencies:
        if per_day < 0:
            continue
        other_frequencies = [f for f in span.frequencies if f[1] >= 0 and _anchors_meet(anchor, f[2])]
        differs = bool(other_frequencies) and not any(abs(f[1] - per_day) < 1e-9 for f in other_frequencies)
        if differs and _about_same(claim, comp, {name, other_frequencies[0][0]}, t):
            comp.conflict = (
                f"frequency: '{name.replace('_', ' ')}' in the claim, "
                f"'{other_frequencies[0][0].replace('_', ' ')}' in the evidence"
            )
            return
    # Laterality: the same body site on another side.
    for mention in claim.sides:
        same_site = [s for s in span.sides if mention.same_site(s)]
        if not same_site or any(s.side == mention.side for s in same_site):
            continue
        sides = {s.side for s in same_site}
        if _about_same(claim, comp, {"left", "right", "bilateral", "bilaterally"}, t):
            if mention.side == "bilateral" or sides == {"bilateral"}:
                if mention.side == "bilateral":
                    comp.conflict = (
                        f"laterality: 'bilateral {mention.site}' in the claim, one side in the evidence"
                    )
                    comp.conflict_partial = True
                    return
                continue  # one side claimed, both sides in the evidence: consistent
            comp.conflict = (
                f"laterality: '{mention.side}' {mention.site} in the claim, "
                f"'{sorted(sides)[0]}' in the evidence"
            )
            return
    # Another drug for the same role.
    claim_drugs = {d for d in claim.drugs if drug_role(d)}
    span_drugs = {d for d in span.drugs if drug_role(d)}
    # Not for examples ("antibiotics include ciprofloxacin") or when the span lists several
    # drugs of the role: then the claim's drug is missing from a list, not replaced.
    examples = _EXAMPLES.search(claim.normalized + " | " + span.normalized) is not None
    for drug in sorted(claim_drugs - span_drugs):
        role = drug_role(drug)
        other_drugs = sorted(d for d in span_drugs - claim_drugs if drug_role(d) == role)
        same_role_in_span = [d for d in span_drugs if drug_role(d) == role]
        if examples or len(same_role_in_span) > 1:
            continue
        if other_drugs and _about_same(claim, comp, set(claim_drugs), t):
            comp.conflict = f"drug: '{drug}' in the claim, '{other_drugs[0]}' ({role}) in the evidence"
            return
    # Dates.
    for mine in claim.dates:
        if _date_term(mine) in comp.matched:
            continue
        date_differs = bool(span.dates) and all(mine.conflicts(d) for d in span.dates)
        if date_differs and _about_same(claim, comp, {_date_term(d) for d in claim.dates}, t):
            comp.conflict = f"date: '{mine.text}' in the claim, '{span.dates[0].text}' in the evidence"
            return
    # Polarity and experiencer of the shared problems and drugs (what is negated or
    # attributed to someone else in clinical text); the negated side's scope must be
    # headed by a shared word ("not staying on top of his blood sugar" is about staying).
    shared = [
        term
        for term in comp.matched
        if (is_problem_term(term) or _is_drug(claim, term)) and term not in comp.result_terms
    ]
    generic = not shared
    if generic:
        shared = [
            term
            for term in comp.matched
            if not term.startswith(("q:", "d:", "n:")) and term not in comp.result_terms
        ]
    if shared and _polarity_conflict(claim, span, comp, shared, generic, t):
        return
    _check_normality(claim, span, comp)
    if comp.conflict is None:
        _check_concept_substitution(claim, span, comp, t)
    if comp.conflict is not None:
        comp.hedge = comp.hedge_polarity = None
        return
    _check_substitution(claim, span, comp, t)


def _polarity_conflict(
    claim: Analysis, span: Analysis, comp: Comparison, shared: list[str], generic: bool, t: Thresholds
) -> bool:
    matched_span_terms = set(comp.matched.values())

    def headed(analysis: Analysis, term: str, matched: set[str], other: Analysis) -> bool:
        head = analysis.negation_head.get(term, term)
        if head == term or head in matched:
            return True
        # "not associated with Y" against "can cause Y": one relation, worded two ways.
        return head in _RELATION_STEMS and any(w in _RELATION_STEMS for w in other.terms)

    pairs = [
        (
            _polarity_of(claim, term),
            _polarity_of(span, comp.matched[term]),
        )
        for term in shared
    ]
    flips = (
        []
        if _restricted_negation(claim, span)
        else [
            term
            for term, pair in zip(shared, pairs, strict=True)
            if set(pair) in ({"affirmed", "negated"}, {"family", "family negated"})
            and (
                headed(claim, term, set(comp.matched), span)
                if "negated" in pair[0]
                else headed(span, comp.matched[term], matched_span_terms, claim)
            )
        ]
    )
    if not flips and not comp.missing_keys and not comp.strict_missing:
        acted = _negated_action(claim, span, comp, [] if generic else shared)
        if acted and _about_same(claim, comp, set(), t):
            mine = _polarity_of(claim, acted[0])
            claim_side, span_side = ("negates", "asserts") if mine != "affirmed" else ("asserts", "negates")
            word = acted[0].replace("_", " ")
            comp.conflict = f"negation: the claim {claim_side} '{word}', the evidence {span_side} it"
            return True
    if not flips:
        reversed_ = _advice_reversed(claim, span, comp)
        if reversed_ is not None and _about_same(claim, comp, set(), t):
            comp.conflict = reversed_
            return True
    problems = [term for term in shared if is_problem_term(term)]
    others = [
        term
        for term, pair in zip(shared, pairs, strict=True)
        if term in problems
        and "family" in pair
        and pair[0] != pair[1]
        and "negated" not in pair
        and "family negated" not in pair
    ]
    # A contradiction needs the same problem or drug, all of it: "denies left calf pain" does
    # not contradict "left ankle pain".
    if (
        flips
        and not generic
        and not comp.missing_keys
        and len(flips) * 2 >= len(pairs)
        and _about_same(claim, comp, set(), t)
    ):
        term = flips[0]
        claim_negates = "negated" in _polarity_of(claim, term)
        claim_side, span_side = ("negates", "asserts") if claim_negates else ("asserts", "negates")
        comp.conflict = (
            f"negation: the claim {claim_side} '{term.replace('_', ' ')}', the evidence {span_side} it"
        )
        return True
    if (
        problems
        and not (_generic(claim) and _generic(span))
        and len(others) * 2 >= len(problems)
        and comp.coverage >= 0.6
        and _about_same(claim, comp, set(), t)
    ):
        who = "another person" if _polarity_of(span, comp.matched[others[0]]) == "family" else "the patient"
        comp.conflict = f"experiencer: the evidence says this of {who}"
        return True
    # Opposite polarity that is not a contradiction ("denies any other injuries" and "injured
    # her knee"; "not staying on top of his blood sugar" and "blood sugar"): no support either.
    opposite = [
        pair
        for term, pair in zip(shared, pairs, strict=True)
        if set(pair) == {"affirmed", "negated"} and not _inside_shared_negation(claim, span, comp, term, pair)
    ]
    if opposite and len(opposite) * 2 >= len(pairs):
        comp.hedge = "one text negates what the other asserts, about something else"
        comp.hedge_polarity = opposite[0]
    return False


def _inside_shared_negation(
    claim: Analysis, span: Analysis, comp: Comparison, term: str, pair: tuple[str, str]
) -> bool:
    """A term negated on one side only because it sits inside a negation both texts make
    ("no focal neurological deficits" / "the neurological examination was nonfocal": both
    deny a focal deficit; "neurological" is only inside the first one's scope)."""
    negated, other = (claim, span) if pair[0] == "negated" else (span, claim)
    word = term if negated is claim else comp.matched[term]
    head = negated.negation_head.get(word)
    if head is None or head == word:
        return False
    return "negated" in other.status.get(head, frozenset())


_EXCEPTING = re.compile(r"\b(?:except|other than|apart from|aside from|but not)\b")


def _both_deny(claim: Analysis, span: Analysis, comp: Comparison) -> bool:
    """Both texts negate or advise against something they share: the negation is one-sided
    only in where it attaches ("X should not be used for more than 3 days" / "do not use X
    for more than 3 days"), not a contradiction."""
    denying = {"negated", "advised against"}
    # "without asking your doctor" in both texts is a shared circumstance, not a denial
    shared_without = "without" in claim.normalized and "without" in span.normalized
    in_claim = in_span = False
    for mine, theirs in comp.matched.items():
        a = _polarity_of(claim, mine) in denying
        b = _polarity_of(span, theirs) in denying
        if a and b and shared_without:
            continue
        in_claim |= a
        in_span |= b
    # advice against something the other text does not name ("avoid in women who may
    # become pregnant" / "valproate should be avoided in pregnancy") counts too
    if _EXCEPTING.search(claim.normalized + " | " + span.normalized):
        return in_claim and in_span  # "all fruit, except bananas, should be avoided" names its exception
    matched_span = set(comp.matched.values())
    in_claim |= any(
        _polarity_of(claim, term) == "advised against" for term in claim.terms if term not in comp.matched
    )
    in_span |= any(
        _polarity_of(span, term) == "advised against" for term in span.terms if term not in matched_span
    )
    return in_claim and in_span


# An instruction or recommendation: "take ...", "... should be taken", "it is best to ...".
_ADVISING = re.compile(
    r"^\s*(?:please\s+)?(?:take|use|give|apply|start|continue|keep|try|drink|eat|seek|see|call|contact"
    r"|consult|ask|get)\b"
    r"|\b(?:should|must|ought\s+to|needs?\s+to|recommended|advised|advisable|best\s+to|safe\s+to)\b"
    r"|\bcan\s+(?:safely\s+)?(?:be\s+)?(?:used|taken|given|use|take)\b|\byou\s+(?:can|may)\b"
    r"|\b(?:is|are)\s+(?:\w+\s+){0,3}safe(?:st)?\b|\b(?:preferred|first choice)\b"
)


def _advice_reversed(claim: Analysis, span: Analysis, comp: Comparison) -> str | None:
    """One text advises against what the other advises: "take ibuprofen for the pain" /
    "do not take ibuprofen for the pain"; "should (not) be taken". Everything the advice
    against is about must be in the other text, affirmed: "do not take it on an empty
    stomach" does not reverse "take it with food"."""
    if _restricted_negation(claim, span) or _both_deny(claim, span, comp):
        return None
    back = {theirs: mine for mine, theirs in comp.matched.items()}
    for against, other, to_other, side in (
        (claim, span, comp.matched, "claim"),
        (span, claim, back, "evidence"),
    ):
        scope = [
            term
            for term in against.terms
            if not term.startswith(("q:", "d:", "n:"))
            and {"negated", "advice"} <= against.status.get(term, frozenset())
        ]
        if not scope or not _ADVISING.search(other.normalized):
            continue
        if len(scope) < 2 and (comp.support < 0.8 or comp.strict_missing):
            continue  # "X is not recommended for Y": about X for Y, so Y must match too
        drugs = [term for term in scope if _is_drug(against, term)]
        if not drugs and not any(is_problem_term(term) for term in scope):
            continue
        # each term of the advice against is affirmed on the other side, or denied there too
        # by a shared "without" ("... without asking your doctor")
        allowed = {"affirmed", "negated"} if "without" in against.normalized else {"affirmed"}
        theirs = [_polarity_of(other, to_other[term]) if term in to_other else None for term in scope]
        if all(p in allowed for p in theirs) and "affirmed" in theirs:
            word = (drugs or scope)[0].replace("_", " ")
            return (
                f"advice: the {side} advises against '{word}', "
                f"the {'evidence' if side == 'claim' else 'claim'} advises it"
            )
    return None


def _negated_action(claim: Analysis, span: Analysis, comp: Comparison, shared: list[str]) -> list[str]:
    """What is done about a shared problem or drug, negated on one side only: "an ankle
    sprain needs surgery" / "does not need surgery", "a biopsy is (not) recommended".

    The shared problems and drugs keep the same polarity on both sides; the other matched
    terms that differ are all flipped between affirmed and negated (or advised against), and
    each flipped term opens its negation's scope (the negation is about it, not about a word
    the other text lacks). Returns the flipped terms, or nothing.
    """
    if _restricted_negation(claim, span):
        return []

    matched = set(comp.matched.values())

    def pair(term: str) -> tuple[Polarity, Polarity]:
        return (
            _polarity_of(claim, term),
            _polarity_of(span, comp.matched[term]),
        )

    if any(a != b for a, b in map(pair, shared)):
        return []
    if _both_deny(claim, span, comp):
        return []
    # Without a shared problem or drug ("a biopsy is (not) recommended") only advice counts:
    # a plain "not" in general statements is too often about something else.
    negative = {"negated", "advised against"} if shared else {"advised against"}
    differing = [
        term
        for term in comp.matched
        if term not in shared
        and term not in comp.result_terms
        and not term.startswith(("q:", "d:", "n:"))
        and len(set(pair(term))) > 1
    ]
    flipped = []
    for term in differing:
        mine, theirs = pair(term)
        if not ({mine, theirs} - {"affirmed"}) <= negative or "affirmed" not in (mine, theirs):
            return []  # uncertain, hypothetical, family, resolved: not a plain flip
        negated_side, word, words = (
            (claim, term, set(comp.matched)) if mine != "affirmed" else (span, comp.matched[term], matched)
        )
        head = negated_side.negation_head.get(word, word)
        if head != word and head not in words:
            return []
        flipped.append(term)
    return flipped


_ORGAN_OF: dict[str, str] = {**{stem(w): o for w, o in ORGAN_WORDS.items()}, **ORGAN_WORDS}
_FINDING_OF: dict[str, tuple[str, str]] = {**{stem(w): f for w, f in FINDINGS.items()}, **FINDINGS}
_NORMAL = frozenset(stem(w) for w in NORMAL_WORDS) | NORMAL_WORDS
_GENERIC_ABNORMAL = frozenset(stem(w) for w in GENERIC_ABNORMALITY) | GENERIC_ABNORMALITY
# Finding words that name an organ's finding only when the text names the organ ("enlarged
# heart", not "enlarged lymph nodes"; "pleural fluid", not "drink fluids").
_NEEDS_ORGAN = frozenset(
    stem(w)
    for w in re.findall(
        r"\w+",
        "enlarged enlargement mass masses lesion lesions nodule nodules fluid thickening density densities "
        "opacity opacities tenderness distension distention collapse fracture fractures degenerative "
        "arthritis edema congestion effusion effusions blunting",
    )
)
_RESTRICTED_NORMAL = re.compile(r"\b(?:except|aside from|apart from|other than|otherwise|besides|but for)\b")


@dataclass
class _OrganStates:
    normal: set[str] = field(default_factory=set)
    found: dict[str, set[str]] = field(default_factory=dict)
    denied: dict[str, set[str]] = field(default_factory=dict)
    words: dict[tuple[str, str], str] = field(default_factory=dict)


def _organ_states(a: Analysis) -> _OrganStates:
    """Which organs a text calls normal, and which findings it reports or denies in which."""
    out = _OrganStates()
    organs: set[str] = set()
    for term in a.terms:
        if term == "heart_mediastinum":
            organs |= {"heart", "mediastinum"}
        elif term in _ORGAN_OF:
            organs.add(_ORGAN_OF[term])
    for term in a.terms:
        polarity = _polarity_of(a, term)
        if term in _FINDING_OF:
            organ, family = _FINDING_OF[term]
            if term in _NEEDS_ORGAN and organ not in organs:
                continue
            if polarity == "affirmed":
                out.found.setdefault(organ, set()).add(family)
                out.words[(organ, family)] = a.surface.get(term, term)
            elif polarity == "negated":
                out.denied.setdefault(organ, set()).add(family)
                out.words[(organ, family)] = a.surface.get(term, term)
    if _RESTRICTED_NORMAL.search(a.normalized):
        return out
    normal = any(t in _NORMAL and _polarity_of(a, t) == "affirmed" for t in a.terms)
    normal = normal or any(t in _GENERIC_ABNORMAL and _polarity_of(a, t) == "negated" for t in a.terms)
    if normal:
        out.normal = {o for o in organs if o not in out.found}
    return out


def _check_normality(claim: Analysis, span: Analysis, comp: Comparison) -> None:
    """A normal organ against a finding in it, or a finding denied against one of its family
    reported: "the lungs are clear" / "opacity in the left lower lobe", "normal heart size" /
    "cardiomegaly", "no infiltrate" / "patchy opacities"."""
    if _generic(claim) or _generic(span):
        return  # general medical knowledge ("bronchitis does not usually turn into pneumonia")
    sides = {m.side for m in claim.sides}, {m.side for m in span.sides}
    if all(sides) and not (sides[0] & sides[1]) and "bilateral" not in sides[0] | sides[1]:
        return  # one side in the claim, the other in the evidence
    mine, theirs = _organ_states(claim), _organ_states(span)

    def word(states: _OrganStates, organ: str, family: str) -> str:
        return states.words[(organ, family)].replace("_", " ")

    for organ in sorted(mine.normal):
        if theirs.found.get(organ):
            family = sorted(theirs.found[organ])[0]
            comp.conflict = (
                f"normality: the claim calls the {organ} normal, "
                f"the evidence reports '{word(theirs, organ, family)}'"
            )
            return
    for organ, families in sorted(mine.found.items()):
        if organ in theirs.normal:
            comp.conflict = (
                f"normality: the claim reports '{word(mine, organ, sorted(families)[0])}', "
                f"the evidence calls the {organ} normal"
            )
            return
    # A finding denied on one side, another of its family reported on the other (the same
    # word negated on one side is the polarity check's business).
    for first, second, says in (
        (mine.found, theirs.denied, ("reports", "denies")),
        (mine.denied, theirs.found, ("denies", "reports")),
    ):
        for organ, families in sorted(first.items()):
            both = {
                f
                for f in families & second.get(organ, set())
                if mine.words[(organ, f)] != theirs.words[(organ, f)]
            }
            if both:
                family = sorted(both)[0]
                comp.conflict = (
                    f"negation: the claim {says[0]} '{word(mine, organ, family)}', "
                    f"the evidence {says[1]} '{word(theirs, organ, family)}'"
                )
                return


_PATIENT = re.compile(
    r"\b(?:he|she|his|her|him|patient|pt|mr|mrs|ms|man|woman|boy|girl|infant|child|gentleman|lady|newborn"
    r"|\d+ (?:year|month|week|day) old)\b"
)
_GENERIC = re.compile(
    r"\b(?:can|may|might|could|include|includes|including|such as|is used|are used|commonly|typically"
    r"|usually|often|generally|some|many|most|other)\b"
)
#: Problem words too general to name what a claim says instead of another ("disease",
#: "symptoms"): a claim with one of them is vaguer than the evidence, not different.
_GENERIC_PROBLEMS = frozenset(
    stem(w)
    for w in re.findall(
        r"\w+",
        "disease diseases disorder disorders condition conditions symptom symptoms problem problems illness "
        "infection infections pain ache aches sore sores injury injuries lesion lesions abnormality finding "
        "findings complication complications issue issues effect effects reaction reactions",
    )
)


_REPORTED = re.compile(
    r"\b(?:was|were|had been|has been|have been|is being)\s+(?:\w+ly\s+)?\w+(?:ed|en|wn)\b"
    r"|\b(?:showed|revealed|demonstrated|confirmed|grew|underwent|received|presented|developed|noted|found"
    r"|diagnosed|started|prescribed|administered|performed|recommended|obtained|ordered|reported|denied"
    r"|complained|admitted|discharged|referred|died|suspected)\b"
)


def _reported(a: Analysis) -> bool:
    """A statement of what happened to a patient (a note's, not general knowledge)."""
    return _episodic(a) or _REPORTED.search(a.normalized) is not None


def _episodic(a: Analysis) -> bool:
    """A statement about one patient (not general medical knowledge)."""
    return _PATIENT.search(a.normalized) is not None


def _generic(a: Analysis) -> bool:
    """General medical knowledge ("X can cause Y", "treatments include ..."): naming another
    item than the evidence there adds an item, it does not contradict one."""
    return _GENERIC.search(a.normalized) is not None and not _episodic(a)


def _slot(claim: Analysis, span: Analysis, comp: Comparison, term: str) -> tuple[int, int] | None:
    """Where in the span the claim's ``term`` would sit: between the span positions of the
    matched claim terms on either side of it (a window next to the one neighbour there is)."""
    start = claim.term_spans.get(term, (-1, -1))[0]
    if start < 0:
        return None
    left = right = None
    for other, hit in comp.matched.items():
        position = claim.term_spans.get(other, (-1, -1))[0]
        mapped = span.term_spans.get(hit, (-1, -1))[0]
        if position < 0 or mapped < 0:
            continue
        if position < start and (left is None or position > left[0]):
            left = (position, mapped)
        elif position > start and (right is None or position < right[0]):
            right = (position, mapped)
    if left is not None and right is not None:
        low, high = sorted((left[1], right[1]))
        return (low, high + 1)
    if left is not None:
        return (left[1] + 1, left[1] + 60)
    if right is not None:
        return (max(0, right[1] - 60), right[1])
    return None


_DIAGNOSTIC = re.compile(
    r"\b(?:diagnos\w*|suspect\w*|impression|consistent with|confirm\w*|likely|probable|differential"
    # a finding, where it was found: "ultrasound revealed a cyst in the liver"
    r"|showed|shows|revealed|reveals|demonstrated|demonstrates|found|noted|seen|identified|biopsy of)\b"
)
_COMPATIBLE: dict[str, frozenset[str | None]] = {
    "organism": frozenset({"organism", None}),
    "drug": frozenset({"drug", None}),
    "site": frozenset({"site"}),
    "problem": frozenset({"problem", None}),
}


def _rivals(
    claim: Analysis, span: Analysis, comp: Comparison, term: str, kind: str, t: Thresholds
) -> list[str]:
    """Specific terms of the span in ``term``'s slot that name something else of a
    compatible kind (a word of no known kind counts for any kind but a body site)."""
    slot = _slot(claim, span, comp, term)
    if slot is None:
        return []
    used = set(comp.matched.values())
    contrast = _CONTRAST_OF.get(term, frozenset())
    role = drug_role(term)
    surface = claim.surface.get(term, term)
    out = []
    for other, (start, _) in span.term_spans.items():
        if other in used or other.startswith(("q:", "d:", "n:")) or not slot[0] <= start < slot[1]:
            continue
        if other not in contrast and any(
            term_covers(other, c)
            or term_covers(c, other)
            or ("_" not in c + other and (c in other or other in c))
            for c in claim.terms
            if not c.startswith("q:")
        ):
            continue  # the same word, or one inside the other ("pneumothorax", "hydropneumothorax")
        if other in _CARE_ROLES:
            continue  # who to see ("ask your pharmacist"), not what the claim names instead
        if _polarity_of(span, other) in ("negated", "advised against"):
            continue  # denied ("do not take it on an empty stomach"): agrees with the claim's "with food"
        if (role is not None and stem(other) == stem(role)) or other == DRUG_CLASS.get(surface, ""):
            continue  # the drug's own class ("clobetasol" / "topical steroid"): vaguer, not another drug
        if kind == "qualifier":
            if other in _CONTRAST_OF.get(term, frozenset()) and not _same_class(term, other):
                out.append(other)
            continue
        if kind == "allergen":
            if (
                other not in _ALLERGY
                and _kind(other) in (None, "drug")
                and (is_strict_term(other, span, t) or span.weights.get(other, 0.0) >= t.rival_weight)
            ):
                out.append(other)
            continue
        if (
            other in _GENERIC_PROBLEMS
            or other in _CONTRAST_OF
            or (span.weights.get(other, 0.0) < t.rival_weight and _kind(other) is None)
        ):
            continue  # a rival is specific, or of a clinical kind ("kidney" for "spleen")
        if _kind(other) in _COMPATIBLE.get(kind, frozenset()):
            out.append(other)
    return out


def _check_substitution(claim: Analysis, span: Analysis, comp: Comparison, t: Thresholds) -> None:
    """The claim names a clinical term where the span, in the same slot of the same frame,
    names another of a compatible kind: another organism, drug, diagnosis, body site or
    exclusive qualifier ("culture grew *E. coli*" / "*Klebsiella*", "central retinal *vein*"
    / "*artery* occlusion", "*primary*" / "*secondary*"). Not for another organism, drug or
    diagnosis in general medical knowledge ("X can cause A" against "X can cause B"): there
    it adds to a list, it does not contradict. An exclusive qualifier is wrong anywhere."""
    general = _generic(claim) or _generic(span)
    # In an allergy, what the patient reacts to is one slot: another allergen there ("allergy
    # to peanuts" / "to shellfish") is a swap, whatever its kind. The evidence may name the
    # allergy only in a header the span does not carry ("ALLERGIES: Penicillin (hives)").
    allergy = any(x in _ALLERGY for x in claim.terms)
    candidates = []
    for term in comp.missing:
        if term.startswith(("q:", "d:", "n:")):
            continue  # numbers and dates have checks of their own
        if _polarity_of(claim, term) != "affirmed":
            continue  # "denies left calf pain" is not contradicted by "left ankle pain"
        kind = _kind(term)
        if allergy and kind in (None, "drug") and term not in _ALLERGY and not general:
            if term in comp.strict_missing or claim.weights.get(term, 0.0) >= t.rival_weight:
                candidates.append((term, "allergen"))
            continue
        if kind == "qualifier":
            candidates.append((term, kind))
        elif kind == "site" and not _DIAGNOSTIC.search(claim.normalized):
            continue  # another body site is a contradiction only inside a diagnosis
        elif (
            not general
            and (term in comp.strict_missing or claim.weights.get(term, 0.0) >= t.rival_weight)
            and term not in _GENERIC_PROBLEMS
            and comp.soft.get(term, 0.0) < 1.0
        ):
            candidates.append((term, kind or "problem"))
    for term, kind in candidates:
        rivals = _rivals(claim, span, comp, term, kind, t)
        if _kind(term) is None and kind != "allergen":
            # A word of no known kind ("exertion") is replaced only by a clinical or rare word,
            # not by any word in its slot ("climbs stairs").
            rivals = [other for other in rivals if is_strict_term(other, span, t)]
        if not rivals or (kind != "qualifier" and len(rivals) > 1):
            continue  # several: the claim's item is missing from a list, not replaced
        exclude = {x for x in comp.missing if x == term or _kind(x) == kind} | set(rivals)
        if (
            _about_same(claim, comp, exclude, t)
            and comp.rest_coverage >= t.substitution_coverage
            and comp.similarity >= t.substitution_similarity
        ) or (comp.rest_coverage >= 0.999 and comp.similarity >= t.conflict_similarity):
            what = {
                "organism": "organism",
                "drug": "drug",
                "qualifier": "qualifier",
                "problem": "diagnosis",
                "site": "body site",
                "allergen": "allergen",
            }
            comp.conflict = (
                f"substitution ({what[kind]}): '{term.replace('_', ' ')}' in the claim, "
                f"'{rivals[0].replace('_', ' ')}' in the evidence"
            )
            return


def _check_assertion(claim: Analysis, span: Analysis, comp: Comparison) -> None:
    """Hedging, hypotheticals and resolution that differ between claim and span, judged on
    the problems both mention (diagnoses, findings, symptoms): "possible pneumonia" vs
    "pneumonia". General statements ("may cause nausea") are not hedges in this sense."""
    shared = [term for term in comp.matched if is_problem_term(term) and term not in comp.result_terms]
    if not shared:
        return
    pairs = [
        (
            _polarity_of(claim, term),
            _polarity_of(span, comp.matched[term]),
        )
        for term in shared
    ]
    differing = [p for p in pairs if p[0] != p[1]]
    if len(differing) * 2 < len(pairs) or not differing:
        return
    first = differing[0]
    if first[0] == "hypothetical" or "advised against" in first:
        return  # a conditional claim, or advice, is not contradicted by a plain statement
    comp.hedge_polarity = first
    if "uncertain" in first:
        comp.hedge = (
            "the evidence hedges it"
            if first[1] == "uncertain"
            else "the claim hedges what the evidence states"
        )
    elif first[1] == "hypothetical":
        comp.hedge = "the evidence mentions it only as a possibility or condition"
    elif "resolved" in first:
        comp.hedge = "one text says it has resolved"


# --- deciding a label ----------------------------------------------------------------------


@dataclass
class _Decision:
    rank: float
    """Which comparison's verdict wins: entailed by a span (5) over a conflict (4, or 3
    when partial) over entailed by the whole evidence (3.5) over partial support (2) over
    "mentioned only as a condition / about another instance" (1) over nothing found (-1);
    ties go to the higher support."""
    verdict: Verdict
    support: float
    comp: Comparison | None = None
    fitted: bool = False
    """The label may be decided by the fitted decision (not a conflict or assertion check)."""


def _fmt(x: float) -> str:
    return f"{x:.2f}"


def _readable(names: Sequence[str]) -> str:
    readable = []
    for name in names[:4]:
        if name.startswith("q:"):
            readable.append("a quantity")
        elif name.startswith("d:"):
            readable.append("a date")
        elif name.startswith("n:"):
            readable.append(name[2:])
        else:
            readable.append(name.replace("_", " "))
    return ", ".join(readable)


def _describe_missing(comp: Comparison) -> str:
    unsupported = comp.strict_missing + [m for m, v in comp.soft.items() if v < 0.5]
    if not unsupported:
        return "nothing, but the support is below the entailment threshold"
    return _readable(unsupported)


def _decide(comp: Comparison, claim: Analysis, t: Thresholds) -> _Decision:
    decision = _decide_by_rules(comp, claim, t)
    decision.comp = comp
    # Conflicts and the assertion checks (hedged, conditional, resolved) decide by themselves;
    # an opposite polarity that is not a contradiction is a signal for the fitted decision.
    decision.fitted = decision.verdict.reason != "incorrect" and (
        comp.hedge is None or _opposite_polarity(comp)
    )
    return decision


def _decide_by_rules(comp: Comparison, claim: Analysis, t: Thresholds) -> _Decision:
    sim = comp.similarity
    support = comp.support
    stats = f"support {_fmt(support)}, similarity {_fmt(sim)}"
    if comp.conflict is not None:
        label = "partial" if comp.conflict_partial else "not_entailed"
        credit = 0.5 * support if comp.conflict_partial else 0.0
        return _Decision(
            3 if comp.conflict_partial else 4,
            Verdict(
                label=label,
                reason="incorrect",
                evidence=comp.quote,
                explanation=f"conflict check ({comp.conflict}); {stats}",
                support=credit,
            ),
            support,
        )
    has_keys = bool(claim.key_terms)
    matched_keys = [k for k in claim.key_terms if k in comp.matched]
    needed = t.entail_similarity if has_keys else t.entail_similarity_without_key
    whole = "whole-evidence " if comp.whole else ""
    entailed = support >= t.entail_support and not comp.strict_missing and sim >= needed
    main_concept = (
        (matched_keys or not has_keys) and support >= t.partial_support and sim >= t.partial_similarity
    )
    if comp.hedge is not None and (entailed or main_concept):
        if comp.hedge_polarity is not None and (
            comp.hedge_polarity[1] == "hypothetical" or set(comp.hedge_polarity) == {"affirmed", "negated"}
        ):
            return _Decision(
                1,
                Verdict(
                    label="not_entailed",
                    reason="missing",
                    evidence=comp.quote,
                    explanation=f"assertion check: {comp.hedge}; {stats}",
                    support=0.0,
                ),
                support,
            )
        return _Decision(
            2,
            Verdict(
                label="partial",
                reason="ambiguous",
                evidence=comp.quote,
                explanation=f"assertion check: {comp.hedge}; {stats}",
                support=0.5 * support,
            ),
            support,
        )
    if entailed:
        why = (
            "every content term matched"
            if not comp.missing
            else "clinical terms matched, other words matched or close in meaning"
        )
        return _Decision(
            3.5 if comp.whole else 5,
            Verdict(
                label="entailed",
                evidence=comp.quote,
                explanation=f"{whole}coverage check: {why}; {stats}",
                support=support,
            ),
            support,
        )
    if main_concept:
        return _Decision(
            2,
            Verdict(
                label="partial",
                reason="missing",
                evidence=comp.quote,
                explanation=(
                    f"{whole}coverage check: main concept found, "
                    f"not found: {_describe_missing(comp)}; {stats}"
                ),
                support=max(support, comp.graded),
            ),
            support,
        )
    quote = comp.quote if (sim >= t.quote_similarity and comp.matched) else ""
    return _Decision(
        -1,
        Verdict(
            label="not_entailed",
            reason="missing",
            evidence=quote,
            explanation=f"{whole}coverage check: not found in the evidence; {stats}",
            support=support,
        ),
        support,
    )


# --- the primitive ---------------------------------------------------------------------------


@dataclass
class _Evidence:
    units: list[EvidenceUnit]
    views: list[View]
    matrices: list[FloatArray]
    termsets: list[frozenset[str]]
    lengths: list[int]
    sentence_unit: dict[int, int]
    whole: Analysis | None
    whole_matrix: FloatArray


def _prepare(units: list[EvidenceUnit], views: list[View]) -> _Evidence:
    sentence_unit: dict[int, int] = {}
    for j, unit in enumerate(units):
        sentence_unit.setdefault(unit.sentence, j)
    sentences = [views[j] for j in sentence_unit.values()]
    whole: Analysis | None = None
    for view in sentences:
        whole = view.analysis if whole is None else merge(whole, view.analysis)
    return _Evidence(
        units=units,
        views=views,
        matrices=[v.matrix for v in views],
        termsets=[frozenset(v.analysis.terms) for v in views],
        lengths=[max(1, len(u.text.split())) for u in units],
        sentence_unit=sentence_unit,
        whole=whole,
        whole_matrix=stack(sentences),
    )


def check_claims(
    claims: Sequence[str],
    evidence: str,
    encoder: SentenceEncoder,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    decision: DecisionModel | None = None,
    signals_out: list[Signals | None] | None = None,
) -> list[Verdict]:
    """One verdict per claim, in order (see the module docstring).

    ``decision``: the fitted decision that labels and grades what no conflict or assertion
    check decided (``None``: the rule thresholds alone). ``signals_out``, when given, a list
    as long as ``claims``, receives each claim's :class:`Signals` (``None`` where a check
    decided), for fitting the decision."""
    t = thresholds
    units = evidence_units(evidence) if evidence and evidence.strip() else []
    if not units:
        return [
            Verdict(
                label="not_entailed",
                reason="missing",
                evidence="",
                explanation="the evidence text is empty",
                support=0.0,
            )
            for _ in claims
        ]
    claim_texts = [c.strip() for c in claims]
    wanted = [i for i, text in enumerate(claim_texts) if text and re.search(r"\w", text)]
    views = build_views([claim_texts[i] for i in wanted] + [u.text for u in units], encoder)
    claim_views = dict(zip(wanted, views[: len(wanted)], strict=True))
    ev = _prepare(units, views[len(wanted) :])
    unit_vectors = np.stack([v.vector for v in ev.views])
    verdicts: list[Verdict] = []
    for i in range(len(claim_texts)):
        view = claim_views.get(i)
        if view is None:
            verdicts.append(
                Verdict(label="not_entailed", reason="other", explanation="empty claim", support=0.0)
            )
            continue
        sims = unit_vectors @ view.vector
        best, signals = _check_one(view, sims, unit_vectors, ev, t)
        if signals_out is not None:
            signals_out[i] = signals
        verdicts.append(_apply(decision, best, signals))
    return verdicts


def _opposite_polarity(comp: Comparison) -> bool:
    return comp.hedge_polarity is not None and set(comp.hedge_polarity) == {"affirmed", "negated"}


def _signals(claim: Analysis, best: _Decision, max_similarity: float) -> Signals | None:
    """The signals of the comparison that decided, when the fitted decision may decide."""
    comp = best.comp
    if comp is None or not best.fitted:
        return None
    total = claim.total_weight or 1.0
    keys = claim.key_terms
    label = best.verdict.label
    return Signals(
        support=comp.support,
        graded=comp.graded,
        coverage=comp.coverage,
        similarity=comp.similarity,
        max_similarity=max_similarity,
        strict_missing=min(1.0, sum(claim.weights.get(x, 0.0) for x in comp.strict_missing) / total),
        key_matched=(sum(k in comp.matched for k in keys) / len(keys)) if keys else 1.0,
        has_key=1.0 if keys else 0.0,
        number_missing=1.0 if any(x.startswith(("q:", "n:", "d:")) for x in comp.missing) else 0.0,
        concept_missing=(
            sum(not all(term in comp.matched for term in c.terms) for c in claim.concepts)
            / len(claim.concepts)
            if claim.concepts
            else 0.0
        ),
        opposite_polarity=1.0 if _opposite_polarity(comp) else 0.0,
        whole=1.0 if comp.whole else 0.0,
        paired=1.0 if not comp.single and not comp.whole else 0.0,
        length=float(np.log1p(len(claim.terms))),
        rule_entailed=1.0 if label == "entailed" else 0.0,
        rule_partial=1.0 if label == "partial" else 0.0,
    )


def _apply(decision: DecisionModel | None, best: _Decision, signals: Signals | None) -> Verdict:
    """The verdict: a conflict or assertion check decides by itself; otherwise the fitted
    decision, where one is given, decides the label and grades the support."""
    verdict = best.verdict
    if decision is None or signals is None:
        return verdict
    p = decision.probability(signals)
    label = decision.label(p, signals)
    rule = verdict.explanation.split("; support ")[0]
    stats = f"support {_fmt(signals.support)}, similarity {_fmt(signals.similarity)}"
    explanation = f"fitted decision: P(entailed) {p:.2f} ({rule}; {stats})"
    update: dict[str, object] = {"label": label, "support": round(p, 4), "explanation": explanation}
    if label == "entailed":
        update["reason"] = None
    else:
        update["reason"] = verdict.reason if verdict.reason not in (None, "incorrect") else "missing"
    if label == "not_entailed" and not verdict.evidence:
        update["evidence"] = ""
    return verdict.model_copy(update=update)


def _check_one(
    claim: View, sims: FloatArray, unit_vectors: FloatArray, ev: _Evidence, t: Thresholds
) -> tuple[_Decision, Signals | None]:
    a = claim.analysis
    units = ev.units
    k = min(t.top_k, len(units))
    by_similarity = [int(j) for j in np.argsort(-sims, kind="stable")[:k]]
    claim_terms = set(a.terms)
    overlap = [(len(claim_terms & s), j) for j, s in enumerate(ev.termsets)]
    by_words = [j for n, j in sorted(overlap, key=lambda x: (-x[0], x[1]))[:k] if n > 0]
    candidates = list(dict.fromkeys(by_similarity + by_words))
    comparisons = [
        _compare(claim, ev.views[j].analysis, ev.matrices[j], float(sims[j]), units[j].quote, t)
        for j in candidates
    ]
    decisions = [_decide(c, a, t) for c in comparisons]
    best = max(decisions, key=lambda d: (d.rank, d.support))
    if best.rank < 5:
        # Two spans together, for a claim the evidence states in two places, or in a
        # sentence that names its subject only in the one before ("It is used for ...").
        ranked = [
            candidates[x] for x in sorted(range(len(candidates)), key=lambda x: -comparisons[x].support)[:4]
        ]
        pairs: list[tuple[int, int]] = []
        for ja, jb in combinations(ranked, 2):
            if units[ja].sentence != units[jb].sentence:
                pairs.append((min(ja, jb), max(ja, jb)))
        for j in ranked:
            previous = ev.sentence_unit.get(units[j].sentence - 1)
            if previous is not None and _PRONOUN_START.match(units[j].text):
                pairs.append((previous, j))
        # A span that contradicts the claim supports it in no pair.
        conflicting = {candidates[x] for x, c in enumerate(comparisons) if c.conflict is not None}
        for first, second in dict.fromkeys(pairs):
            if first in conflicting or second in conflicting:
                continue
            merged = merge(ev.views[first].analysis, ev.views[second].analysis)
            vector = combine(unit_vectors[[first, second]], [ev.lengths[first], ev.lengths[second]])
            quote = units[first].quote + " ... " + units[second].quote
            matrix = np.concatenate([ev.matrices[first], ev.matrices[second]])
            comp = _compare(
                claim, merged, matrix, float(vector @ claim.vector), quote, t, conflicts=False, polarity=True
            )
            comp.single = False
            decision = _decide(comp, a, t)
            if decision.rank > best.rank or (
                decision.rank == best.rank and decision.support > best.support + 0.05
            ):
                best = decision
    if ev.whole is not None and len(ev.sentence_unit) > 1 and best.rank not in (3, 4):
        # The evidence as a whole, for a claim it states piece by piece; its support also
        # grades a claim no single span holds.
        top = [
            candidates[x] for x in sorted(range(len(candidates)), key=lambda x: -comparisons[x].support)[:3]
        ]
        quote = " ... ".join(dict.fromkeys(units[j].quote for j in sorted(top)))
        comp = _compare(
            claim, ev.whole, ev.whole_matrix, float(sims.max()), quote, t, conflicts=False, polarity=True
        )
        comp.single, comp.whole = False, True
        comp.support = max(0.0, comp.support - t.whole_evidence_penalty)
        comp.graded = max(0.0, comp.graded - t.whole_evidence_penalty)
        decision = _decide(comp, a, t)
        if decision.verdict.label == "entailed" and _reported(a):
            # What happened to a patient is stated in one place: words found here and there
            # in a note do not make it (general knowledge may be assembled across an answer).
            decision = _Decision(
                2,
                decision.verdict.model_copy(
                    update={
                        "label": "partial",
                        "reason": "missing",
                        "explanation": decision.verdict.explanation.replace(
                            "coverage check:", "coverage check: found only across sentences,", 1
                        ),
                    }
                ),
                decision.support,
                decision.comp,
                decision.fitted,
            )
        if decision.rank > best.rank or (
            decision.rank == best.rank and decision.support > best.support + 0.05
        ):
            best = decision
        elif (
            best.rank != 1
            and best.verdict.reason != "ambiguous"  # a hedged or reversed claim keeps its halved credit
            and best.verdict.support is not None
            and decision.support > best.verdict.support
        ):
            best.verdict = best.verdict.model_copy(update={"support": decision.support})
    return best, _signals(a, best, float(sims.max()))
