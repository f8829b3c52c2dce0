"""The data model: cases going in, scores coming out."""

from clineval.model.case import CASE_FIELDS, AgentRun, Case, GoldFact, ToolCall, Turn
from clineval.model.review import ReviewQueue, ReviewRecord
from clineval.model.run import AgentOutput, DatasetInfo, GitInfo, ResultRecord, RunRecord, RunStatus, Tags
from clineval.model.score import Score, ScoreStatus
from clineval.model.trace import SpanEvent, SpanRecord, SpanStatus

__all__ = [
    "CASE_FIELDS",
    "AgentOutput",
    "AgentRun",
    "Case",
    "DatasetInfo",
    "GitInfo",
    "GoldFact",
    "ResultRecord",
    "ReviewQueue",
    "ReviewRecord",
    "RunRecord",
    "RunStatus",
    "Score",
    "ScoreStatus",
    "SpanEvent",
    "SpanRecord",
    "SpanStatus",
    "Tags",
    "ToolCall",
    "Turn",
]
