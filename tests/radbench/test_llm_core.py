"""The LLM agent core of the radiology benchmark: reply parsing, prompts, and the core
itself in single and multi-agent form against the local scripted OpenAI-compatible server."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from pydantic import ValidationError

from clineval.environments.radbench import prompts as P
from clineval.environments.radbench.cores.llm import LLMCore, LLMCoreConfig, LLMCoreError
from clineval.environments.radbench.model import (
    Call,
    EpisodeView,
    Malformed,
    NoCall,
    Plan,
    StepRecord,
    ToolCard,
)
from clineval.environments.radbench.parsing import (
    category_of,
    gap_kind_of,
    parse_action,
    parse_inputs,
    parse_plan,
    tool_name_of,
)
from clineval.environments.radbench.vocab import CATEGORY_NAMES, Category
from clineval.errors import JudgeConfigurationError
from clineval.testing import ScriptedServer

C = Category

# =========================================================================== plans

PLAN_JSON = (
    '{"known": ["$Anatomy$"], "chain": ["Anatomy Classifier", "Modality Classifier", "Organ Segmentor"]}'
)


@pytest.mark.parametrize(
    ("reply", "known", "chain"),
    [
        (PLAN_JSON, ["$Anatomy$"], [0, 1, 2]),
        (f"Here is my plan:\n```json\n{PLAN_JSON}\n```\nDone.", ["$Anatomy$"], [0, 1, 2]),
        # seed-style keys, quoted
        (
            '{"Known Info": [], "Tool Chain": "*Anatomy Classification Tool* -> '
            '*Modality Classification Tool* -> *Disease Diagnosis Tool*"}',
            [],
            [0, 1, 4],
        ),
        # seed-style keys, unquoted (not JSON): read from the lines
        (
            '```json\n{\nTask Summary: "a report",\nKnown Info: ["$Information$", "$Anatomy$"],\n'
            'Self-Reflection: "fine",\nTool Chain: [*Organ Segmentation Tool* -> *Anomaly Detection Tool*\n'
            "-> *Disease Inference Tool* -> *Report Generation Tool*]\n}\n```",
            ["$Information$", "$Anatomy$"],
            [2, 3, 5, 8],
        ),
        # RadA-BenchPlat's Part-1 line format, with curly quotes and a chain over two lines
        (
            "Known Info: [’$Anatomy$’, ’$modality$’]\nTool Chain: [*Anatomy Classification Tool* -> "
            "*Modality Classification Tool*\n-> *Organ Biomarker Quantification Tool*]",
            ["$Anatomy$", "$Modality$"],
            [0, 1, 6],
        ),
        # Python quoting, a reflection key, biomarker twice
        (
            "{'reflection': 'ok', 'known': [], 'chain': ['Organ Biomarker Quantification Tool', "
            "'Anomaly Biomarker Quantification Tool', 'Indicator Evaluation Tool']}",
            [],
            [6, 6, 7],
        ),
        # chain as category digits, known as bare names
        ('{"known": ["Anatomy", "Disease"], "chain": [0, 1, "9"]}', ["$Anatomy$", "$Disease$"], [0, 1, 9]),
        # commas instead of arrows, extra words around the names
        (
            "Tool Chain: Anatomy Classifier, Modality Classifier, 3. Organ Segmentor (TOOL3)",
            [],
            [0, 1, 2],
        ),
        ("Tool Chain: [AC -> MC -> AD -> Treatment Planner]", [], [0, 1, 3, 9]),
    ],
)
def test_parse_plan_accepts(reply: str, known: list[str], chain: list[int]) -> None:
    plan = parse_plan(reply)
    assert isinstance(plan, Plan), plan
    assert plan.known == known
    assert plan.chain == [Category(i) for i in chain]
    assert plan.raw == reply


@pytest.mark.parametrize(
    ("name", "category"),
    [
        *[(title, category) for category, title in CATEGORY_NAMES.items()],
        *[(f"*{title}*", category) for category, title in CATEGORY_NAMES.items()],
        ("Anatomy Classification Tool", C.ANATOMY_CLASSIFIER),
        ("modality classification", C.MODALITY_CLASSIFIER),
        ("Organ Segmentation", C.ORGAN_SEGMENTOR),
        ("Organ Segmentation Tool", C.ORGAN_SEGMENTOR),
        ("Anomaly Detection Tool", C.ANOMALY_DETECTOR),
        ("Biomarker Quantification Tool", C.BIOMARKER_QUANTIFIER),
        ("Organ Biomarker Quantification Tool", C.BIOMARKER_QUANTIFIER),
        ("Anomaly Biomarker Quantifier", C.BIOMARKER_QUANTIFIER),
        ("Indicator Evaluation Tool", C.INDICATOR_EVALUATOR),
        ("Indicator Evaluator Tool", C.INDICATOR_EVALUATOR),
        ("Indicator Calculator", C.INDICATOR_EVALUATOR),
        ("Disease Diagnosis Tool", C.DISEASE_DIAGNOSER),
        ("Imaging Diagnoser", C.DISEASE_DIAGNOSER),
        ("Disease Inference Tool", C.DISEASE_INFERENCER),
        ("Grounded Diagnoser", C.DISEASE_INFERENCER),
        ("Report Generation Tool", C.REPORT_GENERATOR),
        ("Treatment Recommendation Tool", C.TREATMENT_RECOMMENDER),
        ("treatment_recommender", C.TREATMENT_RECOMMENDER),
        ("ORGAN SEGMENTORS", C.ORGAN_SEGMENTOR),
    ],
)
def test_category_names_are_matched_leniently(name: str, category: Category) -> None:
    assert category_of(name) == category


@pytest.mark.parametrize("name", ["", "Magic Tool", "Organ Segmentor and Anomaly Detector", "TOOL3", "?"])
def test_unknown_or_ambiguous_category_names(name: str) -> None:
    assert category_of(name) is None


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Tool Chain: [*Anatomy Classification Tool* -> *Magic Tool*]", "'Magic Tool'"),
        ('{"known": [], "chain": ["Anatomy Classifier", "Wizard"]}', "'Wizard'"),
        ('{"known": [], "chain": []}', "empty"),
        ('{"known": [], "chain": {"a": 1}}', "neither a list nor a string"),
        ("I will first classify the anatomy and then segment.", "no plan found"),
        ("", "no plan found"),
        ("{{{[[[", "no plan found"),
    ],
)
def test_parse_plan_rejects(reply: str, reason: str) -> None:
    result = parse_plan(reply)
    assert isinstance(result, Malformed)
    assert reason in result.reason
    assert result.reply == reply


# =========================================================================== actions

CALL = (
    "<Call>\n<Purpose>Find the body region</Purpose>\n<Tool>TOOL1</Tool>\n<Input>['$Image$']</Input>\n</Call>"
)


def test_parse_clean_call() -> None:
    action = parse_action(CALL)
    assert action == Call(tool="TOOL1", inputs=["$Image$"], purpose="Find the body region", raw=CALL)


@pytest.mark.parametrize(
    "reply",
    [
        f"```xml\n{CALL}\n```",
        f"Based on the plan, the first step is anatomy:\n\n{CALL}\n\nThat is all.",
        "<Reflection>\n<Candidates>TOOL1, TOOL9</Candidates>\n<Reasoning>I will make a <Call> with TOOL1"
        "</Reasoning>\n</Reflection>\n" + CALL,
        CALL.lower().replace("$image$", "$Image$"),
        CALL.replace("<Call>", "< call >").replace("</Call>", "</ CALL>"),
        CALL.replace("</Call>", ""),  # cut short before the closing tag
    ],
)
def test_parse_call_around_other_text(reply: str) -> None:
    action = parse_action(reply)
    assert isinstance(action, Call), action
    assert (action.tool, action.inputs, action.final) == ("TOOL1", ["$Image$"], False)


def test_parse_endcall() -> None:
    reply = "<EndCall><Purpose>Answer</Purpose><Tool>TOOL7</Tool><Input>['$Image$']</Input></EndCall>"
    action = parse_action(reply)
    assert isinstance(action, Call)
    assert action.final and action.tool == "TOOL7"
    assert isinstance(parse_action(reply.replace("EndCall", "endcall")), Call)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("['$Image$', '$Anatomy$']", ["$Image$", "$Anatomy$"]),
        ('["$Image$", "$Anatomy$"]', ["$Image$", "$Anatomy$"]),
        ("[’$Image$’, ’$Anatomy$’]", ["$Image$", "$Anatomy$"]),
        ("[$Image$, $Anatomy$]", ["$Image$", "$Anatomy$"]),
        ("$Image$, $Anatomy$", ["$Image$", "$Anatomy$"]),
        ("$Image$ $Anatomy$", ["$Image$", "$Anatomy$"]),
        ("$image$;$ANATOMY$", ["$Image$", "$Anatomy$"]),
        ("$Image$", ["$Image$"]),
        ("['$Image$', '$Image$']", ["$Image$"]),
        ("[]", []),
        ("None", []),
        ("['$Image$'] - only variables from the memory bank", ["$Image$"]),
        ("['$Image$', '$ValueName$']", ["$Image$", "$ValueName$"]),  # unknown: kept for the simulator
    ],
)
def test_parse_inputs_forms(text: str, expected: list[str]) -> None:
    assert parse_inputs(text) == expected


@pytest.mark.parametrize("text", ["['Image', '$Anatomy$']", "Image, Anatomy", "[$Image$, the anatomy]"])
def test_parse_inputs_rejects_bare_words(text: str) -> None:
    reason = parse_inputs(text)
    assert isinstance(reason, str) and "not a memory-bank variable" in reason


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("TOOL12", "TOOL12"),
        ("tool12", "TOOL12"),
        (" Tool 12 ", "TOOL12"),
        ("TOOL_3", "TOOL3"),
        ("[TOOL3]", "TOOL3"),
    ],
)
def test_tool_names_are_normalised(tool: str, expected: str) -> None:
    assert tool_name_of(tool) == expected
    action = parse_action(f"<Call><Tool>{tool}</Tool><Input>[$Image$]</Input></Call>")
    assert isinstance(action, Call) and action.tool == expected


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (CALL + "\n" + CALL.replace("TOOL1", "TOOL2"), "2 action blocks"),
        (CALL + "\n<NoCall><Category>Organ Segmentor</Category></NoCall>", "2 action blocks"),
        ("<Call><Purpose>x</Purpose><Input>['$Image$']</Input></Call>", "has no <Tool>"),
        ("<Call><Tool>TOOL1</Tool></Call>", "has no <Input>"),
        ("<Call><Tool>TOOL1</Tool><Tool>TOOL2</Tool><Input>[]</Input></Call>", "more than one <Tool>"),
        ("<Call><Tool>Anatomy Classifier</Tool><Input>['$Image$']</Input></Call>", "does not name one tool"),
        ("<Call><Tool>TOOL3 or TOOL4</Tool><Input>['$Image$']</Input></Call>", "does not name one tool"),
        ("<Call><Tool>TOOL1</Tool><Input>['Image']</Input></Call>", "'Image' is not a memory-bank variable"),
        ("<Call><Tool>TOOL1</Tool><Input>['$Image$']</Input></EndCall>", "closed with </EndCall>"),
        ("<Call> <EndCall> <NoCall>", "several unclosed"),
        ("I would call TOOL1 with $Image$.", "no <Call>, <EndCall> or <NoCall> block"),
        ("", "no <Call>"),
    ],
)
def test_parse_action_rejects(reply: str, reason: str) -> None:
    result = parse_action(reply)
    assert isinstance(result, Malformed), result
    assert reason in result.reason
    assert result.reply == reply


def _nocall(category: str, anatomy: str, modality: str, ability: str) -> str:
    return (
        "<Reflection>No tool fits.</Reflection>\n<NoCall>\n<Purpose>Find the lesion</Purpose>\n"
        f"<Category>{category}</Category>\n<Anatomy>{anatomy}</Anatomy>\n<Modality>{modality}</Modality>\n"
        f"<Ability>{ability}</Ability>\n</NoCall>"
    )


@pytest.mark.parametrize(
    ("reply", "category", "anatomy", "modality", "ability"),
    [
        (
            _nocall("Report Generator", "Universal", "Universal", "CategoryMissing"),
            C.REPORT_GENERATOR,
            "Universal",
            "Universal",
            "CategoryMissing",
        ),
        (
            _nocall("Anomaly Detection Tool", "chest", "xray", "Specific Tool Missing"),
            C.ANOMALY_DETECTOR,
            "Chest",
            "X-ray",
            "SpecificToolMissing",
        ),
        (
            _nocall("Organ Segmentor", "Abdomen and Pelvis", "CT", " insufficient_capability "),
            C.ORGAN_SEGMENTOR,
            "Abdomen and Pelvis",
            "CT",
            "InsufficientCapability",
        ),
    ],
)
def test_parse_nocall_kinds(
    reply: str, category: Category, anatomy: str, modality: str, ability: str
) -> None:
    action = parse_action(reply)
    assert isinstance(action, NoCall), action
    assert (action.category, action.anatomy, action.modality, action.ability) == (
        category,
        anatomy,
        modality,
        ability,
    )
    assert action.purpose == "Find the lesion"
    assert action.category_text and action.ability_text


def test_nocall_with_unknown_category_is_still_a_decline() -> None:
    action = parse_action("<nocall><Category>Wizard</Category><Ability>magic</Ability></nocall>")
    assert isinstance(action, NoCall)
    assert action.category is None and action.category_text == "Wizard"
    assert action.ability is None and action.ability_text == "magic"
    assert (action.anatomy, action.modality) == ("Universal", "Universal")


def test_gap_kinds() -> None:
    assert gap_kind_of("category missing") == "CategoryMissing"
    assert gap_kind_of("SPECIFICTOOLMISSING") == "SpecificToolMissing"
    assert gap_kind_of("Insufficient Capability") == "InsufficientCapability"
    assert gap_kind_of("") is None


def test_parsers_never_raise() -> None:
    rng = random.Random(4)
    alphabet = ["<Call>", "</Call>", "<EndCall>", "<NoCall>", "</NoCall>", "<Tool>", "</Tool>", "<Input>"]
    alphabet += ["</Input>", "[", "]", "{", "}", "$", "'", '"', ",", "->", "TOOL", "1", "Tool Chain:"]
    alphabet += ["chain", ":", "\n", " ", "$Image$", "Organ Segmentor", "```", "\\", "\x00", "é"]
    for _ in range(600):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert isinstance(parse_action(text), Call | NoCall | Malformed)
        assert isinstance(parse_plan(text), Plan | Malformed)
    for odd in ["<Call>" * 5000, "$" * 10000, "[" * 5000, "{" * 3000 + "}" * 3000]:
        assert isinstance(parse_action(odd), Malformed)
        assert isinstance(parse_plan(odd), Plan | Malformed)
    assert isinstance(parse_action(None), Malformed)  # type: ignore[arg-type]
    assert isinstance(parse_plan(42), Malformed)  # type: ignore[arg-type]


# =========================================================================== prompts and renderers


def _tools() -> list[ToolCard]:
    return [
        ToolCard(
            name="TOOL1",
            category=C.ANATOMY_CLASSIFIER,
            compulsory=["$Image$"],
            outputs=["$Anatomy$"],
            lower=0.95,
            upper=0.95,
        ),
        ToolCard(
            name="TOOL2",
            category=C.MODALITY_CLASSIFIER,
            compulsory=["$Image$"],
            outputs=["$Modality$"],
            lower=0.95,
            upper=0.95,
        ),
        ToolCard(
            name="TOOL3",
            category=C.ORGAN_SEGMENTOR,
            anatomy="Chest",
            modality="CT",
            labels=["Lung", "Heart", "Aorta"],
            label_field="organ",
            compulsory=["$Image$"],
            outputs=["$OrganMask$", "$OrganObject$"],
            lower=0.9,
            upper=0.9,
        ),
        ToolCard(
            name="TOOL4",
            category=C.REPORT_GENERATOR,
            report_type="text_mask",
            compulsory=["$Image$", "$Anatomy$", "$Modality$"],
            optional=["$Disease$", "$OrganMask$"],
            outputs=["$Report$"],
            lower=0.35,
            upper=0.83,
            step=0.04,
        ),
    ]


def test_render_tool_cards() -> None:
    text = P.render_tool_cards(_tools())
    assert "### TOOL1\nCategory: Anatomy Classifier\nProperty: Universal Anatomy Classifier" in text
    assert "Property: Organ Segmentor only for Chest CT images" in text
    assert "It can only output these organs: Lung, Heart, Aorta" in text
    assert (
        "Compulsory inputs: $Image$, $Anatomy$, $Modality$\nOptional inputs: $Disease$, $OrganMask$" in text
    )
    assert "Performance: Score from 0.35 to 0.83, increases with optional inputs" in text
    assert "Performance: Score from 0.95 to 0.95\n" in text
    assert "Property: Universal Report Generator (text and mask)" in text
    assert P.render_tool_cards([]) == "(no tools are available)"


def test_render_memory_and_steps() -> None:
    assert (
        P.render_memory({"$Image$": "[img]", "$Anatomy$": "Chest"}) == "- $Image$: [img]\n- $Anatomy$: Chest"
    )
    ok = StepRecord(
        index=0,
        action="call",
        tool="TOOL1",
        category=C.ANATOMY_CLASSIFIER,
        ok=True,
        outputs={"$Anatomy$": "Chest"},
    )
    failed = StepRecord(
        index=1,
        action="call",
        tool="TOOL3",
        ok=False,
        error_kind="missing_input",
        error="TOOL3 needs $Modality$",
    )
    bad = StepRecord(index=2, action="malformed", error="the <Call> block has no <Tool>")
    assert (
        P.render_step_result(ok) == "Step 1: TOOL1 (Anatomy Classifier) ran. New results: $Anatomy$ = Chest."
    )
    assert "failed [missing_input]: TOOL3 needs $Modality$" in P.render_step_result(failed)
    assert "could not be read: the <Call> block has no <Tool>" in P.render_step_result(bad)


def test_prompt_versions_name_what_is_sent() -> None:
    single = P.prompt_versions("single", self_reflection=False, few_shot=False)
    assert set(single) == {"radbench.system", "radbench.turns", "radbench.tool_card"}
    multi = P.prompt_versions("multi", self_reflection=True, few_shot=True)
    assert {"radbench.planner", "radbench.executor", "radbench.concluder"} <= set(multi)
    assert {"radbench.self_reflection.act", "radbench.few_shot.act"} <= set(multi)
    assert all(v == P.PROMPTS[k.removeprefix("radbench.")].version for k, v in multi.items())


def test_optional_sections() -> None:
    plain = P.system_prompt()
    full = P.system_prompt(self_reflection=True, few_shot=True)
    assert (
        plain in full
        and "<Reflection>" in full
        and "<Ability>SpecificToolMissing</Ability>\n</NoCall>" in full
    )
    assert "Examples of steps" not in P.executor_system() and "Examples of steps" in P.executor_system(
        few_shot=True
    )
    assert "Check the plan" in P.planner_system(self_reflection=True)
    # the examples in the prompts parse as what they claim to be
    assert isinstance(parse_plan(P.FEW_SHOT_PLAN.text.split("```json")[1]), Plan)
    examples = (
        P.executor_system(self_reflection=True, few_shot=True).split("Examples of steps")[1].split("\n\n")
    )
    calls = [e for e in examples if "</Call>" in e or "</EndCall>" in e]
    no_calls = [e for e in examples if "</NoCall>" in e]
    assert (len(calls), len(no_calls)) == (2, 1)  # the prompt's three example steps
    assert all(isinstance(parse_action(e), Call) for e in calls)
    assert all(isinstance(parse_action(e), NoCall) for e in no_calls)


# =========================================================================== the core, over HTTP

QUESTION = "Which organ is outlined on this image?"
INFORMATION = "54-year-old male, 176 cm, 80 kg. History: smoker. Complaint: cough."
START = {"$Image$": "[Chest CT image]", "$Information$": INFORMATION}
ERROR_TEXT = "invalid optional input $Information$ for TOOL2"

PLAN_REPLY = f"```json\n{PLAN_JSON}\n```"
CALL1 = "<Call><Purpose>region</Purpose><Tool>TOOL1</Tool><Input>['$Image$']</Input></Call>"
CALL2 = (
    "<Call><Purpose>modality</Purpose><Tool>TOOL2</Tool><Input>['$Image$', '$Information$']</Input></Call>"
)
ENDCALL = "<EndCall><Purpose>organ</Purpose><Tool>TOOL3</Tool><Input>['$Image$']</Input></EndCall>"
ANSWER = "The outlined organ is the lung (TOOL3 on a chest CT)."


def _view(
    memory: dict[str, str],
    steps: list[StepRecord] | None = None,
    plan: Plan | None = None,
    tools: list[ToolCard] | None = None,
) -> EpisodeView:
    return EpisodeView(
        question=QUESTION,
        information=INFORMATION,
        tools=tools if tools is not None else _tools(),
        memory=dict(memory),
        plan=plan,
        steps=list(steps or []),
        step_limit=12,
    )


def _sequence(*replies: str) -> dict[str, Any]:
    """Answers in order, one per request."""
    return {"rules": [{"content": reply, "times": 1} for reply in replies]}


def _core(server: ScriptedServer, **settings: Any) -> LLMCore:
    endpoint = {"provider": "openai", "model": "core-model", "base_url": server.base_url, "max_attempts": 1}
    return LLMCore(LLMCoreConfig.model_validate({"endpoint": endpoint, **settings}))


async def _run_episode(core: LLMCore) -> tuple[Plan | Malformed, list[Call | NoCall | Malformed], str]:
    """Plan, then TOOL1 (ok), TOOL2 (fails), TOOL3 as the EndCall (ok), then the answer."""
    plan = await core.plan(_view(START))
    assert isinstance(plan, Plan)
    actions = [await core.act(_view(START, plan=plan))]
    s1 = StepRecord(
        index=0,
        action="call",
        tool="TOOL1",
        category=C.ANATOMY_CLASSIFIER,
        inputs=["$Image$"],
        ok=True,
        outputs={"$Anatomy$": "Chest"},
    )
    memory = {**START, "$Anatomy$": "Chest"}
    actions.append(await core.act(_view(memory, [s1], plan)))
    s2 = StepRecord(
        index=1,
        action="call",
        tool="TOOL2",
        category=C.MODALITY_CLASSIFIER,
        inputs=["$Image$", "$Information$"],
        ok=False,
        error_kind="invalid_input",
        error=ERROR_TEXT,
    )
    actions.append(await core.act(_view(memory, [s1, s2], plan)))
    s3 = StepRecord(
        index=2,
        action="endcall",
        tool="TOOL3",
        category=C.ORGAN_SEGMENTOR,
        inputs=["$Image$"],
        ok=True,
        outputs={"$OrganMask$": "[organ mask: Lung]", "$OrganObject$": "Lung"},
    )
    final = {**memory, "$OrganMask$": "[organ mask: Lung]", "$OrganObject$": "Lung"}
    answer = await core.conclude(_view(final, [s1, s2, s3], plan))
    return plan, actions, answer


def _messages(server: ScriptedServer) -> list[list[dict[str, str]]]:
    return [r["body"]["messages"] for r in server.requests()]


async def test_single_agent_episode(llm_server: ScriptedServer) -> None:
    llm_server.set_script(_sequence(PLAN_REPLY, CALL1, CALL2, ENDCALL, ANSWER))
    core = _core(llm_server, temperature=0.3, max_tokens=400)
    assert core.privileged is False
    plan, actions, answer = await _run_episode(core)

    assert plan.chain == [C.ANATOMY_CLASSIFIER, C.MODALITY_CLASSIFIER, C.ORGAN_SEGMENTOR]
    assert [a.tool for a in actions if isinstance(a, Call)] == ["TOOL1", "TOOL2", "TOOL3"]
    assert [a.final for a in actions if isinstance(a, Call)] == [False, False, True]
    assert actions[1].inputs == ["$Image$", "$Information$"]  # type: ignore[union-attr]
    assert answer == ANSWER

    requests = llm_server.requests()
    assert len(requests) == 5
    body = requests[0]["body"]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("core-model", 0.3, 400)
    assert "response_format" not in body
    conversations = _messages(llm_server)
    # one growing conversation: each request repeats the previous one plus the reply and a new message
    for before, after in itertools.pairwise(conversations):
        assert after[: len(before)] == before
        assert len(after) == len(before) + 2
    system, first = conversations[0][0], conversations[0][1]
    assert system["role"] == "system" and "three stages" in system["content"]
    assert QUESTION in first["content"] and INFORMATION in first["content"]
    assert "### TOOL3" in first["content"] and "Organ Segmentor only for Chest CT images" in first["content"]
    assert conversations[1][2] == {"role": "assistant", "content": PLAN_REPLY}
    step1 = conversations[1][-1]["content"]
    assert "Stage 2" in step1 and "## Memory bank\n- $Image$: [Chest CT image]" in step1
    step2 = conversations[2][-1]["content"]
    assert "TOOL1 (Anatomy Classifier) ran. New results: $Anatomy$ = Chest" in step2
    assert "- $Anatomy$: Chest" in step2 and "### TOOL" not in step2  # tools are not repeated
    step3 = conversations[3][-1]["content"]
    assert ERROR_TEXT in step3 and "failed [invalid_input]" in step3
    conclusion = conversations[4][-1]["content"]
    assert "Stage 3" in conclusion and "- $OrganObject$: Lung" in conclusion
    assert "TOOL3 (Organ Segmentor) ran" in conclusion

    assert core.usage.calls == 5 and core.usage.prompt_tokens > 0 and core.usage.completion_tokens > 0
    assert core.usage_by_role["agent"].calls == 5
    assert core.prompt_versions == P.prompt_versions("single", self_reflection=False, few_shot=False)
    assert len(core.transcripts["agent"]) == 11  # system + 5 x (request, reply)


async def test_multi_agent_episode(llm_server: ScriptedServer) -> None:
    llm_server.set_script(
        {
            "rules": [
                {"pattern": "You plan the work", "content": PLAN_REPLY},
                {"pattern": "You write the final answer", "content": ANSWER},
                *[
                    {"pattern": "You carry out the plan", "content": r, "times": 1}
                    for r in (CALL1, CALL2, ENDCALL)
                ],
            ]
        }
    )
    # max_revisions=0: the reflection prompts without the verifier (tests/radbench/test_strategies.py)
    core = _core(llm_server, mode="multi", self_reflection=True, few_shot=True, max_revisions=0)
    _plan, actions, answer = await _run_episode(core)
    assert [a.tool for a in actions if isinstance(a, Call)] == ["TOOL1", "TOOL2", "TOOL3"]
    assert answer == ANSWER

    planner, *executor, concluder = _messages(llm_server)
    assert len(executor) == 3
    assert "planner" in planner[0]["content"] and "Check the plan" in planner[0]["content"]
    assert QUESTION in planner[1]["content"] and "### TOOL" not in planner[1]["content"]
    assert len(planner) == 2
    # the executor: its own conversation, briefed with the plan and the tool cards
    assert "executor" in executor[0][0]["content"] and "<Reflection>" in executor[0][0]["content"]
    briefing = executor[0][1]["content"]
    assert "Tool chain: Anatomy Classifier -> Modality Classifier -> Organ Segmentor" in briefing
    assert "### TOOL4" in briefing and "## Memory bank" in briefing
    assert len(executor[2]) == len(executor[0]) + 4
    assert ERROR_TEXT in executor[2][-1]["content"]
    assert "- $Anatomy$: Chest" in executor[2][-1]["content"]
    assert all(PLAN_REPLY not in m["content"] for m in executor[2])
    # the concluder: a fresh conversation with the question, the plan, the steps and the bank
    assert len(concluder) == 2 and "answer writer" in concluder[0]["content"]
    text = concluder[1]["content"]
    assert (
        QUESTION in text and "Tool chain:" in text and ERROR_TEXT in text and "- $OrganObject$: Lung" in text
    )

    assert set(core.usage_by_role) == {"planner", "executor", "concluder"}
    assert core.usage_by_role["executor"].calls == 3
    assert "radbench.few_shot.act" in core.prompt_versions
    assert core.name == "llm:openai:core-model:multi+reflection+few-shot"


async def test_malformed_reply_then_nocall_and_a_built_tool(llm_server: ScriptedServer) -> None:
    nocall = _nocall("Anomaly Detector", "Chest", "CT", "SpecificToolMissing")
    after = "<Call><Tool>TOOL13</Tool><Input>['$Image$']</Input></Call>"
    llm_server.set_script(_sequence("not a plan at all", "<Call><Tool>TOOL1</Tool></Call>", nocall, after))
    core = _core(llm_server)
    plan = await core.plan(_view(START))
    assert isinstance(plan, Malformed) and "no plan found" in plan.reason

    bad = await core.act(_view(START))
    assert isinstance(bad, Malformed) and "has no <Input>" in bad.reason
    s1 = StepRecord(index=0, action="malformed", error=bad.reason, reply=bad.reply)
    declined = await core.act(_view(START, [s1]))
    assert isinstance(declined, NoCall)
    assert (declined.category, declined.anatomy, declined.modality, declined.ability) == (
        C.ANOMALY_DETECTOR,
        "Chest",
        "CT",
        "SpecificToolMissing",
    )
    built = ToolCard(
        name="TOOL13",
        category=C.ANOMALY_DETECTOR,
        anatomy="Chest",
        modality="CT",
        compulsory=["$Image$"],
        outputs=["$AnomalyMask$", "$AnomalyObject$"],
        lower=0.8,
        upper=0.8,
    )
    s2 = StepRecord(index=1, action="nocall", nocall=declined, built_tool="TOOL13")
    resumed = await core.act(_view(START, [s1, s2], tools=[*_tools(), built]))
    assert isinstance(resumed, Call) and resumed.tool == "TOOL13"

    conversations = _messages(llm_server)
    assert "Your plan could not be read (no plan found" in conversations[1][-1]["content"]
    assert "your reply could not be read: the <Call> block has no <Input>" in conversations[2][-1]["content"]
    last = conversations[3][-1]["content"]
    assert "A new tool has been built for the missing step: TOOL13 (Anomaly Detector)" in last
    assert "### TOOL13" in last and "### TOOL1\n" not in last


async def test_transport_errors_raise(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"status": 500, "error_message": "boom"}})
    core = _core(llm_server)
    with pytest.raises(LLMCoreError, match=r"the agent request failed: .*boom"):
        await core.plan(_view(START))
    llm_server.set_script({"default": {"status": 401, "error_message": "bad key"}})
    with pytest.raises(JudgeConfigurationError):
        await _core(llm_server, mode="multi").plan(_view(START))


async def test_act_and_conclude_without_a_plan_stage(llm_server: ScriptedServer) -> None:
    llm_server.set_script(_sequence(CALL1, ANSWER))
    core = _core(llm_server)
    assert isinstance(await core.act(_view(START)), Call)
    assert await core.conclude(_view(START)) == ANSWER
    first = _messages(llm_server)[0][1]["content"]
    assert QUESTION in first and "### TOOL1" in first and "Stage 2" in first


def test_config() -> None:
    config = LLMCoreConfig.model_validate(
        {"judge": "openai:gpt-4o-mini@http://127.0.0.1:9/v1", "mode": "multi"}
    )
    assert config.endpoint.model == "gpt-4o-mini" and config.endpoint.base_url == "http://127.0.0.1:9/v1"
    assert config.label == "llm:openai:gpt-4o-mini:multi"
    assert LLMCoreConfig.model_validate({"endpoint": "azure:dep"}).endpoint.provider == "azure"
    for bad in ({"endpoint": "offline"}, {"endpoint": "none"}, {}, {"endpoint": "openai:m", "mode": "swarm"}):
        with pytest.raises(ValidationError):
            LLMCoreConfig.model_validate(bad)
    dumped = config.model_dump(mode="json")
    assert LLMCoreConfig.model_validate(dumped) == config
