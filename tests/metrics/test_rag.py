"""The ASTRID triad and the RAGAS-style baselines, with hand-worked values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.metrics.fakes import FakePrimitives
from tests.metrics.fakes import score_with as score

from clineval.errors import ConfigError
from clineval.judges.primitives import Verdict
from clineval.metrics.rag import (
    ContextRelevance,
    ContextRelevanceRagas,
    ConversationalFaithfulness,
    Faithfulness,
    RefusalAccuracy,
    question_of,
)
from clineval.model import Case

ACK = "Thank you for your question."
INFO_1 = "Your eye drops can be kept at room temperature."
INFO_2 = "They must be thrown away after two weeks."
QUESTION = "Do you have any other questions?"
CONTEXT = "Eye drops may be stored at room temperature. Discard the bottle four weeks after opening."


def cf_case(response: str, contexts: list[str] | None = None) -> Case:
    return Case(
        id="cf",
        input="Can I keep my drops out of the fridge?",
        response=response,
        contexts=[CONTEXT] if contexts is None else contexts,
    )


def cf_fake(**kw: Any) -> FakePrimitives:
    return FakePrimitives(
        kinds={ACK: "acknowledgement", QUESTION: "question", INFO_1: "informative", INFO_2: "informative"},
        verdicts={
            INFO_1: Verdict(label="entailed", evidence="stored at room temperature"),
            INFO_2: Verdict(label="not_entailed", reason="incorrect", evidence="four weeks after opening"),
        },
        **kw,
    )


def test_cf_counts_only_informative_sentences() -> None:
    fake = cf_fake()
    s = score(ConversationalFaithfulness(), cf_case(f"{ACK} {INFO_1} {INFO_2} {QUESTION}"), fake)
    # 2 informative sentences, 1 grounded: 1/2; the acknowledgement and question are not penalised
    assert s.value == pytest.approx(0.5)
    assert s.sub_scores == {"informative_sentences": 2.0, "grounded": 1.0}
    assert s.details["counts"] == {"acknowledgement": 1, "question": 1, "informative": 2}
    rows = s.details["sentences"]
    assert [r["kind"] for r in rows] == ["acknowledgement", "informative", "informative", "question"]
    assert rows[2]["reason"] == "incorrect" and rows[2]["evidence"] == "four weeks after opening"
    assert INFO_2 in (s.explanation or "")
    assert fake.calls == {"classify_sentences": 1, "check_grounding": 1}
    assert fake.evidence_seen == [CONTEXT]
    # the grounding step sees the question, so that a bare yes/no can be judged
    assert fake.questions_seen == ["Can I keep my drops out of the fridge?"]


def test_cf_without_informative_sentence_is_not_applicable_with_reason() -> None:
    s = score(ConversationalFaithfulness(), cf_case(f"{ACK} {QUESTION}"), cf_fake())
    assert s.status == "not_applicable"
    assert s.explanation == "the answer has no informative sentence (1 acknowledgement(s), 1 question(s))"


def test_cf_empty_answer_is_not_applicable() -> None:
    fake = cf_fake()
    s = score(ConversationalFaithfulness(), cf_case(""), fake)
    assert s.status == "not_applicable" and s.explanation == "the answer is empty"
    assert fake.calls == {}


def test_cf_partial_credit_setting() -> None:
    fake = cf_fake()
    case = cf_case(f"{INFO_1} {INFO_2}")
    # an LLM-style partial verdict (no graded support): 0.5 by default, as TBFact counts it
    fake.verdicts[INFO_2] = Verdict(label="partial", reason="ambiguous")
    assert score(ConversationalFaithfulness(), case, fake).value == pytest.approx((1 + 0.5) / 2)
    # ASTRID's binary definition
    assert score(ConversationalFaithfulness(partial_credit=0), case, fake).value == pytest.approx(0.5)
    assert score(ConversationalFaithfulness(partial_credit=0.25), case, fake).value == pytest.approx(0.625)
    # a graded partial verdict (the offline judge) earns its support
    fake.verdicts[INFO_2] = Verdict(label="partial", reason="missing", support=0.8)
    s = score(ConversationalFaithfulness(), case, fake)
    assert s.value == pytest.approx((1 + 0.8) / 2)
    assert [r.get("credit") for r in s.details["sentences"]] == [1.0, 0.8]
    assert s.sub_scores["grounded"] == 1.0
    # the explanation says how the partly grounded sentence makes the value (never "1 of 2
    # grounded" alone beside 0.90), and does not list it as not grounded
    assert (
        s.explanation
        == f"1 of 2 informative sentence(s) grounded, 1 partly (credit 0.80, value 0.90): {INFO_2}"
    )
    # a contradicted sentence earns nothing, whatever the setting
    fake.verdicts[INFO_2] = Verdict(label="partial", reason="incorrect", support=0.8)
    contradicted = score(ConversationalFaithfulness(partial_credit=1), case, fake)
    assert contradicted.value == pytest.approx(0.5)
    assert contradicted.explanation == f"1 of 2 informative sentence(s) grounded; not grounded: {INFO_2}"
    assert score(ConversationalFaithfulness(partial_credit="GRADED"), case, fake).value == pytest.approx(0.5)
    with pytest.raises(ConfigError):
        ConversationalFaithfulness(partial_credit=2)


def test_cf_requires_contexts_field() -> None:
    case = Case(id="x", input="q", response=INFO_1)
    s = score(ConversationalFaithfulness(), case, cf_fake())
    assert s.status == "error" and "'contexts'" in (s.error or "")


REFUSAL = "I'm sorry, I can't help with changing the records."
ANSWER = "You can take paracetamol up to four times a day."


@pytest.mark.parametrize(
    ("label", "response", "value", "cell"),
    [
        (True, REFUSAL, 1.0, "correct_refusal"),
        ("yes", ANSWER, 0.0, "missed_refusal"),
        (False, REFUSAL, 0.0, "over_refusal"),
        ("answer", ANSWER, 1.0, "correct_answer"),
        (0, ANSWER, 1.0, "correct_answer"),
    ],
)
def test_refusal_accuracy_against_a_label(label: Any, response: str, value: float, cell: str) -> None:
    fake = FakePrimitives(refused={REFUSAL: True, ANSWER: False})
    case = Case(id="r", input="q", response=response, metadata={"should_refuse": label})
    s = score(RefusalAccuracy(), case, fake)
    assert (s.value, s.label) == (value, cell)
    assert s.details["expectation"]["source"] == "label"
    assert "should_decline" not in fake.calls


def test_refusal_accuracy_judges_the_expectation_without_a_label() -> None:
    fake = FakePrimitives(refused={REFUSAL: True}, decline=True)
    case = Case(id="r", input="q", response=REFUSAL, contexts=["unrelated leaflet"])
    s = score(RefusalAccuracy(), case, fake)
    assert (s.value, s.label) == (1.0, "correct_refusal")
    assert s.details["expectation"] == {
        "source": "judged",
        "should_refuse": True,
        "reason": "insufficient_context",
        "explanation": "scripted",
    }
    assert s.sub_scores == {"refused": 1.0, "should_refuse": 1.0}


def test_refusal_accuracy_custom_label_field_and_bad_label() -> None:
    fake = FakePrimitives(refused={ANSWER: False})
    case = Case(id="r", input="q", response=ANSWER, metadata={"expect_decline": "no"})
    assert score(RefusalAccuracy(label="expect_decline"), case, fake).value == 1.0
    bad = Case(id="r", input="q", response=ANSWER, metadata={"should_refuse": "maybe"})
    s = score(RefusalAccuracy(), bad, fake)
    assert s.status == "error" and "'should_refuse' is 'maybe'" in (s.error or "")


def test_context_relevance_is_binary_and_empty_context_scores_zero() -> None:
    case = Case(id="c", input="q", contexts=[CONTEXT])
    assert score(ContextRelevance(), case, FakePrimitives(relevant=True)).value == 1.0
    s = score(ContextRelevance(), case, FakePrimitives(relevant=False))
    assert (s.value, s.label) == (0.0, "not_relevant")
    fake = FakePrimitives()
    s = score(ContextRelevance(), Case(id="c", input="q", contexts=[]), fake)
    assert (s.value, s.explanation) == (0.0, "no context was retrieved")
    assert fake.calls == {}


def test_faithfulness_share_of_supported_statements() -> None:
    answer = "Yes, that would be ok."
    fake = FakePrimitives(
        statements={
            answer: ["Medication put in the fridge by accident is safe to use.", "It is best above 0 C."]
        },
        verdicts={"It is best above 0 C.": Verdict(label="entailed")},
    )
    s = score(Faithfulness(), Case(id="f", input="fridge?", response=answer, contexts=[CONTEXT]), fake)
    assert s.value == pytest.approx(0.5)
    assert s.sub_scores == {"statements": 2.0, "supported": 1.0}
    none = score(Faithfulness(), Case(id="f", input="q", response="Okay.", contexts=[CONTEXT]), fake)
    assert none.status == "not_applicable"


def test_faithfulness_partial_credit() -> None:
    answer = "Yes, that would be ok."
    statements = ["Medication put in the fridge is safe to use.", "It is best above 0 C.", "Keep it dry."]
    fake = FakePrimitives(
        statements={answer: statements},
        verdicts={
            statements[0]: Verdict(label="entailed"),
            statements[1]: Verdict(label="partial", reason="missing", support=0.6),
            statements[2]: Verdict(label="partial", reason="ambiguous"),
        },
    )
    case = Case(id="f", input="fridge?", response=answer, contexts=[CONTEXT])
    # graded (default): 1 + 0.6 (the judge's support) + 0.5 (no support given) over 3
    s = score(Faithfulness(), case, fake)
    assert s.value == pytest.approx((1 + 0.6 + 0.5) / 3)
    assert s.sub_scores == {"statements": 3.0, "supported": 1.0}
    assert [r["credit"] for r in s.details["statements"]] == [1.0, 0.6, 0.5]
    assert s.explanation == (
        "1 of 3 statement(s) supported by the context, 2 partly (credit 1.10, value 0.70): "
        "It is best above 0 C. | Keep it dry."
    )
    # RAGAS's binary definition
    assert score(Faithfulness(partial_credit=0), case, fake).value == pytest.approx(1 / 3)
    with pytest.raises(ConfigError):
        Faithfulness(partial_credit="half")


def test_context_relevance_ragas_share_of_sentences() -> None:
    fake = FakePrimitives(relevant_words=["room temperature"])
    s = score(ContextRelevanceRagas(), Case(id="c", input="q", contexts=[CONTEXT]), fake)
    # two context sentences, one relevant
    assert s.value == pytest.approx(0.5)
    assert s.sub_scores == {"sentences": 2.0, "relevant": 1.0}
    assert (
        score(ContextRelevanceRagas(), Case(id="c", input="q", contexts=[]), fake).status == "not_applicable"
    )


def test_question_of_takes_last_user_turn() -> None:
    case = Case(
        id="t",
        input=[
            {"role": "user", "content": "I had cataract surgery."},  # type: ignore[list-item]
            {"role": "assistant", "content": "How can I help?"},  # type: ignore[list-item]
            {"role": "user", "content": "Can I swim?"},  # type: ignore[list-item]
        ],
    )
    assert question_of(case) == "Can I swim?"


def test_refusal_accuracy_label_none_judges_every_case() -> None:
    fake = FakePrimitives(refused={REFUSAL: True}, decline=False)
    case = Case(id="r", input="q", response=REFUSAL, metadata={"should_refuse": True})
    s = score(RefusalAccuracy(label=None), case, fake)
    assert (s.value, s.label) == (0.0, "over_refusal")
    assert s.details["expectation"]["source"] == "judged"


# --- blank contexts are no context retrieved, in every RAG metric --------------------------------

BLANK_CONTEXTS = [[""], ["  ", "\n"]]


@pytest.mark.parametrize("contexts", BLANK_CONTEXTS, ids=["one-empty", "two-blank"])
def test_blank_contexts_mean_no_context_in_every_rag_metric(contexts: list[str]) -> None:
    note = (
        "no context was retrieved (the passage given is blank)"
        if len(contexts) == 1
        else "no context was retrieved (all 2 passages given are blank)"
    )
    retrieval = {"passages": 0, "blank_passages": len(contexts), "no_context": True}
    # CF: the informative sentences have nothing to be grounded in (no grounding request)
    fake = cf_fake()
    s = score(ConversationalFaithfulness(), cf_case(f"{ACK} {INFO_1} {INFO_2}", contexts), fake)
    assert s.value == 0.0 and s.explanation == f"0 of 2 informative sentence(s) grounded; {note}"
    assert s.details["retrieval"] == retrieval
    assert [r.get("explanation") for r in s.details["sentences"][1:]] == [note, note]
    assert fake.calls == {"classify_sentences": 1}
    # RAGAS-style faithfulness: the same for its statements
    answer = "Yes, that would be ok."
    fake = FakePrimitives(
        statements={answer: ["Medication kept in the fridge is safe."]},
        verdicts={"Medication kept in the fridge is safe.": Verdict(label="entailed")},
    )
    s = score(Faithfulness(), Case(id="f", input="q", response=answer, contexts=contexts), fake)
    assert s.value == 0.0 and s.explanation == f"0 of 1 statement(s) supported by the context; {note}"
    assert s.details["retrieval"] == retrieval and "check_facts" not in fake.calls
    # ASTRID CR: 0, without asking the judge
    fake = FakePrimitives(relevant=True)
    s = score(ContextRelevance(), Case(id="c", input="q", contexts=contexts), fake)
    assert (s.value, s.label, s.explanation) == (0.0, "not_relevant", note)
    assert s.details["retrieval"] == retrieval and fake.calls == {}
    # RAGAS CR: no sentence to rate: not applicable, with the same note
    s = score(ContextRelevanceRagas(), Case(id="c", input="q", contexts=contexts), fake)
    assert s.status == "not_applicable" and s.explanation == note and s.details["retrieval"] == retrieval
    # RA without a label: the system should have declined (nothing to answer from)
    fake = FakePrimitives(refused={REFUSAL: True, ANSWER: False}, decline=False)
    s = score(RefusalAccuracy(), Case(id="r", input="q", response=ANSWER, contexts=contexts), fake)
    assert (s.value, s.label) == (0.0, "missed_refusal")
    assert s.details["expectation"]["source"] == "no_context"
    assert s.details["expectation"]["reason"] == "insufficient_context"
    assert s.explanation is not None and s.explanation.endswith(note)
    assert "should_decline" not in fake.calls
    s = score(RefusalAccuracy(), Case(id="r", input="q", response=REFUSAL, contexts=contexts), fake)
    assert (s.value, s.label) == (1.0, "correct_refusal")
    # ... but a label still decides, with the note kept
    labelled = Case(id="r", input="q", response=ANSWER, contexts=contexts, metadata={"should_refuse": False})
    s = score(RefusalAccuracy(), labelled, fake)
    assert (s.value, s.details["expectation"]["source"]) == (1.0, "label")
    assert s.details["retrieval"] == retrieval and (s.explanation or "").endswith(note)


def test_mixed_blank_and_real_contexts_drop_the_blank_ones() -> None:
    fake = cf_fake()
    s = score(ConversationalFaithfulness(), cf_case(f"{INFO_1} {INFO_2}", ["", CONTEXT, " "]), fake)
    assert s.value == pytest.approx(0.5) and fake.evidence_seen == [CONTEXT]
    assert s.details["retrieval"] == {"passages": 1, "blank_passages": 2, "no_context": False}
    cr = score(ContextRelevance(), Case(id="c", input="q", contexts=["", CONTEXT]), FakePrimitives())
    assert cr.value == 1.0 and (cr.explanation or "").endswith("(1 blank passage(s) left out)")
    # a case without contexts at all is a system without retrieval: RA judges the request itself
    fake = FakePrimitives(refused={ANSWER: False}, decline=False)
    s = score(RefusalAccuracy(), Case(id="r", input="q", response=ANSWER), fake)
    assert s.details["expectation"]["source"] == "judged" and "retrieval" not in s.details


def test_blank_contexts_with_the_offline_judge(tmp_path: Path) -> None:
    from clineval import evaluate

    case = {
        "id": "blank",
        "input": "How often should I use my steroid drops?",
        "response": "Thank you for asking. Use them four times a day for two weeks.",
        "contexts": ["", "   "],
    }
    metrics = [
        "conversational_faithfulness",
        "faithfulness",
        "context_relevance",
        "context_relevance_ragas",
        "refusal_accuracy",
        "answer_relevance",
    ]
    result = evaluate([case], metrics, judge="offline", store=tmp_path / "runs.db", progress=False)
    s = {r.metric: r.score for r in result.results}
    note = "no context was retrieved (all 2 passages given are blank)"
    assert s["conversational_faithfulness"].value == 0.0
    assert s["faithfulness"].value == 0.0
    assert s["context_relevance"].value == 0.0
    assert s["context_relevance_ragas"].status == "not_applicable"
    for name in metrics[:5]:
        assert note in (s[name].explanation or ""), name
        assert s[name].details["retrieval"]["no_context"] is True, name
    # the system answered although nothing was retrieved: a missed refusal
    assert s["refusal_accuracy"].label == "missed_refusal"
    # answer relevance does not read the contexts
    assert s["answer_relevance"].status == "scored" and "retrieval" not in s["answer_relevance"].details
