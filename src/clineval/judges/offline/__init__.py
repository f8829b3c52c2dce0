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

MEASURED_AGREEMENT: dict[str, str] = {
    "entailment vs K-QA physicians' majority (399 pairs)": "kappa 0.30, accuracy 0.69 (physicians among "
    "themselves: kappa 0.67-0.76)",
    "MEDEC inserted errors (574 texts)": "AUC 0.93 of TBFact precision; error sentence flagged in 86%",
    "refusal detection (MedSafetyBench vs K-QA, 651 answers)": "kappa 0.99",
}
"""Agreement of the offline judge with human labels on public data, from
``python validation/run_validation.py`` (figures and intervals in docs/validation.md)."""

OFFLINE_NOTICE = (
    "Scored by the offline judge: deterministic heuristics (claim splitting, MiniLM similarity, "
    "negation, number, side, drug and date checks) that approximate an LLM judge. Measured: "
    + "; ".join(f"{k}: {v}" for k, v in MEASURED_AGREEMENT.items())
    + " (docs/validation.md). Use an LLM judge (--judge openai:MODEL) for definitive factuality scores."
)

__all__ = [
    "HEURISTIC_VERSION",
    "MEASURED_AGREEMENT",
    "OFFLINE_NOTICE",
    "OfflineJudge",
    "OfflinePrimitives",
    "Thresholds",
]
