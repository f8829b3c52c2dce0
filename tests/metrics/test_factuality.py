"""TBFact: hand-worked scores for every policy, both directions kept apart, edge cases."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tests.metrics.fakes import FakeJudge, FakePrimitives

from clineval.errors import ConfigError
from clineval.judges.primitives import Fact, Verdict
from clineval.metrics.base import ScoreContext, score_case
from clineval.metrics.factuality import TBFact, fact_checks, load_reference_facts, tbfact_scores
from clineval.model import Case

RESPONSE = "agent summary"
REFERENCE = "reference summary"

# Response facts (precision direction), checked against the reference:
#   A entailed (1), B partial/missing, C not entailed/incorrect, D not entailed/missing.
PRED = [
    Fact(text="A: 67-year-old man", category="demographics", importance="low"),
    Fact(text="B: adenocarcinoma of the lung, stage IV", category="diagnosis", importance="high"),
    Fact(text="C: carboplatin 50 mg", category="treatment", importance="high"),
    Fact(text="D: ECOG 1", category="other", importance="medium"),
]
# Reference facts (recall direction), checked against the response:
#   W entailed, X partial/missing, Y not entailed/missing.
REF = [
    Fact(text="W: lung adenocarcinoma", category="diagnosis", importance="high"),
    Fact(text="X: KRAS G12C mutation and PD-L1 80%", category="biomarker", importance="high"),
    Fact(text="Y: lives with his wife", category="demographics", importance="low"),
]
VERDICTS = {
    "A: 67-year-old man": Verdict(label="entailed"),
    "B: adenocarcinoma of the lung, stage IV": Verdict(label="partial", reason="missing"),
    "C: carboplatin 50 mg": Verdict(label="not_entailed", reason="incorrect", evidence="carboplatin 5 mg"),
    "D: ECOG 1": Verdict(label="not_entailed", reason="missing"),
    "W: lung adenocarcinoma": Verdict(label="entailed"),
    "X: KRAS G12C mutation and PD-L1 80%": Verdict(label="partial", reason="missing"),
    "Y: lives with his wife": Verdict(label="not_entailed", reason="missing"),
}


def prims(**overrides: object) -> FakePrimitives:
    kwargs: dict[str, object] = {"facts": {RESPONSE: PRED, REFERENCE: REF}, "verdicts": VERDICTS}
    kwargs.update(overrides)
    return FakePrimitives(**kwargs)  # type: ignore[arg-type]


async def run(metric: TBFact, case: Case, fake: FakePrimitives):  # type: ignore[no-untyped-def]
    return await score_case(metric, case, ScoreContext(FakeJudge(fake)))


def test_hand_worked_scores_under_every_policy() -> None:
    fake = prims()
    score = asyncio.run(run(TBFact(), Case(id="c1", input="q", response=RESPONSE, reference=REFERENCE), fake))
    s = score.sub_scores
    # precision: (1 + 0.5 + 0 + 0) / 4 = 0.375; strict 1/4; lenient 2/4
    assert s["precision"] == pytest.approx(0.375)
    assert s["precision_strict"] == pytest.approx(0.25)
    assert s["precision_lenient"] == pytest.approx(0.5)
    # recall: (1 + 0.5 + 0) / 3 = 0.5; strict 1/3; lenient 2/3
    assert s["recall"] == pytest.approx(0.5)
    assert s["recall_strict"] == pytest.approx(1 / 3)
    assert s["recall_lenient"] == pytest.approx(2 / 3)
    # F1 = 2PR/(P+R): 0.375/0.875, (1/6)/(7/12), (2/3)/(7/6)
    assert s["f1"] == pytest.approx(0.375 / 0.875)
    assert s["f1_strict"] == pytest.approx(2 / 7)
    assert s["f1_lenient"] == pytest.approx(4 / 7)
    assert score.value == pytest.approx(0.375 / 0.875)
    # importance: high reference facts W (1) and X (0.5)
    assert s["recall_high"] == pytest.approx(0.75)
    assert s["recall_high_strict"] == pytest.approx(0.5)
    assert s["recall_high_lenient"] == pytest.approx(1.0)
    assert s["recall_low"] == pytest.approx(0.0)
    assert s["recall_medium"] is None  # no medium reference fact: undefined, not 0
    # high response facts B (0.5) and C (0)
    assert s["precision_high"] == pytest.approx(0.25)
    assert s["precision_medium"] == pytest.approx(0.0)
    # categories
    assert s["precision_cat_diagnosis"] == pytest.approx(0.5)
    assert s["recall_cat_diagnosis"] == pytest.approx(1.0)
    assert s["f1_cat_diagnosis"] == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert s["recall_cat_biomarker"] == pytest.approx(0.5)
    assert s["precision_cat_biomarker"] is None
    assert "precision_cat_symptom" not in s  # no fact either way
    # counts
    assert s["n_response_facts"] == 4 and s["n_reference_facts"] == 3
    assert s["inclusions"] == 1 and s["partial_inclusions"] == 1
    assert s["omissions"] == 1 and s["distortions"] == 1 and s["unsupported"] == 1
    # details keep the whole table and the explanation names the distortion and the omission
    facts = score.details["facts"]
    assert [f["direction"] for f in facts] == ["precision"] * 4 + ["recall"] * 3
    assert facts[2]["evidence"] == "carboplatin 5 mg" and facts[2]["reason"] == "incorrect"
    assert "contradicted: C: carboplatin 50 mg" in (score.explanation or "")
    assert "omitted: Y: lives with his wife" in (score.explanation or "")
    # one extraction per text, one entailment call per direction; each direction sees the other text
    assert fake.calls == {"extract_facts": 2, "check_facts": 2}
    assert sorted(fake.evidence_seen) == sorted([REFERENCE, RESPONSE])


def test_directions_use_their_own_counts() -> None:
    # 1 response fact, 4 reference facts: recall must divide by 4, precision by 1.
    checks_p = fact_checks("precision", [Fact(text="p")], [Verdict(label="entailed")])
    checks_r = fact_checks(
        "recall",
        [Fact(text=f"r{i}") for i in range(4)],
        [Verdict(label="entailed")] + [Verdict(label="not_entailed", reason="missing")] * 3,
    )
    s = tbfact_scores(checks_p, checks_r)
    assert s["precision"] == 1.0
    assert s["recall"] == 0.25
    assert s["f1"] == pytest.approx(2 * 0.25 / 1.25)


def test_a_partly_contradicted_fact_is_a_distortion_and_a_partly_missing_one_is_not() -> None:
    # Response facts: P1 partial/incorrect, P2 not_entailed/incorrect, P3 partial/missing,
    # P4 not_entailed/missing, P5 entailed. Distortions are every non-entailed fact the
    # reference contradicts, partial or not: P1 and P2 -> 2. Unsupported is only the
    # wholly missing P4 -> 1 (P3 is partly supported).
    # Reference facts: R1 partial/incorrect, R2 partial/missing, R3 not_entailed/missing.
    # Omissions: R3 -> 1; partial omissions: R2 -> 1; partial inclusions: R1, R2 -> 2.
    checks_p = fact_checks(
        "precision",
        [Fact(text=f"p{i}") for i in range(1, 6)],
        [
            Verdict(label="partial", reason="incorrect"),
            Verdict(label="not_entailed", reason="incorrect"),
            Verdict(label="partial", reason="missing"),
            Verdict(label="not_entailed", reason="missing"),
            Verdict(label="entailed"),
        ],
    )
    checks_r = fact_checks(
        "recall",
        [Fact(text=f"r{i}") for i in range(1, 4)],
        [
            Verdict(label="partial", reason="incorrect"),
            Verdict(label="partial", reason="missing"),
            Verdict(label="not_entailed", reason="missing"),
        ],
    )
    s = tbfact_scores(checks_p, checks_r)
    assert s["distortions"] == 2.0
    assert s["unsupported"] == 1.0
    assert s["omissions"] == 1.0
    assert s["partial_omissions"] == 1.0
    assert s["partial_inclusions"] == 2.0
    assert s["inclusions"] == 0.0
    # precision (default: partial earns 0.5) = (0.5 + 0 + 0.5 + 0 + 1) / 5 = 0.4;
    # recall = (0.5 + 0.5 + 0) / 3 = 1/3; F1 = 2 * 0.4 * (1/3) / (0.4 + 1/3) = (4/15) / (11/15) = 4/11
    assert s["precision"] == pytest.approx(0.4)
    assert s["recall"] == pytest.approx(1 / 3)
    assert s["f1"] == pytest.approx(4 / 11)


@pytest.mark.parametrize(
    ("policy", "expected"), [("strict", 2 / 7), ("default", 0.375 / 0.875), ("lenient", 4 / 7)]
)
def test_policy_chooses_the_value(policy: str, expected: float) -> None:
    score = asyncio.run(
        run(TBFact(policy=policy), Case(id="c", input="q", response=RESPONSE, reference=REFERENCE), prims())  # type: ignore[arg-type]
    )
    assert score.value == pytest.approx(expected)
    assert score.details["policy"] == policy


def test_unknown_policy_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="policy must be one of"):
        TBFact(policy="generous")  # type: ignore[arg-type]


def test_empty_response_gives_zero_recall_and_undefined_precision() -> None:
    fake = prims()
    score = asyncio.run(run(TBFact(), Case(id="c", input="q", response="", reference=REFERENCE), fake))
    assert score.value == 0.0
    assert score.sub_scores["precision"] is None
    assert score.sub_scores["recall"] == 0.0
    assert score.sub_scores["omissions"] == 3
    assert "precision is undefined" in (score.explanation or "")
    assert fake.calls["extract_facts"] == 1  # the empty response is not sent to the judge


def test_no_fact_on_either_side_is_not_applicable() -> None:
    fake = prims(facts={"": [], "Thanks!": [], "ok": []})
    score = asyncio.run(run(TBFact(), Case(id="c", input="q", response="Thanks!", reference="ok"), fake))
    assert score.status == "not_applicable"
    assert "neither" in (score.explanation or "")


def test_reference_without_facts_leaves_recall_undefined() -> None:
    fake = prims(facts={RESPONSE: PRED, "ok": []})
    score = asyncio.run(run(TBFact(), Case(id="c", input="q", response=RESPONSE, reference="ok"), fake))
    assert score.sub_scores["recall"] is None
    assert score.value == 0.0
    assert "recall is undefined" in (score.explanation or "")


def test_gold_facts_skip_extraction_and_are_the_evidence_without_a_reference() -> None:
    fake = prims()
    case = Case(
        id="c",
        input="q",
        response=RESPONSE,
        gold_facts=[{"text": "W: lung adenocarcinoma", "category": "diagnosis", "importance": "high"}],  # type: ignore[list-item]
    )
    score = asyncio.run(run(TBFact(), case, fake))
    assert fake.calls["extract_facts"] == 1  # only the response
    assert score.details["reference_facts_source"] == "gold_facts"
    assert score.sub_scores["recall"] == 1.0
    assert (
        "- W: lung adenocarcinoma" in fake.evidence_seen[0]
        or "- W: lung adenocarcinoma" in fake.evidence_seen[1]
    )


def test_missing_reference_and_gold_facts_is_an_error_naming_both() -> None:
    score = asyncio.run(run(TBFact(), Case(id="c", input="q", response=RESPONSE), prims()))
    assert score.status == "error"
    assert "'reference' nor 'gold_facts'" in (score.error or "")


def test_shared_reference_is_extracted_once() -> None:
    fake = prims()
    metric = TBFact()
    cases = [Case(id=f"c{i}", input="q", response=RESPONSE, reference=REFERENCE) for i in range(5)]

    async def all_cases() -> None:
        await asyncio.gather(*(run(metric, c, fake) for c in cases))

    asyncio.run(all_cases())
    assert fake.calls["extract_facts"] == 1 + 5  # the reference once, each response once


def test_reference_facts_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "facts.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "c1",
                "gold_facts": [{"text": "W: lung adenocarcinoma", "importance": "high"}, "Y: lives alone"],
            }
        )
        + "\n"
    )
    loaded = load_reference_facts(path)
    assert [f.text for f in loaded["c1"]] == ["W: lung adenocarcinoma", "Y: lives alone"]
    fake = prims()
    score = asyncio.run(
        run(
            TBFact(reference_facts=str(path)),
            Case(id="c1", input="q", response=RESPONSE, reference=REFERENCE),
            fake,
        )
    )
    assert score.details["reference_facts_source"] == "reference_facts file"
    assert score.sub_scores["n_reference_facts"] == 2
    assert fake.calls["extract_facts"] == 1


def test_bad_reference_facts_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "facts.jsonl"
    path.write_text('{"id": "c1", "gold_facts": []}\n{not json}\n')
    with pytest.raises(ConfigError, match=r"facts.jsonl:2: not valid JSON"):
        load_reference_facts(path)
    path.write_text('{"id": "c1", "facts": []}\n')
    with pytest.raises(
        ConfigError, match=r"facts.jsonl:1: expected an object with 'id' and a 'gold_facts' list"
    ):
        load_reference_facts(path)


def test_mismatched_verdict_count_is_refused() -> None:
    with pytest.raises(ValueError, match="2 facts but 1 verdicts"):
        fact_checks("precision", [Fact(text="a"), Fact(text="b")], [Verdict(label="entailed")])


def test_headline_sub_scores_come_first() -> None:
    # result tables show the first eight sub-scores of a metric: the headline ones
    checks = fact_checks("precision", [Fact(text="p", importance="high")], [Verdict(label="entailed")])
    keys = list(tbfact_scores(checks, checks))
    assert keys[:8] == [
        "precision",
        "recall",
        "f1",
        "recall_high",
        "f1_strict",
        "f1_lenient",
        "distortions",
        "omissions",
    ]


# --- facts on one side only: the headline and the f1 sub-scores agree ---------------------------


def test_empty_response_gives_f1_zero_in_the_value_and_every_f1_sub_score() -> None:
    # Reference facts W entailed, X partial, Y missing -- but the response is empty, so every
    # reference fact is omitted: R = 0 under every policy, P undefined, F1 = 0 everywhere.
    score = asyncio.run(run(TBFact(), Case(id="c", input="q", response="", reference=REFERENCE), prims()))
    s = score.sub_scores
    assert score.value == 0.0
    assert (s["f1"], s["f1_strict"], s["f1_lenient"]) == (0.0, 0.0, 0.0)
    assert (s["precision"], s["precision_strict"], s["precision_lenient"]) == (None, None, None)
    assert (s["recall"], s["recall_strict"], s["recall_lenient"]) == (0.0, 0.0, 0.0)
    # per category: the reference's categories have F1 0, none is undefined
    assert s["f1_cat_diagnosis"] == 0.0 and s["precision_cat_diagnosis"] is None
    assert score.details["notes"] == [
        "the response states no fact, so precision is undefined and F1 is 0 (nothing is shared)"
    ]


def test_empty_reference_side_gives_f1_zero_and_precision_computed() -> None:
    # Response facts A entailed, B partial, C incorrect, D missing against a reference with no
    # fact: P = (1 + 0.5) / 4 = 0.375 (default), 1/4 strict, 2/4 lenient; R undefined; F1 = 0.
    fake = prims(facts={RESPONSE: PRED, "ok": []})
    score = asyncio.run(run(TBFact(), Case(id="c", input="q", response=RESPONSE, reference="ok"), fake))
    s = score.sub_scores
    assert (s["precision"], s["precision_strict"], s["precision_lenient"]) == (0.375, 0.25, 0.5)
    assert (s["recall"], s["recall_strict"], s["recall_lenient"]) == (None, None, None)
    assert (s["f1"], s["f1_strict"], s["f1_lenient"]) == (0.0, 0.0, 0.0)
    assert score.value == s["f1"] == 0.0
    assert score.details["notes"] == [
        "the reference states no fact, so recall is undefined and F1 is 0 (nothing is shared)"
    ]
    assert "the reference states no fact" in (score.explanation or "")


@pytest.mark.parametrize("policy", ["strict", "default", "lenient"])
def test_the_value_is_the_f1_sub_score_of_its_policy_when_one_side_is_empty(policy: str) -> None:
    fake = prims(facts={RESPONSE: PRED, "ok": []})
    score = asyncio.run(
        run(TBFact(policy=policy), Case(id="c", input="q", response=RESPONSE, reference="ok"), fake)  # type: ignore[arg-type]
    )
    suffix = "" if policy == "default" else f"_{policy}"
    assert score.value == score.sub_scores[f"f1{suffix}"] == 0.0


def test_both_sides_empty_is_not_applicable_without_an_f1() -> None:
    fake = prims(facts={"Thanks!": [], "ok": []})
    score = asyncio.run(run(TBFact(), Case(id="c", input="q", response="Thanks!", reference="ok"), fake))
    assert score.status == "not_applicable"
    assert score.value is None
    assert tbfact_scores([], [])["f1"] is None


@pytest.mark.parametrize(
    ("response_verdict", "reference_verdict", "expected"),
    [
        (Verdict(label="entailed"), Verdict(label="entailed"), (1.0, 1.0, 1.0)),
        # P = 1, R = 0: F1 = 0 (both defined, one of them 0)
        (Verdict(label="entailed"), Verdict(label="not_entailed", reason="missing"), (1.0, 0.0, 0.0)),
        # P = 0.5, R = 1: F1 = 2 * 0.5 / 1.5 = 2/3
        (Verdict(label="partial", reason="missing"), Verdict(label="entailed"), (0.5, 1.0, 2 / 3)),
    ],
)
def test_one_fact_each_side(
    response_verdict: Verdict, reference_verdict: Verdict, expected: tuple[float, float, float]
) -> None:
    fake = FakePrimitives(
        facts={"r": [Fact(text="response fact")], "g": [Fact(text="reference fact")]},
        verdicts={"response fact": response_verdict, "reference fact": reference_verdict},
    )
    score = asyncio.run(run(TBFact(), Case(id="c", input="q", response="r", reference="g"), fake))
    s = score.sub_scores
    assert (s["precision"], s["recall"]) == expected[:2]
    assert s["f1"] == pytest.approx(expected[2])
    assert score.value == s["f1"]
    assert score.details["notes"] == []


def test_one_direction_only_halves_the_calls_and_gives_that_figure() -> None:
    case = Case(id="c", input="q", response=RESPONSE, reference=REFERENCE)
    fake = prims()
    s = asyncio.run(run(TBFact(directions="precision"), case, fake))
    # A 1, B 0.5, C 0, D 0 -> 1.5 / 4
    assert s.value == pytest.approx(1.5 / 4)
    assert s.sub_scores["precision"] == pytest.approx(1.5 / 4)
    assert s.sub_scores["recall"] is None and s.sub_scores["f1"] is None
    assert fake.calls == {"extract_facts": 1, "check_facts": 1}
    assert {f["direction"] for f in s.details["facts"]} == {"precision"}
    assert "precision only" in (s.explanation or "")
    fake = prims()
    s = asyncio.run(run(TBFact(directions="recall", policy="strict"), case, fake))
    # W 1, X partial (strict: 0), Y 0 -> 1 / 3
    assert s.value == pytest.approx(1 / 3)
    assert fake.calls == {"extract_facts": 1, "check_facts": 1}
    with pytest.raises(ConfigError, match="directions"):
        TBFact(directions="sideways")  # type: ignore[arg-type]


def test_one_direction_with_nothing_on_its_side_is_not_applicable() -> None:
    fake = prims(facts={RESPONSE: [], REFERENCE: REF})
    case = Case(id="c", input="q", response=RESPONSE, reference=REFERENCE)
    s = asyncio.run(run(TBFact(directions="precision"), case, fake))
    assert s.status == "not_applicable" and "precision only" in (s.explanation or "")


def test_graded_support_is_kept_with_each_fact() -> None:
    verdicts = {
        **VERDICTS,
        "B: adenocarcinoma of the lung, stage IV": Verdict(label="partial", reason="missing", support=0.7),
    }
    case = Case(id="c", input="q", response=RESPONSE, reference=REFERENCE)
    s = asyncio.run(run(TBFact(), case, prims(verdicts=verdicts)))
    rows = {f["fact"]: f for f in s.details["facts"]}
    assert rows["B: adenocarcinoma of the lung, stage IV"]["support"] == 0.7
    assert rows["A: 67-year-old man"]["support"] is None
    # the default policy still gives a partial fact 0.5, as TBFact does
    assert s.sub_scores["precision"] == pytest.approx(1.5 / 4)
