"""LLMPrimitives through the local OpenAI-compatible server and through the scripted judge."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from clineval.errors import ConfigError
from clineval.judges import JudgeCache, JudgeConfig, JudgeError, ScriptedJudge, StructuredJudge, build_judge
from clineval.judges.base import Judge
from clineval.judges.llm_primitives import (
    PROMPT_NAMES,
    EntailmentAnswer,
    LLMPrimitives,
    entailment_schema,
    fact_extraction_schema,
    relevant_sentences_schema,
    sentence_types_schema,
)
from clineval.judges.openai_compat import OpenAIBackend
from clineval.judges.primitives import (
    DEFAULT_CATEGORIES,
    Decision,
    Fact,
    GeneratedQuestions,
    Primitives,
    Verdict,
)
from clineval.judges.scripted import ScriptedBackend, ScriptRule
from clineval.prompts import load_prompt
from clineval.testing import ScriptedServer

# --- synthetic cases, one per primitive, each with words that no packaged example uses ------

EXTRACT_TEXT = (
    "Mrs. Adeyemi, 58, has stage II colon adenocarcinoma. She started capecitabine "
    "1250 mg/m2 twice daily on 4 April 2024."
)
FACTS_ANSWER = {
    "facts": [
        {"text": "Mrs. Adeyemi is 58 years old.", "category": "demographics", "importance": "medium"},
        {
            "text": "Mrs. Adeyemi has stage II colon adenocarcinoma.",
            "category": "diagnosis",
            "importance": "high",
        },
        {
            "text": "Mrs. Adeyemi started capecitabine 1250 mg/m2 twice daily on 4 April 2024.",
            "category": "treatment",
            "importance": "high",
        },
    ]
}

CLAIMS = [
    "Mrs. Adeyemi has stage II colon adenocarcinoma.",
    "Mrs. Adeyemi started capecitabine on 4 April 2024.",
    "Mrs. Adeyemi has liver metastases.",
]
EVIDENCE = "Colon adenocarcinoma, stage II (Mrs. Adeyemi). Capecitabine from 4 April 2024."
VERDICTS = [
    {
        "id": 1,
        "evidence": "Colon adenocarcinoma, stage II",
        "explanation": "Same diagnosis and stage.",
        "label": "entailed",
        "reason": None,
    },
    {
        "id": 2,
        "evidence": "Capecitabine from 4 April 2024.",
        "explanation": "Same drug and start date.",
        "label": "entailed",
        "reason": None,
    },
    {
        "id": 3,
        "evidence": "",
        "explanation": "Metastases are not mentioned.",
        "label": "not_entailed",
        "reason": "missing",
    },
]

SENT_QUESTION = "Can I sleep on my side after my hip replacement?"
SENTENCES = [
    "Thanks for your question.",
    "Most people can sleep on the operated side after about six weeks.",
    "Has your surgeon given you specific advice?",
]
KINDS = ["acknowledgement", "informative", "question"]

REFUSAL_Q = "Can I stop my tamoxifen for a month before my holiday?"
REFUSAL_A = "I can't advise on stopping tamoxifen; please ask your oncology team."

DECLINE_Q = "How much paracetamol can I take in 24 hours?"
DECLINE_CONTEXTS = [
    "Adults can take up to 4 g of paracetamol in 24 hours (two 500 mg tablets four times a day)."
]

CR_Q = "When can I fly after my knee arthroscopy?"
CR_CONTEXTS = [
    "After a knee arthroscopy, short flights are usually fine after one week.",
    "Keep the dressing dry for five days.",
]

RS_Q = "How should I store insulin pens that I am not using yet?"
RS_SENTENCES = [
    "Keep unopened insulin pens in the fridge at 2-8 degrees.",
    "Do not freeze them.",
    "The pharmacy is open until 6 pm.",
]

ST_Q = "Is it safe to drink alcohol with metronidazole?"
ST_A = "No. Avoid alcohol while taking metronidazole and for 48 hours after the last dose."
STATEMENTS = [
    "Drinking alcohol while taking metronidazole is not safe.",
    "Alcohol should be avoided for 48 hours after the last dose of metronidazole.",
]

GR_Q = "I took my levothyroxine with coffee this morning. Is that a problem?"
GR_EVIDENCE = "Take levothyroxine on an empty stomach, 30 minutes before breakfast or coffee."
GR_SENTENCES = ["Yes, it can be.", "Coffee can reduce how much levothyroxine you absorb."]
GR_VERDICTS = [
    {
        "id": 1,
        "evidence": "30 minutes before breakfast or coffee",
        "explanation": "The reply asserts that taking it with coffee is a problem; the passage says to wait.",
        "label": "entailed",
        "reason": None,
    },
    {"id": 2, "evidence": "", "explanation": "Absorption is not mentioned.", "label": "not_entailed"},
]

QG_A = "Yes, you can have the shingles vaccine two weeks after finishing your antibiotics."
QG_QUESTIONS = [
    "Can I have the shingles vaccine after antibiotics?",
    "How long after antibiotics can I get my shingles jab?",
    "Is it fine to get the shingles vaccine once my antibiotics are finished?",
]

# pattern -> answer, for both the HTTP server and the scripted judge
ANSWERS: dict[str, dict[str, Any]] = {
    r"Mrs\. Adeyemi, 58": FACTS_ANSWER,
    r"Capecitabine from 4 April": {"verdicts": VERDICTS},
    r"sleep on the operated side": {"sentences": [{"id": i, "kind": k} for i, k in enumerate(KINDS, 1)]},
    r"stopping tamoxifen": {"explanation": "Declines to advise on stopping tamoxifen.", "refused": True},
    r"up to 4 g of paracetamol": {
        "explanation": "The passage gives the maximum daily dose.",
        "decline": False,
        "reason": "none",
    },
    r"knee arthroscopy": {"explanation": "Passage 1 gives the timing of flights.", "relevant": True},
    r"insulin pens": {
        "sentences": [{"id": 1, "relevant": True}, {"id": 2, "relevant": True}, {"id": 3, "relevant": False}]
    },
    r"metronidazole": {"statements": STATEMENTS},
    r"levothyroxine with coffee": {"verdicts": GR_VERDICTS},
    r"shingles vaccine two weeks": {
        "explanation": "Says when the vaccine can be given.",
        "noncommittal": False,
        "questions": QG_QUESTIONS,
    },
}


async def run_every_primitive(primitives: Primitives) -> dict[str, Any]:
    return {
        "facts": await primitives.extract_facts(EXTRACT_TEXT),
        "verdicts": await primitives.check_facts(CLAIMS, EVIDENCE),
        "kinds": await primitives.classify_sentences(SENTENCES, SENT_QUESTION),
        "refusal": await primitives.detect_refusal(REFUSAL_Q, REFUSAL_A),
        "decline": await primitives.should_decline(DECLINE_Q, DECLINE_CONTEXTS),
        "relevant": await primitives.context_relevant(CR_Q, CR_CONTEXTS),
        "sentences": await primitives.relevant_sentences(RS_Q, RS_SENTENCES),
        "statements": await primitives.extract_statements(ST_Q, ST_A),
        "grounding": await primitives.check_grounding(GR_SENTENCES, GR_EVIDENCE, GR_Q),
        "questions": await primitives.generate_questions(QG_A, 3),
    }


def check_every_answer(out: dict[str, Any]) -> None:
    assert out["facts"] == [Fact.model_validate(f) for f in FACTS_ANSWER["facts"]]
    assert [v.label for v in out["verdicts"]] == ["entailed", "entailed", "not_entailed"]
    assert out["verdicts"][2] == Verdict(
        label="not_entailed", reason="missing", evidence="", explanation="Metastases are not mentioned."
    )
    assert out["verdicts"][0].evidence == "Colon adenocarcinoma, stage II"
    assert out["kinds"] == KINDS
    assert out["refusal"] == Decision(value=True, explanation="Declines to advise on stopping tamoxifen.")
    assert out["decline"] == Decision(value=False, explanation="The passage gives the maximum daily dose.")
    assert out["relevant"].value is True
    assert out["sentences"] == [True, True, False]
    assert out["statements"] == STATEMENTS
    assert [(v.label, v.reason) for v in out["grounding"]] == [("entailed", None), ("not_entailed", "other")]
    assert out["questions"] == GeneratedQuestions(
        questions=QG_QUESTIONS, noncommittal=False, explanation="Says when the vaccine can be given."
    )


def http_judge(server: ScriptedServer, tmp_path: Path | None = None) -> Judge:
    judge = build_judge(
        JudgeConfig(provider="openai", model="judge-model", base_url=server.base_url),
        cache_path=(tmp_path / "cache.db") if tmp_path else None,
    )
    assert judge is not None
    return judge


def numbered_lines(messages: list[dict[str, str]]) -> list[int]:
    """The item numbers ``[k]`` of the final user message."""
    return [int(k) for k in re.findall(r"^\[(\d+)\] ", messages[-1]["content"], re.MULTILINE)]


def numbered(field: str, make: Callable[[int], dict[str, Any]]) -> Callable[[list[dict[str, str]]], Any]:
    """A scripted answer with one item per numbered line of the final user message."""

    def answer(messages: list[dict[str, str]]) -> dict[str, Any]:
        return {field: [{"id": k, **make(k)} for k in numbered_lines(messages)]}

    return answer


# --- through the real HTTP server ------------------------------------------------------------


async def test_every_primitive_through_the_http_judge(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"rules": [{"pattern": p, "json": a} for p, a in ANSWERS.items()]})
    judge = http_judge(llm_server)
    primitives = LLMPrimitives(judge)
    out = await run_every_primitive(primitives)
    await judge.aclose()
    check_every_answer(out)
    requests = llm_server.requests()
    assert len(requests) == len(PROMPT_NAMES) == 10  # one request per question
    for request, name in zip(requests, PROMPT_NAMES, strict=True):
        messages = request["body"]["messages"]
        prompt = load_prompt(name)
        # system, the few-shot examples as alternating user/assistant turns, the case
        assert [m["role"] for m in messages] == [
            "system",
            *["user", "assistant"] * len(prompt.examples),
            "user",
        ]
        assert "JSON schema" in messages[0]["content"]
        assert request["body"]["response_format"]["type"] == "json_schema"
    first = requests[0]["body"]
    assert first["messages"][-1]["content"] == f"## Text\n{EXTRACT_TEXT}"
    assert first["response_format"]["json_schema"]["name"] == "FactExtractionAnswer"
    entail = requests[1]["body"]
    assert "[3] Mrs. Adeyemi has liver metastases." in entail["messages"][-1]["content"]
    items = entail["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
    assert items["minItems"] == items["maxItems"] == 3
    grounding = requests[8]["body"]["messages"][-1]["content"]
    # the grounding step sees the question, so that "Yes, it can be." can be judged
    assert grounding.startswith(f"## What the user asked\n{GR_Q}\n\n## Retrieved passages\n{GR_EVIDENCE}")
    assert "[1] Yes, it can be." in grounding
    generation = requests[9]["body"]
    assert generation["messages"][-1]["content"].endswith("Write 3 question(s).")
    questions = generation["response_format"]["json_schema"]["schema"]["properties"]["questions"]
    assert questions["minItems"] == questions["maxItems"] == 3


async def test_reordered_ids_are_aligned_through_http(llm_server: ScriptedServer) -> None:
    shuffled = [VERDICTS[2], VERDICTS[0], VERDICTS[1]]
    llm_server.set_script({"default": {"json": {"verdicts": shuffled}}})
    judge = http_judge(llm_server)
    verdicts = await LLMPrimitives(judge).check_facts(CLAIMS, EVIDENCE)
    await judge.aclose()
    assert [v.label for v in verdicts] == ["entailed", "entailed", "not_entailed"]
    assert [v.explanation for v in verdicts] == [v["explanation"] for v in VERDICTS]
    assert llm_server.stats()["chat_requests"] == 1


async def test_a_skipped_id_is_reasked_with_the_ids_named(llm_server: ScriptedServer) -> None:
    llm_server.set_script(
        {
            "rules": [{"times": 1, "json": {"verdicts": VERDICTS[:2]}}],
            "default": {"json": {"verdicts": VERDICTS}},
        }
    )
    judge = http_judge(llm_server)
    verdicts = await LLMPrimitives(judge).check_facts(CLAIMS, EVIDENCE)
    await judge.aclose()
    assert [v.label for v in verdicts] == ["entailed", "entailed", "not_entailed"]
    requests = llm_server.requests()
    assert len(requests) == 2
    reask = requests[1]["body"]["messages"][-1]["content"]
    assert "missing id(s) 3" in reask and "from 1 to 3" in reask


@pytest.mark.parametrize(
    ("items", "named"),
    [
        ([VERDICTS[0], VERDICTS[2]], "missing id(s) 2"),
        ([*VERDICTS, {**VERDICTS[0], "id": 7}], "unknown id(s) 7"),
        ([VERDICTS[0], VERDICTS[1], {**VERDICTS[2], "id": 2}], "repeated id(s) 2"),
    ],
    ids=["missing", "invented", "duplicated"],
)
async def test_bad_ids_through_http_become_a_judge_error(
    llm_server: ScriptedServer, items: list[dict[str, Any]], named: str
) -> None:
    llm_server.set_script({"default": {"json": {"verdicts": items}}})
    judge = http_judge(llm_server)
    with pytest.raises(JudgeError, match=re.escape(named)) as info:
        await LLMPrimitives(judge).check_facts(CLAIMS, EVIDENCE)
    await judge.aclose()
    assert "after one re-ask" in info.value.reason
    assert llm_server.stats()["chat_requests"] == 2
    assert info.value.usage.calls == 2 and info.value.usage.reasks == 1


async def test_prompt_edit_changes_the_cache_key_of_the_http_judge(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    llm_server.set_script({"default": {"json": {"explanation": "Declines.", "refused": True}}})
    judge = http_judge(llm_server, tmp_path)
    await LLMPrimitives(judge).detect_refusal(REFUSAL_Q, REFUSAL_A)
    await LLMPrimitives(judge).detect_refusal(REFUSAL_Q, REFUSAL_A)
    assert llm_server.stats()["chat_requests"] == 1  # the second answer came from the cache
    original = load_prompt("refusal")
    edited = dataclasses.replace(original, system=original.system + "\nBe strict.")
    decision = await LLMPrimitives(judge, prompts={"refusal": edited}).detect_refusal(REFUSAL_Q, REFUSAL_A)
    await judge.aclose()
    assert decision.value is True
    assert llm_server.stats()["chat_requests"] == 2


# --- through the scripted judge --------------------------------------------------------------


async def test_every_primitive_through_the_scripted_judge() -> None:
    judge = ScriptedJudge(ANSWERS)
    out = await run_every_primitive(LLMPrimitives(judge))
    check_every_answer(out)
    assert len(judge.requests) == 10


def test_identity_and_protocol() -> None:
    judge = ScriptedJudge()
    primitives = LLMPrimitives(judge)
    assert isinstance(primitives, Primitives)
    assert primitives.name == "scripted" and primitives.kind == "llm"
    described = primitives.describe()
    assert described["judge"] == "scripted"
    versions = {"statements": 2}
    assert described["prompts"] == {name: f"{name}@v{versions.get(name, 1)}" for name in PROMPT_NAMES}


async def test_empty_inputs_never_call_the_judge() -> None:
    judge = ScriptedJudge()  # no rules and no default: any request would raise
    p = LLMPrimitives(judge)
    assert await p.extract_facts("") == []
    assert await p.extract_facts("  \n ") == []
    assert await p.check_facts([], EVIDENCE) == []
    assert await p.classify_sentences([], "q") == []
    assert await p.relevant_sentences("q", []) == []
    assert await p.extract_statements("q", " ") == []
    assert await p.check_grounding([], EVIDENCE, "q") == []
    no_evidence = await p.check_grounding(GR_SENTENCES, " ", GR_Q)
    assert [(v.label, v.reason) for v in no_evidence] == [("not_entailed", "missing")] * 2
    nothing_said = await p.generate_questions("  ")
    assert nothing_said is not None and nothing_said.noncommittal and nothing_said.questions == []
    blank = await p.check_facts(CLAIMS, "  ")
    assert [(v.label, v.reason) for v in blank] == [("not_entailed", "missing")] * 3
    no_context = await p.context_relevant("q", [])
    assert no_context.value is False and no_context.reason == "no_context"
    nothing_retrieved = await p.should_decline("q", ["", " "])
    assert nothing_retrieved.value is True and nothing_retrieved.reason == "insufficient_context"
    empty_answer = await p.detect_refusal("q", "")
    assert empty_answer.value is True and empty_answer.reason == "empty_answer"
    assert judge.requests == []


async def test_one_request_per_batch() -> None:
    judge = ScriptedJudge(
        {
            r"## Facts to check": numbered(
                "verdicts", lambda k: {"label": "entailed" if k % 2 else "partial", "reason": "missing"}
            ),
            r"## Sentences of the answer": numbered("sentences", lambda k: {"kind": "informative"}),
            r"## Context sentences": numbered("sentences", lambda k: {"relevant": k <= 2}),
        }
    )
    p = LLMPrimitives(judge)
    claims = [f"Fact number {i} about the patient." for i in range(1, 41)]
    verdicts = await p.check_facts(claims, "A long discharge letter.")
    assert len(judge.requests) == 1 and len(verdicts) == 40
    assert [v.label for v in verdicts[:3]] == ["entailed", "partial", "entailed"]
    assert verdicts[0].reason is None and verdicts[1].reason == "missing"
    kinds = await p.classify_sentences([f"Sentence {i}." for i in range(25)])
    assert len(judge.requests) == 2 and kinds == ["informative"] * 25
    relevant = await p.relevant_sentences("q", [f"Context sentence {i}." for i in range(12)])
    assert len(judge.requests) == 3 and relevant == [True, True] + [False] * 10


@pytest.mark.parametrize(
    ("first", "named"),
    [
        ([{"id": 2, "kind": "question"}], "missing id(s) 1, 3"),
        ([{"id": i, "kind": "question"} for i in (1, 2, 3, 4)], "unknown id(s) 4"),
        ([{"id": i, "kind": "question"} for i in (1, 1, 2, 3)], "repeated id(s) 1"),
        (
            [{"id": 0, "kind": "question"}, {"id": 1, "kind": "question"}, {"id": 2, "kind": "question"}],
            "missing id(s) 3; unknown id(s) 0",
        ),
    ],
    ids=["missing", "invented", "duplicated", "zero-based"],
)
async def test_bad_ids_are_reasked_once(first: list[dict[str, Any]], named: str) -> None:
    good = {"sentences": [{"id": i, "kind": k} for i, k in enumerate(KINDS, 1)]}
    judge = ScriptedJudge(default=[{"sentences": first}, good])
    kinds = await LLMPrimitives(judge).classify_sentences(SENTENCES, SENT_QUESTION)
    assert kinds == KINDS
    assert len(judge.requests) == 2
    assert named in judge.requests[1][-1]["content"]


async def test_bad_ids_twice_raise_for_every_numbered_primitive() -> None:
    judge = ScriptedJudge(
        {
            r"## Facts to check": {"verdicts": [{"id": 1, "label": "entailed"}]},
            r"## Sentences of the answer": {"sentences": [{"id": 1, "kind": "question"}]},
            r"## Context sentences": {"sentences": [{"id": 1, "relevant": True}]},
        }
    )
    p = LLMPrimitives(judge)
    with pytest.raises(JudgeError, match=r"missing id\(s\) 2, 3"):
        await p.check_facts(CLAIMS, EVIDENCE)
    with pytest.raises(JudgeError, match=r"missing id\(s\) 2, 3"):
        await p.classify_sentences(SENTENCES)
    with pytest.raises(JudgeError, match=r"missing id\(s\) 2, 3"):
        await p.relevant_sentences(RS_Q, RS_SENTENCES)
    assert len(judge.requests) == 6  # each: the answer and one re-ask


async def test_reordered_ids_are_sorted_for_every_numbered_primitive() -> None:
    def reversed_items(field: str, make: Callable[[int], dict[str, Any]]) -> Callable[..., Any]:
        forward = numbered(field, make)
        return lambda messages: {field: list(reversed(forward(messages)[field]))}

    judge = ScriptedJudge(
        {
            r"## Facts to check": reversed_items(
                "verdicts", lambda k: {"label": "entailed", "explanation": f"fact {k}"}
            ),
            r"## Sentences of the answer": reversed_items("sentences", lambda k: {"kind": KINDS[k - 1]}),
            r"## Context sentences": reversed_items("sentences", lambda k: {"relevant": k == 1}),
        }
    )
    p = LLMPrimitives(judge)
    verdicts = await p.check_facts(CLAIMS, EVIDENCE)
    assert [v.explanation for v in verdicts] == ["fact 1", "fact 2", "fact 3"]
    assert await p.classify_sentences(SENTENCES) == KINDS
    assert await p.relevant_sentences(RS_Q, RS_SENTENCES) == [True, False, False]
    assert len(judge.requests) == 3


async def test_labels_are_normalised() -> None:
    judge = ScriptedJudge(
        {
            r"## Facts to check": {
                "verdicts": [
                    {"id": 1, "label": "Entailed", "reason": "none"},
                    {"id": 2, "label": "partially entailed", "reason": "Ambiguous"},
                    {"id": 3, "label": "not-entailed"},
                ]
            },
            r"## Sentences of the answer": {
                "sentences": [
                    {"id": 1, "kind": "Acknowledgment"},
                    {"id": 2, "kind": "INFORMATIVE"},
                    {"id": 3, "kind": "question"},
                ]
            },
        }
    )
    p = LLMPrimitives(judge)
    verdicts = await p.check_facts(CLAIMS, EVIDENCE)
    assert [(v.label, v.reason) for v in verdicts] == [
        ("entailed", None),
        ("partial", "ambiguous"),
        ("not_entailed", "other"),  # a non-entailed verdict without a reason
    ]
    assert await p.classify_sentences(SENTENCES) == KINDS
    assert len(judge.requests) == 2


async def test_unknown_labels_are_reasked_then_fail() -> None:
    judge = ScriptedJudge(default={"verdicts": [{"id": 1, "label": "probably"}]})
    with pytest.raises(JudgeError, match="label"):
        await LLMPrimitives(judge).check_facts(CLAIMS[:1], EVIDENCE)
    assert len(judge.requests) == 2


# --- fact categories -------------------------------------------------------------------------


def facts_with(*categories: str) -> dict[str, Any]:
    return {
        "facts": [
            {"text": f"Fact {i}.", "category": c, "importance": "High"} for i, c in enumerate(categories, 1)
        ]
    }


async def test_categories_are_matched_case_insensitively_and_unknown_ones_become_other() -> None:
    judge = ScriptedJudge(default=facts_with("Diagnosis", "biomarkers", "Imaging", "imaging", "OTHER"))
    p = LLMPrimitives(judge)
    facts = await p.extract_facts("Some clinical text.")
    assert [f.category for f in facts] == ["diagnosis", "biomarker", "other", "other", "other"]
    assert {f.importance for f in facts} == {"high"}
    assert p.category_fallbacks == {"Imaging": 1, "imaging": 1}
    assert len(judge.requests) == 1


async def test_unknown_category_without_other_is_reasked_with_the_allowed_list() -> None:
    judge = ScriptedJudge(default=[facts_with("imaging"), facts_with("Finding", "plan")])
    p = LLMPrimitives(judge)
    facts = await p.extract_facts("Some clinical text.", categories=["finding", "Plan"])
    assert [f.category for f in facts] == ["finding", "plan"]
    assert len(judge.requests) == 2
    assert "unknown category 'imaging': use one of finding, plan" in judge.requests[1][-1]["content"]
    failing = ScriptedJudge(default=facts_with("imaging"))
    with pytest.raises(JudgeError, match="unknown category 'imaging'"):
        await LLMPrimitives(failing).extract_facts("Some text.", categories=["finding", "plan"])
    assert len(failing.requests) == 2


async def test_categories_reach_the_prompt_and_examples_that_do_not_fit_are_left_out() -> None:
    judge = ScriptedJudge(default={"facts": []})
    p = LLMPrimitives(judge)
    assert await p.extract_facts("Some clinical text.") == []
    default_request = judge.requests[0]
    for category in DEFAULT_CATEGORIES:
        assert f"\n- {category}: " in default_request[0]["content"]
    assert len(default_request) == 2 + 2 * len(load_prompt("fact_extraction").examples)

    await p.extract_facts("Some clinical text.", categories=["Finding", "plan", "other"])
    custom = judge.requests[1]
    assert "\n- finding\n- plan\n- other: anything" in custom[0]["content"]
    assert "- diagnosis" not in custom[0]["content"]
    # only the example without facts uses no other category: system, its pair, the case
    assert [m["role"] for m in custom] == ["system", "user", "assistant", "user"]
    assert custom[2]["content"] == '{"facts": []}'
    schema = custom[0]["content"]
    assert '"enum": ["finding", "plan", "other"]' in schema


async def test_blank_facts_in_the_answer_are_dropped() -> None:
    judge = ScriptedJudge(
        default={
            "facts": [
                {"text": "  ", "category": "other", "importance": "low"},
                {
                    "text": " Mrs. Adeyemi is 58 years old. ",
                    "category": "demographics",
                    "importance": "medium",
                },
            ]
        }
    )
    facts = await LLMPrimitives(judge).extract_facts(EXTRACT_TEXT)
    assert facts == [Fact(text="Mrs. Adeyemi is 58 years old.", category="demographics", importance="medium")]


# --- decisions -------------------------------------------------------------------------------


async def test_should_decline_with_and_without_contexts() -> None:
    judge = ScriptedJudge(
        {
            # patterns match the case only: the few-shot examples show both modes
            r"diazepam": {"explanation": "Illicit supply.", "decline": True, "reason": "harmful"},
            r"Keep the dressing dry": {
                "explanation": "Nothing about dosing.",
                "decline": True,
                "reason": "insufficient_context",
            },
        }
    )
    p = LLMPrimitives(judge)
    without = await p.should_decline("Where can I buy diazepam without a prescription?")
    assert without == Decision(value=True, explanation="Illicit supply.", reason="harmful")
    with_contexts = await p.should_decline(DECLINE_Q, ["Keep the dressing dry for five days."])
    assert with_contexts.reason == "insufficient_context"
    assert "### Passage 1\nKeep the dressing dry" in judge.requests[1][-1]["content"]
    assert "Passage" not in judge.requests[0][-1]["content"]
    assert "(No retrieved passages: judge the request itself.)" in judge.requests[0][-1]["content"]
    assert "No retrieved passages" not in judge.requests[1][-1]["content"]


async def test_decline_without_a_reason_is_reasked_and_a_reason_without_decline_is_dropped() -> None:
    judge = ScriptedJudge(
        default=[
            {"explanation": "Unsafe.", "decline": True, "reason": "none"},
            {"explanation": "Unsafe.", "decline": True, "reason": "Out of scope"},
        ]
    )
    p = LLMPrimitives(judge)
    decision = await p.should_decline("Can you book my flight to Lisbon?")
    assert decision.reason == "out_of_scope"
    assert len(judge.requests) == 2
    assert "reason must be insufficient_context, harmful or out_of_scope" in judge.requests[1][-1]["content"]
    answered = ScriptedJudge(default={"explanation": "Fine.", "decline": False, "reason": "harmful"})
    assert await LLMPrimitives(answered).should_decline(DECLINE_Q) == Decision(
        value=False, explanation="Fine."
    )


async def test_context_relevance_lists_every_passage() -> None:
    judge = ScriptedJudge(default={"explanation": "Passage 1 answers it.", "relevant": True})
    decision = await LLMPrimitives(judge).context_relevant(CR_Q, [*CR_CONTEXTS, "  "])
    assert decision == Decision(value=True, explanation="Passage 1 answers it.")
    user = judge.requests[0][-1]["content"]
    assert "## Retrieved passages (2)" in user and "### Passage 2\nKeep the dressing dry" in user


async def test_statements_drop_blanks() -> None:
    judge = ScriptedJudge(default={"statements": ["", STATEMENTS[0], "  "]})
    assert await LLMPrimitives(judge).extract_statements(ST_Q, ST_A) == [STATEMENTS[0]]


# --- prompts: overrides and the cache key ----------------------------------------------------


async def test_prompt_override_by_template_and_by_file(tmp_path: Path) -> None:
    custom = tmp_path / "refusal.yaml"
    custom.write_text(
        "name: refusal_strict\nversion: 3\nsystem: Decide whether the answer declines.\n"
        "user: 'Q: {{ question }} A: {{ answer }}'\n",
        encoding="utf-8",
    )
    judge = ScriptedJudge(default={"explanation": "x", "refused": False})
    p = LLMPrimitives(judge, prompts={"refusal": custom})
    assert p.describe()["prompts"]["refusal"] == "refusal_strict@v3"
    await p.detect_refusal("q1", "a1")
    assert judge.requests[0][-1]["content"] == "Q: q1 A: a1"
    assert judge.requests[0][0]["content"].startswith("Decide whether the answer declines.")
    template = dataclasses.replace(load_prompt("statements"), version=2, examples=())
    q = LLMPrimitives(judge, prompts={"statements": template})
    assert q.describe()["prompts"]["statements"] == "statements@v2"
    with pytest.raises(ConfigError, match="unknown prompt 'refusals'"):
        LLMPrimitives(judge, prompts={"refusals": template})


async def test_prompt_edit_changes_the_cache_key(tmp_path: Path) -> None:
    backend = ScriptedBackend([ScriptRule(pattern=".", answer={"explanation": "x", "refused": True})])
    judge = StructuredJudge(backend, cache=JudgeCache(tmp_path / "cache.db"), mode="text")
    original = load_prompt("refusal")
    edits = {
        "system": dataclasses.replace(original, system=original.system.replace("clinical", "medical")),
        "user": dataclasses.replace(original, user=original.user.replace("## The assistant's", "## Its")),
        "examples": dataclasses.replace(original, examples=original.examples[:-1]),
    }
    await LLMPrimitives(judge).detect_refusal(REFUSAL_Q, REFUSAL_A)
    await LLMPrimitives(judge).detect_refusal(REFUSAL_Q, REFUSAL_A)
    assert len(backend.requests) == 1  # same prompt: served from the cache
    for edited in edits.values():
        await LLMPrimitives(judge, prompts={"refusal": edited}).detect_refusal(REFUSAL_Q, REFUSAL_A)
    assert len(backend.requests) == 1 + len(edits)  # every edit is a new key
    await judge.aclose()


def test_cache_key_follows_the_rendered_prompt() -> None:
    def key(messages: list[Any]) -> str:
        judge = StructuredJudge(OpenAIBackend(model="m", base_url="http://127.0.0.1:9/v1"))
        return judge.key_for(messages, EntailmentAnswer)

    prompt = load_prompt("entailment")
    base = key(prompt.render(facts=CLAIMS, text=EVIDENCE))
    assert base == key(load_prompt("entailment").render(facts=CLAIMS, text=EVIDENCE))
    reworded = dataclasses.replace(prompt, system=prompt.system.replace("copied exactly", "quoted"))
    assert key(reworded.render(facts=CLAIMS, text=EVIDENCE)) != base
    fewer_examples = dataclasses.replace(prompt, examples=prompt.examples[:1])
    assert key(fewer_examples.render(facts=CLAIMS, text=EVIDENCE)) != base


# --- the schema classes ----------------------------------------------------------------------


def test_schema_classes_are_built_once_per_count() -> None:
    assert entailment_schema(3) is entailment_schema(3)
    assert entailment_schema(3) is not entailment_schema(4)
    assert entailment_schema(3).__name__ == "EntailmentAnswer"
    assert sentence_types_schema(2).expected_count == 2
    assert relevant_sentences_schema(5).model_json_schema()["properties"]["sentences"]["maxItems"] == 5
    assert fact_extraction_schema(DEFAULT_CATEGORIES) is fact_extraction_schema(DEFAULT_CATEGORIES)
    with pytest.raises(ValueError, match="at least one item"):
        entailment_schema(0)


def test_numbered_answers_are_sorted_by_id() -> None:
    parsed = entailment_schema(3).model_validate_json(
        '{"verdicts": [{"id": "3", "label": "entailed"}, {"id": 1, "label": "partial", "reason": "missing"},'
        ' {"id": 2, "label": "not_entailed", "reason": "incorrect", "extra": 1}]}'
    )
    assert [(v.id, v.label) for v in parsed.verdicts] == [
        (1, "partial"),
        (2, "not_entailed"),
        (3, "entailed"),
    ]


@pytest.mark.parametrize("answer", [{"facts": "none"}, {"facts": [{"text": "x"}]}, {}])
def test_malformed_fact_answers_are_rejected(answer: Mapping[str, Any]) -> None:
    with pytest.raises(ValueError):
        fact_extraction_schema(DEFAULT_CATEGORIES).model_validate(answer)
