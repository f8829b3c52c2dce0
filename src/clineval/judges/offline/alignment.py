"""Token-level alignment of a claim with evidence, in the style of BERTScore.

A claim's content term that the evidence does not state in the same words (or a synonym,
an abbreviation, a stem variant) may still be there in other words: "seek medical
attention" and "consult a doctor", "worsening" and "gets worse". For such terms the judge
looks at contextual embeddings: every text is embedded once by all-MiniLM-L6-v2, and the
last-layer state of each word (the mean of its word pieces, L2-normalised) stands for that
word *in its sentence*. A claim term's soft match with a span is its highest cosine with
any content word of the span (BERTScore's greedy matching; Zhang et al., 2020).

The text given to the model is the analysis's normalised text (one vocabulary for both
sides: "Lexapro" and "escitalopram" become the same word) with abbreviations spelled out,
rebuilt token by token so that every analysis token knows its word pieces.

Soft matching never stands in for a clinical term (a drug, a problem, an organism, a
number): two bacteria or two diagnoses in the same sentence frame have close contextual
embeddings, which is exactly the error a factuality judge must catch. Which terms may be
matched softly is the entailment module's decision; this module only measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from clineval.nlp.analysis import Analysis, analyze
from clineval.nlp.embeddings import FloatArray, SentenceEncoder
from clineval.nlp.terms import expand_abbreviations

__all__ = ["View", "build_views", "embedding_text", "soft_scores", "stack"]

_EMPTY = np.zeros((0, 384), dtype=np.float32)


@dataclass(frozen=True)
class View:
    """A text as the matcher sees it: its analysis, its sentence vector, and one contextual
    vector per content term."""

    analysis: Analysis
    vector: FloatArray
    term_vectors: dict[str, FloatArray] = field(default_factory=dict)

    @property
    def matrix(self) -> FloatArray:
        """The content terms' vectors as rows (what a claim's terms are matched against)."""
        if not self.term_vectors:
            return _EMPTY
        return np.stack(list(self.term_vectors.values()))


def embedding_text(analysis: Analysis) -> tuple[str, list[tuple[int, int]]]:
    """The text embedded for ``analysis`` and, per analysis token, its span in that text."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    position = 0
    for token in analysis.assertions.tokens:
        shown = token.text.replace("_", " ")
        if token.kind == "word":
            shown = expand_abbreviations(shown)
        parts.append(shown)
        spans.append((position, position + len(shown)))
        position += len(shown) + 1
    return " ".join(parts), spans


def build_views(texts: Sequence[str], encoder: SentenceEncoder) -> list[View]:
    """One :class:`View` per text (embedded in one batch; vectors cached by the encoder)."""
    analyses = [analyze(text) for text in texts]
    prepared = [embedding_text(a) for a in analyses]
    embedded = [
        text if text.strip() else original for (text, _), original in zip(prepared, texts, strict=True)
    ]
    states = encoder.encode_tokens(embedded)
    views: list[View] = []
    for analysis, (_, spans), state in zip(analyses, prepared, states, strict=True):
        tokens = analysis.assertions.tokens
        vectors: dict[str, FloatArray] = {}
        for term, (start, end) in analysis.term_spans.items():
            picked = [i for i, token in enumerate(tokens) if start <= token.start < end]
            if not picked:
                continue
            rows = np.concatenate([state.rows(*spans[i]) for i in picked]) if picked else _EMPTY
            if rows.shape[0] == 0:
                continue
            mean = rows.mean(axis=0)
            vectors[term] = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
        views.append(View(analysis=analysis, vector=state.vector, term_vectors=vectors))
    return views


def stack(views: Sequence[View]) -> FloatArray:
    """The content-term vectors of several views as one matrix (for matching against all)."""
    mats = [v.matrix for v in views if v.term_vectors]
    return np.concatenate(mats) if mats else _EMPTY


def soft_scores(claim: View, terms: Sequence[str], matrix: FloatArray) -> dict[str, float]:
    """For each of ``terms`` (content terms of ``claim``), its highest cosine with a row of
    ``matrix``; 0.0 when the term has no vector or the matrix is empty."""
    wanted = [t for t in terms if t in claim.term_vectors]
    out = dict.fromkeys(terms, 0.0)
    if not wanted or matrix.shape[0] == 0:
        return out
    sims = np.stack([claim.term_vectors[t] for t in wanted]) @ matrix.T
    for term, best in zip(wanted, sims.max(axis=1), strict=True):
        out[term] = float(best)
    return out
