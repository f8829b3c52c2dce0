"""Checks on the tumor board example: its synthetic data, references, scenarios and the
deterministic multi-agent system under test (examples/tumor_board/system.py)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from clineval.conversations.model import Conversation, Message

TUMOR_BOARD = Path(__file__).resolve().parents[2] / "examples" / "tumor_board"
PATIENTS = TUMOR_BOARD / "data" / "patients"
REFERENCES = TUMOR_BOARD / "data" / "references"
PATIENT_IDS = ["tb-001", "tb-002", "tb-003"]
AGENTS = {"PatientHistory", "Radiology", "ClinicalGuidelines"}
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _load_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tumor_board_system", TUMOR_BOARD / "system.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the class is built
    spec.loader.exec_module(module)
    return module


tb = _load_module()


def _sources(patient_id: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((PATIENTS / patient_id).glob("*.md")))


def _conversation(*texts: str, patient_id: str | None = None) -> Conversation:
    """A conversation whose user turns are ``texts`` (earlier turns answered by the system)."""
    system = tb.TumorBoardSystem()
    conversation = Conversation(id="test", patient_id=patient_id, messages=[])
    for number, text in enumerate(texts, start=1):
        conversation.messages.append(Message(role="user", speaker="user", text=text))
        if number < len(texts):
            conversation.messages.extend(system(conversation))
    return conversation


def _ask(text: str, patient_id: str | None = "tb-001") -> list[Message]:
    return tb.TumorBoardSystem()(_conversation(text, patient_id=patient_id))


def _agent_message(messages: list[Message]) -> Message:
    assert [m.speaker for m in messages][0::2] == ["Orchestrator", "Orchestrator"]
    assert len(messages) == 3 and messages[1].speaker in AGENTS
    return messages[1]


# --- data ---------------------------------------------------------------------------------


@pytest.mark.parametrize("patient_id", PATIENT_IDS)
def test_patient_folders_hold_three_to_five_synthetic_documents(patient_id: str) -> None:
    documents = sorted((PATIENTS / patient_id).glob("*.md"))
    assert 3 <= len(documents) <= 5
    for path in documents:
        text = path.read_text(encoding="utf-8")
        assert "Patient: Testperson" in text and f"({patient_id})" in text
        assert "Synthetic record" in text
        assert re.search(r"^Date: \d{4}-\d{2}-\d{2}$", text, re.MULTILINE)
    types = {doc.header["Type"] for doc in tb.load_documents(PATIENTS / patient_id)}
    assert {"clinic note", "pathology", "imaging"} <= types


@pytest.mark.parametrize("patient_id", PATIENT_IDS)
def test_references_are_structured_and_dated_from_the_sources(patient_id: str) -> None:
    reference = (REFERENCES / f"{patient_id}.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", reference, re.MULTILINE)
    assert headings == ["Summary", "Timeline", "Current status"]
    sources = _sources(patient_id)
    dates = DATE.findall(reference)
    assert len(dates) >= 10
    assert all(date in sources for date in dates), [d for d in dates if d not in sources]


def test_scenarios_use_the_agreed_fields_and_the_system_routes_them_as_expected() -> None:
    scenarios = yaml.safe_load((TUMOR_BOARD / "scenarios.yaml").read_text(encoding="utf-8"))["scenarios"]
    assert 3 <= len(scenarios) <= 4
    assert {s["patient_id"] for s in scenarios} == set(PATIENT_IDS)
    for scenario in scenarios:
        assert set(scenario) == {
            "id", "patient_id", "initial_query", "initial_expect", "initial_tools", "followups", "persona",
            "goal", "trials", "max_turns",
        }  # fmt: skip
        assert scenario["trials"] == 2 and scenario["max_turns"] == 6
        assert 3 <= len(scenario["followups"]) <= 4
        turns = [(scenario["initial_query"], scenario["initial_expect"])]
        turns += [(f["text"], f["expect"]) for f in scenario["followups"]]
        for text, expect in turns:
            assert expect in AGENTS
            assert tb.route(tb.ADDRESS.sub("", text)) == expect, text


# --- routing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "agent", "tool"),
    [
        ("Orchestrator: please summarise the patient's history", "PatientHistory", "load_patient_data"),
        ("Build a chronological timeline for tb-002", "PatientHistory", "load_patient_data"),
        ("Which biomarkers were found?", "PatientHistory", "load_patient_data"),
        ("What treatments has he had so far?", "PatientHistory", "load_patient_data"),
        ("@Orchestrator what did the latest MRI show?", "Radiology", "get_imaging_reports"),
        ("Summarise the CT findings", "Radiology", "get_imaging_reports"),
        ("How has the tumour responded to treatment?", "Radiology", "get_imaging_reports"),
        ("What are the next steps?", "ClinicalGuidelines", "lookup_guideline"),
        ("What treatment do the guidelines recommend?", "ClinicalGuidelines", "lookup_guideline"),
        ("Is he eligible for a clinical trial?", "ClinicalGuidelines", "lookup_guideline"),
        ("Radiology, anything to add?", "Radiology", "get_imaging_reports"),
    ],
)
def test_requests_are_routed_by_intent(request_text: str, agent: str, tool: str) -> None:
    messages = _ask(request_text)
    assert messages[0].speaker == "Orchestrator" and messages[0].text.startswith(f"{agent}, please")
    answer = _agent_message(messages)
    assert answer.speaker == agent and answer.role == "assistant" and answer.text
    assert [call.name for call in answer.tool_calls] == [tool]
    assert messages[2].speaker == "Orchestrator" and agent in messages[2].text


@pytest.mark.parametrize("patient_id", PATIENT_IDS)
@pytest.mark.parametrize("request_text", ["Show me the timeline", "Review the imaging", "Next steps?"])
def test_tool_calls_carry_arguments_ids_and_results(patient_id: str, request_text: str) -> None:
    (call,) = _agent_message(_ask(request_text, patient_id)).tool_calls
    assert call.id == "call_1_1"
    assert call.result
    if call.name != "lookup_guideline":
        assert call.arguments == {"patient_id": patient_id}


def test_the_patient_comes_from_the_request_or_an_earlier_turn() -> None:
    (call,) = _agent_message(_ask("Timeline for tb-003 please", patient_id="tb-001")).tool_calls
    assert call.arguments == {"patient_id": "tb-003"}
    conversation = _conversation("Show the imaging of tb-002", "And the biomarkers?")
    (call,) = _agent_message(tb.TumorBoardSystem()(conversation)).tool_calls
    assert call.arguments == {"patient_id": "tb-002"} and call.id == "call_2_1"


# --- grounding ----------------------------------------------------------------------------


@pytest.mark.parametrize("patient_id", PATIENT_IDS)
def test_patient_history_is_a_grounded_chronological_timeline(patient_id: str) -> None:
    answer = _agent_message(_ask("Give me the patient history", patient_id))
    sources = _sources(patient_id)
    (call,) = answer.tool_calls
    read = [d["document"] for d in call.result["documents"]]
    assert read == sorted(p.name for p in (PATIENTS / patient_id).glob("*.md"))
    entries = re.findall(
        r"^- (\d{4}-\d{2}-\d{2}(?: to \d{4}-\d{2}-\d{2})?): (.+)$", answer.text, re.MULTILINE
    )
    assert len(entries) >= 10
    assert [d[:10] for d, _ in entries] == sorted(d[:10] for d, _ in entries)
    assert all(date in sources for date in DATE.findall(answer.text))
    for _, event in entries:  # an event is a source line, or an imaging study and its impression
        assert event in sources or all(part in sources for part in event.split(": ", 1)), event
    markers = answer.text.split("Biomarkers:\n", 1)[1].splitlines()
    assert markers and all(line[2:] in sources for line in markers)


@pytest.mark.parametrize("patient_id", PATIENT_IDS)
def test_patient_history_omits_the_current_status_the_deliberate_weakness(patient_id: str) -> None:
    """The documented weakness: the undated ``## Current status`` sections are never reported."""
    answer = _agent_message(_ask("What is the current status?", patient_id))
    assert answer.speaker == "PatientHistory"
    status = _sources(patient_id).split("## Current status\n", 1)[1].split("\n## ", 1)[0]
    assert "ECOG performance status" in status
    assert "ECOG" not in answer.text and "status" not in answer.text.lower()
    assert "## Current status" in (REFERENCES / f"{patient_id}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("patient_id", PATIENT_IDS)
def test_radiology_summarises_every_imaging_report(patient_id: str) -> None:
    answer = _agent_message(_ask("Review the imaging", patient_id))
    sources = _sources(patient_id)
    (call,) = answer.tool_calls
    studies = call.result
    headings = re.findall(r"^## (\d{4}-\d{2}-\d{2}) ", sources, re.MULTILINE)
    assert [s["date"] for s in studies] == sorted(headings)
    for study in studies:
        assert study["impression"] and study["impression"] in sources and study["study"] in sources
        assert f"- {study['date']} {study['study']}: {study['impression']}" in answer.text
    assert studies[-1]["impression"] in answer.text.splitlines()[-1]


@pytest.mark.parametrize(
    ("patient_id", "condition", "prior"),
    [
        ("tb-001", "glioblastoma", "lomustine"),
        ("tb-002", "non-small-cell lung cancer", "sotorasib"),
        ("tb-003", "breast cancer", "trastuzumab deruxtecan"),
    ],
)
def test_guidelines_map_the_documented_diagnosis_and_biomarker_to_a_rule(
    patient_id: str, condition: str, prior: str
) -> None:
    answer = _agent_message(_ask("What are the next steps?", patient_id))
    sources = _sources(patient_id).lower()
    (call,) = answer.tool_calls
    assert call.arguments["condition"] == condition and condition in sources
    assert all(word.lower() in sources for word in str(call.arguments["biomarker"]).split())
    assert prior in call.result["prior_therapies"]
    assert all(therapy in sources for therapy in call.result["prior_therapies"])
    rule = next(r for r in tb.GUIDELINE_RULES if r[0] == condition and r[3] == prior)
    assert call.result["recommendation"] == rule[4] and rule[4] in answer.text


def test_guidelines_without_a_matching_rule_say_so(tmp_path: Path) -> None:
    shutil.copytree(PATIENTS / "tb-001", tmp_path / "patients" / "tb-001")
    pathology = tmp_path / "patients" / "tb-001" / "02_pathology_molecular_report.md"
    pathology.write_text(
        pathology.read_text(encoding="utf-8").replace("wildtype", "mutant"), encoding="utf-8"
    )
    conversation = _conversation("Next steps?", patient_id="tb-001")
    answer = _agent_message(tb.TumorBoardSystem(tmp_path)(conversation))
    assert "No rule" in answer.text and answer.tool_calls[0].result is None


# --- clarification and determinism -------------------------------------------------------


@pytest.mark.parametrize("request_text", ["Orchestrator: can you help?", "Hmm, and the other thing?", ""])
def test_an_unclear_request_gets_a_clarifying_question_and_no_agent(request_text: str) -> None:
    (message,) = _ask(request_text)
    assert message.speaker == "Orchestrator" and not message.tool_calls
    assert message.text.endswith("?") and "imaging" in message.text


def test_an_unknown_or_missing_patient_gets_a_question() -> None:
    (missing,) = _ask("Show me the timeline", patient_id=None)
    assert "patient id" in missing.text and "?" in missing.text and not missing.tool_calls
    (unknown,) = _ask("Show me the timeline of tb-009")
    assert "tb-009" in unknown.text and unknown.text.endswith("?")


def test_thanks_closes_without_an_agent() -> None:
    (message,) = _ask("Thanks, that's all.")
    assert message.speaker == "Orchestrator" and not message.tool_calls


def test_the_system_is_deterministic() -> None:
    texts = ("Summarise the history of tb-002", "What did the latest CT show?", "Next steps?")
    first = tb.TumorBoardSystem()(_conversation(*texts))
    second = tb.TumorBoardSystem(TUMOR_BOARD / "data")(_conversation(*texts))
    assert [m.model_dump() for m in first] == [m.model_dump() for m in second]
    assert _conversation(*texts).model_dump() == _conversation(*texts).model_dump()
