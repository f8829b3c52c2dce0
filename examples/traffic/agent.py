"""A small clinical tool-using agent on the ``openai`` client, instrumented for OpenTelemetry.

Two agents share one loop: ``Labs`` looks up laboratory results (``get_labs``), ``Pharmacy``
looks up medication lists and interactions (``get_medications``, ``check_interaction``). The
model calls are traced by the official OpenAI instrumentation
(``opentelemetry-instrumentation-openai-v2``: ``chat`` spans with the messages in their
attributes); the agent records its own ``invoke_agent`` span around each turn and an
``execute_tool`` span per tool call with the SDK's tracer, as the GenAI semantic conventions
name them. That is all clineval needs to rebuild the conversation, the agent of each turn and
the tool calls (docs/traces.md, "Instrumenting an agent").

The "model" is clineval's scripted OpenAI-compatible server (``clineval.testing.ScriptedServer``),
so the example needs no API key and no network: ``SCENARIOS`` says what it answers. Some
answers restate the tool result; others do not (a wrong value, a missed interaction, an added
drug), which is what the traffic's faithfulness scores should find.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Tracer

MODEL = "gpt-clinic"


@dataclass(frozen=True)
class Scenario:
    """One question to an agent: the tool call the model makes, the tool's result, the answer."""

    agent: str
    question: str
    tool: str
    arguments: dict[str, str]
    answer: str
    faithful: bool  # does the answer say only what the tool result says?


LABS: dict[tuple[str, str], str] = {
    ("0042", "potassium"): "Potassium 5.9 mmol/L (reference 3.5-5.1), drawn 2026-11-30 07:40.",
    ("0107", "hba1c"): "HbA1c 8.4 % (reference below 5.7), drawn 2026-11-28 09:15.",
    ("0311", "creatinine"): "Creatinine 1.9 mg/dL (reference 0.7-1.3), drawn 2026-11-29 06:30.",
}
MEDICATIONS: dict[str, str] = {
    "0042": "Active medications: lisinopril 20 mg daily, spironolactone 25 mg daily.",
    "0107": "Active medications: metformin 1000 mg twice daily.",
}
INTERACTIONS: dict[tuple[str, str], str] = {
    ("warfarin", "amiodarone"): "Warfarin and amiodarone: major interaction, amiodarone raises the INR.",
}


def get_labs(mrn: str, test: str) -> str:
    return LABS.get((mrn, test.lower()), f"No {test} result on file for MRN {mrn}.")


def get_medications(mrn: str) -> str:
    return MEDICATIONS.get(mrn, f"No active medications on file for MRN {mrn}.")


def check_interaction(drug_a: str, drug_b: str) -> str:
    key = (drug_a.lower(), drug_b.lower())
    found = INTERACTIONS.get(key) or INTERACTIONS.get(key[::-1])
    return found or f"No interaction listed for {drug_a} and {drug_b}."


TOOL_FUNCTIONS: dict[str, Callable[..., str]] = {
    "get_labs": get_labs,
    "get_medications": get_medications,
    "check_interaction": check_interaction,
}


def _tool(name: str, description: str, *params: str) -> Any:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {p: {"type": "string"} for p in params},
                "required": list(params),
            },
        },
    }


TOOLS: dict[str, list[Any]] = {
    "Labs": [_tool("get_labs", "Latest laboratory result of a patient.", "mrn", "test")],
    "Pharmacy": [
        _tool("get_medications", "Active medication list of a patient.", "mrn"),
        _tool("check_interaction", "Known interaction between two drugs.", "drug_a", "drug_b"),
    ],
}

SCENARIOS: list[Scenario] = [
    Scenario(
        "Labs",
        "What is the latest potassium of patient MRN 0042?",
        "get_labs",
        {"mrn": "0042", "test": "potassium"},
        "Potassium is 5.9 mmol/L (reference 3.5-5.1), drawn 2026-11-30 07:40.",
        faithful=True,
    ),
    Scenario(
        "Pharmacy",
        "Which medications is patient MRN 0042 taking?",
        "get_medications",
        {"mrn": "0042"},
        "The patient takes lisinopril 20 mg daily and spironolactone 25 mg daily.",
        faithful=True,
    ),
    Scenario(
        "Labs",
        "What was the last HbA1c of patient MRN 0107?",
        "get_labs",
        {"mrn": "0107", "test": "hba1c"},
        "HbA1c is 6.1 %, well within the target range.",
        faithful=False,
    ),
    Scenario(
        "Pharmacy",
        "Can patient MRN 0311 take amiodarone with warfarin?",
        "check_interaction",
        {"drug_a": "warfarin", "drug_b": "amiodarone"},
        "There is no known interaction between warfarin and amiodarone.",
        faithful=False,
    ),
    Scenario(
        "Labs",
        "What is the creatinine of patient MRN 0311?",
        "get_labs",
        {"mrn": "0311", "test": "creatinine"},
        "Creatinine is 1.9 mg/dL (reference 0.7-1.3), drawn 2026-11-29 06:30.",
        faithful=True,
    ),
    Scenario(
        "Pharmacy",
        "What does patient MRN 0107 take for diabetes?",
        "get_medications",
        {"mrn": "0107"},
        "The patient takes metformin 1000 mg twice daily and insulin glargine 20 units at night.",
        faithful=False,
    ),
]


def tool_result(scenario: Scenario) -> str:
    return TOOL_FUNCTIONS[scenario.tool](**scenario.arguments)


def script(scenarios: list[Scenario]) -> dict[str, Any]:
    """The scripted model's rules: once a scenario's tool result is in the conversation, its
    answer; before that (only the question), its tool call. Answers come first: the question
    is still in the history when the tool result is."""
    answers = [{"pattern": re.escape(tool_result(s)), "content": s.answer} for s in scenarios]
    calls = [
        {
            "pattern": re.escape(s.question),
            "tool_calls": [{"name": s.tool, "arguments": s.arguments, "id": f"call_{i:03d}"}],
        }
        for i, s in enumerate(scenarios)
    ]
    return {"rules": [*answers, *calls], "default": {"content": "I cannot help with that."}}


def instrument(provider: TracerProvider) -> OpenAIInstrumentor:
    """The official OpenAI instrumentation on `provider`, with message content in the span
    attributes in the latest GenAI conventions (what clineval reads)."""
    os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    instrumentor = OpenAIInstrumentor()  # type: ignore[no-untyped-call]
    instrumentor.instrument(tracer_provider=provider)
    return instrumentor


def run_turn(client: openai.OpenAI, tracer: Tracer, agent: str, conversation_id: str, question: str) -> str:
    """One turn of `agent`: the model asks for tools, the agent runs them, the model answers;
    all inside an ``invoke_agent`` span."""
    with tracer.start_as_current_span(
        f"invoke_agent {agent}",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": conversation_id,
            "gen_ai.provider.name": "openai",
        },
    ):
        messages: list[Any] = [{"role": "user", "content": question}]
        for _ in range(4):
            reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS[agent])
            message = reply.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                if call.type != "function":
                    continue
                with tracer.start_as_current_span(
                    f"execute_tool {call.function.name}",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": call.function.name,
                        "gen_ai.tool.call.id": call.id,
                        "gen_ai.tool.type": "function",
                        "gen_ai.tool.call.arguments": call.function.arguments,
                    },
                ) as span:
                    result = TOOL_FUNCTIONS[call.function.name](**json.loads(call.function.arguments))
                    span.set_attribute("gen_ai.tool.call.result", result)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return "I could not finish this request."
