"""The data model of the radiology agent benchmark: records, QA pairs, tool cards, the
actions an agent core takes, and the trace of one episode.

Field names of :class:`Record` follow the published RadABench record format (RadA-BenchPlat's
supplementary example), so published files load as they are; in Python they are
snake_case (``record.organ_biomarker.organ_quant``), in JSON the published keys
(``OrganBiomarker.OrganQuant``).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from clineval.environments.radbench.vocab import Category, GapKind


class _Published(BaseModel):
    """Published keys in JSON, snake_case in Python."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", serialize_by_alias=True)


class PatientInformation(_Published):
    age: str = Field(alias="Age")
    sex: str = Field(alias="Sex")
    height: str = Field(alias="Height")
    weight: str = Field(alias="Weight")
    history: str = Field(alias="History")
    complaint: str = Field(alias="Complaint")

    def text(self) -> str:
        return (
            f"{self.age}-year-old {self.sex.lower()}, {self.height} cm, {self.weight} kg. "
            f"History: {self.history}. Complaint: {self.complaint}."
        )


class Anomaly(_Published):
    part: str = Field(alias="Part")
    symptom: str = Field(alias="Symptom")


class OrganBiomarker(_Published):
    organ_object: str = Field(alias="OrganObject")
    organ_dim: str = Field(alias="OrganDim")
    organ_quant: str = Field(alias="OrganQuant")


class AnomalyBiomarker(_Published):
    anomaly_object: str = Field(alias="AnomalyObject")
    anomaly_dim: str = Field(alias="AnomalyDim")
    anomaly_quant: str = Field(alias="AnomalyQuant")


class Indicator(_Published):
    name: str = Field(alias="Name")
    value: str = Field(alias="Value")


class Report(_Published):
    finding: str = Field(alias="Finding")
    impression: str = Field(alias="Impression")

    def text(self) -> str:
        return f"Findings: {self.finding} Impression: {self.impression}"


class Record(_Published):
    """One synthetic patient record: the environment's ground truth (what oracle tools return)."""

    id: str = Field(alias="ID", default="")
    information: PatientInformation = Field(alias="Information")
    anatomy: str = Field(alias="Anatomy")
    modality: str = Field(alias="Modality")
    anomaly: Anomaly = Field(alias="Anomaly")
    disease: str = Field(alias="Disease")
    organ_biomarker: OrganBiomarker = Field(alias="OrganBiomarker")
    anomaly_biomarker: AnomalyBiomarker = Field(alias="AnomalyBiomarker")
    indicator: Indicator = Field(alias="Indicator")
    report: Report = Field(alias="Report")
    treatment: str = Field(alias="Treatment")

    def value_of(self, variable: str) -> str:
        """The true value of a memory-bank variable for this record (masks are placeholders)."""
        values = {
            "$Image$": f"[{self.anatomy} {self.modality} image]",
            "$Information$": self.information.text(),
            "$Anatomy$": self.anatomy,
            "$Modality$": self.modality,
            "$OrganMask$": f"[organ mask: {self.organ_biomarker.organ_object}]",
            "$OrganObject$": self.organ_biomarker.organ_object,
            "$OrganDim$": self.organ_biomarker.organ_dim,
            "$OrganQuant$": self.organ_biomarker.organ_quant,
            "$AnomalyMask$": f"[anomaly mask: {self.anomaly.symptom}, {self.anomaly.part}]",
            "$AnomalyObject$": self.anomaly_biomarker.anomaly_object,
            "$AnomalyDim$": self.anomaly_biomarker.anomaly_dim,
            "$AnomalyQuant$": self.anomaly_biomarker.anomaly_quant,
            "$Disease$": self.disease,
            "$IndicatorName$": self.indicator.name,
            "$IndicatorValue$": self.indicator.value,
            "$Report$": self.report.text(),
            "$Treatment$": self.treatment,
        }
        return values[variable]


class QAPair(BaseModel):
    """A question of one task about one record, with the reference answer."""

    model_config = ConfigDict(extra="forbid")

    record_id: str
    task: str
    """The task key, e.g. ``"0126"``."""
    question: str
    answer: str


ReportType = Literal["basic", "text", "mask", "text_mask"]
LabelField = Literal["organ", "anomaly", "disease", "organ_dim", "anomaly_dim", "indicator"]
BiomarkerKind = Literal["organ", "anomaly"]
BuildFrom = Literal["fields", "request"]
"""What automated tool building reads: the NoCall's structured fields, or its
natural-language ``<Request>``."""


class ToolCard(BaseModel):
    """A simulated tool: what the agent sees (name, category, ability, inputs, outputs,
    performance) and what the simulator needs (scope, label list, score rules)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """``TOOL1``, ``TOOL2``, ... in the order the tool set was built."""
    category: Category
    anatomy: str | None = None
    """None: universal for anatomy."""
    modality: str | None = None
    """None: universal for modality."""
    kind: BiomarkerKind | None = None
    """Biomarker quantifiers and indicator evaluators work on the organ or the anomaly."""
    report_type: ReportType | None = None
    labels: list[str] | None = None
    """The labels the tool can output (its capability); None: any."""
    label_field: LabelField | None = None
    """Which record field ``labels`` restricts."""
    compulsory: list[str]
    optional: list[str] = Field(default_factory=list)
    outputs: list[str]
    lower: float = Field(ge=0, le=1)
    upper: float = Field(ge=0, le=1)
    step: float = Field(default=0.0, ge=0)
    built: bool = False
    """True for a tool added by automated tool building."""

    @property
    def universal(self) -> bool:
        return self.anatomy is None and self.modality is None


class Gap(BaseModel):
    """What is missing in an unsolvable tool set: the ground truth of unsolvability grounding."""

    model_config = ConfigDict(extra="forbid")

    kind: GapKind
    category: Category
    anatomy: str | None = None
    modality: str | None = None
    label_field: LabelField | None = None
    needed_label: str | None = None
    biomarker_kind: BiomarkerKind | None = None
    """For a missing or insufficient biomarker quantifier: which kind the task needs."""


class ToolSet(BaseModel):
    """The tools of one episode under one condition, and what is missing if anything."""

    model_config = ConfigDict(extra="forbid")

    condition: str
    seed: int
    tools: list[ToolCard]
    gap: Gap | None = None

    @property
    def solvable(self) -> bool:
        return self.gap is None

    def by_name(self, name: str) -> ToolCard | None:
        for tool in self.tools:
            if tool.name == name:
                return tool
        return None


# actions ------------------------------------------------------------------------------


class Plan(BaseModel):
    """The core's decomposition: what the question already tells, and a chain of categories."""

    model_config = ConfigDict(extra="forbid")

    known: list[str] = Field(default_factory=list)
    chain: list[Category] = Field(default_factory=list)
    raw: str | None = None


class Call(BaseModel):
    """Run one tool: ``<Call>`` (or ``<EndCall>`` for the last step, ``final=True``)."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    inputs: list[str] = Field(default_factory=list)
    purpose: str = ""
    final: bool = False
    raw: str | None = None


class NoCall(BaseModel):
    """Decline: no suitable tool; says what is missing (``<NoCall>``)."""

    model_config = ConfigDict(extra="forbid")

    purpose: str = ""
    category: Category | None = None
    category_text: str = ""
    anatomy: str = "Universal"
    modality: str = "Universal"
    ability: GapKind | None = None
    ability_text: str = ""
    request: str = ""
    """A natural-language request to build the missing tool (``<Request>``), if written."""
    raw: str | None = None


class Malformed(BaseModel):
    """A reply the harness could not read: an I/O error of the episode, kept with the reply."""

    model_config = ConfigDict(extra="forbid")

    reply: str
    reason: str


Action = Call | NoCall | Malformed


# trace --------------------------------------------------------------------------------

ErrorKind = Literal[
    "unknown_tool",
    "anatomy_mismatch",
    "modality_mismatch",
    "missing_input",
    "unavailable_input",
    "invalid_input",
    "malformed_reply",
    "step_limit",
    "core_error",
]
Finish = Literal["endcall", "nocall", "step_limit", "io_error", "malformed", "no_plan", "core_error"]


class StepRecord(BaseModel):
    """One step of an episode: the action, and what the simulator made of it."""

    model_config = ConfigDict(extra="forbid")

    index: int
    action: Literal["call", "endcall", "nocall", "malformed"]
    tool: str | None = None
    category: Category | None = None
    inputs: list[str] = Field(default_factory=list)
    ok: bool = False
    error_kind: ErrorKind | None = None
    error: str | None = None
    outputs: dict[str, str] = Field(default_factory=dict)
    score: float | None = None
    rank: int | None = None
    """Performance rank of the chosen tool among the tools suitable for this step (1 = best)."""
    n_suitable: int | None = None
    nocall: NoCall | None = None
    built_tool: str | None = None
    """The tool automated tool building added after this NoCall, if any."""
    build_problem: str | None = None
    """With automated tool building: why this NoCall built no tool (its fields or its
    request do not state the gap)."""
    card: dict[str, Any] | None = None
    """The called tool's card as the core saw it (name, category, ability, property, inputs,
    outputs, performance); None for an unknown tool and in episodes stored before it was kept."""
    reply: str | None = None


class Revision(BaseModel):
    """A drafted reply the self-reflection verifier rejected before it was accepted
    (:mod:`clineval.environments.radbench.cores.verifier`)."""

    model_config = ConfigDict(extra="forbid")

    stage: Literal["plan", "step"]
    step: int | None = None
    """The index of the step the draft was for (None for the plan)."""
    problems: list[str]
    reply: str
    revised: bool = True
    """False when the revisions were used up and the draft went on as it was."""


class Episode(BaseModel):
    """One question answered by one core in one tool set: everything the metrics need."""

    model_config = ConfigDict(extra="forbid")

    record_id: str
    task: str
    condition: str
    seed: int
    core: str
    question: str
    reference_answer: str
    gt_chain: list[Category]
    solvable: bool
    gap: Gap | None = None
    n_tools: int = 0
    plan: Plan | None = None
    steps: list[StepRecord] = Field(default_factory=list)
    answer: str | None = None
    finished: Finish
    error: str | None = None
    """Why the episode ended early, when a step does not say it (a core's exception)."""
    memory: dict[str, str] = Field(default_factory=dict)
    scores: dict[str, float] = Field(default_factory=dict)
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    revisions: list[Revision] = Field(default_factory=list)
    """Drafts the core's self-reflection verifier rejected (LLM core with self-reflection)."""


class Privileged(BaseModel):
    """Ground truth that only reference cores (the oracle) receive."""

    model_config = ConfigDict(extra="forbid")

    record: Record
    task: str
    tool_set: ToolSet


class EpisodeView(BaseModel):
    """What a core may see at each step: the question, the patient, the tools, the memory bank."""

    model_config = ConfigDict(extra="forbid")

    question: str
    information: str
    tools: list[ToolCard]
    memory: dict[str, str]
    plan: Plan | None = None
    steps: list[StepRecord] = Field(default_factory=list)
    step_limit: int
    privileged: Privileged | None = None
    """Set only for cores whose ``privileged`` attribute is true."""


class Core(Protocol):
    """An agent core: plans, then acts one step at a time, then concludes.

    ``privileged`` is given only to reference cores (the oracle): the record, the task
    and the tool set's gap. LLM cores never see it.
    """

    name: str
    privileged: bool

    async def plan(self, view: EpisodeView) -> Plan | Malformed: ...

    async def act(self, view: EpisodeView) -> Call | NoCall | Malformed: ...

    async def conclude(self, view: EpisodeView) -> str: ...
