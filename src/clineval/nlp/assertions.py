"""A compact ConText/NegEx-style detector of how a sentence asserts what it mentions.

A *cue* ("denies", "no evidence of", "possible", "history of", "mother", "if",
"resolved") opens a *scope* over the words after it (pre-cues) or before it (post-cues:
"was ruled out", "is absent", "unlikely"). The scope ends at the end of the clause: a
terminating word ("but", "however", "although", "which", an affirming verb such as
"reports" for negation), a semicolon or colon, a full stop, a cue-specific window length,
and for some categories a comma. Every word inside a scope gets the cue's status:

``negated``
    "no pneumothorax", "denies chest pain", "pneumonia was ruled out", "negative for
    malignancy", "without fever", "is absent", "free of".
``possible``
    "possible", "probable", "likely", "suspected", "concern for", "cannot exclude",
    "rule out", "may be", "questionable"; "unlikely" is ``possible`` and ``negated``.
``historical``
    "history of", "prior", "previous", "status post", "in the past".
``family``
    another experiencer: "mother", "father", "family history", "his wife".
``hypothetical``
    "if", "should he ...", "return if", "in case", "watch for", "risk of".
``resolved``
    "resolved", "no longer", "subsided", "went away".
``advice``
    added to ``negated`` when the negation is an instruction rather than a finding
    ("should not take", "avoid", "do not use"): "do not take ibuprofen" does not deny
    anything that "ibuprofen is an NSAID" asserts.

Pseudo-cues ("no change", "no increase", "not only", "gram negative") are recognised and
open no scope. Text is read through :func:`clineval.nlp.terms.normalize`, so cues are
matched in lower case with contractions expanded ("doesn't" -> "does not").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from clineval.nlp.terms import Token, is_stopword, normalize, tokenize

__all__ = ["STATUSES", "AssertionResult", "Cue", "Status", "detect_assertions"]

Status = Literal["negated", "possible", "historical", "family", "hypothetical", "resolved", "advice"]
STATUSES: tuple[Status, ...] = (
    "negated",
    "possible",
    "historical",
    "family",
    "hypothetical",
    "resolved",
    "advice",
)
Direction = Literal["forward", "backward", "both"]

# (phrase, statuses, direction, window). Phrases are in normalised form.
_CUE_SPECS: list[tuple[str, tuple[str, ...], Direction, int]] = [
    # pseudo-cues: recognised so that their words open no scope
    *[
        (p, (), "forward", 0)
        for p in (
            "no change",
            "no changes",
            "no significant change",
            "no interval change",
            "no increase",
            "no decrease",
            "no worsening",
            "not worse",
            "no improvement",
            "not only",
            "not necessarily_",
            "no further change",
            "gram negative",
            "not certain if",
            "without difficulty_",
            "no longer than",
            "not just",
            "no doubt",
            "no matter",
            "not always",
            "if any",
            "as if",
            "even if",
            "if needed",
            "if necessary",
            "if possible",
            "if so",
            "no other",
            "not all",
            "not enough",
        )
    ],
    # uncertainty (longer phrases first where they contain negation words)
    ("can not be ruled out", ("possible",), "backward", 6),
    ("can not be excluded", ("possible",), "backward", 6),
    ("could not be excluded", ("possible",), "backward", 6),
    ("could not be ruled out", ("possible",), "backward", 6),
    ("not ruled out", ("possible",), "backward", 6),
    ("not been ruled out", ("possible",), "backward", 6),
    ("not excluded", ("possible",), "backward", 6),
    ("can not rule out", ("possible",), "forward", 8),
    ("can not exclude", ("possible",), "forward", 8),
    ("could not rule out", ("possible",), "forward", 8),
    ("not necessarily", ("possible",), "forward", 6),
    # "does not usually turn into pneumonia": a frequency (it is uncommon), not a denial
    ("not usually", ("possible",), "forward", 6),
    ("not typically", ("possible",), "forward", 6),
    ("not commonly", ("possible",), "forward", 6),
    ("not often", ("possible",), "forward", 6),
    ("not sure", ("possible",), "forward", 8),
    ("not certain", ("possible",), "forward", 8),
    ("not clear", ("possible",), "forward", 8),
    ("unclear", ("possible",), "both", 6),
    ("uncertain", ("possible",), "both", 6),
    ("unlikely", ("possible", "negated"), "both", 6),
    ("less likely", ("possible", "negated"), "both", 6),
    ("possible", ("possible",), "forward", 6),
    ("possibly", ("possible",), "forward", 6),
    ("possibility of", ("possible",), "forward", 6),
    ("probable", ("possible",), "forward", 6),
    ("probably", ("possible",), "forward", 6),
    ("likely", ("possible",), "both", 6),
    ("most likely", ("possible",), "forward", 6),
    ("suspect", ("possible",), "forward", 6),
    ("suspected", ("possible",), "both", 6),
    ("suspicion", ("possible",), "forward", 6),
    ("suspicious", ("possible",), "forward", 6),
    ("concern for", ("possible",), "forward", 6),
    ("concerning for", ("possible",), "forward", 6),
    ("worrisome for", ("possible",), "forward", 6),
    ("question of", ("possible",), "forward", 6),
    ("questionable", ("possible",), "forward", 6),
    ("rule out", ("possible",), "forward", 6),
    ("r/o", ("possible",), "forward", 6),
    ("to rule out", ("possible",), "forward", 6),
    ("evaluate for", ("possible",), "forward", 6),
    ("assess for", ("possible",), "forward", 6),
    ("differential", ("possible",), "forward", 8),
    ("differential diagnosis", ("possible",), "forward", 8),
    ("may be", ("possible",), "forward", 6),
    ("might be", ("possible",), "forward", 6),
    ("could be", ("possible",), "forward", 6),
    ("may have", ("possible",), "forward", 6),
    ("might have", ("possible",), "forward", 6),
    ("could have", ("possible",), "forward", 6),
    ("may represent", ("possible",), "forward", 6),
    ("may reflect", ("possible",), "forward", 6),
    ("maybe", ("possible",), "forward", 6),
    ("perhaps", ("possible",), "forward", 6),
    ("presumed", ("possible",), "forward", 6),
    ("presumptive", ("possible",), "forward", 6),
    ("equivocal", ("possible",), "both", 6),
    ("borderline", ("possible",), "forward", 4),
    ("suggestive of", ("possible",), "forward", 6),
    ("suggests", ("possible",), "forward", 6),
    ("versus", ("possible",), "both", 4),
    ("vs", ("possible",), "both", 4),
    ("consider", ("possible",), "forward", 6),
    *[
        (f"{who} {verb}", ("possible",), "forward", 8)
        # The clinician's own judgement ("I believe he has a viral syndrome"); a patient's
        # belief about a cause ("he believes the pain is from a strain") is left alone.
        for who in ("i", "we")
        for verb in (
            "believe",
            "believes",
            "think",
            "thinks",
            "thought",
            "suspect",
            "suspects",
            "feel like",
            "feels like",
            "felt like",
            "wonder",
            "wonders",
            "wondered",
            "guess",
            "guesses",
        )
    ],
    # negation as advice
    ("should not", ("negated", "advice"), "forward", 8),
    ("should never", ("negated", "advice"), "forward", 8),
    ("must not", ("negated", "advice"), "forward", 8),
    ("must never", ("negated", "advice"), "forward", 8),
    ("ought not", ("negated", "advice"), "forward", 8),
    ("avoid", ("negated", "advice"), "forward", 6),
    ("avoiding", ("negated", "advice"), "forward", 6),
    ("refrain from", ("negated", "advice"), "forward", 6),
    ("not recommended", ("negated", "advice"), "backward", 6),
    ("is not recommended", ("negated", "advice"), "backward", 6),
    ("are not recommended", ("negated", "advice"), "backward", 6),
    ("not advised", ("negated", "advice"), "backward", 6),
    ("avoided", ("negated", "advice"), "backward", 6),
    ("contraindicated", ("negated", "advice"), "both", 6),
    # negation
    ("no", ("negated",), "forward", 8),
    ("not", ("negated",), "forward", 8),
    ("never", ("negated",), "forward", 8),
    ("none", ("negated",), "both", 5),
    ("neither", ("negated",), "forward", 8),
    ("nor", ("negated",), "forward", 5),
    ("without", ("negated",), "forward", 8),
    ("denies", ("negated",), "forward", 10),
    ("deny", ("negated",), "forward", 10),
    ("denied", ("negated",), "both", 10),
    ("denying", ("negated",), "forward", 10),
    ("negative for", ("negated",), "forward", 10),
    ("free of", ("negated",), "forward", 8),
    ("absence of", ("negated",), "forward", 8),
    ("absent", ("negated",), "both", 5),
    ("no evidence of", ("negated",), "forward", 10),
    ("no evidence", ("negated",), "forward", 10),
    ("no sign of", ("negated",), "forward", 10),
    ("no signs of", ("negated",), "forward", 10),
    ("no history of", ("negated", "historical"), "forward", 10),
    ("fails to reveal", ("negated",), "forward", 8),
    ("failed to reveal", ("negated",), "forward", 8),
    ("rules out", ("negated",), "forward", 6),
    ("ruled out", ("negated",), "both", 6),
    ("excluded", ("negated",), "backward", 6),
    ("was excluded", ("negated",), "backward", 6),
    ("was ruled out", ("negated",), "backward", 6),
    ("were ruled out", ("negated",), "backward", 6),
    ("has been ruled out", ("negated",), "backward", 6),
    ("is absent", ("negated",), "backward", 6),
    ("are absent", ("negated",), "backward", 6),
    # "surgery is not needed (for most sprains)": what comes before is negated, not what follows
    ("not needed", ("negated",), "backward", 6),
    ("not required", ("negated",), "backward", 6),
    ("not necessary", ("negated",), "backward", 6),
    ("not indicated", ("negated",), "backward", 6),
    ("not seen", ("negated",), "backward", 6),
    ("not present", ("negated",), "backward", 6),
    ("not identified", ("negated",), "backward", 6),
    ("not detected", ("negated",), "backward", 6),
    ("not noted", ("negated",), "backward", 6),
    ("not appreciated", ("negated",), "backward", 6),
    ("negative", ("negated",), "backward", 5),
    ("is negative", ("negated",), "backward", 6),
    ("was negative", ("negated",), "backward", 6),
    ("were negative", ("negated",), "backward", 6),
    ("came back negative", ("negated",), "backward", 6),
    ("resolved", ("resolved",), "both", 6),
    ("has resolved", ("resolved",), "backward", 6),
    ("have resolved", ("resolved",), "backward", 6),
    ("resolution of", ("resolved",), "forward", 6),
    ("no longer", ("resolved",), "forward", 8),
    ("subsided", ("resolved",), "backward", 6),
    ("went away", ("resolved",), "backward", 6),
    ("gone away", ("resolved",), "backward", 6),
    ("cleared", ("resolved",), "backward", 4),
    ("recovered from", ("resolved",), "forward", 6),
    # history
    ("history", ("historical",), "forward", 10),
    ("status_post", ("historical",), "forward", 8),
    ("previous", ("historical",), "forward", 5),
    ("previously", ("historical",), "both", 5),
    ("prior", ("historical",), "forward", 5),
    ("past", ("historical",), "forward", 5),
    ("in the past", ("historical",), "backward", 6),
    ("used to", ("historical",), "forward", 6),
    ("former", ("historical",), "forward", 3),
    ("remote", ("historical",), "forward", 4),
    # another experiencer
    *[
        (w, ("family",), "both", 8)
        for w in (
            "family",
            "family history",
            "mother",
            "father",
            "mom",
            "dad",
            "brother",
            "sister",
            "brothers",
            "sisters",
            "sibling",
            "siblings",
            "parent",
            "parents",
            "grandmother",
            "grandfather",
            "grandparent",
            "aunt",
            "uncle",
            "cousin",
            "son",
            "daughter",
            # bare "children" is a population ("not recommended for children")
            "her children",
            "his children",
            "their children",
            "your children",
            "my children",
            "his wife",
            "her husband",
            "his partner",
            "her partner",
            "maternal",
            "paternal",
            "relative",
            "relatives",
            "twin",
        )
    ],
    # hypothetical
    ("if", ("hypothetical",), "forward", 8),
    ("in case", ("hypothetical",), "forward", 8),
    ("in the event", ("hypothetical",), "forward", 8),
    ("unless", ("hypothetical",), "forward", 8),
    ("whenever", ("hypothetical",), "forward", 8),
    ("should he", ("hypothetical",), "forward", 8),
    ("should she", ("hypothetical",), "forward", 8),
    ("should you", ("hypothetical",), "forward", 8),
    ("should the patient", ("hypothetical",), "forward", 8),
    ("should symptoms", ("hypothetical",), "forward", 8),
    ("should there be", ("hypothetical",), "forward", 8),
    ("return if", ("hypothetical",), "forward", 8),
    ("call if", ("hypothetical",), "forward", 8),
    ("watch for", ("hypothetical",), "forward", 8),
    ("monitor for", ("hypothetical",), "forward", 8),
    ("look out for", ("hypothetical",), "forward", 8),
]

# Words that end a scope for every category, and more for some.
_TERMINATORS = frozenset(
    [
        "but",
        "however",
        "although",
        "though",
        "except",
        "aside",
        "apart",
        "which",
        "who",
        "whose",
        "whom",
        "where",
        "because",
        "since",
        "yet",
        "whereas",
        "while",
        "nevertheless",
        "nonetheless",
        "instead",
    ]
)
_AFFIRMING = frozenset(
    [
        "reports",
        "reported",
        "report",
        "endorses",
        "endorsed",
        "endorse",
        "complains",
        "complained",
        "presents",
        "presented",
        "admits",
        "admitted",
        "notes",
        "noted",
        "has",
        "have",
        "had",
        "shows",
        "showed",
        "demonstrates",
        "demonstrated",
        "reveals",
        "revealed",
        "positive",
        "developed",
        "develops",
        "experiencing",
        "experiences",
        "is",
        "are",
        "was",
        "were",
    ]
)
_SUBJECTS = frozenset(["he", "she", "patient", "i", "we", "they", "you"])
_PUNCT_END = frozenset(";:.!?()")
_COMMA_ENDS: frozenset[str] = frozenset({"possible", "hypothetical", "resolved", "family"})


@dataclass(frozen=True)
class Cue:
    """One cue found in a text."""

    text: str
    statuses: tuple[Status, ...]
    direction: Direction
    first: int
    """Index of its first token."""
    last: int
    """Index of its last token."""


@dataclass(frozen=True)
class AssertionResult:
    """Tokens of a normalised text, each with the statuses of the scopes covering it."""

    tokens: tuple[Token, ...]
    statuses: tuple[frozenset[Status], ...]
    cues: tuple[Cue, ...]
    heads: tuple[int, ...] = ()
    """Per token: the first content word of the negation scope covering it (-1 if none).
    "not staying on top of his blood sugar" negates *staying*; "blood sugar" is only
    inside the scope, so a text that merely mentions blood sugar does not contradict it."""

    @property
    def cue_positions(self) -> frozenset[int]:
        return frozenset(i for cue in self.cues for i in range(cue.first, cue.last + 1))

    def statuses_of_stem(self, stem: str) -> frozenset[Status]:
        """The statuses of the first occurrence of a stem (empty: plainly affirmed)."""
        for token, status in zip(self.tokens, self.statuses, strict=True):
            if token.stem == stem:
                return status
        return frozenset()

    def has(self, status: Status) -> bool:
        return any(status in s for s in self.statuses)

    def cue_texts(self, status: Status) -> list[str]:
        return [c.text for c in self.cues if status in c.statuses]


def _build_table() -> dict[str, list[tuple[tuple[str, ...], tuple[Status, ...], Direction, int]]]:
    table: dict[str, list[tuple[tuple[str, ...], tuple[Status, ...], Direction, int]]] = {}
    for phrase, statuses, direction, window in _CUE_SPECS:
        words = tuple(normalize(phrase).split())
        if not words:
            continue
        typed: tuple[Status, ...] = tuple(s for s in STATUSES if s in statuses)
        table.setdefault(words[0], []).append((words, typed, direction, window))
    for entries in table.values():
        entries.sort(key=lambda e: len(e[0]), reverse=True)
    return table


_TABLE = _build_table()


def _find_cues(tokens: list[Token]) -> list[tuple[Cue, int]]:
    found: list[tuple[Cue, int]] = []
    i = 0
    while i < len(tokens):
        entries = _TABLE.get(tokens[i].text)
        matched = False
        for words, statuses, direction, window in entries or ():
            end = i + len(words)
            if end <= len(tokens) and all(tokens[i + k].text == w for k, w in enumerate(words)):
                found.append((Cue(" ".join(words), statuses, direction, i, end - 1), window))
                i = end
                matched = True
                break
        if not matched:
            i += 1
    return found


def _ends_scope(token: Token, statuses: tuple[Status, ...], backward: bool, count: int) -> bool:
    if token.kind == "punct":
        if token.text in _PUNCT_END:
            return True
        return token.text == "," and any(s in _COMMA_ENDS for s in statuses)
    if token.text in _TERMINATORS:
        return True
    # "no fever, has a cough": an affirming verb after the negated words starts a new assertion
    # ("does not have a fever": right after the cue it is part of the negated phrase).
    if "negated" in statuses and not backward and count > 0 and token.text in _AFFIRMING:
        return True
    if "family" in statuses and token.text in _SUBJECTS:
        return True
    return token.text == "and" and "hypothetical" in statuses


def _imperative(tokens: list[Token], index: int) -> bool:
    """ "Do not take ...", "Never use ...": a negated instruction at the start of a clause."""
    before = index - 1
    if before >= 0 and tokens[before].text == "do":
        before -= 1
    if before >= 0 and tokens[before].text == "please":
        before -= 1
    return before < 0 or tokens[before].kind == "punct"


@lru_cache(maxsize=32768)
def detect_assertions(text: str) -> AssertionResult:
    """Cues and per-token statuses of ``text`` (see the module docstring)."""
    tokens = tokenize(normalize(text))
    statuses: list[set[Status]] = [set() for _ in tokens]
    cues = _find_cues(tokens)
    cue_tokens = {i for cue, _ in cues for i in range(cue.first, cue.last + 1)}
    heads = [-1] * len(tokens)
    for position, (cue, window) in enumerate(cues):
        if not cue.statuses:
            continue
        if cue.text in ("not", "never") and "advice" not in cue.statuses and _imperative(tokens, cue.first):
            cue = Cue(cue.text, (*cue.statuses, "advice"), cue.direction, cue.first, cue.last)
            cues[position] = (cue, window)
        negation = "negated" in cue.statuses
        if cue.direction in ("forward", "both"):
            count, head = 0, -1
            for j in range(cue.last + 1, len(tokens)):
                if _ends_scope(tokens[j], cue.statuses, False, count) or count >= window:
                    break
                if j not in cue_tokens and tokens[j].kind != "punct":
                    statuses[j].update(cue.statuses)
                    count += 1
                    if head < 0 and tokens[j].kind == "word" and not is_stopword(tokens[j]):
                        head = j
                    if negation and heads[j] < 0:
                        heads[j] = head
        if cue.direction in ("backward", "both"):
            count, head = 0, -1
            saved: dict[int, tuple[set[Status], int]] = {}
            j = cue.first - 1
            while j >= 0:
                if _ends_scope(tokens[j], cue.statuses, True, count) or count >= window:
                    if tokens[j].text != "except" or not saved:
                        break
                    # "X, except for Y, should be avoided": Y was the exception, X the subject
                    for k, (before, old_head) in saved.items():
                        statuses[k], heads[k] = before, old_head
                    saved.clear()
                    count, head = 0, -1
                    j -= 1
                    while j >= 0 and tokens[j].kind == "punct":
                        j -= 1
                    continue
                if j not in cue_tokens and tokens[j].kind != "punct":
                    saved.setdefault(j, (set(statuses[j]), heads[j]))
                    statuses[j].update(cue.statuses)
                    count += 1
                    if head < 0 and tokens[j].kind == "word" and not is_stopword(tokens[j]):
                        head = j
                    if negation and heads[j] < 0:
                        heads[j] = head
                j -= 1
    return AssertionResult(
        tuple(tokens),
        tuple(frozenset(s) for s in statuses),
        tuple(cue for cue, _ in cues),
        tuple(heads),
    )
