"""The runner: agent calls and scoring over a stored run, with bounded concurrency."""

from clineval.runner.agent import AgentCaller, AgentSettings
from clineval.runner.engine import RunOutcome, RunPlan, execute
from clineval.runner.progress import NullProgress, ProgressReporter, RichProgress, default_progress

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
