"""agreement(): the statistics chosen for each kind of label, and how labels are read."""

from __future__ import annotations

import functools

import pytest
from rich.console import Console

from clineval.agreement import (
    AgreementError,
    AgreementReport,
    agreement,
    bootstrap_ci,
    cohen_kappa,
    infer_kind,
    report_renderable,
)
from clineval.errors import ClinevalError

FAST = 200


def test_binary_labels_with_a_score() -> None:
    human = ["yes", "yes", "no", "yes", "no", "no", "no", "yes"]
    scores = [0.9, 0.8, 0.3, 0.7, 0.2, 0.1, 0.6, 0.4]
    report = agreement(scores, human, kind="binary", n_resamples=FAST)
    assert report.names == ["roc_auc", "cohen_kappa", "accuracy", "f1"]
    assert report.positive == "yes" and report.threshold == 0.5
    # AUC: positives 0.9 0.8 0.7 0.4 vs negatives 0.3 0.2 0.1 0.6: 15 of 16 pairs ordered.
    assert report.value("roc_auc") == pytest.approx(15 / 16)
    # At 0.5: predictions yes yes no yes no no yes no -> TP 3, FP 1 (0.6), FN 1 (0.4), TN 3.
    # accuracy 6/8; F1 = 6/8; κ: p_o = .75, p_e = .5·.5 + .5·.5 = .5 -> κ = .5
    assert report.value("accuracy") == pytest.approx(0.75)
    assert report.value("f1") == pytest.approx(0.75)
    assert report.value("cohen_kappa") == pytest.approx(0.5)
    for stat in report.statistics:
        assert stat.n == 8
        assert stat.ci_low is not None and stat.ci_high is not None and stat.value is not None
        assert stat.ci_low <= stat.value <= stat.ci_high
    assert not report.kind_inferred


def test_binary_threshold_and_positive() -> None:
    human = [1, 1, 0, 0]
    scores = [3.0, 2.0, 2.5, 1.0]
    no_threshold = agreement(scores, human, kind="binary", n_resamples=FAST)
    assert no_threshold.value("roc_auc") == pytest.approx(0.75)
    assert no_threshold.value("cohen_kappa") is None
    assert "threshold" in (no_threshold.get("cohen_kappa").note or "")
    # ≥ 2.0 predicts 1: predictions 1 1 1 0 -> accuracy 3/4
    given = agreement(scores, human, kind="binary", threshold=2.0, n_resamples=FAST)
    assert given.threshold == 2.0 and given.value("accuracy") == pytest.approx(0.75)
    # With positive=0, the AUC is that of the scores for label 0 (high scores mean 0 here)
    flipped = agreement([0.1, 0.2, 0.8, 0.9], human, kind="binary", positive=0, n_resamples=FAST)
    assert flipped.positive == "0" and flipped.value("roc_auc") == pytest.approx(1.0)
    ordered = agreement(scores, ["bad", "bad", "good", "good"], label_order=["good", "bad"], threshold=2.0)
    assert ordered.kind == "binary" and ordered.positive == "bad"


def test_binary_metric_labels() -> None:
    report = agreement(
        ["yes", "no", "no", "yes"], ["yes", "no", "yes", "yes"], kind="binary", n_resamples=FAST
    )
    assert report.value("accuracy") == pytest.approx(0.75)
    assert "labels" in (report.get("roc_auc").note or "")


def test_binary_label_problems_are_clear() -> None:
    with pytest.raises(AgreementError, match="positive class"):
        agreement([0.1, 0.9], ["good", "bad"], kind="binary")
    with pytest.raises(AgreementError, match="two values"):
        agreement([0.1, 0.9, 0.5], ["yes", "no", "maybe"], kind="binary", positive="yes")
    with pytest.raises(AgreementError, match="not one of"):
        agreement([0.1, 0.9], ["yes", "no"], kind="binary", positive="positive")
    assert issubclass(AgreementError, ClinevalError) and issubclass(AgreementError, ValueError)


def test_ordinal_text_labels_with_an_order() -> None:
    order = ["low", "medium", "high"]
    human = ["low", "low", "medium", "medium", "high", "high"]
    metric = ["low", "medium", "medium", "high", "high", "medium"]
    report = agreement(metric, human, kind="ordinal", label_order=order, n_resamples=FAST)
    assert report.names == [
        "cohen_kappa",
        "weighted_kappa",
        "accuracy",
        "within_one_accuracy",
        "spearman",
        "kendall",
        "pearson",
    ]
    # The three-level example of test_stats: κ = 0.25, quadratic κ = 4/7, 3 of 6 exact, all within one.
    assert report.value("cohen_kappa") == pytest.approx(0.25)
    assert report.value("weighted_kappa") == pytest.approx(4 / 7)
    assert report.value("accuracy") == pytest.approx(0.5)
    assert report.value("within_one_accuracy") == pytest.approx(1.0)
    assert report.label_order == order
    # Case and surrounding spaces do not matter.
    shouty = agreement(
        [m.upper() for m in metric], [f" {h} " for h in human], label_order=order, n_resamples=FAST
    )
    assert shouty.value("weighted_kappa") == pytest.approx(4 / 7)


def test_ordinal_interval_matches_bootstrap_ci() -> None:
    human = [1, 2, 3, 3, 2, 1, 2, 3, 1, 2]
    metric = [1, 2, 2, 3, 3, 1, 2, 3, 2, 2]
    report = agreement(metric, human, kind="ordinal", n_resamples=500)
    fn = functools.partial(cohen_kappa, weights="quadratic", labels=[1, 2, 3])
    interval = bootstrap_ci(fn, human, metric, n_resamples=500)
    stat = report.get("weighted_kappa")
    assert interval.low is not None and interval.high is not None
    assert stat.ci_low == pytest.approx(interval.low) and stat.ci_high == pytest.approx(interval.high)


def test_ordinal_labels_with_a_continuous_metric_get_correlations_only() -> None:
    human = [1, 2, 3, 3, 1]
    scores = [0.1, 0.5, 0.9, 0.7, 0.2]
    report = agreement(scores, human, kind="ordinal", n_resamples=FAST)
    assert report.value("cohen_kappa") is None and "scores" in (report.get("cohen_kappa").note or "")
    rho = report.value("spearman")
    assert rho is not None and rho > 0.9


def test_ordinal_label_problems_are_clear() -> None:
    with pytest.raises(AgreementError, match="order"):
        agreement(["low", "high"], ["low", "high"], kind="ordinal")
    with pytest.raises(AgreementError, match="not in the label order"):
        agreement(["low", "high"], ["low", "hgh"], kind="ordinal", label_order=["low", "high"])
    with pytest.raises(AgreementError, match="neither levels"):
        agreement(["low", "big"], ["low", "high"], kind="ordinal", label_order=["low", "high"])
    with pytest.raises(AgreementError, match="whole numbers"):
        agreement([1, 2], [1.5, 2.0], kind="ordinal")


def test_nominal_labels() -> None:
    human = list("aabbcc")
    metric = list("abbbca")
    report = agreement(metric, human, kind="nominal", n_resamples=FAST)
    assert report.names == ["cohen_kappa", "accuracy", "macro_f1"]
    assert report.value("accuracy") == pytest.approx(4 / 6)
    assert report.value("macro_f1") == pytest.approx((0.5 + 0.8 + 2 / 3) / 3)
    disjoint = agreement([0.2, 0.7, 0.4], ["x", "y", "z"], kind="nominal", n_resamples=FAST)
    assert any("no metric value is one of the human labels" in n for n in disjoint.notes)


def test_continuous_labels() -> None:
    report = agreement([10, 20, 30, 40, 50], [0.2, 0.1, 0.4, 0.3, 0.5], kind="continuous", n_resamples=FAST)
    assert report.names == ["pearson", "spearman", "kendall"]
    assert report.value("spearman") == pytest.approx(0.8)
    assert report.value("pearson") == pytest.approx(0.8)
    with pytest.raises(AgreementError, match="must be numbers"):
        agreement([1, 2], ["a", "b"], kind="continuous")


def test_missing_pairs_are_dropped_and_counted() -> None:
    report = agreement(
        [0.9, None, 0.1, 0.8, 0.3], [1, 0, 0, float("nan"), 0], kind="binary", n_resamples=FAST
    )
    assert report.n == 3 and report.dropped_missing == 2
    assert any("2 pair(s)" in n for n in report.notes)


def test_degenerate_inputs_give_none_with_a_reason() -> None:
    empty = agreement([], [], kind="continuous")
    assert empty.n == 0 and all(s.value is None and s.note for s in empty.statistics)
    one_class = agreement([0.2, 0.9, 0.4], ["yes", "yes", "yes"], kind="binary", n_resamples=FAST)
    assert one_class.value("roc_auc") is None and "both classes" in (one_class.get("roc_auc").note or "")
    constant = agreement([0.5, 0.5, 0.5, 0.5], [1.0, 2.0, 3.5, 4.0], kind="continuous", n_resamples=FAST)
    assert all(s.value is None and "constant" in (s.note or "") for s in constant.statistics)
    assert agreement([1], [1], kind="ordinal").value("cohen_kappa") is None
    report = AgreementReport.model_validate_json(one_class.model_dump_json())
    assert report == one_class


def test_option_mistakes() -> None:
    with pytest.raises(AgreementError, match="threshold"):
        agreement([1, 2], [1, 2], kind="ordinal", threshold=0.5)
    with pytest.raises(AgreementError, match="paired by position"):
        agreement([1, 2], [1], kind="ordinal")
    with pytest.raises(AgreementError, match="label order"):
        agreement([1.0, 2.0], [1.0, 2.0], kind="continuous", label_order=["a", "b"])


def test_kind_inference() -> None:
    assert infer_kind([0, 1, 1]) == "binary"
    assert infer_kind([True, False]) == "binary"
    assert infer_kind(["Yes", "no"]) == "binary"
    assert infer_kind(["good", "bad"], positive="good") == "binary"
    assert infer_kind([1, 2, 5]) == "ordinal"
    assert infer_kind(["low", "high", "medium"], label_order=["low", "medium", "high"]) == "ordinal"
    assert infer_kind([0.5, 1.25]) == "continuous"
    assert infer_kind(["cardiology", "oncology", "renal"]) == "nominal"
    report = agreement([0.1, 0.9, 0.8], [0, 1, 1], n_resamples=FAST)
    assert report.kind == "binary" and report.kind_inferred
    assert any("inferred" in n for n in report.notes)


def test_rendering_shows_values_intervals_and_notes() -> None:
    report = agreement([0.9, 0.8, 0.3, 0.1], ["yes", "yes", "no", "no"], kind="binary", n_resamples=FAST)
    console = Console(record=True, width=160)
    console.print(report_renderable(report))
    text = console.export_text()
    assert "ROC AUC" in text and "1.000" in text and "95% CI" in text and "positive class 'yes'" in text
    assert "200 resamples" in text
