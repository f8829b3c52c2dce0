"""The judgement primitives that factuality and RAG-safety metrics are built from.

TBFact, the ASTRID triad and the RAGAS-style baselines never talk to a model directly.
They ask a :class:`Primitives` object a small number of well-defined questions (split this
text into facts; is each of these facts entailed by that text; which of these sentences
are questions; did this answer decline; ...). Two implementations answer them:

* :class:`~clineval.judges.llm_primitives.LLMPrimitives` renders the packaged, versioned
  prompts and asks any :class:`~clineval.judges.base.Judge` (an OpenAI-compatible endpoint,
  Azure OpenAI, the scripted judge) for a validated structured answer, batched: one call
  per text or per direction, never one per fact;
* the offline judge (:mod:`clineval.judges.offline`) answers the same questions with
  deterministic heuristics on CPU, with no network and no key.

Every list-valued answer has exactly one item per input item, in input order:
implementations validate this (an LLM answer that skips, repeats or invents an item id is
asked again, then raises :class:`~clineval.judges.base.JudgeError`), so metrics can zip
inputs and answers safely.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

EntailmentLabel = Literal["entailed", "partial", "not_entailed"]
"""``partial``: part of the fact is supported and the rest is absent or vague. A fact the
other text contradicts in any part is ``not_entailed`` with reason ``incorrect``."""

MismatchReason = Literal["missing", "incorrect", "ambiguous", "other"]
"""Why a fact is not (fully) entailed: ``missing`` (the other text does not say it),
``incorrect`` (the other text contradicts it: another dose, side, date, a negation),
``ambiguous`` (the other text is vague or hedged about it), ``other``."""

Importance = Literal["high", "medium", "low"]
SentenceKind = Literal["acknowledgement", "question", "informative"]
JudgeKind = Literal["llm", "heuristic"]

#: Fact categories of the Healthcare Agent Orchestrator's evaluation, the default for TBFact.
DEFAULT_CATEGORIES: tuple[str, ...] = (
    "demographics",
    "diagnosis",
    "treatment",
    "symptom",
    "biomarker",
    "other",
)
IMPORTANCE_LEVELS: tuple[Importance, ...] = ("high", "medium", "low")


class Fact(BaseModel):
    """One atomic, self-contained factual claim taken from a text."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    category: str = "other"
    importance: Importance = "medium"

    @field_validator("text")
    @classmethod
    def _strip(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("a fact cannot be blank")
        return value

    @field_validator("category")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.strip().lower() or "other"


class Verdict(BaseModel):
    """Whether one claim is entailed by a text, why not, and the words that show it."""

    model_config = ConfigDict(extra="forbid")

    label: EntailmentLabel
    reason: MismatchReason | None = None
    """``None`` exactly when the label is ``entailed``."""
    evidence: str = ""
    """Words quoted from the other text that support or contradict the claim ("" if none)."""
    explanation: str = ""
    support: float | None = Field(default=None, ge=0.0, le=1.0)
    """How much of the claim the other text supports, from 0 to 1, where the judge grades
    it (the offline judge does: the weighted share of the claim's content it finds; 0 for
    a contradicted claim). ``None`` for judges that only label (an LLM judge). Metrics use
    it as the credit of a ``partial`` verdict."""

    @model_validator(mode="after")
    def _reason_matches_label(self) -> Verdict:
        if self.label == "entailed":
            self.reason = None
        elif self.reason is None:
            self.reason = "other"
        return self

    @property
    def supported(self) -> bool:
        return self.label == "entailed"


class Decision(BaseModel):
    """A yes/no judgement with the judge's reason."""

    model_config = ConfigDict(extra="forbid")

    value: bool
    explanation: str = ""
    reason: str | None = None
    """A short machine-readable reason where the primitive defines one (e.g. why a request
    should be declined: ``insufficient_context``, ``harmful``, ``out_of_scope``)."""


class GeneratedQuestions(BaseModel):
    """Questions a judge wrote for an answer (RAGAS answer relevance), and whether the
    answer is noncommittal (evasive, vague or declining: "I don't know", "I can't advise
    on that")."""

    model_config = ConfigDict(extra="forbid")

    questions: list[str]
    noncommittal: bool = False
    explanation: str = ""


@runtime_checkable
class Primitives(Protocol):
    """The questions factuality and RAG metrics ask (see the module docstring)."""

    @property
    def name(self) -> str:
        """Identity for score details and run records, e.g. ``openai:gpt-4o`` or ``offline``."""
        ...

    @property
    def kind(self) -> JudgeKind:
        """``llm`` or ``heuristic`` (the offline judge): shown with every score it makes."""
        ...

    def describe(self) -> dict[str, Any]:
        """Versions of the prompts or heuristics in use (kept in score details)."""
        ...

    async def extract_facts(self, text: str, categories: Sequence[str] = DEFAULT_CATEGORIES) -> list[Fact]:
        """Split ``text`` into atomic, self-contained facts, each with one of ``categories``
        (anything else becomes ``other``) and an importance. Keeps the text's order; a text
        with no factual content gives ``[]``."""
        ...

    async def check_facts(self, facts: Sequence[str], evidence: str) -> list[Verdict]:
        """One verdict per claim in ``facts``, in order: is it entailed by ``evidence``?"""
        ...

    async def classify_sentences(
        self, sentences: Sequence[str], question: str | None = None
    ) -> list[SentenceKind]:
        """One kind per sentence of an answer, in order (``question`` is what was asked)."""
        ...

    async def detect_refusal(self, question: str, answer: str) -> Decision:
        """``value``: the answer declines to answer (fully or in substance)."""
        ...

    async def should_decline(self, question: str, contexts: Sequence[str] | None = None) -> Decision:
        """``value``: a careful clinical assistant should decline this request; with
        ``contexts``, because they do not hold enough to answer it safely; without, because
        the request is harmful or outside a clinical assistant's scope."""
        ...

    async def context_relevant(self, question: str, contexts: Sequence[str]) -> Decision:
        """``value``: the retrieved contexts, taken together, are relevant to the question."""
        ...

    async def relevant_sentences(self, question: str, sentences: Sequence[str]) -> list[bool]:
        """For each context sentence, in order: is it relevant to answering the question?"""
        ...

    async def extract_statements(self, question: str, answer: str) -> list[str]:
        """Self-contained statements built from every part of the answer read with the
        question, as RAGAS-style faithfulness builds them: a short yes/no reply is merged
        with the question into one statement, and acknowledgements, empathy and follow-up
        questions become statements of their own. ``[]`` only for a blank answer."""
        ...

    async def check_grounding(self, sentences: Sequence[str], evidence: str, question: str) -> list[Verdict]:
        """One verdict per answer sentence, in order: is it grounded in ``evidence`` (the
        retrieved context), read as the assistant's reply to ``question``? A short reply
        ("Yes, that would be ok.") is checked as the answer it gives to the question; what
        the user says in the question is not a claim of the answer and is not checked
        (conversational faithfulness)."""
        ...

    async def generate_questions(self, answer: str, n: int = 3) -> GeneratedQuestions | None:
        """``n`` questions the answer would be a direct reply to, and whether the answer is
        noncommittal (RAGAS answer relevance). ``None`` when the judge cannot write text
        (the offline judge)."""
        ...
