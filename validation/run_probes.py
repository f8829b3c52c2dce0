"""Clinical probes: does a judge catch each class of clinical error a clinician would test, and
accept each class of correct rewording, beside two trivial baselines on the same probes?

The probes (``validation/probes/probes.jsonl``) were written for this project, a few of each
class, in the language of clinical notes, radiology reports and patient answers. An *error*
probe changes one clinical fact (an allergen, a site, a side, a dosing interval, an organism,
an order of magnitude, a biomarker status, a subtype, a stage, a drug of the same class, an
item of a list, the answer to a yes/no question); a *rewording* probe says the same fact in
other words (lay terms, abbreviations, other units, a negative finding put otherwise, a stage
in short or long form, a courtesy sentence around an answer). Each probe is one line:

* ``metric: "check"``: ``claim`` checked against ``evidence`` with the judge's ``check_facts``
  primitive; ``expect`` is ``"not_entailed"`` (error) or ``"entailed"`` (rewording), and the
  probe passes when the verdict's label is exactly that (a ``partial`` passes neither).
* a metric (``tbfact``, ``faithfulness``, ``conversational_faithfulness``,
  ``answer_relevance``) run as a plain metric on a case built from the probe's ``reference``,
  ``question`` and ``contexts``: either a pair, ``correct`` and ``wrong`` responses with
  ``expect: "correct_higher"`` (the correct one must score strictly higher; ``max`` bounds
  the wrong one's score, ``min`` the correct one's), or one ``response`` with a bound
  (``max`` for an error, ``min`` for a rewording). ``score`` names the figure: ``value`` or
  a sub-score such as ``recall``.

Every probe has an ``id``, a ``class`` (one of :data:`CLASSES`), its ``kind`` (``error`` or
``rewording``, as the class says) and may carry a ``note`` saying why a clinician would judge
it so.

Baselines (:mod:`clineval.calibration.baselines`): ROUGE-L precision and content-word share
of the text against what it is checked against (the evidence; the reference for TBFact, or
the response for its recall; the contexts for the faithfulness metrics; the question for
answer relevance). On a pair, a baseline passes when the correct response's overlap is
strictly higher. Elsewhere it flags a text whose overlap is below a threshold cross-fitted on
the other half of the probes (split by evidence) to maximise Youden's J
(:func:`clineval.calibration.protocols.cross_fitted_labels`), and passes when it flags the
errors and not the rewordings.

    python validation/run_probes.py                          # the offline judge
    python validation/run_probes.py --judge offline --judge openai:gpt-4o-mini
    python validation/run_probes.py --write                  # also write validation/probes/results.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from clineval.calibration.baselines import BASELINES, content_word_share, rouge_l
from clineval.calibration.protocols import cross_fitted_labels, youden_j
from clineval.errors import ClinevalError, ConfigError, field_errors
from clineval.interrupts import run_sync
from clineval.judges.base import Judge, JudgeError
from clineval.judges.config import JudgeConfig, build_judge
from clineval.metrics.base import Metric, ScoreContext, score_case
from clineval.metrics.registry import build_metric
from clineval.model import Case, Score

HERE = Path(__file__).resolve().parent
PROBES = HERE / "probes" / "probes.jsonl"
RESULTS = HERE / "probes" / "results.md"

Kind = Literal["error", "rewording"]
MetricName = Literal["check", "tbfact", "faithfulness", "conversational_faithfulness", "answer_relevance"]

#: Every probe class, with its kind, in the order results are shown.
CLASSES: dict[str, Kind] = {
    "allergen_swap": "error",
    "adjacent_site": "error",
    "symptom_polarity": "error",
    "dosing_interval": "error",
    "organism_swap": "error",
    "order_of_magnitude": "error",
    "biomarker_status": "error",
    "disease_subtype": "error",
    "side_swap": "error",
    "stage_or_grade": "error",
    "drug_within_class": "error",
    "list_item_dropped": "error",
    "yes_no_wrong_answer": "error",
    "lay_terms": "rewording",
    "abbreviations": "rewording",
    "unit_conversion": "rewording",
    "negative_finding_reworded": "rewording",
    "stage_short_form": "rewording",
    "empathy_sentence": "rewording",
}
MIN_PER_CLASS = 5
_TOLERANCE = 1e-9
_ALIASES = {"minimum": "min", "maximum": "max", "class_": "class"}


class Probe(BaseModel):
    """One probe (see the module docstring for the fields each kind of probe takes)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str = Field(min_length=1)
    class_: str = Field(alias="class")
    kind: Kind
    metric: MetricName
    note: str | None = None
    evidence: str | None = None
    claim: str | None = None
    question: str | None = None
    reference: str | None = None
    contexts: list[str] | None = None
    response: str | None = None
    correct: str | None = None
    wrong: str | None = None
    score: str = "value"
    expect: Literal["entailed", "not_entailed", "correct_higher"] | None = None
    minimum: float | None = Field(default=None, alias="min", ge=0, le=1)
    maximum: float | None = Field(default=None, alias="max", ge=0, le=1)

    @model_validator(mode="after")
    def _consistent(self) -> Probe:
        kind = CLASSES.get(self.class_)
        if kind is None:
            raise ValueError(f"unknown class {self.class_!r}; expected one of {', '.join(CLASSES)}")
        if self.kind != kind:
            raise ValueError(f"class {self.class_!r} holds {kind} probes, not {self.kind} probes")
        if self.metric == "check":
            self._check_probe()
        else:
            self._metric_probe()
        return self

    def _absent(self, *names: str) -> None:
        given = [_ALIASES.get(n, n) for n in names if getattr(self, n) is not None]
        if given:
            raise ValueError(f"a {self.metric} probe takes no {', '.join(given)}")

    def _check_probe(self) -> None:
        if not (self.evidence or "").strip() or not (self.claim or "").strip():
            raise ValueError("a check probe needs a non-empty evidence and claim")
        self._absent(
            "question", "reference", "contexts", "response", "correct", "wrong", "minimum", "maximum"
        )
        wanted = "not_entailed" if self.kind == "error" else "entailed"
        if self.expect != wanted:
            raise ValueError(f"a check probe of kind {self.kind} expects {wanted!r}, not {self.expect!r}")
        if self.score != "value":
            raise ValueError("a check probe takes no score")

    def _metric_probe(self) -> None:
        self._absent("evidence", "claim")
        needs = {
            "tbfact": ("reference",),
            "faithfulness": ("question", "contexts"),
            "conversational_faithfulness": ("question", "contexts"),
            "answer_relevance": ("question",),
        }[self.metric]
        missing = [n for n in needs if not getattr(self, n)]
        if missing:
            raise ValueError(f"a {self.metric} probe needs {' and '.join(missing)}")
        if self.correct is not None or self.wrong is not None:
            if not (self.correct or "").strip() or not (self.wrong or "").strip():
                raise ValueError("a pair probe needs a non-empty correct and wrong response")
            self._absent("response")
            if self.expect != "correct_higher":
                raise ValueError("a pair probe expects 'correct_higher'")
        elif (self.response or "").strip():
            if self.expect is not None:
                raise ValueError("a probe with one response takes a bound (min or max), not expect")
            bound, other = ("maximum", "minimum") if self.kind == "error" else ("minimum", "maximum")
            if getattr(self, bound) is None:
                raise ValueError(f"a {self.kind} probe with one response needs {_ALIASES[bound]}")
            self._absent(other)
        else:
            raise ValueError("a metric probe needs either correct and wrong, or a response")

    @property
    def is_pair(self) -> bool:
        return self.correct is not None


def load(path: Path = PROBES) -> list[Probe]:
    """The probes of ``path``; a malformed line raises :class:`ConfigError` naming it."""
    probes: list[Probe] = []
    seen: dict[str, int] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the probes: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            probe = Probe.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: not a JSON object: {exc.msg}") from None
        except ValidationError as exc:
            raise ConfigError(f"{where}: {'; '.join(field_errors(exc))}") from None
        if probe.id in seen:
            raise ConfigError(f"{where}: probe id {probe.id!r} is also on line {seen[probe.id]}")
        seen[probe.id] = number
        probes.append(probe)
    return probes


# --------------------------------------------------------------------------- judges


@dataclass(frozen=True)
class Outcome:
    """Whether one probe passed, and what was measured."""

    probe: str
    passed: bool
    got: str


def _figure(score: Score, name: str) -> float | None:
    return score.value if name == "value" else score.sub_scores.get(name)


def _case(probe: Probe, response: str) -> Case:
    return Case(
        id=probe.id,
        input=probe.question,
        response=response,
        reference=probe.reference,
        contexts=probe.contexts,
    )


async def _metric_outcomes(probe: Probe, metric: Metric, judge: Judge) -> list[Outcome]:
    """The probe's response(s) scored by ``metric`` with ``judge``, and the verdict on them."""
    texts = [probe.correct or "", probe.wrong or ""] if probe.is_pair else [probe.response or ""]
    scores = await asyncio.gather(*(score_case(metric, _case(probe, t), ScoreContext(judge)) for t in texts))
    values: list[float] = []
    for score in scores:
        value = _figure(score, probe.score)
        if value is None:
            why = score.error or score.explanation or "no value"
            return [Outcome(probe.id, False, f"no {probe.score}: {why}")]
        values.append(value)
    low = probe.minimum if probe.minimum is not None else float("-inf")
    high = probe.maximum if probe.maximum is not None else float("inf")
    if probe.is_pair:
        correct, wrong = values
        passed = correct > wrong + _TOLERANCE and correct >= low - _TOLERANCE and wrong <= high + _TOLERANCE
        return [Outcome(probe.id, passed, f"{probe.score}: correct {correct:.2f}, wrong {wrong:.2f}")]
    (value,) = values
    return [Outcome(probe.id, low - _TOLERANCE <= value <= high + _TOLERANCE, f"{probe.score} {value:.2f}")]


async def judge_probes(probes: Sequence[Probe], judge: Judge) -> list[Outcome]:
    """Every probe run with ``judge``, in order (the claims of one evidence in one call)."""
    primitives = ScoreContext(judge).primitives()
    by_evidence: dict[str, list[Probe]] = defaultdict(list)
    metrics: dict[str, Metric] = {}
    for probe in probes:
        if probe.metric == "check":
            by_evidence[probe.evidence or ""].append(probe)
        elif probe.metric not in metrics:
            metrics[probe.metric] = build_metric(probe.metric)

    async def checks(evidence: str, group: list[Probe]) -> list[Outcome]:
        try:
            verdicts = await primitives.check_facts([p.claim or "" for p in group], evidence)
        except JudgeError as exc:  # this evidence's claims are unscored; the others go on
            return [Outcome(p.id, False, f"unscored: {exc.reason}") for p in group]
        return [
            Outcome(p.id, v.label == p.expect, f"{v.label}/{v.reason}" if v.reason else v.label)
            for p, v in zip(group, verdicts, strict=True)
        ]

    results = await asyncio.gather(
        *(checks(evidence, group) for evidence, group in by_evidence.items()),
        *(_metric_outcomes(p, metrics[p.metric], judge) for p in probes if p.metric != "check"),
    )
    found = {outcome.probe: outcome for result in results for outcome in result}
    return [found[p.id] for p in probes]


def run_judge(probes: Sequence[Probe], judge: Judge) -> list[Outcome]:
    """:func:`judge_probes` from synchronous code (the judge is closed afterwards)."""

    async def run() -> list[Outcome]:
        try:
            return await judge_probes(probes, judge)
        finally:
            await judge.aclose()

    return run_sync(run())


def judge_from_spec(spec: str) -> tuple[str, Judge]:
    """The judge a spec string names (as ``--judge`` takes it), with its label."""
    try:
        config = JudgeConfig.model_validate(spec)
    except ValidationError as exc:
        raise ConfigError(f"judge {spec!r}: {'; '.join(field_errors(exc))}") from None
    judge = build_judge(config)
    if judge is None:
        raise ConfigError(f"judge {spec!r} answers nothing; name a judge, e.g. 'offline'")
    return config.label, judge


# --------------------------------------------------------------------------- baselines

Overlap = Callable[[str, str], float]

#: The baselines, by the display names of :data:`clineval.calibration.baselines.BASELINES`.
OVERLAPS: dict[str, Overlap] = {
    BASELINES["rouge_l"]: lambda text, against: rouge_l(text, against, part="p"),
    BASELINES["word_share"]: content_word_share,
}


def _against(probe: Probe, response: str) -> tuple[str, str]:
    """(text, what it is checked against) for a baseline, as the probe's metric reads them."""
    if probe.metric == "check":
        return probe.claim or "", probe.evidence or ""
    if probe.metric == "tbfact":
        reference = probe.reference or ""
        return (reference, response) if probe.score == "recall" else (response, reference)
    if probe.metric == "answer_relevance":
        return response, probe.question or ""
    return response, "\n\n".join(probe.contexts or [])


def _youden(flags: Sequence[bool], truth: Sequence[bool]) -> float:
    value = youden_j(flags, truth).value
    return -1.0 if value is None else value


def baseline_passes(probes: Sequence[Probe], overlap: Overlap) -> list[bool]:
    """Whether the baseline ``overlap`` passes each probe (see the module docstring)."""
    passed: list[bool] = [False] * len(probes)
    single: list[int] = []
    for i, probe in enumerate(probes):
        if probe.is_pair:
            correct = overlap(*_against(probe, probe.correct or ""))
            wrong = overlap(*_against(probe, probe.wrong or ""))
            passed[i] = correct > wrong + _TOLERANCE
        else:
            single.append(i)
    pairs = [_against(probes[i], probes[i].response or "") for i in single]
    shortfall = [1.0 - overlap(text, against) for text, against in pairs]
    truth = [probes[i].kind == "error" for i in single]
    flags = cross_fitted_labels(shortfall, truth, [against for _, against in pairs], _youden)
    for i, flag, error in zip(single, flags, truth, strict=True):
        passed[i] = flag == error
    return passed


# --------------------------------------------------------------------------- report


def tally(probes: Sequence[Probe], passed: Sequence[bool]) -> dict[str, int]:
    """Passes per class (every class of :data:`CLASSES`, in order)."""
    out = dict.fromkeys(CLASSES, 0)
    for probe, ok in zip(probes, passed, strict=True):
        out[probe.class_] += int(ok)
    return out


def balanced(probes: Sequence[Probe], passed: Sequence[bool]) -> float:
    """Share of the errors passed plus share of the rewordings passed, minus 1 (Youden's J of
    flagging an error: 0 for a rule that flags everything or nothing)."""
    errors = [ok for p, ok in zip(probes, passed, strict=True) if p.kind == "error"]
    rewordings = [ok for p, ok in zip(probes, passed, strict=True) if p.kind == "rewording"]
    return sum(errors) / len(errors) + sum(rewordings) / len(rewordings) - 1.0


def failures(probes: Sequence[Probe], outcomes: Sequence[Outcome]) -> list[str]:
    """One line per probe that failed: id, expectation, what was measured."""
    out = []
    for probe, outcome in zip(probes, outcomes, strict=True):
        if outcome.passed:
            continue
        if probe.is_pair:
            wanted = "correct higher" + (f", wrong ≤ {probe.maximum:g}" if probe.maximum is not None else "")
        elif probe.metric == "check":
            wanted = str(probe.expect)
        elif probe.maximum is not None:
            wanted = f"≤ {probe.maximum:g}"
        else:
            wanted = f"≥ {probe.minimum:g}"
        out.append(f"`{probe.id}` ({probe.metric}, expected {wanted}): {outcome.got}")
    return out


def render(probes: Sequence[Probe], columns: dict[str, list[bool]], failed: dict[str, list[str]]) -> str:
    """The results page: passes per class for each judge (the keys of ``failed``) and
    baseline (the other columns), and the probes each judge fails."""
    n = {c: sum(p.class_ == c for p in probes) for c in CLASSES}
    counts = {name: tally(probes, passed) for name, passed in columns.items()}
    names = list(columns)
    lines = [
        "<!-- generated by: python validation/run_probes.py --write -->",
        "",
        "# Clinical probes",
        "",
        f"{len(probes)} probes in {len(CLASSES)} classes, written for this project "
        "(`validation/probes/probes.jsonl`, run by `validation/run_probes.py`). A cell is the number of "
        "probes of the class that pass: an error flagged (the claim not entailed, or the metric lower "
        "for the wrong response), a rewording accepted (entailed, or the metric within its bound). "
        "Baselines: ROUGE-L precision and content-word share, with a threshold cross-fitted on the "
        "other half of the probes to maximise Youden's J; on a pair of responses, the correct one's "
        "overlap must be higher.",
        "",
        "| class | kind | n | " + " | ".join(f"`{c}`" if c in failed else c for c in names) + " |",
        "|---|---|---:|" + "---:|" * len(names),
    ]
    for cls, kind in CLASSES.items():
        lines.append(
            f"| {cls} | {kind} | {n[cls]} | " + " | ".join(str(counts[c][cls]) for c in names) + " |"
        )
    for label, kinds in (
        ("errors", ("error",)),
        ("rewordings", ("rewording",)),
        ("total", ("error", "rewording")),
    ):
        classes = [c for c, k in CLASSES.items() if k in kinds]
        cells = " | ".join(f"**{sum(counts[name][c] for c in classes)}**" for name in names)
        lines.append(f"| **{label}** | | **{sum(n[c] for c in classes)}** | {cells} |")
    cells = " | ".join(f"{balanced(probes, columns[name]):.2f}" for name in names)
    lines += [
        f"| Youden's J (errors passed + rewordings passed − 1) | | | {cells} |",
        "",
        "*What this shows:* whether a judge tells each class of clinical error from a correct "
        "rewording, on short texts a clinician would judge at once. *What it does not show:* "
        "agreement with clinicians on real notes (see docs/validation.md), or how often each error "
        "occurs. The probes are few per class: a class's count says which errors a judge misses, "
        "not a rate. A baseline that flags every text passes every error and no rewording (J = 0).",
        "",
    ]
    for judge, missed in failed.items():
        lines += [f"## Probes `{judge}` fails ({len(missed)})", ""]
        lines += [f"* {line}" for line in missed] or ["None."]
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--judge",
        action="append",
        metavar="SPEC",
        help="a judge spec (offline, openai:MODEL[@URL], azure[:DEPLOYMENT], scripted:FILE); "
        "repeat for several (default: offline)",
    )
    parser.add_argument("--write", action="store_true", help=f"also write {RESULTS.relative_to(HERE.parent)}")
    args = parser.parse_args(argv)
    columns: dict[str, list[bool]] = {}
    failed: dict[str, list[str]] = {}
    try:
        probes = load()
        for spec in args.judge or ["offline"]:
            label, judge = judge_from_spec(spec)
            start = time.perf_counter()
            outcomes = run_judge(probes, judge)
            print(f"{label}: {len(probes)} probes in {time.perf_counter() - start:.1f} s", file=sys.stderr)
            columns[label] = [o.passed for o in outcomes]
            failed[label] = failures(probes, outcomes)
    except ClinevalError as exc:
        sys.exit(f"error: {exc}")
    for name, overlap in OVERLAPS.items():
        columns[name] = baseline_passes(probes, overlap)
    text = render(probes, columns, failed)
    print(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")
        print(f"wrote {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
