"""The offline judge: the factuality and RAG primitives answered by deterministic
heuristics on CPU, with no network and no key (see docs/offline-judge.md).

It splits texts into sentences and claims, compares them with all-MiniLM-L6-v2 sentence
embeddings (a numpy forward pass) and with content words, and looks for conflicts of
negation, numbers, units, sides, drugs and dates. It is a heuristic, not an LLM: it
misses contradictions without a lexical cue and paraphrases far from the wording.
"""

from clineval.judges.offline.judge import OfflineJudge
from clineval.judges.offline.primitives import OfflinePrimitives
from clineval.judges.offline.thresholds import HEURISTIC_VERSION, Thresholds

OFFLINE_NOTICE = (
    "Scored by the offline judge: deterministic heuristics (claim splitting, MiniLM similarity, "
    "negation, number, side, drug and date checks) that approximate an LLM judge; "
    "use an LLM judge (--judge openai:MODEL) for definitive factuality scores."
)

MEASURED_AGREEMENT: dict[str, str] = {}
"""Agreement of the offline judge with human or LLM labels, by data set, filled in by the
validation step (e.g. ``{"k-qa entailment (held-out half)": "accuracy 0.71, kappa 0.40"}``)."""

__all__ = [
    "HEURISTIC_VERSION",
    "MEASURED_AGREEMENT",
    "OFFLINE_NOTICE",
    "OfflineJudge",
    "OfflinePrimitives",
    "Thresholds",
]
