"""TBFact's omission counts: whole omissions and partial omissions, counted apart (hand-worked)."""

from __future__ import annotations

import pytest

from clineval.judges.primitives import Fact, Verdict
from clineval.metrics.factuality import fact_checks, tbfact_scores

ENTAILED = Verdict(label="entailed")


def _recall(*verdicts: Verdict) -> dict[str, float | None]:
    facts = [Fact(text=f"r{i}") for i in range(len(verdicts))]
    precision = fact_checks("precision", [Fact(text="p")], [ENTAILED])
    return tbfact_scores(precision, fact_checks("recall", facts, list(verdicts)))


def test_whole_and_partial_omissions_are_counted_apart() -> None:
    # Six reference facts:
    #   r0 entailed                          -> inclusion
    #   r1 partial, reason missing           -> partial inclusion and partial omission
    #   r2 partial, reason ambiguous         -> partial inclusion only (stated, but vaguely)
    #   r3 not entailed, reason missing      -> omission
    #   r4 not entailed, reason missing      -> omission
    #   r5 not entailed, reason incorrect    -> neither (the response contradicts it)
    s = _recall(
        ENTAILED,
        Verdict(label="partial", reason="missing"),
        Verdict(label="partial", reason="ambiguous"),
        Verdict(label="not_entailed", reason="missing"),
        Verdict(label="not_entailed", reason="missing"),
        Verdict(label="not_entailed", reason="incorrect"),
    )
    assert s["n_reference_facts"] == 6
    assert s["inclusions"] == 1
    assert s["partial_inclusions"] == 2
    assert s["omissions"] == 2
    assert s["partial_omissions"] == 1
    # recall (default policy): (1 + 0.5 + 0.5 + 0 + 0 + 0) / 6 = 1/3; strict 1/6; lenient 3/6
    assert s["recall"] == pytest.approx(1 / 3)
    assert s["recall_strict"] == pytest.approx(1 / 6)
    assert s["recall_lenient"] == pytest.approx(0.5)


def test_a_partial_omission_is_never_a_whole_one() -> None:
    s = _recall(Verdict(label="partial", reason="missing"))
    assert (s["omissions"], s["partial_omissions"], s["partial_inclusions"]) == (0, 1, 1)


def test_nothing_missing_gives_zero_counts() -> None:
    s = _recall(ENTAILED, ENTAILED)
    assert (s["omissions"], s["partial_omissions"]) == (0, 0)


def test_no_reference_fact_gives_zero_counts_not_none() -> None:
    s = tbfact_scores(fact_checks("precision", [Fact(text="p")], [ENTAILED]), [])
    assert (s["omissions"], s["partial_omissions"]) == (0.0, 0.0)
    assert s["recall"] is None


def test_precision_direction_never_counts_as_omission() -> None:
    # A response fact the reference lacks is 'unsupported', not an omission.
    precision = fact_checks(
        "precision",
        [Fact(text="p0"), Fact(text="p1")],
        [Verdict(label="not_entailed", reason="missing"), Verdict(label="partial", reason="missing")],
    )
    s = tbfact_scores(precision, fact_checks("recall", [Fact(text="r")], [ENTAILED]))
    assert (s["omissions"], s["partial_omissions"], s["unsupported"]) == (0, 0, 1)
