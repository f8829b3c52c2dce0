"""Imports every built-in metric module so that each registers itself."""

from clineval.conversations import metrics as conversations  # noqa: F401  (Healthcare Agent Orchestrator)
from clineval.metrics import agent, factuality, rag, rubric, text, trajectory

__all__ = ["agent", "factuality", "rag", "rubric", "text", "trajectory"]
