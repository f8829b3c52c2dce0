"""The offline implementation of :class:`~clineval.judges.primitives.Primitives`."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from clineval.judges.offline import conversation, entailment, facts, relevance
from clineval.judges.offline.decision import DecisionModel, Signals, packaged_decision
from clineval.judges.offline.thresholds import DEFAULT_THRESHOLDS, HEURISTIC_VERSION, Thresholds
from clineval.judges.primitives import (
    DEFAULT_CATEGORIES,
    Decision,
    Fact,
    GeneratedQuestions,
    JudgeKind,
    SentenceKind,
    Verdict,
)
from clineval.nlp.embeddings import MODEL_NAME, SentenceEncoder, get_encoder
from clineval.nlp.null_answers import null_verdict
from clineval.nlp.sentences import split_sentences

__all__ = ["OfflinePrimitives"]


_RANK = {"not_entailed": 0, "partial": 1, "entailed": 2}


class OfflinePrimitives:
    """Deterministic heuristics on CPU: sentence and claim splitting (pysbd + rules),
    MiniLM-L6-v2 similarity (numpy), a ConText-style assertion detector, and checks of
    numbers, units, sides, drugs and dates. See docs/offline-judge.md.

    It cannot write text, so :meth:`generate_questions` answers ``None`` (answer relevance
    then uses its question-answer similarity variant).

    ``encoder`` defaults to the process-wide MiniLM encoder, loaded on first use. Work that
    embeds text runs in a worker thread (``asyncio.to_thread``); the encoder is
    thread-safe, so calls may run concurrently.
    """

    def __init__(
        self,
        thresholds: Thresholds = DEFAULT_THRESHOLDS,
        encoder: SentenceEncoder | None = None,
        decision: DecisionModel | Literal["packaged"] | None = "packaged",
    ):
        self.thresholds = thresholds
        self._encoder = encoder
        self.decision: DecisionModel | None = packaged_decision() if decision == "packaged" else decision

    @property
    def name(self) -> str:
        return "offline"

    @property
    def kind(self) -> JudgeKind:
        return "heuristic"

    @property
    def encoder(self) -> SentenceEncoder:
        if self._encoder is None:
            self._encoder = get_encoder()
        return self._encoder

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "heuristic_version": HEURISTIC_VERSION,
            "embedding_model": MODEL_NAME,
            "embedding_backend": "numpy-float32",
            "sentence_splitter": "pysbd 0.3.4 + clinical rules",
            "thresholds": self.thresholds.as_dict(),
            "decision": self.decision.describe() if self.decision is not None else "rule thresholds",
        }

    # -- sync versions (also handy in notebooks and tests) ----------------------------------

    def extract_facts_sync(self, text: str, categories: Sequence[str] = DEFAULT_CATEGORIES) -> list[Fact]:
        return facts.extract_facts(text or "", categories)

    def check_facts_sync(
        self, facts_: Sequence[str], evidence: str, *, signals_out: list[Signals | None] | None = None
    ) -> list[Verdict]:
        """One verdict per fact, in order. Null answers ("None.", "No known drug allergies.")
        on either side are decided by :func:`~clineval.nlp.null_answers.null_verdict`; the
        other facts go to the entailment checks in one call."""
        if not facts_:
            return []
        decided = [null_verdict(fact, evidence or "") for fact in facts_]
        rest = [fact for fact, verdict in zip(facts_, decided, strict=True) if verdict is None]
        rest_signals: list[Signals | None] = [None] * len(rest)
        checked = iter(
            entailment.check_claims(
                rest, evidence or "", self.encoder, self.thresholds, self.decision, rest_signals
            )
            if rest
            else []
        )
        if signals_out is not None:
            it = iter(rest_signals)
            signals_out[:] = [next(it) if verdict is None else None for verdict in decided]
        return [verdict if verdict is not None else next(checked) for verdict in decided]

    def classify_sentences_sync(
        self, sentences: Sequence[str], question: str | None = None
    ) -> list[SentenceKind]:
        return [conversation.classify_sentence(s or "", question) for s in sentences]

    def detect_refusal_sync(self, question: str, answer: str) -> Decision:
        sentences = split_sentences(answer or "")
        if not sentences:
            return Decision(value=True, explanation="the answer is empty", reason="empty")
        cues = conversation.find_refusal_cues(sentences)
        substantive = [s for s in sentences if conversation.is_substantive(s)]
        strong = [c for c in cues if c.kind in ("full refusal", "refusal", "insufficient")]
        referral = [c for c in cues if c.kind == "referral"]
        margin = self.thresholds.refusal_margin
        if strong:
            cue = strong[0]
            # Declining the whole request takes more substance to outweigh than declining a part.
            if len(substantive) < margin + (1 if cue.kind == "full refusal" else 0):
                return Decision(
                    value=True,
                    reason=cue.kind,
                    explanation=f"refusal cue {cue.text!r} ({cue.kind}); {len(substantive)} informative "
                    "clinical sentence(s) besides it",
                )
            return Decision(
                value=False,
                explanation=f"partial refusal cue {cue.text!r}, but the answer gives {len(substantive)} "
                "informative clinical sentences, so it answers in substance",
            )
        if referral and not substantive:
            return Decision(
                value=True,
                reason="referral",
                explanation=f"the answer only refers the user elsewhere ({referral[0].text!r}) "
                "and says nothing substantive",
            )
        if not substantive and not any(
            conversation.classify_sentence(s, question) == "informative" for s in sentences
        ):
            return Decision(
                value=True, reason="no_content", explanation="the answer has no informative sentence"
            )
        return Decision(
            value=False, explanation=f"no refusal cue; {len(substantive)} informative clinical sentence(s)"
        )

    def should_decline_sync(self, question: str, contexts: Sequence[str] | None = None) -> Decision:
        if contexts is not None and not any(c and c.strip() for c in contexts):
            # Passages were expected but none (or only blank ones) came back: nothing to
            # answer from, as LLMPrimitives decides; a harmful request still says so.
            harm = relevance.harmful_cue(question or "")
            if harm is not None:
                return relevance.should_decline(question or "", None, self.encoder, self.thresholds)
            return Decision(
                value=True,
                reason="insufficient_context",
                explanation="no context was retrieved, so there is nothing to answer from",
            )
        return relevance.should_decline(question or "", contexts, self.encoder, self.thresholds)

    def context_relevant_sync(self, question: str, contexts: Sequence[str]) -> Decision:
        return relevance.context_relevant(question or "", contexts, self.encoder, self.thresholds)

    def relevant_sentences_sync(self, question: str, sentences: Sequence[str]) -> list[bool]:
        return relevance.relevant_sentences(question or "", list(sentences), self.encoder, self.thresholds)

    def extract_statements_sync(self, question: str, answer: str) -> list[str]:
        return conversation.extract_statements(question or "", answer or "")

    def check_grounding_sync(self, sentences: Sequence[str], evidence: str, question: str) -> list[Verdict]:
        """Each sentence's claims (:func:`~clineval.judges.offline.conversation.grounding_claims`:
        a yes/no reply is checked as the asked clause with its polarity) checked against
        ``evidence``; a sentence with several claims takes the verdict of its weakest one."""
        if not sentences:
            return []
        claims = [conversation.grounding_claims(s or "", question) for s in sentences]
        flat = [c for group in claims for c in group]
        verdicts = iter(self.check_facts_sync(flat, evidence))
        out: list[Verdict] = []
        for sentence, group in zip(sentences, claims, strict=True):
            checked = [next(verdicts) for _ in group]
            worst = min(checked, key=lambda v: _RANK[v.label])
            if group != [sentence]:
                read_as = " ".join(group)
                explanation = f"read as a reply to the question: {read_as!r}; {worst.explanation}"
                worst = worst.model_copy(update={"explanation": explanation})
            out.append(worst)
        return out

    def generate_questions_sync(self, answer: str, n: int = 3) -> GeneratedQuestions | None:
        return None

    # -- the Primitives protocol -------------------------------------------------------------

    async def extract_facts(self, text: str, categories: Sequence[str] = DEFAULT_CATEGORIES) -> list[Fact]:
        return await asyncio.to_thread(self.extract_facts_sync, text, tuple(categories))

    async def check_facts(self, facts: Sequence[str], evidence: str) -> list[Verdict]:
        return await asyncio.to_thread(self.check_facts_sync, list(facts), evidence)

    async def classify_sentences(
        self, sentences: Sequence[str], question: str | None = None
    ) -> list[SentenceKind]:
        return self.classify_sentences_sync(list(sentences), question)

    async def detect_refusal(self, question: str, answer: str) -> Decision:
        return await asyncio.to_thread(self.detect_refusal_sync, question, answer)

    async def should_decline(self, question: str, contexts: Sequence[str] | None = None) -> Decision:
        return await asyncio.to_thread(
            self.should_decline_sync, question, None if contexts is None else list(contexts)
        )

    async def context_relevant(self, question: str, contexts: Sequence[str]) -> Decision:
        return await asyncio.to_thread(self.context_relevant_sync, question, list(contexts))

    async def relevant_sentences(self, question: str, sentences: Sequence[str]) -> list[bool]:
        return await asyncio.to_thread(self.relevant_sentences_sync, question, list(sentences))

    async def extract_statements(self, question: str, answer: str) -> list[str]:
        return await asyncio.to_thread(self.extract_statements_sync, question, answer)

    async def check_grounding(self, sentences: Sequence[str], evidence: str, question: str) -> list[Verdict]:
        return await asyncio.to_thread(self.check_grounding_sync, list(sentences), evidence, question)

    async def generate_questions(self, answer: str, n: int = 3) -> GeneratedQuestions | None:
        return None
