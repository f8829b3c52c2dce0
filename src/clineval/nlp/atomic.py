"""Atomic claims: one claim per item of a list the sentence splitter keeps whole.

:func:`clineval.nlp.sentences.split_claims` splits clauses and lists of three or more short
items. Two more shapes still carry several facts in one claim, so that a dropped or wrong
item is nearly invisible (the claim stays "mostly supported"):

* a list of biomarker results ("ER positive, PR positive, HER2 amplified"): one claim per
  marker, with the lead-in they share ("Receptor status: ER positive.");
* two diseases, findings, drugs or body parts of the clinical vocabulary joined by "and" or
  "or" ("History of hypertension and hyperlipidemia", "Started aspirin and clopidogrel",
  "Denies chest pain or shortness of breath"): one claim per item, each keeping the shared
  subject and verb. A name that contains "and" stays whole ("head and neck cancer" is one
  name of the vocabulary), and so do "both A and B", "either A or B" and "between A and B".
"""

from __future__ import annotations

import itertools
import re

from clineval.nlp import vocabulary
from clineval.nlp.biomarkers import biomarker_statuses
from clineval.nlp.terms import normalize

__all__ = ["atomic_claims"]

_ITEM_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|;\s*|\s+and\s+|\s+or\s+)", re.IGNORECASE)
_JOINER = re.compile(r"^\s*(?:and|or|and/or)\s*$", re.IGNORECASE)
_BOUND = re.compile(r"\b(?:both|either|neither|between|combination of|combined)\s*$", re.IGNORECASE)
_TYPES = frozenset({"disease", "phenotype", "drug", "anatomy"})


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def _biomarker_items(claim: str) -> list[str] | None:
    """One claim per biomarker result, when the claim is a list of them and nothing else."""
    body = claim.strip().rstrip(".")
    lead = ""
    if ":" in body:
        head, rest = body.split(":", 1)
        if not biomarker_statuses(normalize(head)):
            lead, body = head.strip() + ": ", rest.strip()
    parts = [p for p in _ITEM_SEPARATOR.split(body) if p.strip()]
    if len(parts) < 2:
        return None
    for part in parts:
        if len(biomarker_statuses(normalize(part))) != 1:
            return None
    return [_sentence(lead + part.strip()) for part in parts]


def _pair_items(claim: str) -> list[str] | None:
    """Two vocabulary names of one kind joined by "and"/"or": one claim for each."""
    try:
        found = [m for m in vocabulary.mentions(claim) if m.type in _TYPES]
    except vocabulary.VocabularyMissing:
        return None
    for first, second in itertools.pairwise(found):
        if first.type != second.type and {first.type, second.type} != {"disease", "phenotype"}:
            continue
        between = claim[first.end : second.start]
        if not _JOINER.match(between) or _BOUND.search(claim[: first.start]):
            continue
        before, after = claim[: first.start], claim[second.end :]
        # A third item next to the pair is a longer list (the sentence splitter's case).
        if re.match(r"\s*,", after) or re.search(r",\s*$", before):
            continue
        return [_sentence(before + first.surface + after), _sentence(before + second.surface + after)]
    return None


def atomic_claims(claim: str) -> list[str]:
    """``claim`` as atomic claims (itself when it is one; see the module docstring)."""
    items = _biomarker_items(claim)
    if items is not None:
        return items
    items = _pair_items(claim)
    if items is not None:
        return [c for item in items for c in atomic_claims(item)]
    return [claim]
