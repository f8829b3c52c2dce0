"""Lexical response metrics: exact_match, token_f1, rouge and bleu."""

from __future__ import annotations

from typing import Any

import pytest

from clineval.errors import ConfigError
from clineval.metrics.base import BaseMetric, Metric, ScoreContext, score_case
from clineval.metrics.registry import build_metric, get_entry
from clineval.metrics.text import (
    Bleu,
    ExactMatch,
    Rouge,
    TokenF1,
    clinical_tokens,
    expected_as_text,
    normalize_answer,
    split_sentences,
)
from clineval.model import Case, Score

TEXT_METRICS = ("exact_match", "token_f1", "rouge", "bleu")


def make_case(**fields: Any) -> Case:
    return Case(id="case-1", **fields)


def run(metric: Metric, **fields: Any) -> Score:
    result = metric.score(make_case(**fields), ScoreContext())
    assert isinstance(result, Score)
    return result


# --- exact_match -------------------------------------------------------------------


def test_exact_match_normalises_case_whitespace_and_trailing_punctuation() -> None:
    score = run(ExactMatch(), response="  Metformin   500 MG. ", reference="metformin 500 mg")
    assert score.value == 1.0
    assert score.label == "match"
    assert score.details["response"] == "metformin 500 mg"
    assert score.details["target"] == "metformin 500 mg"


def test_exact_match_applies_nfkc() -> None:
    # Full-width letters and digits fold to ASCII under NFKC.
    score = run(ExactMatch(), response="ＨｂＡ１ｃ", reference="HbA1c")
    assert score.value == 1.0


def test_exact_match_keeps_internal_punctuation() -> None:
    # Only *trailing* sentence punctuation goes: 0.5 mg is not 5 mg.
    score = run(ExactMatch(), response="0.5 mg", reference="5 mg")
    assert score.value == 0.0
    assert score.label == "no_match"
    assert score.details["response"] == "0.5 mg"


def test_exact_match_without_normalisation_compares_exactly() -> None:
    strict = ExactMatch(normalize=False)
    assert run(strict, response="Metformin.", reference="Metformin").value == 0.0
    assert run(strict, response="metformin", reference="Metformin").value == 0.0
    assert run(strict, response="Metformin", reference="Metformin").value == 1.0
    assert run(strict, response="Metformin", reference="Metformin").details["normalize"] is False


def test_exact_match_prefers_expected_over_reference() -> None:
    score = run(ExactMatch(), response="Yes.", expected="yes", reference="no")
    assert score.value == 1.0
    assert score.details["target"] == "yes"


@pytest.mark.parametrize(
    ("expected", "text"),
    [
        (True, "true"),
        (False, "false"),
        (42, "42"),
        (7.5, "7.5"),
        ({"drug": "warfarin", "dose_mg": 5}, '{"drug": "warfarin", "dose_mg": 5}'),
        (["CT", "MRI"], '["CT", "MRI"]'),
        ("Lisinopril", "Lisinopril"),
    ],
)
def test_expected_as_text(expected: Any, text: str) -> None:
    assert expected_as_text(expected) == text


def test_exact_match_on_a_boolean_expected() -> None:
    assert run(ExactMatch(), response="True", expected=True).value == 1.0
    assert run(ExactMatch(), response="yes", expected=True).value == 0.0


def test_exact_match_on_a_json_expected() -> None:
    score = run(ExactMatch(normalize=False), response='{"dose_mg": 5}', expected={"dose_mg": 5})
    assert score.value == 1.0


def test_normalize_answer() -> None:
    assert normalize_answer("  Atrial\n\tFibrillation?! ") == "atrial fibrillation"
    assert normalize_answer("Dose: 2.5 mg;") == "dose: 2.5 mg"


async def test_exact_match_without_expected_or_reference_fails_naming_both() -> None:
    score = await score_case(ExactMatch(), make_case(response="yes"), ScoreContext())
    assert score.status == "error"
    assert score.error is not None
    assert "'expected'" in score.error and "'reference'" in score.error


async def test_exact_match_without_response_fails_naming_it() -> None:
    score = await score_case(ExactMatch(), make_case(reference="yes"), ScoreContext())
    assert score.error is not None and "'response'" in score.error


def test_exact_match_uses_an_empty_expected_rather_than_the_reference() -> None:
    # expected="" is present (and empty), so the reference is not consulted.
    score = run(ExactMatch(), response="yes", expected="", reference="yes")
    assert score.value == 0.0
    assert score.label == "no_match"


# --- token_f1 ----------------------------------------------------------------------


def test_token_f1_hand_worked() -> None:
    # response tokens:  start metformin 500 mg twice daily       (6)
    # reference tokens: metformin 500 mg twice day  ("a" dropped) (5)
    # overlap: metformin 500 mg twice = 4
    # precision 4/6 = 2/3, recall 4/5, F1 = 2·(2/3)(4/5) / (2/3 + 4/5) = 16/22 = 8/11
    score = run(
        TokenF1(), response="Start metformin 500 mg twice daily.", reference="Metformin 500 mg twice a day."
    )
    assert score.value == pytest.approx(8 / 11)
    assert score.sub_scores == {"precision": pytest.approx(2 / 3), "recall": pytest.approx(4 / 5)}
    assert score.details["overlap"] == 4


def test_token_f1_keeps_decimals_whole() -> None:
    # [0.5, mg] vs [5, mg]: only "mg" is shared -> P = R = F1 = 1/2
    score = run(TokenF1(), response="0.5 mg", reference="5 mg")
    assert score.value == pytest.approx(0.5)


def test_token_f1_keeps_blood_pressure_whole() -> None:
    # [bp, 120/80] vs [bp, 80/120]: one shared token of two -> 1/2
    assert run(TokenF1(), response="BP 120/80", reference="BP 80/120").value == pytest.approx(0.5)


def test_token_f1_splits_a_unit_from_its_number() -> None:
    assert run(TokenF1(), response="5mg", reference="5 mg").value == 1.0


def test_token_f1_counts_duplicates_as_a_multiset() -> None:
    # [pain, pain, pain] vs [pain, in, chest]: overlap min(3, 1) = 1 -> P = R = F1 = 1/3
    score = run(TokenF1(), response="pain pain pain", reference="pain in chest")
    assert score.value == pytest.approx(1 / 3)


def test_token_f1_no_overlap_is_zero() -> None:
    score = run(TokenF1(), response="afebrile", reference="tachycardic")
    assert score.value == 0.0
    assert score.sub_scores == {"precision": 0.0, "recall": 0.0}


def test_clinical_tokens() -> None:
    assert clinical_tokens("HbA1c 7.2%, K+ < 3.5; dilute 1:1000 at 08:30") == [
        "hba1c",
        "7.2",
        "k",
        "<",
        "3.5",
        "dilute",
        "1:1000",
        "at",
        "08:30",
    ]
    assert clinical_tokens("The patient's BP was 120/80 mmHg.") == [
        "patient",
        "s",
        "bp",
        "was",
        "120/80",
        "mmhg",
    ]
    assert clinical_tokens("An ECG, a CXR and the CT") == ["ecg", "cxr", "and", "ct"]


def test_token_f1_texts_with_no_tokens() -> None:
    # Non-empty texts made only of articles and punctuation have no tokens.
    assert run(TokenF1(), response="The.", reference="a").value == 1.0
    assert run(TokenF1(), response="the", reference="fever").value == 0.0


async def test_token_f1_without_reference_fails_naming_it() -> None:
    score = await score_case(TokenF1(), make_case(response="fever"), ScoreContext())
    assert score.status == "error"
    assert score.error is not None and "'reference'" in score.error
    assert score.details["missing_fields"] == ["reference"]


# --- rouge -------------------------------------------------------------------------


def test_rouge_hand_worked_pair() -> None:
    # reference: the patient has a  fever   response: the patient has no fever
    # ROUGE-1: shared unigrams the, patient, has, fever = 4 of 5 each side -> F = 0.8
    # ROUGE-2: bigrams {the patient, patient has, has a, a fever} vs
    #          {the patient, patient has, has no, no fever}: 2 of 4 -> F = 0.5
    # ROUGE-L: LCS "the patient has fever" = 4 of 5 -> F = 0.8; one sentence, so Lsum = L
    score = run(Rouge(), response="the patient has no fever", reference="the patient has a fever")
    assert score.sub_scores == {
        "rouge1": pytest.approx(0.8),
        "rouge2": pytest.approx(0.5),
        "rougeL": pytest.approx(0.8),
        "rougeLsum": pytest.approx(0.8),
    }
    assert score.value == pytest.approx(0.8)
    assert score.details["rouge2"] == {"precision": 0.5, "recall": 0.5, "f": 0.5}


def test_rouge_type_picks_the_value() -> None:
    score = run(
        Rouge(rouge_type="rouge2"), response="the patient has no fever", reference="the patient has a fever"
    )
    assert score.value == pytest.approx(0.5)


def test_rouge_stemmer_setting() -> None:
    # Stemmed, "fevers/fever" and "resolved/resolves" share their stems; unstemmed, nothing.
    pair = {"response": "fever resolves", "reference": "fevers resolved"}
    assert run(Rouge(rouge_type="rouge1"), **pair).value == pytest.approx(1.0)
    assert run(Rouge(rouge_type="rouge1", use_stemmer=False), **pair).value == 0.0


def test_rouge_lsum_splits_sentences() -> None:
    # reference: "Cough persists. Fever resolved."  response: the two sentences swapped.
    # ROUGE-L over the whole text: LCS of [cough persist fever resolv] and
    #   [fever resolv cough persist] is 2 of 4 -> 0.5.
    # ROUGE-Lsum per sentence: each reference sentence is found whole -> 4 of 4 -> 1.0.
    # ROUGE-2: {cough persist, persist fever, fever resolv} vs
    #   {fever resolv, resolv cough, cough persist}: 2 of 3 -> 2/3.
    score = run(
        Rouge(), response="Fever resolved. Cough persists.", reference="Cough persists. Fever resolved."
    )
    assert score.sub_scores["rougeL"] == pytest.approx(0.5)
    assert score.sub_scores["rougeLsum"] == pytest.approx(1.0)
    assert score.sub_scores["rouge2"] == pytest.approx(2 / 3)
    assert score.value == pytest.approx(1.0)


def test_split_sentences() -> None:
    assert split_sentences("Give 0.5 mg now. Recheck in 2 h! Stable?") == (
        "Give 0.5 mg now.\nRecheck in 2 h!\nStable?"
    )
    assert split_sentences("Line one. Still one\nline two") == "Line one. Still one\nline two"


def test_rouge_rejects_an_unknown_type() -> None:
    with pytest.raises(ValueError, match="rouge9"):
        Rouge(rouge_type="rouge9")


# --- bleu --------------------------------------------------------------------------


def test_bleu_identical_pair_is_one() -> None:
    text = "Patient denies chest pain and shortness of breath."
    score = run(Bleu(), response=text, reference=text)
    assert score.value == pytest.approx(1.0)
    assert score.value is not None and score.value <= 1.0
    # 13a tokenisation splits off the final period: 9 tokens on each side.
    assert score.details["hypothesis_length"] == 9
    assert score.details["reference_length"] == 9
    assert score.details["brevity_penalty"] == pytest.approx(1.0)
    assert score.details["precisions"] == [pytest.approx(1.0)] * 4


def test_bleu_disjoint_pair_is_zero() -> None:
    score = run(Bleu(), response="alpha beta gamma delta", reference="Metformin was stopped today")
    assert score.value == pytest.approx(0.0, abs=1e-9)


def test_bleu_short_hypothesis_hand_worked() -> None:
    # "chest pain" vs "chest pain at rest": the 1- and 2-gram precisions are 1/1 and 1/1;
    # sentence BLEU uses only the orders the hypothesis has, so the geometric mean is 1.
    # Brevity penalty exp(1 - 4/2) = e^-1, so BLEU = e^-1 ≈ 0.3679.
    score = run(Bleu(), response="chest pain", reference="chest pain at rest")
    assert score.value == pytest.approx(0.36787944, abs=1e-6)
    assert score.details["brevity_penalty"] == pytest.approx(0.36787944, abs=1e-6)
    assert score.details["hypothesis_length"] == 2
    assert score.details["reference_length"] == 4


def test_bleu_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="tokenize"):
        Bleu(tokenize="no-such-tokenizer")
    with pytest.raises(ValueError, match="smooth_method"):
        Bleu(smooth_method="sideways")
    assert Bleu(tokenize="char", smooth_method="floor").tokenize == "char"


# --- the empty-text rule, shared by all four -------------------------------------------


@pytest.mark.parametrize("name", TEXT_METRICS)
@pytest.mark.parametrize(
    ("response", "reference", "value"),
    [("", "", 1.0), ("  \n", " ", 1.0), ("", "Hypokalaemia.", 0.0), ("Hypokalaemia.", "  ", 0.0)],
)
def test_empty_text_rule(name: str, response: str, reference: str, value: float) -> None:
    score = run(build_metric(name), response=response, reference=reference)
    assert score.value == value
    assert score.explanation
    assert score.details["empty_text_rule"] is True


def test_empty_text_rule_fills_the_sub_scores() -> None:
    assert run(Rouge(), response="", reference="").sub_scores == {
        "rouge1": 1.0,
        "rouge2": 1.0,
        "rougeL": 1.0,
        "rougeLsum": 1.0,
    }
    assert run(TokenF1(), response="", reference="fever").sub_scores == {
        "precision": 0.0,
        "recall": 0.0,
    }
    assert run(ExactMatch(), response=" ", expected="").label == "match"


@pytest.mark.parametrize("name", ["token_f1", "rouge", "bleu"])
async def test_missing_reference_is_an_error_naming_the_field(name: str) -> None:
    metric = build_metric(name)
    score = await score_case(metric, make_case(response="Afebrile."), ScoreContext())
    assert score.status == "error"
    assert score.error is not None and "'reference'" in score.error


# --- registry ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "cls"),
    [
        ("exact_match", ExactMatch),
        ("exact_match(normalize=false)", ExactMatch),
        ("token_f1", TokenF1),
        ("rouge(rouge_type=rouge1, use_stemmer=false)", Rouge),
        ("bleu(tokenize=intl, smooth_method=none)", Bleu),
    ],
)
def test_builds_through_the_registry(spec: str, cls: type[BaseMetric]) -> None:
    metric = build_metric(spec)
    assert isinstance(metric, cls)
    assert metric.name == spec.partition("(")[0]


def test_registry_settings_reach_the_instance() -> None:
    metric = build_metric("rouge(rouge_type=rouge1, use_stemmer=false)")
    assert isinstance(metric, Rouge)
    assert (metric.rouge_type, metric.use_stemmer) == ("rouge1", False)
    assert build_metric("strict=exact_match(normalize=false)").name == "strict"


@pytest.mark.parametrize("name", TEXT_METRICS)
def test_catalogue_entry(name: str) -> None:
    entry = get_entry(name)
    lexical = "Vertex AI Gen AI evaluation (lexical response metrics)"
    assert entry.source == ("SQuAD-style token F1" if name == "token_f1" else lexical)
    assert "response" in entry.requires
    assert entry.description


@pytest.mark.parametrize(
    "spec",
    [
        "rouge(rouge_type=rouge9)",
        "rouge(use_stemmer=maybe)",
        "bleu(tokenize=whitespace)",
        "bleu(smooth_method=sideways)",
        "exact_match(normalize=perhaps)",
        "token_f1(lowercase=false)",
    ],
)
def test_bad_settings_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError):
        build_metric(spec)


def test_metrics_keep_no_state_between_cases() -> None:
    for name in TEXT_METRICS:
        metric = build_metric(name)
        before = dict(vars(metric))
        first = run(metric, response="Start aspirin 81 mg.", reference="Aspirin 81 mg daily.")
        run(metric, response="Stop warfarin.", reference="Continue warfarin.")
        again = run(metric, response="Start aspirin 81 mg.", reference="Aspirin 81 mg daily.")
        assert vars(metric) == before
        assert again == first
