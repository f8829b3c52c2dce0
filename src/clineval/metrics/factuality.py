"""``tbfact``: claim-level factuality in both directions (TBFact, a text adaptation of RadFact).

The response and the reference are each split into atomic facts, each with a category
and an importance. Every response fact is then checked against the reference
(**precision**: is what the agent said supported?) and every reference fact against the
response (**recall**: did the agent say what matters?). A check gives ``entailed``,
``partial`` or ``not_entailed``, with a reason for the last two (``missing``,
``incorrect``, ``ambiguous``, ``other``) and the evidence quoted from the other text.

A fact earns credit 1 when entailed, 0 when not, and for ``partial`` what the policy
says: ``strict`` 0, ``default`` 0.5, ``lenient`` 1. Precision is the mean credit of the
response's facts, recall the mean credit of the reference's facts, F1 their harmonic
mean.

Undefined cases, defined once for the value and every sub-score: with facts on one side
only, the other side's precision or recall has no facts behind it and is undefined
(``None``), while F1 is 0, in the value and in the ``f1``, ``f1_strict``, ``f1_lenient``
and per-category F1 sub-scores alike (nothing is shared), and a note says which side had
no facts; with no fact on either side the score is not applicable.

The score's value is F1 under the chosen policy; its sub-scores hold precision,
recall and F1 under all three policies, per importance level and per category, and the
counts of inclusions, distortions and omissions (whole and partial). Its details keep
every fact with its verdict, reason, evidence and explanation.

Curated facts skip extraction: a case's ``gold_facts``, or a ``reference_facts`` file
(JSON lines ``{"id": CASE_ID, "gold_facts": [{"text", "category", "importance"}]}``, as
written by ``clineval facts``) replace the facts taken from the reference. Facts taken
from a reference are extracted once per run and judge, whatever the number of cases that
share it.

Judge calls per case: one extraction per text (none for curated facts) and one
entailment call per direction, so at most four, whatever the number of facts.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from clineval.errors import ConfigError
from clineval.judges.primitives import DEFAULT_CATEGORIES, IMPORTANCE_LEVELS, Fact, Primitives, Verdict
from clineval.metrics.base import BaseMetric, ScoreContext
from clineval.metrics.registration import metric
from clineval.model import Case, Score

Policy = Literal["strict", "default", "lenient"]
Direction = Literal["precision", "recall"]

#: Credit a partially entailed fact earns under each policy.
PARTIAL_CREDIT: dict[str, float] = {"strict": 0.0, "default": 0.5, "lenient": 1.0}
POLICIES: tuple[Policy, ...] = ("strict", "default", "lenient")
#: Sub-scores listed first (result tables show the first few of each metric).
HEADLINE = ("precision", "recall", "f1", "recall_high", "f1_strict", "f1_lenient", "distortions", "omissions")


@dataclass(frozen=True)
class FactCheck:
    """One fact of one direction with its verdict: a row of the per-fact table."""

    direction: Direction
    id: int
    fact: str
    category: str
    importance: str
    label: str
    reason: str | None
    evidence: str
    explanation: str
    support: float | None = None
    """The judge's graded support for the fact (0-1), where it grades one (the offline judge)."""

    @property
    def contradicted(self) -> bool:
        """Not (fully) entailed because the other text says otherwise: a response fact so
        checked is a distortion, partial or not."""
        return self.label != "entailed" and self.reason == "incorrect"

    @property
    def missing(self) -> bool:
        """Not entailed because the other text does not state it: an omission (a reference
        fact) or an unsupported statement (a response fact)."""
        return self.label == "not_entailed" and self.reason == "missing"

    @property
    def partly_missing(self) -> bool:
        """Partly entailed, the rest absent from the other text: a partial omission."""
        return self.label == "partial" and self.reason == "missing"

    def credit(self, policy: str) -> float:
        if self.label == "entailed":
            return 1.0
        if self.label == "partial":
            return PARTIAL_CREDIT[policy]
        return 0.0


def fact_checks(direction: Direction, facts: Sequence[Fact], verdicts: Sequence[Verdict]) -> list[FactCheck]:
    """Pair facts with their verdicts (one each, in order; anything else is a bug upstream)."""
    if len(facts) != len(verdicts):
        raise ValueError(f"{direction}: {len(facts)} facts but {len(verdicts)} verdicts")
    return [
        FactCheck(
            direction=direction,
            id=i,
            fact=fact.text,
            category=fact.category,
            importance=fact.importance,
            label=verdict.label,
            reason=verdict.reason,
            evidence=verdict.evidence,
            explanation=verdict.explanation,
            support=verdict.support,
        )
        for i, (fact, verdict) in enumerate(zip(facts, verdicts, strict=True), start=1)
    ]


def mean_credit(checks: Iterable[FactCheck], policy: str) -> float | None:
    """Mean credit of ``checks`` under ``policy``; ``None`` when there are none."""
    credits = [c.credit(policy) for c in checks]
    return sum(credits) / len(credits) if credits else None


def f1_of(precision: float | None, recall: float | None) -> float | None:
    """Harmonic mean of precision and recall; 0 when both are 0.

    With facts on one side only, one of the two is undefined (``None``) and nothing is
    shared between the texts, so F1 is 0. ``None`` only when neither is defined (no fact
    on either side).
    """
    if precision is None and recall is None:
        return None
    if precision is None or recall is None:
        return 0.0
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def tbfact_scores(
    precision_checks: Sequence[FactCheck],
    recall_checks: Sequence[FactCheck],
    *,
    categories: Sequence[str] = DEFAULT_CATEGORIES,
) -> dict[str, float | None]:
    """Every TBFact figure from the two directions' per-fact tables.

    Precision figures come only from ``precision_checks`` (response facts against the
    reference) and recall figures only from ``recall_checks`` (reference facts against
    the response). A precision or recall with no facts behind it is ``None`` (undefined),
    never 0; an F1 with facts on one side only is 0 (nothing is shared), and ``None`` only
    with no fact on either side (see :func:`f1_of`).
    Keys: ``precision``, ``recall``, ``f1`` (default policy) and the same with
    ``_strict`` and ``_lenient``; ``precision_high``/``recall_high`` (and medium, low)
    under the default policy, plus ``recall_high_strict`` and ``recall_high_lenient``;
    ``precision_cat_<category>``, ``recall_cat_<category>``, ``f1_cat_<category>``; and
    the counts ``n_response_facts``, ``n_reference_facts``, ``inclusions`` (reference
    facts the response entails), ``partial_inclusions`` (reference facts it partly
    entails, whatever the reason for the rest), ``omissions`` (reference facts not
    entailed because the response does not state them: label ``not_entailed``, reason
    ``missing``), ``partial_omissions`` (reference facts partly entailed because part of
    them is missing from the response: label ``partial``, reason ``missing``; a subset
    of ``partial_inclusions``), ``distortions`` (response facts the reference
    contradicts), ``unsupported`` (response facts the reference does not mention).
    """
    out: dict[str, float | None] = {}
    for policy in POLICIES:
        suffix = "" if policy == "default" else f"_{policy}"
        p = mean_credit(precision_checks, policy)
        r = mean_credit(recall_checks, policy)
        out[f"precision{suffix}"] = p
        out[f"recall{suffix}"] = r
        out[f"f1{suffix}"] = f1_of(p, r)
    for level in IMPORTANCE_LEVELS:
        pred = [c for c in precision_checks if c.importance == level]
        ref = [c for c in recall_checks if c.importance == level]
        out[f"precision_{level}"] = mean_credit(pred, "default")
        out[f"recall_{level}"] = mean_credit(ref, "default")
    high = [c for c in recall_checks if c.importance == "high"]
    out["recall_high_strict"] = mean_credit(high, "strict")
    out["recall_high_lenient"] = mean_credit(high, "lenient")
    seen = list(dict.fromkeys([*categories, *(c.category for c in [*precision_checks, *recall_checks])]))
    for category in seen:
        p = mean_credit((c for c in precision_checks if c.category == category), "default")
        r = mean_credit((c for c in recall_checks if c.category == category), "default")
        if p is None and r is None:
            continue
        out[f"precision_cat_{category}"] = p
        out[f"recall_cat_{category}"] = r
        out[f"f1_cat_{category}"] = f1_of(p, r)
    out["n_response_facts"] = float(len(precision_checks))
    out["n_reference_facts"] = float(len(recall_checks))
    out["inclusions"] = float(sum(c.label == "entailed" for c in recall_checks))
    out["partial_inclusions"] = float(sum(c.label == "partial" for c in recall_checks))
    out["omissions"] = float(sum(c.missing for c in recall_checks))
    out["partial_omissions"] = float(sum(c.partly_missing for c in recall_checks))
    out["distortions"] = float(sum(c.contradicted for c in precision_checks))
    out["unsupported"] = float(sum(c.missing for c in precision_checks))
    first = [k for k in HEADLINE if k in out]
    return {**{k: out[k] for k in first}, **{k: v for k, v in out.items() if k not in first}}


async def check_against(prims: Primitives, facts: Sequence[Fact], evidence: str) -> list[Verdict]:
    """Verdicts for ``facts`` against ``evidence``, asking nobody when either is empty."""
    if not facts:
        return []
    if not evidence.strip():
        empty = Verdict(label="not_entailed", reason="missing", explanation="the other text is empty")
        return [empty] * len(facts)
    return await prims.check_facts([f.text for f in facts], evidence)


def facts_as_text(facts: Sequence[Fact]) -> str:
    """Curated facts as the text the response's facts are checked against."""
    return "\n".join(f"- {fact.text}" for fact in facts)


def _retrieve_exception(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def load_reference_facts(path: str | Path) -> dict[str, list[Fact]]:
    """Curated reference facts by case id from a JSON-lines file (see the module docstring)."""
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"tbfact: cannot read reference_facts file {file}: {exc.strerror}") from None
    out: dict[str, list[Fact]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{file}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict) or "id" not in row or not isinstance(row.get("gold_facts"), list):
            raise ConfigError(f"{where}: expected an object with 'id' and a 'gold_facts' list")
        facts: list[Fact] = []
        for index, item in enumerate(row["gold_facts"]):
            data = {"text": item} if isinstance(item, str) else item
            try:
                facts.append(Fact.model_validate(data))
            except Exception as exc:
                raise ConfigError(f"{where}: gold_facts[{index}]: {exc}") from None
        out[str(row["id"])] = facts
    return out


def _short(text: str, limit: int = 90) -> str:
    """A fact for an explanation's list: cut at ``limit`` with ``…``, without its closing
    period (the list's own punctuation follows it)."""
    text = text.strip().rstrip(".").rstrip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _sentences(parts: Sequence[str]) -> str:
    """Parts joined as sentences: a period after each, unless it already ends one (``.``,
    ``…``, ``?``, ``!``), so that no ``..`` or ``….`` appears."""
    out = []
    for part in parts:
        part = part.rstrip()
        out.append(part if part.endswith((".", "…", "?", "!")) else part + ".")
    return " ".join(out)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


@metric(
    "tbfact",
    description="Claim-level factuality both ways: precision, recall, F1 (TBFact)",
    source="TBFact (Healthcare Agent Orchestrator evaluation)",
)
class TBFact(BaseMetric):
    """Claim-level factuality of the response against a reference (see the module docstring).

    Settings: ``categories`` (list of fact categories; default the six of TBFact),
    ``policy`` (``strict``, ``default`` or ``lenient``: which F1 is the score's value),
    ``reference_facts`` (a JSON-lines file of curated facts by case id),
    ``use_gold_facts`` (default true: a case's ``gold_facts`` replace the reference),
    ``directions`` (``both``, the default; ``precision`` or ``recall``: check one direction
    only, half the judge calls, and the score's value is that direction's figure).
    """

    name = "tbfact"
    requires = ("response",)
    needs_judge = True
    description = "Claim-level factuality both ways: precision, recall, F1 (TBFact)"

    def __init__(
        self,
        *,
        categories: Sequence[str] | None = None,
        policy: Policy = "default",
        reference_facts: str | Path | Mapping[str, Sequence[Fact | Mapping[str, Any] | str]] | None = None,
        use_gold_facts: bool = True,
        directions: Literal["both", "precision", "recall"] = "both",
    ):
        if directions not in ("both", "precision", "recall"):
            raise ConfigError(f"tbfact: directions must be both, precision or recall, not {directions!r}")
        self.directions = directions
        if policy not in PARTIAL_CREDIT:
            raise ConfigError(f"tbfact: policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        cats = [str(c).strip().lower() for c in (categories or DEFAULT_CATEGORIES)]
        if not cats or any(not c for c in cats):
            raise ConfigError("tbfact: categories must be a non-empty list of names")
        self.categories = tuple(dict.fromkeys(cats))
        self.policy: Policy = policy
        self.use_gold_facts = use_gold_facts
        self.curated: dict[str, list[Fact]] = {}
        if isinstance(reference_facts, str | Path):
            self.curated = load_reference_facts(reference_facts)
        elif reference_facts is not None:
            self.curated = {
                str(k): [Fact.model_validate({"text": f} if isinstance(f, str) else f) for f in v]
                for k, v in reference_facts.items()
            }
        self._extracted: dict[tuple[str, str], asyncio.Task[list[Fact]]] = {}

    async def _reference_facts(self, prims: Primitives, text: str) -> list[Fact]:
        """Facts of a reference text, extracted once per judge and text."""
        key = (prims.name, text_digest(text))
        task = self._extracted.get(key)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = asyncio.ensure_future(prims.extract_facts(text, self.categories))
            # Shared by every case with this reference: when the run stops (a 401 mid-run
            # cancels the cases awaiting it), nobody may be left to retrieve its error,
            # and asyncio would print "Task exception was never retrieved" with a traceback.
            task.add_done_callback(_retrieve_exception)
            self._extracted[key] = task
        return list(await asyncio.shield(task))

    async def score(self, case: Case, ctx: ScoreContext) -> Score:
        prims = ctx.primitives()
        response = case.response or ""
        source: str
        if case.id in self.curated:
            ref_facts, source = self.curated[case.id], "reference_facts file"
        elif self.use_gold_facts and case.gold_facts:
            ref_facts = [
                Fact(text=g.text, category=g.category or "other", importance=g.importance or "medium")
                for g in case.gold_facts
            ]
            source = "gold_facts"
        elif case.reference is not None:
            ref_facts, source = (
                (
                    await self._reference_facts(prims, case.reference)
                    if self.directions != "precision"
                    else []
                ),
                "extracted from reference"
                if self.directions != "precision"
                else "not needed (precision only)",
            )
        else:
            return Score.failed(
                "the case has neither 'reference' nor 'gold_facts', one of which metric 'tbfact' requires",
                missing_fields=["reference"],
            )
        evidence = case.reference if case.reference is not None else facts_as_text(ref_facts)

        pred_facts = (
            await prims.extract_facts(response, self.categories)
            if response.strip() and self.directions != "recall"
            else []
        )
        if self.directions == "precision" and not pred_facts:
            return Score.not_applicable("the response states no fact (precision only)")
        if self.directions == "recall" and not ref_facts:
            return Score.not_applicable("the reference states no fact (recall only)")
        if not pred_facts and not ref_facts:
            return Score.not_applicable("neither the response nor the reference states a fact")
        pred_verdicts, ref_verdicts = await asyncio.gather(
            check_against(prims, pred_facts, evidence), check_against(prims, ref_facts, response)
        )
        precision_checks = fact_checks("precision", pred_facts, pred_verdicts)
        recall_checks = fact_checks("recall", ref_facts, ref_verdicts)
        figures = tbfact_scores(precision_checks, recall_checks, categories=self.categories)
        suffix = "" if self.policy == "default" else f"_{self.policy}"
        p, r, f1 = figures[f"precision{suffix}"], figures[f"recall{suffix}"], figures[f"f1{suffix}"]
        if self.directions != "both":
            one = p if self.directions == "precision" else r
            counted = len(precision_checks) if self.directions == "precision" else len(recall_checks)
            # The other direction was not checked: its figures, and F1, are not known.
            figures = {k: (None if k.startswith("f1") else v) for k, v in figures.items()}
            return Score(
                value=one,
                explanation=(
                    f"{self.directions} {_fmt(one)} over {counted} fact(s) "
                    f"({self.policy} policy; {self.directions} only)"
                ),
                sub_scores=figures,
                details={
                    "policy": self.policy,
                    "directions": self.directions,
                    "reference_facts_source": source,
                    "judge": prims.name,
                    "judge_kind": prims.kind,
                    "judge_settings": prims.describe(),
                    "facts": [asdict(c) for c in [*precision_checks, *recall_checks]],
                    "reference_digest": text_digest(evidence),
                },
            )
        notes: list[str] = []
        if p is None:
            notes.append(
                "the response states no fact, so precision is undefined and F1 is 0 (nothing is shared)"
            )
        if r is None:
            notes.append(
                "the reference states no fact, so recall is undefined and F1 is 0 (nothing is shared)"
            )
        assert f1 is not None  # a fact on one side at least (neither side: not applicable above)
        explanation = self._explain(p, r, f1, precision_checks, recall_checks, notes)
        return Score(
            value=f1,
            label=None,
            explanation=explanation,
            sub_scores=figures,
            details={
                "policy": self.policy,
                "reference_facts_source": source,
                "judge": prims.name,
                "judge_kind": prims.kind,
                "judge_settings": prims.describe(),
                "notes": notes,
                "facts": [asdict(c) for c in [*precision_checks, *recall_checks]],
                "reference_digest": text_digest(evidence),
            },
        )

    def _explain(
        self,
        p: float | None,
        r: float | None,
        f1: float,
        precision_checks: Sequence[FactCheck],
        recall_checks: Sequence[FactCheck],
        notes: list[str],
    ) -> str:
        parts = [
            f"precision {_fmt(p)} over {len(precision_checks)} response fact(s), "
            f"recall {_fmt(r)} over {len(recall_checks)} reference fact(s), "
            f"F1 {f1:.2f} ({self.policy} policy)"
        ]
        distortions = [c for c in precision_checks if c.contradicted]
        omissions = [c for c in recall_checks if c.missing]
        if distortions:
            parts.append("contradicted: " + "; ".join(_short(c.fact) for c in distortions[:3]))
        if omissions:
            high = [c for c in omissions if c.importance == "high"]
            shown = (high or omissions)[:3]
            parts.append(
                f"omitted{' (high importance)' if high else ''}: " + "; ".join(_short(c.fact) for c in shown)
            )
        parts.extend(notes)
        return _sentences(parts)


def reference_facts_of_run(results: Iterable[Any], metric_name: str = "tbfact") -> list[dict[str, Any]]:
    """The reference facts a run's TBFact scores used, one row per case, ready to edit.

    ``results`` are stored result records (``EvalResult.results``). Each row is
    ``{"id", "gold_facts": [{"text", "category", "importance"}], "source", "reference_digest"}``;
    written as JSON lines, the file goes back in as ``tbfact(reference_facts=FILE)``.
    """
    rows: list[dict[str, Any]] = []
    for record in results:
        if record.metric != metric_name or record.score.status == "error":
            continue
        facts = [f for f in record.score.details.get("facts", []) if f.get("direction") == "recall"]
        rows.append(
            {
                "id": record.case_id,
                "gold_facts": [
                    {"text": f["fact"], "category": f["category"], "importance": f["importance"]}
                    for f in facts
                ],
                "source": record.score.details.get("reference_facts_source"),
                "reference_digest": record.score.details.get("reference_digest"),
            }
        )
    return rows


def write_reference_facts(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write rows from :func:`reference_facts_of_run` as JSON lines."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return file
