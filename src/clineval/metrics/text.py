"""Lexical response metrics: exact match, token F1, ROUGE and BLEU.

Source: exact match, ROUGE and BLEU are lexical response metrics of Vertex AI's Gen AI
evaluation service; token F1 is the SQuAD-style one.

Each metric compares ``case.response`` with a target text: ``case.reference``, or for
``exact_match`` the ``case.expected`` value when the case has one. ROUGE comes from the
``rouge-score`` package and BLEU from ``sacrebleu``; this module only prepares the texts
and reports the numbers.

Empty texts, one rule for all four metrics: after stripping surrounding whitespace, a
response and a target that are both empty score 1.0 (they are identical), and when exactly
one of them is empty the score is 0.0. The libraries are not called in either case.
``token_f1`` applies the same rule once more to its token lists, since a non-empty text
can still have no tokens (``"the."``).
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from collections import Counter
from typing import Any

from pydantic import JsonValue

from clineval.metrics.base import BaseMetric, ScoreContext
from clineval.metrics.registration import metric
from clineval.model import Case, Score

#: The ROUGE variants computed by ``rouge``, in the order they are reported.
ROUGE_TYPES: tuple[str, ...] = ("rouge1", "rouge2", "rougeL", "rougeLsum")

#: Where exact match, ROUGE and BLEU come from, as the metric catalogue names it.
LEXICAL_SOURCE = "Vertex AI Gen AI evaluation (lexical response metrics)"

_TRAILING_PUNCTUATION = re.compile(r"[\s.!?;:]+$")

#: Clinical tokens: a number with internal ``.``, ``/`` or ``:`` kept whole ("0.5",
#: "120/80", "1:1000"); a word starting with a letter, digits allowed ("hba1c", "b12");
#: a comparison sign. Everything else (punctuation, ``%``, ``+``, ``-``) separates tokens.
TOKEN_PATTERN = re.compile(r"\d+(?:[./:]\d+)*|[^\W\d_][^\W_]*|[<>≤≥]")
ARTICLES = frozenset({"a", "an", "the"})

#: Sentence boundary for rougeLsum: whitespace that follows ``.``, ``!`` or ``?``.
SENTENCE_BOUNDARY = re.compile(r"(?<=[.!?])\s+")


def empty_text_rule(response: str, target: str, target_field: str) -> Score | None:
    """The shared empty-text rule (see the module docstring); ``None`` when neither is empty."""
    response_empty, target_empty = not response.strip(), not target.strip()
    if response_empty and target_empty:
        return _edge(1.0, f"the response and {target_field!r} are both empty")
    if response_empty:
        return _edge(0.0, f"the response is empty and {target_field!r} is not")
    if target_empty:
        return _edge(0.0, f"{target_field!r} is empty and the response is not")
    return None


def _edge(value: float, reason: str) -> Score:
    return Score(value=value, explanation=reason, details={"empty_text_rule": True})


def normalize_answer(text: str) -> str:
    """NFKC, casefold, collapse whitespace, strip it and trailing ``.!?;:``."""
    text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return _TRAILING_PUNCTUATION.sub("", text)


def clinical_tokens(text: str) -> list[str]:
    """Tokens for ``token_f1``: NFKC + casefold, :data:`TOKEN_PATTERN`, no articles."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [t for t in TOKEN_PATTERN.findall(folded) if t not in ARTICLES]


def split_sentences(text: str) -> str:
    """One sentence per line for rougeLsum; a text that already has newlines is kept."""
    if "\n" in text:
        return text
    return "\n".join(SENTENCE_BOUNDARY.split(text.strip()))


def expected_as_text(value: JsonValue) -> str:
    """``case.expected`` as text: strings as is, JSON for objects and lists, ``str()`` else."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _check_bool(value: object, setting: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"the setting {setting!r} must be true or false, got {value!r}")
    return value


class _LexicalMetric(BaseMetric):
    """Shared flow: find the target, apply the empty-text rule, then compare."""

    requires: tuple[str, ...] = ("response", "reference")

    def score(self, case: Case, ctx: ScoreContext) -> Score:
        found = self._target(case)
        if isinstance(found, Score):
            return found
        target_field, target = found
        assert case.response is not None
        edge = empty_text_rule(case.response, target, target_field)
        if edge is not None:
            return self._edge_score(edge)
        return self._compare(case.response, target)

    def _target(self, case: Case) -> tuple[str, str] | Score:
        assert case.reference is not None
        return "reference", case.reference

    def _edge_score(self, score: Score) -> Score:
        return score

    def _compare(self, response: str, target: str) -> Score:
        raise NotImplementedError


@metric("exact_match", source=LEXICAL_SOURCE)
class ExactMatch(_LexicalMetric):
    """1 when the response equals the expected answer (or the reference), after normalisation."""

    requires: tuple[str, ...] = ("response",)

    def __init__(self, *, normalize: bool = True) -> None:
        self.normalize = _check_bool(normalize, "normalize")

    def _target(self, case: Case) -> tuple[str, str] | Score:
        if case.expected is not None:
            return "expected", expected_as_text(case.expected)
        if case.reference is not None:
            return "reference", case.reference
        return Score.failed(
            "the case has neither 'expected' nor 'reference'; "
            "exact_match compares the response with one of them",
            missing_fields=["expected", "reference"],
        )

    def _edge_score(self, score: Score) -> Score:
        score.label = "match" if score.value == 1.0 else "no_match"
        return score

    def _compare(self, response: str, target: str) -> Score:
        if self.normalize:
            response, target = normalize_answer(response), normalize_answer(target)
        same = response == target
        return Score(
            value=1.0 if same else 0.0,
            label="match" if same else "no_match",
            details={"response": response, "target": target, "normalize": self.normalize},
        )


@metric("token_f1", source="SQuAD-style token F1")
class TokenF1(_LexicalMetric):
    """Harmonic mean of token precision and recall against the reference (clinical tokens)."""

    def _edge_score(self, score: Score) -> Score:
        score.sub_scores = {"precision": score.value, "recall": score.value}
        return score

    def _compare(self, response: str, target: str) -> Score:
        response_tokens, reference_tokens = clinical_tokens(response), clinical_tokens(target)
        details: dict[str, Any] = {
            "response_tokens": response_tokens,
            "reference_tokens": reference_tokens,
        }
        if not response_tokens or not reference_tokens:
            value = 1.0 if response_tokens == reference_tokens else 0.0
            return Score(
                value=value,
                sub_scores={"precision": value, "recall": value},
                explanation=_no_tokens(response_tokens, reference_tokens),
                details={**details, "overlap": 0, "empty_text_rule": True},
            )
        overlap = sum((Counter(response_tokens) & Counter(reference_tokens)).values())
        precision = overlap / len(response_tokens)
        recall = overlap / len(reference_tokens)
        f1 = 0.0 if overlap == 0 else 2 * precision * recall / (precision + recall)
        return Score(
            value=f1,
            sub_scores={"precision": precision, "recall": recall},
            details={**details, "overlap": overlap},
        )


def _no_tokens(response_tokens: list[str], reference_tokens: list[str]) -> str:
    if not response_tokens and not reference_tokens:
        return "neither the response nor the reference has a token"
    return "the response has no token" if not response_tokens else "the reference has no token"


@functools.cache
def _rouge_scorer(use_stemmer: bool) -> Any:
    """The scorer, built on first use rather than with the metric (``clineval validate``, a
    resumed run with every score done): rouge-score pulls in nltk, scipy and sklearn, seconds."""
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=use_stemmer)


@metric("rouge", source=LEXICAL_SOURCE)
class Rouge(_LexicalMetric):
    """ROUGE F-measure (rouge-score); all of ROUGE-1, -2, -L and -Lsum in the sub-scores."""

    def __init__(self, *, rouge_type: str = "rougeLsum", use_stemmer: bool = True) -> None:
        if rouge_type not in ROUGE_TYPES:
            raise ValueError(f"unknown rouge_type {rouge_type!r}; choose one of {', '.join(ROUGE_TYPES)}")
        self.rouge_type = rouge_type
        self.use_stemmer = _check_bool(use_stemmer, "use_stemmer")

    def _edge_score(self, score: Score) -> Score:
        score.sub_scores = {t: score.value for t in ROUGE_TYPES}
        return score

    def _compare(self, response: str, target: str) -> Score:
        results = _rouge_scorer(self.use_stemmer).score(split_sentences(target), split_sentences(response))
        details: dict[str, Any] = {
            t: {
                "precision": float(results[t].precision),
                "recall": float(results[t].recall),
                "f": float(results[t].fmeasure),
            }
            for t in ROUGE_TYPES
        }
        sub_scores: dict[str, float | None] = {t: details[t]["f"] for t in ROUGE_TYPES}
        details.update(rouge_type=self.rouge_type, use_stemmer=self.use_stemmer)
        return Score(value=sub_scores[self.rouge_type], sub_scores=sub_scores, details=details)


@metric("bleu", source=LEXICAL_SOURCE)
class Bleu(_LexicalMetric):
    """Sentence BLEU against the reference (sacrebleu), scaled to 0-1."""

    def __init__(self, *, tokenize: str | None = "13a", smooth_method: str | None = "exp") -> None:
        from sacrebleu.metrics.bleu import BLEU

        # A bare ``none`` in a metric spec arrives as None; it names sacrebleu's "none".
        tokenize = "none" if tokenize is None else tokenize
        smooth_method = "none" if smooth_method is None else smooth_method
        if tokenize not in BLEU.TOKENIZERS:
            raise ValueError(f"unknown tokenize {tokenize!r}; sacrebleu knows {', '.join(BLEU.TOKENIZERS)}")
        if smooth_method not in BLEU.SMOOTH_DEFAULTS:
            raise ValueError(
                f"unknown smooth_method {smooth_method!r}; sacrebleu knows {', '.join(BLEU.SMOOTH_DEFAULTS)}"
            )
        try:  # a tokenizer may need an optional package (ja-mecab, spm): fail at creation
            BLEU(tokenize=tokenize, smooth_method=smooth_method)
        except Exception as exc:
            raise ValueError(f"sacrebleu cannot use tokenize={tokenize!r}: {exc}") from exc
        self.tokenize = tokenize
        self.smooth_method = smooth_method

    def _compare(self, response: str, target: str) -> Score:
        from sacrebleu import sentence_bleu

        result = sentence_bleu(response, [target], tokenize=self.tokenize, smooth_method=self.smooth_method)
        value = min(1.0, max(0.0, float(result.score) / 100.0))
        return Score(
            value=value,
            details={
                "precisions": [_unit(p) for p in result.precisions],
                "brevity_penalty": float(result.bp),
                "hypothesis_length": int(result.sys_len),
                "reference_length": int(result.ref_len),
                "tokenize": self.tokenize,
                "smooth_method": self.smooth_method,
            },
        )


def _unit(percentage: float) -> float:
    """A sacrebleu percentage as a fraction in [0, 1]."""
    value = float(percentage) / 100.0
    return 0.0 if math.isnan(value) else min(1.0, max(0.0, value))
