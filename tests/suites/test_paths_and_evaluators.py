"""Field paths, and the evaluators that ship with clineval, with hand-worked values."""

from __future__ import annotations

import pytest

from clineval.suites.evaluators import ExactMatch, FuzzyMatch, LabelMatch, NumericMatch, TimeToDecision
from clineval.suites.paths import MISSING, WILDCARD, lookup, parse_path

OUTPUT = {
    "patient_information": {"patient_name": "Sarah Sample", "ids": ["SYN-1", "SYN-2"]},
    "criteria": [{"name": "age", "met": True}, {"name": "prescriber", "met": False}],
    "odd": {"a.b": 1, "0": "zero"},
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("patient_information.patient_name", "Sarah Sample"),
        (".patient_information.patient_name", "Sarah Sample"),
        ("patient_information.ids[1]", "SYN-2"),
        ("patient_information.ids.0", "SYN-1"),
        ("patient_information.ids[-1]", "SYN-2"),
        ("criteria[1].met", False),
        ("criteria[*].name", ["age", "prescriber"]),
        ('odd["a.b"]', 1),
        ("odd.0", "zero"),
        ("", OUTPUT),
    ],
)
def test_lookup(path: str, expected: object) -> None:
    assert lookup(OUTPUT, path) == expected


@pytest.mark.parametrize(
    "path", ["patient_information.age", "criteria[5].met", "criteria.name", "decision.x"]
)
def test_lookup_missing(path: str) -> None:
    assert lookup(OUTPUT, path) is MISSING


def test_parse_path_segments_and_errors() -> None:
    assert parse_path("a.b[2][*].c") == ["a", "b", 2, WILDCARD, "c"]
    for bad in ("a..b", "a.", "a]b", "a[x"):
        with pytest.raises(ValueError, match="field path"):
            parse_path(bad)


def test_exact_match_normalises() -> None:
    exact = ExactMatch()
    assert exact(response="  Sarah   SAMPLE. ", ground_truth="sarah sample").value == 1.0
    miss = exact(response="Sara Sample", ground_truth="Sarah Sample")
    assert (miss.value, miss.label) == (0.0, "fail")
    assert ExactMatch(case_sensitive=True)(response="sarah sample", ground_truth="Sarah Sample").value == 0.0
    # empty against empty is a match; empty against a value is not
    assert exact(response="", ground_truth="").value == 1.0
    assert exact(response="", ground_truth="x").value == 0.0


def test_fuzzy_match_hand_worked() -> None:
    # Indel similarity: 2 * LCS / (len a + len b) * 100; "sara sample" (11) in "sarah sample" (12): LCS 11
    score = FuzzyMatch(threshold=95)(response="Sara Sample", ground_truth="Sarah Sample")
    assert score.value == pytest.approx(200 * 11 / 23, abs=1e-3)
    assert score.label == "pass"
    assert FuzzyMatch(threshold=96)(response="Sara Sample", ground_truth="Sarah Sample").label == "fail"
    assert FuzzyMatch()(response="", ground_truth="").value == 100.0
    assert FuzzyMatch()(response="", ground_truth="abc").value == 0.0
    assert (
        FuzzyMatch(scorer="token_sort_ratio")(response="Sample Sarah", ground_truth="Sarah Sample").value
        == 100
    )
    with pytest.raises(ValueError, match="between 0 and 100"):
        FuzzyMatch(threshold=120)


def test_label_match_knows_decision_synonyms() -> None:
    label = LabelMatch()
    assert label(response="Approval", ground_truth="approved").value == 1.0
    assert label(response="Rejected", ground_truth="denied").value == 1.0
    wrong = label(response="Approved", ground_truth="denied")
    assert (wrong.value, wrong.explanation) == (0.0, "expected denied, got approved")
    unknown = label(response="maybe", ground_truth="approved")
    assert unknown.value == 0.0 and "names no known label" in (unknown.explanation or "")
    with pytest.raises(ValueError, match="not a known label"):
        label(response="approved", ground_truth="perhaps")
    custom = LabelMatch(labels={"urgent": ["stat", "emergent"], "routine": ["elective"]})
    assert custom(response="STAT", ground_truth="urgent").value == 1.0


def test_numeric_match() -> None:
    assert NumericMatch(tolerance=0.1)(response="5.95 mmol/L", ground_truth="5.9").value == 1.0
    assert NumericMatch(tolerance=0.01)(response="5.95", ground_truth="5.9").value == 0.0
    assert NumericMatch(tolerance=0.1, relative=True)(response="108", ground_truth="100").value == 1.0
    assert (
        NumericMatch()(response="none", ground_truth="3").explanation == "the response 'none' holds no number"
    )


def test_time_to_decision() -> None:
    assert TimeToDecision.higher_is_better is False
    score = TimeToDecision(max_seconds=2)(latency_s=1.5)
    assert (score.value, score.label) == (1.5, "pass")
    assert TimeToDecision(max_seconds=1)(latency_s=1.5).label == "fail"
    assert TimeToDecision()(latency_s=None).status == "not_applicable"
