"""Prompts of the LLM agent core (RadA-BenchPlat's workflow, in this project's own words).

The workflow has three stages: decompose the question into a chain of tool categories
(the plan), call one tool per reply until the question can be answered (``<Call>``,
``<EndCall>`` for the last tool, ``<NoCall>`` to decline when no suitable tool exists),
then answer. A *single* agent does everything in one conversation; the *multi* form
splits it over a planner, an executor and a concluder, each with its own system prompt.
Self-reflection (check inputs, scope and labels before each call) and few-shot examples
are optional sections added to the system prompts; with self-reflection an automated
verifier checks each reply before it is accepted and asks for a revision
(:data:`VERIFIER`). :data:`BUILD_REQUEST` asks the core to write a natural-language
request for a missing tool, and prompt back-propagation adds learned guidance
(:data:`BACKPROP` is the optimiser's prompt that writes it).

Every prompt is a :class:`Prompt` with a version; :func:`prompt_versions` names the ones a
configuration uses, and the episode records them, so results say which wording made them.
Change the version of a prompt whenever its text changes.

The tool cards shown to the model come from :func:`render_tool_card`; the memory bank
from :func:`render_memory`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from clineval.environments.radbench.model import Plan, StepRecord, ToolCard
from clineval.environments.radbench.vocab import (
    ANATOMIES,
    CATEGORY_NAMES,
    GAP_KINDS,
    MODALITIES,
    VARIABLES,
    Category,
)

Mode = Literal["single", "multi"]

__all__ = [
    "BACKPROP",
    "BUILD_REQUEST",
    "CATEGORY_GLOSSES",
    "CONCLUDER",
    "EXECUTOR",
    "FEW_SHOT_ACT",
    "FEW_SHOT_PLAN",
    "GUIDANCE_HEADER",
    "PLANNER",
    "PROMPTS",
    "REFLECTION_ACT",
    "REFLECTION_PLAN",
    "SYSTEM",
    "TOOL_CARD",
    "TURNS",
    "VARIABLE_GLOSSES",
    "VERIFIER",
    "Mode",
    "Prompt",
    "case_briefing",
    "concluder_system",
    "conclusion_request",
    "executor_briefing",
    "executor_system",
    "plan_request",
    "planner_system",
    "prompt_versions",
    "render_memory",
    "render_plan",
    "render_step_result",
    "render_tool_card",
    "render_tool_cards",
    "revision_request",
    "stage_two_header",
    "step_request",
    "system_prompt",
]


@dataclass(frozen=True)
class Prompt:
    """One piece of prompt text with its version (bump ``version`` when ``text`` changes)."""

    name: str
    version: str
    text: str


# --------------------------------------------------------------------------- vocabulary

VARIABLE_GLOSSES: dict[str, str] = {
    "$Image$": "the radiology image being studied (always in the memory bank)",
    "$Information$": (
        "the patient's age, sex, height, weight, history and complaint (always in the memory bank)"
    ),
    "$Anatomy$": "the body region the image shows, one of: " + ", ".join(ANATOMIES),
    "$Modality$": "the imaging technique, one of: " + ", ".join(MODALITIES),
    "$OrganMask$": "a segmentation mask of the organ of interest",
    "$OrganObject$": "the name of that organ (e.g. liver, left kidney)",
    "$OrganDim$": "what is measured on the organ (e.g. size, volume, density, number, angle)",
    "$OrganQuant$": "the value of that organ measurement (e.g. 14 cm, 1200 ml)",
    "$AnomalyMask$": "a mask or region of the abnormality",
    "$AnomalyObject$": "the kind of abnormality (e.g. nodule, fracture line, effusion)",
    "$AnomalyDim$": "what is measured on the abnormality (e.g. diameter, volume, intensity)",
    "$AnomalyQuant$": "the value of that abnormality measurement (e.g. 18 mm)",
    "$Disease$": "the diagnosed or inferred disease",
    "$IndicatorName$": "the name of a clinical indicator (a score, grade or stage)",
    "$IndicatorValue$": "the value of that indicator",
    "$Report$": "a radiology report (findings and impression)",
    "$Treatment$": "a treatment recommendation",
}
assert set(VARIABLE_GLOSSES) == set(VARIABLES)

CATEGORY_GLOSSES: dict[Category, str] = {
    Category.ANATOMY_CLASSIFIER: "reads from the image which body region it shows; gives $Anatomy$",
    Category.MODALITY_CLASSIFIER: (
        "reads from the image which imaging technique produced it; gives $Modality$"
    ),
    Category.ORGAN_SEGMENTOR: (
        "outlines the organ of interest and names it; gives $OrganMask$ and $OrganObject$"
    ),
    Category.ANOMALY_DETECTOR: (
        "locates the abnormal region and names the abnormality; gives $AnomalyMask$ and $AnomalyObject$"
    ),
    Category.DISEASE_DIAGNOSER: "names the disease directly from the image; gives $Disease$",
    Category.DISEASE_INFERENCER: (
        "names the disease from the image, the patient information and the organ and anomaly "
        "findings (masks and names), so it needs both segmentation and detection first; gives $Disease$"
    ),
    Category.BIOMARKER_QUANTIFIER: (
        "measures the organ or the abnormality found earlier (each tool works on one of the two); "
        "gives $OrganDim$ and $OrganQuant$, or $AnomalyDim$ and $AnomalyQuant$"
    ),
    Category.INDICATOR_EVALUATOR: (
        "computes a clinical indicator (score, grade, stage) from organ or anomaly measurements; "
        "gives the indicator ($IndicatorName$ and $IndicatorValue$; see each card's outputs)"
    ),
    Category.REPORT_GENERATOR: (
        "writes a radiology report; some types improve when findings or masks are passed as optional "
        "inputs; gives $Report$"
    ),
    Category.TREATMENT_RECOMMENDER: (
        "recommends a treatment from the report and the findings; gives $Treatment$"
    ),
}

_CATEGORY_LIST = ", ".join(CATEGORY_NAMES[c] for c in Category)


def _variables_section() -> str:
    lines = ["## The memory bank", ""]
    lines.append(
        "Results are kept in a memory bank of named variables, always written with dollar signs. "
        "These are the only variables there are:"
    )
    lines += [f"- {name}: {gloss}" for name, gloss in VARIABLE_GLOSSES.items()]
    lines.append("")
    lines.append(
        "At the start the memory bank holds only $Image$ and $Information$. Each successful tool "
        "call adds its outputs to it."
    )
    return "\n".join(lines)


def _categories_section() -> str:
    lines = ["## Tool categories", ""]
    lines.append("Every tool belongs to one of these ten categories (use the names exactly as written):")
    lines += [f"- {CATEGORY_NAMES[c]}: {CATEGORY_GLOSSES[c]}" for c in Category]
    lines.append("")
    lines.append(
        "Most tools need $Anatomy$ and $Modality$ as inputs or only work for one region and "
        "modality, so a chain normally starts with the Anatomy Classifier and the Modality Classifier."
    )
    return "\n".join(lines)


_PLAN_FORMAT = """\
## The plan (stage 1)

Reply with one JSON object and nothing else:

```json
{"known": ["$Variable$", ...], "chain": ["Category name", "Category name", ...]}
```

- "known": the memory-bank variables whose values the question itself states outright
  (often none). Listing a variable here does not put it in the memory bank.
- "chain": the tool categories to use, in order, by their exact names. Name a category twice
  if it is used twice (for example the Biomarker Quantifier once for the organ and once for
  the abnormality). Include only the steps the question needs."""

_ACTION_FORMAT = f"""\
## One step (stage 2)

Each step is exactly one of three XML blocks.

To run a tool whose output is not yet the answer:
<Call>
<Purpose>what this step is for, in one sentence</Purpose>
<Tool>TOOLn</Tool>
<Input>['$Variable$', '$Variable$']</Input>
</Call>

To run the tool whose output answers the question (the last tool; the tool steps end here):
<EndCall>
<Purpose>what this last step is for</Purpose>
<Tool>TOOLn</Tool>
<Input>['$Variable$', '$Variable$']</Input>
</EndCall>

To stop because no available tool can do a step the question needs:
<NoCall>
<Purpose>the step that cannot be done</Purpose>
<Category>the category that step needs, one of: {_CATEGORY_LIST}</Category>
<Anatomy>Universal, or the body region a suitable tool would have to cover</Anatomy>
<Modality>Universal, or the modality a suitable tool would have to cover</Modality>
<Ability>{" or ".join(GAP_KINDS)}</Ability>
</NoCall>

Pick the <Ability> that says what is lacking:
- CategoryMissing: there is no tool of the needed category at all. Anatomy and Modality: Universal.
- SpecificToolMissing: tools of the category exist, but none is universal and none covers this
  image's region and modality. Give the image's $Anatomy$ and $Modality$.
- InsufficientCapability: a tool of the category covers this image, but its list of supported
  labels cannot contain what this case needs. Give the category and the image's region and
  modality."""

_RULES = """\
## Rules for tool calls

1. One action block per reply: one <Call>, one <EndCall> or one <NoCall>. No other text,
   apart from a <Reflection> block before it when one is asked for.
2. Write the tool's name exactly as on its card (TOOL7), one tool per call.
3. Inputs: list every compulsory input of the card. Add optional inputs only if they are on
   the card's optional list and already in the memory bank; they raise the tool's score.
   Never pass a variable that is not on the card, nor one that is not in the memory bank.
4. A card whose property says "only for <region> <modality>" works only on such images:
   compare it with $Anatomy$ and $Modality$ in the memory bank before using it. A
   universal tool works on every image.
5. A card that lists supported labels can output nothing else. If what this case needs is not
   on the list, or a result the tool gave is not on it, the tool lacks the capability.
6. When several tools suit the step, use the one with the highest score.
7. Use <EndCall> for the tool whose output answers the question.
8. If no suitable tool exists for a step the question needs, reply with <NoCall> instead of
   calling an unsuitable tool.
9. When a call fails, read the error message, correct the call (another tool or other
   inputs) and go on."""

SYSTEM = Prompt(
    name="system",
    version="1",
    text="\n\n".join(
        [
            """\
# Radiology agent

You are the core of a radiology agent. You cannot see the image yourself: you answer a
clinical question about one patient's radiology image by calling specialised tools, one at
a time, and reading their results from a shared memory bank.

You work in three stages, each started by a message from the user:
1. Plan: split the question into a chain of tool categories.
2. Tool use: at each step, choose one tool from the available tools and give it inputs from
   the memory bank, or decline when no suitable tool exists. After each step you get the
   result (or the error) and the updated memory bank.
3. Answer: from the final memory bank, answer the question.
Only do the stage you are asked for.""",
            _variables_section(),
            _categories_section(),
            _PLAN_FORMAT,
            _ACTION_FORMAT,
            _RULES,
            """\
## The answer (stage 3)

Answer the question in a few sentences from the memory bank: the answer first, then the
results it rests on. Values such as "[organ mask: ...]" stand for masks the tools produced.
If a needed step could not be done, say what is missing and why.""",
        ]
    ),
)

PLANNER = Prompt(
    name="planner",
    version="1",
    text="\n\n".join(
        [
            """\
# Radiology agent: planner

You plan the work of a radiology agent. The agent answers a clinical question about one
patient's radiology image by calling specialised tools one at a time; another agent will
carry out your plan and a third will write the answer. Your only job is the plan: which
tool categories, in which order, the question needs. You do not see the image or the
individual tools, and you call no tool.""",
            _variables_section(),
            _categories_section(),
            _PLAN_FORMAT,
        ]
    ),
)

EXECUTOR = Prompt(
    name="executor",
    version="1",
    text="\n\n".join(
        [
            """\
# Radiology agent: executor

You carry out the plan of a radiology agent. A planner has split a clinical question about
one patient's radiology image into a chain of tool categories; you turn it into tool calls,
one per reply, choosing each tool from the available tools and its inputs from the memory
bank. After each call you get the result (or the error) and the updated memory bank. The
plan is a guide: change it when the tools or the results call for it. A separate agent
writes the final answer once you finish with <EndCall> or decline with <NoCall>.""",
            _variables_section(),
            _categories_section(),
            _ACTION_FORMAT,
            _RULES,
        ]
    ),
)

CONCLUDER = Prompt(
    name="concluder",
    version="1",
    text="""\
# Radiology agent: answer writer

You write the final answer of a radiology agent. The agent has already run its tools on a
patient's radiology image; you get the clinical question, the patient information, the plan,
the steps taken and the final memory bank of results.

- Answer exactly what was asked, first, in a few sentences; then name the results it rests on.
- Use only the memory bank and the patient information; take the tool results as correct.
  Values such as "[organ mask: ...]" stand for masks the tools produced.
- If the steps stopped before the answer was reached (a missing or unsuitable tool, a failed
  call), say what could not be determined and why, and give what is known.
- No disclaimers, no requests for more information, no XML tags.""",
)

TURNS = Prompt(
    name="turns",
    version="1",
    text="the user messages of each stage: plan_request, step_request, conclusion_request",
)

REFLECTION_PLAN = Prompt(
    name="self_reflection.plan",
    version="1",
    text="""\
## Check the plan before you give it

Before settling on the chain, check it:
- Prerequisites: does it first obtain what later tools need ($Anatomy$, $Modality$, masks)?
- Flow: does every step get its inputs from the memory bank or from earlier steps?
- Redundancy: is there a step the question does not need?
- Gaps: is a step missing for what the question asks?
Add a one- to three-sentence summary of this check to the JSON object under the key
"reflection", before "chain".""",
)

REFLECTION_ACT = Prompt(
    name="self_reflection.act",
    version="1",
    text="""\
## Check each call before you make it

Before the action block, write a short <Reflection> block covering:
- Step: which step comes next and which category it needs.
- Candidates: the tools of that category; for each, whether its property covers the image's
  $Anatomy$ and $Modality$ in the memory bank, and whether its supported labels (if listed)
  allow what this case needs.
- Inputs: the chosen tool's compulsory inputs, each confirmed in the memory bank; optional
  inputs only if they are on its card and in the memory bank; nothing else.
- Choice: the suitable tool with the highest score, or why none is suitable and which
  <NoCall> kind applies.
Then write the one action block.""",
)


VERIFIER = Prompt(
    name="self_reflection.verifier",
    version="1",
    text="""\
The automated check of your reply found problems, so it was not carried out:
{problems}
Reflect again on this step and send a corrected reply in the same format.""",
)
"""The revision request of the self-reflection verifier (:mod:`.cores.verifier`)."""

BACKPROP = Prompt(
    name="backprop",
    version="1",
    text="""\
# Improving a radiology agent's instructions

You improve the instructions of a radiology agent. The agent answers clinical questions
about a patient's radiology image by planning a chain of tool categories, calling one
simulated tool per step with inputs from a memory bank, and declining with <NoCall> when
no available tool can do a step the question needs. You get the guidance the agent was
given on top of its instructions (possibly none) and episodes it failed, each with the
correct chain of tool categories, whether the task could be solved with the tools given,
and what went wrong.

Write revised guidance: short numbered rules the agent will read before every episode,
which would have prevented these failures and do not break what already works.
- Keep rules general. Never name a patient, a disease, a finding, a value or a tool
  number (TOOL7): the episodes to come have other patients and other tools.
- Keep the rules of the current guidance that still hold; merge, reword or drop the rest.
- At most 12 rules, each one or two sentences.

Reply with the guidance only, inside <Guidance> and </Guidance>.""",
)
"""The optimiser's prompt of prompt back-propagation (:mod:`.cores.backprop`)."""

GUIDANCE_HEADER = "## Lessons from earlier episodes\n\n"
"""The heading of learned back-propagation guidance in the core's system prompt."""

BUILD_REQUEST = Prompt(
    name="build_request",
    version="1",
    text="""\
## Asking for a missing tool to be built

Missing tools can be built for you. When you decline with <NoCall>, add inside the block a
<Request> that asks for the tool in plain words, for example:
<Request>I need an Organ Segmentor for Head and Neck X-ray images that can outline the
organs of the head and neck.</Request>
Name the tool category, the body region and the modality the tool must cover (or say it
must work on any region or modality), and what it must be able to output. If the tool
exists but lacks a capability, say which (for example, that it must recognise every
disease, not only the ones on its list). If the tool is built, it appears among the
available tools and you go on with it.""",
)


def _few_shot_plan() -> str:
    return """\
## Examples of plans

Question: "Could you measure the liver on this scan and tell me how large it is?"
```json
{"known": [],
 "chain": ["Anatomy Classifier", "Modality Classifier", "Organ Segmentor", "Biomarker Quantifier"]}
```

Question: "This abdominal CT of a 60-year-old woman needs a report that takes the
abnormality and the most likely diagnosis into account."
```json
{"known": ["$Anatomy$", "$Modality$"],
 "chain": ["Anatomy Classifier", "Modality Classifier", "Anomaly Detector", "Disease Diagnoser",
           "Report Generator"]}
```
(The question states the region and modality, but the memory bank does not hold them until
the classifiers have run, and the specific tools check them.)"""


FEW_SHOT_PLAN = Prompt(name="few_shot.plan", version="1", text=_few_shot_plan())

_EXAMPLE_TOOLS = """\
Example tools:
- TOOL1 Anatomy Classifier, universal; compulsory $Image$; score 0.95
- TOOL2 Modality Classifier, universal; compulsory $Image$; score 0.95
- TOOL3 Organ Segmentor, universal; compulsory $Image$, $Anatomy$, $Modality$; score 0.80
- TOOL4 Organ Segmentor only for Abdomen and Pelvis CT images; compulsory $Image$; score 0.85
- TOOL5 Organ Biomarker Quantifier, universal; compulsory $Image$, $OrganObject$, $OrganMask$;
  optional $OrganDim$; score 0.75 to 0.80
- TOOL6 Anomaly Detector only for Spine MRI images; compulsory $Image$
- TOOL7 Anomaly Detector only for Breast Ultrasound images; compulsory $Image$"""


def _few_shot_act(reflect: bool) -> str:
    def block(reflection: str, action: str) -> str:
        return f"<Reflection>\n{reflection}\n</Reflection>\n{action}" if reflect else action

    call = block(
        "Step: organ segmentation (Organ Segmentor). Candidates: TOOL3 (universal, 0.80) and TOOL4\n"
        "(Abdomen and Pelvis CT only, 0.85); the memory bank says Abdomen and Pelvis, CT, so both fit.\n"
        "Inputs: TOOL4 needs only $Image$. Choice: TOOL4, the higher score.",
        "<Call>\n<Purpose>Outline the organ of interest on the abdominal CT</Purpose>\n<Tool>TOOL4</Tool>\n"
        "<Input>['$Image$']</Input>\n</Call>",
    )
    endcall = block(
        "Step: organ measurement (Biomarker Quantifier), the last step. Candidate: TOOL5 (organ,\n"
        "universal). Inputs: $Image$, $OrganObject$, $OrganMask$ are in the memory bank; $OrganDim$\n"
        "is not yet. Choice: TOOL5.",
        "<EndCall>\n<Purpose>Measure the segmented organ to answer the question</Purpose>\n"
        "<Tool>TOOL5</Tool>\n<Input>['$Image$', '$OrganObject$', '$OrganMask$']</Input>\n</EndCall>",
    )
    nocall = block(
        "Step: anomaly detection (Anomaly Detector). Candidates: TOOL6 (Spine MRI only) and TOOL7 (Breast\n"
        "Ultrasound only); the memory bank says Chest, X-ray, so neither fits and no universal one exists.\n"
        "Choice: decline, SpecificToolMissing.",
        "<NoCall>\n<Purpose>Locate the abnormality on the chest X-ray</Purpose>\n"
        "<Category>Anomaly Detector</Category>\n<Anatomy>Chest</Anatomy>\n<Modality>X-ray</Modality>\n"
        "<Ability>SpecificToolMissing</Ability>\n</NoCall>",
    )
    return f"""\
## Examples of steps

{_EXAMPLE_TOOLS}

Memory bank: $Image$, $Information$, $Anatomy$ = Abdomen and Pelvis, $Modality$ = CT.
Next step, organ segmentation:
{call}

Later, with $OrganMask$ and $OrganObject$ in the memory bank, the last step:
{endcall}

Another case, with $Anatomy$ = Chest and $Modality$ = X-ray, needing anomaly detection:
{nocall}"""


FEW_SHOT_ACT = Prompt(name="few_shot.act", version="1", text=_few_shot_act(False))

TOOL_CARD = Prompt(
    name="tool_card",
    version="1",
    text="render_tool_card: name, category, property, ability (with labels), inputs, outputs, score",
)

PROMPTS: dict[str, Prompt] = {
    p.name: p
    for p in (
        SYSTEM,
        PLANNER,
        EXECUTOR,
        CONCLUDER,
        TURNS,
        REFLECTION_PLAN,
        REFLECTION_ACT,
        FEW_SHOT_PLAN,
        FEW_SHOT_ACT,
        TOOL_CARD,
        VERIFIER,
        BUILD_REQUEST,
        BACKPROP,
    )
}


def prompt_versions(
    mode: Mode,
    *,
    self_reflection: bool,
    few_shot: bool,
    verifier: bool = False,
    build_request: bool = False,
    guidance: str | None = None,
) -> dict[str, str]:
    """``{"radbench.<prompt>": version}`` for every prompt a configuration sends.

    ``guidance`` is the version of learned prompt back-propagation guidance, if the core
    uses some (:mod:`clineval.environments.radbench.cores.backprop`); the prompt that
    wrote it is recorded with it."""
    names = ["system"] if mode == "single" else ["planner", "executor", "concluder"]
    names += ["turns", "tool_card"]
    if self_reflection:
        names += ["self_reflection.plan", "self_reflection.act"]
        if verifier:
            names.append("self_reflection.verifier")
    if few_shot:
        names += ["few_shot.plan", "few_shot.act"]
    if build_request:
        names.append("build_request")
    versions = {f"radbench.{name}": PROMPTS[name].version for name in names}
    if guidance is not None:
        versions["radbench.backprop.guidance"] = guidance
        versions["radbench.backprop"] = BACKPROP.version
    return versions


# --------------------------------------------------------------------------- system prompts


def _with_sections(base: str, sections: Iterable[str]) -> str:
    return "\n\n".join([base, *sections])


def _guidance_section(guidance: str | None) -> list[str]:
    return [GUIDANCE_HEADER + guidance.strip()] if guidance and guidance.strip() else []


def system_prompt(
    *,
    self_reflection: bool = False,
    few_shot: bool = False,
    build_request: bool = False,
    guidance: str | None = None,
) -> str:
    """The system prompt of the single agent (``guidance``: learned back-propagation text)."""
    sections = []
    if self_reflection:
        sections += [REFLECTION_PLAN.text, REFLECTION_ACT.text]
    if few_shot:
        sections += [FEW_SHOT_PLAN.text, _few_shot_act(self_reflection)]
    if build_request:
        sections.append(BUILD_REQUEST.text)
    return _with_sections(SYSTEM.text, sections + _guidance_section(guidance))


def planner_system(
    *, self_reflection: bool = False, few_shot: bool = False, guidance: str | None = None
) -> str:
    """The planner's system prompt (multi-agent form)."""
    sections = []
    if self_reflection:
        sections.append(REFLECTION_PLAN.text)
    if few_shot:
        sections.append(FEW_SHOT_PLAN.text)
    return _with_sections(PLANNER.text, sections + _guidance_section(guidance))


def executor_system(
    *,
    self_reflection: bool = False,
    few_shot: bool = False,
    build_request: bool = False,
    guidance: str | None = None,
) -> str:
    """The executor's system prompt (multi-agent form)."""
    sections = []
    if self_reflection:
        sections.append(REFLECTION_ACT.text)
    if few_shot:
        sections.append(_few_shot_act(self_reflection))
    if build_request:
        sections.append(BUILD_REQUEST.text)
    return _with_sections(EXECUTOR.text, sections + _guidance_section(guidance))


def revision_request(problems: Sequence[str]) -> str:
    """The verifier's message when a drafted reply fails its check."""
    return VERIFIER.text.format(problems="\n".join(f"- {p}" for p in problems))


def concluder_system() -> str:
    """The concluder's system prompt (multi-agent form)."""
    return CONCLUDER.text


# --------------------------------------------------------------------------- renderers

_LABEL_NOUNS = {
    "organ": "organs",
    "anomaly": "abnormalities",
    "disease": "diseases",
    "organ_dim": "organ measurement types",
    "anomaly_dim": "abnormality measurement types",
    "indicator": "indicators",
}
_REPORT_TYPES = {
    "basic": ("basic", " from the image alone"),
    "text": ("text", ", using textual findings passed as optional inputs"),
    "mask": ("mask", ", using masks passed as optional inputs"),
    "text_mask": ("text and mask", ", using textual findings and masks passed as optional inputs"),
}


def _title(card: ToolCard) -> str:
    title = CATEGORY_NAMES[card.category]
    if card.category in (Category.BIOMARKER_QUANTIFIER, Category.INDICATOR_EVALUATOR) and card.kind:
        title = f"{card.kind.capitalize()} {title}"
    if card.category == Category.REPORT_GENERATOR and card.report_type:
        title = f"{title} ({_REPORT_TYPES[card.report_type][0]})"
    return title


def _scope(card: ToolCard) -> str:
    if card.anatomy and card.modality:
        return f"{card.anatomy} {card.modality}"
    if card.anatomy:
        return f"{card.anatomy} (any modality)"
    if card.modality:
        return f"{card.modality} (any region)"
    return ""


def _property(card: ToolCard) -> str:
    if card.universal:
        return f"Universal {_title(card)}"
    return f"{_title(card)} only for {_scope(card)} images"


def _ability(card: ToolCard) -> str:
    where = f"{_scope(card)} images" if not card.universal else "images of any region and modality"
    kind = {"organ": "organ", "anomaly": "abnormality"}.get(card.kind or "", "organ or abnormality")
    texts: dict[Category, str] = {
        Category.ANATOMY_CLASSIFIER: "Tells which body region the image shows.",
        Category.MODALITY_CLASSIFIER: "Tells which imaging technique produced the image.",
        Category.ORGAN_SEGMENTOR: f"Outlines the organ of interest on {where} and names it.",
        Category.ANOMALY_DETECTOR: f"Locates the abnormal region on {where} and names the abnormality.",
        Category.DISEASE_DIAGNOSER: f"Names the disease directly from {where}.",
        Category.DISEASE_INFERENCER: (
            "Names the disease from the image, the patient information and the organ and "
            "abnormality findings (masks and names)."
        ),
        Category.BIOMARKER_QUANTIFIER: (
            f"Measures the {kind} found earlier: picks the relevant measurement type and gives its value."
        ),
        Category.INDICATOR_EVALUATOR: (
            f"Computes a clinical indicator (a score, grade or stage) from the {kind} measurements "
            "and the patient information."
        ),
        Category.REPORT_GENERATOR: "Writes a radiology report for "
        + where
        + (_REPORT_TYPES[card.report_type][1] if card.report_type else "")
        + ".",
        Category.TREATMENT_RECOMMENDER: (
            "Recommends a treatment from the report and the patient information, helped by any "
            "findings passed as optional inputs."
        ),
    }
    text = texts[card.category]
    if card.labels is not None:
        noun = _LABEL_NOUNS.get(card.label_field or "", "labels")
        listed = ", ".join(card.labels) if card.labels else "(none)"
        text += f" It can only output these {noun}: {listed}; anything else is beyond its capability."
    return text


def _score(card: ToolCard) -> str:
    text = f"Score from {card.lower:g} to {card.upper:g}"
    if card.optional and card.upper > card.lower:
        text += ", increases with optional inputs"
    return text


def _variables(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def render_tool_card(card: ToolCard) -> str:
    """One tool as the model sees it: name, category, property, ability, inputs, outputs, score."""
    return "\n".join(
        [
            f"### {card.name}",
            f"Category: {CATEGORY_NAMES[card.category]}",
            f"Property: {_property(card)}",
            f"Ability: {_ability(card)}",
            f"Compulsory inputs: {_variables(card.compulsory)}",
            f"Optional inputs: {_variables(card.optional)}",
            f"Outputs: {_variables(card.outputs)}",
            f"Performance: {_score(card)}",
        ]
    )


def render_tool_cards(cards: Sequence[ToolCard]) -> str:
    """All tools, one card after the other."""
    if not cards:
        return "(no tools are available)"
    return "\n\n".join(render_tool_card(card) for card in cards)


def render_memory(memory: Mapping[str, str]) -> str:
    """The memory bank, one ``- $Variable$: value`` line each."""
    if not memory:
        return "(empty)"
    return "\n".join(f"- {name}: {value}" for name, value in memory.items())


def render_plan(plan: Plan | None) -> str:
    """A plan in one or two lines, or a note that there is none."""
    if plan is None or not plan.chain:
        return "(no usable plan)"
    chain = " -> ".join(CATEGORY_NAMES[c] for c in plan.chain)
    known = ", ".join(plan.known) if plan.known else "none"
    return f"Tool chain: {chain}\nStated in the question: {known}"


def render_step_result(step: StepRecord, tools: Sequence[ToolCard] = ()) -> str:
    """What happened at one step, as told to the model: outputs, or the error message."""
    number = step.index + 1
    category = f" ({CATEGORY_NAMES[step.category]})" if step.category is not None else ""
    if step.action == "malformed":
        reason = step.error or "it holds no readable action block"
        return (
            f"Step {number}: your reply could not be read: {reason}. Reply with exactly one <Call>, "
            "<EndCall> or <NoCall> block in the format given."
        )
    if step.action == "nocall":
        text = f"Step {number}: you declined (<NoCall>)."
        if step.built_tool:
            card = next((t for t in tools if t.name == step.built_tool), None)
            text += f" A new tool has been built for the missing step: {step.built_tool}"
            text += f" ({CATEGORY_NAMES[card.category]})." if card is not None else "."
            text += " Continue with it."
        return text
    tool = step.tool or "?"
    if not step.ok:
        kind = f" [{step.error_kind}]" if step.error_kind else ""
        return (
            f"Step {number}: the call to {tool}{category} failed{kind}: {step.error or 'no reason given'}. "
            "Nothing was added to the memory bank."
        )
    if step.outputs:
        outputs = "; ".join(f"{k} = {v}" for k, v in step.outputs.items())
        return f"Step {number}: {tool}{category} ran. New results: {outputs}."
    return f"Step {number}: {tool}{category} ran."


# --------------------------------------------------------------------------- user turns


def _patient(question: str, information: str) -> str:
    return f"## Question\n{question}\n\n## Patient information\n{information}"


def case_briefing(question: str, information: str, tools: Sequence[ToolCard] | None = None) -> str:
    """The question, the patient information and (if given) the tool cards."""
    parts = [_patient(question, information)]
    if tools is not None:
        parts.append("## Available tools\n\n" + render_tool_cards(tools))
    return "\n\n".join(parts)


def plan_request(question: str, information: str, tools: Sequence[ToolCard] | None = None) -> str:
    """The stage-1 message: the question, the patient and (single agent) the tools."""
    parts = [case_briefing(question, information, tools)]
    parts.append(
        'Stage 1: reply with the plan only, as one JSON object with "known" and "chain". '
        "Do not call a tool yet."
    )
    return "\n\n".join(parts)


def stage_two_header(*, step_limit: int, plan_problem: str | None = None) -> str:
    """The single agent's first stage-2 message opens with this."""
    text = f"Stage 2: carry out your plan, one tool per reply (at most {step_limit} steps)."
    if plan_problem:
        text += f" Your plan could not be read ({plan_problem}); go on with the tool steps anyway."
    return text


def executor_briefing(
    question: str, information: str, plan: Plan | None, tools: Sequence[ToolCard], *, step_limit: int
) -> str:
    """The executor's first message opens with this: the case, the planner's plan, the tools."""
    return "\n\n".join(
        [
            _patient(question, information),
            "## Plan from the planner\n" + render_plan(plan),
            "## Available tools\n\n" + render_tool_cards(tools),
            f"Carry out the plan, one tool per reply (at most {step_limit} steps).",
        ]
    )


def step_request(
    memory: Mapping[str, str],
    *,
    results: Sequence[str] = (),
    plan: Plan | None = None,
    new_tools: Sequence[ToolCard] = (),
    header: str | None = None,
) -> str:
    """A stage-2 message: what the last step did, any new tools, the memory bank, the request."""
    parts = []
    if header:
        parts.append(header)
    if plan is not None:
        parts.append("## Plan\n" + render_plan(plan))
    if results:
        parts.append("## Result of the last step\n" + "\n".join(results))
    if new_tools:
        parts.append("## Available tools\n\n" + render_tool_cards(new_tools))
    parts.append("## Memory bank\n" + render_memory(memory))
    parts.append(
        "Give the next step: exactly one <Call>, <EndCall> or <NoCall> block"
        " (use <EndCall> if this tool's output answers the question)."
    )
    return "\n\n".join(parts)


def conclusion_request(
    memory: Mapping[str, str],
    *,
    question: str | None = None,
    information: str | None = None,
    plan: Plan | None = None,
    steps: Sequence[str] = (),
    results: Sequence[str] = (),
) -> str:
    """The stage-3 message: the final memory bank (and, for the concluder, the question,
    the patient, the plan and every step taken)."""
    parts = []
    if question is not None:
        parts.append(_patient(question, information or ""))
        parts.append("## Plan\n" + render_plan(plan))
    if steps:
        parts.append("## Steps taken\n" + "\n".join(steps))
    if results:
        parts.append("## Result of the last step\n" + "\n".join(results))
    parts.append("## Final memory bank\n" + render_memory(memory))
    parts.append(
        "Stage 3: the tool steps are over. Answer the question from these results: the answer "
        "first, then the results it rests on, in a few sentences. No XML blocks."
    )
    return "\n\n".join(parts)
