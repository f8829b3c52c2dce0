"""Evaluators that ship with clineval, for use in suites (``class: clineval.suites.evaluators:Name``).

An evaluator is any callable -- a function, or a class whose instances are callable --
taking named inputs and returning a number, a bool, a dict or a
:class:`~clineval.model.Score` (the convention of azure-ai-evaluation, so its evaluators
and AutoAuth-style custom ones plug in unchanged). The inputs it may name:

``response``      the value at the evaluation's ``query`` path in the pipeline's output (text)
``ground_truth``  the evaluation's expected value (text)
``query``         the evaluation's ``query`` (the field path)
``context``       the evaluation's (or the case's) context, as text
``conversation``, ``scores``   as given in the evaluation
``output``        the pipeline's whole output for the case
``latency_s``     the seconds the pipeline took for the case (time to decision)
``case_id``       the case's id

An evaluator that names none of the per-evaluation inputs (``response``,
``ground_truth``, ``query``, ``context``, ``conversation``, ``scores``) is called once per
case instead of once per evaluation. Values that are not text (numbers, lists) reach
``response`` and ``ground_truth`` as text: ``true``/``false``, ``12``, JSON for the rest.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from rapidfuzz import fuzz

from clineval.model import Score

_SPACE = re.compile(r"\s+")
_PUNCT_EDGE = re.compile(r"^[\s\"'`.,;:!?()\[\]{}]+|[\s\"'`.,;:!?()\[\]{}]+$")


def normalise(text: str, *, case_sensitive: bool = False, strip_punctuation: bool = True) -> str:
    """Unicode NFKC, collapsed whitespace, no surrounding punctuation or quotes, lower case."""
    text = unicodedata.normalize("NFKC", text)
    text = _SPACE.sub(" ", text).strip()
    if strip_punctuation:
        text = _PUNCT_EDGE.sub("", text)
    return text if case_sensitive else text.casefold()


def _verdict(value: float, threshold: float | None, *, lower_is_better: bool = False) -> str | None:
    if threshold is None:
        return None
    ok = value <= threshold if lower_is_better else value >= threshold
    return "pass" if ok else "fail"


class ExactMatch:
    """1 when the response equals the ground truth after normalisation, else 0.

    Normalisation: Unicode NFKC, whitespace collapsed, surrounding punctuation and quotes
    removed, case folded (``case_sensitive: true`` keeps case). Range 0-1.
    """

    def __init__(self, *, case_sensitive: bool = False, strip_punctuation: bool = True):
        self.case_sensitive = case_sensitive
        self.strip_punctuation = strip_punctuation

    def __call__(self, *, response: str, ground_truth: str) -> Score:
        got = normalise(
            response, case_sensitive=self.case_sensitive, strip_punctuation=self.strip_punctuation
        )
        want = normalise(
            ground_truth, case_sensitive=self.case_sensitive, strip_punctuation=self.strip_punctuation
        )
        same = got == want
        return Score(
            value=1.0 if same else 0.0,
            label="pass" if same else "fail",
            explanation=None if same else f"expected {ground_truth!r}, got {response!r}",
        )


FuzzyScorer = Literal["ratio", "partial_ratio", "token_sort_ratio", "token_set_ratio", "WRatio"]


class FuzzyMatch:
    """Similarity of the response to the ground truth, 0-100 (rapidfuzz; 100 = identical).

    ``scorer``: ``ratio`` (normalised Indel similarity, the default), ``partial_ratio``
    (best matching substring), ``token_sort_ratio`` (word order ignored),
    ``token_set_ratio`` (word sets) or ``WRatio``. Both texts are normalised as in
    :class:`ExactMatch` first. With ``threshold`` (0-100) the label is pass or fail.
    """

    def __init__(
        self,
        *,
        threshold: float | None = None,
        scorer: FuzzyScorer = "ratio",
        case_sensitive: bool = False,
    ):
        if threshold is not None and not 0 <= float(threshold) <= 100:
            raise ValueError(
                f"threshold must be between 0 and 100 (a similarity percentage), got {threshold}"
            )
        if scorer not in ("ratio", "partial_ratio", "token_sort_ratio", "token_set_ratio", "WRatio"):
            raise ValueError(
                f"unknown scorer {scorer!r}: "
                "ratio, partial_ratio, token_sort_ratio, token_set_ratio or WRatio"
            )
        self.threshold = None if threshold is None else float(threshold)
        self.scorer = getattr(fuzz, scorer)
        self.case_sensitive = case_sensitive

    def __call__(self, *, response: str, ground_truth: str) -> Score:
        got = normalise(response, case_sensitive=self.case_sensitive)
        want = normalise(ground_truth, case_sensitive=self.case_sensitive)
        similarity = 100.0 if not got and not want else float(self.scorer(got, want))
        return Score(value=round(similarity, 4), label=_verdict(similarity, self.threshold))


DEFAULT_LABELS: dict[str, list[str]] = {
    "approved": ["approve", "approved", "approval", "accept", "accepted", "granted", "grant"],
    "denied": ["deny", "denied", "denial", "reject", "rejected", "rejection", "declined", "decline"],
    "needs_more_information": [
        "needs more information",
        "more information needed",
        "pending",
        "pended",
        "incomplete",
        "insufficient information",
    ],
}


class LabelMatch:
    """1 when the response and the ground truth name the same label, else 0.

    Each label has synonyms (``labels: {approved: [approve, approval, ...], ...}``; the
    default knows approval, denial and needs-more-information decisions). Text is
    normalised as in :class:`ExactMatch`; a response that names no known label scores 0
    with the reason, and a ground truth that names none is an error in the suite.
    """

    def __init__(self, *, labels: Mapping[str, Sequence[str]] | None = None):
        table = DEFAULT_LABELS if labels is None else labels
        self.synonyms: dict[str, str] = {}
        for label, words in table.items():
            self.synonyms[normalise(label)] = label
            for word in words:
                self.synonyms[normalise(str(word))] = label

    def label_of(self, text: str) -> str | None:
        key = normalise(text)
        if key in self.synonyms:
            return self.synonyms[key]
        return None

    def __call__(self, *, response: str, ground_truth: str) -> Score:
        want = self.label_of(ground_truth)
        if want is None:
            raise ValueError(
                f"the ground truth {ground_truth!r} is not a known label "
                f"({', '.join(sorted(set(self.synonyms.values())))})"
            )
        got = self.label_of(response)
        if got is None:
            return Score(
                value=0.0, label="fail", explanation=f"the response {response!r} names no known label"
            )
        same = got == want
        return Score(
            value=1.0 if same else 0.0,
            label="pass" if same else "fail",
            explanation=None if same else f"expected {want}, got {got}",
            details={"expected": want, "actual": got},
        )


class NumericMatch:
    """1 when the response is the ground truth's number within a tolerance, else 0.

    ``tolerance`` is absolute, or relative to the ground truth with ``relative: true``.
    The first number in each text is compared (``"5.9 mmol/L"`` reads as 5.9).
    """

    _NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?(?:[eE][-+]?\d+)?")

    def __init__(self, *, tolerance: float = 0.0, relative: bool = False):
        if tolerance < 0:
            raise ValueError("tolerance must be 0 or more")
        self.tolerance = float(tolerance)
        self.relative = relative

    def _number(self, text: str) -> float | None:
        match = self._NUMBER.search(text)
        return float(match.group(0).replace(",", ".")) if match else None

    def __call__(self, *, response: str, ground_truth: str) -> Score:
        want = self._number(ground_truth)
        if want is None:
            raise ValueError(f"the ground truth {ground_truth!r} holds no number")
        got = self._number(response)
        if got is None:
            return Score(value=0.0, label="fail", explanation=f"the response {response!r} holds no number")
        allowed = self.tolerance * abs(want) if self.relative else self.tolerance
        ok = abs(got - want) <= allowed + 1e-12
        return Score(
            value=1.0 if ok else 0.0,
            label="pass" if ok else "fail",
            details={"expected": want, "actual": got, "difference": got - want},
        )


class TimeToDecision:
    """Seconds the pipeline took for the case (lower is better); pass when within ``max_seconds``.

    Called once per case. A case whose pipeline call failed is not applicable here (its
    failure is counted by ``failure``).
    """

    higher_is_better = False

    def __init__(self, *, max_seconds: float | None = None):
        if max_seconds is not None and max_seconds <= 0:
            raise ValueError("max_seconds must be more than 0")
        self.max_seconds = max_seconds

    def __call__(self, *, latency_s: float | None) -> Score:
        if latency_s is None:
            return Score.not_applicable("no time was recorded for this case (no pipeline ran)")
        return Score(value=latency_s, label=_verdict(latency_s, self.max_seconds, lower_is_better=True))


class MetricEvaluator:
    """A clineval metric used as a suite evaluator (written ``metric: NAME`` in a suite).

    The metric sees a case with ``response`` (the value at the query path),
    ``reference`` (the ground truth), ``contexts`` (the context passages) and ``input``
    (the case's ``input``, or the query). Settings are the metric's own (``args``).
    """

    def __init__(self, metric: str | Mapping[str, Any], **settings: Any):
        from clineval.metrics.registry import MetricSpec, build_metric

        spec = MetricSpec.model_validate(metric)
        if settings:
            spec = spec.model_copy(update={"args": {**spec.args, **settings}})
        self.spec = spec
        self.metric = build_metric(spec)
        self.higher_is_better = bool(getattr(self.metric, "higher_is_better", True))

    @property
    def needs_judge(self) -> bool:
        return bool(getattr(self.metric, "needs_judge", False))
