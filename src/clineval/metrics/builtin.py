"""Imports every built-in metric module so that each registers itself."""

from clineval.conversations import metrics as conversations  # noqa: F401  (seed 000)
from clineval.metrics import agent, factuality, rag, rubric, text, trajectory

__all__ = ["agent", "factuality", "rag", "rubric", "text", "trajectory"]
