"""Checks on the quickstart example: its cases files, run files and deliberately imperfect agent."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from clineval.config import load_run_config
from clineval.datasets import load_dataset
from clineval.model.case import Case, ToolCall

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
CASES_FILE = QUICKSTART / "cases.jsonl"
QA_FILE = QUICKSTART / "qa_cases.jsonl"
AGENT_FILE = QUICKSTART / "agent.py"

#: The one case whose agent call is designed to raise (a patient missing from the database).
RAISING_CASE = "tool-014"

GOLD_CATEGORIES = {"demographics", "diagnosis", "treatment", "symptom", "biomarker", "other"}

#: Patient-question categories and how many cases of each the QA file holds.
QA_CATEGORIES = {"answerable": 6, "out_of_scope": 2, "urgent": 1, "harmful": 1}
#: Categories whose questions should be declined.
REFUSE_CATEGORIES = {"out_of_scope", "harmful"}
#: The QA cases the agent declines: qa-004 (driving) is its planted over-refusal.
DECLINED_BY_AGENT = {"qa-004", "qa-007", "qa-008"}
#: Where the agent's decision differs from the label: an over-refusal and a missed refusal.
WRONG_DECISIONS = {"qa-004", "qa-010"}
#: The leaflet passage that answers each answerable or urgent question.
ANSWERING_PASSAGE = {
    "qa-001": "Sleeping with the eye shield",
    "qa-002": "Your eye drops",
    "qa-003": "Storing your drops",
    "qa-004": "Driving",
    "qa-005": "Pools, hot tubs and saunas",
    "qa-006": "What is normal",
    "qa-009": "Emergencies",
}
#: The question whose answering passage the retriever misses (a planted flaw).
RETRIEVAL_MISS = "qa-005"
#: The question answered with a sentence no retrieved passage supports (a planted flaw).
UNGROUNDED = "qa-002"


def _load_agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("clineval_quickstart_agent", AGENT_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def agent() -> ModuleType:
    return _load_agent()


@pytest.fixture(scope="module")
def raw_cases() -> list[dict[str, Any]]:
    lines = CASES_FILE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def cases(raw_cases: list[dict[str, Any]]) -> list[Case]:
    return [Case.model_validate(raw) for raw in raw_cases]


def _tool_cases(cases: list[Case]) -> list[Case]:
    return [case for case in cases if case.metadata.get("task") == "tool_use"]


def _summary_cases(cases: list[Case]) -> list[Case]:
    return [case for case in cases if case.metadata.get("task") == "summary"]


def _signature(calls: list[ToolCall]) -> list[tuple[str, str]]:
    return [(call.name, json.dumps(call.arguments, sort_keys=True)) for call in calls]


def test_every_line_validates_as_a_case() -> None:
    for number, line in enumerate(CASES_FILE.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"line {number} is blank"
        Case.model_validate(json.loads(line))


def test_agent_outputs_are_not_in_the_data(raw_cases: list[dict[str, Any]]) -> None:
    for raw in raw_cases:
        assert not {"response", "trajectory", "agent_run"} & raw.keys(), raw["id"]


def test_ids_are_unique_and_well_formed(cases: list[Case]) -> None:
    ids = [case.id for case in cases]
    assert len(ids) == len(set(ids))
    for case in cases:
        prefix = "sum-" if case.metadata["task"] == "summary" else "tool-"
        assert case.id.startswith(prefix), case.id


def test_enough_cases_of_both_kinds(cases: list[Case]) -> None:
    assert len(cases) >= 24
    assert {case.metadata.get("task") for case in cases} == {"summary", "tool_use"}
    assert len(_summary_cases(cases)) >= 8
    assert len(_tool_cases(cases)) >= 12


def test_summary_cases_are_complete(cases: list[Case]) -> None:
    specialties = set()
    for case in _summary_cases(cases):
        assert isinstance(case.input, str)
        instruction, _, note = case.input.partition("\n\n")
        assert instruction.lower().startswith("summarise"), case.id
        assert 80 <= len(note.split()) <= 250, case.id
        assert case.reference and 2 <= case.reference.count(". ") + 1 <= 4, case.id
        assert case.gold_facts is not None and 4 <= len(case.gold_facts) <= 8, case.id
        for fact in case.gold_facts:
            assert fact.category in GOLD_CATEGORIES, (case.id, fact.text)
            assert fact.importance in {"high", "medium", "low"}, (case.id, fact.text)
        assert case.metadata.get("note_type"), case.id
        specialties.add(case.metadata["specialty"])
        assert case.reference_trajectory == [], case.id  # a summary expects no tool call
    assert len(specialties) >= 6


def test_tool_cases_use_the_agent_tool_set(cases: list[Case], agent: ModuleType) -> None:
    for case in _tool_cases(cases):
        assert case.reference, case.id
        assert case.reference_trajectory, case.id
        assert case.metadata.get("difficulty") in {"easy", "medium", "hard"}, case.id
        assert case.reference_trajectory[0].name == "search_patient", case.id
        for call in case.reference_trajectory:
            assert call.name in agent.TOOLS, (case.id, call.name)


def test_reference_trajectories_run_against_the_database(cases: list[Case], agent: ModuleType) -> None:
    """Every reference call is a valid call of the example tools (except the missing patient)."""
    for case in _tool_cases(cases):
        if case.id == RAISING_CASE:
            continue
        for call in case.reference_trajectory or []:
            output = agent.TOOLS[call.name](**call.arguments)
            assert isinstance(output, dict), (case.id, call.name)
            assert output.get("found", True), (case.id, call.name)
            if call.name == "get_labs":
                assert output["results"], (case.id, call.arguments)


def test_agent_runs_every_case_but_one(cases: list[Case], agent: ModuleType) -> None:
    raised = []
    for case in cases:
        assert isinstance(case.input, str)
        if case.id == RAISING_CASE:
            with pytest.raises(LookupError, match="Whitfield"):
                agent.run_agent(case.input)
            raised.append(case.id)
            continue
        result = agent.run_agent(case.input)
        assert isinstance(result, dict), case.id
        assert isinstance(result["response"], str) and result["response"], case.id
        trajectory = [ToolCall.model_validate(call) for call in result["trajectory"]]
        if case.metadata["task"] == "summary":
            assert trajectory == [], case.id
        else:
            assert trajectory, case.id
            assert all(call.output is not None for call in trajectory), case.id
    assert raised == [RAISING_CASE]


def test_agent_is_deterministic(cases: list[Case], agent: ModuleType) -> None:
    for case in cases:
        if case.id == RAISING_CASE:
            continue
        assert isinstance(case.input, str)
        assert agent.run_agent(case.input) == agent.run_agent(case.input), case.id


def test_trajectories_match_the_reference_for_some_but_not_all(cases: list[Case], agent: ModuleType) -> None:
    matches = []
    mismatches = []
    for case in _tool_cases(cases):
        if case.id == RAISING_CASE:
            continue
        assert isinstance(case.input, str) and case.reference_trajectory is not None
        result = agent.run_agent(case.input)
        got = [ToolCall.model_validate(call) for call in result["trajectory"]]
        if _signature(got) == _signature(case.reference_trajectory):
            matches.append(case.id)
        else:
            mismatches.append(case.id)
    total = len(matches) + len(mismatches)
    assert 0.3 * total <= len(matches) <= 0.7 * total, (matches, mismatches)


def test_summaries_are_extractive_and_short(cases: list[Case], agent: ModuleType) -> None:
    for case in _summary_cases(cases):
        assert isinstance(case.input, str)
        summary = agent.run_agent(case.input)["response"]
        assert len(summary.split()) <= agent.SUMMARY_MAX_WORDS + 1, case.id
        first = summary.split(". ")[0].rstrip(".")
        assert first in case.input, case.id


# ---------------------------------------------------------------------------------------
# Patient questions (qa_cases.jsonl) and the agent's retrieval-augmented mode
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qa_cases() -> list[Case]:
    return load_dataset(QA_FILE).cases


@pytest.fixture(scope="module")
def qa_answers(qa_cases: list[Case], agent: ModuleType) -> dict[str, dict[str, Any]]:
    answers = {}
    for case in qa_cases:
        assert isinstance(case.input, str)
        answers[case.id] = agent.run_agent(case.input)
    return answers


def _titles(contexts: list[str]) -> list[str]:
    return [context.partition(": ")[0] for context in contexts]


def test_both_case_files_load_with_unique_ids() -> None:
    main = load_dataset(CASES_FILE)
    qa = load_dataset(QA_FILE)
    assert len(main) == 25 and len(qa) == 10
    assert qa.metadata_columns == ["should_refuse"]
    ids = [case.id for case in [*main, *qa]]
    assert len(ids) == len(set(ids))


def test_qa_cases_are_complete(qa_cases: list[Case], agent: ModuleType) -> None:
    raw = [json.loads(line) for line in QA_FILE.read_text(encoding="utf-8").splitlines()]
    for row in raw:
        assert not {"response", "contexts", "trajectory", "agent_run"} & row.keys(), row["id"]
    assert [case.id for case in qa_cases] == [f"qa-{n:03d}" for n in range(1, 11)]
    counts: dict[str, int] = {}
    for case in qa_cases:
        category = case.metadata["category"]
        assert isinstance(category, str)
        counts[category] = counts.get(category, 0) + 1
        assert case.metadata["task"] == "patient_qa", case.id
        assert isinstance(case.metadata["should_refuse"], bool), case.id
        assert case.metadata["should_refuse"] == (category in REFUSE_CATEGORIES), case.id
        assert isinstance(case.input, str) and case.input.endswith("?"), case.id
        assert case.reference and case.contexts is None, case.id
        assert agent.is_patient_question(case.input), case.id
    assert counts == QA_CATEGORIES


def test_tool_requests_are_not_routed_to_the_patient_mode(cases: list[Case], agent: ModuleType) -> None:
    for case in _tool_cases(cases):
        assert not agent.is_patient_question(case.input), case.id


def test_leaflet_is_small_and_titled(agent: ModuleType) -> None:
    titles = [title for title, _ in agent.LEAFLET]
    assert 8 <= len(titles) <= 15
    assert len(set(titles)) == len(titles)
    assert set(ANSWERING_PASSAGE.values()) <= set(titles)


def test_qa_mode_returns_contexts(qa_answers: dict[str, dict[str, Any]], agent: ModuleType) -> None:
    passages = {agent.passage_text(i) for i in range(len(agent.LEAFLET))}
    for case_id, answer in qa_answers.items():
        assert set(answer) == {"response", "contexts", "trajectory"}, case_id
        assert answer["trajectory"] == [], case_id
        assert isinstance(answer["response"], str) and answer["response"], case_id
        contexts = answer["contexts"]
        assert len(contexts) == agent.TOP_K, case_id
        assert all(context in passages for context in contexts), case_id


def test_qa_mode_declines_where_designed(
    qa_cases: list[Case], qa_answers: dict[str, dict[str, Any]], agent: ModuleType
) -> None:
    declined = {case_id for case_id, answer in qa_answers.items() if answer["response"] == agent.DECLINE}
    assert declined == DECLINED_BY_AGENT
    wrong = {case.id for case in qa_cases if (case.id in declined) != case.metadata["should_refuse"]}
    assert wrong == WRONG_DECISIONS


def test_answers_are_conversational(qa_answers: dict[str, dict[str, Any]], agent: ModuleType) -> None:
    for case_id, answer in qa_answers.items():
        response = answer["response"]
        if case_id in DECLINED_BY_AGENT:
            continue
        assert response.startswith(agent.ACKNOWLEDGEMENT), case_id
        urgent = _titles(answer["contexts"])[0] in agent.URGENT_PASSAGES
        assert response.endswith(agent.FOLLOW_UP) != urgent, case_id


def test_urgent_question_points_to_emergency_care(qa_answers: dict[str, dict[str, Any]]) -> None:
    response = qa_answers["qa-009"]["response"]
    assert "emergency department" in response and "straight away" in response
    assert "?" not in response  # no follow-up question when the advice is "go now"


def test_retrieval_finds_the_answering_passage_but_once(qa_answers: dict[str, dict[str, Any]]) -> None:
    for case_id, title in ANSWERING_PASSAGE.items():
        titles = _titles(qa_answers[case_id]["contexts"])
        if case_id == RETRIEVAL_MISS:
            assert title not in titles, case_id
        else:
            assert titles[0] == title, (case_id, titles)


def test_answers_are_grounded_but_one_sentence(
    qa_answers: dict[str, dict[str, Any]], agent: ModuleType
) -> None:
    """Informative sentences are copied from the contexts, except the stale drop frequency."""
    ungrounded: dict[str, list[str]] = {}
    for case_id, answer in qa_answers.items():
        if case_id in DECLINED_BY_AGENT:
            continue
        body = answer["response"].removeprefix(agent.ACKNOWLEDGEMENT).removesuffix(agent.FOLLOW_UP)
        sentences = [s for s in agent._PASSAGE_SENTENCE.split(body.strip()) if s]
        assert 1 <= len(sentences) <= 4, case_id
        context = "\n".join(answer["contexts"])
        missing = [s for s in sentences if s not in context]
        if missing:
            ungrounded[case_id] = missing
    assert list(ungrounded) == [UNGROUNDED]
    assert "twice a day for four weeks" in ungrounded[UNGROUNDED][0]


def test_qa_mode_is_deterministic(qa_cases: list[Case], agent: ModuleType) -> None:
    for case in qa_cases:
        assert agent.run_agent(case.input) == agent.run_agent(case.input), case.id


def test_run_files_point_at_the_example() -> None:
    quickstart = load_run_config(QUICKSTART / "quickstart.yaml")
    assert quickstart.data_path() == CASES_FILE
    names = [spec.result_name for spec in quickstart.metrics]
    assert "tbfact" in names and "rubric" in names
    patient_qa = load_run_config(QUICKSTART / "patient_qa.yaml")
    assert patient_qa.data_path() == QA_FILE
    assert patient_qa.agent is not None and patient_qa.agent.target == "agent.py:run_agent"
    assert [spec.result_name for spec in patient_qa.metrics] == [
        "conversational_faithfulness",
        "refusal_accuracy",
        "context_relevance",
        "faithfulness",
        "context_relevance_ragas",
        "answer_relevance",
    ]
    assert patient_qa.group_by == "category"
