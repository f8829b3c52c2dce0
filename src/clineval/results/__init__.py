"""Results: aggregates with confidence intervals, tables, and the API's result object."""

from clineval.results.aggregate import MetricAggregate, aggregate, bootstrap_ci
from clineval.results.result import EvalResult

__all__ = ["EvalResult", "MetricAggregate", "aggregate", "bootstrap_ci"]
