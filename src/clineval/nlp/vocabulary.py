"""A compiled clinical vocabulary: concept names from open clinical vocabularies, and lookups.

The data file ``data/vocabulary.json.gz`` is built by ``scripts/build_vocabulary.py`` from
pinned PyPI wheels that carry the Human Phenotype Ontology, the Human Disease Ontology,
MONDO, Uberon, the ICD-10-CM tabular list and a drug-name dictionary (docs/vocabulary.md
lists the sources, versions, licences and filters). Nothing here reads the network or those
packages: the file is loaded once per process, on first use, under a lock.

Every name is normalised by :func:`normalize_name`, at build time for the vocabulary's
names and at lookup time for the text, so the two always agree: lower case, accents
stripped, a possessive "'s" dropped ("Crohn's" -> "crohn"), and every other character that
is not a letter or a digit (hyphens, commas, brackets, slashes) a word boundary
("non-insulin-dependent" -> "non insulin dependent").

The lookups:

* :func:`concepts` -- concept ids for an exact (normalised) name;
* :func:`mentions` -- longest-match, non-overlapping names in free text, with offsets;
* :func:`concept`, :func:`ancestors`, :func:`equivalents`, :func:`names` -- a concept's
  label, type, parents, ancestors, equivalents in other vocabularies and names;
* :func:`relation` -- "same", "narrower", "broader", "sibling" or ``None`` between two
  concepts (or sets of concepts);
* :func:`version`, :func:`sources` -- what the file was built from.
"""

from __future__ import annotations

import gc
import gzip
import json
import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from clineval.errors import ClinevalError

__all__ = [
    "Concept",
    "Mention",
    "Relation",
    "VocabularyMissing",
    "ancestors",
    "concept",
    "concepts",
    "equivalents",
    "mentions",
    "names",
    "normalize_name",
    "relation",
    "sources",
    "version",
]

DATA_FILE = Path(__file__).resolve().parent / "data" / "vocabulary.json.gz"

#: The file layout this module reads; the build script writes the same number.
FORMAT_VERSION = 1

Relation = Literal["same", "narrower", "broader", "sibling"]

# A name's entry in the file packs (concept index, cased flag, kind index) into one int:
# (concept << CODE_SHIFT) | (CODE_CASED if the name is matched in capitals only) | kind.
CODE_CASED = 1 << 6
CODE_SHIFT = 7


class VocabularyMissing(ClinevalError):
    """The compiled vocabulary file is not installed."""


# --------------------------------------------------------------------------- normalisation

# A token: letters and digits, with inner apostrophes ("crohn's", "o'brien").
_TOKEN_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_POSSESSIVE_RE = re.compile(r"['’]s$")
# Multi-word names never span a sentence end, a semicolon or a line break.
_BREAK_RE = re.compile(r"[;!?\n]|\.\s")


def _norm_token(token: str) -> str:
    token = token.lower()
    if "'" in token or "’" in token:
        token = _POSSESSIVE_RE.sub("", token).replace("'", "").replace("’", "")
    if not token.isascii():
        token = "".join(c for c in unicodedata.normalize("NFKD", token) if not unicodedata.combining(c))
    return token


def normalize_name(text: str) -> str:
    """``text`` as the vocabulary stores names: lower-case tokens of letters and digits,
    accents stripped, possessive "'s" dropped, joined by one space.

    >>> normalize_name("Crohn's disease")
    'crohn disease'
    >>> normalize_name("Non-insulin-dependent  diabetes, type 2")
    'non insulin dependent diabetes type 2'
    >>> normalize_name("Sjögren syndrome")
    'sjogren syndrome'
    """
    return " ".join(_norm_token(m.group(0)) for m in _TOKEN_RE.finditer(text))


# ----------------------------------------------------------------------------- data types


@dataclass(frozen=True, slots=True)
class Concept:
    """One concept of one vocabulary.

    ``id`` is prefixed by its vocabulary ("HP:0001250", "MONDO:0005148", "DOID:9352",
    "ICD10CM:E11.9", "UBERON:0002107", "DRUG:metformin"); ``label`` is the source's
    preferred label, verbatim; ``type`` is one of "phenotype", "disease", "injury",
    "drug", "anatomy", "qualifier", "external_cause", "health_factor"; ``parents`` are
    the concept's direct parents in its own vocabulary.
    """

    id: str
    label: str
    type: str
    vocabulary: str
    parents: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Mention:
    """A vocabulary name found in a text: ``text[start:end] == surface``.

    ``concepts`` are the ids the name stands for (its preferred-label concepts first);
    ``type`` is the first concept's type.
    """

    start: int
    end: int
    surface: str
    concepts: tuple[str, ...]
    type: str


# ------------------------------------------------------------------------------- loading


@dataclass(frozen=True, slots=True)
class _Vocabulary:
    header: dict[str, Any]
    ids: list[str]
    index: dict[str, int]
    labels: list[str]
    types: list[str]  # per concept
    parent_start: list[int]  # the parents of concept k: parent_list[parent_start[k]:parent_start[k + 1]]
    parent_list: list[int]
    classes: list[int]  # per concept: the index of its equivalence class's representative
    members: dict[int, tuple[int, ...]]  # class representative -> its members (classes of 2+ only)
    kinds: list[str]
    names: dict[str, int | list[int]]
    first: dict[str, int]  # first token of a name -> bit n-1 set if a name of n tokens starts with it


_LOCK = threading.Lock()
_DATA: _Vocabulary | None = None


def _read(path: Path) -> _Vocabulary:
    # The table is some two million small objects: the cyclic garbage collector would walk
    # them again and again while they are made (a fifth of the load time), and they hold
    # no cycles.
    gc.disable()
    try:
        return _parse(path)
    finally:
        gc.enable()


def _parse(path: Path) -> _Vocabulary:
    if not path.is_file():
        raise VocabularyMissing(
            f"clinical vocabulary not found at {path}; rebuild it with `python scripts/build_vocabulary.py`"
        )
    with gzip.open(path, "rb") as handle:
        raw = json.loads(handle.read())
    if raw.get("format_version") != FORMAT_VERSION:
        raise VocabularyMissing(
            f"{path}: format_version {raw.get('format_version')!r}, expected {FORMAT_VERSION}; "
            "rebuild it with `python scripts/build_vocabulary.py`"
        )
    table = raw["concepts"]
    ids: list[str] = table["ids"]
    type_names: list[str] = raw["types"]
    classes: list[int] = table["classes"]
    members: dict[int, list[int]] = {}
    for i, rep in enumerate(classes):
        if rep != i:
            members.setdefault(rep, [rep]).append(i)
    header = {k: v for k, v in raw.items() if k not in ("concepts", "names", "codes", "first")}
    return _Vocabulary(
        header=header,
        ids=ids,
        index=dict(zip(ids, range(len(ids)), strict=True)),
        labels=table["labels"],
        types=[type_names[t] for t in table["types"]],
        parent_start=table["parent_start"],
        parent_list=table["parent_list"],
        classes=classes,
        members={rep: tuple(group) for rep, group in members.items()},
        kinds=raw["kinds"],
        names=dict(zip(raw["names"], raw["codes"], strict=True)),
        first=raw["first"],
    )


def _vocab() -> _Vocabulary:
    global _DATA
    data = _DATA
    if data is None:
        with _LOCK:
            if _DATA is None:
                _DATA = _read(DATA_FILE)
            data = _DATA
    return data


def _parents(data: _Vocabulary, k: int) -> list[int]:
    return data.parent_list[data.parent_start[k] : data.parent_start[k + 1]]


def _codes(entry: int | list[int]) -> list[int]:
    return [entry] if isinstance(entry, int) else entry


# ------------------------------------------------------------------------------- lookups


def version() -> str:
    """The vocabulary's format version and build date, e.g. "1 (built 2026-11-28)"."""
    header = _vocab().header
    return f"{header['format_version']} (built {header['built']})"


def sources() -> tuple[dict[str, str], ...]:
    """Each source the vocabulary was built from: name, version, licence, url, package, and
    notice (the acknowledgement the source asks for, to show wherever the vocabulary is used)."""
    keys = ("name", "version", "licence", "url", "package", "notice")
    return tuple({k: str(v) for k, v in source.items() if k in keys} for source in _vocab().header["sources"])


def concepts(phrase: str) -> tuple[str, ...]:
    """The ids of the concepts that ``phrase`` names, after :func:`normalize_name`.

    Case is ignored here ("dm" finds what "DM" names); preferred-label concepts come first.
    """
    data = _vocab()
    entry = data.names.get(normalize_name(phrase))
    if entry is None:
        return ()
    return tuple(dict.fromkeys(data.ids[code >> CODE_SHIFT] for code in _codes(entry)))


@lru_cache(maxsize=4096)
def _lengths(mask: int) -> tuple[int, ...]:
    """The name lengths (in tokens) set in ``mask``, longest first."""
    return tuple(n for n in range(mask.bit_length(), 0, -1) if mask >> (n - 1) & 1)


def mentions(text: str) -> list[Mention]:
    """The vocabulary's names in ``text``: longest match first, left to right, not overlapping.

    Names the sources write in capitals only ("COPD", "T2DM", "MI") match only a surface
    without lower-case letters, so "mi" and "Mi" are not myocardial infarction. A name never
    spans a sentence end, a semicolon or a line break.
    """
    data = _vocab()
    tokens = [(m.start(), m.end(), _norm_token(m.group(0))) for m in _TOKEN_RE.finditer(text)]
    count = len(tokens)
    # run_end[i]: the end (exclusive) of the run of tokens holding token i that no break cuts
    breaks = [m.start() for m in _BREAK_RE.finditer(text)]
    run_end = [count] * count
    b = len(breaks) - 1
    for i in range(count - 2, -1, -1):
        while b >= 0 and breaks[b] >= tokens[i + 1][0]:
            b -= 1
        cut = b >= 0 and breaks[b] >= tokens[i][1]
        run_end[i] = i + 1 if cut else run_end[i + 1]
    found: list[Mention] = []
    i = 0
    while i < count:
        mask = data.first.get(tokens[i][2], 0)
        matched = 0
        if mask:
            room = run_end[i] - i
            for length in _lengths(mask):
                if length > room:
                    continue
                last = i + length - 1
                key = tokens[i][2] if length == 1 else " ".join([t[2] for t in tokens[i : last + 1]])
                entry = data.names.get(key)
                if entry is None:
                    continue
                start, end = tokens[i][0], tokens[last][1]
                surface = text[start:end]
                lower = any(c.islower() for c in surface)
                ids = [code >> CODE_SHIFT for code in _codes(entry) if not (lower and code & CODE_CASED)]
                if not ids:
                    continue
                unique = tuple(dict.fromkeys(ids))
                found.append(
                    Mention(start, end, surface, tuple(data.ids[k] for k in unique), data.types[unique[0]])
                )
                matched = length
                break
        i += matched or 1
    return found


def concept(concept_id: str) -> Concept | None:
    """The concept with this id, or ``None`` if the vocabulary has none."""
    data = _vocab()
    k = data.index.get(concept_id)
    if k is None:
        return None
    return Concept(
        id=concept_id,
        label=data.labels[k],
        type=data.types[k],
        vocabulary=concept_id.split(":", 1)[0],
        parents=tuple(data.ids[p] for p in _parents(data, k)),
    )


@lru_cache(maxsize=65536)
def _ancestor_indices(k: int) -> tuple[int, ...]:
    """Ancestors of concept ``k`` in its own vocabulary, nearest first (breadth-first)."""
    data = _vocab()
    seen: dict[int, None] = {}
    frontier = _parents(data, k)
    while frontier:
        following: list[int] = []
        for p in frontier:
            if p not in seen and p != k:
                seen[p] = None
                following.extend(_parents(data, p))
        frontier = following
    return tuple(seen)


def ancestors(concept_id: str) -> tuple[str, ...]:
    """The concept's ancestors in its own vocabulary, nearest first; () for an unknown id."""
    data = _vocab()
    k = data.index.get(concept_id)
    if k is None:
        return ()
    return tuple(data.ids[a] for a in _ancestor_indices(k))


def _members(data: _Vocabulary, k: int) -> tuple[int, ...]:
    return data.members.get(data.classes[k], (k,))


def equivalents(concept_id: str) -> tuple[str, ...]:
    """The concepts of other vocabularies that are the same concept (its equivalence class,
    itself excluded); () when it has none or the id is unknown."""
    data = _vocab()
    k = data.index.get(concept_id)
    if k is None:
        return ()
    return tuple(data.ids[m] for m in _members(data, k) if m != k)


@lru_cache(maxsize=65536)
def _class_parents(rep: int) -> frozenset[int]:
    """The classes of the direct parents of every member of class ``rep``."""
    data = _vocab()
    return frozenset(data.classes[p] for m in _members(data, rep) for p in _parents(data, m))


@lru_cache(maxsize=65536)
def _class_ancestors(rep: int) -> frozenset[int]:
    """The classes of every ancestor of every member of class ``rep``, through equivalences:
    a concept's ancestors in one vocabulary and its equivalent's in another."""
    seen: set[int] = set()
    frontier = set(_class_parents(rep))
    while frontier:
        seen |= frontier
        frontier = {p for c in frontier for p in _class_parents(c)} - seen
    seen.discard(rep)
    return frozenset(seen)


def _pair(data: _Vocabulary, a: int, b: int) -> Relation | None:
    ca, cb = data.classes[a], data.classes[b]
    if ca == cb:
        return "same"
    if cb in _class_ancestors(ca):
        return "narrower"
    if ca in _class_ancestors(cb):
        return "broader"
    if _class_parents(ca) & _class_parents(cb):
        return "sibling"
    return None


_ORDER: tuple[Relation, ...] = ("same", "narrower", "broader", "sibling")


def relation(a: str | Iterable[str], b: str | Iterable[str]) -> Relation | None:
    """How concept ``a`` stands to concept ``b``.

    * "same": the same id, or equivalent concepts (one equivalence class);
    * "narrower": ``a`` is a descendant of ``b`` (so ``a`` entails ``b``: type 2 diabetes
      mellitus is narrower than diabetes mellitus), through any vocabulary of either's class;
    * "broader": the reverse;
    * "sibling": they share a direct parent and neither is an ancestor of the other (type 1
      and type 2 diabetes mellitus; S72.0 and S72.1, two fractures of the femur);
    * ``None``: none of these, or an unknown id.

    Either side may be a set of ids (e.g. a mention's concepts): the answer is the first of
    "same", "narrower", "broader", "sibling" that holds for some pair.
    """
    data = _vocab()
    left_ids = [a] if isinstance(a, str) else list(a)
    right_ids = [b] if isinstance(b, str) else list(b)
    if set(left_ids) & set(right_ids):
        return "same"
    left = [k for k in (data.index.get(x) for x in left_ids) if k is not None]
    right = [k for k in (data.index.get(x) for x in right_ids) if k is not None]
    found = {_pair(data, x, y) for x in left for y in right}
    return next((r for r in _ORDER if r in found), None)


@lru_cache(maxsize=1)
def _names_by_concept() -> dict[int, tuple[tuple[str, str], ...]]:
    data = _vocab()
    table: dict[int, list[tuple[str, str]]] = {}
    for name, entry in data.names.items():
        for code in _codes(entry):
            table.setdefault(code >> CODE_SHIFT, []).append((name, data.kinds[code & (CODE_CASED - 1)]))
    return {k: tuple(sorted(v)) for k, v in table.items()}


def names(concept_id: str) -> tuple[tuple[str, str], ...]:
    """The concept's normalised names with their kind ("label", "exact", "related",
    "exact layperson", "exact abbreviation", "inclusion", "brand", ...), sorted by name.

    The first call indexes every name (about a second); later calls are lookups.
    """
    data = _vocab()
    k = data.index.get(concept_id)
    if k is None:
        return ()
    return _names_by_concept().get(k, ())
