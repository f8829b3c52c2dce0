"""Imports every built-in metric module so that each registers itself."""

from clineval.metrics import agent, rubric, text, trajectory

__all__ = ["agent", "rubric", "text", "trajectory"]
