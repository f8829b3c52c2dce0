"""Agent segments and user turns."""

from __future__ import annotations

import pytest

from clineval.conversations.model import Conversation, Message, ToolCallRecord
from clineval.conversations.segments import agent_segments, user_turns


def user(text: str, gold: str | None = None) -> Message:
    return Message(role="user", speaker="user", text=text, gold_agent=gold)


def agent(name: str, text: str = "", calls: list[ToolCallRecord] | None = None) -> Message:
    return Message(role="assistant", speaker=name, text=text, tool_calls=calls or [])


def tool(call_id: str | None, text: str) -> Message:
    return Message(role="tool", speaker="tool", text=text, tool_call_id=call_id)


def conversation() -> Conversation:
    """0 user, 1 Orch, 2 PH(call), 3 tool, 4 PH, 5 Orch, 6 user, 7 Orch, 8 PH, 9 user, 10 Rad."""
    return Conversation(
        id="c",
        messages=[
            user("Orchestrator: timeline for patient_4", gold="Orchestrator"),
            agent("Orchestrator", "PatientHistory, please build the timeline."),
            agent(
                "PatientHistory",
                "Loading.",
                [
                    ToolCallRecord(
                        id="c1", name="load_patient_data", arguments={"patient_id": "p4"}, result="12 notes"
                    )
                ],
            ),
            tool("c1", "12 notes"),
            agent("PatientHistory", "Timeline: 2019 GBM."),
            agent("Orchestrator", "Anything else?"),
            user("PatientHistory: add medications", gold="PatientHistory"),
            agent("Orchestrator", "PatientHistory?"),
            agent("patienthistory", "Meds: TMZ."),
            user("Radiology: latest MRI"),
            agent("Radiology", "Stable."),
        ],
    )


def test_runs_fold_consecutive_messages_and_tool_results() -> None:
    segments = agent_segments(conversation(), "PatientHistory")
    assert len(segments) == 2
    first, second = segments
    assert [m.text for m in first.response] == ["Loading.", "12 notes", "Timeline: 2019 GBM."]
    assert (first.start, first.end, first.index) == (2, 5, 0)
    assert [m.text for m in second.response] == ["Meds: TMZ."]  # case-insensitive name
    assert second.index == 1
    assert first.response_text == (
        "Loading.\n"
        '[tool call load_patient_data({"patient_id": "p4"})]\n'
        "[tool result load_patient_data: 12 notes]\n\n"
        "Timeline: 2019 GBM."
    )
    assert first.answer_text == "Loading.\n\nTimeline: 2019 GBM."  # the agent's own words only


@pytest.mark.parametrize(
    ("window", "first_context", "second_context"),
    [
        (0, [], []),
        (2, [0, 1], [6, 7]),
        # 5 would reach back to message 3 for the second segment: it stops at the end of
        # the first segment (message 5 is the first one after it).
        (5, [0, 1], [5, 6, 7]),
    ],
)
def test_context_window(window: int, first_context: list[int], second_context: list[int]) -> None:
    conv = conversation()
    first, second = agent_segments(conv, "PatientHistory", context_window=window)
    positions = {id(m): i for i, m in enumerate(conv.messages)}
    assert [positions[id(m)] for m in first.context] == first_context
    assert [positions[id(m)] for m in second.context] == second_context


def test_request_and_transcript() -> None:
    first, second = agent_segments(conversation(), "PatientHistory", context_window=2)
    assert first.request == "Orchestrator: timeline for patient_4"
    assert second.request == "PatientHistory: add medications"
    transcript = second.transcript()
    assert transcript.startswith("user (user):\nPatientHistory: add medications")
    assert transcript.endswith("patienthistory (assistant):\nMeds: TMZ.")
    (no_context,) = agent_segments(conversation(), "Radiology", context_window=0)
    assert no_context.context == []
    assert no_context.request == ""


def test_agent_that_never_speaks_has_no_segments() -> None:
    assert agent_segments(conversation(), "ClinicalTrials") == []
    assert agent_segments(conversation(), "user") == []  # only assistant messages count


def test_tool_message_for_another_call_ends_the_run() -> None:
    conv = Conversation(
        id="t",
        messages=[
            user("go"),
            agent("A", calls=[ToolCallRecord(id="a1", name="f")]),
            tool("a1", "fa"),
            tool("zz", "someone else's"),
            agent("A", "done"),
        ],
    )
    first, second = agent_segments(conv, "a", context_window=1)
    assert [m.text for m in first.response] == ["", "fa"]
    assert first.response_text == "[tool call f({})]\n\n[tool result: fa]"  # result not on the call
    assert [m.text for m in second.context] == ["someone else's"]


def test_tool_message_without_id_folds_after_a_call() -> None:
    conv = Conversation(
        id="t",
        messages=[agent("A", calls=[ToolCallRecord(name="f")]), tool(None, "out"), agent("B", "x")],
    )
    (segment,) = agent_segments(conv, "A")
    assert [m.role for m in segment.response] == ["assistant", "tool"]


def test_negative_window_is_refused() -> None:
    with pytest.raises(ValueError, match="context_window"):
        agent_segments(conversation(), "A", context_window=-1)


def test_user_turns() -> None:
    turns = user_turns(conversation())
    assert [t.index for t in turns] == [0, 1, 2]
    assert [t.position for t in turns] == [0, 6, 9]
    assert turns[0].agents == ["Orchestrator", "PatientHistory"]
    assert turns[0].first_agent == "Orchestrator"
    assert turns[0].gold_agent == "Orchestrator"
    assert len(turns[0].responses) == 5
    assert turns[1].agents == ["Orchestrator", "patienthistory"]
    assert turns[2].agents == ["Radiology"]
    assert turns[2].gold_agent is None


def test_user_turn_without_answer() -> None:
    conv = Conversation(id="u", messages=[agent("Orchestrator", "hello"), user("hi"), user("still there?")])
    turns = user_turns(conv)
    assert [(t.position, t.agents, t.first_agent) for t in turns] == [(1, [], None), (2, [], None)]
