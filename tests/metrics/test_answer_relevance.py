"""answer_relevance (RAGAS, Es et al.; ASTRID appendix A.1 eq. 2), with hand-worked values.

A controlled encoder gives each string a fixed vector, so every similarity is known:
cos([1, 0], [1, 1]) = 1/sqrt(2), cos([1, 0], [0.6, 0.8]) = 0.6, and so on.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from tests.metrics.fakes import FakeJudge, FakePrimitives

from clineval import evaluate
from clineval.errors import ConfigError
from clineval.judges.primitives import GeneratedQuestions
from clineval.metrics.base import ScoreContext, score_case
from clineval.metrics.rag import AnswerRelevance
from clineval.metrics.registry import build_metric
from clineval.model import Case, Score
from clineval.testing import ScriptedServer

QUESTION = "Can I keep my eye drops out of the fridge?"
ANSWER = "Thank you for asking. Yes, keep them below 25 degrees. Throw them away after four weeks."
ACK = "Thank you for asking."
INFO_1 = "Yes, keep them below 25 degrees."
INFO_2 = "Throw them away after four weeks."
GENERATED = [
    "Do my eye drops need the fridge?",
    "How long do eye drops last?",
    "Where should I store my drops?",
]


class ControlledEncoder:
    """Fixed vectors by string; records what it was asked to encode."""

    def __init__(self, vectors: dict[str, Sequence[float]]):
        self.vectors = vectors
        self.seen: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return np.asarray([self.vectors[t] for t in texts], dtype=np.float32)


def encoder() -> ControlledEncoder:
    return ControlledEncoder(
        {
            QUESTION: [1.0, 0.0],
            GENERATED[0]: [2.0, 0.0],  # cos 1 (length does not matter)
            GENERATED[1]: [0.0, 1.0],  # cos 0
            GENERATED[2]: [1.0, 1.0],  # cos 1/sqrt(2)
            ACK: [0.0, 1.0],
            INFO_1: [1.0, 0.0],  # cos 1
            INFO_2: [0.6, 0.8],  # cos 0.6
        }
    )


def case(response: str = ANSWER, question: str = QUESTION, contexts: list[str] | None = None) -> Case:
    return Case(id="ar", input=question, response=response, contexts=contexts)


def fake(**kw: object) -> FakePrimitives:
    kinds = {ACK: "acknowledgement", INFO_1: "informative", INFO_2: "informative"}
    return FakePrimitives(kinds=kinds, **kw)  # type: ignore[arg-type]


def run(metric: AnswerRelevance, c: Case, prims: FakePrimitives) -> Score:
    return asyncio.run(score_case(metric, c, ScoreContext(FakeJudge(prims))))


def test_generated_questions_mean_cosine() -> None:
    prims = fake(questions={ANSWER: GeneratedQuestions(questions=GENERATED, explanation="storage")})
    enc = encoder()
    s = run(AnswerRelevance(encoder=enc), case(), prims)
    # (1 + 0 + 1/sqrt(2)) / 3
    assert s.value == pytest.approx((1 + 0 + 1 / math.sqrt(2)) / 3, abs=1e-6)
    assert s.details["method"] == "generated_questions"
    assert [q["similarity"] for q in s.details["questions"]] == pytest.approx([1.0, 0.0, 0.707107], abs=1e-6)
    assert s.sub_scores == {"noncommittal": 0.0} and s.label is None
    assert "Do my eye drops need the fridge?" in (s.explanation or "")  # the closest one
    assert enc.seen == [QUESTION, *GENERATED]  # the question asked, then the generated ones
    assert prims.calls == {"generate_questions": 1}


def test_noncommittal_answer_scores_zero() -> None:
    answer = "I'm not sure, it depends."
    generated = GeneratedQuestions(questions=GENERATED, noncommittal=True, explanation="evades")
    s = run(AnswerRelevance(encoder=encoder()), case(answer), fake(questions={answer: generated}))
    assert (s.value, s.label) == (0.0, "noncommittal")
    assert s.sub_scores == {"noncommittal": 1.0}
    assert s.explanation == "the answer is noncommittal: evades"
    # the similarities are still recorded, for inspection
    assert len(s.details["questions"]) == 3


def test_offline_variant_uses_informative_sentences() -> None:
    # the judge cannot write questions (None): mean cosine over the informative sentences
    prims = fake()
    enc = encoder()
    s = run(AnswerRelevance(encoder=enc), case(), prims)
    assert s.value == pytest.approx((1.0 + 0.6) / 2, abs=1e-6)
    assert s.details["method"] == "question_answer_similarity"
    assert s.details["sentences_used"] == "informative"
    rows = {r["sentence"]: r for r in s.details["sentences"]}
    assert rows[ACK]["similarity"] is None and rows[INFO_2]["similarity"] == pytest.approx(0.6)
    assert ACK not in enc.seen  # the acknowledgement is left out
    assert prims.calls == {"generate_questions": 1, "detect_refusal": 1, "classify_sentences": 1}
    forced_prims = fake()
    forced_metric = AnswerRelevance(method="question_answer_similarity", encoder=encoder())
    forced = run(forced_metric, case(), forced_prims)
    assert forced.value == s.value and "generate_questions" not in forced_prims.calls


def test_offline_variant_refusal_is_noncommittal_and_no_informative_uses_all() -> None:
    prims = fake(refused={ANSWER: True})
    s = run(AnswerRelevance(encoder=encoder()), case(), prims)
    assert (s.value, s.label, s.sub_scores) == (0.0, "noncommittal", {"noncommittal": 1.0})
    only_ack = run(AnswerRelevance(encoder=encoder()), case(ACK), fake())
    assert only_ack.value == pytest.approx(0.0)  # cos([1, 0], [0, 1])
    assert only_ack.details["sentences_used"] == "all (no informative sentence)"


def test_generated_questions_required_but_the_judge_cannot_write_them() -> None:
    s = run(AnswerRelevance(method="generated_questions", encoder=encoder()), case(), fake())
    assert s.status == "error"
    assert "cannot write questions" in (s.error or "") and "method=question_answer_similarity" in (
        s.error or ""
    )


def test_empty_answer_empty_question_and_settings() -> None:
    prims = fake()
    empty = run(AnswerRelevance(encoder=encoder()), case("  "), prims)
    assert empty.status == "not_applicable" and empty.explanation == "the answer is empty"
    no_question = run(AnswerRelevance(encoder=encoder()), case(question=" "), prims)
    assert no_question.status == "error" and "question (the case's input) is empty" in (
        no_question.error or ""
    )
    assert prims.calls == {}  # nothing was asked of the judge
    missing = asyncio.run(
        score_case(AnswerRelevance(), Case(id="x", input="q"), ScoreContext(FakeJudge(prims)))
    )
    assert missing.status == "error" and "'response'" in (missing.error or "")
    for bad in ({"n": 0}, {"n": 11}, {"n": 2.5}, {"method": "bm25"}):
        with pytest.raises(ConfigError):
            AnswerRelevance(**bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="encode"):
        AnswerRelevance(encoder="minilm")  # type: ignore[arg-type]
    built = build_metric("answer_relevance(n=5, method=question_answer_similarity)")
    assert isinstance(built, AnswerRelevance) and built.n == 5


def test_contexts_do_not_change_answer_relevance() -> None:
    # answer relevance reads the question and the answer only: blank or no contexts are the same
    values = set()
    for contexts in (None, [], [""], ["  ", ""], ["Store below 25 degrees."]):
        s = run(AnswerRelevance(encoder=encoder()), case(contexts=contexts), fake())
        values.add(s.value)
        assert "retrieval" not in s.details
    assert len(values) == 1


def test_real_encoder_matches_a_computed_expectation() -> None:
    """The default encoder (all-MiniLM-L6-v2): the value is the mean cosine computed here."""
    from clineval.nlp.embeddings import MODEL_NAME, get_encoder

    prims = fake(questions={ANSWER: GeneratedQuestions(questions=GENERATED)})
    s = run(AnswerRelevance(), case(), prims)
    vectors = get_encoder().encode([QUESTION, *GENERATED]).astype(np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    expected = float(np.mean(vectors[1:] @ vectors[0]))
    assert s.value == pytest.approx(expected, abs=1e-5)
    assert 0.3 < expected < 1.0  # related questions about storing eye drops
    assert s.details["embedding"]["model"] == MODEL_NAME


# --- an LLM judge through the local OpenAI-compatible server ------------------------------------

GENERATION = "Write questions that this answer would be a direct"
REFUSING = "I'm sorry, I can't advise on that; please contact your care team."
RAMBLING = "The clinic car park is free after 6 pm."


def test_answer_relevance_through_the_http_judge(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script(
        {
            "rules": [
                {
                    "pattern": f"(?s){GENERATION}.*below 25 degrees",
                    "json": {
                        "explanation": "storage of drops",
                        "noncommittal": False,
                        "questions": GENERATED,
                    },
                },
                {
                    "pattern": f"(?s){GENERATION}.*contact your care team",
                    "json": {"explanation": "declines", "noncommittal": True, "questions": GENERATED},
                },
                # malformed: two questions where three were asked, every time
                {
                    "pattern": f"(?s){GENERATION}.*car park",
                    "json": {"noncommittal": False, "questions": GENERATED[:2]},
                },
            ]
        }
    )
    cases = [
        {"id": "good", "input": QUESTION, "response": ANSWER},
        {"id": "declines", "input": QUESTION, "response": REFUSING},
        {"id": "malformed", "input": QUESTION, "response": RAMBLING},
    ]
    result = evaluate(
        cases,
        ["answer_relevance"],
        judge=f"openai:judge@{llm_server.base_url}",
        store=tmp_path / "runs.db",
        progress=False,
    )
    s = {r.case_id: r.score for r in result.results if r.metric == "answer_relevance"}
    from clineval.nlp.embeddings import get_encoder

    vectors = get_encoder().encode([QUESTION, *GENERATED]).astype(np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert s["good"].value == pytest.approx(float(np.mean(vectors[1:] @ vectors[0])), abs=1e-5)
    assert s["good"].details["method"] == "generated_questions"
    assert s["good"].details["judge_settings"]["prompts"]["question_generation"] == "question_generation@v1"
    assert (s["declines"].value, s["declines"].label) == (0.0, "noncommittal")
    # a malformed answer is asked again once, then the case is unscored, never 0
    assert s["malformed"].status == "error" and s["malformed"].value is None
    assert "give exactly 3 non-empty question(s), not 2" in (s["malformed"].error or "")
    generation = [r for r in llm_server.requests() if GENERATION in r["body"]["messages"][0]["content"]]
    assert len(generation) == 4  # good, declines, malformed + its re-ask
    expected = f"## The assistant's answer\n{ANSWER}\n\nWrite 3 question(s)."
    assert any(r["body"]["messages"][-1]["content"] == expected for r in generation)
