"""Trivial baselines every validation figure is shown beside.

A judge that agrees with clinicians no better than these says nothing a string comparison
would not: each validation figure of the judge is reported next to the same figure for

* **ROUGE-L** (Lin, 2004; the ``rouge-score`` package, Porter stemming): the longest common
  subsequence of words; for a claim against evidence its *precision* (the share of the
  claim's words that the evidence holds in order), for two texts of the same kind its F1;
* **content-word share**: the share of the claim's content words (lower-cased words and
  numbers that are not English stopwords, no stemming) that occur anywhere in the evidence;
* **texts differ**: 1 when the two texts differ once whitespace and case are ignored, else 0
  (for a protocol where that alone would score well, which says the protocol proves nothing).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["BASELINES", "content_word_share", "content_words", "rouge_l", "texts_differ"]

_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@lru_cache(maxsize=1)
def _scorer() -> object:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(candidate: str, reference: str, *, part: str = "f") -> float:
    """ROUGE-L of ``candidate`` against ``reference``: ``part`` is ``p`` (share of the
    candidate's words in the common subsequence), ``r`` or ``f``. Empty text gives 0."""
    if not candidate.strip() or not reference.strip():
        return 0.0
    score = _scorer().score(reference, candidate)["rougeL"]  # type: ignore[attr-defined]
    return float({"p": score.precision, "r": score.recall, "f": score.fmeasure}[part])


def content_words(text: str) -> list[str]:
    """Lower-cased words and numbers of ``text`` that are not English stopwords."""
    stop = _stopwords()
    return [w for w in _WORD.findall(text.lower()) if w not in stop]


def content_word_share(claim: str, evidence: str) -> float:
    """Share of the claim's distinct content words found in the evidence (1.0 when the
    claim has none: nothing in it is unsupported)."""
    words = set(content_words(claim))
    if not words:
        return 1.0
    found = set(_WORD.findall(evidence.lower()))
    return len(words & found) / len(words)


def texts_differ(a: str, b: str) -> float:
    """1.0 when the texts differ (ignoring case and whitespace), else 0.0."""
    return float(" ".join(a.lower().split()) != " ".join(b.lower().split()))


BASELINES: dict[str, str] = {
    "rouge_l": "ROUGE-L",
    "word_share": "content-word share",
    "differ": "texts differ",
}
"""Baseline keys used in validation results, with their display names."""
