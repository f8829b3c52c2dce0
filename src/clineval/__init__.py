"""clineval: evaluate clinical AI agents.

The public API is small: build or load cases, pick metrics, optionally an agent and a
judge, and call :func:`evaluate`.
"""

from clineval.api import aevaluate, arescore, evaluate, load_run, rescore
from clineval.datasets import Dataset, load_dataset
from clineval.judges import Judge, JudgeConfig, JudgeError, ScriptedJudge
from clineval.metrics import BaseMetric, Metric, MetricSpec, ScoreContext, metric
from clineval.model import AgentRun, Case, GoldFact, Score, ToolCall, Turn
from clineval.results import EvalResult

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
    "Score",
    "ScoreContext",
    "ScriptedJudge",
    "ToolCall",
    "Turn",
    "aevaluate",
    "arescore",
    "evaluate",
    "load_dataset",
    "load_run",
    "metric",
    "rescore",
]
