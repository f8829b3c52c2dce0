"""Score states: scored, error (never a value), not applicable."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from clineval.model import Score


def test_states() -> None:
    assert Score(value=0.0).status == "scored"
    assert Score(sub_scores={"rouge1": 0.4}).status == "scored"
    assert Score.failed("judge timed out").status == "error"
    assert Score.not_applicable("no informative sentence").status == "not_applicable"
    assert Score().status == "not_applicable"


def test_error_carries_no_value() -> None:
    with pytest.raises(ValidationError, match="carries no value"):
        Score(value=0.0, error="boom")


def test_bool_becomes_number_and_nan_is_rejected() -> None:
    assert Score(value=True).value == 1.0
    with pytest.raises(ValidationError, match="finite"):
        Score(value=math.nan)
    with pytest.raises(ValidationError, match="finite"):
        Score(sub_scores={"x": math.inf})


def test_round_trip_ignores_derived_status() -> None:
    score = Score(value=0.5, label="partial", details={"n": 2})
    again = Score.model_validate(score.model_dump())
    assert again == score
