"""Judges: one interface over OpenAI-compatible endpoints, Azure OpenAI and scripted answers.

The names below load on first use (PEP 562): ``clineval.judges.base`` is imported by the
data model and the store, and must not bring the retry machinery, the scripted judge's
YAML or the OpenAI-compatible backend's HTTP stack (aiohttp) with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clineval.judges.base import ChatMessage, Judge, JudgeAnswer, JudgeError, Usage
    from clineval.judges.cache import JudgeCache
    from clineval.judges.config import JudgeConfig, build_judge, parse_judge_spec
    from clineval.judges.openai_compat import OpenAIBackend
    from clineval.judges.scripted import ScriptedJudge
    from clineval.judges.structured import StructuredJudge

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "ChatMessage": "clineval.judges.base",
    "Judge": "clineval.judges.base",
    "JudgeAnswer": "clineval.judges.base",
    "JudgeError": "clineval.judges.base",
    "Usage": "clineval.judges.base",
    "JudgeCache": "clineval.judges.cache",
    "JudgeConfig": "clineval.judges.config",
    "build_judge": "clineval.judges.config",
    "parse_judge_spec": "clineval.judges.config",
    "OpenAIBackend": "clineval.judges.openai_compat",
    "ScriptedJudge": "clineval.judges.scripted",
    "StructuredJudge": "clineval.judges.structured",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'clineval.judges' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
