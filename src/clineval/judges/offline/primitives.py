"""The offline implementation of :class:`~clineval.judges.primitives.Primitives`."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from clineval.judges.offline import conversation, entailment, facts, relevance
from clineval.judges.offline.thresholds import DEFAULT_THRESHOLDS, HEURISTIC_VERSION, Thresholds
from clineval.judges.primitives import DEFAULT_CATEGORIES, Decision, Fact, JudgeKind, SentenceKind, Verdict
from clineval.nlp.embeddings import MODEL_NAME, SentenceEncoder, get_encoder
from clineval.nlp.sentences import split_sentences

__all__ = ["OfflinePrimitives"]


class OfflinePrimitives:
    """Deterministic heuristics on CPU: sentence and claim splitting (pysbd + rules),
    MiniLM-L6-v2 similarity (numpy), a ConText-style assertion detector, and checks of
    numbers, units, sides, drugs and dates. See docs/offline-judge.md.

    ``encoder`` defaults to the process-wide MiniLM encoder, loaded on first use. Work that
    embeds text runs in a worker thread (``asyncio.to_thread``); the encoder is
    thread-safe, so calls may run concurrently.
    """

    def __init__(self, thresholds: Thresholds = DEFAULT_THRESHOLDS, encoder: SentenceEncoder | None = None):
        self.thresholds = thresholds
        self._encoder = encoder

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
        }

    # -- sync versions (also handy in notebooks and tests) ----------------------------------

    def extract_facts_sync(self, text: str, categories: Sequence[str] = DEFAULT_CATEGORIES) -> list[Fact]:
        return facts.extract_facts(text or "", categories)

    def check_facts_sync(self, facts_: Sequence[str], evidence: str) -> list[Verdict]:
        if not facts_:
            return []
        return entailment.check_claims(list(facts_), evidence or "", self.encoder, self.thresholds)

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
        if not substantive and not any(conversation.classify_sentence(s) == "informative" for s in sentences):
            return Decision(
                value=True, reason="no_content", explanation="the answer has no informative sentence"
            )
        return Decision(
            value=False, explanation=f"no refusal cue; {len(substantive)} informative clinical sentence(s)"
        )

    def should_decline_sync(self, question: str, contexts: Sequence[str] | None = None) -> Decision:
        return relevance.should_decline(question or "", contexts, self.encoder, self.thresholds)

    def context_relevant_sync(self, question: str, contexts: Sequence[str]) -> Decision:
        return relevance.context_relevant(question or "", contexts, self.encoder, self.thresholds)

    def relevant_sentences_sync(self, question: str, sentences: Sequence[str]) -> list[bool]:
        return relevance.relevant_sentences(question or "", list(sentences), self.encoder, self.thresholds)

    def extract_statements_sync(self, question: str, answer: str) -> list[str]:
        return conversation.extract_statements(question or "", answer or "")

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
