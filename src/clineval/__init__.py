"""clineval: evaluate clinical AI agents.

The public API is small: build or load cases, pick metrics, optionally an agent and a
judge, and call :func:`evaluate` -- or write the cases as a YAML suite and call :func:`run_suite`.
"""

from clineval.api import aevaluate, arescore, evaluate, load_run, rescore
from clineval.datasets import Dataset, load_dataset
from clineval.judges import Judge, JudgeConfig, JudgeError, ScriptedJudge
from clineval.metrics import BaseMetric, Metric, MetricSpec, ScoreContext, metric
from clineval.model import AgentRun, Case, GoldFact, Score, ToolCall, Turn
from clineval.results import EvalResult
from clineval.suites import PipelineEvaluator, SuiteCase, SuitePipeline, load_suite, run_suite

__all__ = [
    "AgentRun",
    "BaseMetric",
    "Case",
    "Dataset",
    "EvalResult",
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
