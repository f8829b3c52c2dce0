"""The simulated tool environment: a memory bank, a score bank, and deterministic tool
execution by the rules of the public RadABench code (research note 1.4).

An episode starts with ``$Image$`` and ``$Information$`` in the memory bank (score 1.0).
A call of a tool is checked in this order, and the first failure is the step's error:

1. ``unknown_tool``: no tool of that name in the set.
2. ``anatomy_mismatch`` / ``modality_mismatch``: a specific tool is used while the bank's
   ``$Anatomy$`` / ``$Modality$`` is unknown or differs from the tool's.
3. ``missing_input``: a compulsory input is not listed in the call.
4. ``unavailable_input``: a compulsory input is listed but not in the memory bank.
5. ``invalid_input``: a listed input is neither compulsory nor optional for the tool.

A call that passes scores ``lower x min(score of its compulsory inputs)``, then, for each
listed optional input that is in the bank, ``+ step x score(input)``, capped at the upper
bound. Every output gets that score and the record's true value (the simulated tools are
oracles), except that a label-restricted tool whose list lacks the true label answers its
first supported label instead (and a mask, quantity or indicator value of that wrong
label), as a real tool asked about something it does not know would.

Deviations from the public code, each a fix or a documented choice:

* Ground truth enters the memory bank only as the output of an executed tool. The public
  harness also copied the true anatomy, modality and disease into the bank when the
  plan merely *named* them, and filled outputs by a second pass that could leak values
  for tools that were only mentioned.
* A later call overwrites a variable (value and score); the public code kept the first
  value of a key and never refreshed it.
* Listed optional inputs that are not in the bank yet are ignored (as in the public code),
  not an error; only compulsory inputs must be available.
* Input names are read leniently: surrounding whitespace and quotes are dropped, a bare
  ``OrganMask`` means ``$OrganMask$`` and case is ignored for known variables. Unknown
  names are invalid inputs.
* A step limit (default 20 actions) ends an episode; the public loop had none.
* Each call records the performance rank of the chosen tool among the tools of its
  category (and kind, for biomarker quantifiers) that suit the record, and how many
  there are, for the optimal tool score (:func:`clineval.environments.radbench.tools.rank_of`).
* Automated tool building (``auto_build=True``): a NoCall that states the set's gap adds
  a tool that closes it (``built=True``, the next ``TOOL`` number) and the episode goes
  on. "States the gap" means the same ``Ability`` (gap kind) and category; for
  ``SpecificToolMissing`` also the record's anatomy *and* modality -- a request for a
  ``Universal`` tool does not match, because the built tool is specified by the request
  and this gap is precisely the missing pair. The built tool is the universal variant for
  ``CategoryMissing`` (of the needed biomarker kind), the specific variant for the
  record's pair for ``SpecificToolMissing`` and, for ``InsufficientCapability``, an
  unrestricted tool (specific for segmentor, detector and diagnoser). The gap is built
  once; later NoCalls build nothing. With ``build_from="request"`` the NoCall's
  natural-language ``<Request>`` is read instead of its fields, as RadA-BenchPlat's agent
  writes a tool-building request (:mod:`clineval.environments.radbench.build_request`
  says what it must state). Either way, ``StepRecord.build_problem`` says why a NoCall
  built nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from clineval.environments.radbench.build_request import parse_build_request, request_problem
from clineval.environments.radbench.model import (
    BiomarkerKind,
    BuildFrom,
    Call,
    ErrorKind,
    Gap,
    LabelField,
    Malformed,
    NoCall,
    Record,
    ReportType,
    StepRecord,
    ToolCard,
    ToolSet,
)
from clineval.environments.radbench.tools import (
    LABEL_VARIABLE,
    describe,
    has_label,
    make_card,
    rank_of,
    same_label,
    tool_number,
    true_label,
)
from clineval.environments.radbench.vocab import INITIAL_VARIABLES, VARIABLES, Category

__all__ = ["ToolEnvironment", "build_for_gap", "check_call", "matches_gap", "normalize_variable"]

C = Category
_Action = Literal["call", "endcall", "nocall", "malformed"]
_BY_FOLDED = {v.strip("$").casefold(): v for v in VARIABLES}
#: What a label-restricted tool answers for the variables that depend on its (wrong) label.
_DEPENDENT: dict[LabelField, dict[str, str]] = {
    "organ": {"$OrganMask$": "[organ mask: {label}]"},
    "anomaly": {"$AnomalyMask$": "[anomaly mask: {label}]"},
    "disease": {},
    "organ_dim": {"$OrganQuant$": "[{label} measurement]"},
    "anomaly_dim": {"$AnomalyQuant$": "[{label} measurement]"},
    "indicator": {"$IndicatorValue$": "[{label} result]"},
}


def normalize_variable(text: str) -> str:
    """``" 'organmask' "`` → ``$OrganMask$``; unknown names come back as ``$Name$``."""
    name = text.strip().strip("'\"`").strip().strip("$").strip()
    return _BY_FOLDED.get(name.casefold(), f"${name}$")


def matches_gap(nocall: NoCall, gap: Gap | None, record: Record) -> bool:
    """Whether a NoCall states the set's gap (see module docs)."""
    if gap is None or nocall.ability != gap.kind or nocall.category != gap.category:
        return False
    if gap.kind == "SpecificToolMissing":
        return same_label(nocall.anatomy, record.anatomy) and same_label(nocall.modality, record.modality)
    return True


def build_for_gap(gap: Gap, record: Record, name: str) -> ToolCard:
    """The tool automated tool building adds for a gap (suits the record)."""
    category = gap.category
    kind: BiomarkerKind | None = None
    if category in (C.BIOMARKER_QUANTIFIER, C.INDICATOR_EVALUATOR):
        kind = gap.biomarker_kind or "organ"
    report_type: ReportType | None = "text_mask" if category == C.REPORT_GENERATOR else None
    scoped = category in (C.ORGAN_SEGMENTOR, C.ANOMALY_DETECTOR, C.DISEASE_DIAGNOSER, C.REPORT_GENERATOR)
    specific = scoped and gap.kind != "CategoryMissing"
    card = make_card(
        category,
        anatomy=record.anatomy if specific else None,
        modality=record.modality if specific else None,
        kind=kind,
        report_type=report_type,
        name=name,
    )
    return card.model_copy(update={"built": True})


def check_call(
    card: ToolCard, inputs: Sequence[str], memory: Mapping[str, str]
) -> tuple[ErrorKind, str] | None:
    """The first rule a call of ``card`` with ``inputs`` (normalised names) breaks against
    the memory bank, as (error kind, message), or None (rules 2-5 of the module docs).

    The simulator runs it on every call; the LLM core's self-reflection verifier runs it on
    a drafted call before the call is sent (it sees the same cards and memory bank)."""
    scope: tuple[tuple[str | None, str, ErrorKind], ...] = (
        (card.anatomy, "$Anatomy$", "anatomy_mismatch"),
        (card.modality, "$Modality$", "modality_mismatch"),
    )
    for field, variable, kind in scope:
        if field is None:
            continue
        known = memory.get(variable)
        if known is None:
            return kind, f"{card.name} only works on {field}; {variable} is not known yet"
        if not same_label(known, field):
            return kind, f"{card.name} only works on {field}, not {known}"
    for variable in card.compulsory:
        if variable not in inputs:
            return "missing_input", f"{card.name} needs {variable} as input"
    for variable in card.compulsory:
        if variable not in memory:
            return "unavailable_input", f"{variable} is not in the memory bank"
    accepted = set(card.compulsory) | set(card.optional)
    for variable in inputs:
        if variable not in accepted:
            return "invalid_input", f"{card.name} does not take {variable} as input"
    return None


class ToolEnvironment:
    """One episode's tools, memory bank and score bank."""

    def __init__(
        self,
        record: Record,
        tool_set: ToolSet,
        *,
        step_limit: int = 20,
        auto_build: bool = False,
        build_from: BuildFrom = "fields",
    ):
        if step_limit < 1:
            raise ValueError("step_limit must be at least 1")
        self.record = record
        self.tool_set = tool_set.model_copy(update={"tools": list(tool_set.tools)})  # cards are not modified
        self.gap = tool_set.gap
        self.step_limit = step_limit
        self.auto_build = auto_build
        self.build_from: BuildFrom = build_from
        self.memory: dict[str, str] = {v: record.value_of(v) for v in INITIAL_VARIABLES}
        self.scores: dict[str, float] = dict.fromkeys(INITIAL_VARIABLES, 1.0)
        self.steps: list[StepRecord] = []
        self.built: list[str] = []

    @property
    def tools(self) -> list[ToolCard]:
        return self.tool_set.tools

    @property
    def exhausted(self) -> bool:
        """True once the episode has used all its steps."""
        return len(self.steps) >= self.step_limit

    def _limit(self, action: _Action, tool: str | None = None) -> StepRecord:
        return StepRecord(
            index=len(self.steps),
            action=action,
            tool=tool,
            error_kind="step_limit",
            error=f"the step limit ({self.step_limit}) is reached",
        )

    # calls ------------------------------------------------------------------------

    def execute(self, call: Call) -> StepRecord:
        """Run one call and record it (an over-the-limit call is refused and not recorded)."""
        action: _Action = "endcall" if call.final else "call"
        name = call.tool.strip()
        if self.exhausted:
            return self._limit(action, name)
        inputs = list(dict.fromkeys(normalize_variable(v) for v in call.inputs))
        step = StepRecord(index=len(self.steps), action=action, tool=name, inputs=inputs, reply=call.raw)
        self.steps.append(step)
        card = self.tool_set.by_name(name) or next(
            (t for t in self.tools if t.name.casefold() == name.casefold()), None
        )
        if card is None:
            return _fail(step, "unknown_tool", f"there is no tool {name!r}")
        step.card = describe(card)
        step.category = card.category
        step.rank, step.n_suitable = rank_of(card, self.tools, self.record)
        problem = check_call(card, inputs, self.memory)
        if problem is not None:
            return _fail(step, *problem)
        step.score = self._score(card, inputs)
        step.outputs = self._outputs(card)
        for variable, value in step.outputs.items():
            self.memory[variable] = value
            self.scores[variable] = step.score
        step.ok = True
        return step

    def _score(self, card: ToolCard, inputs: list[str]) -> float:
        score = card.lower * min(self.scores[v] for v in card.compulsory)
        for variable in inputs:
            if variable in card.optional and variable in self.scores:
                score = min(score + card.step * self.scores[variable], card.upper)
        return round(score, 6)

    def _outputs(self, card: ToolCard) -> dict[str, str]:
        values = {v: self.record.value_of(v) for v in card.outputs}
        field = card.label_field
        if card.labels and field is not None and not has_label(card, true_label(self.record, field)):
            wrong = card.labels[0]
            updates = {LABEL_VARIABLE[field]: wrong}
            updates.update({v: t.format(label=wrong) for v, t in _DEPENDENT[field].items()})
            values.update({v: x for v, x in updates.items() if v in values})
        return values

    # other actions ----------------------------------------------------------------

    def decline(self, nocall: NoCall) -> StepRecord:
        """Record a NoCall; with automated tool building, close the gap it states."""
        if self.exhausted:
            return self._limit("nocall")
        step = StepRecord(
            index=len(self.steps),
            action="nocall",
            category=nocall.category,
            ok=True,
            nocall=nocall,
            reply=nocall.raw,
        )
        self.steps.append(step)
        if not self.auto_build or self.gap is None or self.built:
            return step
        step.build_problem = self._build_problem(nocall, self.gap)
        if step.build_problem is None:
            number = (
                max((tool_number(t.name) for t in self.tools if tool_number(t.name) < 10**9), default=0) + 1
            )
            card = build_for_gap(self.gap, self.record, f"TOOL{number}")
            self.tool_set.tools.append(card)
            self.built.append(card.name)
            step.built_tool = card.name
        return step

    def _build_problem(self, nocall: NoCall, gap: Gap) -> str | None:
        """Why this NoCall does not specify the missing tool (None: build it)."""
        if self.build_from == "request":
            if not nocall.request.strip():
                return "the <NoCall> has no <Request> to build a tool from"
            return request_problem(parse_build_request(nocall.request), gap, self.record)
        if matches_gap(nocall, gap, self.record):
            return None
        return "the <NoCall>'s category, ability, anatomy and modality do not state the gap"

    def malformed(self, reply: Malformed) -> StepRecord:
        """Record a reply the harness could not read (an I/O error)."""
        if self.exhausted:
            return self._limit("malformed")
        step = StepRecord(
            index=len(self.steps),
            action="malformed",
            error_kind="malformed_reply",
            error=reply.reason,
            reply=reply.reply,
        )
        self.steps.append(step)
        return step


def _fail(step: StepRecord, kind: ErrorKind, message: str) -> StepRecord:
    step.ok = False
    step.error_kind = kind
    step.error = message
    return step
