"""The quickstart's patient questions: CF and RAGAS-style faithfulness differ where ASTRID
(Chowdhury et al.) says they should, run end to end through ``clineval run``.

The example agent answers conversationally: "Thank you for your question.", one to three
sentences copied from the leaflet passage it retrieved, and (unless urgent) "Is there
anything else about your recovery I can help with?". CF sets the acknowledgement and the
follow-up question aside; RAGAS-style faithfulness turns them into statements the leaflet
cannot support (ASTRID figure 9), so on every answered question it is below CF.

With the offline judge only what holds for any sound judge is checked; with scripted
answers from an LLM judge through the local OpenAI-compatible server the values are exact.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.clirun import invoke

from clineval import load_run
from clineval.model import Score
from clineval.nlp.sentences import split_sentences
from clineval.testing import ScriptedServer

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


def _agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("quickstart_agent_astrid", QUICKSTART / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


AGENT = _agent()
QUESTIONS = {
    row["id"]: row["input"]
    for row in map(json.loads, (QUICKSTART / "qa_cases.jsonl").read_text(encoding="utf-8").splitlines())
}
OUTPUTS = {cid: AGENT.run_agent(question) for cid, question in QUESTIONS.items()}
DECLINED = {cid for cid, out in OUTPUTS.items() if out["response"] == AGENT.DECLINE}
ANSWERED = sorted(set(QUESTIONS) - DECLINED)
URGENT = {"qa-009"}  # answered without the follow-up question (see the agent)


def run_patient_qa(tmp_path: Path, *options: str) -> dict[tuple[str, str], Score]:
    store = tmp_path / "runs.db"
    done = invoke("run", str(QUICKSTART / "patient_qa.yaml"), "--store", str(store), "-q", *options)
    assert done.exit_code == 0, done.output
    result = load_run("latest", store=store)
    return {(r.case_id, r.metric): r.score for r in result.results}


def test_the_agent_answers_seven_questions_and_declines_three() -> None:
    assert {"qa-004", "qa-007", "qa-008"} == DECLINED
    for cid in ANSWERED:
        response = OUTPUTS[cid]["response"]
        assert response.startswith(AGENT.ACKNOWLEDGEMENT), cid
    assert {cid for cid in ANSWERED if AGENT.FOLLOW_UP not in OUTPUTS[cid]["response"]} == URGENT


# --- the offline judge ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Score]:
    return run_patient_qa(tmp_path_factory.mktemp("patient-qa-offline"))


@pytest.mark.parametrize("cid", ANSWERED)
def test_offline_ragas_style_faithfulness_is_below_cf_on_every_answer(
    offline: dict[tuple[str, str], Score], cid: str
) -> None:
    cf = offline[cid, "conversational_faithfulness"]
    faithfulness = offline[cid, "faithfulness"]
    assert cf.status == "scored" and faithfulness.status == "scored", (cf.error, faithfulness.error)
    kinds = [r["kind"] for r in cf.details["sentences"]]
    assert kinds[0] == "acknowledgement"
    unsupported = [r["statement"] for r in faithfulness.details["statements"] if r["label"] != "entailed"]
    assert AGENT.ACKNOWLEDGEMENT in unsupported  # the acknowledgement became a statement
    follows_up = cid not in URGENT
    assert (AGENT.FOLLOW_UP in OUTPUTS[cid]["response"]) == follows_up
    assert (kinds[-1] == "question") == follows_up, kinds
    assert (f"The assistant asks: {AGENT.FOLLOW_UP}" in unsupported) == follows_up, unsupported
    assert faithfulness.value is not None and cf.value is not None
    assert faithfulness.value < cf.value, (cf.explanation, faithfulness.explanation)


@pytest.mark.parametrize("cid", sorted(DECLINED))
def test_offline_declines_have_no_informative_sentence_but_make_statements(
    offline: dict[tuple[str, str], Score], cid: str
) -> None:
    cf = offline[cid, "conversational_faithfulness"]
    assert cf.status == "not_applicable" and "no informative sentence" in (cf.explanation or "")
    assert offline[cid, "faithfulness"].status == "scored"
    relevance = offline[cid, "answer_relevance"]
    assert (relevance.value, relevance.label) == (0.0, "noncommittal")


def test_offline_answer_relevance_finds_the_off_topic_answer(offline: dict[tuple[str, str], Score]) -> None:
    # qa-005 (swimming) is answered from the drop-storage passage: faithful to what was
    # retrieved (CF), but not an answer to the question
    values = {cid: offline[cid, "answer_relevance"].value for cid in ANSWERED}
    assert all(
        offline[cid, "answer_relevance"].details["method"] == "question_answer_similarity" for cid in ANSWERED
    )
    assert min(values, key=lambda cid: values[cid] or 0.0) == "qa-005", values
    assert offline["qa-005", "conversational_faithfulness"].value == 1.0


# --- an LLM judge through the local OpenAI-compatible server ---------------------------------------

SENTENCE_TYPES = "You sort the sentences of an answer"
GROUNDING = "answer are grounded in the"
STATEMENTS = "as a list of statements"
ENTAILMENT = "You check facts against a text"
THANKS = "The assistant thanks the user for the question."
OFFERS = "The assistant asks whether there is anything else about the recovery it can help with."
CANNOT = "The assistant cannot advise on that."
CONTACT = "The user should contact the care team."


def _in(*parts: str) -> str:
    return "(?s)" + ".*".join(re.escape(p) for p in parts)


def _copied(text: str, contexts: list[str]) -> bool:
    """The scripted judge's rule: grounded exactly when copied from a retrieved passage (the
    agent copies leaflet sentences; the stale quick answer of qa-002 is in no passage)."""
    return any(text in context for context in contexts)


def _verdicts(texts: list[str], contexts: list[str]) -> dict[str, Any]:
    return {
        "verdicts": [
            {
                "id": i,
                "label": "entailed" if _copied(t, contexts) else "not_entailed",
                "reason": None if _copied(t, contexts) else "missing",
                "evidence": t if _copied(t, contexts) else "",
                "explanation": "copied from a passage" if _copied(t, contexts) else "in no passage",
            }
            for i, t in enumerate(texts, start=1)
        ]
    }


def scripted_judgements(cid: str) -> tuple[list[dict[str, Any]], float, float]:
    """Rules answering every request of one case as a careful LLM judge would, and the CF
    and faithfulness values they give."""
    question, out = QUESTIONS[cid], OUTPUTS[cid]
    contexts: list[str] = out["contexts"]
    sentences = split_sentences(out["response"])
    kinds = [
        "acknowledgement" if s == AGENT.ACKNOWLEDGEMENT else "question" if s.endswith("?") else "informative"
        for s in sentences
    ]
    informative = [s for s, k in zip(sentences, kinds, strict=True) if k == "informative"]
    statements: list[str] = []
    for sentence in sentences:
        if sentence == AGENT.ACKNOWLEDGEMENT:
            statements.append(THANKS)
        elif sentence == AGENT.FOLLOW_UP:
            statements.append(OFFERS)
        elif sentence == AGENT.DECLINE:
            statements += [CANNOT, CONTACT]
        else:
            statements.append(sentence)
    rules = [
        {
            "pattern": _in(SENTENCE_TYPES, question),
            "json": {"sentences": [{"id": i, "kind": k} for i, k in enumerate(kinds, 1)]},
        },
        {"pattern": _in(GROUNDING, question), "json": _verdicts(informative, contexts)},
        {"pattern": _in(STATEMENTS, question), "json": {"statements": statements}},
        {"pattern": _in(ENTAILMENT, *statements), "json": _verdicts(statements, contexts)},
    ]
    cf = sum(_copied(s, contexts) for s in informative) / len(informative)
    faithfulness = sum(_copied(s, contexts) for s in statements) / len(statements)
    return rules, cf, faithfulness


def test_llm_judge_cf_and_faithfulness_through_the_cli(llm_server: ScriptedServer, tmp_path: Path) -> None:
    rules: list[dict[str, Any]] = []
    expected: dict[str, tuple[float, float]] = {}
    for cid in QUESTIONS:
        case_rules, cf, faithfulness = scripted_judgements(cid)
        rules += case_rules
        expected[cid] = (cf, faithfulness)
    llm_server.set_script({"rules": rules})
    s = run_patient_qa(
        tmp_path,
        "-m",
        "conversational_faithfulness,faithfulness",
        "--judge",
        f"openai:judge@{llm_server.base_url}",
    )
    for cid, (cf, faithfulness) in expected.items():
        assert s[cid, "conversational_faithfulness"].value == pytest.approx(cf), cid
        assert s[cid, "faithfulness"].value == pytest.approx(faithfulness), cid
    # hand-worked: qa-001 two copied sentences (CF 2/2) among four statements (2/4);
    # qa-002's stale quick answer (CF 1/2; 1/4); qa-009 urgent, no follow-up (CF 3/3; 3/4)
    assert expected["qa-001"] == (1.0, 0.5)
    assert expected["qa-002"] == (0.5, 0.25)
    assert expected["qa-009"] == (1.0, 0.75)
    for cid in ANSWERED:
        assert expected[cid][1] < expected[cid][0], cid
    # a decline is an ungrounded referral to both (the leaflet says nothing of it)
    assert all(expected[cid] == (0.0, 0.0) for cid in DECLINED)
    # the CF grounding request of every case carried its question
    grounding = [r for r in llm_server.requests() if GROUNDING in r["body"]["messages"][0]["content"]]
    assert len(grounding) == len(QUESTIONS)
    assert all(r["body"]["messages"][-1]["content"].startswith("## What the user asked\n") for r in grounding)
