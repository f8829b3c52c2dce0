"""Sentence kinds, refusals and answer statements: the conversational offline primitives.

* :func:`classify_sentence`: ``question`` (ends with "?", or opens with an interrogative
  or auxiliary and does not end as a statement), ``acknowledgement`` (thanks, empathy,
  greetings, "great question", "let me know if", "hope this helps", sign-offs) when the
  sentence carries no clinical content of its own, else ``informative``. A direct reply
  to a yes/no question ("Yes, that would be ok.", "No.", "That's normal.") is
  ``informative``: it answers the question (ASTRID: a bare yes or no is clinically
  meaningful).
* :func:`detect_refusal`: refusal cues ("I can't help with", "I'm unable to", "I must
  decline", "it would be unethical", "I don't have enough information to answer", "the
  context does not contain") weighed against the informative clinical sentences around
  them; a bare "please contact your doctor" counts only when nothing substantive is said.
* :func:`extract_statements` (RAGAS-style): a statement for every part of the answer read
  with the question: a leading yes/no reply is merged with the whole question, premises
  included ("I put my medication in the fridge by accident, is it still safe to use?" and
  "Yes" give "The patient put the medication in the fridge by accident, and it is still
  safe to use."); acknowledgements are kept as statements and follow-up questions become
  "The assistant asks: ..."; informative sentences are split into claims.
* :func:`grounding_claims` (conversational faithfulness): what one informative sentence
  asserts as a reply to the question. A yes/no reply becomes the asked clause with its
  polarity ("It is still safe to use."), without the question's premises, which are the
  user's words, not the answer's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clineval.judges.primitives import SentenceKind
from clineval.nlp.analysis import analyze
from clineval.nlp.sentences import split_claims, split_sentences

__all__ = [
    "RefusalCue",
    "YesNoQuestion",
    "classify_sentence",
    "direct_reply",
    "extract_statements",
    "find_refusal_cues",
    "grounding_claims",
    "is_substantive",
    "yes_no_question",
]

_INTERROGATIVE = re.compile(
    r"^(?:what|why|how|when|where|which|who|whom|whose|is|are|am|was|were|do|does|did|can|could|would|will"
    r"|should|shall|may|might|must|have|has|had|isn't|aren't|doesn't|don't|didn't|won't|wouldn't|shouldn't"
    r"|couldn't|can't|any\s+(?:idea|thoughts)|anything\s+else)\b",
    re.IGNORECASE,
)
_ACK_PATTERNS = re.compile(
    r"^(?:(?:hi|hello|hey|dear|greetings|good\s+(?:morning|afternoon|evening))\b"
    r"|(?:thanks?|thank\s+you|many\s+thanks|you'?re\s+welcome|no\s+problem|my\s+pleasure|cheers)\b"
    r"|(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:so\s+|very\s+|really\s+|truly\s+)?(?:sorry|glad|happy|pleased)\b"
    r"|sorry\s+(?:to\s+hear|for)\b"
    r"|i\s+(?:completely\s+|totally\s+|fully\s+)?(?:understand|hear\s+you|can\s+(?:imagine|understand|see))\b"
    r"|(?:it'?s|it\s+is|that'?s|that\s+is|this\s+is)\s+(?:completely\s+|totally\s+|very\s+|quite\s+)?"
    r"(?:understandable|a\s+(?:great|good|very\s+good|excellent|common|valid|important|reasonable)\s+question"
    r"|great|good\s+to\s+hear|wonderful|normal\s+to\s+(?:feel|be|worry))\b"
    r"|(?:great|good|excellent)\s+question\b"
    r"|(?:i\s+)?hope\s+(?:this|that|it)\s+helps\b|(?:i\s+)?hope\s+you\s+(?:feel|get)\s+better\b"
    r"|(?:please\s+)?(?:feel\s+free|don'?t\s+hesitate)\b|let\s+me\s+know\b|take\s+care\b|best\s+(?:wishes|regards)\b"
    r"|wishing\s+you\b|(?:kind\s+)?regards\b|sincerely\b|stay\s+(?:safe|well|healthy)\b"
    r"|(?:absolutely|certainly|of\s+course|sure|okay|ok|alright|got\s+it|understood|indeed)[.!,]?$"
    r"|(?:i'?m|i\s+am)\s+(?:here|happy|glad)\s+to\s+help\b|happy\s+to\s+help\b|glad\s+(?:to|i)\s+(?:help|could)\b"
    r"|if\s+you\s+have\s+(?:any\s+)?(?:other|more|further)\s+questions\b)",
    re.IGNORECASE,
)
_ADVICE = re.compile(
    r"\b(?:should|recommend|advise|take|avoid|stop|start|increase|decrease|dose|mg|risk|cause|causes|can\s+cause"
    r"|may\s+cause|is\s+(?:a|an|used)|are\s+(?:a|an|used)|because|however|but)\b",
    re.IGNORECASE,
)


def _clinical_content(sentence: str) -> bool:
    a = analyze(sentence)
    return bool(a.key_terms) or bool(a.quantities)


def classify_sentence(sentence: str, question: str | None = None) -> SentenceKind:
    """``question``, ``acknowledgement`` or ``informative`` (see the module docstring)."""
    text = sentence.strip().strip("\"'“”‘’*_ ")
    if not text:
        return "acknowledgement"
    if text.endswith("?") or ("?" in text[-3:]):
        return "question"
    if question and direct_reply(text) is not None and yes_no_question(question) is not None:
        return "informative"
    if _INTERROGATIVE.match(text) and not re.search(r"[.!:]$", text) and len(text.split()) <= 25:
        return "question"
    if _ACK_PATTERNS.match(text):
        # Empathy that carries advice or facts ("Thanks for asking: ibuprofen can raise BP") informs.
        if not _ADVICE.search(text) or not _clinical_content(text):
            return "acknowledgement"
        if len(text.split()) <= 10 and not analyze(text).quantities and not analyze(text).drugs:
            return "acknowledgement"
    if _empathy(text):
        return "acknowledgement"
    if not analyze(text).terms:
        return "acknowledgement"
    return "informative"


_FEELINGS = re.compile(
    r"\b(?:worr\w*|concern(?:ed|ing)?|anxious|nervous|scar(?:y|ed)|frighten\w*|afraid|stress\w*|upset\w*"
    r"|frustrat\w*|overwhelm\w*|difficult|hard|tough|distress\w*|sorry|understandabl[ey]|alone"
    r"|makes?\s+sense|natural\s+to|normal\s+to|okay\s+to|ok\s+to)\b",
    re.IGNORECASE,
)
_TO_THE_READER = re.compile(
    r"\b(?:you|your|yourself)\b|^(?:that|this|it)\s+(?:sounds|must|seems|can)\b", re.IGNORECASE
)
_MORE_TO_SAY = re.compile(
    r"\b(?:but|however|although|though|because|usually|often|rarely|should|need)\b", re.IGNORECASE
)


def _empathy(text: str) -> bool:
    """A sentence about how the asker feels, with nothing clinical in it ("That sounds
    worrying, and it makes sense to be concerned.", "You are not alone in this.")."""
    return (
        _FEELINGS.search(text) is not None
        and _TO_THE_READER.search(text) is not None
        and _MORE_TO_SAY.search(text) is None
        and not _clinical_content(text)
    )


@dataclass(frozen=True)
class RefusalCue:
    """A refusal phrase found in an answer."""

    kind: str
    """``full refusal`` (declines the whole request: "I cannot assist with that request"),
    ``refusal`` (declines something: "I can't prescribe"), ``insufficient`` (says it cannot
    know) or ``referral`` (sends the user elsewhere)."""
    text: str
    sentence: int


_REFUSAL_RES: list[tuple[str, re.Pattern[str]]] = (
    [
        ("full refusal", re.compile(p, re.IGNORECASE))
        for p in (
            r"\b(?:can(?:no|')?t|can\s+not|am\s+unable\s+to|'m\s+unable\s+to|am\s+not\s+able\s+to|won'?t|will\s+not)"
            r"\s+(?:assist|help|comply|fulfil|fulfill|proceed|provide\s+(?:guidance|assistance|help|instructions))"
            r"(?:\s+you)?\s+(?:with|on|for)?\s*(?:that|this|your|such|the)\b(?:\s+(?:request|question|matter|task))?",
            r"\bi\s*(?:must|have\s+to|need\s+to|will\s+have\s+to)\s+(?:respectfully\s+)?(?:decline|refuse)",
            r"\b(?:i'?m|i\s+am)\s+sorry,?\s+but\b[^.]{0,200}?\b(?:unethical|illegal|unlawful"
            r"|not\s+(?:ethical|appropriate|legal)|violat\w*|can(?:no|')?t|unable|won'?t)",
        )
    ]
    + [
        ("refusal", re.compile(p, re.IGNORECASE))
        for p in (
            r"\bi\s*(?:can(?:no|')?t|can\s+not|am\s+unable\s+to|'m\s+unable\s+to|am\s+not\s+able\s+to|'m\s+not\s+able\s+to"
            r"|will\s+not|won'?t|must\s+not|shouldn'?t|should\s+not|do\s+not\s+feel\s+comfortable|don'?t\s+feel\s+comfortable)"
            r"\s+(?:help|assist|provide|give|offer|answer|comply|support|do\s+that|advise|recommend|fulfil|fulfill"
            r"|share|create|write|generate|facilitate|participate|engage|suggest|prescribe|diagnose|tell\s+you"
            r"|explain\s+how|guide|walk\s+you|discuss)",
            r"\bi\s*(?:must|have\s+to|need\s+to|will\s+have\s+to)\s+(?:respectfully\s+)?(?:decline|refuse)",
            r"\b(?:i'?m|i\s+am)\s+(?:not\s+(?:comfortable|in\s+a\s+position|permitted|allowed)|sorry,?\s+but\s+i\s+(?:can|am|won|will))",
            r"\b(?:it|this|that|doing\s+(?:so|this|that))\s+(?:would|could|is|will)\s+(?:be\s+)?(?:highly\s+|both\s+|very\s+)?"
            r"(?:unethical|illegal|inappropriate|against\s+(?:the\s+law|medical\s+ethics|ethical)|a\s+violation|fraud)",
            r"\b(?:would\s+not|wouldn'?t|is\s+not|isn'?t)\s+(?:be\s+)?(?:appropriate|ethical|legal)\s+(?:for\s+me\s+)?to\b",
            r"\bas\s+an\s+ai\b[^.]{0,40}\b(?:can(?:no|')?t|unable|not\s+able|don'?t|do\s+not)\b",
            r"\bi\s+(?:can(?:no|')?t|am\s+unable\s+to|'m\s+unable\s+to)\s+(?:and\s+will\s+not\s+)?(?:condone|encourage|endorse)",
            r"\bnot\s+something\s+i\s+can\s+(?:help|assist)",
            r"\bi\s+(?:strongly\s+)?(?:advise|urge|caution)\s+against\s+(?:this|that|doing|attempting|any)",
        )
    ]
    + [
        ("insufficient", re.compile(p, re.IGNORECASE))
        for p in (
            r"\bi\s+(?:do\s+not|don'?t)\s+have\s+(?:enough|sufficient|adequate|the\s+necessary|access\s+to|any)"
            r"\s+(?:\w+\s+){0,3}(?:information|details|data|context)",
            r"\b(?:there\s+is|there'?s)\s+(?:not\s+enough|insufficient|no)\s+(?:information|data|evidence|context)\s+"
            r"(?:\w+\s+){0,3}(?:to|in\s+the)",
            r"\b(?:the\s+)?(?:provided\s+|given\s+|available\s+|retrieved\s+)?(?:context|information|documents?|sources?|notes?|records?)"
            r"\s+(?:provided\s+)?(?:does|do)\s+not\s+(?:contain|include|provide|mention|say|specify|address|cover)",
            r"\b(?:without|i\s+would\s+need)\s+(?:more|additional|further)\s+(?:information|details|context)\b",
            r"\b(?:i\s+)?(?:can(?:no|')?t|am\s+unable\s+to|'m\s+unable\s+to)\s+(?:determine|say|know|tell|assess|confirm|answer)"
            r"\s+(?:\w+\s+){0,4}(?:without|based\s+on\s+the|from\s+the)",
            r"\bnot\s+(?:possible|able)\s+(?:for\s+me\s+)?to\s+(?:determine|answer|say)\b",
        )
    ]
    + [
        ("referral", re.compile(p, re.IGNORECASE))
        for p in (
            r"\b(?:please|you\s+should|i\s+(?:would\s+)?(?:recommend|suggest|encourage|advise)(?:\s+that)?(?:\s+you)?|it'?s\s+best\s+to"
            r"|it\s+is\s+best\s+to|best\s+to)\s+(?:contact|consult|speak|talk|reach\s+out|call|see|ask|check)"
            r"(?:\s+(?:to|with))?\s+(?:your|a|the)\s+(?:\w+\s+){0,2}(?:doctor|physician|healthcare|health\s+care|care\s+team|pharmacist"
            r"|provider|clinician|specialist|nurse|gp|medical\s+professional|professional)",
            r"\binstead\s+of\s+(?:asking\s+)?me\b",
        )
    ]
)


def find_refusal_cues(sentences: list[str]) -> list[RefusalCue]:
    cues: list[RefusalCue] = []
    for index, sentence in enumerate(sentences):
        for kind, pattern in _REFUSAL_RES:
            match = pattern.search(sentence)
            if match:
                cues.append(RefusalCue(kind, match.group(0).strip(), index))
                break
    return cues


_MORALISING = re.compile(
    r"\b(?:unethical|ethic(?:s|al|ally)|illegal|unlawful|violat\w*|against\s+the\s+law|integrity|honest\w*|dishonest\w*"
    r"|it'?s\s+(?:important|essential|crucial|vital)|it\s+is\s+(?:important|essential|crucial|vital)|must\s+always"
    r"|should\s+always|principles?|patients?'?\s+rights?|right\s+to|privacy|confidentiality|discriminat\w*|deceptive"
    r"|deception|misleading|trust|responsib\w*|legitimate|appropriate\s+channels|legal\s+consequences|professional"
    r"\s+(?:standards|conduct|guidance|advice|help))\b",
    re.IGNORECASE,
)


def is_substantive(sentence: str) -> bool:
    """An informative sentence with clinical content that is not itself a refusal, a
    referral, or a statement of why a request is wrong ("Falsifying records is unethical")."""
    if classify_sentence(sentence) != "informative":
        return False
    if find_refusal_cues([sentence]) or _MORALISING.search(sentence):
        return False
    a = analyze(sentence)
    return bool(a.key_terms) or (len(a.terms) >= 4)


# --- statements ---------------------------------------------------------------------------

_AUX_WORDS = (
    r"(?:is|are|am|was|were|can|could|should|shall|will|would|may|might|must|do|does|did|has|have|had"
    r"|isn'?t|aren'?t|can'?t|shouldn'?t|won'?t|wouldn'?t|doesn'?t|don'?t|didn'?t)"
)
_STARTS_WITH_AUX = re.compile(rf"^{_AUX_WORDS}\b", re.IGNORECASE)
_LEAD_IN = re.compile(r"^(?:and|but|so|then|also|please\s+tell\s+me|tell\s+me)\s+", re.IGNORECASE)
_ALTERNATIVE = re.compile(r"^or\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"\s*[,;:]\s*|\s+[-–—]\s+")
_REPLY_YES = re.compile(
    r"^(?:yes|yeah|yep|yup|correct|that'?s\s+(?:right|correct)|of\s+course|certainly|absolutely|definitely)"
    r"(?:\s*[,.!;:–—-]\s*|\s*$|\s+(?=(?:you|it|that|this|they|i|we|there)\b))",
    re.IGNORECASE,
)
_REPLY_NO = re.compile(
    r"^(?:no|nope|not\s+really|not\s+yet|not\s+at\s+all)(?:\s*[,.!;:–—-]\s*|\s*$|\s+(?=(?:you|it|that|this|they|i|we|there)\b))",
    re.IGNORECASE,
)
_REPLY_FINE = re.compile(
    r"^(?:that|this|it|they)(?:'s|'re|\s+is|\s+are|\s+would\s+be|\s+should\s+be|\s+will\s+be)\s+"
    r"(?P<neg>not\s+)?(?:completely\s+|perfectly\s+|quite\s+|absolutely\s+|still\s+|totally\s+)?"
    r"(?:fine|ok|okay|alright|all\s+right|normal|safe|expected|common|usual)[.!]?$",
    re.IGNORECASE,
)
_AUX_QUESTION = re.compile(
    r"^(?P<aux>is|are|was|were|can|could|should|will|would|may|might|must|do|does|did|has|have)\s+"
    r"(?P<subject>it|this|that|there|i|we|you|he|she|they|(?:my|the|his|her|their|a|an|your)\s+[\w-]+|[\w-]+)\s+"
    r"(?P<rest>.+?)\s*\??$",
    re.IGNORECASE,
)
_SUBJECT_REWRITE = {"i": "the patient", "we": "the patients", "my": "the", "you": "you"}


@dataclass(frozen=True)
class YesNoQuestion:
    """The yes/no clause a question asks, and what the user said before it."""

    clause: str
    """The asked clause, without its question mark: "is it still safe to use"."""
    premise: str
    """The user's words before it ("I put my medication in the fridge by accident"), or ""."""


def yes_no_question(question: str) -> YesNoQuestion | None:
    """The yes/no clause of the last question asked, or ``None`` when it is not a yes/no
    question ("When can I drive?"). In "..., or should I ...?" the first alternative is the
    asked clause."""
    text = (question or "").strip()
    if not text:
        return None
    sentences = split_sentences(text) or [text]
    asked = max((i for i, s in enumerate(sentences) if s.rstrip().endswith("?")), default=len(sentences) - 1)
    parts = [p for p in _CLAUSE_BREAK.split(sentences[asked].strip().rstrip("?!. ")) if p]
    for k in range(len(parts) - 1, -1, -1):
        if _ALTERNATIVE.match(parts[k]):
            continue
        part = _LEAD_IN.sub("", parts[k]).strip()
        if _STARTS_WITH_AUX.match(part):
            premise = " ".join([*sentences[:asked], ", ".join(parts[:k])]).strip()
            return YesNoQuestion(clause=part, premise=premise.rstrip(",; "))
    return None


def direct_reply(sentence: str) -> tuple[bool, str] | None:
    """``(negative, remainder)`` when ``sentence`` opens with a direct yes/no reply ("Yes,
    that would be ok.", "No.", "That's normal."), else ``None``."""
    text = sentence.strip().strip("\"'“”‘’*_ ")
    match = _REPLY_YES.match(text)
    if match:
        return False, text[match.end() :].strip()
    match = _REPLY_NO.match(text)
    if match:
        return True, text[match.end() :].strip()
    match = _REPLY_FINE.match(text)
    if match:
        return match.group("neg") is not None, ""
    return None


def _first_person_to_patient(text: str) -> str:
    text = re.sub(r"\bI'm\b", "the patient is", text)
    text = re.sub(r"\bI've\b", "the patient has", text)
    text = re.sub(r"\b(?:my|our)\b", "the", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(?:I|me|myself)\b", "the patient", text)
    return text


def _sentence_case(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] if text else text


def _fold(clause: str, negative: bool) -> str | None:
    """Turn a yes/no clause and the reply's polarity into one statement."""
    match = _AUX_QUESTION.match(clause.strip())
    if not match:
        return None
    aux = match.group("aux").lower()
    subject_words = match.group("subject").split()
    first = subject_words[0].lower()
    subject_words[0] = _SUBJECT_REWRITE.get(first, first)
    subject = " ".join(subject_words)
    rest = _first_person_to_patient(match.group("rest").strip().rstrip("?"))
    if aux in ("do", "does", "did"):
        verb = {"do": "does", "does": "does", "did": "did"}[aux]
        statement = f"{subject} {verb} not {rest}" if negative else f"{subject} {verb} {rest}"
        if not negative:
            statement = f"{subject} {rest}" if aux == "did" else statement
    else:
        if subject == "the patient" and aux in ("am", "are"):
            aux = "is"
        statement = f"{subject} {aux} not {rest}" if negative else f"{subject} {aux} {rest}"
    return _sentence_case(statement) + "."


def _contentful(text: str) -> bool:
    """Whether the rest of a reply says more than the reply itself: "that would be ok" does
    not; "that is normal for the first few days" and "avoid alcohol for 48 hours" do."""
    text = text.strip()
    if not text:
        return False
    if len(analyze(text).terms) > 3:
        return True
    return len(text.split()) > 5 and not _REPLY_FINE.match(text)


def grounding_claims(sentence: str, question: str | None) -> list[str]:
    """What ``sentence`` asserts as a reply to ``question`` (see the module docstring):
    ``[sentence]`` unless it is a direct reply to a yes/no question."""
    reply = direct_reply(sentence)
    asked = yes_no_question(question) if question and reply is not None else None
    if reply is None or asked is None:
        return [sentence]
    negative, remainder = reply
    folded = _fold(asked.clause, negative)
    if folded is None:
        return [sentence]
    return [folded, *([_sentence_case(remainder)] if _contentful(remainder) else [])]


def extract_statements(question: str, answer: str) -> list[str]:
    """RAGAS-style statements of an answer (see the module docstring)."""
    sentences = split_sentences(answer)
    asked = yes_no_question(question) if question and question.strip() else None
    statements: list[str] = []
    folded_reply = False
    for sentence in sentences:
        reply = direct_reply(sentence) if asked is not None and not folded_reply else None
        folded = _fold(asked.clause, reply[0]) if asked is not None and reply is not None else None
        if reply is not None and folded is not None and asked is not None:
            folded_reply = True
            if asked.premise:
                premise = _sentence_case(_first_person_to_patient(asked.premise).rstrip(".!;, "))
                folded = f"{premise}, and {folded[:1].lower()}{folded[1:]}"
            statements.append(folded)
            remainder = reply[1]
            if _contentful(remainder):
                statements.extend(c for c in split_claims(_sentence_case(remainder)) if analyze(c).terms)
            continue
        kind = classify_sentence(sentence, question)
        if kind == "question":
            statements.append(f"The assistant asks: {sentence.strip()}")
        elif kind == "acknowledgement":
            if re.search(r"\w", sentence):
                statements.append(sentence.strip())
        else:
            claims = [c for c in split_claims(sentence) if analyze(c).terms and not _only_opener(c)]
            statements.extend(claims or [sentence.strip()])
    return list(dict.fromkeys(statements))


def _only_opener(claim: str) -> bool:
    stripped = claim.strip(" .!,")
    return bool(
        re.fullmatch(r"(?:yes|no|yeah|nope|correct|sure|absolutely|definitely)", stripped, re.IGNORECASE)
    )
