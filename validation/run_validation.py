"""Measure how far clineval's factuality and refusal judgements agree with clinicians.

Regenerates every figure of ``docs/validation.md`` from the public, human-labelled data
sets in ``../shared/data`` (or ``--data DIR``):

* **K-QA entailment** (Manes et al., 2024; MIT): 399 (LLM answer, must-have or
  nice-to-have statement) pairs, each labelled Entailment / Neutral / Contradiction by
  three physicians. The judge checks each statement against its answer (the
  ``check_facts`` primitive, batched per answer as TBFact does); we report Cohen's kappa
  against each physician and the majority, next to the physicians' agreement with each
  other.
* **MEDEC error detection** (Ben Abacha et al., 2024; CC BY 4.0): 574 clinical texts,
  319 with one expert-inserted error. ``tbfact`` scores each text against its corrected
  version (a clean text against itself); we report the ROC AUC of TBFact precision for
  telling erroneous texts from clean ones, and how often the facts TBFact flags come from
  the erroneous sentence.
* **Refusal** (MedSafetyBench, Han et al., 2024, MIT; K-QA): harmful medical requests with
  a safe refusal (should refuse) against real patient questions with a physician's answer
  (should answer). ``refusal_accuracy`` runs with the labels (is a refusal detected?) and
  without them (does the judge itself decide the request should be declined?).

Run from the repository root::

    python validation/run_validation.py                         # the offline judge
    python validation/run_validation.py --judge offline --judge openai:gpt-4o   # side by side
    python validation/run_validation.py --write-docs            # also update docs/validation.md

``CLINEVAL_VALIDATION_JUDGE`` adds a judge spec to the list (e.g. a local endpoint).
Results are written as JSON under ``validation/results/``.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clineval import evaluate
from clineval.agreement import accuracy, bootstrap_ci, cohen_kappa, f1, fleiss_kappa, roc_auc
from clineval.judges.config import JudgeConfig, build_judge
from clineval.judges.primitives import Primitives, Verdict
from clineval.metrics.base import ScoreContext

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data"
RESULTS = Path(__file__).resolve().parent / "results"
DOC = ROOT / "docs" / "validation.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"
KQA_LABELS = ("Entailment", "Neutral", "Contradiction")


# ---------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def kqa_nli(data: Path) -> list[dict[str, str]]:
    return read_csv(data / "kqa" / "NLI_medical_annotator.csv")


def kqa_answers(data: Path) -> list[dict[str, Any]]:
    with (data / "kqa" / "questions_w_answers.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def medec(data: Path) -> list[dict[str, str]]:
    return read_csv(data / "medec" / "MEDEC-MS-ValidationSet-with-GroundTruth-and-ErrorType.csv")


def medsafety(data: Path) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for path in sorted((data / "medsafetybench").glob("gpt4_category_*.csv")):
        category = path.stem.rsplit("_", 1)[-1]
        rows += [{**row, "category": category} for row in read_csv(path)]
    return rows


def every_nth(rows: Sequence[Any], limit: int | None) -> list[Any]:
    """A deterministic, evenly spread subset of at most ``limit`` rows."""
    if limit is None or limit >= len(rows):
        return list(rows)
    step = len(rows) / limit
    return [rows[int(i * step)] for i in range(limit)]


# ---------------------------------------------------------------------------------------
# statistics helpers
# ---------------------------------------------------------------------------------------


def with_ci(stat: Any, *arrays: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
    estimate = stat(*arrays, **kwargs)
    interval = bootstrap_ci(lambda *a: stat(*a, **kwargs), *arrays)
    return {
        "value": estimate.value,
        "ci": [interval.low, interval.high],
        "n": len(arrays[0]),
        "note": estimate.note,
    }


def fmt(entry: dict[str, Any] | None, digits: int = 2) -> str:
    if not entry or entry.get("value") is None:
        return "–"
    low, high = entry.get("ci") or [None, None]
    text = f"{entry['value']:.{digits}f}"
    if low is not None and high is not None:
        text += f" [{low:.{digits}f}, {high:.{digits}f}]"
    return text


def kqa_label(verdict: Verdict) -> str:
    """A judge verdict in K-QA's three labels."""
    if verdict.reason == "incorrect":
        return "Contradiction"
    if verdict.label == "entailed":
        return "Entailment"
    return "Neutral"


# ---------------------------------------------------------------------------------------
# experiments
# ---------------------------------------------------------------------------------------


async def kqa_entailment(prims: Primitives, rows: list[dict[str, str]]) -> dict[str, Any]:
    by_answer: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        by_answer[row["answer"]].append(index)
    predicted: list[str] = [""] * len(rows)
    lenient: list[str] = [""] * len(rows)
    partial = 0
    started = time.perf_counter()
    for answer, indices in by_answer.items():
        verdicts = await prims.check_facts([rows[i]["claim"] for i in indices], answer)
        for i, verdict in zip(indices, verdicts, strict=True):
            predicted[i] = kqa_label(verdict)
            lenient[i] = (
                "Entailment" if verdict.label == "partial" and verdict.reason != "incorrect" else predicted[i]
            )
            partial += verdict.label == "partial"
    elapsed = time.perf_counter() - started
    majority = [r["majority_label"] for r in rows]
    physicians = [[r[f"label_{k}"] for r in rows] for k in range(3)]
    out: dict[str, Any] = {
        "n_pairs": len(rows),
        "n_answers": len(by_answer),
        "seconds": round(elapsed, 2),
        "judge_labels": dict(Counter(predicted)),
        "judge_partial": partial,
        "majority_labels": dict(Counter(majority)),
        "kappa_majority": with_ci(cohen_kappa, predicted, majority, labels=list(KQA_LABELS)),
        "accuracy_majority": with_ci(accuracy, predicted, majority),
        "kappa_physician": [with_ci(cohen_kappa, predicted, p, labels=list(KQA_LABELS)) for p in physicians],
        "kappa_majority_partial_as_entailment": with_ci(
            cohen_kappa, lenient, majority, labels=list(KQA_LABELS)
        ),
        "binary_kappa_majority": with_ci(
            cohen_kappa,
            [p == "Entailment" for p in predicted],
            [m == "Entailment" for m in majority],
        ),
    }
    pairs = [(0, 1), (0, 2), (1, 2)]
    out["physician_pairs"] = {
        f"{a + 1}-{b + 1}": with_ci(cohen_kappa, physicians[a], physicians[b], labels=list(KQA_LABELS))
        for a, b in pairs
    }
    out["physician_vs_majority"] = [
        with_ci(cohen_kappa, p, majority, labels=list(KQA_LABELS)) for p in physicians
    ]
    ratings = [[r[f"label_{k}"] for k in range(3)] for r in rows]
    fleiss = fleiss_kappa(ratings)
    out["physicians_fleiss"] = {"value": fleiss.value, "ci": [None, None], "note": fleiss.note}
    return out


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def from_sentence(fact: str, sentence: str) -> bool:
    """Whether a fact was taken from ``sentence`` (most of its words are the sentence's)."""
    fact_words, sentence_words = _words(fact), _words(sentence)
    if not fact_words or not sentence_words:
        return False
    return len(fact_words & sentence_words) / len(fact_words) >= 0.6


def medec_detection(judge: str, rows: list[dict[str, str]], store: Path) -> dict[str, Any]:
    cases = []
    for row in rows:
        erroneous = row["Error Flag"].strip() == "1"
        reference = row["Corrected Text"] if erroneous and row["Corrected Text"].strip() else row["Text"]
        cases.append(
            {
                "id": row["Text ID"],
                "input": "Write the clinical note.",
                "response": row["Text"],
                "reference": reference,
                "error_flag": int(erroneous),
                "error_type": row["Error Type"] if erroneous else "none",
            }
        )
    started = time.perf_counter()
    result = evaluate(cases, ["tbfact"], judge=judge, store=store, progress=False)
    elapsed = time.perf_counter() - started
    by_id = {row["Text ID"]: row for row in rows}
    truth: list[int] = []
    precision: list[float] = []
    hits = flagged_total = flagged_on_error = error_texts = clean_flags = unscored = 0
    for record in result.results:
        if record.metric != "tbfact":
            continue
        score = record.score
        if score.status != "scored" or score.sub_scores.get("precision") is None:
            unscored += 1
            continue
        row = by_id[record.case_id]
        erroneous = row["Error Flag"].strip() == "1"
        truth.append(int(erroneous))
        precision.append(float(score.sub_scores["precision"] or 0.0))
        flagged = [
            f
            for f in score.details.get("facts", [])
            if f["direction"] == "precision" and f["label"] != "entailed"
        ]
        if erroneous:
            error_texts += 1
            on_error = [f for f in flagged if from_sentence(f["fact"], row["Error Sentence"])]
            hits += bool(on_error)
            flagged_total += len(flagged)
            flagged_on_error += len(on_error)
        else:
            clean_flags += bool(flagged)
    suspicion = [1.0 - p for p in precision]
    clean_texts = len(truth) - error_texts
    return {
        "n_texts": len(truth),
        "n_erroneous": error_texts,
        "unscored": unscored,
        "seconds": round(elapsed, 1),
        "auc_precision": with_ci(roc_auc, truth, suspicion),
        "error_sentence_flagged": {"value": hits / error_texts if error_texts else None, "n": error_texts},
        "flags_on_error_sentence": {
            "value": flagged_on_error / flagged_total if flagged_total else None,
            "n": flagged_total,
        },
        "clean_texts_flagged": {
            "value": clean_flags / clean_texts if clean_texts else None,
            "n": clean_texts,
        },
        "mean_precision_erroneous": _mean([p for p, t in zip(precision, truth, strict=True) if t]),
        "mean_precision_clean": _mean([p for p, t in zip(precision, truth, strict=True) if not t]),
        "run_id": result.run_id,
    }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def refusal(
    judge: str, harmful: list[dict[str, str]], answered: list[dict[str, Any]], store: Path
) -> dict[str, Any]:
    cases = [
        {
            "id": f"msb-{r['category']}-{i}",
            "input": r["harmful_medical_request"],
            "response": r["safe_response"],
            "should_refuse": True,
            "source": "medsafetybench",
        }
        for i, r in enumerate(harmful)
    ] + [
        {
            "id": f"kqa-{i}",
            "input": r["Question"],
            "response": r["Free_form_answer"],
            "should_refuse": False,
            "source": "kqa",
        }
        for i, r in enumerate(answered)
    ]
    started = time.perf_counter()
    result = evaluate(
        cases,
        ["labelled=refusal_accuracy", "judged=refusal_accuracy(label=none)"],
        judge=judge,
        store=store,
        progress=False,
    )
    elapsed = time.perf_counter() - started
    truth_by_id = {c["id"]: bool(c["should_refuse"]) for c in cases}
    out: dict[str, Any] = {"n_should_refuse": len(harmful), "n_should_answer": len(answered)}
    out["seconds"] = round(elapsed, 1)
    for metric in ("labelled", "judged"):
        rows = [r for r in result.results if r.metric == metric and r.score.status == "scored"]
        truth = [truth_by_id[r.case_id] for r in rows]
        refused = [bool(r.score.sub_scores["refused"]) for r in rows]
        expected = [bool(r.score.sub_scores["should_refuse"]) for r in rows]
        values = [float(r.score.value or 0.0) for r in rows]
        entry: dict[str, Any] = {
            "n": len(rows),
            "refusal_accuracy": {"value": _mean(values), "n": len(rows)},
            "detect_kappa": with_ci(cohen_kappa, refused, truth),
            "detect_f1": with_ci(f1, truth, refused, positive=True),
            "detect_accuracy_should_refuse": _rate([r for r, t in zip(refused, truth, strict=True) if t]),
            "detect_accuracy_should_answer": _rate(
                [not r for r, t in zip(refused, truth, strict=True) if not t]
            ),
        }
        if metric == "judged":
            entry["decline_kappa"] = with_ci(cohen_kappa, expected, truth)
            entry["decline_accuracy_should_refuse"] = _rate(
                [e for e, t in zip(expected, truth, strict=True) if t]
            )
            entry["decline_accuracy_should_answer"] = _rate(
                [not e for e, t in zip(expected, truth, strict=True) if not t]
            )
        out[metric] = entry
    out["run_id"] = result.run_id
    return out


ALL_METRICS = (
    "tbfact",
    "conversational_faithfulness",
    "refusal_accuracy",
    "context_relevance",
    "faithfulness",
    "context_relevance_ragas",
)


def every_metric_cli(judge: str, data: Path, store: Path, limit: int | None) -> dict[str, Any]:
    """Every factuality and RAG metric from the command line on K-QA and MedSafetyBench.

    K-QA: an LLM's answer to a real patient question is the response; the physician's
    answer is both the reference and the retrieved context; the physicians' must-have
    statements are the gold facts (so TBFact recall is K-QA's comprehensiveness).
    MedSafetyBench: the safe refusal of a harmful request, which should refuse.
    """
    llm_answer: dict[str, str] = {}
    for row in kqa_nli(data):
        llm_answer.setdefault(row["Question"], row["answer"])
    cases: list[dict[str, Any]] = []
    for i, row in enumerate(kqa_answers(data)):
        if row["Question"] not in llm_answer:
            continue
        cases.append(
            {
                "id": f"kqa-{i}",
                "input": row["Question"],
                "response": llm_answer[row["Question"]],
                "reference": row["Free_form_answer"],
                "contexts": [row["Free_form_answer"]],
                "gold_facts": [{"text": t, "importance": "high"} for t in row["Must_have"] if t.strip()],
                "should_refuse": False,
                "source": "kqa",
            }
        )
    for i, row in enumerate(every_nth(medsafety(data), 18)):
        cases.append(
            {
                "id": f"msb-{i}",
                "input": row["harmful_medical_request"],
                "response": row["safe_response"],
                "reference": row["safe_response"],
                "contexts": [],
                "should_refuse": True,
                "source": "medsafetybench",
            }
        )
    cases = every_nth(cases, limit)
    file = store.parent / "every_metric.jsonl"
    file.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    command = [
        sys.executable, "-m", "clineval.cli.main", "run", "-d", str(file), "-m", ",".join(ALL_METRICS),
        "--judge", judge, "--store", str(store), "--group-by", "source", "-q",
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        return {"error": (done.stderr or done.stdout)[-2000:], "command": " ".join(command[2:])}
    from clineval import load_run

    result = load_run("latest", store=store)
    out: dict[str, Any] = {"n_cases": len(cases), "seconds": round(elapsed, 1), "metrics": {}}
    for agg in result.aggregate("source"):
        if agg.metric in ALL_METRICS or agg.metric == "tbfact.recall":
            out["metrics"].setdefault(agg.metric, {})[agg.group or ""] = {
                "mean": agg.mean,
                "scored": agg.scored,
                "unscored": agg.errors,
                "not_applicable": agg.not_applicable,
            }
    return out


def _rate(flags: Sequence[bool]) -> dict[str, Any]:
    return {"value": (sum(flags) / len(flags)) if flags else None, "n": len(flags)}


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------


def markdown(results: dict[str, dict[str, Any]]) -> str:
    judges = list(results)
    head = "| | " + " | ".join(f"`{j}`" for j in judges) + " |\n|---|" + "---|" * len(judges) + "\n"

    def row(label: str, getter: Any) -> str:
        return f"| {label} | " + " | ".join(getter(results[j]) for j in judges) + " |\n"

    def rate(entry: dict[str, Any] | None) -> str:
        if not entry or entry.get("value") is None:
            return "–"
        return f"{entry['value']:.2f} (n={entry['n']})"

    lines = ["### K-QA: entailment against physicians\n\n", head]
    lines.append(row("pairs (answers)", lambda r: f"{r['kqa']['n_pairs']} ({r['kqa']['n_answers']})"))
    lines.append(row("κ vs physician majority (3 labels)", lambda r: fmt(r["kqa"]["kappa_majority"])))
    for k in range(3):
        lines.append(row(f"κ vs physician {k + 1}", lambda r, k=k: fmt(r["kqa"]["kappa_physician"][k])))
    lines.append(row("accuracy vs majority", lambda r: fmt(r["kqa"]["accuracy_majority"])))
    lines.append(
        row("κ vs majority, entailed or not (2 labels)", lambda r: fmt(r["kqa"]["binary_kappa_majority"]))
    )
    lines.append(
        row(
            "κ vs majority, partial counted as Entailment",
            lambda r: fmt(r["kqa"]["kappa_majority_partial_as_entailment"]),
        )
    )
    lines.append(
        row(
            "judge labels E/N/C (of which partial)",
            lambda r: f"{_dist(r['kqa']['judge_labels'])} ({r['kqa']['judge_partial']})",
        )
    )
    lines.append(row("seconds", lambda r: str(r["kqa"]["seconds"])))
    first = results[judges[0]]["kqa"]
    lines.append("\nPhysicians among themselves (the ceiling): ")
    lines.append(
        ", ".join(f"κ physicians {pair} = {fmt(v)}" for pair, v in first["physician_pairs"].items())
        + "; each against the majority (which includes them): "
        + ", ".join(fmt(v) for v in first["physician_vs_majority"])
        + f"; Fleiss' κ of the three = {first['physicians_fleiss']['value']:.2f}. "
        + f"Majority labels E/N/C: {_dist(first['majority_labels'])}.\n\n"
    )
    lines.append("### MEDEC: detecting inserted errors with TBFact\n\n")
    lines.append(head)
    lines.append(
        row("texts (with an error)", lambda r: f"{r['medec']['n_texts']} ({r['medec']['n_erroneous']})")
    )
    lines.append(
        row("ROC AUC, 1 − precision, erroneous vs clean", lambda r: fmt(r["medec"]["auc_precision"]))
    )
    lines.append(
        row(
            "erroneous texts where a flagged fact is the error sentence",
            lambda r: rate(r["medec"]["error_sentence_flagged"]),
        )
    )
    lines.append(
        row(
            "flagged facts that come from the error sentence",
            lambda r: rate(r["medec"]["flags_on_error_sentence"]),
        )
    )
    lines.append(row("clean texts with any flagged fact", lambda r: rate(r["medec"]["clean_texts_flagged"])))
    lines.append(row("mean precision, erroneous / clean", lambda r: _pair(r["medec"])))
    lines.append(row("unscored", lambda r: str(r["medec"]["unscored"])))
    lines.append(row("seconds", lambda r: str(r["medec"]["seconds"])))
    lines.append(
        "\n### Refusal: MedSafetyBench requests (should refuse) vs K-QA questions (should answer)\n\n"
    )
    lines.append(head)
    lines.append(
        row(
            "cases (refuse / answer)",
            lambda r: f"{r['refusal']['n_should_refuse']} / {r['refusal']['n_should_answer']}",
        )
    )
    lines.append(
        row(
            "refusal_accuracy with labels (mean)",
            lambda r: rate(r["refusal"]["labelled"]["refusal_accuracy"]),
        )
    )
    lines.append(row("refusal detected, κ", lambda r: fmt(r["refusal"]["labelled"]["detect_kappa"])))
    lines.append(row("refusal detected, F1", lambda r: fmt(r["refusal"]["labelled"]["detect_f1"])))
    lines.append(
        row(
            "refusals detected (of should-refuse)",
            lambda r: rate(r["refusal"]["labelled"]["detect_accuracy_should_refuse"]),
        )
    )
    lines.append(
        row(
            "answers not taken for refusals",
            lambda r: rate(r["refusal"]["labelled"]["detect_accuracy_should_answer"]),
        )
    )
    lines.append(
        row(
            "refusal_accuracy without labels (mean)",
            lambda r: rate(r["refusal"]["judged"]["refusal_accuracy"]),
        )
    )
    lines.append(row("should-decline judged, κ", lambda r: fmt(r["refusal"]["judged"]["decline_kappa"])))
    lines.append(
        row(
            "harmful requests judged should-decline",
            lambda r: rate(r["refusal"]["judged"]["decline_accuracy_should_refuse"]),
        )
    )
    lines.append(
        row(
            "patient questions judged answerable",
            lambda r: rate(r["refusal"]["judged"]["decline_accuracy_should_answer"]),
        )
    )
    lines.append(row("seconds", lambda r: str(r["refusal"]["seconds"])))
    lines.append(
        "\n### Every factuality and RAG metric from the command line on shared data\n\n"
        "K-QA: an LLM answer to a patient question, with the physician's answer as reference and "
        "context and the must-have statements as gold facts; MedSafetyBench: 18 safe refusals. "
        "Mean per source; `scored / unscored / n/a` in brackets.\n\n"
    )
    lines.append(head)
    for metric in (*ALL_METRICS[:1], "tbfact.recall", *ALL_METRICS[1:]):
        for source in ("kqa", "medsafetybench"):
            lines.append(row(f"`{metric}`, {source}", lambda r, m=metric, s=source: _cell(r, m, s)))
    lines.append(row("seconds", lambda r: str(r["every_metric"].get("seconds", "–"))))
    return "".join(lines)


def _cell(result: dict[str, Any], metric: str, source: str) -> str:
    entry = result.get("every_metric", {}).get("metrics", {}).get(metric, {}).get(source)
    if not entry:
        return "–"
    mean = "–" if entry["mean"] is None else f"{entry['mean']:.2f}"
    return f"{mean} ({entry['scored']} / {entry['unscored']} / {entry['not_applicable']})"


def _dist(counts: dict[str, int]) -> str:
    return "/".join(str(counts.get(label, 0)) for label in KQA_LABELS)


def _pair(entry: dict[str, Any]) -> str:
    a, b = entry.get("mean_precision_erroneous"), entry.get("mean_precision_clean")
    return "–" if a is None or b is None else f"{a:.3f} / {b:.3f}"


def write_docs(block: str, command: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    if START not in text or END not in text:
        sys.exit(f"{DOC} has no {START} ... {END} block to fill")
    stamp = f"<!-- generated by: {command} -->\n\n"
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(head + START + "\n" + stamp + block + "\n" + END + tail, encoding="utf-8")


async def _primitives(spec: str) -> tuple[Primitives, Any]:
    judge = build_judge(JudgeConfig.model_validate(spec), cache_path=ROOT / ".clineval" / "judge_cache.db")
    if judge is None:
        sys.exit("validation needs a judge; 'none' has nothing to measure")
    return ScoreContext(judge).primitives(), judge


def run_judge(spec: str, data: Path, limit: int | None) -> dict[str, Any]:
    print(f"== judge {spec}", flush=True)
    out: dict[str, Any] = {"judge": spec}

    async def entailment() -> dict[str, Any]:
        prims, judge = await _primitives(spec)
        try:
            return await kqa_entailment(prims, every_nth(kqa_nli(data), limit))
        finally:
            await judge.aclose()

    out["kqa"] = asyncio.run(entailment())
    print(f"   K-QA entailment: κ vs majority {fmt(out['kqa']['kappa_majority'])}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "validation.db"
        out["medec"] = medec_detection(spec, every_nth(medec(data), limit), store)
        print(f"   MEDEC: AUC {fmt(out['medec']['auc_precision'])}", flush=True)
        out["refusal"] = refusal(
            spec, every_nth(medsafety(data), limit), every_nth(kqa_answers(data), limit), store
        )
        print(f"   refusal: κ {fmt(out['refusal']['labelled']['detect_kappa'])}", flush=True)
        out["every_metric"] = every_metric_cli(spec, data, Path(tmp) / "cli.db", limit)
        if "error" in out["every_metric"]:
            print(f"   every metric from the CLI FAILED: {out['every_metric']['error']}", flush=True)
        else:
            print(f"   every metric from the CLI: {out['every_metric']['seconds']} s", flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--judge", action="append", help="judge spec (repeatable); default: offline")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    parser.add_argument("--limit", type=int, help="at most this many items per data set (quick check)")
    parser.add_argument(
        "--llm-limit",
        type=int,
        help="at most this many items per data set for judges other than 'offline' (slow or paid endpoints); "
        "the tables show each judge's n",
    )
    parser.add_argument("--write-docs", action="store_true", help="update the figures in docs/validation.md")
    parser.add_argument(
        "--reuse",
        action="append",
        default=[],
        help="a judge spec whose figures are read from validation/results/ instead of measured again "
        "(e.g. a slow endpoint measured earlier)",
    )
    args = parser.parse_args(argv)
    judges = list(args.judge or ["offline"])
    extra = os.environ.get("CLINEVAL_VALIDATION_JUDGE")
    if extra and extra not in judges:
        judges.append(extra)
    if not args.data.is_dir():
        sys.exit(f"no data folder at {args.data}; pass --data DIR")
    RESULTS.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    for spec in judges:
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", spec)
        saved = RESULTS / f"{name}.json"
        if spec in args.reuse:
            if not saved.is_file():
                sys.exit(f"--reuse {spec}: no saved figures at {saved}")
            print(f"== judge {spec}: figures read from {saved}", flush=True)
            results[spec] = json.loads(saved.read_text(encoding="utf-8"))
            continue
        limit = args.limit if spec == "offline" or args.llm_limit is None else args.llm_limit
        results[spec] = run_judge(spec, args.data, limit)
        saved.write_text(json.dumps(results[spec], indent=2, default=str), encoding="utf-8")
    block = markdown(results)
    print()
    print(block)
    if args.write_docs:
        if args.limit is not None:
            sys.exit("--write-docs needs the full data sets; drop --limit")
        command = (
            "python validation/run_validation.py "
            + " ".join(f"--judge {j}" for j in judges)
            + (f" --llm-limit {args.llm_limit}" if args.llm_limit is not None else "")
            + "".join(f" --reuse {j}" for j in args.reuse)
            + " --write-docs"
        )
        write_docs(block, command)
        print(f"updated {DOC}")


if __name__ == "__main__":
    main()
