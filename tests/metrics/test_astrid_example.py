"""Conversational faithfulness (CF) and RAGAS-style faithfulness on the example ASTRID
(Chowdhury et al.) uses to show the limits of RAGAS, with a leaflet written for this test.

What ASTRID says, and what is checked here:

* a bare "Yes, that would be ok." is a clinically meaningful answer (2.2.1): CF counts it
  as an informative sentence and grounds it as the answer it gives to the question;
* merging a short answer with the question makes a self-contained statement, which works
  when the question is accurate (figure 6): on the bare example both metrics agree;
* acknowledgements, empathy and follow-up questions become statements the context cannot
  support, which RAGAS-style faithfulness penalises and CF does not (figure 9);
* merging carries the question's own inaccuracies into a statement (figure 8): the answer
  is faithful, its merged statement is not.

With the offline judge only clear-cut texts are scored (the leaflet states what the answer
says); exact values come from scripted LLM answers through the local OpenAI-compatible
server.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from clineval import evaluate
from clineval.model import Score
from clineval.testing import ScriptedServer

QUESTION = "I put my medication in the fridge by accident, is it still safe to use?"
ANSWER = (
    "Yes, that would be ok. "
    "However, it is best stored above 0 degrees, in a cool place away from direct sunlight."
)
# A patient leaflet's storage section, written for this test.
LEAFLET = (
    "Storing your medicine: store it above 0 degrees, in a cool place away from direct sunlight, "
    "and out of the reach of children. If you have put your medicine in the fridge by accident, "
    "it is still safe to use, as long as it has not frozen. Do not use it if it has been frozen."
)
# The same storage advice from a leaflet that says the opposite about the fridge.
OPPOSITE_LEAFLET = (
    "Storing your medicine: store it above 0 degrees, in a cool place away from direct sunlight. "
    "If your medicine has been in the fridge, it is not safe to use: return it to the pharmacy."
)
ACK = "I'm sorry to hear about the mix-up."
FOLLOW_UP = "Do you know whether it froze?"
CONVERSATIONAL = f"{ACK} {ANSWER} {FOLLOW_UP}"
# The question carries a mistake of the patient's own (the pharmacist said nothing of the sort).
PREMISE_QUESTION = (
    "My pharmacist told me to keep my medication in the freezer, but I put it in the fridge by accident. "
    "Is it still safe to use?"
)
METRICS = ["conversational_faithfulness", "faithfulness"]


def cases() -> list[dict[str, Any]]:
    return [
        {"id": "bare", "input": QUESTION, "response": ANSWER, "contexts": [LEAFLET]},
        {"id": "conversational", "input": QUESTION, "response": CONVERSATIONAL, "contexts": [LEAFLET]},
        {"id": "premise", "input": PREMISE_QUESTION, "response": ANSWER, "contexts": [LEAFLET]},
        {"id": "opposite", "input": QUESTION, "response": ANSWER, "contexts": [OPPOSITE_LEAFLET]},
    ]


def scores(judge: str, store: Path) -> dict[tuple[str, str], Score]:
    result = evaluate(cases(), METRICS, judge=judge, store=store, progress=False)
    return {(r.case_id, r.metric): r.score for r in result.results}


# --- the offline judge ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Score]:
    return scores("offline", tmp_path_factory.mktemp("astrid-offline") / "runs.db")


def test_offline_cf_credits_a_grounded_bare_yes(offline: dict[tuple[str, str], Score]) -> None:
    cf = offline["bare", "conversational_faithfulness"]
    assert [r["kind"] for r in cf.details["sentences"]] == ["informative", "informative"]
    first = cf.details["sentences"][0]
    assert first["label"] == "entailed", first["explanation"]
    assert "read as a reply to the question" in first["explanation"]
    assert cf.value == 1.0, cf.explanation
    # figure 6: the statement merged with an accurate question is supported too; they agree
    faithfulness = offline["bare", "faithfulness"]
    merged = faithfulness.details["statements"][0]["statement"]
    assert "fridge by accident" in merged and "safe to use" in merged
    assert faithfulness.value == 1.0, faithfulness.explanation


def test_offline_conversational_elements_are_penalised_by_ragas_only(
    offline: dict[tuple[str, str], Score],
) -> None:
    cf = offline["conversational", "conversational_faithfulness"]
    assert [r["kind"] for r in cf.details["sentences"]] == [
        "acknowledgement",
        "informative",
        "informative",
        "question",
    ]
    assert cf.value == 1.0, cf.explanation
    faithfulness = offline["conversational", "faithfulness"]
    unsupported = [r["statement"] for r in faithfulness.details["statements"] if r["label"] != "entailed"]
    assert ACK in unsupported and f"The assistant asks: {FOLLOW_UP}" in unsupported
    assert faithfulness.value is not None and faithfulness.value < cf.value


def test_offline_merged_statement_carries_the_question_premise(offline: dict[tuple[str, str], Score]) -> None:
    # what RAGAS-style faithfulness checks includes the patient's mistake; what CF checks does not
    merged = offline["premise", "faithfulness"].details["statements"][0]["statement"]
    assert "pharmacist" in merged and "freezer" in merged
    cf_first = offline["premise", "conversational_faithfulness"].details["sentences"][0]
    assert "read as a reply to the question: 'It is still safe to use.'" in cf_first["explanation"]
    assert cf_first["label"] == "entailed", cf_first["explanation"]


def test_offline_cf_does_not_credit_a_yes_the_leaflet_contradicts(
    offline: dict[tuple[str, str], Score],
) -> None:
    cf = offline["opposite", "conversational_faithfulness"]
    first = cf.details["sentences"][0]
    assert first["kind"] == "informative" and first["label"] != "entailed", first["explanation"]
    assert cf.value is not None and cf.value < 1.0


# --- an LLM judge through the local OpenAI-compatible server ----------------------------------------

# Phrases of the packaged prompts' system messages, to route each request.
SENTENCE_TYPES = "You sort the sentences of an answer"
GROUNDING = "answer are grounded in the"
STATEMENTS = "as a list of statements"
ENTAILMENT = "You check facts against a text"

MERGED = "Medication put in the fridge by accident is still safe to use."
STORAGE = "Medication is best stored above 0 degrees, in a cool place away from direct sunlight."
THANKS = "The assistant is sorry to hear about the mix-up."
ASKS = "The assistant asks whether the medication froze."
PREMISE_MERGED = (
    "Medication that a pharmacist said to keep in the freezer and that was put in the fridge by accident "
    "is still safe to use."
)


def _in(*parts: str) -> str:
    """A pattern matching a request whose messages hold every part, in order."""
    return "(?s)" + ".*".join(re.escape(p) if i else p for i, p in enumerate(parts))


def _kinds(*kinds: str) -> dict[str, Any]:
    return {"sentences": [{"id": i, "kind": k} for i, k in enumerate(kinds, start=1)]}


def _verdicts(*labels: str) -> dict[str, Any]:
    rows = []
    for i, label in enumerate(labels, start=1):
        supported = label == "entailed"
        rows.append(
            {
                "id": i,
                "label": label,
                "reason": None if supported else "missing",
                "evidence": "it is still safe to use" if supported else "",
                "explanation": "stated in the leaflet" if supported else "the leaflet says nothing of it",
            }
        )
    return {"verdicts": rows}


SCRIPT: dict[str, Any] = {
    "rules": [
        # sentence kinds: the conversational answer has an acknowledgement and a question
        {
            "pattern": _in(SENTENCE_TYPES, f"[1] {ACK}"),
            "json": _kinds("acknowledgement", *["informative"] * 2, "question"),
        },
        {"pattern": SENTENCE_TYPES, "json": _kinds("informative", "informative")},
        # CF grounding sees the question: the reply "Yes, that would be ok." is grounded in every case
        {"pattern": _in(GROUNDING, "## What the user asked"), "json": _verdicts("entailed", "entailed")},
        # RAGAS-style statements, built from every part of the answer with the question
        {"pattern": _in(STATEMENTS, "My pharmacist"), "json": {"statements": [PREMISE_MERGED, STORAGE]}},
        {"pattern": _in(STATEMENTS, ACK), "json": {"statements": [THANKS, MERGED, STORAGE, ASKS]}},
        {"pattern": STATEMENTS, "json": {"statements": [MERGED, STORAGE]}},
        # support of each statement by the leaflet
        {"pattern": _in(ENTAILMENT, PREMISE_MERGED), "json": _verdicts("not_entailed", "entailed")},
        {
            "pattern": _in(ENTAILMENT, THANKS),
            "json": _verdicts("not_entailed", "entailed", "entailed", "not_entailed"),
        },
        {"pattern": ENTAILMENT, "json": _verdicts("entailed", "entailed")},
    ]
}


def test_llm_judge_cf_and_faithfulness_differ_where_astrid_says(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    llm_server.set_script(SCRIPT)
    s = scores(f"openai:judge@{llm_server.base_url}", tmp_path / "runs.db")
    value = {key: score.value for key, score in s.items()}
    # figure 6: the bare example, an accurate question: both 1
    assert value["bare", "conversational_faithfulness"] == 1.0
    assert value["bare", "faithfulness"] == 1.0
    # figure 9: acknowledgement and follow-up question: CF 2/2, faithfulness 2/4
    assert value["conversational", "conversational_faithfulness"] == 1.0
    assert value["conversational", "faithfulness"] == 0.5
    # figure 8: the merged statement carries the patient's mistake: CF 2/2, faithfulness 1/2
    assert value["premise", "conversational_faithfulness"] == 1.0
    assert value["premise", "faithfulness"] == 0.5
    # the CF grounding request carried the question and the bare reply, numbered
    grounding = [
        r["body"]["messages"][-1]["content"]
        for r in llm_server.requests()
        if "answer are grounded in the" in r["body"]["messages"][0]["content"]
    ]
    assert any(
        m.startswith(f"## What the user asked\n{QUESTION}") and "[1] Yes, that would be ok." in m
        for m in grounding
    )
    assert any(m.startswith(f"## What the user asked\n{PREMISE_QUESTION}") for m in grounding)
    cf = s["conversational", "conversational_faithfulness"]
    assert cf.details["counts"] == {"acknowledgement": 1, "question": 1, "informative": 2}
    assert s["conversational", "faithfulness"].explanation == (
        f"2 of 4 statement(s) supported by the context; unsupported: {THANKS} | {ASKS}"
    )
