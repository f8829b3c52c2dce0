"""Factuality benchmark: offline TBFact throughput and judge calls per case.

1. **Offline throughput.** TBFact with the offline judge on the ACI-Bench test notes
   (Yim et al., 2023; CC BY 4.0): each system note (BART and LED, ``pred_*.csv``) against
   the reference note of the same visit. Prints facts per second, note pairs per second,
   the time per pair (median, 90th percentile, max; target: a median under 1 s per pair on a 2-core
   machine) and, as the peer in the same run, ROUGE-L (rouge-score) on the same pairs.
2. **Judge calls per case.** TBFact and faithfulness through an LLM judge whose answers
   are scripted (valid for any number of facts), on cases of growing size: the calls per
   case are constant (target: at most 4 for TBFact whatever the number of facts), next to
   the calls a one-call-per-fact design would make (the RadFact way: one extraction per
   text plus one call per fact and direction).

Run from the repository root::

    python benchmarks/factuality.py                 # all 80 note pairs
    python benchmarks/factuality.py --pairs 10      # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from clineval.judges.offline import OfflineJudge
from clineval.judges.scripted import ScriptedJudge
from clineval.metrics.base import ScoreContext, score_case
from clineval.metrics.factuality import TBFact
from clineval.metrics.rag import Faithfulness
from clineval.model import Case

ROOT = Path(__file__).resolve().parent.parent
ACI = ROOT.parent / "shared" / "data" / "aci-bench"


def note_pairs(folder: Path) -> list[tuple[str, str, str]]:
    """(pair id, system note, reference note) for every prediction file in ``folder``."""
    with (folder / "clinicalnlp_taskB_test1.csv").open(encoding="utf-8", newline="") as handle:
        reference = {row["encounter_id"]: row["note"] for row in csv.DictReader(handle)}
    pairs = []
    for path in sorted(folder.glob("pred_*clinicalnlp_taskB_test1*.csv")):
        system = path.stem.split("_")[1]
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if row["encounter_id"] in reference:
                    pairs.append(
                        (f"{system}-{row['encounter_id']}", row["note"], reference[row["encounter_id"]])
                    )
    return pairs


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def offline_throughput(pairs: list[tuple[str, str, str]]) -> dict[str, Any]:
    judge = OfflineJudge()
    started = time.perf_counter()
    await judge.primitives.extract_facts("Warm-up: the patient has hypertension.")
    await judge.primitives.check_facts(["The patient has hypertension."], "Known hypertension.")
    load_s = time.perf_counter() - started
    metric = TBFact()
    times: list[float] = []
    facts = 0
    errors = 0
    for pair_id, prediction, reference in pairs:
        metric = TBFact()  # a fresh metric: no reference extraction is reused across pairs
        case = Case(id=pair_id, input="Write the visit note.", response=prediction, reference=reference)
        t0 = time.perf_counter()
        score = await score_case(metric, case, ScoreContext(judge))
        times.append(time.perf_counter() - t0)
        if score.status == "error":
            errors += 1
            continue
        facts += int(score.sub_scores["n_response_facts"] or 0) + int(
            score.sub_scores["n_reference_facts"] or 0
        )
    total = sum(times)
    return {
        "pairs": len(pairs),
        "errors": errors,
        "load_s": load_s,
        "total_s": total,
        "facts": facts,
        "facts_per_s": facts / total if total else 0.0,
        "pairs_per_s": len(pairs) / total if total else 0.0,
        "median_s": statistics.median(times),
        "p90_s": percentile(times, 0.9),
        "max_s": max(times),
    }


def rouge_peer(pairs: list[tuple[str, str, str]]) -> dict[str, float]:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    t0 = time.perf_counter()
    for _, prediction, reference in pairs:
        scorer.score(reference, prediction)
    total = time.perf_counter() - t0
    return {"total_s": total, "pairs_per_s": len(pairs) / total if total else 0.0}


# --- scripted LLM judge: valid answers of any size, to count calls -------------------------

SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def _last_user(messages: list[dict[str, str]]) -> str:
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def scripted_answer(messages: list[dict[str, str]]) -> dict[str, Any]:
    system = messages[0]["content"]
    user = _last_user(messages)
    numbered = [int(n) for n in re.findall(r"^\[(\d+)\]", user, flags=re.M)]
    if "You check facts against a text" in system:
        return {
            "verdicts": [
                {"id": i, "label": "entailed", "reason": None, "evidence": "", "explanation": "scripted"}
                for i in numbered
            ]
        }
    if "rewrite the answer of a clinical assistant as a list of statements" in system:
        body = user.split("## The assistant's answer", 1)[-1]
        return {"statements": [s.strip() for s in SENTENCE.findall(body) if len(s.strip()) > 3][:50]}
    # fact extraction: one fact per sentence of the text
    body = user.split("## Text", 1)[-1]
    sentences = [s.strip() for s in SENTENCE.findall(body) if len(s.strip()) > 3]
    return {"facts": [{"text": s, "category": "other", "importance": "medium"} for s in sentences]}


def synthetic_text(n: int) -> str:
    return " ".join(f"Finding number {i} is stable at {i} mg per dL." for i in range(1, n + 1))


async def calls_per_case(sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        text = synthetic_text(n)
        reference = synthetic_text(n + 2)
        judge = ScriptedJudge(default=scripted_answer)
        ctx = ScoreContext(judge)
        score = await score_case(TBFact(), Case(id="t", input="q", response=text, reference=reference), ctx)
        tb_calls = ctx.usage.calls
        n_pred = int(score.sub_scores.get("n_response_facts") or 0)
        n_ref = int(score.sub_scores.get("n_reference_facts") or 0)
        ctx2 = ScoreContext(ScriptedJudge(default=scripted_answer))
        f_score = await score_case(
            Faithfulness(), Case(id="f", input="q", response=text, contexts=[reference]), ctx2
        )
        rows.append(
            {
                "facts": n_pred + n_ref,
                "tbfact_calls": tb_calls,
                "per_fact_design_calls": 2 + n_pred + n_ref,
                "faithfulness_calls": ctx2.usage.calls,
                "faithfulness_statements": int(f_score.sub_scores.get("statements") or 0),
                "status": f"{score.status}/{f_score.status}",
            }
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Offline TBFact throughput and judge calls per case.")
    parser.add_argument("--pairs", type=int, help="use only the first N note pairs")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if not ACI.is_dir():
        sys.exit(f"ACI-Bench notes not found at {ACI}")
    pairs = note_pairs(ACI)[: args.pairs] if args.pairs else note_pairs(ACI)
    offline = asyncio.run(offline_throughput(pairs))
    peer = rouge_peer(pairs)
    calls = asyncio.run(calls_per_case([5, 20, 60]))
    print(f"Offline TBFact on {offline['pairs']} ACI-Bench note pairs (system note vs reference note)")
    print(f"  model load and warm-up      {offline['load_s']:.2f} s (once per process)")
    print(f"  total                       {offline['total_s']:.1f} s, {offline['errors']} unscored")
    print(
        f"  facts per second            {offline['facts_per_s']:.1f} ({offline['facts']} facts, both texts)"
    )
    print(f"  note pairs per second       {offline['pairs_per_s']:.2f}")
    print(
        f"  seconds per pair            median {offline['median_s']:.2f}, p90 {offline['p90_s']:.2f}, "
        f"max {offline['max_s']:.2f} "
        f"(target: median < 1 s: {'met' if offline['median_s'] < 1 else 'NOT met'})"
    )
    print(f"  peer: ROUGE-L (rouge-score) {peer['pairs_per_s']:.1f} pairs/s on the same pairs")
    print()
    print("Judge calls per case (LLM judge, scripted answers)")
    print("  facts  tbfact  one-call-per-fact design  faithfulness (statements)")
    for row in calls:
        print(
            f"  {row['facts']:>5}  {row['tbfact_calls']:>6}  {row['per_fact_design_calls']:>24}  "
            f"{row['faithfulness_calls']:>12} ({row['faithfulness_statements']})"
        )
    worst = max(row["tbfact_calls"] for row in calls)
    print(f"  TBFact calls per case at most {worst} (target <= 4: {'met' if worst <= 4 else 'NOT met'})")
    if args.json:
        args.json.write_text(json.dumps({"offline": offline, "rouge_peer": peer, "calls": calls}, indent=2))


if __name__ == "__main__":
    main()
