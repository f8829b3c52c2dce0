"""Spans to conversations and cases, on hand-written spans with hand-worked expectations."""

from __future__ import annotations

import json
from typing import Any

from clineval.conversations.cases import conversation_of
from clineval.model.trace import SpanEvent, SpanRecord
from clineval.traces.assemble import SKIP_DUPLICATE, SKIP_NO_GENAI, assemble, cases_from_traffic

T1 = "1" * 32
T2 = "2" * 32
S = 1_000_000_000  # one second in ns
NOW = 1000 * S


def span(
    sid: int,
    name: str,
    start: float,
    end: float,
    *,
    trace: str = T1,
    parent: int | None = None,
    attrs: dict[str, Any] | None = None,
    events: tuple[SpanEvent, ...] = (),
    status: str = "unset",
) -> SpanRecord:
    return SpanRecord(
        trace_id=trace,
        span_id=f"{sid:016x}",
        parent_span_id=f"{parent:016x}" if parent is not None else None,
        name=name,
        start_time_unix_nano=int(start * S),
        end_time_unix_nano=int(end * S),
        attributes=attrs or {},
        events=events,
        status=status,
    )


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


CALL = {"type": "tool_call", "id": "call_1", "name": "get_labs", "arguments": {"patient_id": "p7"}}
RESULT = "potassium 5.9 mmol/L"
ANSWER = "Potassium is high at 5.9 mmol/L."


def single_agent_current() -> list[SpanRecord]:
    """(a) one agent: a chat call asks for a tool, the tool runs, a second chat call answers."""
    user = text("user", "What is the potassium of p7?")
    ask = {"role": "assistant", "parts": [CALL]}
    tool_msg = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": RESULT}]}
    common = {"gen_ai.conversation.id": "conv-a", "gen_ai.request.model": "m-1"}
    return [
        span(
            1,
            "invoke_agent Labs",
            100,
            104,
            attrs={**common, "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Labs"},
        ),
        span(
            2,
            "chat m-1",
            100.5,
            101,
            parent=1,
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m-1",
                "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "You read labs."}]),
                "gen_ai.input.messages": json.dumps([user]),
                "gen_ai.output.messages": json.dumps([ask]),
                "gen_ai.usage.input_tokens": 20,
                "gen_ai.usage.output_tokens": 5,
            },
        ),
        span(
            3,
            "execute_tool get_labs",
            101.2,
            101.7,
            parent=1,
            attrs={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_labs",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": '{"patient_id": "p7"}',
                "gen_ai.tool.call.result": RESULT,
            },
        ),
        span(
            4,
            "chat m-1",
            102,
            103.5,
            parent=1,
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.response.model": "m-1-2025",
                "gen_ai.input.messages": json.dumps([user, ask, tool_msg]),  # history re-sent
                "gen_ai.output.messages": json.dumps(
                    [{**text("assistant", ANSWER), "finish_reason": "stop"}]
                ),
                "gen_ai.usage.input_tokens": 40,
                "gen_ai.usage.output_tokens": 12,
            },
        ),
    ]


def test_single_agent_current_form() -> None:
    traffic = assemble(single_agent_current(), idle_seconds=60, now_ns=NOW)
    assert traffic.pending == [] and traffic.skipped == {} and traffic.spans_read == 4
    (conv,) = traffic.conversations
    assert conv.id == "conv-a"
    assert [(m.role, m.speaker, m.text) for m in conv.messages] == [
        ("system", "system", "You read labs."),
        ("user", "user", "What is the potassium of p7?"),
        ("assistant", "Labs", ""),
        ("tool", "tool", RESULT),
        ("assistant", "Labs", ANSWER),
    ]
    call = conv.messages[2].tool_calls[0]
    assert (call.id, call.name, call.arguments, call.result) == (
        "call_1",
        "get_labs",
        {"patient_id": "p7"},
        RESULT,
    )
    assert conv.messages[3].tool_call_id == "call_1"
    final = conv.messages[4]
    assert final.usage is not None and (final.usage.prompt_tokens, final.usage.completion_tokens) == (40, 12)
    assert final.metadata["model"] == "m-1-2025" and final.metadata["latency_s"] == 1.5
    assert conv.metadata["trace_ids"] == [T1]
    assert conv.metadata["usage"] == {"input_tokens": 60, "output_tokens": 17}
    assert conv.metadata["latency_s"] == 4.0

    (case,) = cases_from_traffic(traffic)
    assert case.id == "conv-a"
    assert case.input == "What is the potassium of p7?"
    assert case.response == ANSWER
    assert [(c.name, c.arguments, c.output, c.id) for c in case.trajectory or []] == [
        ("get_labs", {"patient_id": "p7"}, RESULT, "call_1")
    ]
    assert case.contexts == [RESULT]  # no retrieval recorded: the tool result grounds the answer
    assert case.metadata["contexts_source"] == "tool_results"
    assert case.metadata["agent"] == "Labs" and case.metadata["model"] == "m-1-2025"
    assert case.metadata["tokens"] == {"input_tokens": 60, "output_tokens": 17}
    assert case.metadata["trace_ids"] == [T1] and case.metadata["conversation_id"] == "conv-a"
    assert case.agent_run is not None and case.agent_run.latency_s == 4.0 and not case.agent_run.failed
    # the conversation's first span started at 100 s, its last ended at 104 s (the Traffic page's days)
    assert (case.metadata["started"], case.metadata["ended"]) == (
        "1970-01-01T00:01:40+00:00",
        "1970-01-01T00:01:44+00:00",
    )
    restored = conversation_of(case)
    assert restored is not None and len(restored.messages) == 5


def test_older_event_form_gives_the_same_conversation() -> None:
    def event(name: str, body: dict[str, Any], at: float) -> SpanEvent:
        return SpanEvent(
            name=name, time_unix_nano=int(at * S), attributes={"gen_ai.event.content": json.dumps(body)}
        )

    old_call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_labs", "arguments": '{"patient_id": "p7"}'},
    }
    spans = [
        span(
            2,
            "chat m-1",
            100.5,
            101,
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.system": "openai",
                "gen_ai.usage.input_tokens": 20,
            },
            events=(
                event("gen_ai.system.message", {"content": "You read labs."}, 100.5),
                event("gen_ai.user.message", {"content": "What is the potassium of p7?"}, 100.5),
                event(
                    "gen_ai.choice",
                    {"index": 0, "finish_reason": "tool_calls", "message": {"tool_calls": [old_call]}},
                    101,
                ),
            ),
        ),
        span(
            4,
            "chat m-1",
            102,
            103.5,
            attrs={"gen_ai.operation.name": "chat", "gen_ai.agent.name": "Labs"},
            events=(
                event("gen_ai.system.message", {"content": "You read labs."}, 102),
                event("gen_ai.user.message", {"content": "What is the potassium of p7?"}, 102),
                event("gen_ai.assistant.message", {"tool_calls": [old_call]}, 102),
                event("gen_ai.tool.message", {"content": RESULT, "id": "call_1"}, 102),
                event(
                    "gen_ai.choice",
                    {"index": 0, "finish_reason": "stop", "message": {"content": ANSWER}},
                    103.5,
                ),
            ),
        ),
    ]
    (conv,) = assemble(spans, idle_seconds=60, now_ns=NOW).conversations
    assert conv.id == T1  # no conversation id: the trace is the conversation
    assert [(m.role, m.speaker, m.text) for m in conv.messages] == [
        ("system", "system", "You read labs."),
        ("user", "user", "What is the potassium of p7?"),
        ("assistant", "assistant", ""),  # the first call names no agent
        ("tool", "tool", RESULT),
        ("assistant", "Labs", ANSWER),
    ]
    assert conv.messages[2].tool_calls[0].arguments == {"patient_id": "p7"}
    assert conv.messages[2].tool_calls[0].result == RESULT


def test_two_agents_in_two_traces_share_a_conversation() -> None:
    cid = {"gen_ai.conversation.id": "conv-c"}
    q1, a1 = text("user", "Summarise p7's labs."), text("assistant", "Potassium 5.9, creatinine 1.1.")
    q2, a2 = text("user", "Any trial for hyperkalaemia?"), text("assistant", "Trial NCT-1 fits.")
    spans = [
        span(
            1,
            "invoke_agent Orchestrator",
            10,
            14,
            trace=T1,
            attrs={**cid, "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Orchestrator"},
        ),
        span(
            2,
            "invoke_agent Labs",
            10.5,
            13.5,
            trace=T1,
            parent=1,
            attrs={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Labs"},
        ),
        span(
            3,
            "chat m",
            11,
            13,
            trace=T1,
            parent=2,
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([q1]),
                "gen_ai.output.messages": json.dumps([a1]),
            },
        ),
        span(
            5,
            "invoke_agent Trials",
            20,
            24,
            trace=T2,
            attrs={**cid, "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Trials"},
        ),
        span(
            6,
            "chat m",
            21,
            23,
            trace=T2,
            parent=5,
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([q1, a1, q2]),
                "gen_ai.output.messages": json.dumps([a2]),
            },
        ),
    ]
    traffic = assemble(spans, idle_seconds=60, now_ns=NOW)
    (conv,) = traffic.conversations
    assert conv.id == "conv-c" and conv.metadata["trace_ids"] == [T1, T2]
    assert [(m.role, m.speaker) for m in conv.messages] == [
        ("user", "user"),
        ("assistant", "Labs"),  # the nearest enclosing invoke_agent answers, not the orchestrator
        ("user", "user"),
        ("assistant", "Trials"),
    ]
    assert conv.agents == ["Labs", "Trials"]
    turns = cases_from_traffic(traffic, per_turn=True)
    assert [(c.id, c.input, c.response, c.metadata["agent"]) for c in turns] == [
        ("conv-c#turn1", "Summarise p7's labs.", "Potassium 5.9, creatinine 1.1.", "Labs"),
        ("conv-c#turn2", "Any trial for hyperkalaemia?", "Trial NCT-1 fits.", "Trials"),
    ]
    assert turns[0].agent_run is not None and turns[0].agent_run.latency_s == 2.0  # 11 s to 13 s
    assert (turns[0].metadata["started"], turns[0].metadata["ended"]) == (
        "1970-01-01T00:00:11+00:00",
        "1970-01-01T00:00:13+00:00",
    )
    first = conversation_of(turns[0])
    assert first is not None and len(first.messages) == 2


def test_a_conversation_still_receiving_spans_is_pending() -> None:
    spans = single_agent_current()
    traffic = assemble(spans, idle_seconds=60, now_ns=int(130 * S))  # last span ended at 104 s
    assert traffic.conversations == []
    (pending,) = traffic.pending
    assert (pending.id, pending.trace_ids, pending.spans, pending.idle_s) == ("conv-a", [T1], 4, 26.0)
    assert len(assemble(spans, idle_seconds=60, now_ns=int(164 * S)).conversations) == 1


def test_spans_without_genai_attributes_and_duplicates_are_counted() -> None:
    spans = [
        *single_agent_current(),
        span(9, "GET /health", 1, 2, trace=T2, attrs={"http.request.method": "GET"}),
        span(10, "db.query", 3, 4, trace=T2),
        single_agent_current()[1],  # the same span exported twice
    ]
    traffic = assemble(spans, idle_seconds=60, now_ns=NOW)
    assert traffic.spans_read == 7
    assert traffic.skipped == {SKIP_NO_GENAI: 2, SKIP_DUPLICATE: 1}
    assert len(traffic.conversations) == 1 and len(traffic.conversations[0].messages) == 5


def test_resent_history_is_not_duplicated_but_a_repeated_message_is_kept() -> None:
    yes, ok = text("user", "yes"), text("assistant", "Done.")
    ask = text("assistant", "Order the potassium recheck?")
    spans = [
        span(
            1,
            "chat m",
            1,
            2,
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([text("user", "Recheck labs")]),
                "gen_ai.output.messages": json.dumps([ask]),
            },
        ),
        span(
            2,
            "chat m",
            3,
            4,
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([text("user", "Recheck labs"), ask, yes]),
                "gen_ai.output.messages": json.dumps([ask]),
            },
        ),
        span(
            3,
            "chat m",
            5,
            6,
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([text("user", "Recheck labs"), ask, yes, ask, yes]),
                "gen_ai.output.messages": json.dumps([ok]),
            },
        ),
    ]
    (conv,) = assemble(spans, idle_seconds=0, now_ns=NOW).conversations
    assert [m.text for m in conv.messages] == [
        "Recheck labs",
        "Order the potassium recheck?",
        "yes",
        "Order the potassium recheck?",
        "yes",
        "Done.",
    ]


def test_errors_and_retrieved_documents() -> None:
    spans = [
        span(
            1,
            "chat m",
            1,
            2,
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([text("user", "Dose of apixaban?")]),
                "gen_ai.output.messages": json.dumps([text("assistant", "5 mg twice daily.")]),
            },
        ),
        span(
            2,
            "retrieve guidelines",
            0.5,
            0.9,
            attrs={
                "openinference.span.kind": "RETRIEVER",
                "retrieval.documents.1.document.content": "B",
                "retrieval.documents.0.document.content": "A",
            },
        ),
        span(
            3,
            "execute_tool renal",
            1.2,
            1.3,
            attrs={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "renal",
                "error.type": "timeout",
            },
            status="error",
        ),
    ]
    traffic = assemble(spans, idle_seconds=0, now_ns=NOW)
    (conv,) = traffic.conversations
    retrieved = conv.metadata["retrieved"]
    assert isinstance(retrieved, list)
    assert [r["text"] for r in retrieved if isinstance(r, dict)] == ["A", "B"]
    (case,) = cases_from_traffic(traffic)
    assert case.contexts == ["A", "B"] and case.metadata["contexts_source"] == "retrieval"
    errors = case.metadata["errors"]
    assert isinstance(errors, list)
    assert [e["error"] for e in errors if isinstance(e, dict)] == ["timeout"]
    assert case.agent_run is not None and not case.agent_run.failed  # it answered despite the error
    assert case.trajectory is not None and case.trajectory[0].name == "renal"
