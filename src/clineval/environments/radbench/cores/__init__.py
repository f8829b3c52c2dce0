"""Agent cores of the radiology benchmark: offline reference cores (:mod:`.reference`) and
the LLM core (:mod:`.llm`, imported from its module so that this package needs no judge
settings)."""

from clineval.environments.radbench.cores.reference import GreedyCore, OracleCore, RandomCore

__all__ = ["GreedyCore", "OracleCore", "RandomCore"]
