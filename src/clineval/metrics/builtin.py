"""Imports every generic built-in metric module so that each registers itself.

Feature packages (e.g. the multi-agent conversations' metrics) register theirs through
:mod:`clineval.plugins`; this package imports none of them.
"""

from clineval.metrics import agent, factuality, rag, rubric, text, trajectory

__all__ = ["agent", "factuality", "rag", "rubric", "text", "trajectory"]
