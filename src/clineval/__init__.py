"""clineval: evaluate clinical AI agents.

The public API is small: build or load cases, pick metrics, optionally an agent and a
judge, and call :func:`evaluate` -- or write the cases as a YAML suite and call :func:`run_suite`.

The names below are imported on first use (PEP 562), so that ``import clineval.errors``
or the ``clineval`` command's start-up does not load the runner, the judges and every
metric; ``from clineval import evaluate`` works as usual.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clineval.api import aevaluate, arescore, evaluate, load_run, rescore
    from clineval.datasets import Dataset, load_dataset
    from clineval.evaltask import EvalTask, EvalTaskResult
    from clineval.judges import Judge, JudgeConfig, JudgeError, ScriptedJudge
    from clineval.metrics import BaseMetric, Metric, MetricSpec, ScoreContext, metric
    from clineval.metrics.trajectory import (
        TrajectoryAnyOrderMatch,
        TrajectoryExactMatch,
        TrajectoryInOrderMatch,
        TrajectoryPrecision,
        TrajectoryRecall,
        TrajectorySingleToolUse,
    )
    from clineval.model import AgentRun, Case, GoldFact, Score, ToolCall, Turn
    from clineval.results import EvalResult
    from clineval.suites import PipelineEvaluator, SuiteCase, SuitePipeline, load_suite, run_suite

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "aevaluate": "clineval.api",
    "arescore": "clineval.api",
    "evaluate": "clineval.api",
    "load_run": "clineval.api",
    "rescore": "clineval.api",
    "Dataset": "clineval.datasets",
    "load_dataset": "clineval.datasets",
    "EvalTask": "clineval.evaltask",
    "EvalTaskResult": "clineval.evaltask",
    "Judge": "clineval.judges",
    "JudgeConfig": "clineval.judges",
    "JudgeError": "clineval.judges",
    "ScriptedJudge": "clineval.judges",
    "BaseMetric": "clineval.metrics",
    "Metric": "clineval.metrics",
    "MetricSpec": "clineval.metrics",
    "ScoreContext": "clineval.metrics",
    "metric": "clineval.metrics",
    "TrajectoryAnyOrderMatch": "clineval.metrics.trajectory",
    "TrajectoryExactMatch": "clineval.metrics.trajectory",
    "TrajectoryInOrderMatch": "clineval.metrics.trajectory",
    "TrajectoryPrecision": "clineval.metrics.trajectory",
    "TrajectoryRecall": "clineval.metrics.trajectory",
    "TrajectorySingleToolUse": "clineval.metrics.trajectory",
    "AgentRun": "clineval.model",
    "Case": "clineval.model",
    "GoldFact": "clineval.model",
    "Score": "clineval.model",
    "ToolCall": "clineval.model",
    "Turn": "clineval.model",
    "EvalResult": "clineval.results",
    "PipelineEvaluator": "clineval.suites",
    "SuiteCase": "clineval.suites",
    "SuitePipeline": "clineval.suites",
    "load_suite": "clineval.suites",
    "run_suite": "clineval.suites",
}

__all__ = [
    "AgentRun",
    "BaseMetric",
    "Case",
    "Dataset",
    "EvalResult",
    "EvalTask",
    "EvalTaskResult",
    "GoldFact",
    "Judge",
    "JudgeConfig",
    "JudgeError",
    "Metric",
    "MetricSpec",
    "PipelineEvaluator",
    "Score",
    "ScoreContext",
    "ScriptedJudge",
    "SuiteCase",
    "SuitePipeline",
    "ToolCall",
    "TrajectoryAnyOrderMatch",
    "TrajectoryExactMatch",
    "TrajectoryInOrderMatch",
    "TrajectoryPrecision",
    "TrajectoryRecall",
    "TrajectorySingleToolUse",
    "Turn",
    "aevaluate",
    "arescore",
    "evaluate",
    "load_dataset",
    "load_run",
    "load_suite",
    "metric",
    "rescore",
    "run_suite",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'clineval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
