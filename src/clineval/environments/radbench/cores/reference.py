"""Reference agent cores that run offline: an oracle that scores perfectly, and two weak
baselines that bound the scale from below.

* :class:`OracleCore` (privileged: sees the record, the task and the tool set) plans the
  ground-truth chain; at each step it calls the best-ranked suitable tool for the next
  category (and biomarker kind) with all compulsory inputs and every optional input
  already in the memory bank, and ends with an ``<EndCall>``. When no suitable tool
  exists it declines with a NoCall stating the gap it sees: no tool of the category →
  ``CategoryMissing``; tools of the category but none for the record's anatomy and
  modality → ``SpecificToolMissing`` (with the record's pair); tools for the pair whose
  label lists lack the needed label → ``InsufficientCapability``. It concludes with an
  answer read from the memory bank (the variables the task asks for), or with a decline
  message.
* :class:`GreedyCore` (not privileged) reads the question for keywords to choose a task
  chain (the longest chain when nothing matches), calls the *first* tool of each needed
  category in card order whatever its scope or performance, passes only the compulsory
  inputs and never declines.
* :class:`RandomCore` (not privileged, seeded) plans random categories, calls a random
  tool with a random subset of the memory bank, sometimes declines at random, and ends
  when its plan is used up.
"""

from __future__ import annotations

import random
import re

from clineval.environments.radbench.model import (
    BiomarkerKind,
    Call,
    EpisodeView,
    Malformed,
    NoCall,
    Plan,
    Privileged,
    Record,
    ToolCard,
)
from clineval.environments.radbench.tools import (
    NeededStep,
    label_field_of,
    performance_rank,
    same_label,
    steps_for_chain,
    task_steps,
    true_label,
)
from clineval.environments.radbench.vocab import (
    GAP_KINDS,
    INITIAL_VARIABLES,
    TASKS,
    Category,
    task,
)

__all__ = ["ANSWER_VARIABLES", "GreedyCore", "OracleCore", "RandomCore", "guess_task"]

C = Category

#: What the oracle's answer reports per task.
ANSWER_VARIABLES: dict[str, tuple[str, ...]] = {
    "012": ("$OrganObject$", "$OrganMask$"),
    "013": ("$AnomalyObject$", "$AnomalyMask$"),
    "014": ("$Disease$",),
    "0123": ("$OrganObject$", "$OrganMask$", "$AnomalyObject$", "$AnomalyMask$"),
    "01235": ("$Disease$", "$OrganObject$", "$AnomalyObject$"),
    "0126": ("$OrganObject$", "$OrganDim$", "$OrganQuant$"),
    "0136": ("$AnomalyObject$", "$AnomalyDim$", "$AnomalyQuant$"),
    "01348": ("$Report$",),
    "0123568": ("$Report$",),
    "01235678": ("$Report$", "$IndicatorName$", "$IndicatorValue$"),
    "012356789": ("$Treatment$",),
}
_LABELS: dict[str, str] = {
    "$Anatomy$": "Anatomy",
    "$Modality$": "Modality",
    "$OrganObject$": "Organ",
    "$OrganMask$": "Organ mask",
    "$OrganDim$": "Organ biomarker",
    "$OrganQuant$": "Organ measurement",
    "$AnomalyObject$": "Anomaly",
    "$AnomalyMask$": "Anomaly mask",
    "$AnomalyDim$": "Anomaly biomarker",
    "$AnomalyQuant$": "Anomaly measurement",
    "$Disease$": "Diagnosis",
    "$IndicatorName$": "Indicator",
    "$IndicatorValue$": "Indicator value",
    "$Report$": "Report",
    "$Treatment$": "Treatment",
}


def _statement(memory: dict[str, str], variables: tuple[str, ...] | list[str]) -> str:
    parts = [f"{_LABELS.get(v, v.strip('$'))}: {memory[v]}" for v in variables if v in memory]
    return ". ".join(p.rstrip(".") for p in parts) + "." if parts else "No result was obtained."


def _decline_message(nocall: NoCall) -> str:
    scope = " ".join(x for x in (nocall.anatomy, nocall.modality) if x and x != "Universal")
    category = nocall.category.title if nocall.category is not None else nocall.category_text or "a tool"
    reason = {
        "CategoryMissing": f"no {category} is available",
        "SpecificToolMissing": f"no {category} works on {scope or 'this'} images",
        "InsufficientCapability": f"the available {category} tools cannot recognise what this case needs",
    }.get(nocall.ability or "", f"no suitable {category} is available")
    return f"The task cannot be completed with the available tools: {reason}."


def _described(title: str, kind: str | None) -> str:
    """A tool category for a build request: ``anomaly Biomarker Quantifier``."""
    return f"{kind} {title}" if kind else title


def _competes(card: ToolCard, need: NeededStep) -> bool:
    if card.category != need.category:
        return False
    return not (need.category == C.BIOMARKER_QUANTIFIER and need.kind is not None and card.kind != need.kind)


def _done(view: EpisodeView) -> int:
    """How many calls of the episode succeeded so far."""
    return sum(1 for s in view.steps if s.ok and s.action in ("call", "endcall"))


def _last_nocall(view: EpisodeView) -> NoCall | None:
    if view.steps and view.steps[-1].action == "nocall":
        return view.steps[-1].nocall
    return None


# oracle -------------------------------------------------------------------------------


class OracleCore:
    """Privileged reference core: the ground-truth chain, the best tools, exact declines."""

    name = "oracle"
    privileged = True

    @staticmethod
    def _privileged(view: EpisodeView) -> Privileged:
        if view.privileged is None:
            raise RuntimeError("the oracle core needs the privileged view")
        return view.privileged

    async def plan(self, view: EpisodeView) -> Plan | Malformed:
        priv = self._privileged(view)
        return Plan(known=[], chain=list(task(priv.task).chain))

    async def act(self, view: EpisodeView) -> Call | NoCall | Malformed:
        priv = self._privileged(view)
        steps = task_steps(priv.task)
        done = _done(view)
        if done >= len(steps):
            return Malformed(reply="", reason="the oracle has no step left (the chain already ended)")
        need = steps[done]
        ranked = performance_rank(view.tools, priv.record, need.category, need.kind)
        usable = [t for t in ranked if all(v in view.memory for v in t.compulsory)]
        if not usable:
            return self.gap_seen(view.tools, priv.record, need)
        tool = usable[0]
        inputs = [*tool.compulsory, *(v for v in tool.optional if v in view.memory)]
        return Call(
            tool=tool.name,
            inputs=inputs,
            purpose=f"Run the {need.category.title} (step {done + 1} of {len(steps)})",
            final=done == len(steps) - 1,
        )

    @staticmethod
    def gap_seen(tools: list[ToolCard], record: Record, need: NeededStep) -> NoCall:
        """The NoCall that states why no tool of ``tools`` serves ``need`` for ``record``."""
        title = need.category.title
        pool = [t for t in tools if _competes(t, need)]
        in_scope = [
            t
            for t in pool
            if (t.anatomy is None or same_label(t.anatomy, record.anatomy))
            and (t.modality is None or same_label(t.modality, record.modality))
        ]
        if not pool:
            return NoCall(
                purpose=f"A {title} is needed but the tool set has none",
                category=need.category,
                category_text=title,
                ability="CategoryMissing",
                ability_text="CategoryMissing",
                request=(
                    f"I need a {_described(title, need.kind)} for {record.anatomy} {record.modality} images."
                ),
            )
        if not in_scope:
            return NoCall(
                purpose=f"A {title} for {record.anatomy} {record.modality} images is needed",
                category=need.category,
                category_text=title,
                anatomy=record.anatomy,
                modality=record.modality,
                ability="SpecificToolMissing",
                ability_text="SpecificToolMissing",
                request=(
                    f"I need a {_described(title, need.kind)} that works on {record.anatomy} "
                    f"{record.modality} images."
                ),
            )
        field = label_field_of(need.category, need.kind)
        needed = true_label(record, field) if field is not None else "the needed result"
        return NoCall(
            purpose=f"The {title} tools cannot output {needed}",
            category=need.category,
            category_text=title,
            anatomy=record.anatomy,
            modality=record.modality,
            ability="InsufficientCapability",
            ability_text="InsufficientCapability",
            request=(
                f"I need a {_described(title, need.kind)} for {record.anatomy} {record.modality} images "
                f"that can output {needed}, not only the labels on its list."
            ),
        )

    async def conclude(self, view: EpisodeView) -> str:
        priv = self._privileged(view)
        nocall = _last_nocall(view)
        if nocall is not None:
            return _decline_message(nocall)
        return _statement(view.memory, ANSWER_VARIABLES[task(priv.task).key])


# greedy -------------------------------------------------------------------------------

_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("012356789", (r"treat", r"therap", r"management", r"manage")),
    ("01235678", (r"indicator", r"grad(e|ing)", r"stag(e|ing)", r"\bscore")),
    ("0123568", (r"report.*(biomarker|measur|quantif)", r"(biomarker|measur|quantif).*report")),
    ("01348", (r"report",)),
    (
        "0136",
        (
            r"(anomal|lesion|abnormal|mass|nodule).*(measur|quantif|size|volume|biomarker)",
            r"(measur|quantif|size|volume|biomarker).*(anomal|lesion|abnormal|mass|nodule)",
        ),
    ),
    ("0126", (r"measur", r"quantif", r"biomarker", r"\bsize\b", r"volume")),
    (
        "01235",
        (
            r"(diagnos|disease).*(segment|organ|clue|finding)",
            r"(segment|organ|clue|finding).*(diagnos|disease)",
            r"infer",
        ),
    ),
    ("014", (r"diagnos", r"disease")),
    ("0123", (r"(segment|organ).*(anomal|lesion|abnormal)", r"(anomal|lesion|abnormal).*(segment|organ)")),
    ("013", (r"anomal", r"lesion", r"abnormal", r"detect", r"locali[sz]")),
    ("012", (r"segment", r"organ", r"delineat", r"outline")),
)
LONGEST_TASK = max(TASKS, key=lambda t: len(t.chain)).key


def guess_task(question: str) -> str:
    """A keyword reading of a question: the task key it most plausibly asks for (the
    longest chain when no keyword matches)."""
    text = question.casefold()
    for key, patterns in _KEYWORDS:
        if any(re.search(p, text) for p in patterns):
            return key
    return LONGEST_TASK


class GreedyCore:
    """Baseline: keyword plan, first tool of each category in card order, compulsory
    inputs only, never declines."""

    name = "greedy"
    privileged = False

    async def plan(self, view: EpisodeView) -> Plan | Malformed:
        return Plan(known=[], chain=list(task(guess_task(view.question)).chain))

    async def act(self, view: EpisodeView) -> Call | NoCall | Malformed:
        chain = (
            view.plan.chain if view.plan is not None and view.plan.chain else list(task(LONGEST_TASK).chain)
        )
        needed = [s for s in steps_for_chain(chain) if any(_competes(t, s) for t in view.tools)]
        done = _done(view)
        if not view.tools:
            return Malformed(reply="", reason="no tools")
        if done >= len(needed):
            tool = view.tools[0]
            return Call(tool=tool.name, inputs=list(tool.compulsory), purpose="finish", final=True)
        need = needed[done]
        tool = next(t for t in view.tools if _competes(t, need))
        return Call(
            tool=tool.name,
            inputs=list(tool.compulsory),
            purpose=f"Run the {need.category.title}",
            final=done == len(needed) - 1,
        )

    async def conclude(self, view: EpisodeView) -> str:
        last = next((s for s in reversed(view.steps) if s.ok and s.outputs), None)
        if last is None:
            return "No result was obtained."
        return _statement(view.memory, list(last.outputs))


# random -------------------------------------------------------------------------------


class RandomCore:
    """Baseline: random plan, random tools and inputs, random declines (seeded)."""

    name = "random"
    privileged = False

    def __init__(self, seed: int = 0, *, decline_rate: float = 0.1):
        self.seed = seed
        self.decline_rate = decline_rate
        self.rng = random.Random(seed)

    async def plan(self, view: EpisodeView) -> Plan | Malformed:
        length = self.rng.randint(2, 8)
        return Plan(known=[], chain=[Category(self.rng.randrange(len(Category))) for _ in range(length)])

    async def act(self, view: EpisodeView) -> Call | NoCall | Malformed:
        planned = len(view.plan.chain) if view.plan is not None else 1
        if not view.tools or self.rng.random() < self.decline_rate:
            category = Category(self.rng.randrange(len(Category)))
            return NoCall(
                purpose="No suitable tool (random decline)",
                category=category,
                category_text=category.title,
                ability=self.rng.choice(GAP_KINDS),
            )
        tool = self.rng.choice(view.tools)
        variables = sorted(view.memory)
        inputs = self.rng.sample(variables, self.rng.randint(1, len(variables)))
        kind: BiomarkerKind | None = tool.kind
        return Call(
            tool=tool.name,
            inputs=inputs,
            purpose=f"Try {tool.category.title}{f' ({kind})' if kind else ''}",
            final=_done(view) + 1 >= planned,
        )

    async def conclude(self, view: EpisodeView) -> str:
        found = [v for v in view.memory if v not in INITIAL_VARIABLES]
        if not found:
            return "No result was obtained."
        return _statement(view.memory, self.rng.sample(found, self.rng.randint(1, len(found))))
