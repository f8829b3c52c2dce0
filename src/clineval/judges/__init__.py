"""Judges: one interface over OpenAI-compatible endpoints, Azure OpenAI and scripted answers."""

from clineval.judges.base import ChatMessage, Judge, JudgeAnswer, JudgeError, Usage
from clineval.judges.cache import JudgeCache
from clineval.judges.config import JudgeConfig, build_judge, parse_judge_spec
from clineval.judges.scripted import ScriptedJudge
from clineval.judges.structured import StructuredJudge


def __getattr__(name: str) -> object:
    # The OpenAI-compatible backend imports the HTTP stack (aiohttp); load it on first use only.
    if name == "OpenAIBackend":
        from clineval.judges.openai_compat import OpenAIBackend

        return OpenAIBackend
    raise AttributeError(f"module 'clineval.judges' has no attribute {name!r}")


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
