"""The LLM core's strategies (self-reflection with its verifier, prompt back-propagation) and
automated tool building from a natural-language request; the LLM parts run against the
local scripted OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clineval.environments.radbench import prompts as P
from clineval.environments.radbench.build_request import parse_build_request, request_problem
from clineval.environments.radbench.conditions import build_tool_set
from clineval.environments.radbench.cores.backprop import (
    Guidance,
    backpropagate,
    failure_reasons,
    load_guidance,
    render_failure,
    save_guidance,
)
from clineval.environments.radbench.cores.llm import LLMCore, LLMCoreConfig
from clineval.environments.radbench.cores.reference import OracleCore
from clineval.environments.radbench.cores.verifier import verify_action, verify_plan
from clineval.environments.radbench.episode import run_episode
from clineval.environments.radbench.metrics import episode_metrics
from clineval.environments.radbench.model import (
    Call,
    Episode,
    EpisodeView,
    Gap,
    Malformed,
    NoCall,
    Plan,
    QAPair,
    StepRecord,
    ToolCard,
)
from clineval.environments.radbench.parsing import parse_action, parse_plan
from clineval.environments.radbench.records import generate_records
from clineval.environments.radbench.runner import BenchSettings, llm_config, optimise, with_prompt_versions
from clineval.environments.radbench.simulator import ToolEnvironment
from clineval.environments.radbench.vocab import Category
from clineval.errors import ConfigError
from clineval.judges.config import build_judge
from clineval.judges.structured import StructuredJudge
from clineval.testing import ScriptedServer

C = Category
INFORMATION = "54-year-old male, 176 cm, 80 kg. History: smoker. Complaint: cough."
START = {"$Image$": "[Chest CT image]", "$Information$": INFORMATION}


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
            compulsory=["$Image$"],
            outputs=["$OrganMask$", "$OrganObject$"],
            lower=0.9,
            upper=0.9,
        ),
    ]


def _view(memory: dict[str, str], steps: list[StepRecord] | None = None) -> EpisodeView:
    return EpisodeView(
        question="Which organ is outlined?",
        information=INFORMATION,
        tools=_tools(),
        memory=dict(memory),
        steps=list(steps or []),
        step_limit=12,
    )


def _reflected(tool: str, inputs: str, kind: str = "Call", reflection: str | None = None) -> str:
    text = reflection if reflection is not None else f"Candidates: {tool}. Inputs are in the memory bank."
    return (
        f"<Reflection>{text}</Reflection>\n<{kind}><Purpose>step</Purpose><Tool>{tool}</Tool>"
        f"<Input>{inputs}</Input></{kind}>"
    )


# =========================================================================== the verifier


def test_verifier_accepts_a_correct_reflected_call() -> None:
    reply = _reflected("TOOL1", "['$Image$']")
    assert verify_action(reply, parse_action(reply), _view(START)) == []
    # a scoped tool on its own region and modality, with the memory bank knowing both
    memory = {**START, "$Anatomy$": "Chest", "$Modality$": "CT"}
    reply = _reflected("TOOL3", "['$Image$']", kind="EndCall")
    assert verify_action(reply, parse_action(reply), _view(memory)) == []


@pytest.mark.parametrize(
    ("reply", "memory", "problem"),
    [
        # the sanity check: no reflection
        ("<Call><Tool>TOOL1</Tool><Input>['$Image$']</Input></Call>", START, "no <Reflection> block"),
        (_reflected("TOOL1", "['$Image$']", reflection="  "), START, "no <Reflection> block"),
        # the reflection does not consider the tool it calls
        (
            _reflected("TOOL1", "['$Image$']", reflection="Candidates: TOOL2."),
            START,
            "does not consider TOOL1",
        ),
        # input correctness, by the simulator's rules
        (_reflected("TOOL9", "['$Image$']"), START, "there is no tool 'TOOL9'"),
        (_reflected("TOOL2", "['$Image$', '$Information$']"), START, "TOOL2 does not take $Information$"),
        (_reflected("TOOL1", "[]"), START, "TOOL1 needs $Image$ as input"),
        (_reflected("TOOL3", "['$Image$']"), START, "TOOL3 only works on Chest; $Anatomy$ is not known yet"),
        (
            _reflected("TOOL3", "['$Image$']"),
            {**START, "$Anatomy$": "Spine", "$Modality$": "CT"},
            "TOOL3 only works on Chest, not Spine",
        ),
        # unreadable
        (
            "<Reflection>TOOL1</Reflection> <Call><Tool>TOOL1</Tool></Call>",
            START,
            "cannot be read: the <Call>",
        ),
        (
            "<Reflection>none fits</Reflection><NoCall><Category>Magic Wand</Category>"
            "<Ability>?</Ability></NoCall>",
            START,
            "'Magic Wand' is not one of the ten categories",
        ),
    ],
)
def test_verifier_finds_the_problem(reply: str, memory: dict[str, str], problem: str) -> None:
    problems = verify_action(reply, parse_action(reply), _view(memory))
    assert any(problem in p for p in problems), problems


def test_verifier_leaves_the_decision_to_decline_to_the_core() -> None:
    reply = (
        "<Reflection>No detector covers chest CT.</Reflection><NoCall><Category>Anomaly Detector</Category>"
        "<Anatomy>Chest</Anatomy><Modality>CT</Modality><Ability>SpecificToolMissing</Ability></NoCall>"
    )
    assert verify_action(reply, parse_action(reply), _view(START)) == []


def test_verify_plan() -> None:
    good = '{"known": [], "reflection": "AC and MC first, then OS.", "chain": ["Anatomy Classifier"]}'
    assert verify_plan(good, parse_plan(good)) == []
    bare = '{"known": [], "chain": ["Anatomy Classifier"]}'
    assert verify_plan(bare, parse_plan(bare)) == [
        'the plan has no "reflection" entry: check the chain before you give it'
    ]
    problems = verify_plan("no plan", parse_plan("no plan"))
    assert problems[0].startswith("the plan cannot be read: no plan found")


# =========================================================================== the LLM core, over HTTP


def _sequence(*replies: str) -> dict[str, Any]:
    return {"rules": [{"content": reply, "times": 1} for reply in replies]}


def _endpoint(server: ScriptedServer) -> dict[str, Any]:
    return {"provider": "openai", "model": "core-model", "base_url": server.base_url, "max_attempts": 1}


def _core(server: ScriptedServer, **settings: Any) -> LLMCore:
    return LLMCore(LLMCoreConfig.model_validate({"endpoint": _endpoint(server), **settings}))


def _messages(server: ScriptedServer) -> list[list[dict[str, str]]]:
    return [r["body"]["messages"] for r in server.requests()]


async def test_a_failing_draft_is_revised_before_it_is_accepted(llm_server: ScriptedServer) -> None:
    bare_plan = '{"known": [], "chain": ["Anatomy Classifier", "Modality Classifier", "Organ Segmentor"]}'
    plan = '{"known": [], "reflection": "Region and modality first.", "chain": ["AC", "MC", "OS"]}'
    wrong = _reflected("TOOL2", "['$Image$', '$Information$']")
    right = _reflected("TOOL2", "['$Image$']")
    llm_server.set_script(_sequence(bare_plan, plan, wrong, right))
    core = _core(llm_server, self_reflection=True)

    planned = await core.plan(_view(START))
    assert isinstance(planned, Plan) and planned.chain == [
        C.ANATOMY_CLASSIFIER,
        C.MODALITY_CLASSIFIER,
        C.ORGAN_SEGMENTOR,
    ]
    memory = {**START, "$Anatomy$": "Chest"}
    step = StepRecord(index=0, action="call", tool="TOOL1", ok=True, outputs={"$Anatomy$": "Chest"})
    action = await core.act(_view(memory, [step]))
    assert isinstance(action, Call) and action.inputs == ["$Image$"]  # the revised call, not the draft

    assert [(r.stage, r.step, r.revised) for r in core.revisions] == [("plan", None, True), ("step", 1, True)]
    assert core.revisions[1].problems == ["TOOL2 does not take $Information$ as input"]
    assert core.revisions[1].reply == wrong
    conversation = _messages(llm_server)[-1]
    # the draft stays in the conversation, followed by the verifier's message (then the revision)
    assert conversation[-2] == {"role": "assistant", "content": wrong}
    assert conversation[-1]["content"] == P.revision_request(["TOOL2 does not take $Information$ as input"])
    assert "was not carried out" in conversation[-1]["content"]
    assert core.transcripts["agent"][-1] == {"role": "assistant", "content": right}
    assert "radbench.self_reflection.verifier" in core.prompt_versions
    assert len(llm_server.requests()) == 4


async def test_a_correct_draft_is_accepted_at_once(llm_server: ScriptedServer) -> None:
    plan = '{"known": [], "reflection": "ok", "chain": ["Anatomy Classifier"]}'
    llm_server.set_script(_sequence(plan, _reflected("TOOL1", "['$Image$']")))
    core = _core(llm_server, self_reflection=True)
    assert isinstance(await core.plan(_view(START)), Plan)
    assert isinstance(await core.act(_view(START)), Call)
    assert core.revisions == [] and len(llm_server.requests()) == 2


async def test_revisions_run_out_and_the_last_draft_goes_on(llm_server: ScriptedServer) -> None:
    wrong = _reflected("TOOL2", "['$Image$', '$Information$']")
    llm_server.set_script(_sequence(wrong, wrong))
    core = _core(llm_server, self_reflection=True, max_revisions=1)
    action = await core.act(_view(START))
    assert isinstance(action, Call) and action.inputs == ["$Image$", "$Information$"]
    assert [r.revised for r in core.revisions] == [True, False]
    assert len(llm_server.requests()) == 2


async def test_no_verifier_without_self_reflection_or_with_zero_revisions(llm_server: ScriptedServer) -> None:
    wrong = _reflected("TOOL2", "['$Image$', '$Information$']")
    for settings in ({}, {"self_reflection": True, "max_revisions": 0}):
        llm_server.set_script(_sequence(wrong))
        core = _core(llm_server, **settings)
        assert isinstance(await core.act(_view(START)), Call) and core.revisions == []
        assert "radbench.self_reflection.verifier" not in core.prompt_versions


async def test_revisions_are_kept_in_the_episode(llm_server: ScriptedServer) -> None:
    """A whole episode: the verifier's rejected draft is in the trace; the environment never ran it."""
    record = generate_records(1, seed=0)[0]  # a Head and Neck X-ray
    tool_set = build_tool_set("baseline", record, "012", seed=0)
    ac = next(t.name for t in tool_set.tools if t.category == C.ANATOMY_CLASSIFIER)
    mc = next(t.name for t in tool_set.tools if t.category == C.MODALITY_CLASSIFIER)
    os_ = next(t for t in tool_set.tools if t.category == C.ORGAN_SEGMENTOR)
    plan = '{"known": [], "reflection": "ok", "chain": ["AC", "MC", "OS"]}'
    inputs = "[" + ", ".join(f"'{v}'" for v in os_.compulsory) + "]"
    llm_server.set_script(
        _sequence(
            plan,
            _reflected(ac, "['$Image$', '$Information$']"),  # AC takes only the image: rejected
            _reflected(ac, "['$Image$']"),
            _reflected(mc, "['$Image$']"),
            _reflected(os_.name, inputs, kind="EndCall"),
            "The organ is outlined.",
        )
    )
    qa = QAPair(record_id=record.id, task="012", question="Outline the organ.", answer="[Organ Mask]")
    episode = await run_episode(_core(llm_server, self_reflection=True), record, qa, tool_set)
    assert episode.finished == "endcall" and all(s.ok for s in episode.steps)
    assert len(episode.steps) == 3
    assert [(r.stage, r.step) for r in episode.revisions] == [("step", 0)]
    assert f"{ac} does not take $Information$ as input" in episode.revisions[0].problems
    assert episode_metrics(episode)["completion"] == 1.0
    again = Episode.model_validate(episode.model_dump(mode="json"))
    assert again.revisions == episode.revisions


# =========================================================================== build requests


def test_parse_the_papers_build_requests() -> None:
    first = parse_build_request("I need a model to calculate the biomarker size in Chest X-ray")
    assert (first.category, first.anatomy, first.modality, first.problem) == (
        C.BIOMARKER_QUANTIFIER,
        "Chest",
        "X-ray",
        None,
    )
    second = parse_build_request(
        "Head and Neck X-ray Organ Segmentation Tool needed to identify and outline organs and structures "
        "in head/neck X-ray images. Must work specifically with X-ray modality for head and neck region."
    )
    assert (second.category, second.anatomy, second.modality) == (C.ORGAN_SEGMENTOR, "Head and Neck", "X-ray")
    universal = parse_build_request("A Report Generator that works on any region and any modality, please.")
    assert (universal.category, universal.anatomy, universal.modality) == (
        C.REPORT_GENERATOR,
        "Universal",
        "Universal",
    )
    organ = parse_build_request("an organ biomarker quantifier for the liver on CT")
    assert (organ.biomarker_kind, organ.modality) == ("organ", "CT")
    lesion = parse_build_request("a tool to measure the size of the lesion")
    assert (lesion.category, lesion.biomarker_kind) == (C.BIOMARKER_QUANTIFIER, "anomaly")
    assert parse_build_request("a detector for chest or spine CT").problem == (
        "the request names several regions (Chest, Spine)"
    )
    assert parse_build_request("please help us").category is None


def _record_and_gaps() -> tuple[Any, dict[str, Gap]]:
    record = generate_records(1, seed=0)[0]  # Head and Neck X-ray
    gaps = {}
    for condition in ("insufficient_1", "insufficient_2", "insufficient_3"):
        gap = build_tool_set(condition, record, "0123", seed=0).gap  # type: ignore[arg-type]
        assert gap is not None and gap.category == C.ORGAN_SEGMENTOR
        gaps[condition] = gap
    organ_quantifier = build_tool_set("insufficient_1", record, "0126", seed=0).gap
    assert organ_quantifier is not None and organ_quantifier.biomarker_kind == "organ"
    gaps["insufficient_1 (organ quantifier)"] = organ_quantifier
    return record, gaps


@pytest.mark.parametrize(
    ("condition", "request_text", "problem"),
    [
        ("insufficient_1", "I need an Organ Segmentor.", None),
        ("insufficient_1", "I need an organ segmentation tool for Head and Neck X-ray images.", None),
        ("insufficient_1", "I need a tool to segment the organs on chest X-rays.", "the region Chest, not"),
        (
            "insufficient_1",
            "I need an anomaly detector for head and neck X-rays.",
            "asks for an Anomaly Detector",
        ),
        ("insufficient_1 (organ quantifier)", "A tool to measure the organ on X-ray.", None),
        ("insufficient_1 (organ quantifier)", "A biomarker quantifier.", None),
        ("insufficient_1 (organ quantifier)", "A tool to measure the lesion.", "asks for the anomaly one"),
        ("insufficient_1", "Something to help with this case.", "names no tool category"),
        ("insufficient_1", "   ", "the request is empty"),
        ("insufficient_2", "An Organ Segmentor that works on Head and Neck X-ray images.", None),
        ("insufficient_2", "An Organ Segmentor for head/neck radiographs.", None),
        ("insufficient_2", "An Organ Segmentor for Head and Neck images.", "does not name both the region"),
        ("insufficient_2", "A universal Organ Segmentor.", "does not name both the region and the modality"),
        ("insufficient_2", "An Organ Segmentor for Head and Neck CT.", "the modality CT, not this image's"),
        ("insufficient_3", "An Organ Segmentor for head and neck X-ray that can segment any organ.", None),
        ("insufficient_3", "An Organ Segmentor for Head and Neck X-ray.", "does not say what the tool must"),
        ("insufficient_3", "An Organ Segmentor for any region.", "does not say what the tool must"),
    ],
)
def test_a_request_is_checked_against_the_gap(condition: str, request_text: str, problem: str | None) -> None:
    record, gaps = _record_and_gaps()
    found = request_problem(parse_build_request(request_text), gaps[condition], record)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_a_capability_request_naming_the_label_is_enough() -> None:
    record, gaps = _record_and_gaps()
    organ = record.organ_biomarker.organ_object
    text = f"An Organ Segmentor for Head and Neck X-ray that can segment the {organ}."
    assert request_problem(parse_build_request(text), gaps["insufficient_3"], record) is None


def _nocall(request: str = "", **fields: Any) -> NoCall:
    return NoCall(category=C.ORGAN_SEGMENTOR, ability="CategoryMissing", request=request, **fields)


def test_the_simulator_builds_from_a_request_or_says_why_not() -> None:
    record, _ = _record_and_gaps()
    tool_set = build_tool_set("insufficient_1", record, "0123", seed=0)
    env = ToolEnvironment(record, tool_set, auto_build=True, build_from="request")
    step = env.decline(_nocall())  # structured fields that state the gap, but no request
    assert (
        step.built_tool is None and step.build_problem == "the <NoCall> has no <Request> to build a tool from"
    )
    env = ToolEnvironment(record, tool_set, auto_build=True, build_from="request")
    step = env.decline(_nocall("I need a model to detect the lesions"))
    assert step.built_tool is None and "asks for an Anomaly Detector" in (step.build_problem or "")
    env = ToolEnvironment(record, tool_set, auto_build=True, build_from="request")
    step = env.decline(NoCall(request="An organ segmentation tool, please."))  # no fields at all
    assert step.built_tool is not None and step.build_problem is None
    assert env.tool_set.by_name(step.built_tool).category == C.ORGAN_SEGMENTOR  # type: ignore[union-attr]
    # the structured form is kept, and says why a NoCall built nothing
    env = ToolEnvironment(record, tool_set, auto_build=True)
    assert env.decline(_nocall()).built_tool is not None
    env = ToolEnvironment(record, tool_set, auto_build=True)
    wrong = env.decline(NoCall(category=C.REPORT_GENERATOR, ability="CategoryMissing"))
    assert wrong.built_tool is None and "do not state the gap" in (wrong.build_problem or "")


@pytest.mark.parametrize("condition", ["insufficient_1", "insufficient_2", "insufficient_3"])
async def test_the_oracle_completes_unsolvable_sets_from_its_requests(condition: str) -> None:
    records = generate_records(22, seed=0)
    tasks = (
        "012",
        "013",
        "014",
        "0123",
        "01235",
        "0126",
        "0136",
        "01348",
        "0123568",
        "01235678",
        "012356789",
    )
    for record in records[::5]:
        for key in tasks:
            tool_set = build_tool_set(condition, record, key, seed=0)  # type: ignore[arg-type]
            qa = QAPair(record_id=record.id, task=key, question="q", answer="a")
            episode = await run_episode(
                OracleCore(), record, qa, tool_set, auto_build=True, build_from="request"
            )
            nocall = next(s for s in episode.steps if s.action == "nocall")
            assert nocall.built_tool is not None, (record.id, key, nocall.build_problem, nocall.nocall)
            assert episode_metrics(episode)["completion"] == 1.0, (record.id, key)


def test_the_llm_core_is_asked_for_requests_when_tools_are_built_from_them() -> None:
    settings = BenchSettings(
        core="llm", llm={"judge": "openai:m@http://127.0.0.1:9/v1"}, auto_build=True, build_from="request"
    )
    config = llm_config(settings)
    assert config.build_request is True
    assert with_prompt_versions(settings).prompt_versions["radbench.build_request"] == P.BUILD_REQUEST.version
    assert P.BUILD_REQUEST.text in P.system_prompt(build_request=True)
    assert P.BUILD_REQUEST.text in P.executor_system(build_request=True)
    assert P.BUILD_REQUEST.text not in P.system_prompt()
    assert llm_config(settings.model_copy(update={"build_from": "fields"})).build_request is False
    reply = (
        "<NoCall><Category>Organ Segmentor</Category><Ability>CategoryMissing</Ability>"
        "<Request>I need an Organ Segmentor for Chest CT.</Request></NoCall>"
    )
    nocall = parse_action(reply)
    assert isinstance(nocall, NoCall) and nocall.request == "I need an Organ Segmentor for Chest CT."


# =========================================================================== prompt back-propagation


def _failed_episode() -> Episode:
    return Episode(
        record_id="rb-0001",
        task="012",
        condition="baseline",
        seed=0,
        core="llm",
        question="Outline the organ.",
        reference_answer="[Organ Mask]",
        gt_chain=[C.ANATOMY_CLASSIFIER, C.MODALITY_CLASSIFIER, C.ORGAN_SEGMENTOR],
        solvable=True,
        plan=Plan(chain=[C.ANATOMY_CLASSIFIER, C.ORGAN_SEGMENTOR]),
        steps=[
            StepRecord(
                index=0,
                action="call",
                tool="TOOL4",
                category=C.ANATOMY_CLASSIFIER,
                inputs=["$Image$"],
                ok=True,
            ),
            StepRecord(
                index=1,
                action="call",
                tool="TOOL7",
                category=C.ORGAN_SEGMENTOR,
                inputs=["$Image$"],
                ok=False,
                error_kind="modality_mismatch",
                error="TOOL7 only works on CT; $Modality$ is not known yet",
            ),
        ],
        finished="io_error",
    )


def test_failure_reasons_and_rendering() -> None:
    episode = _failed_episode()
    assert failure_reasons(episode) == [
        "step 2 failed [modality_mismatch]: TOOL7 only works on CT; $Modality$ is not known yet"
    ]
    text = render_failure(episode)
    assert "Correct chain: Anatomy Classifier -> Modality Classifier -> Organ Segmentor" in text
    assert "Plan: Tool chain: Anatomy Classifier -> Organ Segmentor" in text
    assert "<Call> TOOL7 (Organ Segmentor) inputs $Image$: failed [modality_mismatch]" in text
    declined = episode.model_copy(update={"steps": [], "finished": "nocall"})
    assert failure_reasons(declined)[0] == "declined although the tools could solve the task"
    gap = Gap(kind="CategoryMissing", category=C.ORGAN_SEGMENTOR)
    unsolvable = episode.model_copy(update={"solvable": False, "gap": gap, "condition": "insufficient_1"})
    assert failure_reasons(unsolvable) == [
        "tried to solve an unsolvable task instead of declining "
        "(the gap: CategoryMissing of the Organ Segmentor)"
    ]
    assert "Correct behaviour: decline" in render_failure(unsolvable)


def test_guidance_versions_and_files(tmp_path: Path) -> None:
    guidance = Guidance(text="1. Classify the modality before any scoped tool.")
    assert guidance.version.startswith("bp-") and len(guidance.version) == 15
    assert Guidance(text="1. Classify the modality before any scoped tool.", version="x").version == (
        guidance.version
    )
    path = tmp_path / "guidance.yaml"
    save_guidance(path, guidance)
    assert load_guidance(path) == guidance
    edited = path.read_text("utf-8").replace("any scoped tool", "a tool for one modality")
    path.write_text(edited, "utf-8")
    changed = load_guidance(path)
    assert changed.text == "1. Classify the modality before a tool for one modality."
    assert changed.version != guidance.version  # a person's edit is a new version
    path.write_text("text: ''\n", "utf-8")
    with pytest.raises(ConfigError, match=r"guidance\.yaml: field 'text'"):
        load_guidance(path)
    with pytest.raises(ConfigError, match="guidance file not found"):
        load_guidance(tmp_path / "missing.yaml")


def test_the_core_uses_guidance_with_its_version() -> None:
    guidance = Guidance(text="1. Classify the modality first.")
    config = LLMCoreConfig.model_validate({"judge": "openai:m@http://127.0.0.1:9/v1", "guidance": guidance})
    versions = config.prompt_versions()
    assert versions["radbench.backprop.guidance"] == guidance.version
    assert versions["radbench.backprop"] == P.BACKPROP.version
    assert config.label == "llm:openai:m:single+backprop"
    system = P.system_prompt(guidance=guidance.text)
    assert system.endswith(P.GUIDANCE_HEADER + "1. Classify the modality first.")
    assert P.GUIDANCE_HEADER in P.planner_system(guidance="x") and P.GUIDANCE_HEADER in P.executor_system(
        guidance="x"
    )
    assert (
        "radbench.backprop.guidance"
        not in LLMCoreConfig.model_validate({"judge": "openai:m@http://127.0.0.1:9/v1"}).prompt_versions()
    )


async def test_one_round_of_backpropagation(llm_server: ScriptedServer) -> None:
    llm_server.set_script(
        {
            "default": {
                "content": "Thinking...\n<Guidance>\n1. Run the Modality Classifier first.\n</Guidance>"
            }
        }
    )
    judge = build_judge(LLMCoreConfig.model_validate({"endpoint": _endpoint(llm_server)}).endpoint)
    assert isinstance(judge, StructuredJudge)
    current = Guidance(text="1. Read each card.")
    new = await backpropagate(judge.backend, [_failed_episode()], current)
    await judge.backend.aclose()
    assert new is not None and new.text == "1. Run the Modality Classifier first."
    (messages,) = _messages(llm_server)
    assert messages[0]["content"] == P.BACKPROP.text
    assert "## Current guidance\n1. Read each card." in messages[1]["content"]
    assert "failed [modality_mismatch]" in messages[1]["content"]
    # nothing failed: nothing to learn, the current guidance stays
    ok = _failed_episode().model_copy(
        update={
            "steps": [],
            "finished": "endcall",
            "solvable": False,
            "gap": Gap(kind="CategoryMissing", category=C.ORGAN_SEGMENTOR),
        }
    )
    assert failure_reasons(ok) != []  # an unsolvable task not declined is a failure
    assert await backpropagate(judge.backend, [], current) == current


async def test_optimise_runs_rounds_and_feeds_the_guidance_back(llm_server: ScriptedServer) -> None:
    nocall = (
        "<NoCall><Category>Organ Segmentor</Category><Anatomy>Universal</Anatomy>"
        "<Modality>Universal</Modality><Ability>CategoryMissing</Ability></NoCall>"
    )
    llm_server.set_script(
        {
            "rules": [
                {
                    "pattern": "You improve the instructions",
                    "content": "<Guidance>1. Do not decline early.</Guidance>",
                },
                {"pattern": "the tool steps are over", "content": "Declined."},
                {"pattern": "Give the next step", "content": nocall},
                {
                    "pattern": "reply with the plan only",
                    "content": '{"known": [], "chain": ["AC", "MC", "OS"]}',
                },
            ]
        }
    )
    settings = BenchSettings(
        core="llm",
        llm={"endpoint": _endpoint(llm_server)},
        conditions=["baseline"],
        tasks=["012"],
        n_records=1,
        seed=1,
    )
    seen: list[tuple[int, int, str | None]] = []
    guidance = await optimise(
        settings, rounds=2, on_round=lambda r, g: seen.append((r.round, r.failures, g.version if g else None))
    )
    assert guidance is not None and guidance.text == "1. Do not decline early."
    assert [(n, f) for n, f, _ in seen] == [(1, 1), (2, 1)]
    assert [r.completion for r in guidance.rounds] == [0.0, 0.0]
    systems = [m[0]["content"] for m in _messages(llm_server) if "three stages" in m[0]["content"]]
    assert len(systems) == 6  # 2 rounds x (plan, step, conclusion)
    assert all(P.GUIDANCE_HEADER not in s for s in systems[:3])
    assert all(s.endswith(P.GUIDANCE_HEADER + "1. Do not decline early.") for s in systems[3:])
    with pytest.raises(ConfigError, match="needs the LLM core"):
        await optimise(BenchSettings(core="oracle"))


def test_malformed_is_not_a_plan() -> None:  # the verifier's read of an unreadable plan
    assert isinstance(parse_plan("nothing"), Malformed)


# =========================================================================== the command line


def test_cli_records_per_pair_and_build_from_request(tmp_path: Path) -> None:
    from tests.clirun import clineval

    out = tmp_path / "records.jsonl"
    made = clineval("radbench", "generate", "--records-per-pair", "2", "-o", str(out), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "44 records over 22 anatomy-modality pairs" in made.stderr
    both = clineval(
        "radbench", "generate", "--records-per-pair", "2", "-n", "5", "-o", str(out), cwd=tmp_path
    )
    assert both.returncode != 0 and "give one of them" in both.stderr and "Traceback" not in both.stderr

    store = str(tmp_path / "runs.db")
    run = clineval(
        "radbench", "run", "--records-per-pair", "1", "--condition", "insufficient_2", "--task", "0126",
        "--auto-build", "--build-from", "request", "--store", store, "-q", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    from clineval.store.sqlite import RunStore

    with RunStore(store) as runs:
        stored = runs.get_run("latest")
        environment = stored.config["environment"]
        assert (environment["records_per_pair"], environment["build_from"]) == (1, "request")
        scores = [r for r in runs.load_results(stored.id) if r.metric == "radbench"]
    # every missing tool built from the oracle's request: all 22 episodes completed
    assert len(scores) == 22 and all(r.score.value == 1.0 for r in scores)
    oracle_only = clineval("radbench", "run", "--backprop", str(out), "--store", store, cwd=tmp_path)
    assert oracle_only.returncode != 0 and "apply to --core llm only" in oracle_only.stderr


async def test_cli_backprop_writes_guidance(tmp_path: Path, llm_server: ScriptedServer) -> None:
    from tests.clirun import clineval

    nocall = (
        "<NoCall><Category>Organ Segmentor</Category><Anatomy>Universal</Anatomy>"
        "<Modality>Universal</Modality><Ability>CategoryMissing</Ability></NoCall>"
    )
    llm_server.set_script(
        {
            "rules": [
                {
                    "pattern": "You improve the instructions",
                    "content": "<Guidance>1. Decline late.</Guidance>",
                },
                {"pattern": "the tool steps are over", "content": "Declined."},
                {"pattern": "Give the next step", "content": nocall},
                {"pattern": "reply with the plan only", "content": '{"known": [], "chain": ["AC"]}'},
            ]
        }
    )
    out = tmp_path / "guidance.yaml"
    done = clineval(
        "radbench", "backprop", "--judge", f"openai:core-model@{llm_server.base_url}", "--rounds", "1",
        "--condition", "baseline", "--task", "012", "-n", "1", "-o", str(out), cwd=tmp_path,
        env={"OPENAI_API_KEY": "test"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "round 1: 1 episodes, 1 failed" in done.stderr
    guidance = load_guidance(out)
    assert guidance.text == "1. Decline late." and guidance.rounds[0].failures == 1
    assert f"--backprop {out}" in " ".join(done.stdout.split())
