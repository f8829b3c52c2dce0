"""The data model: cases going in, scores coming out."""

from clineval.model.case import CASE_FIELDS, AgentRun, Case, GoldFact, ToolCall, Turn
from clineval.model.score import Score, ScoreStatus

__all__ = [
    "CASE_FIELDS",
    "AgentRun",
    "Case",
    "GoldFact",
    "Score",
    "ScoreStatus",
    "ToolCall",
    "Turn",
]
