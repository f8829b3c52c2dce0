"""The runner: agent calls and scoring over a stored run, with bounded concurrency.

The names below are imported when first used, so that a module of the package (e.g. an
isolated agent's worker process, :mod:`clineval.runner.isolation`) loads without the rest.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clineval.runner.agent import AgentCaller, AgentSettings
    from clineval.runner.engine import RunOutcome, RunPlan, execute
    from clineval.runner.progress import NullProgress, ProgressReporter, RichProgress, default_progress

_HOMES = {
    "AgentCaller": "clineval.runner.agent",
    "AgentSettings": "clineval.runner.agent",
    "NullProgress": "clineval.runner.progress",
    "ProgressReporter": "clineval.runner.progress",
    "RichProgress": "clineval.runner.progress",
    "RunOutcome": "clineval.runner.engine",
    "RunPlan": "clineval.runner.engine",
    "default_progress": "clineval.runner.progress",
    "execute": "clineval.runner.engine",
}

__all__ = [
    "AgentCaller",
    "AgentSettings",
    "NullProgress",
    "ProgressReporter",
    "RichProgress",
    "RunOutcome",
    "RunPlan",
    "default_progress",
    "execute",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'clineval.runner' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
