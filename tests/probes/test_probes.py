"""The clinical probes of validation/probes/probes.jsonl (run by validation/run_probes.py).

The file is well formed, a malformed probe is named by file, line and field, the baselines
decide as documented (hand-worked), and the offline judge passes every probe of each class.

Issue 22 is rebuilding the offline judge: the classes it does not pass yet are listed in
:data:`XFAIL_CLASSES`, the one place to edit. Remove a class from it once it passes (the test
then guards it); an unexpected pass is reported as XPASS, not as a failure.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from validation.run_probes import (
    CLASSES,
    MIN_PER_CLASS,
    OVERLAPS,
    Outcome,
    Probe,
    balanced,
    baseline_passes,
    failures,
    load,
    run_judge,
)

from clineval.errors import ConfigError
from clineval.judges.offline import OfflineJudge

#: Classes of probes the offline judge does not pass yet (issue 22).
XFAIL_CLASSES = frozenset(
    {
        "adjacent_site",
        "disease_subtype",
        "negative_finding_reworded",
    }
)

PROBES = load()
METRICS = ("check", "tbfact", "faithfulness", "conversational_faithfulness", "answer_relevance")


def test_the_probe_file_is_well_formed() -> None:
    ids = [p.id for p in PROBES]
    assert len(ids) == len(set(ids))
    per_class = Counter(p.class_ for p in PROBES)
    assert set(per_class) == set(CLASSES)
    assert all(n >= MIN_PER_CLASS for n in per_class.values()), per_class
    for probe in PROBES:
        assert probe.kind == CLASSES[probe.class_]
        assert probe.metric in METRICS
        if probe.metric == "check":
            assert probe.expect == ("not_entailed" if probe.kind == "error" else "entailed")
    assert not set(XFAIL_CLASSES) - set(CLASSES)


GOOD: dict[str, Any] = {
    "id": "p1",
    "class": "side_swap",
    "kind": "error",
    "metric": "check",
    "evidence": "Left knee effusion.",
    "claim": "Right knee effusion.",
    "expect": "not_entailed",
}
PAIR: dict[str, Any] = {
    "id": "p2",
    "class": "yes_no_wrong_answer",
    "kind": "error",
    "metric": "faithfulness",
    "question": "Can I take ibuprofen with warfarin?",
    "contexts": ["Avoid ibuprofen while taking warfarin."],
    "correct": "No.",
    "wrong": "Yes.",
    "expect": "correct_higher",
}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({**GOOD, "kind": "rewording", "expect": "entailed"}, "holds error probes, not rewording probes"),
        ({**GOOD, "class": "side_swapped"}, "unknown class 'side_swapped'"),
        ({**GOOD, "expect": "entailed"}, "expects 'not_entailed'"),
        ({**GOOD, "response": "Right knee."}, "takes no response"),
        ({**PAIR, "expect": None}, "expects 'correct_higher'"),
        ({**PAIR, "contexts": None}, "needs contexts"),
        ({**PAIR, "max": 1.5}, "field 'max'"),
        ({**GOOD, "id": "p2"}, "probe id 'p2' is also on line 1"),
    ],
)
def test_a_malformed_probe_is_named_by_file_line_and_field(
    tmp_path: Path, bad: dict[str, Any], message: str
) -> None:
    path = tmp_path / "probes.jsonl"
    path.write_text(json.dumps(PAIR) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"probes\.jsonl:2: ") as caught:
        load(path)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_baselines_decide_as_documented() -> None:
    share = OVERLAPS["content-word share"]
    recall_pair = Probe.model_validate(
        {
            "id": "r",
            "class": "list_item_dropped",
            "kind": "error",
            "metric": "tbfact",
            "score": "recall",
            "reference": "ER positive, PR positive, HER2 negative.",
            # the reference's content words {er, positive, pr, her2, negative}: all 5 here ...
            "correct": "ER positive, PR positive and HER2 negative.",
            # ... 4 of 5 here (no "pr"): 1.0 > 0.8, the baseline passes
            "wrong": "ER positive and HER2 negative.",
            "expect": "correct_higher",
        }
    )
    same_words = Probe.model_validate(
        {**PAIR, "correct": "No, avoid ibuprofen.", "wrong": "Yes, ibuprofen."}
    )  # {avoid, ibuprofen} 2 of 2 and {yes, ibuprofen} 1 of 2 in the context: 1.0 > 0.5, passes
    tie = Probe.model_validate({**PAIR})  # "no" is a stopword (share 1.0), "yes" is not in the context (0.0)
    assert baseline_passes([recall_pair, same_words, tie], share) == [True, True, True]
    reversed_pair = Probe.model_validate({**PAIR, "correct": "Yes.", "wrong": "No."})
    assert baseline_passes([reversed_pair], share) == [False]


def test_balanced_is_zero_for_a_rule_that_flags_everything() -> None:
    errors = [p for p in PROBES if p.kind == "error"][:3]
    rewordings = [p for p in PROBES if p.kind == "rewording"][:2]
    assert balanced([*errors, *rewordings], [True, True, True, False, False]) == pytest.approx(0.0)
    # 2 of 3 errors and 1 of 2 rewordings: 2/3 + 1/2 - 1
    assert balanced([*errors, *rewordings], [True, True, False, True, False]) == pytest.approx(1 / 6)


@pytest.fixture(scope="module")
def offline() -> dict[str, Outcome]:
    """Every probe run once with one offline judge."""
    return {o.probe: o for o in run_judge(PROBES, OfflineJudge())}


@pytest.mark.parametrize(
    "cls",
    [
        pytest.param(
            c,
            marks=pytest.mark.xfail(
                strict=False, reason=f"issue 22: the offline judge does not pass every {c} probe yet"
            ),
        )
        if c in XFAIL_CLASSES
        else c
        for c in CLASSES
    ],
)
def test_the_offline_judge_passes_every_probe_of_the_class(cls: str, offline: dict[str, Outcome]) -> None:
    probes = [p for p in PROBES if p.class_ == cls]
    assert len(probes) >= MIN_PER_CLASS
    missed = failures(probes, [offline[p.id] for p in probes])
    assert not missed, "\n".join(missed)
