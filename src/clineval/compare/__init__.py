"""Comparing stored runs change by change, and gating a run in CI.

>>> from clineval import load_run
>>> from clineval.compare import compare_runs, print_comparison
>>> comparison = compare_runs(load_run("latest~1"), load_run("latest"))
>>> [m.metric for m in comparison.regressed]
>>> print_comparison(comparison, console)

:func:`compare_runs` pairs cases by id and tests each metric (exact McNemar for binary
metrics, a sign-flip permutation test otherwise, Holm-adjusted across metrics);
:mod:`clineval.compare.gates` turns thresholds and comparisons into pass/fail gates and
:func:`write_junit` writes a run and its gates as JUnit XML. See docs/comparing.md.
"""

from clineval.compare.comparison import (
    CaseChange,
    Comparison,
    MetricComparison,
    RunSide,
    StatusChange,
    compare_runs,
    lower_is_better_metric,
)
from clineval.compare.gates import (
    GateResult,
    ThresholdGate,
    check_metric_names,
    check_no_regression,
    check_threshold,
    evaluate_gates,
    parse_threshold,
)
from clineval.compare.junit import junit_report, write_junit
from clineval.compare.render import comparison_renderable, print_comparison
from clineval.compare.stats import (
    holm,
    is_binary,
    mcnemar_exact,
    paired_bootstrap_ci,
    paired_permutation_test,
)

__all__ = [
    "CaseChange",
    "Comparison",
    "GateResult",
    "MetricComparison",
    "RunSide",
    "StatusChange",
    "ThresholdGate",
    "check_metric_names",
    "check_no_regression",
    "check_threshold",
    "compare_runs",
    "comparison_renderable",
    "evaluate_gates",
    "holm",
    "is_binary",
    "junit_report",
    "lower_is_better_metric",
    "mcnemar_exact",
    "paired_bootstrap_ci",
    "paired_permutation_test",
    "parse_threshold",
    "print_comparison",
    "write_junit",
]
