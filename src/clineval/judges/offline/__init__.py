"""The offline judge: the factuality and RAG primitives answered by deterministic
heuristics on CPU, with no network and no key (see docs/offline-judge.md).

It splits texts into sentences and claims, matches a claim's content words in the
evidence (by word, stem, synonym or abbreviation, and for non-clinical words by
all-MiniLM-L6-v2 token embeddings), weights them by specificity, and looks for conflicts of
negation, numbers, units, sides, drugs, dates and substituted clinical terms. It is a
heuristic, not an LLM: it misses contradictions without a lexical cue and paraphrases far
from the wording.
"""

import json
from pathlib import Path
from typing import Any

from clineval.judges.offline.judge import OfflineJudge
from clineval.judges.offline.primitives import OfflinePrimitives
from clineval.judges.offline.thresholds import HEURISTIC_VERSION, Thresholds

_MEASURED = Path(__file__).resolve().parent / "measured.json"


def _fmt(figure: dict[str, Any] | None, *, percent: bool = False) -> str:
    if not figure or figure.get("value") is None:
        return "not measured"
    value = figure["value"]
    text = f"{value:.0%}" if percent else f"{value:.2f}"
    if figure.get("low") is not None and figure.get("high") is not None and not percent:
        text += f" [{figure['low']:.2f}, {figure['high']:.2f}]"
    return text


def _beside(figure: dict[str, Any] | None) -> str:
    """The baselines' values on the same items, for the notice."""
    names = {"rouge_l": "ROUGE-L", "word_share": "word overlap", "keyword": "keywords"}
    if not figure or not figure.get("baselines"):
        return ""
    parts = [
        f"{names.get(name, name)} {b['value']:.2f}"
        for name, b in figure["baselines"].items()
        if b.get("value") is not None and name in names
    ]
    return f" (baselines: {', '.join(parts)})" if parts else ""


def measured_agreement(path: Path = _MEASURED) -> dict[str, str]:
    """The offline judge's agreement with human labels on public data, read from the figures
    ``validation/run_validation.py --write-docs`` ships with the package (all of them, with
    intervals and baselines, in docs/validation.md). Empty when the file is missing."""
    try:
        measured = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    f = measured.get("figures", {})
    kqa = f.get("kqa_kappa3") or {}
    ceiling = [k for k in measured.get("physicians_kappa", []) if k is not None]
    faithfulness = f.get("kqa_support_auc_faithfulness")
    out = {
        f"entailment vs K-QA physicians' majority ({kqa.get('n', '?')} statements)": (
            f"kappa {_fmt(f.get('kqa_kappa3'))} (3 labels), {_fmt(f.get('kqa_kappa2'))} (entailed or not), "
            f"AUC {_fmt(f.get('kqa_auc'))}{_beside(f.get('kqa_auc'))}"
            + (
                f"; physicians among themselves kappa {min(ceiling):.2f}-{max(ceiling):.2f}"
                if ceiling
                else ""
            )
        ),
        "faithfulness of K-QA statements given the LLM answer as context": (
            f"AUC {_fmt(faithfulness)}{_beside(faithfulness)}"
        ),
        "MEDEC inserted errors": (
            f"error flagged in {_fmt(f.get('medec_detected'), percent=True)} of texts, "
            f"{_fmt(f.get('medec_false_flags'), percent=True)} of facts of reworded correct texts flagged"
        ),
        "RadFact report pairs": (
            f"Spearman of TBFact F1 with the labels {_fmt(f.get('radfact_spearman_f1'))}"
            f"{_beside(f.get('radfact_spearman_f1'))}"
        ),
        "refusal detection (MedSafetyBench vs K-QA)": f"kappa {_fmt(f.get('refusal_kappa'))}",
    }
    return out


MEASURED_AGREEMENT: dict[str, str] = measured_agreement()
"""Agreement of the offline judge with human labels on public data (see :func:`measured_agreement`)."""

OFFLINE_NOTICE = (
    "Scored by the offline judge: deterministic heuristics (claim splitting, specificity-weighted "
    "word and MiniLM token matching, open clinical vocabularies, checks of negation, numbers, sides, "
    "drugs, dates, biomarker status, stages and substituted clinical terms, and a decision fitted on "
    "clinician-labelled data) that approximate an LLM judge. Reliable for explicit wrong statements "
    "(dose, side, drug, organism, subtype, stage, biomarker status, negation); not yet for the graded "
    "support of correct text said in other words. Measured on data its decision did not learn from "
    "(leave-one-dataset-out): "
    + ("; ".join(f"{k}: {v}" for k, v in MEASURED_AGREEMENT.items()) or "no figures shipped")
    + " (docs/validation.md). Use an LLM judge (--judge openai:MODEL) or a local verifier model "
    "(--judge nli:PATH), checked with clineval calibrate, for definitive factuality scores."
)

__all__ = [
    "HEURISTIC_VERSION",
    "MEASURED_AGREEMENT",
    "OFFLINE_NOTICE",
    "OfflineJudge",
    "OfflinePrimitives",
    "Thresholds",
    "measured_agreement",
]
