"""Every constant the offline judge decides with, in one place (and in ``describe()``).

The values were set a priori from what the quantities mean (a share of a claim's content
words; a MiniLM cosine, where paraphrases score about 0.6-0.9 and unrelated sentences
about 0-0.2), then checked on a hand-written development set and on half of the K-QA
physician-labelled pairs; see docs/offline-judge.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

HEURISTIC_VERSION = "offline-heuristic/3.0"


@dataclass(frozen=True)
class Thresholds:
    # --- check_facts --------------------------------------------------------------------
    entail_support: float = 0.6
    """Weighted share of the claim's content the span must support for ``entailed`` ..."""
    entail_similarity: float = 0.35
    """... with at least this cosine similarity, and every clinical term matched ..."""
    entail_similarity_without_key: float = 0.5
    """... or this one when the claim has no key term (drug, problem, lab, site, number)."""
    partial_support: float = 0.35
    """The main concept is there (``partial``): this support and a key term matched, ..."""
    partial_similarity: float = 0.3
    """... with at least this similarity (else: not entailed, missing)."""
    strict_specificity: float = 1.0
    """A word at least this specific (wordfreq Zipf frequency 3 or less: about one in a
    million words or rarer) must be matched in the same words or a synonym, like a clinical term."""
    soft_low: float = 0.4
    """A non-clinical word of the claim earns no credit from a contextual match below this
    cosine (MiniLM word states: unrelated words in similar sentences reach 0.3-0.45) ..."""
    soft_high: float = 0.8
    """... and full credit from this cosine up (the same word or a close synonym), linearly between."""
    conflict_coverage: float = 0.5
    """Two texts are about the same thing (so a different number, side, drug, date or
    polarity is a contradiction) when the evidence covers more than this share of the
    claim's other content ..."""
    conflict_similarity: float = 0.35
    """... and their similarity is at least this."""
    substitution_coverage: float = 0.7
    """A substitution (another organism, drug, diagnosis or exclusive qualifier in the same
    frame) needs the evidence to cover this share of the claim's other content ..."""
    substitution_similarity: float = 0.5
    """... at this similarity or more (or every other term of the claim, at the conflict similarity)."""
    rival_weight: float = 0.75
    """A term that names what a claim says instead, in a substitution, has at least this
    specificity weight (words used about 10 times per million or less), or a clinical kind."""
    whole_evidence_penalty: float = 0.05
    """Support found only across the whole evidence (no one or two sentences hold it) counts
    this much less."""
    quote_similarity: float = 0.35
    """Evidence is quoted for a missing claim only when at least this similar."""
    top_k: int = 5
    """Evidence units per claim looked at closely (by similarity, plus as many by word overlap)."""
    # --- RAG primitives -------------------------------------------------------------------
    relevant_similarity: float = 0.5
    """A context sentence is about the question at this similarity on its own ..."""
    relevant_similarity_with_terms: float = 0.3
    """... or at this one when it also shares a key term of the question (or half of its terms)."""
    relevant_term_share: float = 0.5
    answerable_similarity: float = 0.55
    """should_decline with contexts: answerable when a context sentence is this similar ..."""
    answerable_coverage: float = 0.6
    """... or covers this share of the question's content terms with the relevant similarity."""
    semantic_match_similarity: float = 0.7
    """... and this similarity answers even when the question's key words are absent (typos)."""
    refusal_margin: int = 2
    """A refusal cue counts unless at least this many informative clinical sentences follow it."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


DEFAULT_THRESHOLDS = Thresholds()
