"""Clinical contrasts: does the offline judge tell a clinical contradiction from a faithful
paraphrase, where both share almost every word with the evidence?

The pairs (``validation/contrasts/pairs.jsonl``) were written for this project: each
evidence sentence or note comes with a claim that changes one clinical fact (another drug,
dose, route, side, organism, stage, negation, timing, direction, advice ...) and, for most,
a claim that says the same in other words. Two sets: ``development`` (the offline judge's
rules were fixed while looking at its failures) and ``second`` (written separately to be
held out; its failures were looked at too once it had been measured, so neither set is
held out now). These are not human-labelled data: they test what a clinician would catch
at once, not agreement with clinicians (see docs/validation.md for that).

Figures, per set, beside the trivial baselines on the same pairs: Youden's J of "not
entailed" for the contradictions (detection minus the rate on the paraphrases), with a
95 % percentile bootstrap interval and the paired interval of judge − baseline. ROUGE-L
precision and content-word share flag a pair when their overlap is below a threshold
cross-fitted on the other half of the pairs (by evidence) to maximise J.

    python validation/run_contrasts.py            # print the tables
    python validation/run_contrasts.py --write    # also write validation/contrasts/results.md
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clineval.agreement.stats import bootstrap_ci, difference_ci
from clineval.calibration.baselines import content_word_share, rouge_l
from clineval.calibration.protocols import cross_fitted_labels, youden_j
from clineval.judges.offline import OfflinePrimitives

HERE = Path(__file__).resolve().parent
PAIRS = HERE / "contrasts" / "pairs.jsonl"
RESULTS = HERE / "contrasts" / "results.md"


def load(path: Path = PAIRS) -> list[dict[str, str]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = {"set", "family", "claim", "evidence", "expected"} - set(row)
        if missing or row["expected"] not in ("contradiction", "supported"):
            sys.exit(
                f"{path}:{number}: expected the keys set, family, claim, evidence and expected "
                f"('contradiction' or 'supported'); got {sorted(row)}"
            )
        rows.append(row)
    return rows


def judge(rows: Sequence[dict[str, str]]) -> list[tuple[str, str | None]]:
    primitives = OfflinePrimitives()
    by_evidence: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_evidence[row["evidence"]].append(i)
    out: list[tuple[str, str | None]] = [("", None)] * len(rows)
    for evidence, indices in by_evidence.items():
        verdicts = primitives.check_facts_sync([rows[i]["claim"] for i in indices], evidence)
        for i, verdict in zip(indices, verdicts, strict=True):
            out[i] = (verdict.label, verdict.reason)
    return out


def _j(flags: Sequence[bool], truth: Sequence[bool]) -> Any:
    return youden_j(flags, truth)


def _fmt(value: float | None, low: float | None = None, high: float | None = None) -> str:
    if value is None:
        return "–"
    if low is None or high is None:
        return f"{value:.2f}"
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"


def analyse(
    rows: Sequence[dict[str, str]], verdicts: Sequence[tuple[str, str | None]], name: str
) -> list[str]:
    idx = [i for i, row in enumerate(rows) if row["set"] == name]
    truth = [rows[i]["expected"] == "contradiction" for i in idx]
    flags = [verdicts[i][0] != "entailed" for i in idx]
    groups = [rows[i]["evidence"] for i in idx]
    baselines = {
        "ROUGE-L": [1.0 - rouge_l(rows[i]["claim"], rows[i]["evidence"], part="p") for i in idx],
        "content-word share": [1.0 - content_word_share(rows[i]["claim"], rows[i]["evidence"]) for i in idx],
    }
    n_contra, n_para = sum(truth), len(truth) - sum(truth)
    value = _j(flags, truth).value
    interval = bootstrap_ci(_j, flags, truth)
    lines = [
        f"### {name} set: {n_contra} contradictions, {n_para} paraphrases",
        "",
        "| figure | `offline` |",
        "|---|---|",
        "| Youden's J of 'not entailed' (contradictions − paraphrases) | "
        f"{_fmt(value, interval.low, interval.high)} |",
    ]
    for baseline, scores in baselines.items():
        labels = cross_fitted_labels(scores, truth, groups, lambda f, t: _j(f, t).value or -1.0)
        b_value = _j(labels, truth).value
        b_interval = bootstrap_ci(_j, labels, truth)
        diff, d_interval = difference_ci(_j, (flags, truth), (labels, truth))
        verdict = (
            "**beats**"
            if (d_interval.low or 0) > 0
            else ("worse" if (d_interval.high or 0) < 0 else "unclear")
        )
        sign = "+" if (diff.value or 0) >= 0 else ""
        lines.append(
            f"|   judge − {baseline} | {sign}{_fmt(diff.value, d_interval.low, d_interval.high)}"
            f" (baseline {_fmt(b_value, b_interval.low, b_interval.high)}) {verdict} |"
        )
    contra = [verdicts[i] for i, t in zip(idx, truth, strict=True) if t]
    para = [verdicts[i] for i, t in zip(idx, truth, strict=True) if not t]

    def count(items: Sequence[tuple[str, str | None]], label: str | None, reason: str | None = None) -> str:
        n = sum((label is None or v[0] == label) and (reason is None or v[1] == reason) for v in items)
        return f"{n} of {len(items)}"

    lines += [
        "| *context, no baseline:* |  |",
        f"| contradictions judged entailed (missed) | {count(contra, 'entailed')} |",
        f"| contradictions judged incorrect (a contradiction) | {count(contra, None, 'incorrect')} |",
        f"| paraphrases judged entailed | {count(para, 'entailed')} |",
        f"| paraphrases judged incorrect (a false alarm) | {count(para, None, 'incorrect')} |",
        "",
    ]
    missed = Counter(
        rows[i]["family"]
        for i in idx
        if rows[i]["expected"] == "contradiction" and verdicts[i][0] == "entailed"
    )
    if missed:
        lines.append(
            "Missed contradictions by family: " + ", ".join(f"{f} {n}" for f, n in missed.most_common()) + "."
        )
        lines.append("")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"also write {RESULTS.relative_to(HERE.parent)}")
    args = parser.parse_args(argv)
    rows = load()
    verdicts = judge(rows)
    lines = ["<!-- generated by: python validation/run_contrasts.py --write -->", ""]
    for name in dict.fromkeys(row["set"] for row in rows):
        lines += analyse(rows, verdicts, name)
    lines.append(
        "*What this shows:* whether the offline judge keeps a claim that changes one clinical fact from "
        "being entailed while it entails the same fact said otherwise, on pairs written for this project, "
        "beside word-overlap rules tuned on the other half of the pairs. *What it does not show:* agreement "
        "with clinicians (these are not human-labelled), contradictions that need reasoning rather than a "
        "changed word, or how often such errors occur in real notes. Neither set is held out: the judge's "
        "rules were fixed while looking at the failures of both."
    )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
