"""Text normalisation, tokens, light stemming and content terms for lexical matching.

:func:`normalize` lower-cases a text and rewrites it into one vocabulary: contractions
("doesn't" -> "does not"), number words ("two" -> "2"), and the clinical synonyms and
abbreviations of :data:`clinical.lexicon.SYNONYMS` ("SOB" and "shortness of breath" ->
"dyspnea", "Lexapro" -> "escitalopram", "b.i.d." -> "twice_daily"). Multi-word concepts
become one token joined by underscores, so they match as a unit.

:func:`stem` is a small suffix stripper (plural, -ing, -ed, -ly, final -e), and
:func:`terms_match` also accepts two stems when one is a short extension of the other
("diabet"/"diabetic"), which is enough for the morphology of clinical English.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from clineval.nlp import vocabulary
from clineval.nlp.lexicon import (
    ABBREVIATIONS,
    DRUG_CLASS_WORDS,
    DRUG_ROLE,
    ENDOGENOUS_SUBSTANCES,
    LOW_WEIGHT_WORDS,
    NUMBER_WORDS,
    ORGANISMS,
    STOPWORDS,
    SYNONYMS,
)

__all__ = [
    "Token",
    "content_stems",
    "expand_abbreviations",
    "normalize",
    "stem",
    "term_covers",
    "terms_match",
    "tokenize",
]

_CONTRACTIONS = [
    (r"\bcan't\b|\bcannot\b", "can not"),
    (r"\bwon't\b", "will not"),
    (r"\bshan't\b", "shall not"),
    (r"\b(\w+)n't\b", r"\1 not"),
    (r"\b(\w+)'re\b", r"\1 are"),
    (r"\b(\w+)'ve\b", r"\1 have"),
    (r"\b(\w+)'ll\b", r"\1 will"),
    (r"\b(\w+)'d\b", r"\1 would"),
    (r"\bi'm\b", "i am"),
    (r"\b(he|she|it|that|there|what)'s\b", r"\1 is"),
    (r"(\w)'s\b", r"\1"),
]
_CONTRACTION_RES = [(re.compile(p), r) for p, r in _CONTRACTIONS]


_PREFIX_HYPHEN = re.compile(
    r"\b(anti|non|pre|post|re|co|sub|over|under|hyper|hypo|multi|inter|intra|extra|peri|trans)-(?=[a-z]{4})"
)
_SHORT_AFTER_PREFIX = re.compile(r"\b(anti|non|pre|post|sub|peri)-(?=[a-z]{1,3}\b)")
_WORD_HYPHEN = re.compile(r"(?<=[a-z]{2})-(?=[a-z]{2})")
# A hyphenated word broken by a line end or a copy ("flu- like"), but not a shared prefix
# ("pre- and post-operative").
_BROKEN_HYPHEN = re.compile(r"(?<=[a-z]{2})- (?!(?:and|or|to|nor)\b)(?=[a-z]{2})")


# A symbol ending in a digit before a describing word ("HER2-negative", "BRCA1-mutated",
# "V600E-mutant", "CD20-positive"): two words, as "ER-positive" is.
_SYMBOL_HYPHEN = re.compile(r"\b([a-z]+\d+[a-z]?)-(?=[a-z]{3})")


def _dehyphenate(text: str) -> str:
    """ "anti-depressants" -> "antidepressants", "left-sided" -> "left sided",
    "her2-negative" -> "her2 negative"."""
    text = _SHORT_AFTER_PREFIX.sub(r"\1 ", _BROKEN_HYPHEN.sub("-", text))  # "post-MI": post MI
    text = _SYMBOL_HYPHEN.sub(r"\1 ", text)
    return _WORD_HYPHEN.sub(" ", _PREFIX_HYPHEN.sub(r"\1", text))


def _synonym_regex() -> tuple[re.Pattern[str], dict[str, str]]:
    table: dict[str, str] = {}
    for canonical, variants in SYNONYMS.items():
        for variant in (*variants, canonical.replace("_", " ")):
            key = _dehyphenate(variant.lower())
            if key != canonical and key not in table:
                table[key] = canonical
    alternatives = sorted(table, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(a) for a in alternatives) + r")(?![\w-])")
    return pattern, table


_SYNONYM_RE, _SYNONYM_TABLE = _synonym_regex()


_SPELLED_OUT = {
    "pmh": "past medical history",
    "hx": "history",
    "h/o": "history of",
    "cxr": "chest x-ray",
    "pt": "patient",
    "sob": "shortness of breath",
    "dm": "diabetes mellitus",
}


def _abbreviation_regex() -> tuple[re.Pattern[str], dict[str, str]]:
    table: dict[str, str] = dict(_SPELLED_OUT)
    for canonical, variants in SYNONYMS.items():
        phrases = [v for v in variants if " " in v]
        if canonical in ABBREVIATIONS:
            expansion = max(phrases, key=len) if phrases else canonical
            table.setdefault(canonical, expansion)
        else:
            expansion = canonical.replace("_", " ")
        for variant in variants:
            if variant in ABBREVIATIONS:
                table.setdefault(variant, expansion)
    alternatives = sorted(table, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![\w-])(?:" + "|".join(re.escape(a) for a in alternatives) + r")(?![\w-])", re.IGNORECASE
    )
    return pattern, table


# Abbreviations that are only safe to expand in capitals ("ER" but not "er").
_CASED = {
    "ER": "emergency department",
    "ED": "emergency department",
    "UA": "urinalysis",
    # note shorthand that is a word in lower case
    "HA": "headache",
    "DOE": "dyspnea on exertion",
    "DES": "drug eluting stent",
    "SL": "sublingual",
    "LE": "lower extremity",
    "LEs": "lower extremities",
    "BLE": "bilateral lower extremities",
    "UE": "upper extremity",
}
_CASED_RE = re.compile(r"\b(?:" + "|".join(_CASED) + r")\b")
# "ER" and "PR" are the oestrogen and progesterone receptors when a receptor status, a
# percentage or the other receptor is next to them ("ER positive", "ER+/PR-", "ER/PR
# positive", "ER 90%", "ER and PR were negative", "HER2-negative, ER-positive"); elsewhere
# "ER" is the emergency room and "PR" is left alone (the PR interval, per rectum). They
# are spelled out first, so the emergency room's rewrite never meets them.
_RECEPTORS = {"er": "estrogen receptor", "pr": "progesterone receptor"}
_RECEPTOR_RE = re.compile(
    r"\b(ER|PR)\b(?=\)?"
    r"\s*[-:]?\s*\(?\s*(?:(?:is|was|were|are)\s+)?(?:strongly\s+|weakly\s+|focally\s+|low\s+)?"
    r"(?:positive|negative|pos\b|neg\b|status(?!\s+post)|expression|staining|allred|[0-3]\+|\d{1,3}\s*%)"
    r"|\s*(?:[/,&]|\band\b)\s*(?:ER|PR|HER-?2|estrogen|progesterone)\b)",
    re.IGNORECASE,
)
# A bare sign only in capitals ("ER+/PR-"): "pr-" in speech is a false start.
_RECEPTOR_SIGN_RE = re.compile(r"\b(ER|PR)(?=\s*[+-](?![\w]))")
# The other receptor of a pair already spelled out ("ER and PR were both negative").
_RECEPTOR_PAIR_RE = re.compile(r"(receptors?[+-]?\s*(?:[/,&]|\band\b|\bor\b)\s*)\b(ER|PR)\b", re.IGNORECASE)


def _spell_out_receptors(text: str) -> str:
    text = _RECEPTOR_SIGN_RE.sub(lambda m: _RECEPTORS[m.group(1).lower()], text)
    text = _RECEPTOR_RE.sub(lambda m: _RECEPTORS[m.group(1).lower()], text)
    return _RECEPTOR_PAIR_RE.sub(lambda m: m.group(1) + _RECEPTORS[m.group(2).lower()], text)


_ABBREVIATION_RE, _ABBREVIATION_TABLE = _abbreviation_regex()


@lru_cache(maxsize=32768)
def expand_abbreviations(text: str) -> str:
    """``text`` with clinical abbreviations spelled out ("HTN" -> "hypertension", "NPO" ->
    "nothing by mouth"), for the embedding model, which does not know most of them."""
    text = _spell_out_receptors(text)
    if re.search(r"[a-z]", text):
        text = _CASED_RE.sub(lambda m: _CASED[m.group(0)], text)
    return _ABBREVIATION_RE.sub(lambda m: _ABBREVIATION_TABLE[m.group(0).lower()], text)


# "one" and "half" are numbers only before a unit ("one tablet", "half a day"), not in
# "the one that", "one of them", "no one".
_UNIT_AHEAD = (
    r"(?=[\s-]+(?:a\s+|an\s+)?(?:tablets?|pills?|capsules?|doses?|drops?|puffs?|units?|mg|mcg|g|ml|times?|days?|weeks?"
    r"|months?|years?|hours?|minutes?|nights?|dose|episodes?|servings?|drinks?|cigarettes?|packs?)\b)"
)
_NUMBER_WORD_RE = re.compile(
    r"\b(?:(one|half)"
    + _UNIT_AHEAD
    + "|("
    + "|".join(w for w in NUMBER_WORDS if w not in ("one", "half"))
    + r"))\b"
)
_DIGIT_GROUP_RE = re.compile(r"(?<=\d),(?=\d{3}\b)")
_OVER_RE = re.compile(r"(\d{2,3})\s+over\s+(\d{2,3})")
# "stage IIIb", "grade II", "type I", "class IV", "NYHA III": Roman numerals after a
# staging word; and a range of them ("class II-III", its hyphen already a space; "grade
# III/VI").
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6"}
_ROMAN_RE = re.compile(
    r"\b(?P<word>stage|grade|type|class|phase|tier|level|gold|nyha class|nyha|figo stage|cin|lesion grade)\s+"
    r"(?P<first>vi|iv|v|iii|ii|i)(?P<sub>[abc])?"
    # a range: "ii-iii" (already "ii iii": a hyphen between letters is a space), "iii/vi", "ii to iii"
    r"(?:(?P<joint>\s*(?:-|/|to)\s*)(?P<second>vi|iv|v|iii|ii|i)(?P<sub2>[abc])?|\s(?P<spaced>vi|iv|iii|ii)(?P<sub3>[abc])?\b)?\b"
)


def _arabic_numerals(match: re.Match[str]) -> str:
    out = f"{match.group('word')} {_ROMAN[match.group('first')]}{match.group('sub') or ''}"
    if match.group("second"):
        joint = "/" if "/" in match.group("joint") else "-"
        out += f"{joint}{_ROMAN[match.group('second')]}{match.group('sub2') or ''}"
    elif match.group("spaced") and len(match.group("first")) > 1:
        out += f"-{_ROMAN[match.group('spaced')]}{match.group('sub3') or ''}"
    elif match.group("spaced"):
        out += f" {match.group('spaced')}{match.group('sub3') or ''}"
    return out


# A genus and its species ("klebsiella pneumoniae") are one organism: one term, so the
# species is never read as a word of its own ("pneumoniae" as pneumonia) and another
# species of the genus is another organism. The species is a rare Latin word.
_GENERA = sorted((g for g in ORGANISMS if "_" not in g and len(g) >= 5), key=len, reverse=True)
_BINOMIAL_RE = re.compile(
    r"\b(" + "|".join(_GENERA) + r")"
    r" ([a-z]{2,}(?:ae|us|is|um|ii|i|a|es|ens|ans|ica|ix|ax))\b"
)


def _join_binomial(match: re.Match[str]) -> str:
    from wordfreq import zipf_frequency

    genus, species = match.group(1), match.group(2)
    genus = {"strep": "streptococcus", "staph": "staphylococcus"}.get(genus, genus)
    if len(species) < 4 or species in STOPWORDS or zipf_frequency(species, "en") >= 3.0:
        return match.group(0)
    return f"{genus}_{species}"


# "seizure-free", "pain free": none of it.
_FREE_OF_RE = re.compile(
    r"\b(pain|seizure|symptom|disease|recurrence|relapse|fever|tumou?r|cancer|smoke|tobacco|alcohol|drug)"
    r"(?:-| )free\b"
)
# "45 yo F": the sex after an age.
_AGE_SEX_RE = re.compile(r"\b(\d{1,3}[- ]?(?:yo|y/o|y\.o\.|year[- ]old|yr[- ]old))\s+([mf])\b")
# "34F presenting with ...", "67M with ...": at the start of a note or after a heading.
_AGE_SEX_SHORT_RE = re.compile(
    r"(^|:\s*)(\d{1,3})\s?([mf])(?=\s+(?:with|presents|presenting|who|c/o|s/p|h/o|hx)\b)"
)


_THOUSANDS_RE = re.compile(r"\b(\d{1,3}(?:\.\d)?)k\b")


@lru_cache(maxsize=32768)
def normalize(text: str) -> str:
    """Lower-cased text in the shared matching vocabulary (see the module docstring)."""
    t = _spell_out_receptors(text)
    t = _CASED_RE.sub(lambda m: _CASED[m.group(0)], t) if re.search(r"[a-z]", t) else t
    t = t.lower().replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    t = (
        t.replace("–", "-")
        .replace("—", " - ")
        .replace("µg", "mcg")
        .replace("μg", "mcg")
        .replace("°", " degrees ")
    )
    for pattern, repl in _CONTRACTION_RES:
        t = pattern.sub(repl, t)
    t = _DIGIT_GROUP_RE.sub("", t)
    t = _THOUSANDS_RE.sub(lambda m: f"{float(m.group(1)) * 1000:g}", t)  # "plt 45k": 45000
    t = _dehyphenate(t)
    t = _NUMBER_WORD_RE.sub(lambda m: NUMBER_WORDS[m.group(1) or m.group(2)], t)
    t = _OVER_RE.sub(r"\1/\2", t)
    t = _ROMAN_RE.sub(_arabic_numerals, t)
    t = _SYNONYM_RE.sub(lambda m: _SYNONYM_TABLE[m.group(0)], t)
    t = _generic_drug_names(t)
    t = _BINOMIAL_RE.sub(_join_binomial, t)
    t = _FREE_OF_RE.sub(r"no \1", t)
    t = _AGE_SEX_SHORT_RE.sub(
        lambda m: f"{m.group(1)}{m.group(2)} year old {'male' if m.group(3) == 'm' else 'female'}", t
    )
    t = _AGE_SEX_RE.sub(lambda m: f"{m.group(1)} {'male' if m.group(2) == 'm' else 'female'}", t)
    return re.sub(r"\s+", " ", t).strip()


_GENERIC = re.compile(r"[a-z][a-z0-9]*")
_KNOWN_DRUG_WORDS = frozenset(SYNONYMS) | frozenset(DRUG_ROLE) | DRUG_CLASS_WORDS


def _generic_drug_names(text: str) -> str:
    """Brand names and other names of a drug, as the clinical vocabulary's drug dictionary
    knows them, become the drug's generic name ("Eliquis" -> "apixaban", "Zoloft" ->
    "sertraline"); a drug of one word only (combinations and classes keep their words)."""
    try:
        found = vocabulary.mentions(text)
    except vocabulary.VocabularyMissing:
        return text
    parts: list[str] = []
    last = 0
    for m in found:
        if m.type != "drug" or len(m.concepts) != 1 or not m.concepts[0].startswith("DRUG:"):
            continue
        generic = m.concepts[0][5:]
        surface = m.surface.lower()
        if (
            not _GENERIC.fullmatch(generic)
            or " " in surface  # one word only: "vitamin D" is a lab test as often as a drug
            or surface in _KNOWN_DRUG_WORDS  # already the lexicon's word (a class, a role)
            or surface in ENDOGENOUS_SUBSTANCES  # measured in the blood: "cortisol" is not hydrocortisone
            or stem(surface) == stem(generic)
        ):
            continue
        parts += [text[last : m.start], generic]
        last = m.end
    return "".join(parts) + text[last:] if parts else text


@dataclass(frozen=True)
class Token:
    """One token of a normalised text: its form, its stem, and where it starts."""

    text: str
    stem: str
    start: int
    kind: str
    """``word``, ``number`` or ``punct``."""


_TOKEN_RE = re.compile(
    r"(?P<number>\d+(?:\.\d+)?(?:/\d+(?:\.\d+)?)*)"
    r"|(?P<word>[a-z][a-z0-9_]*(?:[-'][a-z0-9_]+)*)"
    r"|(?P<punct>[;:,.!?()%])"
)


def _undouble(word: str) -> str:
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        return word[:-1]
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light stem: enough to meet "coughing"/"cough", "diabetes"/"diabetic", "tests"/"test"."""
    if "_" in word or len(word) <= 3 or not word.isalpha():
        return word
    w = word
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses") or w.endswith(("xes", "ches", "shes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is", "ous")) and len(w) > 3:
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5:
        w = _undouble(w[:-3])
    elif w.endswith("edly") and len(w) > 6:
        w = _undouble(w[:-4])
    elif w.endswith("ed") and len(w) > 4 and not w.endswith("eed"):  # "bleed", "exceed" keep theirs
        w = _undouble(w[:-2])
    elif w.endswith("ly") and len(w) > 5:
        w = w[:-2]
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


def tokenize(normalized: str) -> list[Token]:
    """Tokens of an already :func:`normalize`-d text."""
    out: list[Token] = []
    for match in _TOKEN_RE.finditer(normalized):
        kind = match.lastgroup or "punct"
        text = match.group(0)
        out.append(Token(text, stem(text) if kind == "word" else text, match.start(), kind))
    return out


_STOP_STEMS = frozenset(stem(w) for w in STOPWORDS) | STOPWORDS
_LOW_STEMS = frozenset(stem(w) for w in LOW_WEIGHT_WORDS) | LOW_WEIGHT_WORDS


def is_stopword(token: Token) -> bool:
    return token.text in STOPWORDS or token.stem in _STOP_STEMS or len(token.text) < 2


def term_weight(term: str) -> float:
    """Generic clinical words ("continue", "levels", "mild") count half."""
    return 0.5 if term in _LOW_STEMS else 1.0


def term_covers(claim_term: str, other: str) -> bool:
    """Does ``other`` (a term of the evidence) say what ``claim_term`` says? Like
    :func:`terms_match`, and a part of a compound concept is covered by the compound
    ("diabetes" by "type_2_diabetes", "pain" by "chest_pain"), not the other way round."""
    if terms_match(claim_term, other):
        return True
    if "_" in other and "_" not in claim_term:
        parts = other.split("_")
        if parts[0] in ORGANISMS:
            return terms_match(claim_term, parts[0])  # the genus, never the species ("pneumoniae")
        return any(terms_match(claim_term, stem(part)) for part in parts if len(part) > 2)
    return False


def content_stems(text: str) -> list[str]:
    """Stems of the content words of ``text`` (stopwords and punctuation dropped), in order."""
    return [t.stem for t in tokenize(normalize(text)) if t.kind == "word" and not is_stopword(t)]


# Endings that make another form of the same word ("diabet"/"diabetic", "infect"/
# "infection"). A longer ending that is not one of them makes a compound ("mouth" /
# "mouthwash"), and "-less" says the opposite ("pain" / "painless").
_SUFFIXES = frozenset(
    re.findall(
        r"\w+",
        """ing ion ions ate ated ates ant ants ent ents ness ism ist ists ive ian ians ine ize ise
        ized ised able ibl ible ary ory ery ics ical ally ment ity ous ial ier iest est ers ors ful
        ular oid itis osis emia ogy ance ence ency ancy ify ied ies eal ual ted ting tion ator
        ener ened ings ning""",
    )
)


def _is_suffix(ending: str) -> bool:
    if ending.startswith("less"):
        return False
    return len(ending) < 3 or ending in _SUFFIXES


@lru_cache(maxsize=262144)
def terms_match(a: str, b: str) -> bool:
    """Same stem, or one stem a short extension of the other ("diabet"/"diabetic")."""
    if a == b:
        return True
    if "_" in a or "_" in b:
        return False
    # "antidepressant"/"depression", "antihypertensive"/"hypertension": anti-X is about X.
    if a.startswith("anti") and len(a) > 8 and not b.startswith("anti"):
        return terms_match(a[4:], b)
    if b.startswith("anti") and len(b) > 8 and not a.startswith("anti"):
        return terms_match(a, b[4:])
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) >= 4 and long_.startswith(short) and len(long_) - len(short) <= 4:
        return _is_suffix(long_[len(short) :])
    # Shared stem with different endings: "hypertensive"/"hypertension".
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= 7 and common >= 0.7 * len(short)
