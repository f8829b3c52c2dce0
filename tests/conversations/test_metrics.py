"""The conversation metrics of the Healthcare Agent Orchestrator's evaluation: orchestrator
ratings through the local OpenAI-compatible server, agent selection accuracy by hand, and
the per-agent metrics (context relevancy, TBFact, source support) with the offline judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clineval import evaluate
from clineval.conversations import Conversation, Message, ToolCallRecord, conversation_to_case
from clineval.errors import ConfigError
from clineval.judges import JudgeConfig, build_judge
from clineval.judges.base import Judge
from clineval.judges.offline import OfflineJudge
from clineval.metrics import build_metric
from clineval.metrics.base import ScoreContext, score_case
from clineval.metrics.registry import catalogue
from clineval.model import Case, Score
from clineval.testing import ScriptedServer

HISTORY = (
    "Patient 4 is a 62-year-old woman with stage IV lung adenocarcinoma. "
    "The tumor carries a KRAS G12C mutation. "
    "She received carboplatin, paclitaxel and pembrolizumab from March 2023."
)
REFERENCE = (
    "62-year-old woman. Stage IV lung adenocarcinoma with a KRAS G12C mutation. "
    "Carboplatin, paclitaxel and pembrolizumab since March 2023. Brain MRI without metastases."
)
SOURCES = {
    "pathology.txt": (
        "Pathology report: lung adenocarcinoma. Molecular testing shows that the tumor carries a "
        "KRAS G12C mutation."
    ),
    "oncology.md": (
        "Oncology note: Patient 4 is a 62-year-old woman with stage IV lung adenocarcinoma. "
        "She received carboplatin, paclitaxel and pembrolizumab from March 2023."
    ),
}
UNSUPPORTED = "She had a right hip replacement in 2010."

RATING_METRICS = ("agent_selection", "intent_resolution", "information_aggregation")
AGENT_METRICS = ("agent_context_relevancy", "agent_tbfact", "agent_source_support")


def user(text: str, gold: str | None = None) -> Message:
    return Message(role="user", speaker="user", text=text, gold_agent=gold)


def said(speaker: str, text: str = "", **extra: Any) -> Message:
    return Message(role="assistant", speaker=speaker, text=text, **extra)


def tumor_board(*, patient: str | None = "patient_4", history: str = HISTORY) -> Conversation:
    """Three labelled user turns: two routed to the gold agent, the last one answered by the
    orchestrator alone although ClinicalTrials was the gold agent."""
    return Conversation(
        id="tb-1",
        patient_id=patient,
        messages=[
            user("Orchestrator: summarise the history of patient_4.", gold="PatientHistory"),
            said("Orchestrator", "PatientHistory, please build the timeline for patient_4."),
            said(
                "PatientHistory",
                tool_calls=[
                    ToolCallRecord(
                        id="c1",
                        name="load_patient_data",
                        arguments={"patient_id": "patient_4"},
                        result="2 clinical notes loaded",
                    )
                ],
            ),
            Message(role="tool", speaker="tool", text="2 clinical notes loaded", tool_call_id="c1"),
            said("PatientHistory", history),
            user("What does the latest chest CT show?", gold="Radiology"),
            said("Orchestrator", "Radiology, please review the latest chest CT."),
            said(
                "Radiology",
                "The chest CT of 2024-02-01 shows a 1.8 cm right upper lobe mass, down from 2.6 cm.",
            ),
            user("Is she eligible for a clinical trial?", gold="ClinicalTrials"),
            said("Orchestrator", "I cannot search for trials right now."),
        ],
    )


def answer_to(question: str, answer: str) -> Case:
    return conversation_to_case(
        Conversation(
            id="q",
            patient_id="patient_4",
            messages=[
                user(question),
                said("Orchestrator", "PatientHistory, please answer."),
                said("PatientHistory", answer),
            ],
        )
    )


async def run(spec: str, case: Case, judge: Judge | None = None, base_dir: Path | None = None) -> Score:
    return await score_case(build_metric(spec, base_dir=base_dir), case, ScoreContext(judge))


@pytest.fixture(scope="module")
def offline() -> OfflineJudge:
    return OfflineJudge()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """References (a folder of <patient>.txt) and sources (one sub-folder per patient)."""
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "patient_4.txt").write_text(REFERENCE)
    folder = tmp_path / "sources" / "patient_4"
    folder.mkdir(parents=True)
    for name, text in SOURCES.items():
        (folder / name).write_text(text)
    return tmp_path


# --------------------------------------------------------------------------- registry


def test_names_are_registered_and_unique() -> None:
    entries = {e.name: e for e in catalogue()}
    for name in (*RATING_METRICS, "agent_selection_accuracy", *AGENT_METRICS):
        assert entries[name].source == "Healthcare Agent Orchestrator evaluation (Qiu et al.)"
    assert [e.name for e in catalogue()].count("agent_context_relevancy") == 1
    assert entries["agent_selection"].needs_judge and not entries["agent_selection_accuracy"].needs_judge


def test_agent_settings_are_required_and_checked(data: Path) -> None:
    with pytest.raises(ConfigError, match="needs the setting 'agent'"):
        build_metric("agent_context_relevancy")
    with pytest.raises(ConfigError, match="needs the setting 'references'"):
        build_metric("agent_tbfact(agent=PatientHistory)")
    with pytest.raises(ConfigError, match="needs the setting 'sources'"):
        build_metric("agent_source_support(agent=PatientHistory)")
    with pytest.raises(ConfigError, match="context_window"):
        build_metric("agent_context_relevancy(agent=PatientHistory, context_window=-1)")
    with pytest.raises(ConfigError, match="references not found"):
        build_metric(f"agent_tbfact(agent=PatientHistory, references={data / 'nowhere'})")
    with pytest.raises(ConfigError, match="policy"):
        build_metric(f"agent_tbfact(agent=PatientHistory, references={data / 'refs'}, policy=loose)")


# --------------------------------------------------------------------------- agent selection accuracy


async def test_agent_selection_accuracy_by_hand() -> None:
    score = await run("agent_selection_accuracy", conversation_to_case(tumor_board()))
    assert score.status == "scored"
    assert score.value == pytest.approx(2 / 3) and score.label == "2/3"
    turns = score.details["turns"]
    assert [(t["gold"], t["selected"], t["correct"]) for t in turns] == [
        ("PatientHistory", "PatientHistory", True),
        ("Radiology", "Radiology", True),
        ("ClinicalTrials", "Orchestrator", False),
    ]
    assert turns[0]["query"].startswith("Orchestrator: summarise")
    assert turns[0]["answered_by"] == ["Orchestrator", "PatientHistory"]
    assert "turn 3 gold ClinicalTrials, selected Orchestrator" in (score.explanation or "")


async def test_orchestrator_only_answer_and_name_matching() -> None:
    conversation = Conversation(
        id="o",
        messages=[
            user("Thanks, that is all.", gold="orchestrator"),
            said("Orchestrator", "You are welcome."),
            user("Show the timeline.", gold="Patient History"),
            said("ORCHESTRATOR", "PatientHistory?"),
            said("PatientHistory", "2023-03: carboplatin started."),
            user("And the CT?", gold="Radiology"),  # nobody answered: wrong, selected nobody
        ],
    )
    score = await run(
        "agent_selection_accuracy(orchestrator=orchestrator)", conversation_to_case(conversation)
    )
    assert [(t["selected"], t["correct"]) for t in score.details["turns"]] == [
        ("Orchestrator", True),
        ("PatientHistory", True),
        (None, False),
    ]
    assert score.value == pytest.approx(2 / 3)


async def test_agent_selection_accuracy_without_labels_or_conversation() -> None:
    unlabelled = tumor_board()
    for message in unlabelled.messages:
        message.gold_agent = None
    score = await run("agent_selection_accuracy", conversation_to_case(unlabelled))
    assert score.status == "not_applicable" and "gold_agent" in (score.explanation or "")
    missing = await run("agent_selection_accuracy", Case(id="x", input="hello", response="hi"))
    assert missing.status == "error" and "holds no conversation" in (missing.error or "")


# --------------------------------------------------------------------------- ratings through the HTTP judge

PATTERNS = {
    "agent_selection": r"Judge\s+whether\s+each\s+request",
    "intent_resolution": r"on\s+intent\s+resolution",
    "information_aggregation": r"on\s+information\s+aggregation",
}
RATINGS = {"agent_selection": 4, "intent_resolution": 3, "information_aggregation": 5}


def http_judge(server: ScriptedServer, tmp_path: Path) -> Judge:
    judge = build_judge(
        JudgeConfig(provider="openai", model="m", base_url=server.base_url), cache_path=tmp_path / "c.db"
    )
    assert judge is not None
    return judge


async def test_ratings_through_the_http_judge(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script(
        {
            "rules": [
                {
                    "pattern": PATTERNS[name],
                    "json": {"explanation": f"{name}: the trial request was not routed.", "rating": rating},
                }
                for name, rating in RATINGS.items()
            ]
        }
    )
    judge = http_judge(llm_server, tmp_path)
    case = conversation_to_case(tumor_board())
    for name, rating in RATINGS.items():
        metric = build_metric(f"{name}(agents={{'ClinicalTrials': 'searches clinical trials'}})")
        ctx = ScoreContext(judge)
        score = await score_case(metric, case, ctx)
        assert score.status == "scored", score.error
        assert score.value == rating and score.label == f"{rating}/5"
        assert score.explanation == f"{name}: the trial request was not routed."
        assert score.details["prompt"] == f"conversation_{name}@v1"
        assert score.details["normalized"] == (rating - 1) / 4
        assert score.details["agents"] == ["Orchestrator", "PatientHistory", "Radiology", "ClinicalTrials"]
        assert ctx.usage.calls == 1
    await judge.aclose()

    requests = llm_server.requests()
    assert len(requests) == 3
    for request in requests:
        messages = request["body"]["messages"]
        # system, two worked examples (user/assistant), then the conversation
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
        last = messages[-1]["content"]
        assert '[tool call load_patient_data({"patient_id": "patient_4"})]' in last
        assert "[tool result load_patient_data: 2 clinical notes loaded]" in last
        assert "PatientHistory (assistant):\nPatient 4 is a 62-year-old woman" in last
        assert "- ClinicalTrials: searches clinical trials" in last  # available, never spoke
        schema = request["body"]["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["rating"]["enum"] == [5, 4, 3, 2, 1]


@pytest.mark.parametrize("name", RATING_METRICS)
async def test_malformed_judge_reply_is_unscored(
    llm_server: ScriptedServer, tmp_path: Path, name: str
) -> None:
    llm_server.set_script({"default": {"content": "Rating: 4 - the routing looks fine."}})
    judge = http_judge(llm_server, tmp_path)
    score = await score_case(build_metric(name), conversation_to_case(tumor_board()), ScoreContext(judge))
    await judge.aclose()
    assert score.status == "error" and (score.error or "").startswith("unscored")
    assert score.value is None
    assert len(llm_server.requests()) == 2  # asked once more with the validation error


@pytest.mark.parametrize("name", RATING_METRICS)
async def test_ratings_need_an_llm_judge(name: str, offline: OfflineJudge) -> None:
    case = conversation_to_case(tumor_board())
    with_offline = await run(name, case, offline)
    assert with_offline.status == "error" and "needs an LLM judge" in (with_offline.error or "")
    without = await run(name, case, None)
    assert without.status == "error" and "needs an LLM judge" in (without.error or "")
    no_conversation = await run(name, Case(id="x", input="hi", response="hello"), offline)
    assert no_conversation.status == "error" and "holds no conversation" in (no_conversation.error or "")


async def test_information_aggregation_needs_agents_to_aggregate(offline: OfflineJudge) -> None:
    alone = Conversation(id="a", messages=[user("Hello"), said("Orchestrator", "Hello, how can I help?")])
    score = await run("information_aggregation", conversation_to_case(alone), offline)
    assert score.status == "not_applicable" and "nothing to aggregate" in (score.explanation or "")


# --------------------------------------------------------------------------- context relevancy (offline)


async def test_context_relevancy_orders_relevant_above_irrelevant(offline: OfflineJudge) -> None:
    question = "What chemotherapy did patient_4 receive?"
    relevant = await run(
        "agent_context_relevancy(agent=PatientHistory)",
        answer_to(question, "Patient 4 received carboplatin and paclitaxel chemotherapy with pembrolizumab."),
        offline,
    )
    irrelevant = await run(
        "agent_context_relevancy(agent=PatientHistory)",
        answer_to(question, "The hospital cafeteria opens at 7 am and visitor parking is free on weekends."),
        offline,
    )
    for score in (relevant, irrelevant):
        assert score.status == "scored" and score.value is not None and 0.0 <= score.value <= 1.0
        assert score.details["judge_kind"] == "heuristic"
    assert relevant.value is not None and irrelevant.value is not None
    assert relevant.value > irrelevant.value
    assert relevant.value == 1.0 and irrelevant.value == 0.0
    (segment,) = relevant.details["segments"]
    assert segment["request"] == question and segment["relevant"] is True


async def test_context_relevancy_segments_and_fallback_request(offline: OfflineJudge) -> None:
    case = conversation_to_case(tumor_board())
    score = await run("agent_context_relevancy(agent=patienthistory, context_window=0)", case, offline)
    assert score.status == "scored" and score.details["agent"] == "PatientHistory"
    (segment,) = score.details["segments"]
    # no context at all: the request is the last user message before the segment
    assert segment["request_from"] == "earlier" and segment["request"].startswith("Orchestrator: summarise")
    never = await run("agent_context_relevancy(agent=Pathology)", case, offline)
    assert never.status == "not_applicable" and "never spoke" in (never.explanation or "")


# --------------------------------------------------------------------------- TBFact of an agent (offline)


async def test_agent_tbfact_offline(data: Path, offline: OfflineJudge) -> None:
    case = conversation_to_case(tumor_board())
    score = await run("agent_tbfact(agent=PatientHistory, references=refs)", case, offline, base_dir=data)
    assert score.status == "scored", score.error
    assert score.value is not None and 0.0 <= score.value <= 1.0
    for key in ("precision", "recall", "f1", "recall_high", "f1_strict"):
        assert key in score.sub_scores
    assert score.value == score.sub_scores["f1"]
    assert score.details["agent"] == "PatientHistory" and score.details["patient_id"] == "patient_4"
    assert score.details["mode"] == "joined"
    response_facts = [f["fact"] for f in score.details["facts"] if f["direction"] == "precision"]
    assert response_facts and not any("notes loaded" in f for f in response_facts)  # tool output left out
    # a distorted history scores lower than the faithful one
    wrong = conversation_to_case(
        tumor_board(history=HISTORY.replace("KRAS G12C", "EGFR exon 19 deletion").replace("62", "45"))
    )
    worse = await run("agent_tbfact(agent=PatientHistory, references=refs)", wrong, offline, base_dir=data)
    assert worse.value is not None and worse.value < score.value


async def test_agent_tbfact_reference_files_and_per_segment(tmp_path: Path, offline: OfflineJudge) -> None:
    (tmp_path / "refs.json").write_text(json.dumps({"patient_4": REFERENCE}))
    (tmp_path / "refs.jsonl").write_text(
        json.dumps({"patient_id": "patient_4", "reference": REFERENCE}) + "\n"
    )
    case = conversation_to_case(tumor_board())
    values = []
    for refs in ("refs.json", "refs.jsonl"):
        score = await run(f"agent_tbfact(agent=PatientHistory, references={refs})", case, offline, tmp_path)
        assert score.status == "scored", score.error
        values.append(score.value)
    assert values[0] == values[1]
    per_segment = await run(
        "agent_tbfact(agent=PatientHistory, references=refs.json, per_segment=true)", case, offline, tmp_path
    )
    assert per_segment.status == "scored" and per_segment.details["mode"] == "per_segment"
    assert per_segment.value == pytest.approx(values[0])  # one segment: the same as joined


async def test_agent_tbfact_errors_name_what_is_missing(data: Path, offline: OfflineJudge) -> None:
    spec = "agent_tbfact(agent=PatientHistory, references=refs)"
    no_patient = await run(spec, conversation_to_case(tumor_board(patient=None)), offline, data)
    assert no_patient.status == "error" and "patient_id" in (no_patient.error or "")
    no_reference = await run(spec, conversation_to_case(tumor_board(patient="patient_9")), offline, data)
    assert no_reference.status == "error" and no_reference.value is None
    assert "patient_9" in (no_reference.error or "") and "patient_9.txt" in (no_reference.error or "")
    never = await run(
        "agent_tbfact(agent=Pathology, references=refs)", conversation_to_case(tumor_board()), offline, data
    )
    assert never.status == "not_applicable"


# --------------------------------------------------------------------------- support by any source (offline)


async def test_agent_source_support_offline(data: Path, offline: OfflineJudge) -> None:
    case = conversation_to_case(tumor_board(history=f"{HISTORY} {UNSUPPORTED}"))
    score = await run("agent_source_support(agent=PatientHistory, sources=sources)", case, offline, data)
    assert score.status == "scored", score.error
    assert score.value is not None and 0.0 < score.value < 1.0
    assert 0.0 <= score.sub_scores["partial"] <= 1.0
    assert score.sub_scores["support_lenient"] >= score.value
    assert score.sub_scores["n_documents"] == 2
    assert score.details["documents"] == ["oncology.md", "pathology.txt"]
    by_fact = {f["fact"]: f for f in score.details["facts"]}
    kras = next(f for text, f in by_fact.items() if "KRAS G12C" in text)
    hip = next(f for text, f in by_fact.items() if "hip replacement" in text)
    assert kras["label"] == "entailed" and "pathology.txt" in kras["supporting_documents"]
    assert hip["label"] == "not_entailed" and hip["document"] is None
    assert any("hip replacement" in fact for fact in score.details["unsupported"])
    assert score.details["facts"][0]["label"] != "entailed"  # unsupported facts listed first


async def test_agent_source_support_json_and_errors(tmp_path: Path, offline: OfflineJudge) -> None:
    (tmp_path / "sources.json").write_text(json.dumps({"patient_4": list(SOURCES.values())}))
    spec = "agent_source_support(agent=PatientHistory, sources=sources.json)"
    score = await run(spec, conversation_to_case(tumor_board()), offline, tmp_path)
    assert score.status == "scored" and score.value == 1.0, score.details.get("unsupported")
    no_patient = await run(spec, conversation_to_case(tumor_board(patient=None)), offline, tmp_path)
    assert no_patient.status == "error" and "patient_id" in (no_patient.error or "")
    unknown = await run(spec, conversation_to_case(tumor_board(patient="patient_9")), offline, tmp_path)
    assert unknown.status == "error" and "patient_9" in (unknown.error or "")
    (tmp_path / "sources").mkdir()
    folder_spec = "agent_source_support(agent=PatientHistory, sources=sources)"
    empty = await run(folder_spec, conversation_to_case(tumor_board()), offline, tmp_path)
    assert empty.status == "error" and "no source document for patient 'patient_4'" in (empty.error or "")


# --------------------------------------------------------------------------- end to end


def test_evaluate_with_the_default_offline_judge(data: Path) -> None:
    case = conversation_to_case(tumor_board())
    result = evaluate(
        [case],
        [
            "agent_selection_accuracy",
            "agent_selection",
            "agent_context_relevancy(agent=PatientHistory)",
            f"agent_tbfact(agent=PatientHistory, references={data / 'refs'})",
            f"agent_source_support(agent=PatientHistory, sources={data / 'sources'})",
        ],
        judge="offline",
        store=data / "s.db",
        progress=False,
    )
    scores = {r.metric: r.score for r in result.results}
    assert scores["agent_selection_accuracy"].value == pytest.approx(2 / 3)
    assert scores["agent_selection"].status == "error"
    assert "needs an LLM judge" in (scores["agent_selection"].error or "")
    for name in AGENT_METRICS:
        assert scores[name].status == "scored", (name, scores[name].error)


def test_relative_paths_come_from_the_run_file_folder(
    data: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clineval.config import load_run_config

    run_file = data / "run.yaml"
    run_file.write_text(
        "metrics:\n"
        "  - agent_tbfact(agent=PatientHistory, references=refs)\n"
        "  - agent_source_support(agent=PatientHistory, sources=sources)\n"
    )
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    config = load_run_config(run_file)
    built = [build_metric(spec, base_dir=config.folder) for spec in config.metrics]
    assert [m.name for m in built] == ["agent_tbfact", "agent_source_support"]
    with pytest.raises(ConfigError, match="references not found"):
        build_metric(config.metrics[0])  # no folder given: relative to the current directory


async def test_agent_metrics_through_the_http_judge(
    llm_server: ScriptedServer, data: Path, tmp_path: Path
) -> None:
    """The per-agent metrics with an LLM judge: the packaged prompts over HTTP, the agent's own
    words (not its tool output) sent to the judge, and TBFact/support computed from the verdicts."""
    from tests.metrics.test_factuality_rag_http import SCRIPT

    llm_server.set_script(SCRIPT)
    judge = http_judge(llm_server, tmp_path)
    case = conversation_to_case(tumor_board())
    tbfact = await run(f"agent_tbfact(agent=PatientHistory, references={data / 'refs'})", case, judge)
    support = await run(
        f"agent_source_support(agent=PatientHistory, sources={data / 'sources'})", case, judge
    )
    relevancy = await run("agent_context_relevancy(agent=Radiology)", case, judge)
    await judge.aclose()
    for score in (tbfact, support, relevancy):
        assert score.status == "scored", score.error
    # the scripted verdicts: fact 1 entailed, fact 2 not entailed, in both directions
    assert tbfact.sub_scores["precision"] == pytest.approx(0.5) and tbfact.sub_scores[
        "recall"
    ] == pytest.approx(0.5)
    assert support.value == pytest.approx(0.5)  # one of the two facts entailed by a document
    assert relevancy.value == 1.0
    sent = [json.dumps(r["body"]["messages"]) for r in llm_server.requests()]
    assert any("KRAS G12C mutation" in s for s in sent)  # the agent's words reached the judge


async def test_tool_selection_accuracy_by_hand() -> None:
    def call(name: str) -> ToolCallRecord:
        return ToolCallRecord(name=name, arguments={"patient_id": "patient_4"})

    conversation = Conversation(
        id="tools",
        patient_id="patient_4",
        messages=[
            Message(
                role="user", speaker="user", text="Summarise the history.", gold_tools=["load_patient_data"]
            ),
            said("PatientHistory", "Timeline ...", tool_calls=[call("load_patient_data")]),  # right
            Message(role="user", speaker="user", text="Latest CT?", gold_tools=["get_imaging_reports"]),
            said("Radiology", "The CT shows ..."),  # no call: missing
            Message(role="user", speaker="user", text="Thank you.", gold_tools=[]),
            said("Orchestrator", "You are welcome."),  # no tool, none expected: right
            Message(role="user", speaker="user", text="Next steps?", gold_tools=["lookup_guideline"]),
            said(
                "ClinicalGuidelines",
                "Consider ...",
                tool_calls=[call("lookup_guideline"), call("lookup_guideline"), call("load_patient_data")],
            ),  # an extra tool: wrong
            user("Anything else?"),  # not labelled
        ],
    )
    score = await run("tool_selection_accuracy", conversation_to_case(conversation))
    # 2 of 4 labelled turns exact; calls 1+0+0+3 = 4 of which 2 gold (precision 0.5);
    # gold tools 1+1+0+1 = 3 of which 2 called (recall 2/3)
    assert score.value == pytest.approx(0.5) and score.label == "2/4"
    assert score.sub_scores["tool_precision"] == pytest.approx(0.5)
    assert score.sub_scores["tool_recall"] == pytest.approx(2 / 3)
    turns = score.details["turns"]
    assert turns[1]["missing"] == ["get_imaging_reports"] and turns[1]["extra"] == []
    assert turns[3]["extra"] == ["load_patient_data"] and not turns[3]["correct"]
    unlabelled = await run("tool_selection_accuracy", conversation_to_case(tumor_board()))
    assert unlabelled.status == "not_applicable"
