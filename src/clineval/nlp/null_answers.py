"""Null answers: short texts that say there is nothing to report.

Section answers in notes and summaries are often null: "None.", "None reported.", "N/A",
"Not applicable.", "Nil.", "Noncontributory.", "Unremarkable.", "Negative.", "NKDA",
"No known drug allergies.", "No significant past medical history.", "Not on any
medications.", "Family history is noncontributory.", "Allergies: none." Claim-level
factuality must treat them as statements, all saying the same thing, rather than as texts
without content.

:func:`null_answer` reads a text with a small grammar instead of a list of strings::

    answer    := [label ":"] [subject verb] body
    body      := null [qualifier]*                        "none reported", "n/a"
               | negator [modifier]* topic [qualifier]*   "no known drug allergies",
                                                          "not on any prescription medications"
               | topic copula null [qualifier]*           "family history is noncontributory"
               | abbreviation [qualifier]*                "NKDA", "NKA"
    null      := none | nil | nothing | n/a | not applicable | noncontributory
               | unremarkable | negative | not reported | ...
    negator   := no | denies [any] | not on any | on no | takes no | without [any] | ...
    modifier  := known | significant | relevant | current | prior | daily | prescription | ...
    topic     := allergies | medications | (past) medical history | surgical history
               | family history | social history | surgeries | problems | complaints | ...
    qualifier := reported | known | noted | documented | on file | at this time | ...

A null answer has a *topic* ("allergies", "medications", ...; ``None`` when it says
nothing about what is absent, as "None." does). A specific negative finding ("No fever.",
"No pneumothorax.") is not a null answer: it reports something.

:func:`null_verdict` decides a (claim, evidence) pair when either side is a null answer:

* a null claim is ``entailed`` by evidence that holds a null answer of a compatible topic
  (the same topic, or either without one): "None." and "No known drug allergies." entail
  each other, in both directions;
* a null claim with a topic is ``not_entailed``/``incorrect`` against evidence that states
  the thing ("No known drug allergies." against "Allergic to penicillin.");
* otherwise a null claim is ``not_entailed``/``missing``, and so is a substantive claim
  checked against evidence that is only a null answer, unless the claim states what the
  evidence's topic denies (``incorrect``).

Any other pair gives ``None``: the entailment checks decide it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from clineval.judges.primitives import Verdict
from clineval.nlp.clinical import is_drug
from clineval.nlp.lexicon import DIAGNOSIS_SUFFIXES, DIAGNOSIS_WORDS
from clineval.nlp.sentences import split_sentences_with_sections

__all__ = ["NullAnswer", "is_null_answer", "null_answer", "null_verdict"]


@dataclass(frozen=True)
class NullAnswer:
    """A text that says there is nothing to report, and about what."""

    text: str
    topic: str | None
    """Canonical topic ("allergies", "medications", "medical history", ...), or ``None``
    when the answer does not say what is absent ("None.")."""


def _alternatives(*phrases: str) -> str:
    """A regex alternation of phrases, longest first, spaces matching any whitespace."""
    ordered = sorted({p.strip() for p in phrases if p.strip()}, key=len, reverse=True)
    return "(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in ordered) + ")"


# Topic phrases and what they are about. Only categories of a record count: "No fever." is a
# finding, not a null answer.
_TOPICS: dict[str, tuple[str, ...]] = {
    "allergies": (
        "allergies",
        "allergy",
        "drug allergies",
        "drug allergy",
        "medication allergies",
        "medicine allergies",
        "food allergies",
        "environmental allergies",
        "allergic reactions",
        "allergies to medications",
        "allergies to medicines",
        "allergies to drugs",
        "allergies to any medications",
    ),
    "medications": (
        "medications",
        "medication",
        "meds",
        "medicines",
        "medicine",
        "prescriptions",
        "prescription medications",
        "home medications",
        "outpatient medications",
        "drugs",
        "regular medications",
    ),
    "medical history": (
        "past medical history",
        "medical history",
        "pmh",
        "past history",
        "history",
        "medical problems",
        "medical conditions",
        "health problems",
        "health conditions",
        "chronic conditions",
        "chronic illnesses",
        "illnesses",
        "comorbidities",
        "past illnesses",
    ),
    "surgical history": (
        "past surgical history",
        "surgical history",
        "psh",
        "surgeries",
        "surgery",
        "operations",
        "procedures",
        "surgical procedures",
    ),
    "family history": ("family history", "family medical history", "fh", "family history of note"),
    "social history": ("social history", "sh"),
    "complaints": ("complaints", "concerns", "issues", "problems", "symptoms", "complications", "events"),
    "findings": ("findings", "abnormalities", "abnormal findings", "acute findings"),
    "hospitalizations": ("hospitalizations", "admissions", "hospital admissions"),
}
_TOPIC_OF = {phrase: topic for topic, phrases in _TOPICS.items() for phrase in phrases}
_TOPIC = _alternatives(*_TOPIC_OF)
_NULL = _alternatives(
    "none",
    "nil",
    "nothing",
    "n/a",
    "n / a",
    "n.a.",
    "na",
    "not applicable",
    "noncontributory",
    "non-contributory",
    "non contributory",
    "unremarkable",
    "negative",
    "not reported",
    "none reported",
    "not documented",
    "not significant",
    "nothing significant",
    "nothing of note",
    "nothing to report",
    "nothing to note",
    "no significant findings",
    "not on file",
)
_NEGATOR = _alternatives(
    "no",
    "denies",
    "denies any",
    "denied",
    "denied any",
    "denies having any",
    "not on any",
    "is not on any",
    "not taking any",
    "is not taking any",
    "takes no",
    "taking no",
    "on no",
    "without",
    "without any",
    "never had any",
    "has never had any",
    "does not have any",
    "doesn't have any",
    "does not take any",
    "doesn't take any",
    "free of",
    "negative for",
)
_MODIFIER = _alternatives(
    "known",
    "significant",
    "relevant",
    "pertinent",
    "current",
    "other",
    "prior",
    "previous",
    "past",
    "active",
    "daily",
    "regular",
    "routine",
    "prescription",
    "prescribed",
    "over-the-counter",
    "chronic",
    "major",
    "notable",
    "remarkable",
    "reported",
    "documented",
    "additional",
    "further",
    "ongoing",
    "acute",
    "new",
    "contributory",
)
_QUALIFIER = _alternatives(
    "reported",
    "known",
    "noted",
    "documented",
    "identified",
    "elicited",
    "found",
    "recorded",
    "listed",
    "given",
    "on file",
    "on record",
    "at this time",
    "at present",
    "currently",
    "today",
    "to report",
    "to note",
    "of note",
    "per patient",
    "per the patient",
    "per chart",
    "per records",
    "as reported",
    "as per patient",
    "by the patient",
    "by patient",
    "so far",
    "to date",
    "in the past",
    "ever",
)
_ABBREVIATION: dict[str, str] = {
    "nkda": "allergies",
    "nka": "allergies",
    "nkfa": "allergies",
    "nkma": "allergies",
    "nkde": "allergies",
}
_COPULA = r"(?:is|are|was|were|has\s+been|have\s+been|remains?)"
_SUBJECT_VERB = re.compile(
    r"^(?:(?:the\s+)?patient|pt|he|she|they|i|we)\s+(?:(?:has|have|had|reports?|reported|states?|says|is|was)\s+)?",
    re.IGNORECASE,
)
_QUALIFIERS = rf"(?:[\s,;-]+(?:\(\s*)?{_QUALIFIER}\)?)*"
_BODY = re.compile(
    rf"^(?:(?P<null>{_NULL})(?:[\s,-]+(?:{_TOPIC}))?{_QUALIFIERS}"
    rf"|(?:{_NEGATOR})\s+(?:(?:{_MODIFIER})[\s,]+)*(?P<topic>{_TOPIC}){_QUALIFIERS}"
    rf"|(?P<subject>{_TOPIC})\s+{_COPULA}\s+(?:{_NULL}){_QUALIFIERS}"
    rf"|(?P<abbreviation>{_alternatives(*_ABBREVIATION)}){_QUALIFIERS})$",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^(?P<label>[a-z][a-z /&()-]{0,40}?)(?:\s*:|\s+[-–—])\s*(?P<body>.+)$", re.IGNORECASE)


def _topic(phrase: str | None) -> str | None:
    if not phrase:
        return None
    key = re.sub(r"\s+", " ", phrase.strip().lower())
    return _TOPIC_OF.get(key, key)


@lru_cache(maxsize=8192)
def null_answer(text: str) -> NullAnswer | None:
    """``text`` as a null answer (see the module docstring), or ``None`` when it reports
    something. Several null sentences ("Allergies: NKDA. Medications: none.") are not one
    null answer; check them one by one."""
    cleaned = re.sub(r"\s+", " ", text or "").strip().strip("*_\"'“”‘’ ").strip()
    cleaned = re.sub(r"[.!;]+$", "", cleaned).strip()
    if not cleaned or len(cleaned) > 120:
        return None
    label_topic: str | None = None
    label = None if _BODY.match(cleaned) else _LABEL.match(cleaned)
    if label:
        label_topic = _topic(label.group("label"))
        cleaned = label.group("body").strip()
    body = _SUBJECT_VERB.sub("", cleaned, count=1) if not _BODY.match(cleaned) else cleaned
    match = _BODY.match(body)
    if not match:
        return None
    if match.group("abbreviation"):
        topic: str | None = _ABBREVIATION[match.group("abbreviation").lower()]
    else:
        topic = _topic(match.group("topic") or match.group("subject"))
        if topic is None and match.group("null"):
            # "None, medications" is rare; "none" after a label takes the label's topic.
            rest = body[match.end("null") :]
            topic = _topic(re.sub(r"^[\s,-]+", "", rest).split(" ")[0]) if rest.strip(" ,-") else None
            topic = topic if topic in _TOPICS else None
    return NullAnswer(text=text.strip(), topic=topic or label_topic)


def is_null_answer(text: str) -> bool:
    return null_answer(text) is not None


def _compatible(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


_NEGATION = re.compile(
    r"\b(?:no|not|denies|denied|deny|without|negative|never|none|nil|free\s+of|n't)\b", re.IGNORECASE
)
_PROCEDURE = re.compile(
    r"\b\w+(?:ectomy|otomy|ostomy|plasty|scopy|pexy|graphy)\b|\bsurger(?:y|ies)\b", re.IGNORECASE
)
_RELATIVE = re.compile(
    r"\b(?:mother|father|mom|dad|sister|brother|parents?|siblings?|aunt|uncle|grand\w+|cousin|family)\b",
    re.IGNORECASE,
)
_HABIT = re.compile(
    r"\b(?:smok\w*|tobacco|cigarettes?|cigars?|vap\w+|alcohol|drinks?|drinking|beers?|wine|liquor|marijuana"
    r"|cannabis|cocaine|heroin|opioids?|illicit|recreational)\b",
    re.IGNORECASE,
)
_DOSE = re.compile(r"\b\d+(?:\.\d+)?\s*(?:mg|mcg|µg|g|ml|units?|iu|puffs?|tablets?)\b", re.IGNORECASE)


def _has_diagnosis(text: str) -> bool:
    lowered = text.lower()
    words = re.findall(r"[a-z]+", lowered)
    joined = "_".join(words)
    return any(w in DIAGNOSIS_WORDS or (len(w) > 5 and w.endswith(DIAGNOSIS_SUFFIXES)) for w in words) or any(
        "_" in d and d in joined for d in DIAGNOSIS_WORDS
    )


def _states(topic: str | None, text: str) -> str | None:
    """The first sentence of ``text`` that affirms something of ``topic`` (an allergy, a
    drug, a diagnosis, a procedure ..., or anything under the topic's header), or ``None``.
    A sentence with a negation before the mention does not affirm it."""
    if topic is None:
        return None
    for unit in split_sentences_with_sections(text):
        sentence = unit.text
        if null_answer(sentence):
            continue
        # Anything said under the topic's own header states it ("ALLERGIES / Penicillin (rash).").
        mention = 0 if unit.section and _topic(unit.section) == topic else _mention(topic, sentence)
        if mention is not None and not _NEGATION.search(sentence[:mention]):
            return sentence
    return None


def _mention(topic: str, sentence: str) -> int | None:
    """Where ``sentence`` first mentions something of ``topic``, or ``None``."""
    lowered = sentence.lower()
    if topic == "allergies":
        match = re.search(r"\ballerg\w*|\banaphyla\w*|\bintoleran\w*", lowered)
        return match.start() if match else None
    if topic == "medications":
        match = _DOSE.search(lowered)
        for word in re.finditer(r"[a-z][a-z-]+", lowered):
            if is_drug(word.group(0)):
                return word.start() if match is None else min(word.start(), match.start())
        return match.start() if match else None
    if topic == "medical history":
        return 0 if _has_diagnosis(lowered) else None
    if topic == "surgical history":
        match = _PROCEDURE.search(lowered)
        return match.start() if match else None
    if topic == "family history":
        match = _RELATIVE.search(lowered)
        return match.start() if match and _has_diagnosis(lowered) else None
    if topic == "social history":
        match = _HABIT.search(lowered)
        return match.start() if match else None
    return None


def _sentence_answers(text: str) -> list[NullAnswer | None]:
    """Each sentence of ``text`` as a null answer (or ``None``). A null sentence that does not
    name its topic takes its section's ("ALLERGIES" above "None.")."""
    whole = null_answer(text)
    if whole is not None:
        return [whole]
    out: list[NullAnswer | None] = []
    for sentence in split_sentences_with_sections(text):
        answer = null_answer(sentence.text)
        if answer is not None and answer.topic is None and sentence.section:
            answer = NullAnswer(text=answer.text, topic=_topic(sentence.section))
        out.append(answer)
    return out


def _null_sentences(text: str) -> list[NullAnswer]:
    return [a for a in _sentence_answers(text) if a is not None]


def _only_null(text: str) -> list[NullAnswer]:
    """The null answers ``text`` consists of, or ``[]`` if it says anything else."""
    answers = _sentence_answers(text)
    return [a for a in answers if a is not None] if answers and all(answers) else []


def null_verdict(claim: str, evidence: str) -> Verdict | None:
    """A verdict for ``claim`` against ``evidence`` when the claim is a null answer or the
    evidence is only null answers; ``None`` otherwise (see the module docstring)."""
    if not claim.strip() or not evidence.strip():
        return None
    mine = null_answer(claim)
    if mine is not None:
        for theirs in _null_sentences(evidence):
            if _compatible(mine.topic, theirs.topic):
                return Verdict(
                    label="entailed",
                    evidence=theirs.text,
                    explanation=f"null answer: both say there is nothing to report{_about(mine, theirs)}",
                )
        stated = _states(mine.topic, evidence)
        if stated is not None:
            return Verdict(
                label="not_entailed",
                reason="incorrect",
                evidence=stated,
                explanation=f"null answer: the claim says there are no {mine.topic}; the other text has some",
            )
        return Verdict(
            label="not_entailed",
            reason="missing",
            explanation="null answer: the claim says there is nothing to report"
            f"{f' ({mine.topic})' if mine.topic else ''}, the other text does not say so",
        )
    theirs_only = _only_null(evidence)
    if not theirs_only:
        return None
    for theirs in theirs_only:
        if theirs.topic is not None and _states(theirs.topic, claim) is not None:
            return Verdict(
                label="not_entailed",
                reason="incorrect",
                evidence=theirs.text,
                explanation=(
                    f"null answer: the other text says there are no {theirs.topic}; the claim states some"
                ),
            )
    return Verdict(
        label="not_entailed",
        reason="missing",
        evidence="",
        explanation="null answer: the other text only says there is nothing to report",
    )


def _about(a: NullAnswer, b: NullAnswer) -> str:
    topic = a.topic or b.topic
    return f" ({topic})" if topic else ""
