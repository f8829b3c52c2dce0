"""How much a word says: a weight in (0, 1] from its frequency in general English.

A claim's words do not carry equal information. "Klebsiella", "adenomyosis" or "lisinopril"
name one thing; "important", "patient" or "also" could sit in almost any sentence. When the
offline judge measures how much of a claim the evidence supports, each content word counts
by its *specificity*, an inverse-frequency weight in the spirit of IDF:

    weight = clip((7 - zipf) / 4, 0.15, 1)

where ``zipf`` is the word's Zipf frequency in English (log10 of occurrences per billion
words) from the ``wordfreq`` package (Speer, 2022; data from Wikipedia, subtitles, news,
books, web text and social media). Words used once per million tokens or more often
(zipf >= 6.4) weigh 0.15; words at zipf 3 (about one in a million) or rarer weigh 1. A word
wordfreq does not know (zipf 0: a rare drug, organism or misspelling) weighs 1.

Discourse markers ("moreover", "furthermore", "notably") carry no content at all and are
not content words (:data:`DISCOURSE_MARKERS`).
"""

from __future__ import annotations

import math
from functools import lru_cache

__all__ = ["DISCOURSE_MARKERS", "specificity", "zipf"]


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


DISCOURSE_MARKERS = _wordset(
    """
    moreover furthermore additionally also besides likewise similarly further in_addition
    however nevertheless nonetheless still yet though although whereas instead
    therefore thus hence consequently accordingly so
    notably importantly interestingly remarkably significantly crucially essentially basically
    actually indeed certainly clearly obviously apparently fortunately unfortunately hopefully
    overall generally typically usually ordinarily normally_adv often sometimes occasionally
    specifically particularly especially mainly mostly primarily largely namely
    finally first firstly second secondly third thirdly lastly meanwhile subsequently then
    simply just really quite rather very truly definitely absolutely
    """
)


@lru_cache(maxsize=1)
def _frequencies() -> dict[str, float]:
    """wordfreq's English word frequencies, loaded once (about 0.5 s, 320,000 words)."""
    from wordfreq import get_frequency_dict

    return dict(get_frequency_dict("en"))


@lru_cache(maxsize=65536)
def zipf(word: str) -> float:
    """Zipf frequency of ``word`` in English: log10 of its occurrences per billion words
    (0.0 when unknown). Several words ("chest pain") take wordfreq's own combination."""
    text = word.replace("_", " ").strip().lower()
    if " " in text:
        from wordfreq import zipf_frequency

        return float(zipf_frequency(text, "en"))
    frequency = _frequencies().get(text, 0.0)
    return round(math.log10(frequency * 1e9), 2) if frequency > 0 else 0.0


@lru_cache(maxsize=65536)
def specificity(word: str) -> float:
    """The weight of ``word`` (see the module docstring); multi-word concepts joined by
    underscores ("type_2_diabetes") and numbers weigh 1."""
    if not word or "_" in word or any(c.isdigit() for c in word):
        return 1.0
    if word in DISCOURSE_MARKERS:
        return 0.0
    z = zipf(word)
    if z <= 0.0:
        return 1.0
    return min(1.0, max(0.15, (7.0 - z) / 4.0))
