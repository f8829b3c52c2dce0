"""Checks on the quickstart example: its cases file and its deliberately imperfect agent."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from clineval.model.case import Case, ToolCall

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
CASES_FILE = QUICKSTART / "cases.jsonl"
AGENT_FILE = QUICKSTART / "agent.py"

#: The one case whose agent call is designed to raise (a patient missing from the database).
RAISING_CASE = "tool-014"

GOLD_CATEGORIES = {"demographics", "diagnosis", "treatment", "symptom", "biomarker", "other"}


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
