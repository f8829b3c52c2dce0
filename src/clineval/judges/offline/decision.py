"""The offline judge's fitted decision: from a claim's signals to entailed / partial / not.

The rule checks of :mod:`~clineval.judges.offline.entailment` find what a claim and the
evidence share and where they conflict. Conflicts (another number, side, drug, organism,
status, polarity) decide on their own: a clinical swap is ``not_entailed``/``incorrect``
whatever else the texts share. Everything else (how much of the claim the evidence
supports, and so whether it is entailed, partly or not) is decided by a small logistic
regression over interpretable :class:`Signals`, fitted by ``validation/fit_decision.py`` on
human-labelled and hand-written pairs and shipped as ``decision.json`` beside this module
(its coefficients, the data it was fitted on and its leave-one-dataset-out figures).

The probability of "entailed" is the verdict's graded ``support``; a threshold of it, fitted
with it, says which claims are entailed, except that a claim with a clinical term the
evidence does not state is never entailed; of the others, those whose main concept the
evidence states are partly entailed (:meth:`DecisionModel.label`).
"""

from __future__ import annotations

import json
import math
from dataclasses import astuple, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "DECISION_FILE",
    "DecisionModel",
    "Signals",
    "load_decision",
    "packaged_decision",
]

DECISION_FILE = Path(__file__).resolve().parent / "decision.json"


@dataclass(frozen=True)
class Signals:
    """What the rule checks measured for one claim against its best span of evidence.

    Every field is a number; the names are the fitted model's feature names."""

    support: float
    """Weighted share of the claim's content the span supports (words, synonyms, values,
    and close contextual matches of non-clinical words)."""
    graded: float
    """The support plus close-in-meaning credit for clinical terms not stated as such."""
    coverage: float
    """Weighted share of the claim's terms matched lexically (no contextual credit)."""
    similarity: float
    """MiniLM cosine of the claim and the span."""
    max_similarity: float
    """The highest cosine of the claim with any one evidence unit."""
    strict_missing: float
    """Weighted share of the claim that is clinical or rare and not stated in the span."""
    key_matched: float
    """Share of the claim's key terms (drug, problem, lab, site, number) matched (1 without any)."""
    has_key: float
    """1 when the claim has a key term."""
    number_missing: float
    """1 when a number, quantity or date of the claim is not in the span."""
    concept_missing: float
    """Share of the claim's vocabulary concepts (diseases, findings, drugs, body parts)
    the span names neither as the same concept nor as a narrower one (0 without any)."""
    opposite_polarity: float
    """1 when a shared problem is negated in one text and affirmed in the other, in a way
    the negation check does not count as a contradiction."""
    whole: float
    """1 when the support was found only across the whole evidence."""
    paired: float
    """1 when the support was found across two sentences."""
    length: float
    """log(1 + number of the claim's content terms)."""
    rule_entailed: float
    """1 when the coverage rules alone would call the claim entailed."""
    rule_partial: float
    """1 when the coverage rules alone would call it partly entailed."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def vector(self) -> tuple[float, ...]:
        return tuple(float(x) for x in astuple(self))


class DecisionModel(BaseModel):
    """A fitted logistic regression from :class:`Signals` to P(entailed), with its thresholds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    entail_threshold: float = Field(ge=0.0, le=1.0)
    """P(entailed) at or above which the claim is ``entailed``."""
    trained_on: dict[str, int] = Field(default_factory=dict)
    """Items per data set the coefficients were fitted on."""
    figures: dict[str, Any] = Field(default_factory=dict)
    """Leave-one-dataset-out figures written by the fitting script."""

    @model_validator(mode="after")
    def _consistent(self) -> DecisionModel:
        n = len(self.features)
        if not (len(self.mean) == len(self.scale) == len(self.coef) == n):
            raise ValueError("features, mean, scale and coef must have the same length")
        unknown = sorted(set(self.features) - set(Signals.names()))
        if unknown:
            raise ValueError(f"unknown feature(s) {unknown}; known: {list(Signals.names())}")
        return self

    def probability(self, signals: Signals) -> float:
        values = dict(zip(Signals.names(), signals.vector(), strict=True))
        z = self.intercept
        for name, mean, scale, coef in zip(self.features, self.mean, self.scale, self.coef, strict=True):
            z += coef * (values[name] - mean) / (scale or 1.0)
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def label(self, probability: float, signals: Signals) -> str:
        """``entailed`` from the entailed threshold up, except that a claim with a clinical or
        rare term the evidence does not state (in the same words, a synonym or abbreviation,
        or the same concept of the clinical vocabulary) is never ``entailed``, only
        ``partial``. Below it, ``partial`` when the main concept is there and part of the
        claim is not (TBFact's definition, which the coverage rules check: no labelled set
        tells a partly supported claim from an absent one, so this boundary is not fitted),
        else ``not_entailed``."""
        if probability >= self.entail_threshold:
            return "partial" if signals.strict_missing > 0 else "entailed"
        if signals.rule_entailed or signals.rule_partial:
            return "partial"
        return "not_entailed"

    def describe(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "entail_threshold": self.entail_threshold,
            "trained_on": dict(self.trained_on),
        }


def load_decision(path: str | Path) -> DecisionModel:
    """Read a decision model written by ``validation/fit_decision.py``."""
    from clineval.errors import ConfigError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the decision model ({exc.strerror})") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: not JSON ({exc})") from None
    try:
        return DecisionModel.model_validate(data)
    except ValueError as exc:
        raise ConfigError(f"{path}: not a decision model: {exc}") from None


@lru_cache(maxsize=1)
def packaged_decision() -> DecisionModel | None:
    """The decision model shipped with clineval, or ``None`` when none is shipped (the rule
    thresholds then decide alone)."""
    if not DECISION_FILE.exists():
        return None
    return load_decision(DECISION_FILE)
