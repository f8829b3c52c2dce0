"""Sentence and claim splitting for clinical text.

:func:`split_sentences` handles what clinical notes do to a plain sentence splitter:
section headers on their own line ("HISTORY OF PRESENT ILLNESS", "ASSESSMENT AND PLAN")
or in front of the text ("CHIEF COMPLAINT: chest pain"), bullet and numbered lines,
hard-wrapped paragraphs, and a missing space after a full stop ("stable.Discharged").
Inside a block, pysbd (rule-based, English) does the splitting; it knows clinical
abbreviations such as "y.o.", "i.v.", "p.m.", "Dr." and decimals.

:func:`split_claims` breaks one sentence into atomic claims: on ";", on coordinated
clauses that each have their own subject ("..., but he felt warm"), and on lists of three
or more short items ("denies nausea, vomiting, and diarrhea" gives one claim per item,
each keeping the shared words before and after the list).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "Sentence",
    "is_section_header",
    "split_claims",
    "split_sentences",
    "split_sentences_with_sections",
    "strip_label",
]

# Section names common in notes and reports (compared lower-cased, without a trailing colon).
SECTION_HEADERS = frozenset(
    """
    chief complaint|cc|history of present illness|hpi|history|past medical history|pmh
    |past surgical history|psh
    |medical history|surgical history|social history|family history|medications|current medications|allergies
    |review of systems|ros|physical exam|physical examination|exam|examination|vital signs|vitals|results|labs
    |laboratory|laboratory data|imaging|assessment|plan|assessment and plan|a/p|a&p|impression|findings
    |diagnosis|diagnoses|discharge diagnosis|discharge diagnoses|hospital course|brief hospital course
    |discharge instructions|discharge medications|disposition|follow up|follow-up|followup|instructions
    |recommendations|recommendation|summary|subjective|objective|procedure|procedures|indication|technique
    |comparison|conclusion|clinical history|reason for visit|reason for exam|patient information
    |problem list|active problems|interval history|consultations|patient instructions|addendum|signature
    """.replace("\n", "")
    .replace(" |", "|")
    .split("|")
)
SECTION_HEADERS = frozenset(h.strip() for h in SECTION_HEADERS if h.strip())

# Labels at the start of a line that only organise a note ("Medical Reasoning: ...");
# they are dropped from claims. Body-system labels ("Respiratory: ...") carry meaning and stay.
GENERIC_LABELS = frozenset(
    """
    medical reasoning|medical treatment|additional testing|patient agreements|patient education|plan
    |patient education and counseling|education and counseling|counseling and education
    |assessment|impression|findings|recommendation|recommendations|comment|comments|note|notes|summary
    |counseling|patient instructions|discussion|interpretation|result|results|conclusion
    """.replace("\n", "")
    .replace(" |", "|")
    .split("|")
)
GENERIC_LABELS = frozenset(h.strip() for h in GENERIC_LABELS if h.strip())

_BULLET = re.compile(r"^\s*(?:[-*•·◦▪‣–—>]+|\(?\d{1,2}[.)](?!\d)|\(?[a-hA-H][.)](?=\s)|#+)\s+")
_INLINE_HEADER = re.compile(r"^(?P<head>[A-Z][A-Z0-9 /&()-]{1,48}[A-Z)])\s*:\s*(?P<rest>\S.*)$")
_LABEL = re.compile(r"^(?P<label>[A-Za-z][A-Za-z /&-]{1,40}?)\s*:\s+(?P<rest>\S.*)$")
_TERMINAL = re.compile(r"[.!?:;]\s*$")
# "stable.Discharged": a missing space after a full stop between words (not "e.g.X", "Dr.X").
_GLUED = re.compile(r"(?<=[a-z]{2}[.!?])(?=[A-Z][a-z])")
_GLUED_EXCEPTIONS = re.compile(r"(?:\b(?:vs|etc|approx|incl|esp)\.)$", re.IGNORECASE)


@dataclass(frozen=True)
class Sentence:
    """One sentence with the section it appeared under ("" before any header)."""

    text: str
    section: str = ""
    bullet: bool = False


_segmenter_local = threading.local()


def _segment(text: str) -> list[str]:
    segmenter = getattr(_segmenter_local, "segmenter", None)
    if segmenter is None:
        import pysbd

        segmenter = pysbd.Segmenter(language="en", clean=False)
        _segmenter_local.segmenter = segmenter
    parts: list[str] = segmenter.segment(text)
    return parts


def is_section_header(line: str) -> bool:
    """A line that only names a section ("HISTORY OF PRESENT ILLNESS", "Plan:")."""
    stripped = line.strip().rstrip(":").strip()
    if not stripped:
        return False
    lowered = re.sub(r"\s+", " ", stripped.lower())
    if lowered in SECTION_HEADERS:
        return True
    words = stripped.split()
    if len(words) > 6 or re.search(r"\d", stripped) or stripped.endswith((".", "!", "?")):
        return False
    letters = [c for c in stripped if c.isalpha()]
    if len(letters) < 3 or any(c.islower() for c in letters):
        return False
    # An all-capitals line: a header unless it reads like a finding ("NO ACUTE DISEASE").
    return not re.match(r"^(?:NO|NOT|NEGATIVE|WITHOUT|POSITIVE)\b", stripped)


def strip_label(text: str) -> str:
    """Drop an organising label ("Medical Reasoning: ...") from the start of a line."""
    match = _LABEL.match(text)
    if (
        match
        and match.group("label").strip().lower() in GENERIC_LABELS
        and len(match.group("rest").split()) >= 2
    ):
        return match.group("rest").strip()
    return text


def _blocks(text: str) -> list[tuple[str, str, bool]]:
    """(block text, section, is_bullet) for each paragraph, bullet or header-led line."""
    blocks: list[tuple[str, str, bool]] = []
    section = ""
    current: list[str] = []
    current_bullet = False

    def flush() -> None:
        nonlocal current, current_bullet
        if current:
            blocks.append((" ".join(current), section, current_bullet))
        current, current_bullet = [], False

    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.strip()
        if not line:
            flush()
            continue
        if is_section_header(line):
            flush()
            section = line.rstrip(":").strip()
            continue
        inline = _INLINE_HEADER.match(line)
        if inline and (
            inline.group("head").lower() in SECTION_HEADERS or is_section_header(inline.group("head"))
        ):
            flush()
            section = inline.group("head").strip()
            line = inline.group("rest").strip()
        bullet = _BULLET.match(line)
        if bullet:
            flush()
            line = line[bullet.end() :].strip()
            if line:
                current, current_bullet = [line], True
                flush()
            continue
        # A hard-wrapped paragraph continues on a line that starts in lower case.
        if current and not _TERMINAL.search(current[-1]) and (line[0].islower() or line[0].isdigit()):
            current.append(line)
            continue
        if (
            current
            and not _TERMINAL.search(current[-1])
            and not current_bullet
            and len(current[-1].split()) > 8
        ):
            current.append(line)
            continue
        flush()
        current = [line]
    flush()
    return blocks


def _unglue(sentence: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for match in _GLUED.finditer(sentence):
        if _GLUED_EXCEPTIONS.search(sentence[start : match.start()]):
            continue
        parts.append(sentence[start : match.start()])
        start = match.start()
    parts.append(sentence[start:])
    return [p.strip() for p in parts if p.strip()]


@lru_cache(maxsize=4096)
def _split_cached(text: str) -> tuple[Sentence, ...]:
    out: list[Sentence] = []
    for block, section, bullet in _blocks(text):
        for piece in _segment(block):
            for sentence in _unglue(piece.strip()):
                if re.fullmatch(r"[\W\d_]*", sentence):
                    continue
                out.append(Sentence(sentence, section, bullet))
    return tuple(out)


def split_sentences_with_sections(text: str) -> list[Sentence]:
    """Sentences of ``text`` in order, each with its section header and bullet flag."""
    if not text or not text.strip():
        return []
    return list(_split_cached(text))


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` in order (headers dropped, bullets stripped, whitespace trimmed)."""
    return [s.text for s in split_sentences_with_sections(text)]


# --- claims -----------------------------------------------------------------------------

_VERB = (
    r"(?:is|was|are|were|has|had|have|will|would|can|could|did|does|do|should|must|may|might"
    r"|reports?|reported|denies|denied|notes?|noted|states?|stated|feels?|felt|takes?|took|started"
    r"|underwent|received|presents?|presented|complains?|complained|endorses?|endorsed|shows?|showed"
    r"|demonstrates?|demonstrated|reveals?|revealed|continues?|continued|remains?|remained|developed"
    r"|recommend(?:s|ed)?|plan(?:s|ned)?|want(?:s|ed)?|agree[sd]?|opted|declined|believes?|thinks?)\b"
)
_SUBJECT = (
    r"(?:he|she|they|it|we|i|you|there|(?:the\s+)?patient|pt"
    r"|(?:his|her|their|its|the|this|these|those|my|your|our)(?:\s+[\w-]+){1,2}|(?-i:[A-Z][a-z]+))"
)
# Coordinated clauses, each with its own subject: split before "but/however/although ..."
# and before ", and/so" or " and" when a subject and a verb follow.
_CLAUSE_SPLIT = re.compile(
    rf"(?:,\s*|\s+)(?:but|however|although|though|whereas|yet)\s*,?\s+(?={_SUBJECT}\s+(?:\w+\s+)?{_VERB})"
    rf"|(?:,\s*|\s+)(?:and|so)\s+(?={_SUBJECT}\s+(?:also\s+|now\s+|still\s+|then\s+)?{_VERB})"
    r"|;\s*(?:however|but|and)?\s*,?\s*"
    rf"|(?:,\s*|\s+)(?:but|however|although|though|whereas|yet)\s*,?\s+(?=(?:also\s+|still\s+|now\s+)?{_VERB})",
    re.IGNORECASE,
)
_OPENING_SUBJECT = re.compile(
    r"^(?:regarding [^,]+,\s*)?(?P<subject>he|she|they|we|i|you|(?:the\s+)?patient|pt"
    r"|(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))\s+",
    re.IGNORECASE,
)
_OPENING_VERB = re.compile(rf"^(?:also\s+|still\s+|now\s+)?{_VERB}", re.IGNORECASE)
_LIST_SEP = re.compile(
    r",\s+(?:and\s+|or\s+|as\s+well\s+as\s+)?|\s+(?:and|or|as\s+well\s+as)\s+", re.IGNORECASE
)
_VERBISH = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|will|would|should|can|could|may|might|must|does|did|do"
    r"|reports?|denies|states?|notes?|feels?|felt|takes?|took|started|presents?|shows?|which|who|that)\b",
    re.IGNORECASE,
)


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _finish(text: str) -> str:
    text = text.strip(" ,;:-")
    if not text:
        return text
    if not re.search(r"[.!?]$", text):
        text += "."
    return _capitalise(text)


def _split_list(clause: str) -> list[str]:
    """Expand a list of >= 3 short items into one claim per item (else the clause itself)."""
    body = clause.rstrip(" .!?")
    if re.search(r"\d,\d", body):
        return [clause]
    # Candidate list: the longest run "a, b, (and|or) c" with short items.
    match = re.search(
        r"(?<![\w-])(?P<items>(?:[^,;:]{1,40},\s+){2,}(?:(?:and|or|as well as)\s+)?[^,;:]{1,40}"
        r"|(?:[^,;:]{1,40},\s+){1,}[^,;:]{1,40}?\s+(?:and|or|as well as)\s+[^,;:]{1,40})$",
        body,
    )
    if not match:
        return [clause]
    items_text = match.group("items")
    prefix = body[: match.start("items")]
    pieces = [p.strip() for p in _LIST_SEP.split(items_text) if p and p.strip()]
    if len(pieces) < 3:
        return [clause]
    # The first piece holds the shared lead-in ("He denies nausea"): its last 1-4 words are the item.
    first = pieces[0]
    first_words = first.split()
    item_len = max(len(p.split()) for p in pieces[1:])
    if any(len(p.split()) > 5 for p in pieces[1:]) or any(_VERBISH.search(p) for p in pieces[1:]):
        return [clause]
    if re.search(r"\d,\d", items_text):
        return [clause]
    lead_words = first_words[: max(0, len(first_words) - item_len)]
    # Keep the lead-in short of a verb-free noun phrase: take the words up to and including
    # the last verb/preposition/cue of the first piece as the shared prefix.
    cut = 0
    for idx, word in enumerate(first_words[:-1]):
        if _VERBISH.search(word) or word.lower() in _LEADIN_WORDS:
            cut = idx + 1
    if cut:
        lead_words = first_words[:cut]
    first_item = " ".join(first_words[len(lead_words) :])
    if not first_item or len(first_item.split()) > 5:
        return [clause]
    lead = " ".join(part for part in (prefix.strip(), " ".join(lead_words)) if part)
    items = [first_item, *pieces[1:]]
    return [f"{lead} {item}".strip() for item in items]


_LEADIN_WORDS = frozenset(
    [
        "no",
        "not",
        "denies",
        "denied",
        "without",
        "of",
        "for",
        "with",
        "on",
        "includes",
        "including",
        "include",
        "included",
        "such",
        "as",
        "like",
        "endorses",
        "endorsed",
        "reports",
        "reported",
        "complains",
        "negative",
        "positive",
        "history",
        "significant",
        "takes",
        "taking",
        "prescribed",
        "continue",
        "continues",
        "start",
        "started",
        "stop",
        "stopped",
        "avoid",
        "avoiding",
        "are",
        "is",
        "were",
        "was",
        "has",
        "have",
        "had:",
        "to",
        "from",
        "in",
        "at",
        "about",
    ]
)


# "Jane Doe is a 59-year-old woman with a history of X who presents with Y": the
# demographic description is a claim of its own.
_DEMOGRAPHIC_OPENER = re.compile(
    r"^(?P<subject>.{1,60}?)\s+(?P<verb>is|was)\s+(?P<demo>an?\s+\d{1,3}[- ](?:year|yr|month)s?[- ]old"
    r"(?:\s+[\w-]+){0,3}?\s+(?:male|female|man|woman|gentleman|lady|boy|girl|patient|individual|person|infant|child))"
    r"\s*,?\s+(?P<link>with|who\s+(?:has|had|is|was|presents|presented|reports|comes|came|underwent))\s+(?P<rest>.+)$",
    re.IGNORECASE,
)


def _split_demographics(text: str) -> list[str]:
    match = _DEMOGRAPHIC_OPENER.match(text)
    if not match:
        return [text]
    subject = match.group("subject")
    link = match.group("link").lower()
    verb = "has" if link == "with" else link.split(None, 1)[1]
    if verb in ("comes", "came"):
        verb = link.split(None, 1)[1]
    return [
        f"{subject} {match.group('verb')} {match.group('demo')}.",
        f"{subject} {verb} {match.group('rest')}",
    ]


@lru_cache(maxsize=8192)
def _claims_cached(sentence: str) -> tuple[str, ...]:
    text = strip_label(sentence.strip())
    pieces = _split_demographics(text)
    clauses = [c.strip() for piece in pieces for c in _CLAUSE_SPLIT.split(piece) if c and c.strip(" ,;.")]
    # A clause with an elided subject ("..., but reports a cough") borrows the first one's.
    opening = _OPENING_SUBJECT.match(clauses[0]) if clauses else None
    if opening:
        subject = opening.group("subject")
        clauses = [
            f"{subject} {c}" if i and _OPENING_VERB.match(c) and not _OPENING_SUBJECT.match(c) else c
            for i, c in enumerate(clauses)
        ]
    claims: list[str] = []
    for clause in clauses:
        for claim in _split_list(clause.strip()):
            finished = _finish(claim)
            if len(re.findall(r"[A-Za-z0-9]+", finished)) >= 1:
                claims.append(finished)
    return tuple(claims) if claims else ((_finish(text),) if text.strip(" .") else ())


def split_claims(sentence: str) -> list[str]:
    """Atomic claims of one sentence, in order (the sentence itself when nothing splits)."""
    return list(_claims_cached(sentence))
