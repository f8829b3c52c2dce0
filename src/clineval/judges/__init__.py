"""Judges: one interface over OpenAI-compatible endpoints, Azure OpenAI and scripted answers."""

from clineval.judges.base import ChatMessage, Judge, JudgeAnswer, JudgeError, Usage
from clineval.judges.cache import JudgeCache
from clineval.judges.config import JudgeConfig, build_judge, parse_judge_spec
from clineval.judges.openai_compat import OpenAIBackend
from clineval.judges.scripted import ScriptedJudge
from clineval.judges.structured import StructuredJudge

__all__ = [
    "ChatMessage",
    "Judge",
    "JudgeAnswer",
    "JudgeCache",
    "JudgeConfig",
    "JudgeError",
    "OpenAIBackend",
    "ScriptedJudge",
    "StructuredJudge",
    "Usage",
    "build_judge",
    "parse_judge_spec",
]
