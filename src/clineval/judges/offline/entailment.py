"""Is a claim entailed by an evidence text? The offline heuristic behind ``check_facts``.

For each claim:

1. **Find spans.** The evidence is split into sentences and, where a sentence holds
   several claims, into clauses too ("units"). The claim is compared with the units most
   similar to it (MiniLM cosine) and with those sharing most words; when no single span
   supports the claim outright, pairs of the best four (from different sentences) are
   tried together, for a claim that the evidence states in two places, and a span that
   opens with a pronoun is tried with the sentence before it.
2. **Look for a conflict** with each span that is about the same thing (it covers most of
   the claim's other words and is similar enough): opposite polarity of the shared key
   terms ("no pneumothorax" / "small left pneumothorax"), another value for the same
   quantity ("5 mg" / "50 mg", "BP 120/80" / "140/90"), another side for the same body
   site, another drug of the same role, another date, another dosing frequency, another
   person ("mother had ..."). A conflict gives ``not_entailed``/``incorrect``, unless
   another span supports the claim outright (it wins over partial support elsewhere).
3. **Measure support**: the weighted share of the claim's content terms found in the span
   (stems, synonyms and abbreviations resolved, numbers with units normalised) and the
   cosine similarity. High coverage with every key term and enough similarity, or a
   near-paraphrase, is ``entailed``; the main concept with parts absent is
   ``partial``/``missing``; the same content hedged on one side only ("possible
   pneumonia") is ``partial``/``ambiguous``; anything else ``not_entailed``/``missing``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from clineval.judges.offline.thresholds import DEFAULT_THRESHOLDS, Thresholds
from clineval.judges.primitives import Verdict
from clineval.nlp.analysis import Analysis, analyze, is_key_term, is_problem_term, merge
from clineval.nlp.assertions import Status
from clineval.nlp.clinical import DateMention, drug_role
from clineval.nlp.embeddings import FloatArray, SentenceEncoder, combine
from clineval.nlp.sentences import split_claims, split_sentences
from clineval.nlp.terms import expand_abbreviations, term_covers, term_weight, terms_match

__all__ = ["EvidenceUnit", "check_claims", "evidence_units"]

# "denies any other injuries", "no new lesions": a negation about further instances, which
# does not contradict the instance the other text mentions.
_RESTRICTED_NEGATION = re.compile(
    r"\b(?:no|not|denies|denied|without|negative\s+for)\s+(?:any\s+)?(?:other|additional|further|new|more|recent)\b"
)
_EXAMPLES = re.compile(
    r"\b(?:include|includes|including|such as|for example|e\.g|options?|examples?|alternatives?)\b"
)
_PRONOUN_START = re.compile(
    r"^(?:it|its|they|their|them|this|these|that|those|he|she|his|her|such|both|the\s+(?:drug|medication|medicine|condition"
    r"|disease|treatment|infection|procedure|test|patient))\b",
    re.IGNORECASE,
)


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
    for index, sentence in enumerate(split_sentences(evidence)):
        if sentence not in seen:
            units.append(EvidenceUnit(sentence, sentence, index))
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


# --- comparing one claim with one span ----------------------------------------------------

Polarity = str  # affirmed | negated | uncertain | hypothetical | family | resolved


def _polarity(statuses: frozenset[Status]) -> Polarity:
    if "family" in statuses:
        return "family"
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


@dataclass
class Comparison:
    """How one claim compares with one span (a unit or two units together)."""

    quote: str
    similarity: float
    coverage: float = 0.0
    rest_coverage: float = 0.0
    matched: dict[str, str] = field(default_factory=dict)
    """claim term -> the span term that matched it."""
    missing: list[str] = field(default_factory=list)
    missing_keys: list[str] = field(default_factory=list)
    conflict: str | None = None
    """Which conflict check fired, with the detail, e.g. ``numbers: 5 mg vs 50 mg``."""
    conflict_partial: bool = False
    """A weaker conflict (one side vs both sides) that leaves the claim partly supported."""
    hedge: str | None = None
    """An assertion difference short of a contradiction (hedged, hypothetical, resolved)."""
    hedge_polarity: tuple[str, str] | None = None
    single: bool = True

    @property
    def support(self) -> float:
        return 0.5 * self.coverage + 0.5 * max(self.similarity, 0.0)


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


def _compare(claim: Analysis, span: Analysis, similarity: float, quote: str, t: Thresholds) -> Comparison:
    comp = Comparison(quote=quote, similarity=similarity)
    quantity_hits = _quantity_matches(claim, span)
    for term in claim.terms:
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
                mine = next((d for d in claim.dates if _date_term(d) == term), None)
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
        else:
            comp.matched[term] = hit
    total = claim.total_weight
    got = sum(claim.weights[t_] for t_ in comp.matched)
    comp.coverage = got / total if total else 0.0
    _check_conflicts(claim, span, comp, t)
    if comp.conflict is None and comp.hedge is None:
        _check_assertion(claim, span, comp)
    return comp


def _shares_date_part(a: DateMention, b: DateMention) -> bool:
    return any(x is not None and x == y for x, y in ((a.year, b.year), (a.month, b.month), (a.day, b.day)))


def _rest_coverage(claim: Analysis, comp: Comparison, exclude: set[str]) -> float:
    """Coverage of the claim's terms other than ``exclude`` (the detail in conflict)."""
    total = sum(w for term, w in claim.weights.items() if term not in exclude)
    if total <= 0:
        return 0.0  # nothing besides the detail itself: "same thing" cannot be shown
    got = sum(claim.weights[term] for term in comp.matched if term not in exclude)
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
    # Numbers: the same quantity (dimension and anchor) with another value.
    for q in claim.quantities:
        if q.key() in comp.matched:
            continue
        rivals = [o for o in span.quantities if q.comparable(o) and _anchors_meet(q.anchor, o.anchor)]
        if not rivals and q.dimension in ("age", "pressure"):
            rivals = [o for o in span.quantities if o.dimension == q.dimension]
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
        term for term in comp.matched if is_problem_term(term) or drug_role(term) or term in claim.drugs
    ]
    generic = not shared
    if generic:
        shared = [term for term in comp.matched if not term.startswith(("q:", "d:", "n:"))]
    if not shared:
        return
    matched_span_terms = set(comp.matched.values())

    def headed(analysis: Analysis, term: str, matched: set[str]) -> bool:
        head = analysis.negation_head.get(term, term)
        return head == term or head in matched

    pairs = [
        (
            _polarity(claim.status.get(term, frozenset())),
            _polarity(span.status.get(comp.matched[term], frozenset())),
        )
        for term in shared
    ]
    flips = (
        []
        if _RESTRICTED_NEGATION.search(claim.normalized + " | " + span.normalized)
        else [
            term
            for term, pair in zip(shared, pairs, strict=True)
            if set(pair) == {"affirmed", "negated"}
            and (
                headed(claim, term, set(comp.matched))
                if pair[0] == "negated"
                else headed(span, comp.matched[term], matched_span_terms)
            )
        ]
    )
    problems = [term for term in shared if is_problem_term(term)]
    others = [
        term
        for term, pair in zip(shared, pairs, strict=True)
        if term in problems and "family" in pair and pair[0] != pair[1] and "negated" not in pair
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
        claim_negates = "negated" in _polarity(claim.status.get(term, frozenset()))
        claim_side, span_side = ("negates", "asserts") if claim_negates else ("asserts", "negates")
        comp.conflict = (
            f"negation: the claim {claim_side} '{term.replace('_', ' ')}', the evidence {span_side} it"
        )
        return
    if (
        problems
        and len(others) * 2 >= len(problems)
        and comp.coverage >= 0.6
        and _about_same(claim, comp, set(), t)
    ):
        who = (
            "another person"
            if _polarity(span.status.get(comp.matched[others[0]], frozenset())) == "family"
            else "the patient"
        )
        comp.conflict = f"experiencer: the evidence says this of {who}"
        return
    # Opposite polarity that is not a contradiction ("denies any other injuries" and "injured
    # her knee"; "not staying on top of his blood sugar" and "blood sugar"): no support either.
    opposite = [pair for pair in pairs if set(pair) == {"affirmed", "negated"}]
    if opposite and len(opposite) * 2 >= len(pairs):
        comp.hedge = "one text negates what the other asserts, about something else"
        comp.hedge_polarity = opposite[0]


def _check_assertion(claim: Analysis, span: Analysis, comp: Comparison) -> None:
    """Hedging, hypotheticals and resolution that differ between claim and span, judged on
    the problems both mention (diagnoses, findings, symptoms): "possible pneumonia" vs
    "pneumonia". General statements ("may cause nausea") are not hedges in this sense."""
    shared = [term for term in comp.matched if is_problem_term(term)]
    if not shared:
        return
    pairs = [
        (
            _polarity(claim.status.get(term, frozenset())),
            _polarity(span.status.get(comp.matched[term], frozenset())),
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
    rank: int
    """Which span's verdict wins: entailed (5) over a conflict (4, or 3 when partial) over
    partial support (2) over "mentioned only as a condition / about another instance" (1)
    over nothing found (-1); ties go to the higher support."""
    verdict: Verdict
    support: float


def _percent(x: float) -> str:
    return f"{x:.2f}"


def _describe_missing(comp: Comparison) -> str:
    if not comp.missing:
        return "nothing, but the similarity is below the entailment threshold"
    names = [m.replace("_", " ") for m in (comp.missing_keys or comp.missing)[:4]]
    readable = []
    for name in names:
        if name.startswith("q:"):
            readable.append("a quantity")
        elif name.startswith("d:"):
            readable.append("a date")
        elif name.startswith("n:"):
            readable.append(name[2:])
        else:
            readable.append(name)
    return ", ".join(readable)


def _decide(comp: Comparison, claim: Analysis, t: Thresholds) -> _Decision:
    sim = comp.similarity
    cov = comp.coverage
    stats = f"coverage {_percent(cov)}, similarity {_percent(sim)}"
    if comp.conflict is not None:
        label = "partial" if comp.conflict_partial else "not_entailed"
        return _Decision(
            3 if comp.conflict_partial else 4,
            Verdict(
                label=label,
                reason="incorrect",
                evidence=comp.quote,
                explanation=f"conflict check ({comp.conflict}); {stats}",
            ),
            comp.support,
        )
    has_keys = bool(claim.key_terms)
    matched_keys = [k for k in claim.key_terms if k in comp.matched]
    # Without a key term, shared words are generic ("medication", "doing well"), so the
    # similarity has to carry more of the decision.
    needed = t.entail_similarity if has_keys else t.entail_similarity_without_key
    strong = cov >= t.entail_coverage and sim >= needed and not comp.missing_keys
    # Only generic words ("takes", "complains of") are missing, every key term is there.
    generic_gap = has_keys and not comp.missing_keys and all(term_weight(m) < 1 for m in comp.missing)
    strong = strong or (generic_gap and sim >= t.entail_similarity)
    # Every word of the claim, key terms included, is in the span: similarity only has to
    # show the span is not about something else (a short claim inside a long sentence).
    contained = cov >= 0.999 and has_keys and sim >= t.contained_similarity
    strong = strong or contained
    paraphrase = (
        sim >= t.paraphrase_similarity
        and cov >= t.paraphrase_coverage
        and (not comp.missing_keys or (len(comp.missing_keys) == 1 and sim >= t.near_duplicate_similarity))
    )
    main_concept = (
        (matched_keys or not has_keys) and cov >= t.partial_coverage and sim >= t.partial_similarity
    )
    if comp.hedge is not None and (strong or paraphrase or main_concept):
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
                ),
                comp.support,
            )
        return _Decision(
            2,
            Verdict(
                label="partial",
                reason="ambiguous",
                evidence=comp.quote,
                explanation=f"assertion check: {comp.hedge}; {stats}",
            ),
            comp.support,
        )
    if strong or paraphrase:
        why = "all content terms found" if not comp.missing else f"most content terms found ({stats})"
        return _Decision(
            5,
            Verdict(label="entailed", evidence=comp.quote, explanation=f"coverage check: {why}; {stats}"),
            comp.support,
        )
    if main_concept:
        return _Decision(
            2,
            Verdict(
                label="partial",
                reason="missing",
                evidence=comp.quote,
                explanation=(
                    f"coverage check: main concept found, not found: {_describe_missing(comp)}; {stats}"
                ),
            ),
            comp.support,
        )
    quote = comp.quote if (sim >= t.quote_similarity and comp.matched) else ""
    return _Decision(
        -1,
        Verdict(
            label="not_entailed",
            reason="missing",
            evidence=quote,
            explanation=f"coverage check: not found in the evidence; {stats}",
        ),
        comp.support,
    )


def check_claims(
    claims: Sequence[str],
    evidence: str,
    encoder: SentenceEncoder,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> list[Verdict]:
    """One verdict per claim, in order (see the module docstring)."""
    t = thresholds
    units = evidence_units(evidence) if evidence and evidence.strip() else []
    if not units:
        return [
            Verdict(
                label="not_entailed", reason="missing", evidence="", explanation="the evidence text is empty"
            )
            for _ in claims
        ]
    claim_texts = [c.strip() for c in claims]
    vectors = encoder.encode([expand_abbreviations(x) for x in (*claim_texts, *[u.text for u in units])])
    claim_vectors, unit_vectors = vectors[: len(claim_texts)], vectors[len(claim_texts) :]
    sims = claim_vectors @ unit_vectors.T
    unit_analyses = [analyze(u.text) for u in units]
    unit_termsets = [frozenset(a.terms) for a in unit_analyses]
    unit_lengths = [max(1, len(u.text.split())) for u in units]
    sentence_unit: dict[int, int] = {}
    for j, unit in enumerate(units):
        sentence_unit.setdefault(unit.sentence, j)
    verdicts: list[Verdict] = []
    for i, text in enumerate(claim_texts):
        if not text or not re.search(r"\w", text):
            verdicts.append(Verdict(label="not_entailed", reason="other", explanation="empty claim"))
            continue
        claim = analyze(text)
        verdicts.append(
            _check_one(
                claim,
                sims[i],
                claim_vectors[i],
                units,
                unit_analyses,
                unit_termsets,
                unit_vectors,
                unit_lengths,
                sentence_unit,
                t,
            )
        )
    return verdicts


def _check_one(
    claim: Analysis,
    sims: FloatArray,
    claim_vector: FloatArray,
    units: list[EvidenceUnit],
    analyses: list[Analysis],
    termsets: list[frozenset[str]],
    unit_vectors: FloatArray,
    lengths: list[int],
    sentence_unit: dict[int, int],
    t: Thresholds,
) -> Verdict:
    k = min(t.top_k, len(units))
    by_similarity = [int(j) for j in np.argsort(-sims, kind="stable")[:k]]
    claim_terms = set(claim.terms)
    overlap = [(len(claim_terms & s), j) for j, s in enumerate(termsets)]
    by_words = [j for n, j in sorted(overlap, key=lambda x: (-x[0], x[1]))[:k] if n > 0]
    candidates = list(dict.fromkeys(by_similarity + by_words))
    comparisons = [_compare(claim, analyses[j], float(sims[j]), units[j].quote, t) for j in candidates]
    decisions = [_decide(c, claim, t) for c in comparisons]
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
            previous = sentence_unit.get(units[j].sentence - 1)
            if previous is not None and _PRONOUN_START.match(units[j].text):
                pairs.append((previous, j))
        for first, second in dict.fromkeys(pairs):
            merged = merge(analyses[first], analyses[second])
            vector = combine(unit_vectors[[first, second]], [lengths[first], lengths[second]])
            quote = units[first].quote + " ... " + units[second].quote
            comp = _compare(claim, merged, float(vector @ claim_vector), quote, t)
            comp.single = False
            if comp.conflict is not None:
                continue  # conflicts are judged on single spans only
            decision = _decide(comp, claim, t)
            if decision.rank > best.rank or (
                decision.rank == best.rank and decision.support > best.support + 0.05
            ):
                best = decision
    return best.verdict
