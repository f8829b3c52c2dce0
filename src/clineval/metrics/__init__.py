"""Metrics: the protocol, the registry and the built-in catalogue."""

from clineval.metrics.base import BaseMetric, FunctionMetric, Metric, ScoreContext, score_case, to_score
from clineval.metrics.registry import (
    MetricEntry,
    MetricSpec,
    build_metric,
    catalogue,
    metric,
    parse_metric_spec,
    resolve_metric,
)

__all__ = [
    "BaseMetric",
    "FunctionMetric",
    "Metric",
    "MetricEntry",
    "MetricSpec",
    "ScoreContext",
    "build_metric",
    "catalogue",
    "metric",
    "parse_metric_spec",
    "resolve_metric",
    "score_case",
    "to_score",
]
