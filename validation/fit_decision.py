"""Fit the offline judge's decision (src/clineval/judges/offline/decision.json) and measure it
leave-one-dataset-out.

Items (a claim, the evidence, and whether the evidence entails the claim):

* ``kqa``: the 399 K-QA statements against the LLM answer (Manes et al., 2024; MIT),
  entailed = the three physicians' majority says Entailment;
* ``radfact``: each phrase of the 34 RadFact report pairs against the other report (Bannur
  et al., 2024; MIT), entailed = labelled entailment;
* ``medec``: MEDEC texts with an inserted error (Ben Abacha et al., 2024; CC BY 4.0; the
  validation split only) that have a clean sibling: each sentence against the sibling,
  entailed = not the error sentence (the other sentences say what the sibling says, in
  other words or the same);
* ``contrasts``: the 722 pairs written for this project (validation/contrasts/pairs.jsonl):
  entailed = a paraphrase, not = a changed clinical fact.

The offline judge's rule checks run once on every item (``signals_out``); an item a
conflict or assertion check decides keeps that verdict and is not fitted on. A logistic
regression over the signals of the others (standardised; every data set weighs the same,
whatever its size) gives P(entailed); the entailed threshold maximises the mean Youden J of
"entailed" over the training sets. No set labels a partly supported claim apart from an
absent one, so partial stays TBFact's definition (the main concept is there), not fitted.

**Leave-one-dataset-out**: for each data set, the model is fitted on the others and measured
on it; those are the figures that count. The shipped model is fitted on all four.

    python validation/fit_decision.py                 # fit, print the figures
    python validation/fit_decision.py --write         # also write decision.json and the figures
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clineval.agreement import cluster
from clineval.calibration.baselines import content_word_share, rouge_l
from clineval.calibration.data import read_kqa_nli, read_medec, read_radfact
from clineval.calibration.protocols import cross_fitted_labels, kappa_value
from clineval.judges.offline import OfflinePrimitives
from clineval.judges.offline.decision import DECISION_FILE, DecisionModel, Signals
from clineval.nlp.sentences import split_sentences

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"
CONTRASTS = HERE / "contrasts" / "pairs.jsonl"
RESULTS = HERE / "results" / "decision.json"
FOLDS = HERE / "results" / "decision-folds"
DOC = HERE.parent / "docs" / "validation.md"
DOC_START, DOC_END = "<!-- decision:start -->", "<!-- decision:end -->"
SETS = ("kqa", "radfact", "medec", "contrasts")
VERSION = "fitted-decision/1"
FEATURES = (
    "graded",
    "support",
    "similarity",
    "max_similarity",
    "strict_missing",
    "concept_missing",
    "opposite_polarity",
)
"""The signals the shipped model uses. Chosen by comparing feature sets leave-one-dataset-out
(``--compare``): adding the coverage rules' own verdict, the key-term share, missing numbers
and where the support was found made K-QA's held-out AUC fall from 0.82 to 0.75."""


@dataclass
class Item:
    dataset: str
    group: str
    claim: str
    evidence: str
    entailed: bool
    contradiction: bool
    signals: Signals | None = None
    rule_label: str = ""
    rule_reason: str | None = None
    rule_support: float = 0.0


# --- items ------------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def load_items(data: Path) -> list[Item]:
    items: list[Item] = []
    for pair in read_kqa_nli(data):
        items.append(
            Item(
                "kqa",
                pair.answer[:80],
                pair.claim,
                pair.answer,
                pair.majority == "Entailment",
                pair.majority == "Contradiction",
            )
        )
    for report in read_radfact(data):
        a, b = " ".join(report.phrases_a), " ".join(report.phrases_b)
        for phrases, statuses, other in (
            (report.phrases_a, report.status_a, b),
            (report.phrases_b, report.status_b, a),
        ):
            for phrase, status in zip(phrases, statuses, strict=True):
                items.append(
                    Item(
                        "radfact", report.id, phrase, other, status == "entailment", status == "contradiction"
                    )
                )
    for text in read_medec(data):
        if text.sibling_text is None:
            continue
        sibling = {_norm(s) for s in split_sentences(text.sibling_text)}
        error = _norm(text.error_sentence)
        for sentence in split_sentences(text.text):
            n = _norm(sentence)
            if not n:
                continue
            if n == error or (error and error in n):
                items.append(Item("medec", text.id, sentence, text.sibling_text, False, True))
            elif n not in sibling:
                items.append(Item("medec", text.id, sentence, text.sibling_text, True, False))
    for line in CONTRASTS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            supported = row["expected"] == "supported"
            items.append(
                Item(
                    "contrasts", row["evidence"][:80], row["claim"], row["evidence"], supported, not supported
                )
            )
    return items


def judge_items(items: Sequence[Item], primitives: OfflinePrimitives) -> None:
    """Run the rule checks once per item (grouped by evidence), keeping the signals."""
    by_evidence: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        by_evidence[item.evidence].append(item)
    for evidence, group in by_evidence.items():
        signals: list[Signals | None] = []
        verdicts = primitives.check_facts_sync([i.claim for i in group], evidence, signals_out=signals)
        for item, verdict, s in zip(group, verdicts, signals, strict=True):
            item.signals = s
            item.rule_label, item.rule_reason = verdict.label, verdict.reason
            item.rule_support = float(verdict.support or 0.0)


# --- fitting ----------------------------------------------------------------------------------


def _youden(flags: np.ndarray, truth: np.ndarray) -> float:
    if truth.all() or not truth.any():
        return -1.0
    return float(flags[truth].mean() - flags[~truth].mean())


def fit(items: Sequence[Item], features: Sequence[str] = FEATURES) -> DecisionModel:
    from sklearn.linear_model import LogisticRegression

    train = [i for i in items if i.signals is not None]
    names = list(Signals.names())
    cols = [names.index(f) for f in features]
    x = np.asarray(
        [[i.signals.vector()[c] for c in cols] for i in train if i.signals is not None], dtype=float
    )
    y = np.asarray([i.entailed for i in train], dtype=bool)
    sets = sorted({i.dataset for i in train})
    counts = {s: sum(i.dataset == s for i in train) for s in sets}
    weight = np.asarray([len(train) / (len(sets) * counts[i.dataset]) for i in train])
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=2000)
    model.fit((x - mean) / scale, y, sample_weight=weight)
    draft = DecisionModel(
        version=VERSION,
        features=tuple(features),
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
        coef=tuple(float(v) for v in model.coef_[0]),
        intercept=float(model.intercept_[0]),
        entail_threshold=0.5,
        trained_on={s: sum(i.dataset == s for i in items) for s in sorted({i.dataset for i in items})},
    )
    # Thresholds: the mean over the training sets of each set's Youden J.
    p_by_set = {s: np.asarray([_credit(draft, i) for i in items if i.dataset == s]) for s in sets}
    # A claim with an unstated clinical term is never entailed (DecisionModel.label).
    unstated = [i.signals is not None and i.signals.strict_missing > 0 for i in items]
    pairs = list(zip(unstated, items, strict=True))
    strict = {s: np.asarray([u for u, i in pairs if i.dataset == s]) for s in sets}
    ent_by_set = {s: np.asarray([i.entailed for i in items if i.dataset == s]) for s in sets}
    grid = np.round(np.arange(0.05, 0.96, 0.01), 2)
    entail = max(
        grid, key=lambda t: np.mean([_youden((p_by_set[s] >= t) & ~strict[s], ent_by_set[s]) for s in sets])
    )

    return draft.model_copy(update={"entail_threshold": float(entail)})


def _credit(model: DecisionModel | None, item: Item) -> float:
    """The claim's credit: P(entailed) where the fitted decision decides, else the rule's."""
    if model is None or item.signals is None:
        if item.rule_reason == "incorrect" or item.rule_label == "not_entailed":
            return 0.0 if item.rule_reason == "incorrect" else min(item.rule_support, 0.3)
        return 1.0 if item.rule_label == "entailed" else 0.5 * item.rule_support
    return model.probability(item.signals)


def _label(model: DecisionModel | None, item: Item) -> bool:
    if model is None or item.signals is None:
        return item.rule_label == "entailed"
    return model.label(model.probability(item.signals), item.signals) == "entailed"


# --- figures ----------------------------------------------------------------------------------


def _interval(ci: Any) -> dict[str, Any]:
    return {"value": ci.value, "low": ci.low, "high": ci.high}


def measure(items: Sequence[Item], model: DecisionModel | None) -> dict[str, Any]:
    """AUC of the credit and κ of "entailed" on ``items``, beside ROUGE-L precision and
    content-word share (κ with a threshold cross-fitted on the other half of the groups);
    95 % intervals resample the groups (answers, report pairs, texts, evidence texts)."""
    truth = [i.entailed for i in items]
    groups = [i.group for i in items]
    credit = [_credit(model, i) for i in items]
    labels = [_label(model, i) for i in items]
    rouge = [rouge_l(i.claim, i.evidence, part="p") for i in items]
    share = [content_word_share(i.claim, i.evidence) for i in items]
    out: dict[str, Any] = {
        "n": len(items),
        "groups": len(set(groups)),
        "entailed": sum(truth),
        "decided_by_checks": sum(i.signals is None for i in items),
    }
    auc = cluster.roc_auc(truth, credit)
    kappa = cluster.kappa(labels, truth, labels=[False, True])
    out["auc"] = _interval(cluster.cluster_interval(auc, groups))
    out["kappa"] = _interval(cluster.cluster_interval(kappa, groups))
    for name, scores in (("rouge_l", rouge), ("word_share", share)):
        base_auc = cluster.roc_auc(truth, scores)
        fitted = cross_fitted_labels(scores, truth, groups, kappa_value)
        base_kappa = cluster.kappa(fitted, truth, labels=[False, True])
        out[f"auc_{name}"] = _interval(cluster.cluster_interval(base_auc, groups))
        out[f"auc_minus_{name}"] = _interval(cluster.cluster_difference(auc, base_auc, groups))
        out[f"kappa_{name}"] = _interval(cluster.cluster_interval(base_kappa, groups))
        out[f"kappa_minus_{name}"] = _interval(cluster.cluster_difference(kappa, base_kappa, groups))
    return out


def _fmt(stat: dict[str, Any]) -> str:
    if stat.get("value") is None:
        return "–"
    text = f"{stat['value']:+.2f}" if "minus" in stat.get("_key", "") else f"{stat['value']:.2f}"
    if stat.get("low") is not None:
        text += f" [{stat['low']:.2f}, {stat['high']:.2f}]"
    return text


def report(figures: dict[str, Any]) -> str:
    lines = [
        "| left out | n | decided by checks | rules alone: AUC | fitted: AUC | − ROUGE-L | − word share "
        "| rules alone: κ | fitted: κ | − ROUGE-L | − word share |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in SETS:
        if name not in figures["lodo"]:
            continue
        f, r = figures["lodo"][name], figures["rules"][name]
        lines.append(
            f"| {name} | {f['n']} | {f['decided_by_checks']} | {_fmt(r['auc'])} | {_fmt(f['auc'])} | "
            f"{_fmt(f['auc_minus_rouge_l'])} | {_fmt(f['auc_minus_word_share'])} | {_fmt(r['kappa'])} | "
            f"{_fmt(f['kappa'])} | {_fmt(f['kappa_minus_rouge_l'])} | {_fmt(f['kappa_minus_word_share'])} |"
        )
    return "\n".join(lines)


def write_docs(figures: dict[str, Any], model: DecisionModel) -> None:
    """Rewrite the block between the decision markers of docs/validation.md."""
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(DOC_START) + len(DOC_START), text.index(DOC_END)
    counts = ", ".join(f"{name} {n}" for name, n in model.trained_on.items())
    block = (
        "\n<!-- generated by: python validation/fit_decision.py --write -->\n\n"
        + report(figures)
        + "\n\nItems per set: "
        + counts
        + ". *Rules alone*: this version's checks with the rule thresholds of version 2.5 instead of "
        "the fitted decision, on the same items. "
        "*Fitted*: the decision fitted on the other three sets. AUC of the credit for the label "
        "entailed; Cohen's κ of the label entailed. The columns − ROUGE-L and − word share give the "
        "fitted judge minus the baseline (ROUGE-L precision; the share of the claim's content words "
        "found in the evidence; for κ with a threshold cross-fitted on the other half of the groups) "
        "with the 95 % interval of the difference, resampling answers, report pairs, texts or "
        f"evidence texts (2,000 resamples). Shipped threshold for entailed: {model.entail_threshold:.2f}.\n"
    )
    DOC.write_text(text[:start] + block + text[end:], encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the shared data folder (default: %(default)s)"
    )
    parser.add_argument(
        "--write", action="store_true", help="write decision.json and validation/results/decision.json"
    )
    parser.add_argument(
        "--cache", type=Path, help="keep the judged items in this file and reuse them (while trying models)"
    )
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        sys.exit(f"{args.data}: no such folder; give the shared data folder with --data")
    started = time.perf_counter()
    if args.cache is not None and args.cache.exists():
        items = pickle.loads(args.cache.read_bytes())
    else:
        items = load_items(args.data)
        judge_items(items, OfflinePrimitives(decision=None))
        if args.cache is not None:
            args.cache.write_bytes(pickle.dumps(items))
    print(f"{len(items)} items judged in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    figures: dict[str, Any] = {"lodo": {}, "rules": {}, "development": {}}
    folds: dict[str, DecisionModel] = {}
    for name in SETS:
        held = [i for i in items if i.dataset == name]
        if not held:
            continue
        model = fit([i for i in items if i.dataset != name])
        folds[name] = model
        figures["lodo"][name] = measure(held, model)
        figures["lodo"][name]["entail_threshold"] = model.entail_threshold
        figures["rules"][name] = measure(held, None)
    final = fit(items)
    for name in SETS:
        figures["development"][name] = measure([i for i in items if i.dataset == name], final)
    print(report(figures))
    print("coefficients:", {f: round(c, 2) for f, c in zip(final.features, final.coef, strict=True)})
    print("entailed threshold:", final.entail_threshold)
    if args.write:
        shipped = final.model_copy(update={"figures": {"leave_one_dataset_out": figures["lodo"]}})
        DECISION_FILE.write_text(json.dumps(shipped.model_dump(), indent=1) + "\n", encoding="utf-8")
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        # The models fitted without each set, for run_validation.py --lodo.
        FOLDS.mkdir(parents=True, exist_ok=True)
        for name, model in folds.items():
            (FOLDS / f"without-{name}.json").write_text(
                json.dumps(model.model_dump(), indent=1) + "\n", encoding="utf-8"
            )
        write_docs(figures, final)
        print(f"wrote {DECISION_FILE}, {RESULTS}, {FOLDS} and {DOC}", file=sys.stderr)


if __name__ == "__main__":
    main()
