"""A score: what one metric says about one case.

A score is in exactly one of three states, derived from its fields:

``scored``
    ``value`` (or at least one ``sub_scores`` entry) holds a number.
``error``
    the metric could not score the case (a missing field, a judge that failed, an
    exception); ``error`` says why and ``value`` is ``None``. An error is never a 0:
    aggregates count it apart and leave it out of means.
``not_applicable``
    the metric does not apply to this case (for example an answer with no
    informative sentence); ``value`` is ``None`` and ``explanation`` says why.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

ScoreStatus = Literal["scored", "error", "not_applicable"]


def _finite(value: float | None, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{what} must be a finite number, got {value}")
    return value


class Score(BaseModel):
    """The result of one metric on one case."""

    model_config = ConfigDict(extra="forbid")

    value: float | None = None
    label: str | None = None
    explanation: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    sub_scores: dict[str, float | None] = Field(default_factory=dict)
    error: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _drop_derived_status(cls, data: Any) -> Any:
        # ``status`` is derived; a stored score carries it, and reading it back ignores it.
        if isinstance(data, dict) and "status" in data:
            data = {k: v for k, v in data.items() if k != "status"}
        return data

    @field_validator("value", mode="before")
    @classmethod
    def _check_value(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        return value

    @field_validator("value")
    @classmethod
    def _finite_value(cls, value: float | None) -> float | None:
        return _finite(value, "value")

    @field_validator("sub_scores", mode="before")
    @classmethod
    def _check_sub_scores(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: _finite(v, f"sub-score {k!r}") for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _error_has_no_value(self) -> Score:
        if self.error is not None and (
            self.value is not None or any(v is not None for v in self.sub_scores.values())
        ):
            raise ValueError("a score with an error carries no value; drop one of the two")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> ScoreStatus:
        if self.error is not None:
            return "error"
        if self.value is None and all(v is None for v in self.sub_scores.values()):
            return "not_applicable"
        return "scored"

    @classmethod
    def failed(cls, reason: str, **details: Any) -> Score:
        """An unscored case: the metric could not produce a value, for ``reason``."""
        return cls(error=reason, details=details)

    @classmethod
    def not_applicable(cls, reason: str, **details: Any) -> Score:
        """The metric does not apply to this case, for ``reason``."""
        return cls(explanation=reason, label="not_applicable", details=details)
