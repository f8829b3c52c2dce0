"""Invariants every claim of :func:`clineval.nlp.sentences.split_claims` must satisfy.

A checker written apart from the splitter, so that the tests do not grade the splitter with
its own rules. For a sentence and the claims split from it, :func:`violations` lists every
breach of:

* ``dangling end``: a claim ends in a preposition, a determiner or a conjunction that the
  sentence does not end a clause with ("She was sent to.", "He takes either.");
* ``broken join``: words the splitter put next to each other that leave a preposition or a
  determiner without its object ("sent to but only once", "sent to twice", "of and", "The
  has not been");
* ``dangling start``: a claim starts with "and", "or" or "nor" that the sentence does not
  start with ("Or twice.");
* ``lost correlative``: "either", "neither", "between" or "both ... and" of the sentence
  kept without its partner ("She uses either albuterol.");
* ``lost verb``: the sentence (each of its ";" parts) has a verb and the claim has none
  ("Twice a week.");
* ``lost word``: a content word of the sentence appears in no claim (a split must be
  reversible in that sense; an organising label such as "Medical Reasoning:" is the one
  thing a splitter may drop).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from clineval.nlp.sentences import strip_label


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


PREPOSITIONS = _set(
    """about above across after against among at before behind below beneath beside besides
    between beyond by despite during except for from in inside into like near of on onto
    outside per since than throughout to toward towards under until upon via with within without
    """
)
# Words that often end a clause as particles or adverbs ("follow up", "rule out", "seen before").
PARTICLES = _set(
    """up down out off over around along through back away in on by before after since behind below
    above beyond inside outside besides throughout underneath"""
)
DETERMINERS = _set("a an the my your our their its his every no either neither")
CONJUNCTIONS = _set("and or nor but yet whereas although though because if whether while")
FREQUENCY_ADVERBS = _set("once twice thrice")
# Prepositions that legitimately follow another ("because of", "out of", "up to", "as of").
COMPOUND_PREPOSITIONS = frozenset(
    {
        ("because", "of"),
        ("instead", "of"),
        ("out", "of"),
        ("up", "to"),
        ("due", "to"),
        ("prior", "to"),
        ("according", "to"),
        ("next", "to"),
        ("as", "of"),
        ("as", "to"),
        ("from", "behind"),
        ("in", "between"),
        ("from", "about"),
        ("for", "about"),
        ("to", "about"),
        ("at", "about"),
        ("since", "about"),
        ("until", "about"),
        ("of", "about"),
        ("in", "about"),
    }
)
# Correlative pairs and how far apart they stand ("between 5 and 10 mg", "both A and B").
CORRELATIVES = (("either", "or", 6), ("neither", "nor", 6), ("between", "and", 4), ("both", "and", 2))
STOPWORDS = _set(
    """a an the and or nor but yet so of to in on at by for with from as is are was were be been being
    am has have had do does did will would shall should can could may might must this that these those
    it its he she they we i you his her their our your my me him them us there here which who whom
    whose what when where why how than then also not no any some all both either neither each every
    however although though whereas therefore thus
    about into over under up down out off per via very just only too such own same other"""
)
AUXILIARIES = _set(
    """is are was were be been am has have had do does did will would shall should can could may
    might must"""
)
# Finite verb forms that are rarely anything else (not "left", "set", "cut", "plans", "notes").
FINITE_VERBS = _set(
    """took felt got went came saw gave began ran fell ate made said told kept sent found brought
    thought underwent broke woke drank slept lost held heard knew showed stood wore grew spent paid
    understood drove denies reports endorses complains presents reveals demonstrates continues
    remains recommends agrees appears seems suggests includes recalls undergoes takes feels gets goes
    comes sees gives begins runs falls eats makes says tells keeps sends finds brings thinks hurts
    wakes drinks sleeps loses holds hears knows shows stands lies swallows wants describes develops
    smokes lives walks tries likes worsens improves radiates occurs causes treats affects considers
    advises encourages discusses admits avoids works uses needs wants"""
)
# Base forms that start an instruction ("Schedule an MRI.", "Continue lisinopril.").
IMPERATIVES = _set(
    """take continue start stop schedule follow return call avoid use increase decrease apply hold
    check monitor obtain order refer consider discuss recommend encourage advise begin resume
    discontinue maintain keep try drink eat rest elevate wear seek see get make go come let please
    limit reduce add switch change repeat perform send"""
)
# Forms taken as verbs in a claim only (see ``has_verb``).
LENIENT_VERBS = _set(
    """attends confirms occur occurs became become becomes died put want result results mentions notes"""
)
SUBJECT_PRONOUNS = _set("he she they we i you it patient pt who which that")
# Adverbs that may stand between a subject and its verb ("the patient also notes").
MID_ADVERBS = _set("also still now then first often usually never just recently previously currently")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?|[.,;:!?]")


def words(text: str) -> list[str]:
    """Lower-cased words and punctuation marks of ``text``."""
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w[0].isalnum() and w not in STOPWORDS and not re.fullmatch(r"[a-z]", w)]


def has_verb(text: str, *, lenient: bool = False) -> bool:
    """A finite verb, judged without a tagger: auxiliaries and modals (also in "doesn't",
    "he's"), unambiguous finite forms ("took", "denies"), a word in -ed or -s right after a
    subject pronoun ("she reported", "he works") or -ed at the start ("Discussed ..."), and an
    instruction verb at the start ("Schedule ..."). A participle in a list of findings ("S2
    preserved") is no verb. ``lenient`` also takes any word in -ed ("the pain increased"):
    claims are checked leniently against sentences checked strictly, so that a verb the
    detector is unsure of never counts against the splitter; so does a word in -s after an
    adverb in -ly ("typically lasts")."""
    tokens = [w for w in words(strip_label(text)) if w[0].isalnum()]
    for i, w in enumerate(tokens):
        previous = tokens[i - 1] if i else ""
        if (previous in MID_ADVERBS or (lenient and previous.endswith("ly"))) and i >= 2:
            previous = tokens[i - 2]
        if (
            lenient
            and previous in SUBJECT_PRONOUNS
            and previous not in {"that", "which"}
            and w not in STOPWORDS
        ):
            return True
        if w in AUXILIARIES or w in FINITE_VERBS or w.endswith("n't") or (lenient and w in LENIENT_VERBS):
            return True
        if w in {"he's", "she's", "it's", "that's", "there's", "i'm", "they're", "we're", "you're"}:
            return True
        if (
            w.endswith("ed")
            and len(w) >= (4 if lenient else 5)
            and (lenient or i == 0 or previous in SUBJECT_PRONOUNS)
        ):
            return True
        if (
            previous in SUBJECT_PRONOUNS
            and w.endswith("s")
            and not w.endswith(("ss", "us", "is"))
            and len(w) >= 4
        ):
            return True
        if (
            lenient
            and i >= 2
            and tokens[i - 1].endswith("ly")
            and w.endswith("s")
            and not w.endswith(("ss", "us", "is"))
            and len(w) >= 4
        ):
            return True  # "a migraine attack typically lasts"
        if i == 0 and w in IMPERATIVES:
            return True
    return False


def _bigrams(tokens: Sequence[str]) -> set[tuple[str, str]]:
    return set(itertools.pairwise(tokens))


def _ends_clause_in_source(word: str, source: list[str], after: frozenset[str]) -> bool:
    """``word`` occurs in the sentence at its end or right before one of ``after``."""
    return any(w == word and (i + 1 == len(source) or source[i + 1] in after) for i, w in enumerate(source))


_CLAUSE_END = frozenset({".", ";", ":", "!", "?"})
# A preposition may end a clause ("shoes to travel with and ..."); a determiner may stand for a
# letter or a pronoun ("Figure A, and ..."); a conjunction never ends one.
_AFTER_PREPOSITION = _CLAUSE_END | {",", "and", "but", "or", "so"}
_AFTER_DETERMINER = _CLAUSE_END | {","}


def violations(sentence: str, claims: Sequence[str]) -> list[tuple[str, str]]:
    """(kind, claim) for every invariant the claims of ``sentence`` break (see the module)."""
    found: list[tuple[str, str]] = []
    body = strip_label(sentence.strip())
    source = words(body)
    source_pairs = _bigrams(source)
    for claim in claims:
        tokens = words(claim)
        plain = [t for t in tokens if t[0].isalnum()]
        if not plain:
            found.append(("empty", claim))
            continue
        last = plain[-1]
        if (
            (
                last in PREPOSITIONS
                and last not in PARTICLES
                and not _ends_clause_in_source(last, source, _AFTER_PREPOSITION)
            )
            or (last in DETERMINERS and not _ends_clause_in_source(last, source, _AFTER_DETERMINER))
            or (last in CONJUNCTIONS and not _ends_clause_in_source(last, source, _CLAUSE_END))
        ):
            found.append(("dangling end", claim))
        if plain[0] in {"and", "or", "nor"} and source[:1] != [plain[0]]:
            found.append(("dangling start", claim))
        for left, right in _bigrams(tokens) - source_pairs:
            needs_object = left in PREPOSITIONS or left in DETERMINERS
            bad_follower = (
                (left in DETERMINERS and right in AUXILIARIES)
                or right in CONJUNCTIONS
                or right in FREQUENCY_ADVERBS
                or (right in PREPOSITIONS and (left, right) not in COMPOUND_PREPOSITIONS)
                or right in {",", ";", ":"}
            )
            if needs_object and bad_follower:
                found.append(("broken join", claim))
                break
        for opener, partner, window in CORRELATIVES:
            if _correlated(source, opener, partner, window) and _lost_partner(plain, opener, partner, window):
                found.append(("lost correlative", claim))
        parts = [p for p in re.split(r";", body) if p.strip(" .")]
        if parts and all(has_verb(p) for p in parts) and not has_verb(claim, lenient=True):
            found.append(("lost verb", claim))
    covered = {w for claim in claims for w in content_words(claim)}
    for word in dict.fromkeys(content_words(re.sub(r"\bas well as\b", " ", body, flags=re.IGNORECASE))):
        if word not in covered:
            found.append(("lost word", word))
    return found


def _correlated(tokens: Sequence[str], opener: str, partner: str, window: int) -> bool:
    """``opener`` followed by ``partner`` within ``window`` words and no punctuation."""
    for i, w in enumerate(tokens):
        if w == opener:
            following = tokens[i + 1 : i + 1 + window]
            stop = next((j for j, t in enumerate(following) if not t[0].isalnum()), len(following))
            if partner in following[:stop]:
                return True
    return False


def _lost_partner(tokens: Sequence[str], opener: str, partner: str, window: int) -> bool:
    return any(w == opener and partner not in tokens[i + 1 : i + 1 + window] for i, w in enumerate(tokens))
