"""Meta-evaluation: how well a metric's scores agree with human labels.

>>> from clineval import load_run
>>> from clineval.agreement import agreement_for_run, print_report
>>> report = agreement_for_run(load_run("latest"), "factuality", "labels.csv", kind="binary")
>>> report.value("roc_auc"), report.get("cohen_kappa").ci_low
>>> print_report(report)

:func:`rater_agreement_for_labels` compares two annotators (human–human agreement: two
label files, or two columns of one), and :func:`rater_agreement` two paired sequences.

:func:`predict_ratings` predicts clinicians' ratings (harm, helpfulness, ...) from a run's
ASTRID triad scores with a small classifier, against a majority-class baseline.

:func:`agreement` works on two paired sequences; the statistics (:func:`cohen_kappa`,
:func:`fleiss_kappa`, :func:`roc_auc`, ...) work on arrays and return an
:class:`Estimate` (``value`` is ``None`` with a ``note`` when undefined).
"""

from clineval.agreement.join import agreement_for_run, rater_agreement_for_labels, read_labels
from clineval.agreement.prediction import PredictionReport, TargetReport, predict_ratings
from clineval.agreement.render import prediction_renderable, print_report, report_renderable
from clineval.agreement.report import (
    KINDS,
    AgreementError,
    AgreementReport,
    JoinSummary,
    Kind,
    RaterJoinSummary,
    StatisticResult,
    agreement,
    infer_kind,
    rater_agreement,
)
from clineval.agreement.stats import (
    Estimate,
    Interval,
    accuracy,
    bootstrap_ci,
    cohen_kappa,
    f1,
    fleiss_kappa,
    kendall,
    pearson,
    resample_indices,
    roc_auc,
    spearman,
    within_one_accuracy,
)

__all__ = [
    "KINDS",
    "AgreementError",
    "AgreementReport",
    "Estimate",
    "Interval",
    "JoinSummary",
    "Kind",
    "PredictionReport",
    "RaterJoinSummary",
    "StatisticResult",
    "TargetReport",
    "accuracy",
    "agreement",
    "agreement_for_run",
    "bootstrap_ci",
    "cohen_kappa",
    "f1",
    "fleiss_kappa",
    "infer_kind",
    "kendall",
    "pearson",
    "predict_ratings",
    "prediction_renderable",
    "print_report",
    "rater_agreement",
    "rater_agreement_for_labels",
    "read_labels",
    "report_renderable",
    "resample_indices",
    "roc_auc",
    "spearman",
    "within_one_accuracy",
]
