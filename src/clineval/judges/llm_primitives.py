"""The judgement primitives answered by an LLM judge through the packaged, versioned prompts.

:class:`LLMPrimitives` implements :class:`~clineval.judges.primitives.Primitives` on top of
any :class:`~clineval.judges.base.Judge`. Each question renders one prompt file of
:mod:`clineval.prompts` (system message, few-shot examples, the case) and asks the judge
for one validated object, batched:

========================  ==================  ===========================================
method                    prompt              requests
========================  ==================  ===========================================
``extract_facts``         fact_extraction     one per text
``check_facts``           entailment          one per direction (all facts at once)
``classify_sentences``    sentence_types      one per answer (all sentences at once)
``detect_refusal``        refusal             one per answer
``should_decline``        should_decline      one per question
``context_relevant``      context_relevance   one per question
``relevant_sentences``    relevant_sentences  one per question (all sentences at once)
``extract_statements``    statements          one per answer
``check_grounding``       grounding           one per answer (all sentences at once)
``generate_questions``    question_generation one per answer
========================  ==================  ===========================================

Empty input never reaches the judge: no facts or sentences give ``[]``, a blank text gives
no facts or statements, and an empty set of passages is decided without a request (see the
methods).

Answers about numbered items (facts, sentences) carry the item's ``id``. The schema class
for ``n`` items (built once per ``n``) rejects an answer that skips, repeats or invents an
id, naming the ids; :class:`~clineval.judges.structured.StructuredJudge` then asks once
more with that message, and a second bad answer raises
:class:`~clineval.judges.base.JudgeError`. Items given in another order are sorted by id,
so answers always line up with the inputs.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from clineval.errors import ConfigError
from clineval.judges.base import ChatMessage, Judge, T
from clineval.judges.primitives import (
    DEFAULT_CATEGORIES,
    Decision,
    EntailmentLabel,
    Fact,
    GeneratedQuestions,
    Importance,
    JudgeKind,
    MismatchReason,
    SentenceKind,
    Verdict,
)
from clineval.prompts import PromptExample, PromptTemplate, load_prompt, load_prompt_file

__all__ = [
    "PROMPT_NAMES",
    "ContextRelevanceAnswer",
    "EntailmentAnswer",
    "EntailmentItem",
    "ExtractedFact",
    "FactExtractionAnswer",
    "LLMPrimitives",
    "NumberedAnswer",
    "NumberedItem",
    "QuestionGenerationAnswer",
    "RefusalAnswer",
    "RelevantSentencesAnswer",
    "SentenceRelevanceItem",
    "SentenceTypeItem",
    "SentenceTypesAnswer",
    "ShouldDeclineAnswer",
    "StatementsAnswer",
    "entailment_schema",
    "fact_extraction_schema",
    "id_problems",
    "match_category",
    "normalise_categories",
    "question_generation_schema",
    "relevant_sentences_schema",
    "schema_for",
    "sentence_types_schema",
]

log = logging.getLogger(__name__)

#: The prompt behind each primitive, by prompt name (the keys of ``prompts=`` overrides).
PROMPT_NAMES: tuple[str, ...] = (
    "fact_extraction",
    "entailment",
    "sentence_types",
    "refusal",
    "should_decline",
    "context_relevance",
    "relevant_sentences",
    "statements",
    "grounding",
    "question_generation",
)

DeclineReason = Literal["insufficient_context", "harmful", "out_of_scope", "none"]


def _key(value: Any) -> Any:
    """``"Partially Entailed"`` -> ``"partially_entailed"``; anything else is left alone."""
    if isinstance(value, str):
        return re.sub(r"[\s\-]+", "_", value.strip().lower())
    return value


def _ids_text(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids)


def id_problems(ids: Sequence[int], expected: int) -> str | None:
    """Why ``ids`` are not exactly ``1..expected`` once each (in any order), or ``None``."""
    counts = Counter(ids)
    missing = [i for i in range(1, expected + 1) if i not in counts]
    repeated = sorted(i for i, c in counts.items() if c > 1)
    invented = sorted(i for i in counts if not 1 <= i <= expected)
    problems = []
    if missing:
        problems.append(f"missing id(s) {_ids_text(missing)}")
    if repeated:
        problems.append(f"repeated id(s) {_ids_text(repeated)}")
    if invented:
        problems.append(f"unknown id(s) {_ids_text(invented)}")
    if not problems:
        return None
    return (
        f"{'; '.join(problems)}: give exactly one item for each id from 1 to {expected} "
        f"({expected} item(s)), ordered by id"
    )


# --------------------------------------------------------------------------- schemas


class _Answer(BaseModel):
    # Fields a model adds on its own are ignored rather than re-asked.
    model_config = ConfigDict(extra="ignore")


class NumberedItem(_Answer):
    id: int = Field(description="The number of the input item this item answers")


class NumberedAnswer(_Answer):
    """Base of answers with one item per numbered input item.

    Use the per-count classes (:func:`entailment_schema` and friends): they check that the
    ids are exactly ``1..n``; this base only sorts and rejects repeated ids.
    """

    expected_count: ClassVar[int | None] = None
    items_field: ClassVar[str] = "items"

    @model_validator(mode="after")
    def _check_ids(self) -> Self:
        items: list[NumberedItem] = getattr(self, self.items_field)
        ids = [item.id for item in items]
        expected = type(self).expected_count
        if expected is None:
            repeated = sorted(i for i, c in Counter(ids).items() if c > 1)
            if repeated:
                raise ValueError(f"repeated id(s) {_ids_text(repeated)}")
        else:
            problem = id_problems(ids, expected)
            if problem:
                raise ValueError(problem)
        setattr(self, self.items_field, sorted(items, key=lambda item: item.id))
        return self


A = TypeVar("A", bound=NumberedAnswer)


def _sized(base: type[A], n: int) -> type[A]:
    """``base`` for exactly ``n`` items: ids ``1..n``, stated in the JSON schema too."""
    if n < 1:
        raise ValueError(f"a numbered answer needs at least one item, not {n}")
    field_name = base.items_field
    annotation = base.model_fields[field_name].annotation
    field = Field(
        description=f"Exactly one item for each id from 1 to {n}, ordered by id",
        json_schema_extra={"minItems": n, "maxItems": n},
    )
    sized: type[A] = create_model(  # type: ignore[call-overload]
        base.__name__, __base__=base, __module__=__name__, **{field_name: (annotation, field)}
    )
    sized.expected_count = n
    return sized


_LABEL_SYNONYMS = {
    "entailment": "entailed",
    "fully_entailed": "entailed",
    "partially_entailed": "partial",
    "partial_entailment": "partial",
    "partially": "partial",
    "not_entailment": "not_entailed",
    "no_entailment": "not_entailed",
    "unentailed": "not_entailed",
}


class EntailmentItem(NumberedItem):
    """The verdict on one fact."""

    evidence: str = Field(
        default="",
        description="Words copied exactly from the text that support or contradict the fact; '' if none",
    )
    explanation: str = Field(default="", description="One sentence on why the label fits")
    label: EntailmentLabel
    reason: MismatchReason | None = Field(
        default=None, description="Why the fact is not (fully) entailed; null when entailed"
    )

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        value = _key(value)
        return _LABEL_SYNONYMS.get(value, value) if isinstance(value, str) else value

    @field_validator("reason", mode="before")
    @classmethod
    def _reason(cls, value: Any) -> Any:
        value = _key(value)
        return None if value in ("", "none", "null", "n/a") else value

    @field_validator("evidence", "explanation", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value


class EntailmentAnswer(NumberedAnswer):
    """Verdicts on numbered facts."""

    items_field: ClassVar[str] = "verdicts"
    verdicts: list[EntailmentItem]


class SentenceTypeItem(NumberedItem):
    kind: SentenceKind

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: Any) -> Any:
        value = _key(value)
        return "acknowledgement" if value == "acknowledgment" else value


class SentenceTypesAnswer(NumberedAnswer):
    """The kind of each numbered sentence."""

    items_field: ClassVar[str] = "sentences"
    sentences: list[SentenceTypeItem]


class SentenceRelevanceItem(NumberedItem):
    relevant: bool


class RelevantSentencesAnswer(NumberedAnswer):
    """Whether each numbered context sentence helps answer the question."""

    items_field: ClassVar[str] = "sentences"
    sentences: list[SentenceRelevanceItem]


#: Bounds written into the schemas of open-ended lists (never enforced on parsing): servers
#: that constrain output with a grammar (llama.cpp) then cannot ramble to the context limit.
MAX_FACTS = 400
MAX_FACT_CHARS = 600


class ExtractedFact(_Answer):
    """One atomic, self-contained fact."""

    text: str = Field(json_schema_extra={"maxLength": MAX_FACT_CHARS})
    category: str
    importance: Importance

    @field_validator("importance", mode="before")
    @classmethod
    def _importance(cls, value: Any) -> Any:
        return _key(value)


class FactExtractionAnswer(_Answer):
    """The facts of a text, in the text's order."""

    categories: ClassVar[tuple[str, ...]] = DEFAULT_CATEGORIES
    facts: list[ExtractedFact]

    @model_validator(mode="after")
    def _check_facts(self) -> Self:
        allowed = type(self).categories
        unknown = sorted(
            {fact.category for fact in self.facts if match_category(fact.category, allowed) is None}
        )
        if unknown:
            raise ValueError(
                f"unknown categor{'y' if len(unknown) == 1 else 'ies'} {', '.join(map(repr, unknown))}: "
                f"use one of {', '.join(allowed)}"
            )
        self.facts = [fact for fact in self.facts if fact.text.strip()]
        for fact in self.facts:
            fact.text = fact.text.strip()
        return self


class StatementsAnswer(_Answer):
    """The self-contained statements of an answer."""

    statements: list[str] = Field(
        json_schema_extra={"maxItems": MAX_FACTS, "items": {"type": "string", "maxLength": MAX_FACT_CHARS}}
    )

    @field_validator("statements")
    @classmethod
    def _drop_blank(cls, value: list[str]) -> list[str]:
        return [s.strip() for s in value if s.strip()]


class QuestionGenerationAnswer(_Answer):
    """Questions the answer replies to, and whether it is noncommittal.

    Use :func:`question_generation_schema`, which requires exactly ``n`` questions."""

    expected_count: ClassVar[int | None] = None
    explanation: str = Field(default="", description="One sentence on what the answer says")
    noncommittal: bool = Field(
        description="true when the answer is evasive, vague or declines, giving none of what was asked"
    )
    questions: list[str] = Field(
        json_schema_extra={"items": {"type": "string", "maxLength": MAX_FACT_CHARS}},
    )

    @field_validator("explanation", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value

    @model_validator(mode="after")
    def _count(self) -> Self:
        self.questions = [q.strip() for q in self.questions if q and q.strip()]
        expected = type(self).expected_count
        if expected is not None and len(self.questions) != expected:
            raise ValueError(f"give exactly {expected} non-empty question(s), not {len(self.questions)}")
        return self


class RefusalAnswer(_Answer):
    explanation: str = ""
    refused: bool = Field(description="true when the answer declines, explicitly or in substance")


class ShouldDeclineAnswer(_Answer):
    explanation: str = ""
    decline: bool = Field(description="true when a careful clinical assistant should decline")
    reason: DeclineReason = Field(description="why to decline; 'none' when decline is false")

    @field_validator("reason", mode="before")
    @classmethod
    def _reason(cls, value: Any) -> Any:
        return "none" if value is None else _key(value)

    @model_validator(mode="after")
    def _reason_fits(self) -> Self:
        if self.decline and self.reason == "none":
            raise ValueError(
                "decline is true, so reason must be insufficient_context, harmful or out_of_scope"
            )
        if not self.decline:
            self.reason = "none"
        return self


class ContextRelevanceAnswer(_Answer):
    explanation: str = ""
    relevant: bool = Field(description="true when the passages together hold what the question needs")


@functools.cache
def entailment_schema(n: int) -> type[EntailmentAnswer]:
    """The entailment answer for exactly ``n`` facts (one class per ``n``)."""
    return _sized(EntailmentAnswer, n)


@functools.cache
def sentence_types_schema(n: int) -> type[SentenceTypesAnswer]:
    """The sentence-types answer for exactly ``n`` sentences."""
    return _sized(SentenceTypesAnswer, n)


@functools.cache
def relevant_sentences_schema(n: int) -> type[RelevantSentencesAnswer]:
    """The relevant-sentences answer for exactly ``n`` sentences."""
    return _sized(RelevantSentencesAnswer, n)


@functools.cache
def question_generation_schema(n: int) -> type[QuestionGenerationAnswer]:
    """The question-generation answer with exactly ``n`` questions (one class per ``n``)."""
    if n < 1:
        raise ValueError(f"question generation needs at least one question, not {n}")
    sized: type[QuestionGenerationAnswer] = create_model(
        "QuestionGenerationAnswer",
        __base__=QuestionGenerationAnswer,
        __module__=__name__,
        questions=(
            list[str],
            Field(
                description=f"Exactly {n} different questions",
                json_schema_extra={
                    "minItems": n,
                    "maxItems": n,
                    "items": {"type": "string", "maxLength": MAX_FACT_CHARS},
                },
            ),
        ),
    )
    sized.expected_count = n
    return sized


def normalise_categories(categories: Sequence[str]) -> tuple[str, ...]:
    """Categories lower-cased and stripped, without blanks or repeats, in the given order."""
    if isinstance(categories, str):
        categories = (categories,)
    out: list[str] = []
    for category in categories:
        key = category.strip().lower()
        if key and key not in out:
            out.append(key)
    if not out:
        raise ValueError("fact extraction needs at least one category")
    return tuple(out)


def _named_category(raw: str, allowed: Sequence[str]) -> str | None:
    key = raw.strip().lower()
    if key in allowed:
        return key
    if key.endswith("s") and key[:-1] in allowed:
        return key[:-1]
    return None


def match_category(raw: str, allowed: Sequence[str]) -> str | None:
    """The allowed category that ``raw`` names (case-insensitive, a plural ``s`` tolerated);
    else ``other`` when it is allowed; else ``None``."""
    named = _named_category(raw, allowed)
    if named is not None:
        return named
    return "other" if "other" in allowed else None


@functools.cache
def fact_extraction_schema(categories: tuple[str, ...]) -> type[FactExtractionAnswer]:
    """The fact-extraction answer for one tuple of (normalised) categories."""
    categories = normalise_categories(categories)
    item: Any = create_model(
        "ExtractedFact",
        __base__=ExtractedFact,
        __module__=__name__,
        category=(
            str,
            Field(description="Exactly one of the categories", json_schema_extra={"enum": list(categories)}),
        ),
    )
    answer: type[FactExtractionAnswer] = create_model(
        "FactExtractionAnswer",
        __base__=FactExtractionAnswer,
        __module__=__name__,
        facts=(
            list[item],
            Field(
                description="The facts in the order of the text; [] if there are none",
                json_schema_extra={"maxItems": MAX_FACTS},
            ),
        ),
    )
    answer.categories = categories
    return answer


def schema_for(prompt: str, variables: Mapping[str, Any]) -> type[BaseModel]:
    """The answer schema of packaged prompt ``prompt`` rendered with ``variables``."""
    if prompt == "fact_extraction":
        return fact_extraction_schema(normalise_categories(variables.get("categories", DEFAULT_CATEGORIES)))
    if prompt == "entailment":
        return entailment_schema(len(variables["facts"]))
    if prompt == "grounding":
        return entailment_schema(len(variables["sentences"]))
    if prompt == "question_generation":
        return question_generation_schema(int(variables["n"]))
    if prompt == "sentence_types":
        return sentence_types_schema(len(variables["sentences"]))
    if prompt == "relevant_sentences":
        return relevant_sentences_schema(len(variables["sentences"]))
    plain: dict[str, type[BaseModel]] = {
        "refusal": RefusalAnswer,
        "should_decline": ShouldDeclineAnswer,
        "context_relevance": ContextRelevanceAnswer,
        "statements": StatementsAnswer,
    }
    if prompt not in plain:
        raise ValueError(f"no answer schema for prompt {prompt!r}")
    return plain[prompt]


def _example_categories(example: PromptExample) -> set[str] | None:
    """The categories a fact-extraction example answers with, or ``None`` if unreadable."""
    try:
        data = json.loads(example.assistant)
        return {str(fact["category"]).strip().lower() for fact in data["facts"]}
    except (ValueError, TypeError, KeyError):
        return None


@functools.cache
def _for_categories(prompt: PromptTemplate, categories: tuple[str, ...]) -> PromptTemplate:
    """``prompt`` without the examples whose answers use a category not in ``categories``
    (an example answering ``diagnosis`` would mislead a judge told to use other labels)."""
    kept = tuple(
        example
        for example in prompt.examples
        if (used := _example_categories(example)) is None or used <= set(categories)
    )
    if len(kept) == len(prompt.examples):
        return prompt
    return PromptTemplate(
        name=prompt.name,
        version=prompt.version,
        system=prompt.system,
        user=prompt.user,
        examples=kept,
        description=prompt.description,
    )


# --------------------------------------------------------------------------- primitives


class LLMPrimitives:
    """:class:`~clineval.judges.primitives.Primitives` answered by ``judge`` (see the module docstring).

    ``prompts`` replaces packaged prompts by name (a :class:`~clineval.prompts.PromptTemplate`
    or the path of a YAML prompt file); the replacement receives the same variables and must
    produce the same answer schema. ``max_tokens`` caps each answer.
    """

    def __init__(
        self,
        judge: Judge,
        *,
        prompts: Mapping[str, PromptTemplate | str | Path] | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.judge = judge
        self.max_tokens = max_tokens
        self.prompts: dict[str, PromptTemplate] = {name: load_prompt(name) for name in PROMPT_NAMES}
        for name, override in (prompts or {}).items():
            if name not in self.prompts:
                raise ConfigError(
                    f"unknown prompt {name!r} to override; choose from {', '.join(PROMPT_NAMES)}"
                )
            self.prompts[name] = (
                override if isinstance(override, PromptTemplate) else load_prompt_file(override)
            )
        self.category_fallbacks: Counter[str] = Counter()
        """Categories the judge used that are not configured, mapped to ``other``: name -> times."""

    @property
    def name(self) -> str:
        return self.judge.name

    @property
    def kind(self) -> JudgeKind:
        return "llm"

    def describe(self) -> dict[str, Any]:
        return {"judge": self.judge.name, "prompts": {name: p.id for name, p in self.prompts.items()}}

    async def _ask(self, messages: list[ChatMessage], schema: type[T]) -> T:
        answer = await self.judge.ask(messages, schema, max_tokens=self.max_tokens)
        return answer.output

    async def extract_facts(self, text: str, categories: Sequence[str] = DEFAULT_CATEGORIES) -> list[Fact]:
        """One request per text; a blank text gives ``[]`` without one. A category the judge
        makes up becomes ``other`` when ``other`` is configured (counted in
        :attr:`category_fallbacks`), else the answer is re-asked."""
        if not text.strip():
            return []
        allowed = normalise_categories(categories)
        prompt = _for_categories(self.prompts["fact_extraction"], allowed)
        output = await self._ask(
            prompt.render(categories=list(allowed), text=text.strip()), fact_extraction_schema(allowed)
        )
        facts = []
        for item in output.facts:
            category = _named_category(item.category, allowed)
            if category is None:  # the schema let it through, so "other" is configured
                category = "other"
                self.category_fallbacks[item.category] += 1
                log.debug("fact category %r is not configured; using 'other'", item.category)
            facts.append(Fact(text=item.text, category=category, importance=item.importance))
        return facts

    async def check_facts(self, facts: Sequence[str], evidence: str) -> list[Verdict]:
        """One request for all ``facts``. No facts: ``[]``; a blank ``evidence``: every fact
        ``not_entailed`` / ``missing``, without a request."""
        if not facts:
            return []
        if not evidence.strip():
            return [
                Verdict(
                    label="not_entailed", reason="missing", explanation="The text to check against is empty."
                )
                for _ in facts
            ]
        output = await self._ask(
            self.prompts["entailment"].render(facts=list(facts), text=evidence.strip()),
            entailment_schema(len(facts)),
        )
        return [
            Verdict(
                label=item.label,
                reason=item.reason,
                evidence=item.evidence.strip(),
                explanation=item.explanation.strip(),
            )
            for item in output.verdicts
        ]

    async def classify_sentences(
        self, sentences: Sequence[str], question: str | None = None
    ) -> list[SentenceKind]:
        """One request for all ``sentences``; none gives ``[]``."""
        if not sentences:
            return []
        output = await self._ask(
            self.prompts["sentence_types"].render(
                sentences=list(sentences),
                question=question.strip() if question and question.strip() else None,
            ),
            sentence_types_schema(len(sentences)),
        )
        return [item.kind for item in output.sentences]

    async def detect_refusal(self, question: str, answer: str) -> Decision:
        """One request. A blank answer gives nothing of what was asked: ``value`` true,
        reason ``empty_answer``, without a request."""
        if not answer.strip():
            return Decision(value=True, reason="empty_answer", explanation="The answer is empty.")
        output = await self._ask(
            self.prompts["refusal"].render(question=question.strip(), answer=answer.strip()), RefusalAnswer
        )
        return Decision(value=output.refused, explanation=output.explanation.strip())

    async def should_decline(self, question: str, contexts: Sequence[str] | None = None) -> Decision:
        """One request. Passages given but all empty: nothing to answer from, so ``value``
        true with reason ``insufficient_context``, without a request."""
        passages: list[str] | None = None
        if contexts is not None:
            passages = [c.strip() for c in contexts if c.strip()]
            if not passages:
                return Decision(
                    value=True,
                    reason="insufficient_context",
                    explanation="No passage was retrieved, so there is nothing to answer from.",
                )
        output = await self._ask(
            self.prompts["should_decline"].render(question=question.strip(), contexts=passages),
            ShouldDeclineAnswer,
        )
        return Decision(
            value=output.decline,
            explanation=output.explanation.strip(),
            reason=output.reason if output.decline else None,
        )

    async def context_relevant(self, question: str, contexts: Sequence[str]) -> Decision:
        """One request for all passages. No (non-blank) passage: ``value`` false with reason
        ``no_context``, without a request."""
        passages = [c.strip() for c in contexts if c.strip()]
        if not passages:
            return Decision(value=False, reason="no_context", explanation="No passage was retrieved.")
        output = await self._ask(
            self.prompts["context_relevance"].render(question=question.strip(), contexts=passages),
            ContextRelevanceAnswer,
        )
        return Decision(value=output.relevant, explanation=output.explanation.strip())

    async def relevant_sentences(self, question: str, sentences: Sequence[str]) -> list[bool]:
        """One request for all ``sentences``; none gives ``[]``."""
        if not sentences:
            return []
        output = await self._ask(
            self.prompts["relevant_sentences"].render(question=question.strip(), sentences=list(sentences)),
            relevant_sentences_schema(len(sentences)),
        )
        return [item.relevant for item in output.sentences]

    async def extract_statements(self, question: str, answer: str) -> list[str]:
        """One request; a blank answer gives ``[]`` without one."""
        if not answer.strip():
            return []
        output = await self._ask(
            self.prompts["statements"].render(question=question.strip(), answer=answer.strip()),
            StatementsAnswer,
        )
        return list(output.statements)

    async def check_grounding(self, sentences: Sequence[str], evidence: str, question: str) -> list[Verdict]:
        """One request for all ``sentences``, with the question. No sentences: ``[]``; a
        blank ``evidence``: every sentence ``not_entailed`` / ``missing``, without a request."""
        if not sentences:
            return []
        if not evidence.strip():
            return [
                Verdict(label="not_entailed", reason="missing", explanation="No context was retrieved.")
                for _ in sentences
            ]
        output = await self._ask(
            self.prompts["grounding"].render(
                question=question.strip() if question and question.strip() else None,
                text=evidence.strip(),
                sentences=list(sentences),
            ),
            entailment_schema(len(sentences)),
        )
        return [
            Verdict(
                label=item.label,
                reason=item.reason,
                evidence=item.evidence.strip(),
                explanation=item.explanation.strip(),
            )
            for item in output.verdicts
        ]

    async def generate_questions(self, answer: str, n: int = 3) -> GeneratedQuestions | None:
        """One request for all ``n`` questions. A blank answer is noncommittal, without a
        request."""
        if n < 1:
            raise ValueError(f"generate_questions needs n >= 1, not {n}")
        if not answer.strip():
            return GeneratedQuestions(questions=[], noncommittal=True, explanation="The answer is empty.")
        output = await self._ask(
            self.prompts["question_generation"].render(answer=answer.strip(), n=n),
            question_generation_schema(n),
        )
        return GeneratedQuestions(
            questions=list(output.questions),
            noncommittal=output.noncommittal,
            explanation=output.explanation.strip(),
        )
