"""TBFact: behaviour pinned with values worked by hand from docs/metrics/factuality.md.

Every figure, count and explanation below is computed by hand from the definition (credit 1
entailed, 0 not entailed, partial 0 / 0.5 / 1 under strict / default / lenient; precision and
recall the mean credit of each side's facts; F1 = 2PR / (P + R), 0 with facts on one side or
when P + R = 0), never copied from the code's output.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import pytest
import yaml
from tests.metrics.fakes import FakeJudge, FakePrimitives
from tests.metrics.fakes import score_with as score

from clineval.errors import ConfigError
from clineval.judges.base import JudgeError
from clineval.judges.primitives import DEFAULT_CATEGORIES, Fact, Verdict
from clineval.metrics.base import ScoreContext, score_case
from clineval.metrics.factuality import (
    FactCheck,
    TBFact,
    fact_checks,
    load_reference_facts,
    reference_facts_of_run,
    tbfact_scores,
    write_reference_facts,
)
from clineval.metrics.registry import MetricSpec, build_metric, get_entry
from clineval.model import Case, Score
from clineval.model.case import GoldFact
from clineval.model.run import ResultRecord

RESPONSE = "Response: 58-year-old from Leeds with type 2 diabetes on metformin 1000 mg."
REFERENCE = "Reference: type 2 diabetes, metformin 500 mg, HbA1c 7.2% in March, smoker, penicillin allergy."

# Response facts (precision direction), each with its verdict against the reference.
PRED = [
    Fact(text="Age 58", category="demographics", importance="low"),  # entailed: 1
    Fact(text="Type 2 diabetes since 2015", category="diagnosis", importance="high"),  # partial, missing
    Fact(text="Metformin 1000 mg twice daily.", category="treatment", importance="high"),  # contradicted: 0
    Fact(text="Reports fatigue", category="symptom", importance="medium"),  # vague (ambiguous): 0
    Fact(text="HbA1c 7.2%", category="biomarker", importance="medium"),  # entailed: 1
    Fact(text="Lives in Leeds", category="demographics", importance="low"),  # not mentioned: 0
]
# Reference facts (recall direction), each with its verdict against the response.
REF = [
    Fact(text="Type 2 diabetes", category="diagnosis", importance="high"),  # entailed: 1
    Fact(text="Metformin 500 mg twice daily", category="treatment", importance="high"),  # contradicted: 0
    Fact(text="HbA1c 7.2% in March", category="biomarker", importance="medium"),  # partial, missing
    Fact(text="Smokes 10 cigarettes a day", category="other", importance="low"),  # omitted: 0
    Fact(text="Penicillin allergy.", category="other", importance="high"),  # omitted: 0
]
VERDICTS = {
    "Age 58": Verdict(label="entailed", evidence="58-year-old"),
    "Type 2 diabetes since 2015": Verdict(label="partial", reason="missing"),
    "Metformin 1000 mg twice daily.": Verdict(label="not_entailed", reason="incorrect", evidence="500 mg"),
    "Reports fatigue": Verdict(label="not_entailed", reason="ambiguous"),
    "HbA1c 7.2%": Verdict(label="entailed"),
    "Lives in Leeds": Verdict(label="not_entailed", reason="missing"),
    "Type 2 diabetes": Verdict(label="entailed"),
    "Metformin 500 mg twice daily": Verdict(label="not_entailed", reason="incorrect"),
    "HbA1c 7.2% in March": Verdict(label="partial", reason="missing"),
    "Smokes 10 cigarettes a day": Verdict(label="not_entailed", reason="missing"),
    "Penicillin allergy.": Verdict(label="not_entailed", reason="missing"),
}

# Credits (default / strict / lenient):
#   response:  1, 0.5/0/1, 0, 0, 1, 0     -> P = 2.5/6 = 5/12, strict 2/6 = 1/3, lenient 3/6 = 1/2
#   reference: 1, 0, 0.5/0/1, 0, 0        -> R = 1.5/5 = 3/10, strict 1/5,       lenient 2/5
# F1 default: 2 * 5/12 * 3/10 / (5/12 + 3/10) = (1/4) / (43/60) = 15/43
# F1 strict:  2 * 1/3 * 1/5 / (1/3 + 1/5) = (2/15) / (8/15) = 1/4
# F1 lenient: 2 * 1/2 * 2/5 / (1/2 + 2/5) = (2/5) / (9/10) = 4/9
EXPECTED: dict[str, float | None] = {
    "precision": 5 / 12,
    "recall": 3 / 10,
    "f1": 15 / 43,
    "precision_strict": 1 / 3,
    "recall_strict": 1 / 5,
    "f1_strict": 1 / 4,
    "precision_lenient": 1 / 2,
    "recall_lenient": 2 / 5,
    "f1_lenient": 4 / 9,
    # importance, default policy. Response: high 0.5 and 0; medium 0 and 1; low 1 and 0.
    "precision_high": 0.25,
    "precision_medium": 0.5,
    "precision_low": 0.5,
    # reference: high 1, 0, 0; medium 0.5; low 0. No partial among the high ones.
    "recall_high": 1 / 3,
    "recall_medium": 0.5,
    "recall_low": 0.0,
    "recall_high_strict": 1 / 3,
    "recall_high_lenient": 1 / 3,
    # categories, default policy; F1 0 with facts on one side only, and when P + R = 0
    "precision_cat_demographics": 0.5,  # 1 and 0
    "recall_cat_demographics": None,
    "f1_cat_demographics": 0.0,
    "precision_cat_diagnosis": 0.5,
    "recall_cat_diagnosis": 1.0,
    "f1_cat_diagnosis": 2 / 3,  # 2 * 0.5 * 1 / 1.5
    "precision_cat_treatment": 0.0,
    "recall_cat_treatment": 0.0,
    "f1_cat_treatment": 0.0,  # P + R = 0
    "precision_cat_symptom": 0.0,
    "recall_cat_symptom": None,
    "f1_cat_symptom": 0.0,
    "precision_cat_biomarker": 1.0,
    "recall_cat_biomarker": 0.5,
    "f1_cat_biomarker": 2 / 3,
    "precision_cat_other": None,
    "recall_cat_other": 0.0,
    "f1_cat_other": 0.0,
    # counts
    "n_response_facts": 6.0,
    "n_reference_facts": 5.0,
    "inclusions": 1.0,  # Type 2 diabetes
    "partial_inclusions": 1.0,  # HbA1c in March
    "omissions": 2.0,  # smoking, penicillin allergy
    "partial_omissions": 1.0,  # HbA1c in March (the date is missing)
    "distortions": 1.0,  # metformin 1000 mg (the vague fatigue is no distortion)
    "unsupported": 1.0,  # Leeds (the partly supported diabetes is not unsupported)
}
EXPLANATION = (
    "precision 0.42 over 6 response fact(s), recall 0.30 over 5 reference fact(s), "
    "F1 0.35 (default policy). contradicted: Metformin 1000 mg twice daily. "
    "omitted (high importance): Penicillin allergy."
)


def assert_figures(actual: dict[str, float | None], expected: dict[str, float | None]) -> None:
    assert sorted(actual) == sorted(expected)
    for key, value in expected.items():
        if value is None:
            assert actual[key] is None, key
        else:
            assert actual[key] is not None and math.isclose(actual[key], value, abs_tol=1e-12), (
                key,
                actual[key],
            )


def fake(**overrides: object) -> FakePrimitives:
    kwargs: dict[str, object] = {"facts": {RESPONSE: PRED, REFERENCE: REF}, "verdicts": VERDICTS}
    kwargs.update(overrides)
    return FakePrimitives(**kwargs)  # type: ignore[arg-type]


CASE = Case(id="c1", input="Summarise the diabetes clinic letter.", response=RESPONSE, reference=REFERENCE)


# --- the figures -----------------------------------------------------------------------------------


def test_every_sub_score_and_the_explanation_hand_worked() -> None:
    s = score(TBFact(), CASE, fake())
    assert s.status == "scored"
    assert s.value is not None and math.isclose(s.value, 15 / 43)
    assert_figures(s.sub_scores, EXPECTED)
    assert s.explanation == EXPLANATION
    assert s.details["notes"] == []
    # each direction numbers its own facts from 1, in the judge's order
    assert [(f["direction"], f["id"]) for f in s.details["facts"]] == [
        *(("precision", i) for i in range(1, 7)),
        *(("recall", i) for i in range(1, 6)),
    ]
    # the reference digest is the first 16 hex digits of the reference's SHA-256
    assert s.details["reference_digest"] == hashlib.sha256(REFERENCE.encode("utf-8")).hexdigest()[:16]


def test_the_figures_come_back_from_the_stored_fact_table() -> None:
    # details.facts is the full per-fact table: read back from a stored score (JSON), it
    # gives every figure again.
    stored = Score.model_validate_json(score(TBFact(), CASE, fake()).model_dump_json())
    names = {f.name for f in fields(FactCheck)}
    rows = [FactCheck(**{k: v for k, v in row.items() if k in names}) for row in stored.details["facts"]]
    again = tbfact_scores(
        [r for r in rows if r.direction == "precision"], [r for r in rows if r.direction == "recall"]
    )
    assert_figures(again, EXPECTED)


@pytest.mark.parametrize(
    ("policy", "value", "summary"),
    [
        (
            "strict",
            1 / 4,
            "precision 0.33 over 6 response fact(s), recall 0.20 over 5 reference fact(s), F1 0.25",
        ),
        (
            "lenient",
            4 / 9,
            "precision 0.50 over 6 response fact(s), recall 0.40 over 5 reference fact(s), F1 0.44",
        ),
    ],
)
def test_the_explanation_reports_the_figures_of_its_policy(policy: str, value: float, summary: str) -> None:
    s = score(TBFact(policy=policy), CASE, fake())  # type: ignore[arg-type]
    assert s.value is not None and math.isclose(s.value, value)
    assert s.explanation == EXPLANATION.replace(
        "precision 0.42 over 6 response fact(s), recall 0.30 over 5 reference fact(s), "
        "F1 0.35 (default policy)",
        f"{summary} ({policy} policy)",
    )


def test_no_credit_on_either_side_gives_f1_zero() -> None:
    # P = 0 and R = 0: F1 is 0 (2PR / (P + R) would divide by zero).
    missing = Verdict(label="not_entailed", reason="missing")
    s = tbfact_scores(
        precision_checks=fact_checks("precision", [Fact(text="p")], [missing]),
        recall_checks=fact_checks("recall", [Fact(text="r")], [missing]),
    )
    assert (s["precision"], s["recall"], s["f1"], s["f1_strict"], s["f1_lenient"]) == (
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    )


@pytest.mark.parametrize(
    ("label", "reason", "distortions", "unsupported"),
    [
        ("not_entailed", "incorrect", 1, 0),  # contradicted
        ("partial", "incorrect", 1, 0),  # contradicted in part: still a distortion
        ("not_entailed", "missing", 0, 1),  # the reference does not mention it
        ("partial", "missing", 0, 0),  # partly supported: neither
        ("not_entailed", "ambiguous", 0, 0),
        ("not_entailed", "other", 0, 0),
        ("entailed", None, 0, 0),
    ],
)
def test_each_response_fact_counts_as_its_reason_says(
    label: str, reason: str | None, distortions: int, unsupported: int
) -> None:
    checks = fact_checks("precision", [Fact(text="p")], [Verdict(label=label, reason=reason)])  # type: ignore[arg-type]
    s = tbfact_scores(checks, [])
    assert (s["distortions"], s["unsupported"]) == (distortions, unsupported)
    assert (s["omissions"], s["partial_omissions"], s["inclusions"], s["partial_inclusions"]) == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("label", "reason", "counts"),
    [
        # (inclusions, partial_inclusions, omissions, partial_omissions)
        ("entailed", None, (1, 0, 0, 0)),
        ("partial", "missing", (0, 1, 0, 1)),
        ("partial", "ambiguous", (0, 1, 0, 0)),
        ("partial", "other", (0, 1, 0, 0)),
        ("not_entailed", "missing", (0, 0, 1, 0)),
        ("not_entailed", "incorrect", (0, 0, 0, 0)),
        ("not_entailed", "ambiguous", (0, 0, 0, 0)),
        ("not_entailed", "other", (0, 0, 0, 0)),
    ],
)
def test_each_reference_fact_counts_as_its_reason_says(
    label: str, reason: str | None, counts: tuple[int, int, int, int]
) -> None:
    checks = fact_checks("recall", [Fact(text="r")], [Verdict(label=label, reason=reason)])  # type: ignore[arg-type]
    s = tbfact_scores([], checks)
    assert (s["inclusions"], s["partial_inclusions"], s["omissions"], s["partial_omissions"]) == counts
    assert (s["distortions"], s["unsupported"]) == (0, 0)


def test_a_long_fact_table_pairs_every_fact_with_its_verdict() -> None:
    # A reference made of a patient's whole record can hold hundreds of facts: 300 here,
    # every third entailed -> 100 entailed, recall 1/3, ids 1..300.
    facts = [Fact(text=f"finding {i}") for i in range(300)]
    verdicts = [
        Verdict(label="entailed") if i % 3 == 0 else Verdict(label="not_entailed", reason="missing")
        for i in range(300)
    ]
    checks = fact_checks("recall", facts, verdicts)
    assert [c.id for c in checks] == list(range(1, 301))
    assert [c.fact for c in checks[:2]] == ["finding 0", "finding 1"]
    s = tbfact_scores([], checks)
    assert s["recall"] is not None and math.isclose(s["recall"], 1 / 3)
    assert (s["inclusions"], s["omissions"]) == (100.0, 200.0)


@pytest.mark.parametrize(("n_facts", "n_verdicts"), [(2, 1), (1, 2)])
def test_facts_and_verdicts_that_do_not_pair_are_refused_with_both_counts(
    n_facts: int, n_verdicts: int
) -> None:
    with pytest.raises(ValueError) as raised:
        fact_checks(
            "recall", [Fact(text=f"r{i}") for i in range(n_facts)], [Verdict(label="entailed")] * n_verdicts
        )
    assert str(raised.value) == f"recall: {n_facts} facts but {n_verdicts} verdicts"


# --- the explanation -------------------------------------------------------------------------------


def one_distortion(text: str) -> str:
    """The explanation for one contradicted response fact ``text`` and one entailed reference fact."""
    prims = FakePrimitives(
        facts={"r": [Fact(text=text)], "g": [Fact(text="reference fact")]},
        verdicts={
            text: Verdict(label="not_entailed", reason="incorrect"),
            "reference fact": Verdict(label="entailed"),
        },
    )
    s = score(TBFact(), Case(id="c", input="q", response="r", reference="g"), prims)
    head = (
        "precision 0.00 over 1 response fact(s), recall 1.00 over 1 reference fact(s), "
        "F1 0.00 (default policy). "
    )
    assert s.explanation is not None and s.explanation.startswith(head)
    return s.explanation.removeprefix(head)


@pytest.mark.parametrize(
    ("fact", "shown"),
    [
        # a short fact is shown whole, without its closing period; the sentence gets one
        ("Penicillin allergy.", "contradicted: Penicillin allergy."),
        # up to 90 characters the fact is shown whole
        ("x" * 90, "contradicted: " + "x" * 90 + "."),
        # longer: its first 89 characters and "…", and no period after the "…"
        ("y" * 91, "contradicted: " + "y" * 89 + "…"),
        ("z" * 88 + " and more", "contradicted: " + "z" * 88 + "…"),  # the space before the cut is dropped
        # a fact that ends a sentence with "?" or "!" gets no period after it
        ("Allergy to penicillin?", "contradicted: Allergy to penicillin?"),
    ],
)
def test_a_contradicted_fact_is_named_in_the_explanation(fact: str, shown: str) -> None:
    assert one_distortion(fact) == shown


def test_the_explanation_names_three_distortions_and_three_high_importance_omissions() -> None:
    # Four contradicted response facts: the first three are named. Four omitted reference
    # facts, three of high importance: those three are named, the low one is not.
    pred = [Fact(text=f"wrong {i}") for i in range(1, 5)]
    ref = [Fact(text="omitted low", importance="low")] + [
        Fact(text=f"omitted high {i}", importance="high") for i in range(1, 4)
    ]
    verdicts = {f.text: Verdict(label="not_entailed", reason="incorrect") for f in pred}
    verdicts.update({f.text: Verdict(label="not_entailed", reason="missing") for f in ref})
    prims = FakePrimitives(facts={"r": pred, "g": ref}, verdicts=verdicts)
    s = score(TBFact(), Case(id="c", input="q", response="r", reference="g"), prims)
    assert s.explanation == (
        "precision 0.00 over 4 response fact(s), recall 0.00 over 4 reference fact(s), "
        "F1 0.00 (default policy). "
        "contradicted: wrong 1; wrong 2; wrong 3. "
        "omitted (high importance): omitted high 1; omitted high 2; omitted high 3."
    )
    assert (s.sub_scores["distortions"], s.sub_scores["omissions"]) == (4.0, 4.0)


def test_without_high_importance_omissions_the_first_three_omissions_are_named() -> None:
    ref = [Fact(text=f"omitted {i}", importance="medium") for i in range(1, 5)] + [Fact(text="stated")]
    verdicts = {f.text: Verdict(label="not_entailed", reason="missing") for f in ref[:4]}
    verdicts["stated"] = Verdict(label="entailed")
    verdicts["said"] = Verdict(label="entailed")
    prims = FakePrimitives(facts={"r": [Fact(text="said")], "g": ref}, verdicts=verdicts)
    s = score(TBFact(), Case(id="c", input="q", response="r", reference="g"), prims)
    # P = 1, R = 1/5, F1 = 2 * 0.2 / 1.2 = 1/3
    assert s.explanation == (
        "precision 1.00 over 1 response fact(s), recall 0.20 over 5 reference fact(s), "
        "F1 0.33 (default policy). "
        "omitted: omitted 1; omitted 2; omitted 3."
    )


def test_only_reference_facts_the_response_leaves_out_are_named_as_omitted() -> None:
    # Reference facts contradicted, vague, mismatched for another reason, partly missing and
    # entailed: none is wholly missing, so nothing is named. R = (0 + 0 + 0 + 0.5 + 1) / 5 = 0.3,
    # P = 1, F1 = 0.6 / 1.3 = 0.46.
    ref = [Fact(text=t) for t in ("contradicted", "vague", "other mismatch", "partly stated", "stated")]
    verdicts = {
        "contradicted": Verdict(label="not_entailed", reason="incorrect"),
        "vague": Verdict(label="not_entailed", reason="ambiguous"),
        "other mismatch": Verdict(label="not_entailed", reason="other"),
        "partly stated": Verdict(label="partial", reason="missing"),
        "stated": Verdict(label="entailed"),
        "said": Verdict(label="entailed"),
    }
    prims = FakePrimitives(facts={"r": [Fact(text="said")], "g": ref}, verdicts=verdicts)
    s = score(TBFact(), Case(id="c", input="q", response="r", reference="g"), prims)
    assert s.explanation == (
        "precision 1.00 over 1 response fact(s), recall 0.30 over 5 reference fact(s), "
        "F1 0.46 (default policy)."
    )
    assert (s.sub_scores["omissions"], s.sub_scores["partial_omissions"]) == (0.0, 1.0)


# --- one direction only, settings as a run file gives them ----------------------------------------


def from_run_file(text: str) -> TBFact:
    """The metric built from a run file's ``metrics:`` mapping (YAML, as ``clineval run`` reads it)."""
    metric = build_metric(MetricSpec.model_validate(yaml.safe_load(text)))
    assert isinstance(metric, TBFact)
    return metric


def test_precision_only_from_a_run_file_extracts_no_reference_facts() -> None:
    prims = fake()
    s = score(from_run_file("name: tbfact\nargs: {directions: precision}"), CASE, prims)
    assert prims.calls == {"extract_facts": 1, "check_facts": 1}  # the response only
    assert s.details["reference_facts_source"] == "not needed (precision only)"
    assert s.details["directions"] == "precision"
    # P = 5/12 (as both ways); the value is precision, nothing of the other direction
    assert s.value is not None and math.isclose(s.value, 5 / 12)
    assert s.explanation == "precision 0.42 over 6 fact(s) (default policy; precision only)"
    assert (s.sub_scores["recall"], s.sub_scores["f1"], s.sub_scores["f1_strict"]) == (None, None, None)
    assert [f["direction"] for f in s.details["facts"]] == ["precision"] * 6


def test_recall_only_from_a_run_file_gives_recall() -> None:
    prims = fake()
    s = score(from_run_file("name: tbfact\nargs: {directions: recall, policy: lenient}"), CASE, prims)
    assert prims.calls == {"extract_facts": 1, "check_facts": 1}  # the reference only
    assert s.details["reference_facts_source"] == "extracted from reference"
    # lenient recall: (1 + 0 + 1 + 0 + 0) / 5 = 2/5
    assert s.value is not None and math.isclose(s.value, 0.4)
    assert s.explanation == "recall 0.40 over 5 fact(s) (lenient policy; recall only)"
    assert s.sub_scores["precision"] is None


def test_both_directions_from_a_run_file_is_the_default() -> None:
    prims = fake()
    s = score(from_run_file("name: tbfact\nargs: {directions: both, policy: default}"), CASE, prims)
    assert prims.calls == {"extract_facts": 2, "check_facts": 2}
    assert s.value is not None and math.isclose(s.value, 15 / 43)
    assert s.explanation == EXPLANATION


@pytest.mark.parametrize(
    ("directions", "response_facts", "reference_facts", "explanation"),
    [
        ("precision", [], REF, "the response states no fact (precision only)"),
        ("recall", PRED, [], "the reference states no fact (recall only)"),
    ],
)
def test_one_direction_from_a_run_file_with_nothing_on_its_side_is_not_applicable(
    directions: str, response_facts: list[Fact], reference_facts: list[Fact], explanation: str
) -> None:
    prims = fake(facts={RESPONSE: response_facts, REFERENCE: reference_facts})
    s = score(from_run_file(f"name: tbfact\nargs: {{directions: {directions}}}"), CASE, prims)
    assert s.status == "not_applicable"
    assert s.explanation == explanation
    assert "check_facts" not in prims.calls


# --- a reference shared by many cases ------------------------------------------------------------


class FlakyExtraction(FakePrimitives):
    """Extraction of the reference fails the first time (``fail``) or waits until released (``block``)."""

    def __init__(self, mode: str) -> None:
        super().__init__(facts={RESPONSE: PRED, REFERENCE: REF}, verdicts=VERDICTS)
        self.mode = mode
        self.release = asyncio.Event()
        self.asked = asyncio.Event()
        self.reference_asked = 0

    async def extract_facts(self, text: str, categories: Sequence[str] = DEFAULT_CATEGORIES) -> list[Fact]:
        if text == REFERENCE:
            self.reference_asked += 1
            self.asked.set()
            if self.reference_asked == 1:
                if self.mode == "block":
                    await self.release.wait()
                raise JudgeError("the judge answered 503")
        return await super().extract_facts(text, categories)


def test_a_failed_extraction_of_a_shared_reference_is_asked_again_by_the_next_case() -> None:
    prims, metric = FlakyExtraction("fail"), TBFact()
    first = score(metric, CASE, prims)
    assert first.status == "error" and "503" in (first.error or "")
    second = score(metric, CASE.model_copy(update={"id": "c2"}), prims)
    assert prims.reference_asked == 2
    assert second.value is not None and math.isclose(second.value, 15 / 43)


def test_a_run_stopped_during_a_shared_extraction_reports_no_stray_error() -> None:
    # The run stops (every task is cancelled) while a case awaits the reference's extraction:
    # nothing is left for asyncio to report, and the next case asks for the extraction again.
    prims, metric = FlakyExtraction("block"), TBFact()
    reported: list[dict[str, object]] = []

    async def run() -> Score:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: reported.append(context))
        ctx = ScoreContext(FakeJudge(prims))
        case = asyncio.create_task(score_case(metric, CASE, ctx))
        await prims.asked.wait()
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()
        await asyncio.gather(case, return_exceptions=True)
        for _ in range(3):
            await asyncio.sleep(0)
        return await score_case(metric, CASE.model_copy(update={"id": "c2"}), ctx)

    again = asyncio.run(run())
    assert reported == []
    assert prims.reference_asked == 2
    assert again.value is not None and math.isclose(again.value, 15 / 43)


# --- an empty text is never sent to the judge -----------------------------------------------------


def test_an_empty_response_omits_every_reference_fact_without_asking_the_judge() -> None:
    # R = 0 (all five reference facts omitted), P undefined, F1 0; the three high-importance
    # omissions are named, then the note.
    prims = fake()
    s = score(TBFact(), CASE.model_copy(update={"response": "  "}), prims)
    assert prims.calls == {"extract_facts": 1}  # the reference; no entailment call at all
    assert s.explanation == (
        "precision n/a over 0 response fact(s), recall 0.00 over 5 reference fact(s), "
        "F1 0.00 (default policy). "
        "omitted (high importance): Type 2 diabetes; Metformin 500 mg twice daily; Penicillin allergy. "
        "the response states no fact, so precision is undefined and F1 is 0 (nothing is shared)."
    )
    assert {(f["label"], f["reason"], f["explanation"]) for f in s.details["facts"]} == {
        ("not_entailed", "missing", "the other text is empty")
    }
    assert (s.sub_scores["omissions"], s.sub_scores["n_reference_facts"]) == (5.0, 5.0)


def test_response_facts_against_an_empty_reference_are_unsupported_without_asking_the_judge() -> None:
    prims = fake()
    s = score(TBFact(directions="precision"), CASE.model_copy(update={"reference": ""}), prims)
    assert prims.calls == {"extract_facts": 1}  # the response
    assert s.value == 0.0
    assert s.explanation == "precision 0.00 over 6 fact(s) (default policy; precision only)"
    assert (s.sub_scores["unsupported"], s.sub_scores["distortions"]) == (6.0, 0.0)


# --- settings --------------------------------------------------------------------------------------


class CategoriesSeen(FakePrimitives):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.categories_seen: list[tuple[str, ...]] = []

    async def extract_facts(self, text: str, categories: Sequence[str] = DEFAULT_CATEGORIES) -> list[Fact]:
        self.categories_seen.append(tuple(categories))
        return await super().extract_facts(text, categories)


def test_categories_are_trimmed_lower_cased_and_kept_once() -> None:
    metric = TBFact(categories=[" Diagnosis", "treatment ", "DIAGNOSIS", "Other"])
    assert metric.categories == ("diagnosis", "treatment", "other")
    prims = CategoriesSeen(facts={RESPONSE: PRED, REFERENCE: REF}, verdicts=VERDICTS)
    s = score(metric, CASE, prims)
    assert prims.categories_seen == [("diagnosis", "treatment", "other")] * 2
    # A fact of a category outside the list (the judge's own) still gets its figures:
    # biomarker: P 1 (HbA1c 7.2%), R 0.5 (HbA1c in March), F1 2/3.
    assert s.sub_scores["f1_cat_biomarker"] == pytest.approx(2 / 3)
    assert TBFact(categories=[]).categories == TBFact().categories  # empty: the default six


@pytest.mark.parametrize("categories", [[" "], ["diagnosis", ""]])
def test_a_blank_category_is_a_config_error(categories: list[str]) -> None:
    with pytest.raises(ConfigError) as raised:
        TBFact(categories=categories)
    assert str(raised.value) == "tbfact: categories must be a non-empty list of names"


def test_unknown_directions_and_policy_are_named_in_the_error() -> None:
    with pytest.raises(ConfigError) as raised:
        TBFact(directions="sideways")  # type: ignore[arg-type]
    assert str(raised.value) == "tbfact: directions must be both, precision or recall, not 'sideways'"
    with pytest.raises(ConfigError) as raised:
        TBFact(policy="generous")  # type: ignore[arg-type]
    assert str(raised.value) == "tbfact: policy must be one of strict, default, lenient, not 'generous'"


def test_the_catalogue_lists_tbfact_as_a_judge_metric_of_the_response() -> None:
    entry = get_entry("tbfact")
    assert (entry.needs_judge, entry.requires) == (True, ("response",))
    assert entry.factory is TBFact


# --- curated reference facts -----------------------------------------------------------------------


def test_curated_facts_from_python_stand_in_for_the_reference() -> None:
    # A mapping of case id (any key, read as text) to facts given as text or as mappings.
    # Without a reference, response facts are checked against the curated facts listed as text.
    metric = TBFact(
        reference_facts={
            1: ["Type 2 diabetes", {"text": "Penicillin allergy", "category": "other", "importance": "high"}]
        }
    )
    prims = fake(facts={RESPONSE: PRED})
    s = score(metric, Case(id="1", input="q", response=RESPONSE), prims)
    assert prims.calls == {"extract_facts": 1, "check_facts": 2}  # the response only
    assert REFERENCE not in prims.evidence_seen
    assert "- Type 2 diabetes\n- Penicillin allergy" in prims.evidence_seen
    recall = [(f["fact"], f["category"], f["importance"], f["label"]) for f in s.details["facts"][6:]]
    assert recall == [
        ("Type 2 diabetes", "other", "medium", "entailed"),  # a bare text gets the defaults
        ("Penicillin allergy", "other", "high", "not_entailed"),  # unscripted: missing
    ]
    # R = 1/2; P = 5/12 as before; F1 = 2 * 5/12 * 1/2 / (5/12 + 1/2) = (5/12) / (11/12) = 5/11
    assert s.value is not None and math.isclose(s.value, 5 / 11)


@pytest.mark.parametrize("use_gold_facts", [True, False])
def test_a_cases_gold_facts_keep_their_category_and_importance(use_gold_facts: bool) -> None:
    # Two gold facts: one with category and importance, one bare (category "other",
    # importance "medium"). Against the response: entailed and omitted, R = 1/2.
    case = CASE.model_copy(
        update={
            "gold_facts": [
                GoldFact(text="Type 2 diabetes", category="diagnosis", importance="high"),
                GoldFact(text="Smokes 10 cigarettes a day"),
            ]
        }
    )
    prims = fake()
    s = score(TBFact(use_gold_facts=use_gold_facts), case, prims)
    recall = [
        (f["fact"], f["category"], f["importance"]) for f in s.details["facts"] if f["direction"] == "recall"
    ]
    if use_gold_facts:
        assert s.details["reference_facts_source"] == "gold_facts"
        assert prims.calls["extract_facts"] == 1  # the response only
        assert recall == [
            ("Type 2 diabetes", "diagnosis", "high"),
            ("Smokes 10 cigarettes a day", "other", "medium"),
        ]
        assert (
            s.sub_scores["recall"],
            s.sub_scores["recall_high"],
            s.sub_scores["recall_cat_diagnosis"],
        ) == (
            0.5,
            1.0,
            1.0,
        )
        assert (
            prims.evidence_seen.count(REFERENCE) == 1
        )  # with a reference, response facts are checked against it
    else:  # turned off: the reference's facts are extracted, as without gold facts
        assert s.details["reference_facts_source"] == "extracted from reference"
        assert prims.calls["extract_facts"] == 2
        assert recall == [(f.text, f.category, f.importance) for f in REF]
        assert s.sub_scores["recall"] == pytest.approx(3 / 10)


def test_a_reference_facts_file_may_hold_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "facts.jsonl"
    path.write_text(
        '{"id": "c1", "gold_facts": ["Type 2 diabetes"]}\n\n   \n{"id": 2, "gold_facts": []}\n',
        encoding="utf-8",
    )
    loaded = load_reference_facts(path)
    assert {k: [f.text for f in v] for k, v in loaded.items()} == {"c1": ["Type 2 diabetes"], "2": []}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1, 2]", "expected an object with 'id' and a 'gold_facts' list"),
        ('"c2"', "expected an object with 'id' and a 'gold_facts' list"),
        ('{"gold_facts": []}', "expected an object with 'id' and a 'gold_facts' list"),
        (
            '{"id": "c2", "gold_facts": "Type 2 diabetes"}',
            "expected an object with 'id' and a 'gold_facts' list",
        ),
        ('{"id": "c2", "gold_facts": ["ok", {"text": "x", "importance": "urgent"}]}', "gold_facts[1]: "),
        ('{"id": "c2", "gold_facts": [{"fact": "x"}]}', "gold_facts[0]: "),
    ],
)
def test_a_bad_reference_facts_line_names_file_line_and_item(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "facts.jsonl"
    path.write_text('{"id": "c1", "gold_facts": ["Type 2 diabetes"]}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_reference_facts(path)
    assert str(raised.value).startswith(f"{path}:2: {message}")


def test_an_unreadable_reference_facts_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"
    with pytest.raises(ConfigError) as raised:
        TBFact(reference_facts=str(missing))
    assert (
        str(raised.value) == f"tbfact: cannot read reference_facts file {missing}: No such file or directory"
    )


# --- exporting the facts a run used ----------------------------------------------------------------


def record(metric: str, case_id: str, s: Score) -> ResultRecord:
    """A result record as read back from the store (JSON)."""
    made = ResultRecord(run_id="run1", case_id=case_id, metric=metric, score=s)
    return ResultRecord.model_validate_json(made.model_dump_json())


def test_the_reference_facts_of_a_run_are_its_tbfact_recall_facts(tmp_path: Path) -> None:
    scored = score(TBFact(), CASE, fake())
    results = [
        record("tbfact", "c1", scored),
        record("tbfact", "c2", Score.failed("the judge did not answer")),  # no facts to export
        record("tbfact", "c3", Score.not_applicable("neither the response nor the reference states a fact")),
        record("rouge", "c1", Score(value=0.5)),  # other metrics, named before and after tbfact
        record("tbfact_recall", "c1", scored),
        record("answer_relevance", "c1", scored),
    ]
    rows = reference_facts_of_run(results)
    assert rows == [
        {
            "id": "c1",
            "gold_facts": [{"text": f.text, "category": f.category, "importance": f.importance} for f in REF],
            "source": "extracted from reference",
            "reference_digest": hashlib.sha256(REFERENCE.encode("utf-8")).hexdigest()[:16],
        },
        {"id": "c3", "gold_facts": [], "source": None, "reference_digest": None},
    ]
    # another TBFact of the run, by its name
    assert [r["id"] for r in reference_facts_of_run(results, "tbfact_recall")] == ["c1"]


def test_written_reference_facts_are_json_lines_that_load_back(tmp_path: Path) -> None:
    rows = [
        {
            "id": "c1",
            "gold_facts": [{"text": "Creatinine ≥ 1.5 mg/dL", "category": "biomarker", "importance": "high"}],
        },
        {
            "id": "c2",
            "gold_facts": [{"text": "Café-au-lait spots", "category": "symptom", "importance": "low"}],
        },
    ]
    path = write_reference_facts(rows[:1], tmp_path / "curated" / "diabetes" / "facts.jsonl")
    # written again into the directory that now exists: the file is replaced
    assert write_reference_facts(rows, path) == path == tmp_path / "curated" / "diabetes" / "facts.jsonl"
    text = path.read_text(encoding="utf-8")
    # one JSON object a line, non-ASCII written as is (clinicians edit this file)
    assert text.splitlines() == [json.dumps(r, ensure_ascii=False) for r in rows]
    assert "Creatinine ≥ 1.5 mg/dL" in text and text.endswith("}\n")
    loaded = load_reference_facts(path)
    assert [(f.text, f.importance) for f in loaded["c1"]] == [("Creatinine ≥ 1.5 mg/dL", "high")]
    assert [f.text for f in loaded["c2"]] == ["Café-au-lait spots"]
