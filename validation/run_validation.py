"""Measure how far clineval's judges agree with clinicians on the full public sets.

Runs the calibration protocols (:mod:`clineval.calibration`: K-QA, K-QA as RAG answers,
RadFact, MEDEC, refusal), the same that ``clineval calibrate`` runs on the packaged
samples, on the whole of each public data set in ``../shared/data`` (or ``--data DIR``),
every figure beside the trivial baselines with paired intervals. For the offline judge it
also times TBFact on the ACI-Bench note pairs. Results go to ``validation/results/`` as
JSON; ``--write-docs`` rewrites the figures block of ``docs/validation.md`` and the offline
judge's measured figures shipped in the package (which its notice quotes).

Run from the repository root::

    python validation/run_validation.py --write-docs                          # the offline judge
    python validation/run_validation.py --judge offline --judge openai:MODEL --write-docs
    python validation/run_validation.py --write-samples                       # regenerate the samples

``CLINEVAL_VALIDATION_JUDGE`` adds a judge spec to the list. ``--llm-samples`` measures judges
other than ``offline`` on the packaged samples only (for slow or paid endpoints);
``--reuse SPEC`` takes a judge's figures from ``validation/results/`` instead of measuring again.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clineval.calibration import CalibrationReport, calibrate, load_data, select_samples
from clineval.calibration.data import SAMPLES, write_samples
from clineval.calibration.render import markdown

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data"
RESULTS = Path(__file__).resolve().parent / "results"
DOC = ROOT / "docs" / "validation.md"
MEASURED = ROOT / "src" / "clineval" / "judges" / "offline" / "measured.json"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"
LODO_NOTE = (
    "**Read the first column.** `offline, leave-one-dataset-out` is the evidence: on each data set the "
    "offline judge decides with the model fitted without that set (`validation/fit_decision.py`). "
    "`offline, development` is the judge as shipped, whose decision was fitted on these sets too: "
    "development figures, not evidence.\n"
)


def aci_speed(data: Path) -> dict[str, Any]:
    """Offline TBFact (both directions, facts extracted from both notes) on the ACI-Bench
    test notes: each BART system note against the reference note of the same visit,
    timed per pair after the model load."""
    from clineval.judges.offline import OfflinePrimitives

    csv.field_size_limit(10**8)
    folder = data / "aci-bench"

    def notes(name: str) -> list[str]:
        with (folder / name).open(encoding="utf-8", newline="") as handle:
            return [row["note"] for row in csv.DictReader(handle)]

    references = notes("clinicalnlp_taskB_test1.csv")
    systems = notes("pred_BART_large_clinicalnlp_taskB_test1_full.csv")
    prims = OfflinePrimitives()
    prims.encoder.encode(["warm up"])

    async def pair(a: str, b: str) -> int:
        fa, fb = await asyncio.gather(prims.extract_facts(a), prims.extract_facts(b))
        await asyncio.gather(
            prims.check_facts([f.text for f in fa], b), prims.check_facts([f.text for f in fb], a)
        )
        return len(fa) + len(fb)

    times: list[float] = []
    facts = 0
    for a, b in zip(systems, references, strict=True):
        started = time.perf_counter()
        facts += asyncio.run(pair(a, b))
        times.append(time.perf_counter() - started)
    times.sort()
    return {
        "pairs": len(times),
        "facts": facts,
        "median_seconds": round(statistics.median(times), 3),
        "p90_seconds": round(times[int(0.9 * (len(times) - 1))], 3),
        "max_seconds": round(times[-1], 3),
    }


def measured_summary(report: CalibrationReport, speed: dict[str, Any] | None, command: str) -> dict[str, Any]:
    """The offline judge's headline figures, shipped in the package for its notice."""

    def figure(protocol: str, key: str) -> dict[str, Any] | None:
        result = report.protocol(protocol)
        found = result.figure(key) if result is not None else None
        if found is None or found.judge.value is None:
            return None
        return {
            "value": round(found.judge.value, 3),
            "low": None if found.judge.low is None else round(found.judge.low, 3),
            "high": None if found.judge.high is None else round(found.judge.high, 3),
            "n": found.judge.n,
            "baselines": {
                c.baseline: {
                    "value": None if c.value.value is None else round(c.value.value, 3),
                    "difference_low": None if c.difference.low is None else round(c.difference.low, 3),
                }
                for c in found.baselines
            },
        }

    kqa = report.protocol("kqa_nli")
    return {
        "generated_by": command,
        "data": report.data,
        "figures": {
            "kqa_kappa3": figure("kqa_nli", "kappa3"),
            "kqa_kappa2": figure("kqa_nli", "kappa2"),
            "kqa_auc": figure("kqa_nli", "auc"),
            "kqa_support_auc_faithfulness": figure("kqa_support", "auc_faithfulness"),
            "kqa_support_auc_cf": figure("kqa_support", "auc_conversational_faithfulness"),
            "radfact_spearman_f1": figure("radfact", "report_spearman_f1"),
            "medec_detected": figure("medec", "detected_corrected"),
            "medec_false_flags": figure("medec", "false_flags"),
            "refusal_kappa": figure("refusal", "detect_kappa"),
        },
        "physicians_kappa": (
            [v.get("value") for v in kqa.info.get("physician_pairs", {}).values()] if kqa is not None else []
        ),
        "aci_bench_speed": speed,
    }


FOLDS = RESULTS / "decision-folds"
LODO_NAME = "offline, leave-one-dataset-out"
DEVELOPMENT_NAME = "offline, development"
# Which data set each protocol measures on: its figures come from the decision fitted without it.
_FOLD_PROTOCOLS = (("kqa", ("kqa_nli", "kqa_support")), ("radfact", ("radfact",)), ("medec", ("medec",)))


def lodo_report(data: Any, store: Path) -> CalibrationReport:
    """The offline judge measured leave-one-dataset-out: each protocol with the fitted
    decision of ``validation/fit_decision.py`` that did not see its data set (refusal does
    not use the decision)."""
    from clineval.judges.offline import OfflineJudge
    from clineval.judges.offline.decision import load_decision

    parts: list[CalibrationReport] = []
    for fold, protocols in _FOLD_PROTOCOLS:
        path = FOLDS / f"without-{fold}.json"
        if not path.is_file():
            sys.exit(f"--lodo: no model at {path}; run python validation/fit_decision.py --write first")
        judge = OfflineJudge(decision=load_decision(path))
        parts.append(calibrate(judge, data=data, protocols=protocols, store=store / f"{fold}.db", cache=None))
    parts.append(
        calibrate(OfflineJudge(), data=data, protocols=("refusal",), store=store / "refusal.db", cache=None)
    )
    return CalibrationReport(
        judge=LODO_NAME,
        judge_kind=parts[0].judge_kind,
        data=parts[0].data,
        seconds=round(sum(p.seconds or 0.0 for p in parts), 1),
        protocols=[protocol for part in parts for protocol in part.protocols],
    )


def write_docs(block: str, command: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    if START not in text or END not in text:
        sys.exit(f"{DOC} has no {START} ... {END} block to fill")
    stamp = f"<!-- generated by: {command} -->\n\n"
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(head + START + "\n" + stamp + block.rstrip() + "\n\n" + END + tail, encoding="utf-8")


def speed_markdown(speed: dict[str, Any] | None) -> str:
    if not speed:
        return ""
    return (
        "### Speed: offline TBFact on ACI-Bench note pairs\n\n"
        f"{speed['pairs']} pairs (BART system note against the reference note of the same visit, "
        f"{speed['facts']} facts, both directions): median {speed['median_seconds']:.2f} s per pair, "
        f"90th percentile {speed['p90_seconds']:.2f} s, max {speed['max_seconds']:.2f} s, "
        "on this repository's 2-core machine after the model load.\n"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--judge", action="append", help="judge spec (repeatable); default: offline")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    parser.add_argument(
        "--llm-samples", action="store_true", help="judges other than offline: packaged samples only"
    )
    parser.add_argument(
        "--reuse", action="append", default=[], help="read this judge's figures from results/"
    )
    parser.add_argument(
        "--write-docs", action="store_true", help="update docs/validation.md and measured.json"
    )
    parser.add_argument(
        "--write-samples", action="store_true", help="regenerate the packaged samples and stop"
    )
    parser.add_argument("--no-speed", action="store_true", help="skip the ACI-Bench timing")
    parser.add_argument(
        "--lodo",
        action="store_true",
        help="measure the offline judge leave-one-dataset-out (the evidence) beside its development figures",
    )
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        sys.exit(f"no data folder at {args.data}; pass --data DIR")
    data = load_data(args.data)
    if args.write_samples:
        write_samples(select_samples(data), SAMPLES)
        print(f"wrote {select_samples(data).counts()} to {SAMPLES}")
        return
    judges = list(args.judge or ["offline"])
    extra = os.environ.get("CLINEVAL_VALIDATION_JUDGE")
    if extra and extra not in judges:
        judges.append(extra)
    RESULTS.mkdir(parents=True, exist_ok=True)
    reports: list[CalibrationReport] = []
    speeds: dict[str, Any] = {}
    for spec in judges:
        saved = RESULTS / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', spec)}.json"
        if spec in args.reuse:
            if not saved.is_file():
                sys.exit(f"--reuse {spec}: no saved figures at {saved}")
            stored = json.loads(saved.read_text(encoding="utf-8"))
            reports.append(CalibrationReport.model_validate(stored["report"]))
            speeds[spec] = stored.get("aci_bench_speed")
            print(f"== {spec}: figures read from {saved}", flush=True)
            continue
        sets = select_samples(data) if (args.llm_samples and spec != "offline") else data
        print(f"== {spec} on {sets.source}", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            report = calibrate(spec, data=sets, store=Path(tmp) / "validation.db", cache=None)
            if spec == "offline" and args.lodo:
                print(f"== {LODO_NAME} on {sets.source}", flush=True)
                lodo = lodo_report(sets, Path(tmp))
                report.judge = DEVELOPMENT_NAME
                reports.append(lodo)
                speeds[LODO_NAME] = None
                (RESULTS / "offline-lodo.json").write_text(
                    json.dumps({"report": lodo.model_dump(mode="json")}, indent=1), encoding="utf-8"
                )
        speed = aci_speed(args.data) if spec == "offline" and not args.no_speed else None
        reports.append(report)
        speeds[spec] = speed
        saved.write_text(
            json.dumps({"report": report.model_dump(mode="json"), "aci_bench_speed": speed}, indent=1),
            encoding="utf-8",
        )
        print(f"   {report.seconds} s; wrote {saved}", flush=True)
    block = markdown(reports) + "\n" + speed_markdown(speeds.get("offline"))
    if args.lodo:
        block = LODO_NOTE + "\n" + block
    print(block)
    if args.write_docs:
        command = (
            "python validation/run_validation.py "
            + " ".join(f"--judge {j}" for j in judges)
            + (" --llm-samples" if args.llm_samples else "")
            + "".join(f" --reuse {j}" for j in args.reuse)
            + (" --lodo" if args.lodo else "")
            + " --write-docs"
        )
        write_docs(block, command)
        offline = next((r for r in reports if r.judge == LODO_NAME), None) or next(
            (r for r in reports if r.judge in ("offline", DEVELOPMENT_NAME)), None
        )
        if offline is not None:
            MEASURED.write_text(
                json.dumps(measured_summary(offline, speeds.get("offline"), command), indent=1) + "\n",
                encoding="utf-8",
            )
        print(f"updated {DOC} and {MEASURED}")


if __name__ == "__main__":
    main()
