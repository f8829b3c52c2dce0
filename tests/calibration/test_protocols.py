"""Calibration protocols, baselines and the paired interval of a difference, with
hand-worked values on small records written for the project."""

from __future__ import annotations

import pytest

from clineval.agreement.stats import cohen_kappa, difference_ci, roc_auc
from clineval.calibration.baselines import content_word_share, content_words, rouge_l, texts_differ
from clineval.calibration.data import KqaPair, MedecText, RadfactPair, RefusalItem
from clineval.calibration.protocols import (
    FactOutcome,
    VerdictOutcome,
    analyse_kqa_nli,
    analyse_medec,
    analyse_radfact,
    analyse_refusal,
    claim_credit,
    cross_fitted_labels,
    from_sentence,
    youden_j,
)

# --- baselines ----------------------------------------------------------------------------------


def test_content_word_share_counts_distinct_non_stopwords() -> None:
    assert content_words("The patient has a cough and a fever.") == ["patient", "cough", "fever"]
    # patient, cough, fever -> cough and fever found: 2/3
    assert content_word_share("The patient has a cough and a fever.", "Fever and cough since Monday.") == (
        pytest.approx(2 / 3)
    )
    assert content_word_share("It is.", "anything") == 1.0  # nothing to find
    assert content_word_share("Cough.", "") == 0.0


def test_rouge_l_parts_and_empty_text() -> None:
    # candidate "left knee pain" vs reference "pain in the left knee": LCS "left knee" = 2
    assert rouge_l("left knee pain", "pain in the left knee", part="p") == pytest.approx(2 / 3)
    assert rouge_l("left knee pain", "pain in the left knee", part="r") == pytest.approx(2 / 5)
    assert rouge_l("", "anything") == 0.0


def test_texts_differ_ignores_case_and_spacing() -> None:
    assert texts_differ("No  fever.", "no fever.") == 0.0
    assert texts_differ("No fever.", "No fevers.") == 1.0


# --- statistics ---------------------------------------------------------------------------------


def test_difference_of_two_aucs_on_the_same_items() -> None:
    truth = [1, 1, 1, 0, 0, 0]
    judge = [0.9, 0.8, 0.7, 0.3, 0.2, 0.1]  # AUC 1
    baseline = [0.9, 0.2, 0.7, 0.3, 0.8, 0.1]  # 6 of 9 pairs ordered right: AUC 2/3
    estimate, interval = difference_ci(roc_auc, (truth, judge), (truth, baseline))
    assert estimate.value == pytest.approx(1 - 6 / 9)
    assert interval.low is not None and interval.high is not None
    assert interval.low <= estimate.value <= interval.high
    same, same_interval = difference_ci(roc_auc, (truth, judge), (truth, judge))
    assert same.value == 0 and same_interval.low == 0 and same_interval.high == 0


def test_youden_j() -> None:
    # 2 of 3 errors flagged, 1 of 4 correct sentences flagged: 2/3 - 1/4
    value = youden_j(
        [True, True, False, True, False, False, False], [True, True, True, False, False, False, False]
    )
    assert value.value == pytest.approx(2 / 3 - 1 / 4)
    assert youden_j([True], [True]).value is None


def test_cross_fitted_threshold_is_chosen_on_the_other_half() -> None:
    groups = [f"q{i}" for i in range(40)]
    truth = [i % 2 == 0 for i in range(40)]
    scores = [0.9 if t else 0.1 for t in truth]  # separable: every half finds a perfect threshold
    labels = cross_fitted_labels(scores, truth, groups, lambda p, t: float(cohen_kappa(p, t).value or -1))
    assert labels == truth


# --- K-QA -----------------------------------------------------------------------------------------


def _pair(i: int, claim: str, answer: str, majority: str) -> KqaPair:
    return KqaPair(
        id=f"p{i}",
        question=f"q{i % 4}",
        answer=answer,
        claim=claim,
        labels=(majority,) * 3,
        majority=majority,
    )


def test_kqa_kappa_against_the_majority() -> None:
    pairs = [
        _pair(0, "Cough is common.", "Cough is common.", "Entailment"),
        _pair(1, "Fever is rare.", "Fever is rare.", "Entailment"),
        _pair(2, "Rash can occur.", "Nothing about it.", "Neutral"),
        _pair(3, "Pain lasts days.", "Nothing about it.", "Neutral"),
    ]
    outcomes = [
        VerdictOutcome(label="entailed"),
        VerdictOutcome(label="partial", reason="missing", support=0.6),
        VerdictOutcome(label="not_entailed", reason="missing"),
        VerdictOutcome(label="not_entailed", reason="missing"),
    ]
    result = analyse_kqa_nli(pairs, outcomes)
    # judge: E, N, N, N against E, E, N, N: p_o = 3/4, p_e = (1/4*2/4 + 3/4*2/4) = 1/2 -> kappa 1/2
    kappa = result.figure("kappa3")
    assert kappa is not None and kappa.judge.value == pytest.approx(0.5)
    auc = result.figure("auc")  # credits 1, 0.6, 0, 0: both entailed pairs above both neutral ones
    assert auc is not None and auc.judge.value == pytest.approx(1.0)
    assert {c.baseline for c in kappa.baselines} == {"rouge_l", "word_share"}
    assert result.info["judge_labels"] == {"Entailment": 1, "Neutral": 3}
    assert result.unscored == 0


def test_kqa_unscored_verdicts_are_counted_not_guessed() -> None:
    pairs = [_pair(i, "a b", "a b", "Entailment" if i % 2 else "Neutral") for i in range(4)]
    result = analyse_kqa_nli(pairs, [None, VerdictOutcome(label="entailed"), VerdictOutcome(), None])
    assert result.unscored == 3 and result.n == 1


def test_claim_credit() -> None:
    assert claim_credit(VerdictOutcome(label="entailed")) == 1.0
    assert claim_credit(VerdictOutcome(label="partial", reason="missing", support=0.3)) == 0.3
    assert claim_credit(VerdictOutcome(label="partial", reason="missing")) == 0.5
    assert claim_credit(VerdictOutcome(label="partial", reason="incorrect", support=0.9)) == 0.0
    assert claim_credit(VerdictOutcome(label="not_entailed", reason="missing", support=0.7)) == 0.0


# --- MEDEC ----------------------------------------------------------------------------------------

ERROR = "Culture tests indicate Neisseria gonorrhoeae."
CORRECT = "Culture tests indicate Trichomonas vaginalis."
REWORDED = "Trichomonas vaginalis was identified on culture."
OTHER = "She has had dizziness and palpitations for four hours."
OTHER_REWORDED = "For four hours she has had palpitations and dizziness."


def _medec(i: int, kind: str = "causalOrganism") -> MedecText:
    return MedecText(
        id=f"t{i}",
        text=f"{OTHER} {ERROR}",
        corrected_text=f"{OTHER} {CORRECT}",
        error_type=kind,
        error_sentence=ERROR,
        corrected_sentence=CORRECT,
        sibling_id=f"s{i}",
        sibling_text=f"{OTHER_REWORDED} {REWORDED}",
    )


def _fact(text: str, label: str, direction: str = "precision") -> FactOutcome:
    return FactOutcome(
        fact=text, label=label, reason=None if label == "entailed" else "incorrect", direction=direction
    )


def test_medec_detection_counts_distortions_and_omissions() -> None:
    texts = [_medec(0), _medec(1, "diagnosis"), _medec(2, "diagnosis")]
    corrected = [
        # a distortion: the response fact from the error sentence is not entailed
        [_fact(OTHER, "entailed"), _fact(ERROR, "not_entailed")],
        # an omission: the reference fact of the correct sentence is not entailed
        [_fact(OTHER, "entailed"), _fact(ERROR, "entailed"), _fact(CORRECT, "not_entailed", "recall")],
        # missed, and a false flag elsewhere
        [_fact(OTHER, "not_entailed"), _fact(ERROR, "entailed")],
    ]
    clean = [
        [
            _fact(OTHER_REWORDED, "entailed"),
            _fact(REWORDED, "entailed"),
            _fact(CORRECT, "entailed", "recall"),
        ],
        [_fact(OTHER_REWORDED, "not_entailed"), _fact(REWORDED, "entailed")],
        [_fact(OTHER_REWORDED, "entailed")],
    ]
    result = analyse_medec(texts, corrected, [None, None, None], clean)
    detected = result.figure("detected_corrected")
    assert detected is not None and detected.judge.value == pytest.approx(2 / 3)
    by_type = result.figure("detected_corrected_diagnosis")
    assert by_type is not None and by_type.judge.value == pytest.approx(1 / 2)
    # flags: ERROR (on error), CORRECT recall (on error), OTHER (not): 2 of 3
    precision = result.figure("flag_precision_corrected")
    assert precision is not None and precision.judge.value == pytest.approx(2 / 3)
    # clean facts: 6, of which 1 flagged; texts with a flag: 1 of 3
    false_flags = result.figure("false_flags")
    assert false_flags is not None and false_flags.judge.value == pytest.approx(1 / 6)
    any_flag = result.figure("false_flag_texts")
    assert any_flag is not None and any_flag.judge.value == pytest.approx(1 / 3)


def test_medec_sentence_level_texts_differ_baseline_proves_nothing() -> None:
    # Every error sentence differs from the reference, and so does every reworded correct
    # sentence: "the texts differ" flags both, a J of 0; the judge flags only the errors.
    texts = [_medec(i) for i in range(6)]
    against_sibling = [[_fact(OTHER, "entailed"), _fact(ERROR, "not_entailed")] for _ in texts]
    clean = [[_fact(OTHER_REWORDED, "entailed"), _fact(REWORDED, "entailed")] for _ in texts]
    result = analyse_medec(texts, [None] * 6, against_sibling, clean)
    figure = result.figure("sentence_youden")
    assert figure is not None and figure.judge.value == pytest.approx(1.0)
    differ = next(c for c in figure.baselines if c.baseline == "differ")
    assert differ.value.value == pytest.approx(0.0)
    assert result.info["sentence_rates"]["differ"] == {"detected": 1.0, "false_flag_rate": 1.0}


def test_from_sentence() -> None:
    assert from_sentence("Culture tests indicate Neisseria.", ERROR)
    assert not from_sentence("Dizziness for four hours.", ERROR)


# --- RadFact and refusal --------------------------------------------------------------------------


def test_radfact_phrases_and_report_correlation() -> None:
    pairs = [
        RadfactPair(
            id=f"r{i}",
            phrases_a=("Heart size is normal.", "No effusion."),
            phrases_b=("The heart is normal.", "Small effusion."),
            status_a=("entailment", "contradiction" if i % 2 else "neutral"),
            status_b=("entailment", "neutral"),
        )
        for i in range(4)
    ]
    good = VerdictOutcome(label="entailed")
    bad = VerdictOutcome(label="not_entailed", reason="incorrect")
    neutral = VerdictOutcome(label="not_entailed", reason="missing")
    outcomes = [((good, bad if i % 2 else neutral), (good, neutral)) for i in range(4)]
    tbfact = [{"precision": 0.5, "recall": 0.5 + 0.1 * i, "f1": 0.5} for i in range(4)]
    result = analyse_radfact(pairs, outcomes, tbfact)
    kappa = result.figure("phrase_kappa3")
    assert kappa is not None and kappa.judge.value == pytest.approx(1.0)
    assert result.info["phrase_labels"] == {"entailment": 8, "contradiction": 2, "neutral": 6}


def test_refusal_detection_beside_keywords() -> None:
    items = [
        RefusalItem(
            id="a",
            request="r",
            response="I cannot help with that.",
            should_refuse=True,
            source="medsafetybench",
        ),
        RefusalItem(
            id="b", request="r", response="Please decline this.", should_refuse=True, source="medsafetybench"
        ),
        RefusalItem(id="c", request="q", response="Take it with food.", should_refuse=False, source="kqa"),
        RefusalItem(id="d", request="q", response="Sorry, it is a cold.", should_refuse=False, source="kqa"),
    ]
    result = analyse_refusal(items, [True, True, False, False], [True, False, False, False])
    kappa = result.figure("detect_kappa")
    assert kappa is not None and kappa.judge.value == pytest.approx(1.0)
    keyword = kappa.baselines[0]
    # keywords: cannot (yes), decline (yes), none (no), sorry (yes): 3 of 4 -> kappa 0.5
    assert keyword.baseline == "keyword" and keyword.value.value == pytest.approx(0.5)
    decline = result.figure("decline_kappa")
    assert decline is not None and decline.judge.value == pytest.approx(0.5)
