"""The nli judge's combination of the offline check with the model: the rule by hand, the
evidence windows, and the primitives with a stub model (whose answers the test chooses) on
top of the real offline check."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.judges.nli.stub import StubModel

from clineval.judges.nli.judge import NliPrimitives, NliThresholds, Premise, combine, evidence_windows
from clineval.judges.nli.model import Probabilities
from clineval.judges.primitives import Verdict
from clineval.nlp.embeddings import SentenceEncoder, get_encoder


def three(entailment: float, neutral: float, contradiction: float) -> Probabilities:
    return Probabilities(entailment=entailment, neutral=neutral, contradiction=contradiction)


def premise(p: Probabilities, text: str = "window text", where: str = "window 1 of 1") -> Premise:
    return Premise(text, where, p)


OFFLINE_INCORRECT = Verdict(
    label="not_entailed",
    reason="incorrect",
    evidence="lisinopril 50 mg daily",
    explanation="conflict check (numbers: '5 mg' in the claim, '50 mg' in the evidence)",
    support=0.0,
)
OFFLINE_ENTAILED = Verdict(
    label="entailed", evidence="a dry cough", explanation="coverage check", support=1.0
)
OFFLINE_PARTIAL = Verdict(
    label="partial", reason="ambiguous", evidence="possible pneumonia", explanation="hedged", support=0.4
)
OFFLINE_MISSING = Verdict(label="not_entailed", reason="missing", explanation="not found", support=0.0)


# --------------------------------------------------------------------------- the rule


def test_an_offline_conflict_stays_incorrect_whatever_the_model_says() -> None:
    verdict = combine(OFFLINE_INCORRECT, [premise(three(0.99, 0.01, 0.0))])
    assert (verdict.label, verdict.reason, verdict.support) == ("not_entailed", "incorrect", 0.0)
    assert verdict.evidence == "lisinopril 50 mg daily"
    assert verdict.explanation.startswith("decided by the offline conflict check")
    assert "'5 mg' in the claim" in verdict.explanation and "P(entailment) 0.99" in verdict.explanation


def test_the_model_entails_at_the_threshold_with_its_probability_as_support() -> None:
    premises = [
        premise(three(0.30, 0.60, 0.10), "a dry cough", "the offline span"),
        premise(three(0.50, 0.40, 0.10), "She has a dry cough. No fever.", "window 1 of 2"),
        premise(three(0.20, 0.10, 0.70), "Cough resolved.", "window 2 of 2"),
    ]
    verdict = combine(OFFLINE_MISSING, premises)
    # the best premise (0.50, exactly the threshold) decides, before any contradiction elsewhere
    assert (verdict.label, verdict.reason, verdict.support) == ("entailed", None, 0.5)
    assert verdict.evidence == "She has a dry cough. No fever."
    assert verdict.explanation.startswith("decided by the verifier model: P(entailment) 0.50")
    assert "on window 1 of 2 (≥ 0.5)" in verdict.explanation
    assert "offline check: not_entailed/missing, support 0.00 (not found)" in verdict.explanation


def test_ties_go_to_the_offline_span_which_comes_first() -> None:
    premises = [
        premise(three(0.8, 0.1, 0.1), "the span", "the offline span"),
        premise(three(0.8, 0.1, 0.1), "the window", "window 1 of 1"),
    ]
    assert combine(OFFLINE_ENTAILED, premises).evidence == "the span"


def test_a_contradiction_the_model_finds_is_incorrect_with_no_support() -> None:
    premises = [
        premise(three(0.10, 0.80, 0.10), "unrelated", "window 1 of 2"),
        premise(three(0.05, 0.15, 0.80), "She denies cough.", "window 2 of 2"),
    ]
    verdict = combine(OFFLINE_ENTAILED, premises)
    assert (verdict.label, verdict.reason, verdict.support) == ("not_entailed", "incorrect", 0.0)
    assert verdict.evidence == "She denies cough."
    assert "contradiction is the most probable label (P(entailment) 0.05, P(contradiction) 0.80)" in (
        verdict.explanation
    )


def test_contradiction_counts_only_where_it_is_the_most_probable_label() -> None:
    # 0.45 contradiction but 0.5 neutral: not contradicted; the offline said entailed -> partial
    verdict = combine(OFFLINE_ENTAILED, [premise(three(0.05, 0.50, 0.45))])
    assert (verdict.label, verdict.reason, verdict.support) == ("partial", "missing", 0.05)
    assert verdict.evidence == "a dry cough"  # the offline span is quoted


def test_below_the_threshold_partial_keeps_the_offline_reason_else_missing() -> None:
    low = [premise(three(0.30, 0.60, 0.10))]
    partial = combine(OFFLINE_PARTIAL, low)
    assert (partial.label, partial.reason, partial.support) == ("partial", "ambiguous", 0.3)
    assert partial.explanation.startswith("partial: the offline check finds the claim's content")
    missing = combine(OFFLINE_MISSING, low)
    assert (missing.label, missing.reason, missing.support) == ("not_entailed", "missing", 0.3)
    assert "(below 0.5)" in missing.explanation


def test_no_premise_keeps_the_offline_verdict() -> None:
    verdict = combine(OFFLINE_MISSING, [])
    assert (verdict.label, verdict.reason, verdict.support) == ("not_entailed", "missing", 0.0)
    assert verdict.explanation.startswith("no evidence for the model to read")


def test_a_two_way_model_never_says_incorrect_by_itself() -> None:
    verdict = combine(OFFLINE_MISSING, [premise(Probabilities(entailment=0.02))])
    assert (verdict.label, verdict.reason) == ("not_entailed", "missing")


def test_the_threshold_is_a_setting() -> None:
    verdict = combine(OFFLINE_MISSING, [premise(three(0.6, 0.3, 0.1))], NliThresholds(entailed=0.7))
    assert verdict.label == "not_entailed"


# --------------------------------------------------------------------------- windows


def test_evidence_windows_by_hand() -> None:
    s = ["s1.", "s2.", "s3.", "s4."]
    # two sentences of 4 tokens fit in 9; each window starts halfway through the one before
    assert evidence_windows(s, [4, 4, 4, 4], 9) == ["s1. s2.", "s2. s3.", "s3. s4."]
    assert evidence_windows(s, [4, 4, 4, 4], 100) == ["s1. s2. s3. s4."]
    # a window inside the one before is left out; a long sentence is a window alone
    assert evidence_windows([*s, "s5."], [3, 3, 3, 3, 10], 9) == ["s1. s2. s3.", "s2. s3. s4.", "s5."]
    assert evidence_windows([], [], 9) == []


# --------------------------------------------------------------------------- with the offline check


@pytest.fixture(scope="module")
def encoder() -> SentenceEncoder:
    return get_encoder()


def prims(
    encoder: SentenceEncoder, rule: Callable[[str, str], Probabilities], max_length: int = 64
) -> NliPrimitives:
    return NliPrimitives(StubModel(rule, max_length), "nli:stub", encoder=encoder)


SWAPS = [
    # (claim, evidence): a dose, a side, an organism, a negation, a drug swapped
    (
        "The patient was started on lisinopril 5 mg daily.",
        "The patient was started on lisinopril 50 mg daily.",
    ),
    ("Pain in the left knee.", "She reports pain in the right knee since Monday."),
    ("The culture grew E. coli.", "The blood culture grew Klebsiella pneumoniae."),
    ("The patient has a fever.", "The patient denies fever. She has a dry cough."),
    ("He was started on losartan for hypertension.", "He was started on lisinopril for hypertension."),
]


@pytest.mark.parametrize(("claim", "evidence"), SWAPS)
def test_clinical_swaps_stay_incorrect_though_the_model_says_entailed(
    encoder: SentenceEncoder, claim: str, evidence: str
) -> None:
    nli = prims(encoder, lambda p, c: three(0.99, 0.01, 0.0))
    [verdict] = nli.check_facts_sync([claim], evidence)
    assert (verdict.label, verdict.reason, verdict.support) == ("not_entailed", "incorrect", 0.0)
    assert verdict.explanation.startswith("decided by the offline conflict check")
    assert "P(entailment) 0.99" in verdict.explanation


def test_the_model_is_asked_about_the_offline_span_and_the_windows(encoder: SentenceEncoder) -> None:
    evidence = "The patient denies fever. She has a dry cough."
    model = StubModel(
        lambda p, c: three(0.9, 0.05, 0.05) if p == "She has a dry cough." else three(0.2, 0.7, 0.1)
    )
    nli = NliPrimitives(model, "nli:stub", encoder=encoder)
    [verdict] = nli.check_facts_sync(["The patient has a cough."], evidence)
    claim = "The patient has a cough."
    assert set(model.asked) == {("She has a dry cough.", claim), (evidence, claim)}
    assert (verdict.label, verdict.support, verdict.evidence) == ("entailed", 0.9, "She has a dry cough.")
    assert "on the offline span" in verdict.explanation
    assert "offline check: entailed, support 0.86" in verdict.explanation  # the fitted decision's P(entailed)


def test_the_model_entails_what_the_offline_check_misses(encoder: SentenceEncoder) -> None:
    nli = prims(encoder, lambda p, c: three(0.8, 0.1, 0.1))
    [verdict] = nli.check_facts_sync(["She takes metformin for diabetes."], "The patient denies fever.")
    assert (verdict.label, verdict.support) == ("entailed", 0.8)
    assert "offline check: not_entailed/missing" in verdict.explanation


def test_the_model_below_the_threshold_makes_an_offline_entailment_partial(encoder: SentenceEncoder) -> None:
    nli = prims(encoder, lambda p, c: three(0.3, 0.6, 0.1))
    [verdict] = nli.check_facts_sync(["The patient has a cough."], "She has a dry cough.")
    assert (verdict.label, verdict.reason, verdict.support) == ("partial", "missing", 0.3)


def test_long_evidence_is_read_in_windows_each_pair_once(encoder: SentenceEncoder) -> None:
    """Max length 16 with 3 special tokens: room 13; the 5-word claim leaves 8 tokens, more than
    half of 13, so windows of up to 8 words: two 4-word sentences each."""
    sentences = ["She has a cough.", "She denies fever.", "Her knee is swollen.", "She takes aspirin daily."]
    model = StubModel(lambda p, c: three(0.1, 0.8, 0.1), max_length=16)
    nli = NliPrimitives(model, "nli:stub", encoder=encoder)
    claims = ["She takes warfarin every day.", "She takes warfarin every day."]
    verdicts = nli.check_facts_sync(claims, " ".join(sentences))
    premises = [p for p, _ in model.asked]
    windows = ["She has a cough. She denies fever.", "She denies fever. Her knee is swollen."]
    windows.append("Her knee is swollen. She takes aspirin daily.")
    assert set(premises) >= set(windows)
    assert len(model.asked) == len(set(model.asked))  # the two equal claims are asked about once
    assert [v.label for v in verdicts] == ["not_entailed", "not_entailed"]


def test_grounding_uses_the_combined_check(encoder: SentenceEncoder) -> None:
    nli = prims(encoder, lambda p, c: three(0.95, 0.03, 0.02))
    [verdict] = nli.check_grounding_sync(
        ["Metformin is taken with meals."], "Take metformin with food.", "How do I take metformin?"
    )
    assert (verdict.label, verdict.support) == ("entailed", 0.95)
    assert "verifier model" in verdict.explanation


def test_describe_names_the_model_and_keeps_the_offline_settings_apart(encoder: SentenceEncoder) -> None:
    described = prims(encoder, lambda p, c: three(0.5, 0.25, 0.25)).describe()
    assert described["name"] == "nli:stub" and described["kind"] == "heuristic"
    assert described["verifier_model"] == {"name": "stub"}
    assert described["verifier_thresholds"] == {"entailed": 0.5, "min_window_share": 0.5}
    assert described["nli_version"] == "nli-verifier/1"
    assert described["offline"]["name"] == "offline" and "heuristic_version" in described["offline"]
    assert "heuristic_version" not in described
