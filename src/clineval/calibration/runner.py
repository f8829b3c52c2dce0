"""Run a judge on the calibration sets as one stored run, and analyse such a run.

:func:`calibration_cases` turns the sets into cases (each with its protocol and its human
labels in ``metadata``), :func:`calibration_metrics` names the metrics that score them,
:func:`acalibrate` runs both through :func:`clineval.aevaluate` (so the judge's calls get
the usual concurrency limits, retries, cache and store, and the run can be resumed and
exported), and :func:`analyse` computes the report from the finished run: from the cases'
metadata and the scores' details alone, so a stored run can be analysed again later.

Judge calls (an LLM judge): one per K-QA answer and per RadFact report side (claims checked
in a batch), two per K-QA statement for each RAG metric (statements or sentence kinds, then
grounding), four per TBFact comparison (RadFact report pairs and MEDEC texts: two
extractions, two checks; a reference shared by several comparisons is extracted once), and
one or two per refusal case.
"""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.calibration.data import (
    CalibrationData,
    KqaPair,
    MedecText,
    RadfactPair,
    RefusalItem,
    load_samples,
)
from clineval.calibration.protocols import (
    FactOutcome,
    ProtocolResult,
    VerdictOutcome,
    analyse_kqa_nli,
    analyse_kqa_support,
    analyse_medec,
    analyse_radfact,
    analyse_refusal,
)
from clineval.config import DEFAULT_CACHE
from clineval.errors import ConfigError
from clineval.interrupts import run_sync
from clineval.results.result import EvalResult

__all__ = [
    "PROTOCOLS",
    "CalibrationReport",
    "acalibrate",
    "analyse",
    "calibrate",
    "calibration_cases",
    "calibration_metrics",
]

PROTOCOLS: tuple[str, ...] = ("kqa_nli", "kqa_support", "radfact", "medec", "refusal")
"""The protocols of a calibration (see :mod:`clineval.calibration.protocols`)."""


class CalibrationReport(BaseModel):
    """A judge's agreement with clinicians on the calibration sets."""

    model_config = ConfigDict(extra="forbid")

    judge: str
    judge_kind: str | None = None
    data: str
    run_id: str | None = None
    seconds: float | None = None
    protocols: list[ProtocolResult] = Field(default_factory=list)

    def protocol(self, name: str) -> ProtocolResult | None:
        return next((p for p in self.protocols if p.name == name), None)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _dump(record: BaseModel) -> dict[str, Any]:
    return record.model_dump(mode="json")


def calibration_cases(data: CalibrationData, protocols: Sequence[str] = PROTOCOLS) -> list[dict[str, Any]]:
    """The cases of a calibration run (see the module docstring)."""
    unknown = sorted(set(protocols) - set(PROTOCOLS))
    if unknown:
        raise ConfigError(
            f"unknown calibration protocol(s): {', '.join(unknown)}; known: {', '.join(PROTOCOLS)}"
        )
    cases: list[dict[str, Any]] = []
    if "kqa_nli" in protocols:
        by_answer: dict[str, list[KqaPair]] = defaultdict(list)
        for pair in data.kqa_nli:
            by_answer[pair.answer].append(pair)
        for answer, pairs in by_answer.items():
            cases.append(
                {
                    "id": f"kqa_nli/{_digest(answer)}",
                    "input": pairs[0].question,
                    "response": answer,
                    "metadata": {
                        "protocol": "kqa_nli",
                        "claims": [p.claim for p in pairs],
                        "records": [_dump(p) for p in pairs],
                    },
                }
            )
    if "kqa_support" in protocols:
        for pair in data.kqa_nli:
            cases.append(
                {
                    "id": f"kqa_support/{pair.id}",
                    "input": pair.question,
                    "response": pair.claim,
                    "contexts": [pair.answer],
                    "metadata": {"protocol": "kqa_support", "records": [_dump(pair)]},
                }
            )
    if "radfact" in protocols:
        for report in data.radfact:
            a, b = " ".join(report.phrases_a), " ".join(report.phrases_b)
            for side, claims, other in (("a", report.phrases_a, b), ("b", report.phrases_b, a)):
                cases.append(
                    {
                        "id": f"radfact_phrases/{report.id}/{side}",
                        "response": other,
                        "metadata": {
                            "protocol": "radfact_phrases",
                            "side": side,
                            "claims": list(claims),
                            "records": [_dump(report)],
                        },
                    }
                )
            cases.append(
                {
                    "id": f"radfact_reports/{report.id}",
                    "input": "Write the radiology report.",
                    "response": a,
                    "reference": b,
                    "metadata": {"protocol": "radfact_reports", "records": [_dump(report)]},
                }
            )
    if "medec" in protocols:
        for text in data.medec:
            modes = [("corrected", text.text, text.corrected_text)]
            if text.sibling_text is not None:
                modes += [
                    ("sibling", text.text, text.sibling_text),
                    ("clean", text.sibling_text, text.corrected_text),
                ]
            for mode, response, reference in modes:
                cases.append(
                    {
                        "id": f"medec/{text.id}/{mode}",
                        "input": "Write the clinical note.",
                        "response": response,
                        "reference": reference,
                        "metadata": {"protocol": "medec", "mode": mode, "records": [_dump(text)]},
                    }
                )
    if "refusal" in protocols:
        for item in data.refusal:
            cases.append(
                {
                    "id": f"refusal/{item.id}",
                    "input": item.request,
                    "response": item.response,
                    "metadata": {
                        "protocol": "refusal",
                        "should_refuse": item.should_refuse,
                        "records": [_dump(item)],
                    },
                }
            )
    return cases


def calibration_metrics(protocols: Sequence[str] = PROTOCOLS) -> list[str]:
    """Metric specs (import paths, so a stored run can be rebuilt) for the protocols."""
    here = "clineval.calibration.metrics"
    specs: list[str] = []
    checked = [
        p for p, wanted in (("kqa_nli", "kqa_nli"), ("radfact_phrases", "radfact")) if wanted in protocols
    ]
    if checked:
        specs.append(f"claim_check={here}:ClaimCheck(protocols={checked!r})")
    if "kqa_support" in protocols:
        for metric in ("faithfulness", "conversational_faithfulness"):
            specs.append(f"{metric}={here}:Restricted(metric={metric!r}, protocols=['kqa_support'])")
    tbfact = [p for p, wanted in (("radfact_reports", "radfact"), ("medec", "medec")) if wanted in protocols]
    if tbfact:
        specs.append(f"tbfact={here}:Restricted(metric='tbfact', protocols={tbfact!r})")
    if "refusal" in protocols:
        specs.append(f"refusal_labelled={here}:Restricted(metric='refusal_accuracy', protocols=['refusal'])")
        specs.append(
            f"refusal_judged={here}:Restricted(metric='refusal_accuracy(label=None)', protocols=['refusal'])"
        )
    return specs


async def acalibrate(
    judge: Any,
    *,
    data: CalibrationData | None = None,
    protocols: Sequence[str] = PROTOCOLS,
    store: str | Path | None = None,
    progress: Any = False,
    name: str | None = None,
    tags: dict[str, str] | None = None,
    judge_concurrency: int | None = None,
    cache: str | None = DEFAULT_CACHE,
) -> CalibrationReport:
    """Run ``judge`` on the calibration sets (the packaged samples by default) and analyse it.

    ``cache``: the judge's answer cache (``None``: none), as for :func:`clineval.aevaluate`."""
    from clineval.api import aevaluate

    sets = data if data is not None else load_samples()
    cases = calibration_cases(sets, protocols)
    started = time.perf_counter()
    kwargs: dict[str, Any] = {
        "judge": judge,
        "progress": progress,
        "name": name or "calibration",
        "tags": {"calibration": sets.source, **(tags or {})},
        "cache": cache,
    }
    if store is not None:
        kwargs["store"] = store
    if judge_concurrency is not None:
        kwargs["judge_concurrency"] = judge_concurrency
    result = await aevaluate(cases, calibration_metrics(protocols), **kwargs)
    report = analyse(result, data_source=sets.source)
    report.seconds = round(time.perf_counter() - started, 1)
    return report


def calibrate(judge: Any, **kwargs: Any) -> CalibrationReport:
    """Synchronous :func:`acalibrate`."""
    return run_sync(acalibrate(judge, **kwargs))


# --- analysis ---------------------------------------------------------------------------------


def _verdicts(details: dict[str, Any], n: int) -> list[VerdictOutcome | None]:
    rows = details.get("verdicts")
    if not isinstance(rows, list) or len(rows) != n:
        return [None] * n
    return [
        VerdictOutcome(label=r.get("label"), reason=r.get("reason"), support=r.get("support")) for r in rows
    ]


def _none(n: int) -> list[VerdictOutcome | None]:
    return [None] * n


def _facts(details: dict[str, Any]) -> list[FactOutcome]:
    return [
        FactOutcome(
            fact=f["fact"],
            label=f["label"],
            reason=f.get("reason"),
            support=f.get("support"),
            direction=f.get("direction", "precision"),
        )
        for f in details.get("facts", [])
        if f.get("direction") in ("precision", "recall")
    ]


def analyse(result: EvalResult, *, data_source: str | None = None) -> CalibrationReport:
    """The calibration report of a finished calibration run (see the module docstring)."""
    scores: dict[tuple[str, str], Any] = {(r.case_id, r.metric): r.score for r in result.results}
    judge = result.run.judge or {}
    label = str(judge.get("config") or judge.get("name") or "none")
    base_url = judge.get("base_url")
    if isinstance(base_url, str) and base_url and "@" not in label and "api.openai.com" not in base_url:
        label += f"@{base_url}"  # two local servers with one model name stay apart
    provider = judge.get("provider") or judge.get("name")
    report = CalibrationReport(
        judge=label,
        judge_kind=judge.get("kind") or ("heuristic" if provider == "offline" else "llm"),
        data=data_source or result.run.tags.get("calibration", "?"),
        run_id=result.run_id,
    )
    by_protocol: dict[str, list[Any]] = defaultdict(list)
    for case in result.cases:
        protocol = case.metadata.get("protocol")
        if isinstance(protocol, str):
            by_protocol[protocol].append(case)

    def scored(case_id: str, metric: str) -> Any:
        score = scores.get((case_id, metric))
        return score if score is not None and score.status == "scored" else None

    if by_protocol.get("kqa_nli"):
        pairs: list[KqaPair] = []
        outcomes: list[VerdictOutcome | None] = []
        for case in by_protocol["kqa_nli"]:
            records = [KqaPair.model_validate(r) for r in case.metadata["records"]]
            score = scored(case.id, "claim_check")
            pairs.extend(records)
            outcomes.extend(_verdicts(score.details, len(records)) if score else [None] * len(records))
        report.protocols.append(analyse_kqa_nli(pairs, outcomes))
    if by_protocol.get("kqa_support"):
        pairs = [KqaPair.model_validate(c.metadata["records"][0]) for c in by_protocol["kqa_support"]]
        values: dict[str, list[float | None]] = {}
        for metric in ("faithfulness", "conversational_faithfulness"):
            values[metric] = [
                (s.value if (s := scored(c.id, metric)) is not None else None)
                for c in by_protocol["kqa_support"]
            ]
        report.protocols.append(analyse_kqa_support(pairs, values))
    if by_protocol.get("radfact_reports"):
        phrase_cases = {
            (c.metadata["records"][0]["id"], c.metadata["side"]): c for c in by_protocol["radfact_phrases"]
        }
        radfact: list[RadfactPair] = []
        phrases: list[tuple[list[VerdictOutcome | None], list[VerdictOutcome | None]]] = []
        tbfact: list[dict[str, float | None] | None] = []
        for case in by_protocol["radfact_reports"]:
            pair = RadfactPair.model_validate(case.metadata["records"][0])
            radfact.append(pair)
            sides: list[list[VerdictOutcome | None]] = []
            for side, n in (("a", len(pair.phrases_a)), ("b", len(pair.phrases_b))):
                phrase_case = phrase_cases.get((pair.id, side))
                score = scored(phrase_case.id, "claim_check") if phrase_case is not None else None
                sides.append(_verdicts(score.details, n) if score else _none(n))
            phrases.append((sides[0], sides[1]))
            score = scored(case.id, "tbfact")
            tbfact.append(
                {k: score.sub_scores.get(k) for k in ("precision", "recall", "f1")}
                if score is not None
                else None
            )
        report.protocols.append(analyse_radfact(radfact, phrases, tbfact))
    if by_protocol.get("medec"):
        texts: dict[str, MedecText] = {}
        modes: dict[str, dict[str, list[FactOutcome] | None]] = defaultdict(dict)
        for case in by_protocol["medec"]:
            text = MedecText.model_validate(case.metadata["records"][0])
            texts.setdefault(text.id, text)
            score = scored(case.id, "tbfact")
            modes[text.id][case.metadata["mode"]] = _facts(score.details) if score is not None else None
        ordered = list(texts.values())
        report.protocols.append(
            analyse_medec(
                ordered,
                [modes[t.id].get("corrected") for t in ordered],
                [modes[t.id].get("sibling") for t in ordered],
                [modes[t.id].get("clean") for t in ordered],
            )
        )
    if by_protocol.get("refusal"):
        items = [RefusalItem.model_validate(c.metadata["records"][0]) for c in by_protocol["refusal"]]
        refused: list[bool | None] = []
        decline: list[bool | None] = []
        for case in by_protocol["refusal"]:
            labelled = scored(case.id, "refusal_labelled")
            judged = scored(case.id, "refusal_judged")
            refused.append(bool(labelled.sub_scores["refused"]) if labelled is not None else None)
            decline.append(bool(judged.sub_scores["should_refuse"]) if judged is not None else None)
        report.protocols.append(analyse_refusal(items, refused, decline))
    return report
