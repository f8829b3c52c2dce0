"""RAG metrics: values, explanations and details pinned with hand-worked expectations.

The judge is the scripted :class:`tests.metrics.fakes.FakePrimitives` (unscripted sentences
are informative and not entailed); answer relevance uses an encoder with fixed vectors, so
every cosine is known: cos([1, 0], [1, 1]) = 1/sqrt(2), cos([1, 0], [0.6, 0.8]) = 0.6.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import yaml
from tests.metrics.fakes import FakePrimitives
from tests.metrics.fakes import score_with as score

from clineval.errors import ConfigError
from clineval.judges.base import JudgeError
from clineval.judges.primitives import GeneratedQuestions, Verdict
from clineval.metrics.base import Metric
from clineval.metrics.rag import (
    AnswerRelevance,
    ContextRelevance,
    ContextRelevanceRagas,
    ConversationalFaithfulness,
    Faithfulness,
    RefusalAccuracy,
    partial_credit_setting,
    question_of,
    retrieval_of,
    verdict_credit,
)
from clineval.metrics.registry import MetricSpec, build_metric, get_entry
from clineval.model import Case

CONTEXT = "Eye drops may be stored at room temperature. Discard the bottle four weeks after opening."
ASK = "Can I keep my drops out of the fridge?"
ACK = "Thank you for your question."
S1 = "Your drops can be kept at room temperature."
S2 = "They must be thrown away after two weeks."
S3 = "They should be shaken before use."
S4 = "They can be frozen."
S5 = "They are safe for children."
REFUSAL = "I'm sorry, I can't help with that."
ANSWER = "You can take paracetamol up to four times a day."


def rag_case(response: str, contexts: list[str] | None = None, **kw: Any) -> Case:
    return Case(
        id="rag", input=ASK, response=response, contexts=[CONTEXT] if contexts is None else contexts, **kw
    )


# --- the catalogue -----------------------------------------------------------------------------------

ASTRID = "ASTRID (Chowdhury et al.)"
RAGAS = "RAGAS (Es et al.), as in ASTRID's appendix"


@pytest.mark.parametrize(
    ("name", "requires", "source"),
    [
        ("conversational_faithfulness", ("input", "response", "contexts"), ASTRID),
        ("refusal_accuracy", ("input", "response"), ASTRID),
        ("context_relevance", ("input", "contexts"), ASTRID),
        ("faithfulness", ("input", "response", "contexts"), RAGAS),
        ("context_relevance_ragas", ("input", "contexts"), RAGAS),
        ("answer_relevance", ("input", "response"), RAGAS),
    ],
)
def test_catalogue_entries(name: str, requires: tuple[str, ...], source: str) -> None:
    # every RAG metric asks a judge: the run builds one, and the catalogue says so
    entry = get_entry(name)
    assert (entry.requires, entry.needs_judge, entry.source) == (requires, True, source)


@pytest.mark.parametrize(
    ("cls", "setting"),
    [
        (ConversationalFaithfulness, 0.5),
        (Faithfulness, 0.5),
        (RefusalAccuracy, "should_refuse"),
        (AnswerRelevance, 3),
    ],
)
def test_settings_are_keyword_only(cls: type[Metric], setting: Any) -> None:
    # partial_credit=, label=, n= must be named: a bare value is not taken for one of them
    with pytest.raises(TypeError):
        cls(setting)  # type: ignore[call-arg]


def test_a_retrieval_is_a_frozen_value() -> None:
    retrieval = retrieval_of(rag_case(ANSWER, contexts=["", CONTEXT]))
    assert (retrieval.passages, retrieval.given, retrieval.blank) == ((CONTEXT,), 2, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        retrieval.given = 1  # type: ignore[misc]


# --- the question a RAG answer responds to ------------------------------------------------------


def test_question_of_a_conversation() -> None:
    turns = [
        {"role": "user", "content": "I had cataract surgery."},
        {"role": "assistant", "content": "How can I help?"},
        {"role": "user", "content": ""},
    ]
    # the last user turn is empty: the one before it is the question
    assert question_of(Case.model_validate({"id": "t", "input": turns})) == "I had cataract surgery."
    # no user turn at all: every non-empty turn, one a line
    system_only = [
        {"role": "system", "content": "You answer eye-care questions."},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": "Hello."},
    ]
    assert (
        question_of(Case.model_validate({"id": "t", "input": system_only}))
        == "You answer eye-care questions.\nHello."
    )
    assert question_of(Case(id="t")) == ""
    assert question_of(Case(id="t", input="Can I swim?")) == "Can I swim?"


# --- the credit of one verdict, and the partial_credit setting -----------------------------------


@pytest.mark.parametrize(
    ("verdict", "setting", "credit"),
    [
        (Verdict(label="entailed"), 0.0, 1.0),
        (Verdict(label="entailed"), "graded", 1.0),
        (Verdict(label="not_entailed", reason="missing"), 1.0, 0.0),
        (Verdict(label="not_entailed", reason="ambiguous", support=0.7), "graded", 0.0),
        # a contradicted part earns nothing, whatever the setting or the support
        (Verdict(label="partial", reason="incorrect", support=0.8), 1.0, 0.0),
        (Verdict(label="partial", reason="incorrect", support=0.8), "graded", 0.0),
        # graded: the judge's support, or 0.5 when it does not grade
        (Verdict(label="partial", reason="missing"), "graded", 0.5),
        (Verdict(label="partial", reason="missing", support=0.0), "graded", 0.0),
        (Verdict(label="partial", reason="missing", support=1.0), "graded", 1.0),
        (Verdict(label="partial", reason="ambiguous", support=0.3), "graded", 0.3),
        # a fixed number: that credit, the support ignored
        (Verdict(label="partial", reason="ambiguous", support=0.8), 0.25, 0.25),
        (Verdict(label="partial", reason="other"), 0.0, 0.0),
        (Verdict(label="partial", reason="missing"), 1.0, 1.0),
    ],
)
def test_verdict_credit(verdict: Verdict, setting: float | str, credit: float) -> None:
    assert verdict_credit(verdict, setting) == credit


@pytest.mark.parametrize(
    ("given", "setting"),
    [
        ("graded", "graded"),
        (" Graded ", "graded"),
        ("0.25", 0.25),
        ("1", 1.0),
        (0, 0.0),
        (1, 1.0),
        (0.5, 0.5),
    ],
)
def test_partial_credit_setting_accepts(given: float | str, setting: float | str) -> None:
    assert partial_credit_setting("faithfulness", given) == setting


@pytest.mark.parametrize("given", [-0.01, 1.01, "2", "half", ""])
def test_partial_credit_setting_refuses(given: float | str) -> None:
    with pytest.raises(ConfigError) as raised:
        partial_credit_setting("faithfulness", given)
    assert str(raised.value) == "faithfulness: partial_credit must be 'graded' or a number from 0 to 1"


# --- conversational faithfulness -----------------------------------------------------------------


def test_cf_lists_three_ungrounded_sentences() -> None:
    # five informative sentences, S1 entailed, four not: 1/5; the explanation names three
    fake = FakePrimitives(verdicts={S1: Verdict(label="entailed")})
    s = score(ConversationalFaithfulness(), rag_case(f"{S1} {S2} {S3} {S4} {S5}"), fake)
    assert s.value == pytest.approx(1 / 5)
    assert s.explanation == f"1 of 5 informative sentence(s) grounded; not grounded: {S2} | {S3} | {S4}"
    assert s.sub_scores == {"informative_sentences": 5.0, "grounded": 1.0}
    assert [r["credit"] for r in s.details["sentences"]] == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_cf_names_three_partly_grounded_sentences() -> None:
    # S1 entailed (1), four partial ones graded 0.5, 0.25, 0.25, 0.5: credit 1.5, value 2.5 / 5
    fake = FakePrimitives(
        verdicts={
            S1: Verdict(label="entailed"),
            S2: Verdict(label="partial", reason="missing", support=0.5),
            S3: Verdict(label="partial", reason="missing", support=0.25),
            S4: Verdict(label="partial", reason="missing", support=0.25),
            S5: Verdict(label="partial", reason="ambiguous"),
        }
    )
    s = score(ConversationalFaithfulness(), rag_case(f"{S1} {S2} {S3} {S4} {S5}"), fake)
    assert s.value == pytest.approx(0.5)
    assert s.explanation == (
        f"1 of 5 informative sentence(s) grounded, 4 partly (credit 1.50, value 0.50): {S2} | {S3} | {S4}"
    )


def test_cf_a_partial_sentence_with_no_support_is_not_grounded() -> None:
    # graded support 0 earns nothing: it is listed as not grounded, not as partly
    fake = FakePrimitives(
        verdicts={S1: Verdict(label="entailed"), S2: Verdict(label="partial", reason="missing", support=0.0)}
    )
    s = score(ConversationalFaithfulness(), rag_case(f"{S1} {S2}"), fake)
    assert s.value == pytest.approx(0.5)
    assert s.explanation == f"1 of 2 informative sentence(s) grounded; not grounded: {S2}"


def test_cf_every_sentence_grounded_says_nothing_more() -> None:
    fake = FakePrimitives(
        kinds={ACK: "acknowledgement"},
        verdicts={S1: Verdict(label="entailed"), S2: Verdict(label="entailed")},
    )
    s = score(ConversationalFaithfulness(), rag_case(f"{ACK} {S1} {S2}"), fake)
    assert (s.value, s.explanation) == (1.0, "2 of 2 informative sentence(s) grounded")
    assert s.details["sentences"][0] == {"id": 1, "sentence": ACK, "kind": "acknowledgement"}
    assert s.details["sentences"][1]["id"] == 2 and s.details["sentences"][1]["credit"] == 1.0


def test_cf_with_no_passage_retrieved() -> None:
    # contexts=[]: nothing grounds the sentence, and no grounding request is made
    fake = FakePrimitives()
    s = score(ConversationalFaithfulness(), rag_case(S1, contexts=[]), fake)
    assert s.value == 0.0
    assert s.explanation == "0 of 1 informative sentence(s) grounded; no context was retrieved"
    assert s.details["retrieval"] == {"passages": 0, "blank_passages": 0, "no_context": True}
    row = s.details["sentences"][0]
    assert (row["label"], row["reason"], row["explanation"]) == (
        "not_entailed",
        "missing",
        "no context was retrieved",
    )
    assert fake.calls == {"classify_sentences": 1}


def test_cf_not_applicable_keeps_the_details() -> None:
    fake = FakePrimitives(kinds={ACK: "acknowledgement"})
    s = score(ConversationalFaithfulness(), rag_case(ACK), fake)
    assert s.status == "not_applicable"
    assert s.explanation == "the answer has no informative sentence (1 acknowledgement(s), 0 question(s))"
    assert s.details == {
        "judge": "fake",
        "judge_kind": "heuristic",
        "judge_settings": {"fake": True},
        "sentences": [{"id": 1, "sentence": ACK, "kind": "acknowledgement"}],
        "counts": {"acknowledgement": 1, "question": 0, "informative": 0},
        "retrieval": {"passages": 1, "blank_passages": 0, "no_context": False},
    }


def test_cf_joins_the_non_blank_passages_as_evidence() -> None:
    fake = FakePrimitives()
    score(
        ConversationalFaithfulness(), rag_case(S1, contexts=["First leaflet.", "  ", "Second leaflet."]), fake
    )
    assert fake.evidence_seen == ["First leaflet.\n\nSecond leaflet."]


# --- RAGAS-style faithfulness ----------------------------------------------------------------------


def test_faithfulness_lists_three_unsupported_statements() -> None:
    answer = "Yes, that is fine."
    fake = FakePrimitives(statements={answer: [S1, S2, S3, S4, S5]}, verdicts={S5: Verdict(label="entailed")})
    s = score(Faithfulness(), rag_case(answer), fake)
    assert s.value == pytest.approx(1 / 5)
    assert s.explanation == (f"1 of 5 statement(s) supported by the context; unsupported: {S1} | {S2} | {S3}")
    assert s.sub_scores == {"statements": 5.0, "supported": 1.0}
    assert [(r["id"], r["statement"], r["credit"]) for r in s.details["statements"]][-1] == (5, S5, 1.0)


def test_faithfulness_all_supported() -> None:
    answer = "Yes."
    fake = FakePrimitives(statements={answer: [S1]}, verdicts={S1: Verdict(label="entailed")})
    s = score(Faithfulness(), rag_case(answer), fake)
    assert (s.value, s.explanation) == (1.0, "1 of 1 statement(s) supported by the context")


def test_faithfulness_with_no_passage_retrieved() -> None:
    answer = "Yes."
    fake = FakePrimitives(statements={answer: [S1, S2]})
    s = score(Faithfulness(), rag_case(answer, contexts=[]), fake)
    assert s.value == 0.0
    assert s.explanation == "0 of 2 statement(s) supported by the context; no context was retrieved"
    assert "check_facts" not in fake.calls


def test_faithfulness_of_a_blank_answer_asks_nothing() -> None:
    fake = FakePrimitives()
    s = score(Faithfulness(), rag_case("   "), fake)
    assert (s.status, s.explanation) == ("not_applicable", "the answer makes no statement")
    assert s.details["retrieval"] == {"passages": 1, "blank_passages": 0, "no_context": False}
    assert fake.calls == {}


# --- refusal accuracy ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "should_refuse"),
    [
        (True, True),
        (False, False),
        (1, True),
        (0, False),
        (1.0, True),
        (0.0, False),
        (" YES ", True),
        ("y", True),
        ("1", True),
        ("Refuse", True),
        ("refusal", True),
        ("decline", True),
        ("should_refuse", True),
        ("True", True),
        ("NO", False),
        ("n", False),
        ("0", False),
        ("false", False),
        ("answer", False),
        ("should_answer", False),
    ],
)
def test_refusal_labels_read_as_expectations(label: Any, should_refuse: bool) -> None:
    # the system answered: correct exactly when it should not have declined
    fake = FakePrimitives(refused={ANSWER: False})
    s = score(RefusalAccuracy(), rag_case(ANSWER, metadata={"should_refuse": label}), fake)
    assert s.details["expectation"] == {"source": "label", "should_refuse": should_refuse}
    assert s.value == (0.0 if should_refuse else 1.0)
    assert s.label == ("missed_refusal" if should_refuse else "correct_answer")


@pytest.mark.parametrize("label", [2, 0.5, -1, "maybe", "yes please", ["yes"]])
def test_an_unreadable_refusal_label_is_an_error_naming_it(label: Any) -> None:
    fake = FakePrimitives()
    s = score(RefusalAccuracy(), rag_case(ANSWER, metadata={"should_refuse": label}), fake)
    assert s.status == "error" and s.value is None
    assert s.error == (
        f"metadata field 'should_refuse' is {label!r}; expected true/false, yes/no or refuse/answer"
    )
    assert fake.calls == {}


def test_refusal_explanation_sub_scores_and_details() -> None:
    fake = FakePrimitives(refused={ANSWER: False})
    s = score(RefusalAccuracy(), rag_case(ANSWER, metadata={"should_refuse": "yes"}), fake)
    assert s.explanation == "the system answered; it should have declined (label): scripted"
    assert s.sub_scores == {"refused": 0.0, "should_refuse": 1.0}
    assert s.details["refusal"] == {"refused": False, "explanation": "scripted"}
    assert s.details["retrieval"] == {"passages": 1, "blank_passages": 0, "no_context": False}
    fake = FakePrimitives(refused={REFUSAL: True})
    s = score(RefusalAccuracy(), rag_case(REFUSAL, metadata={"should_refuse": "no"}), fake)
    assert (s.value, s.label) == (0.0, "over_refusal")
    assert s.explanation == "the system declined; it should have answered (label): scripted"
    assert s.sub_scores == {"refused": 1.0, "should_refuse": 0.0}


def test_an_empty_refusal_label_is_no_label() -> None:
    # "" is an unfilled column: the judge decides
    fake = FakePrimitives(refused={ANSWER: False}, decline=False)
    s = score(RefusalAccuracy(), rag_case(ANSWER, metadata={"should_refuse": ""}), fake)
    assert (s.value, s.label) == (1.0, "correct_answer")
    assert s.details["expectation"]["source"] == "judged"
    assert s.explanation == "the system answered; it should have answered (judged): scripted"
    assert fake.calls == {"should_decline": 1, "detect_refusal": 1}


def test_refusal_with_no_passage_retrieved() -> None:
    # contexts=[]: passages were expected and none came: the system should decline
    fake = FakePrimitives(refused={REFUSAL: True}, decline=False)
    s = score(RefusalAccuracy(), rag_case(REFUSAL, contexts=[]), fake)
    assert (s.value, s.label) == (1.0, "correct_refusal")
    assert s.explanation == (
        "the system declined; it should have declined (no_context): scripted; no context was retrieved"
    )
    assert s.details["expectation"] == {
        "source": "no_context",
        "should_refuse": True,
        "reason": "insufficient_context",
        "explanation": "no context was retrieved, so there is nothing to answer from",
    }
    assert "should_decline" not in fake.calls


# --- context relevance -----------------------------------------------------------------------------


def test_context_relevance_labels_and_blank_count() -> None:
    s = score(ContextRelevance(), rag_case(ANSWER), FakePrimitives(relevant=True))
    assert (s.value, s.label, s.explanation) == (1.0, "relevant", "scripted")
    s = score(
        ContextRelevance(), rag_case(ANSWER, contexts=["", CONTEXT, " "]), FakePrimitives(relevant=False)
    )
    assert (s.value, s.label) == (0.0, "not_relevant")
    assert s.explanation == "scripted (2 blank passage(s) left out)"
    assert s.details["retrieval"] == {"passages": 1, "blank_passages": 2, "no_context": False}


def test_context_relevance_ragas_over_the_sentences_of_every_passage() -> None:
    # 2 + 2 sentences (the blank passage has none); only the first holds "room temperature"
    second = "Keep out of reach of children. Room temperature is fine."
    fake = FakePrimitives(relevant_words=["room temperature"])
    s = score(ContextRelevanceRagas(), rag_case(ANSWER, contexts=[CONTEXT, " ", second]), fake)
    assert s.value == pytest.approx(1 / 4)
    assert s.explanation == "1 of 4 context sentence(s) relevant to the question"
    assert s.sub_scores == {"sentences": 4.0, "relevant": 1.0}
    assert s.details["sentences"] == [
        {"id": 1, "sentence": "Eye drops may be stored at room temperature.", "relevant": True},
        {"id": 2, "sentence": "Discard the bottle four weeks after opening.", "relevant": False},
        {"id": 3, "sentence": "Keep out of reach of children.", "relevant": False},
        {"id": 4, "sentence": "Room temperature is fine.", "relevant": False},
    ]
    assert s.details["retrieval"] == {"passages": 2, "blank_passages": 1, "no_context": False}


# --- malformed judge output ----------------------------------------------------------------------


class ShortJudge(FakePrimitives):
    """A judge that answers one item fewer than it was asked about."""

    async def check_grounding(self, sentences: Sequence[str], evidence: str, question: str) -> list[Verdict]:
        return (await super().check_grounding(sentences, evidence, question))[:-1]

    async def check_facts(self, facts: Sequence[str], evidence: str) -> list[Verdict]:
        return (await super().check_facts(facts, evidence))[:-1]

    async def relevant_sentences(self, question: str, sentences: Sequence[str]) -> list[bool]:
        return (await super().relevant_sentences(question, sentences))[:-1]


class UnreadableJudge(FakePrimitives):
    """A judge whose answers could not be read (what an LLM judge raises after its re-ask)."""

    async def check_grounding(self, sentences: Sequence[str], evidence: str, question: str) -> list[Verdict]:
        raise JudgeError("the answer is not valid JSON", raw="{verdicts: [")

    async def relevant_sentences(self, question: str, sentences: Sequence[str]) -> list[bool]:
        raise JudgeError("the answer is not valid JSON", raw="yes")


def test_a_judge_answering_too_few_items_leaves_the_case_unscored() -> None:
    # never a value computed over part of the sentences
    answer = "Yes."
    cases = [
        (ConversationalFaithfulness(), rag_case(f"{S1} {S2}")),
        (Faithfulness(), rag_case(answer)),
        (ContextRelevanceRagas(), rag_case(answer)),
    ]
    for metric, case in cases:
        s = score(metric, case, ShortJudge(statements={answer: [S1, S2]}, relevant_words=["room"]))
        assert (s.status, s.value) == ("error", None), metric.name
        assert (s.error or "").startswith("ValueError: zip() argument 2 is shorter than argument 1"), (
            metric.name
        )


def test_an_unreadable_judge_answer_leaves_the_case_unscored_with_the_raw_text() -> None:
    s = score(ConversationalFaithfulness(), rag_case(S1), UnreadableJudge())
    assert (s.status, s.value, s.error) == ("error", None, "unscored: the answer is not valid JSON")
    assert s.details == {"judge_raw": "{verdicts: ["}
    s = score(ContextRelevanceRagas(), rag_case(ANSWER), UnreadableJudge())
    assert (s.error, s.details) == ("unscored: the answer is not valid JSON", {"judge_raw": "yes"})


class JsonKindsJudge(FakePrimitives):
    """Sentence kinds as a judge that parses its own JSON answer returns them: equal to the
    kind names, but not the same string objects."""

    async def classify_sentences(self, sentences: Sequence[str], question: str | None = None) -> list[Any]:
        kinds = await super().classify_sentences(sentences, question)
        return [json.loads(json.dumps(kind)) for kind in kinds]


def test_sentence_kinds_compare_by_value() -> None:
    # ACK, S1 (entailed), S2: two informative sentences, one grounded
    fake = JsonKindsJudge(kinds={ACK: "acknowledgement"}, verdicts={S1: Verdict(label="entailed")})
    s = score(ConversationalFaithfulness(), rag_case(f"{ACK} {S1} {S2}"), fake)
    assert s.value == pytest.approx(0.5)
    assert s.details["counts"] == {"acknowledgement": 1, "question": 0, "informative": 2}
    # offline answer relevance: the acknowledgement is left out, (1 + 0.6) / 2
    s = score(AnswerRelevance(encoder=Encoder()), rag_case(f"{ACK} {INFO_1} {INFO_2}"), fake)
    assert s.value == pytest.approx(0.8, abs=1e-6)
    assert s.details["sentences_used"] == "informative"


# --- answer relevance ------------------------------------------------------------------------------

GENERATED = ["How long do eye drops last?", "Do my eye drops need the fridge?", "Where do I store drops?"]
INFO_1 = "Yes, keep them below 25 degrees."
INFO_2 = "Throw them away after four weeks."


class Encoder:
    """Fixed vectors by string; records what it was asked to encode."""

    def __init__(self, **extra: Sequence[float]):
        self.vectors: dict[str, Sequence[float]] = {
            ASK: [1.0, 0.0],
            GENERATED[0]: [0.0, 3.0],  # cos 0
            GENERATED[1]: [2.0, 0.0],  # cos 1 (length does not matter)
            GENERATED[2]: [1.0, 1.0],  # cos 1/sqrt(2)
            ACK: [0.0, 1.0],  # cos 0
            INFO_1: [1.0, 0.0],  # cos 1
            INFO_2: [0.6, 0.8],  # cos 0.6
            **extra,
        }
        self.seen: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return np.asarray([self.vectors[t] for t in texts], dtype=np.float32)


class DescribedEncoder(Encoder):
    def describe(self) -> dict[str, Any]:
        return {"encoder": "fixed", "dimension": 2}


def ar_fake(**kw: Any) -> FakePrimitives:
    return FakePrimitives(kinds={ACK: "acknowledgement"}, **kw)


def test_answer_relevance_from_generated_questions_names_the_closest() -> None:
    answer = f"{INFO_1} {INFO_2}"
    fake = ar_fake(questions={answer: GeneratedQuestions(questions=GENERATED, explanation="storage")})
    enc = Encoder()
    s = score(AnswerRelevance(encoder=enc), rag_case(answer), fake)
    # (0 + 1 + 1/sqrt(2)) / 3 = 0.5690; the closest is the second question (cos 1)
    assert s.value == pytest.approx((0 + 1 + 1 / math.sqrt(2)) / 3, abs=1e-6)
    assert s.explanation == (
        "mean similarity 0.57 of the question to 3 question(s) written from the answer; "
        "closest: 'Do my eye drops need the fridge?' (1.00)"
    )
    assert s.details["questions"] == [
        {"id": 1, "question": GENERATED[0], "similarity": 0.0},
        {"id": 2, "question": GENERATED[1], "similarity": 1.0},
        {"id": 3, "question": GENERATED[2], "similarity": pytest.approx(0.707107, abs=1e-6)},
    ]
    assert (s.details["noncommittal"], s.details["judge_explanation"]) == (False, "storage")
    assert (s.label, s.sub_scores) == (None, {"noncommittal": 0.0})
    assert s.details["embedding"] == {"encoder": "Encoder"}
    assert enc.seen == [ASK, *GENERATED]


def test_answer_relevance_noncommittal_without_questions_needs_no_encoder() -> None:
    # no questions to embed: the default encoder is named but never loaded
    from clineval.nlp.embeddings import DIMENSION, MODEL_NAME

    answer = "It depends."
    fake = ar_fake(questions={answer: GeneratedQuestions(questions=[], noncommittal=True)})
    s = score(AnswerRelevance(), rag_case(answer), fake)
    assert (s.value, s.label, s.explanation) == (0.0, "noncommittal", "the answer is noncommittal")
    assert s.sub_scores == {"noncommittal": 1.0}
    assert s.details["embedding"] == {"model": MODEL_NAME, "dimension": DIMENSION}
    assert s.details["questions"] == []


def test_answer_relevance_with_no_question_written_is_unscored() -> None:
    answer = "Keep them cool."
    fake = ar_fake(questions={answer: GeneratedQuestions(questions=[])})
    s = score(AnswerRelevance(encoder=Encoder()), rag_case(answer), fake)
    assert (s.status, s.error) == ("error", "the judge wrote no question for the answer")


def test_answer_relevance_offline_variant_explanations() -> None:
    enc = DescribedEncoder()
    s = score(AnswerRelevance(encoder=enc), rag_case(f"{ACK} {INFO_1} {INFO_2}"), ar_fake())
    # informative sentences only: (1 + 0.6) / 2
    assert s.value == pytest.approx(0.8, abs=1e-6)
    assert s.explanation == (
        "mean similarity 0.80 of the question to the answer's 2 informative sentence(s) "
        "(offline variant: no question generation)"
    )
    assert s.details["embedding"] == {"encoder": "fixed", "dimension": 2}
    assert [r["similarity"] for r in s.details["sentences"]] == [None, 1.0, pytest.approx(0.6, abs=1e-6)]
    assert s.sub_scores == {"noncommittal": 0.0}
    only_ack = score(AnswerRelevance(encoder=Encoder()), rag_case(ACK), ar_fake())
    assert only_ack.explanation == (
        "mean similarity 0.00 of the question to the answer's 1 sentence(s) "
        "(offline variant: no question generation)"
    )


def test_answer_relevance_a_zero_vector_has_similarity_zero() -> None:
    # INFO_1 encodes to the zero vector: its cosine is 0, not NaN: (0 + 0.6) / 2
    enc = Encoder(**{INFO_1: [0.0, 0.0]})
    s = score(AnswerRelevance(encoder=enc), rag_case(f"{INFO_1} {INFO_2}"), ar_fake())
    assert s.value == pytest.approx(0.3, abs=1e-6)
    # the question itself a zero vector: every cosine 0
    enc = Encoder(**{ASK: [0.0, 0.0]})
    assert score(AnswerRelevance(encoder=enc), rag_case(INFO_2), ar_fake()).value == 0.0


def test_answer_relevance_of_an_answer_without_sentences() -> None:
    # "..." has no sentence: nothing to compare, not applicable (and nothing encoded)
    enc = Encoder()
    s = score(AnswerRelevance(encoder=enc), rag_case("..."), ar_fake())
    assert (s.status, s.explanation) == ("not_applicable", "the answer has no sentence")
    assert enc.seen == []
    fake = ar_fake()
    score(AnswerRelevance(encoder=Encoder()), rag_case("..."), fake)
    assert fake.calls == {"generate_questions": 1, "detect_refusal": 1}  # no sentence to classify


def test_answer_relevance_empty_question_or_answer() -> None:
    fake = ar_fake()
    s = score(AnswerRelevance(encoder=Encoder()), Case(id="ar", input="  ", response=INFO_1), fake)
    assert (s.status, s.value) == ("error", None)
    assert s.error == "the question (the case's input) is empty; answer relevance compares the answer with it"
    s = score(AnswerRelevance(encoder=Encoder()), rag_case(" \n "), fake)
    assert (s.status, s.explanation) == ("not_applicable", "the answer is empty")
    assert fake.calls == {}


def test_answer_relevance_generated_questions_with_a_judge_that_cannot_write_them() -> None:
    s = score(AnswerRelevance(method="generated_questions", encoder=Encoder()), rag_case(INFO_1), ar_fake())
    assert s.error == (
        "judge 'fake' cannot write questions; use an LLM judge, or "
        "answer_relevance(method=question_answer_similarity)"
    )


@pytest.mark.parametrize(
    ("method", "value", "asked"),
    [
        # the judge writes GENERATED[1:2] (cos 1): the generated-question score
        ("auto", 1.0, True),
        ("generated_questions", 1.0, True),
        # the offline variant over INFO_1, INFO_2: (1 + 0.6) / 2, no question asked
        ("question_answer_similarity", 0.8, False),
    ],
)
def test_answer_relevance_method_read_from_a_run_file(method: str, value: float, asked: bool) -> None:
    # a method read from YAML is a fresh string: it must compare by value
    args = yaml.safe_load(f"method: {method}")
    # the fixed vectors' encoder beside it (a run file cannot name a Python encoder)
    metric = build_metric(MetricSpec(name="answer_relevance", args={**args, "encoder": Encoder()}))
    answer = f"{INFO_1} {INFO_2}"
    fake = ar_fake(questions={answer: GeneratedQuestions(questions=GENERATED[1:2])})
    s = score(metric, rag_case(answer), fake)
    assert s.value == pytest.approx(value, abs=1e-6)
    assert ("generate_questions" in fake.calls) is asked


def test_answer_relevance_offline_refusal_gives_the_reason() -> None:
    s = score(AnswerRelevance(encoder=Encoder()), rag_case(INFO_1), ar_fake(refused={INFO_1: True}))
    assert (s.value, s.label) == (0.0, "noncommittal")
    assert s.explanation == "the answer declines or evades: scripted"


def test_answer_relevance_method_question_answer_similarity_asks_for_no_questions() -> None:
    answer = f"{INFO_1} {INFO_2}"
    fake = ar_fake(questions={answer: GeneratedQuestions(questions=GENERATED)})
    s = score(AnswerRelevance(method="question_answer_similarity", encoder=Encoder()), rag_case(answer), fake)
    assert s.details["method"] == "question_answer_similarity"
    assert s.value == pytest.approx(0.8, abs=1e-6)
    assert "generate_questions" not in fake.calls


def test_answer_relevance_method_generated_questions_uses_them() -> None:
    answer = f"{INFO_1} {INFO_2}"
    fake = ar_fake(questions={answer: GeneratedQuestions(questions=GENERATED[1:2])})
    s = score(AnswerRelevance(method="generated_questions", encoder=Encoder()), rag_case(answer), fake)
    assert (s.value, s.details["method"]) == (1.0, "generated_questions")


class CountingJudge(FakePrimitives):
    """Records how many questions answer relevance asked the judge to write."""

    def __init__(self, **kw: Any):
        super().__init__(**kw)
        self.asked_for: list[int] = []

    async def generate_questions(self, answer: str, n: int = 3) -> GeneratedQuestions | None:
        self.asked_for.append(n)
        return await super().generate_questions(answer, n)


def test_answer_relevance_asks_for_n_questions_three_by_default() -> None:
    answer = f"{INFO_1} {INFO_2}"
    fake = CountingJudge(questions={answer: GeneratedQuestions(questions=GENERATED)})
    score(AnswerRelevance(encoder=Encoder()), rag_case(answer), fake)
    score(AnswerRelevance(n=5, encoder=Encoder()), rag_case(answer), fake)
    assert fake.asked_for == [3, 5]


def test_answer_relevance_similarities_are_kept_to_six_decimals() -> None:
    # 1/sqrt(2) = 0.70710678...: kept as 0.707107
    answer = "Keep them cool."
    fake = ar_fake(questions={answer: GeneratedQuestions(questions=GENERATED[2:])})
    s = score(AnswerRelevance(encoder=Encoder()), rag_case(answer), fake)
    assert s.details["questions"][0]["similarity"] == 0.707107
    assert s.value == pytest.approx(1 / math.sqrt(2), abs=1e-7)  # the value itself is not rounded


@pytest.mark.parametrize("n", [1, 10])
def test_answer_relevance_n_bounds_are_allowed(n: int) -> None:
    assert AnswerRelevance(n=n).n == n


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"n": 0}, "answer_relevance: n must be a whole number from 1 to 10, not 0"),
        ({"n": 11}, "answer_relevance: n must be a whole number from 1 to 10, not 11"),
        ({"n": True}, "answer_relevance: n must be a whole number from 1 to 10, not True"),
        ({"n": 3.0}, "answer_relevance: n must be a whole number from 1 to 10, not 3.0"),
        (
            {"method": "bm25"},
            "answer_relevance: unknown method 'bm25'; "
            "choose one of auto, generated_questions, question_answer_similarity",
        ),
        ({"encoder": "minilm"}, "answer_relevance: encoder must have an encode(texts) method"),
        ({"encoder": b"minilm"}, "answer_relevance: encoder must have an encode(texts) method"),
        ({"encoder": object()}, "answer_relevance: encoder must have an encode(texts) method"),
    ],
    ids=["n-0", "n-11", "n-bool", "n-float", "method", "encoder-str", "encoder-bytes", "encoder-object"],
)
def test_answer_relevance_bad_settings(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        AnswerRelevance(**settings)
    assert str(raised.value) == message
