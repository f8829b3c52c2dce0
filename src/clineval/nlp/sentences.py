"""Sentence and claim splitting for clinical text.

:func:`split_sentences` handles what clinical notes do to a plain sentence splitter:
section headers on their own line ("HISTORY OF PRESENT ILLNESS", "ASSESSMENT AND PLAN")
or in front of the text ("CHIEF COMPLAINT: chest pain"), bullet and numbered lines,
hard-wrapped paragraphs, and a missing space after a full stop ("stable.Discharged").
Inside a block, pysbd (rule-based, English) does the splitting; it knows clinical
abbreviations such as "y.o.", "i.v.", "p.m.", "Dr." and decimals.

:func:`split_claims` breaks one sentence into atomic claims: on ";", on coordinated
clauses that each have their own subject and verb ("..., but he felt warm"; not "His father
and his brother have ..."), and on lists of three or more short items ("denies nausea,
vomiting, and diarrhea" gives one claim per item, each keeping the shared lead-in).

A split never cuts a verb from its object or a preposition from its noun. A list is "A, B,
and C" with noun-phrase items; its lead-in ends after a verb, a preposition, a label or a
list cue ("history of", "such as"). Coordinations that are one unit are never cut: "once or
twice", "two or three times a week", "either X or Y", "between 5 and 10 mg", "both A and
B", fixed pairs, parenthesised and quoted text. Describing words sharing one noun ("renal,
hepatic, and cardiac disease"), coordinated subjects and coordinated verbs stay whole. As a
last guard, a split whose claims would end in a preposition, a determiner or a conjunction,
start with "and"/"or", or drop a content word of the sentence is not made: the sentence is
then split at its clauses only, or kept whole.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

from clineval.nlp.lexicon import BODY_SITES

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
    # An all-capitals line: a header unless it reads like a finding ("NO ACUTE DISEASE") or
    # an answer ("NONE", "NKDA").
    return not re.match(r"^(?:NO|NOT|NEGATIVE|WITHOUT|POSITIVE|NONE|NIL|NKDA|NKA|NKFA|N/A)\b", stripped)


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
# A personal pronoun and the word after it, which is its verb ("and he smokes").
_PRONOUN_CLAUSE = (
    r"(?:he|she|they|we|(?-i:I))\s+(?:[a-z]+ly\s+)?"
    r"(?!(?:and|or|but|nor|to|in|at|on|of|with|for|from|by|as)\b)[a-z']+\b"
)
# Coordinated clauses, each with its own subject: split before "but/however/although ..."
# and before ", and/so" or " and" when a subject and a verb follow. A connective pair ("and
# so", "and although", "but then") is taken whole, so that no clause ends in a conjunction.
_CLAUSE_SPLIT = re.compile(
    r"(?:,\s*|\s+)(?:(?:and|but)\s*,?\s+)?(?P<contrast>but|however|although|though|whereas)\s*,?\s+"
    rf"(?={_SUBJECT}\s+(?:\w+\s+)?{_VERB}|{_PRONOUN_CLAUSE})"
    r"|(?:,\s*|\s+)(?P<and>and(?:\s+(?:so|then|now|therefore|thus))?|so)\s*,?\s+"
    rf"(?={_SUBJECT}\s+(?:also\s+|now\s+|still\s+|then\s+)?{_VERB}|{_PRONOUN_CLAUSE})"
    r"|(?P<semicolon>;)\s*(?:however|but|and)?\s*,?\s*"
    r"|(?:,\s*|\s+)(?:(?:and|but)\s*,?\s+)?(?P<elided>but|however|although|though|whereas)\s*,?\s+"
    rf"(?=(?:also\s+|still\s+|now\s+)?{_VERB})",
    re.IGNORECASE,
)
# Capitalised words that open a sentence without naming anyone.
_NOT_A_NAME = (
    r"(?:The|This|That|These|Those|His|Her|Their|Its|Our|My|Your|A|An|In|On|At|For|With|After|Before"
    r"|During|Since|If|When|While|Although|Because|Today|Yesterday|Tonight|Additionally|Also|However"
    r"|Then|No|Not|There|Here|It|Over|Once|Overall|Currently|Recently|Previously|Initially|Finally"
    r"|Physical|Further|Both|Each|All|Some|Any|Other|Per|Upon|Given|Regarding|Otherwise)\b"
)
_OPENING_SUBJECT = re.compile(
    r"^(?:regarding [^,]+,\s*)?(?P<subject>he|she|they|we|i|you|(?:the\s+)?patient|pt"
    rf"|(?-i:(?!{_NOT_A_NAME})[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
    rf"|(?:the|an?|his|her|their|this|my|your|our)\s+[\w-]+(?:\s+[\w-]+)?(?=\s+(?:\w+ly\s+)?(?:{_VERB}|[a-z]+s\b)))\s+",
    re.IGNORECASE,
)
_OPENING_VERB = re.compile(rf"^(?:also\s+|still\s+|now\s+)?{_VERB}", re.IGNORECASE)
_VERB_WORD = re.compile(rf"\b{_VERB}", re.IGNORECASE)
_VERBISH = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|will|would|should|can|could|may|might|must|does|did|do"
    r"|reports?|denies|states?|notes?|feels?|felt|takes?|took|started|presents?|shows?|which|who|that)\b",
    re.IGNORECASE,
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PREPOSITIONS = _words(
    """about above across after against along among around as at before behind below beneath beside
    between beyond by despite during except for from in including inside into like near of off on
    onto out outside over per regarding since through throughout to toward towards under until upon
    via with within without"""
)
# Words that may end a clause as a particle or an adverb ("follow up", "seen before").
_PARTICLES = _words(
    "up down out off over around along through back away in on by before after since behind below above"
)
_DETERMINERS = _words("a an the my your our their its his every either neither")
_CONJUNCTIONS = _words("and or nor but yet whereas although though because if whether while")
# Words after which a list's shared lead-in ends ("denies | nausea, vomiting, and diarrhea").
_LEADIN_WORDS = _PREPOSITIONS | _words(
    """no not denies denied endorses endorsed reports reported complains includes include included
    such takes taking prescribed continue continues start
    started stop stopped avoid avoiding are is were was has have had reveals revealed shows showed
    demonstrates demonstrated recommend recommended discussed reviewed ordered"""
)
# Instructions that open a sentence ("Schedule an endoscopy, a colonoscopy, and ...").
_IMPERATIVES = _words(
    """take continue start stop schedule follow return call avoid use increase decrease apply hold
    check monitor obtain order refer consider discuss recommend encourage advise begin resume
    discontinue maintain keep try drink eat rest elevate wear seek see get limit reduce add switch
    change repeat perform send"""
)
# Words that introduce a list ("such as" too): the lead-in ends with them even if the first
# item has a preposition ("including | the severity and location of the injury, ...").
_INTRODUCERS = _words("including include includes included like especially particularly")
# Nouns and participles whose "of"/"for" takes a list ("history of", "negative for").
_LIST_NOUNS = _words(
    """complaining complains complained complaint complaints history significant negative positive
    notable remarkable consisting consists signs symptoms episodes evidence presence"""
)
# Verbs that take a list of findings ("denies | blood in the stool, fever, or chills").
_CUE_VERBS = _words("denies denied endorses endorsed reports reported")
# Determiners shared by every item of a list ("in her knees, hips, and shoulders").
_DISTRIBUTIVE = _words("the his her their its my your our no any all these those some")
# A piece that starts with one of these is not a list item ("..., but with normal size").
_NOT_ITEM_START = (
    _PREPOSITIONS
    | _CONJUNCTIONS
    | _words(
        """so then therefore thus also only still however additionally furthermore moreover which who
        that when where unless etc resulting causing leading such"""
    )
)
# A verb in -ing with its object ("enhancing insulin release"), not a noun in -ing with a
# complement ("swelling of the legs") or alone ("vomiting").
_GERUND_PHRASE = re.compile(r"[a-z]{3,}ing\s+(?!of\b|in\b|from\b|on\b|at\b|with\b)\S", re.IGNORECASE)
_COPULAS = _words("is are was were be been remains remain appears appear seems seem")
# Single words that describe rather than name ("renal, hepatic, and cardiac disease").
_ADJECTIVAL = re.compile(
    r"(?:al|ic|ous|ive|ary|ile|less|ular)$|^(?:white|yellow|green|red|clear|thick|thin|small|large|mild"
    r"|moderate|severe|sharp|dull|soft|hard|firm|warm|cold|dry|new|old|acute|chronic|intermittent"
    r"|constant|left|right|upper|lower|long|short|black|brown|gray|grey|pink|dark|light|bright|tall"
    r"|wide|deep|shallow|round|smooth|rough|hot|heavy)$",
    re.IGNORECASE,
)
_NUMBER_WORD = (
    r"(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty"
    r"|thirty|forty|fifty|hundred|once|twice|thrice|several|a\s+few|a\s+couple)"
)
# Coordinations that are one unit, never a list: "once or twice", "two, three, or four weeks",
# "126 or higher", "a day or two", "either X or Y", "between 5 and 10 mg", "both A and B",
# fixed pairs ("on and off"), and anything in parentheses or quotes.
_UNITS = re.compile(
    rf"\b{_NUMBER_WORD}(?:,\s+{_NUMBER_WORD})*,?\s+(?:or|and|to|-)\s+{_NUMBER_WORD}\b"
    rf"|\b{_NUMBER_WORD}\s+or\s+(?:more|less|higher|lower|greater|fewer|above|below|over|under|so)\b"
    r"|\b(?:a|an|one)\s+[a-z]+\s+or\s+(?:two|so)\b"
    r"|\beither\b[^,;:()]{1,60}?\s+or\s+(?=\S)"
    r"|\bneither\b[^,;:()]{1,60}?\s+nor\s+(?=\S)"
    r"|\bwhether\b[^,;:()]{1,60}?\s+or\s+(?=\S)"
    r"|\bbetween\b[^,;:()]{1,40}?\s+and\s+(?=\S)"
    r"|\bboth\b[^,;:()]{1,40}?\s+and\s+(?=\S)"
    r"|\b(?:more\s+or\s+less|on\s+and\s+off|off\s+and\s+on|back\s+and\s+forth|up\s+and\s+down"
    r"|in\s+and\s+out|now\s+and\s+then|here\s+and\s+there|sooner\s+or\s+later|pros\s+and\s+cons"
    r"|over\s+and\s+over|as\s+well\s+as\s+possible)\b"
    r"|\([^()]*\)|\[[^\[\]]*\]|\"[^\"]*\"|“[^”]*”",
    re.IGNORECASE,
)
# Stands for a space inside a unit while a clause is cut into list pieces (not whitespace to
# str.split or to \s, unlike the ASCII separators).
_GLUE = "\ue000"
# A first "item" that says how often ("walks twice a week, swims, and bikes"): the list
# coordinates verbs, not objects.
_ADVERBIAL = re.compile(
    rf"(?:\b{_NUMBER_WORD}\b.*\btimes?\b|\b(?:once|twice|thrice|daily|weekly|monthly|every|each)\b)",
    re.IGNORECASE,
)
_LIST_SEP = re.compile(
    r",\s+(?:(?P<conj>and|or|as\s+well\s+as)\s+)?|\s+(?P<bare>and|or|as\s+well\s+as)\s+", re.IGNORECASE
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


def _plain(word: str) -> str:
    return word.strip(".,;:!?\"'()[]“”‘’").lower()


# Finite verbs beyond ``_VERB`` that tell a clause from a noun phrase ("the pain improved").
_MORE_VERBS = re.compile(
    r"\b(?:appears?|seems?|looks?|becomes?|became|occurs?|fell|falls|includes?|involves?|causes?"
    r"|indicates?|suggests?|requires?|helps?|works?|needs?|uses?|contains?|affects?|increases?"
    r"|decreases?|improves?|worsens?|goes|went|comes|came|gets|got|gave|gives|makes|made|says|said"
    r"|tells|told|knows|knew|wants|lives|walks|sleeps|drinks|smokes|eats|ate|hurts|radiates|develops"
    r"|experiences|undergoes|mentions|admits|avoids|attends|wears|describes|explains|notices|occur)\b",
    re.IGNORECASE,
)


def _has_verb(text: str) -> bool:
    """A finite verb somewhere in ``text`` (auxiliaries, common clinical verbs, "-ed" forms,
    "-s" forms after a pronoun): enough to tell a clause from a noun phrase."""
    return bool(
        _VERB_WORD.search(text)
        or _VERBISH.search(text)
        or _MORE_VERBS.search(text)
        or re.search(r"\b[a-z]{2,}ed\b", text, re.IGNORECASE)
        or re.search(r"\b(?:he|she|they|we|i|you|who)\s+(?:[a-z]+ly\s+)?[a-z]+\b", text, re.IGNORECASE)
        # "tendinitis often results from ...", "it comes in ..."
        or re.search(r"\b[a-z]{2,}[^su\W]s\s+(?:from|in|with|to|on|into)\b", text, re.IGNORECASE)
    )


def _glue_units(text: str) -> str:
    return _UNITS.sub(lambda m: m.group(0).replace(" ", _GLUE), text)


_SUBJECT_PRONOUNS = _words("he she they we you it")


def _is_pronoun(word: str) -> bool:
    """A subject pronoun ("I" only in capitals: "type i diabetes" has none)."""
    return _plain(word) in _SUBJECT_PRONOUNS or word.strip(".,;:!?\"'()") in ("I", "I'm", "I've")


_MID_ADVERBS = _words("also still now then often never just always")


# Verbs that start a verb phrase, rarely a noun ("..., perform an examination, and ...").
_ACTIONS = _words(
    """perform request obtain prescribe recommend continue consider discuss monitor schedule refer
    avoid take keep make apply seek maintain resume discontinue get give provide ensure encourage
    advise educate reduce"""
)
# A participle with its complement: a modifier, not a list item ("accompanied by fever").
_MODIFIER_CLAUSE = re.compile(r"\b(?:[a-z]+ed|made)\s+(?:by|with|to|from)\b", re.IGNORECASE)


def _is_item(piece: str) -> bool:
    """A short noun phrase that can stand for the whole list in the lead-in's place."""
    words = piece.split()
    spaced = piece.replace(_GLUE, " ")
    inner = re.search(r"\s(?:and|or)\s", spaced)  # "pain in his mouth and gums"
    if (
        not 1 <= len(words) <= (6 if inner else 5)
        or _VERBISH.search(spaced)
        or _VERB_WORD.search(spaced)
        or _MORE_VERBS.search(spaced)
        or any(_is_pronoun(w) for w in words)
        or _MODIFIER_CLAUSE.search(spaced)
    ):
        return False
    first, last = _plain(words[0].split(_GLUE)[0]), _plain(words[-1].split(_GLUE)[-1])
    label = words[-1].isupper()  # "Hepatitis A", "Vitamin D": a letter, not an article
    second = _plain(words[1]) if len(words) > 1 else ""
    return (
        first not in _NOT_ITEM_START
        and first not in _ACTIONS
        and not (first.endswith("ly") and second in _ACTIONS)  # "possibly request labs"
        and last not in _PREPOSITIONS - _PARTICLES
        and (last not in _DETERMINERS or label)
        and last not in _CONJUNCTIONS
        and bool(re.search(r"\w", piece))
    )


def _lead_cut(words: list[str], at_start: bool, others: list[str]) -> int:
    """How many words of a list's first piece are the shared lead-in (0: none).

    The lead-in ends after the last word that introduces a list ("including", "such as",
    "denies", "history of", "complaining of"), so that the first item keeps its own
    modifiers ("complaining of | blood in her urine, flank pain, and fever"), unless the
    items are body sites, which belong to the last preposition ("numbness in her | hands,
    feet, or face"). Otherwise it ends after the last verb, preposition or cue, with a
    determiner the items share ("in her | knees, hips, and shoulders") unless the other
    items have their own.
    """
    body_sites = all(_plain(o.split()[-1]) in BODY_SITES for o in others if o.split())
    for index in range(len(words) - 2, -1, -1):
        plain = _plain(words[index])
        previous = _plain(words[index - 1]) if index else ""
        introduces = (
            plain in _INTRODUCERS
            or (plain == "as" and previous == "such")
            or (plain in ("of", "for") and previous in _LIST_NOUNS)
            or plain in _CUE_VERBS
        )
        if introduces and not (body_sites and plain not in _INTRODUCERS):
            item = " ".join(words[index + 1 :])
            if len(words) - index - 1 <= 8 and _is_item(item):
                return index + 1
            break
    cut = 0
    after_subject = False  # the word follows a pronoun subject, adverbs aside: a verb
    for index, word in enumerate(words[:-1]):
        plain = _plain(word)
        adverb = plain.endswith("ly") or plain in _MID_ADVERBS
        previous = _plain(words[index - 1]) if index else ""
        if (
            plain in _LEADIN_WORDS
            or word.endswith(":")  # a label: "Medications: | lisinopril 20 mg, metformin ..."
            or (after_subject and not adverb)
            # a second verb with its own object: "is in 7th grade and plays | basketball, ..."
            or (
                previous in ("and", "or")
                and re.fullmatch(r"[a-z]{3,}(?:s|ed)", plain)
                and index < len(words) - 1
            )
            or _VERB_WORD.fullmatch(plain)
            or _VERBISH.fullmatch(plain)
            or (index == 0 and at_start and plain in _IMPERATIVES)
        ):
            cut = index + 1
        after_subject = _is_pronoun(word) or plain == "patient" or (after_subject and adverb)
    own = any(_plain(o.split()[0]) in _DISTRIBUTIVE | _DETERMINERS for o in others if o.split())
    while (
        cut
        and not own
        and cut < len(words) - 1
        and (_plain(words[cut]) in _DISTRIBUTIVE or words[cut].endswith("'s"))
    ):
        cut += 1
    return cut


def _split_list(clause: str) -> list[str]:
    """Expand a list of >= 3 short items at the end of a clause into one claim per item, each
    keeping the shared words before the list (else the clause itself).

    The list is "A, B, and C" (or "A, B, C"): only its last separator may be a conjunction,
    every item after the first is a short noun phrase (no verb, not opening with a preposition
    or a conjunction), and the first piece splits into a lead-in ending in a verb, a
    preposition or a cue ("denies", "history of") and the first item. Coordinations that are
    one unit ("once or twice", "between 5 and 10 mg", "either X or Y") are never cut, and a
    list of describing words sharing one noun ("renal, hepatic, and cardiac disease") stays
    whole.
    """
    body = clause.rstrip(" .!?")
    if re.search(r"\d,\d", body):
        return [clause]
    glued = _glue_units(body)
    separators = list(_LIST_SEP.finditer(glued))
    # The list's own conjunction is its last ", and" ("A, B, and C"), else its last bare "and"
    # ("A, B and C"); any other bare "and" is inside an item ("dry mouth and eyes").
    with_comma = [m for m in separators if m.group("conj")]
    final = with_comma[-1] if with_comma else next((m for m in reversed(separators) if m.group("bare")), None)
    separators = [m for m in separators if not m.group("bare") or m is final]
    pieces: list[str] = []
    conjunction: list[bool] = []  # conjunction[i]: the separator after pieces[i] is "and"/"or"
    position = 0
    for match in separators:
        pieces.append(glued[position : match.start()])
        conjunction.append(bool(match.group("conj") or match.group("bare")))
        position = match.end()
    pieces.append(glued[position:])
    last = len(pieces) - 1
    if last < 2:
        return [clause]
    # The list's first piece: go back from the end over comma separators.
    first = last - 1
    while first > 0 and not conjunction[first - 1]:
        first -= 1
    repeated = _repeated_preposition(pieces[first:])
    if repeated:
        # "refer you to physical therapy, to cardiology, and to neurology"
        words = pieces[first].split()
        cut = max(i for i, w in enumerate(words) if _plain(w) == repeated)
        items = [" ".join(words[cut:]), *pieces[first + 1 :]]
        prefix = glued[: _piece_start(glued, pieces, first)]
        lead = f"{prefix}{' '.join(words[:cut])}".strip()
        return [f"{lead} {item}".strip().replace(_GLUE, " ") for item in items]
    # Every later piece must be an item; a piece that is not one opens the list instead.
    for index in range(last, first, -1):
        if not _is_item(pieces[index]):
            first = index
            break
    items = pieces[first + 1 :]
    if len(items) < 2:
        return [clause]
    words = pieces[first].split()
    cut = _lead_cut(words, at_start=first == 0, others=items)
    if cut == 0 and first > 0 and conjunction[first - 1]:
        return [clause]  # "X and Y, Z, and W": what Y belongs to is unclear
    lead, first_item = " ".join(words[:cut]), " ".join(words[cut:])
    if not _is_item(first_item) or _ADVERBIAL.match(first_item.replace(_GLUE, " ")):
        return [clause]
    if _ADVERBIAL.search(first_item.replace(_GLUE, " ")) and not any(
        re.search(r"\d", i) or _ADVERBIAL.search(i.replace(_GLUE, " ")) for i in items
    ):
        return [clause]  # "walks his dog once or twice a day, swims, and bikes": verbs, not things
    all_items = [first_item, *items]
    # Describing words before the last item's noun ("renal, hepatic, and cardiac disease",
    # "serotonin syndrome, a serious and life-threatening condition") are no list of things,
    # unless they are what a copula says ("the pupils are equal, round, and reactive").
    predicative = cut > 1 and _plain(words[cut - 1]) in _COPULAS and _plain(words[cut - 2]) != "there"
    describing = any(_ADJECTIVAL.search(_plain(i.split()[-1])) for i in all_items[:-1])
    if describing and not predicative and len(all_items[-1].split()) > 1:
        return [clause]
    if (
        not conjunction[-1]
        and len(all_items[-1].split()) > 1
        and all(len(i.split()) <= 2 and not re.search(r"\d", i) for i in all_items[:-1])
    ):
        return [clause]  # "multiple pinpoint, red, nonblanching spots": describing words, no list
    gerunds = sum(bool(_GERUND_PHRASE.match(i)) for i in items)
    if not _GERUND_PHRASE.match(first_item) and gerunds >= max(2, len(items) / 2):
        return [clause]  # "mimics the action of X, enhancing insulin release, ...": not parallel
    start = _piece_start(glued, pieces, first)
    prefix = glued[:start]
    if first > 0 and conjunction[first - 1]:
        # The first piece also ends an earlier list ("reveals edema, erythema, and petechiae
        # over the face, neck, and arms"): expand that one too, with this one in its last item.
        earlier = _split_list(glued[: start + len(pieces[first])].replace(_GLUE, " "))
        tail = " ".join(words[cut:]).replace(_GLUE, " ")
        if len(earlier) > 1 and earlier[-1].endswith(tail):
            base = earlier[-1][: len(earlier[-1]) - len(tail)]
            return [*earlier[:-1], *(f"{base}{item}".replace(_GLUE, " ") for item in all_items)]
    lead = f"{prefix}{lead}".strip()
    return [f"{lead} {item}".strip().replace(_GLUE, " ") for item in all_items]


def _repeated_preposition(pieces: list[str]) -> str | None:
    """The preposition every item repeats ("to X, to Y, and to Z"), if the first piece has it
    after some lead-in and every item is a noun phrase after it."""
    later = pieces[1:]
    heads = {_plain(p.split()[0]) for p in later if p.split()}
    if len(later) < 2 or len(heads) != 1:
        return None
    (head,) = heads
    words = pieces[0].split()
    if head not in _PREPOSITIONS or head not in [_plain(w) for w in words[1:-1]]:
        return None
    cut = max(i for i, w in enumerate(words) if _plain(w) == head)
    rests = [" ".join(words[cut + 1 :]), *(p.split(None, 1)[1] if len(p.split()) > 1 else "" for p in later)]
    return head if all(_is_item(r) for r in rests) else None


def _piece_start(text: str, pieces: list[str], index: int) -> int:
    """Offset of ``pieces[index]`` in ``text`` (pieces are consecutive, separators between)."""
    position = 0
    for i, piece in enumerate(pieces):
        position = text.index(piece, position)
        if i == index:
            return position
        position += len(piece)
    return position


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


def _split_clauses(text: str) -> list[str]:
    """Cut ``text`` at ";" and between coordinated clauses (see ``_CLAUSE_SPLIT``)."""
    clauses: list[str] = []
    start = 0
    for match in _CLAUSE_SPLIT.finditer(text):
        left = text[start : match.start()]
        if not match.group("semicolon") and not _has_verb(left):
            # "His father and his brother have ...": one subject, not two clauses;
            # "For both conditions, however, there are ...": no clause before it.
            continue
        clauses.append(left)
        start = match.end()
    clauses.append(text[start:])
    return [c.strip() for c in clauses if c.strip(" ,;.")]


# Words a split may drop: connectives between the clauses it separates, and function words
# ("with" and "who" of a demographic opener). Every other word must stay in some claim.
_DROPPABLE = _words(
    """and or so yet but however although though whereas then therefore thus also who which that
    with a an the is was has had have are were be"""
)


def _ends_clause(word: str, text: str, after: str) -> bool:
    """``word`` ends ``text`` or stands right before ``after`` in it ("travel with and ...")."""
    return bool(re.search(rf"\b{re.escape(word)}\s*(?:{after}|$)", text, re.IGNORECASE))


def _sound(claims: list[str], text: str) -> bool:
    """No claim ends in a preposition, determiner or conjunction that ``text`` does not end a
    clause with, none opens with "and"/"or", and every word of ``text`` but connectives and
    function words is in some claim."""
    if not claims:
        return False
    for claim in claims:
        words = [w for w in (_plain(w) for w in claim.split()) if w]
        if not words:
            return False
        last = words[-1]
        label = claim.split()[-1].strip(".,;:!?\"'()[]").isupper()  # "Hepatitis A", "(Image A)"
        dangling = (
            (
                last in _PREPOSITIONS - _PARTICLES
                and not _ends_clause(last, text, r"[.;:!?,]|and\b|but\b|or\b")
            )
            or (last in _DETERMINERS and not label and not _ends_clause(last, text, r"[.;:!?,]"))
            or (last in _CONJUNCTIONS and not _ends_clause(last, text, r"[.;:!?]"))
        )
        if dangling:
            return False
        if words[0] in ("and", "or", "nor") and _plain(text.split()[0]) != words[0]:
            return False
    said = {w for claim in claims for w in re.findall(r"[^\W_]+", claim.lower())}
    words = re.findall(r"[^\W_]+", re.sub(r"\bas\s+well\s+as\b", " ", text.lower()))
    return all(w in said or w in _DROPPABLE for w in words)


def _claims_of(text: str, expand_lists: bool) -> list[str]:
    pieces = _split_demographics(text)
    clauses = [c for piece in pieces for c in _split_clauses(piece)]
    # A clause with an elided subject ("..., but reports a cough") borrows the first one's.
    opening = _OPENING_SUBJECT.match(clauses[0]) if clauses else None
    elided = [
        i for i, c in enumerate(clauses) if i and _OPENING_VERB.match(c) and not _OPENING_SUBJECT.match(c)
    ]
    if elided and not opening:
        return []  # no subject to lend ("..., but can also last longer"): not a sound split
    if opening:
        subject = opening.group("subject")
        clauses = [f"{subject} {c}" if i in elided else c for i, c in enumerate(clauses)]
    claims: list[str] = []
    for clause in clauses:
        for claim in _split_list(clause.strip()) if expand_lists else [clause.strip()]:
            finished = _finish(claim)
            if re.search(r"[^\W_]", finished):
                claims.append(finished)
    return claims


@lru_cache(maxsize=8192)
def _claims_cached(sentence: str) -> tuple[str, ...]:
    text = strip_label(sentence.strip())
    if not re.search(r"[^\W_]", text):
        return ()
    # The finest split whose claims are sound; the sentence itself when none is.
    for expand_lists in (True, False):
        claims = _claims_of(text, expand_lists)
        if _sound(claims, text):
            return tuple(claims)
    return (_finish(text),)


def split_claims(sentence: str) -> list[str]:
    """Atomic claims of one sentence, in order (the sentence itself when nothing splits)."""
    return list(_claims_cached(sentence))
