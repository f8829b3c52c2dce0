"""Stages, classes and grades, in short and long form: TNM ("T2N0M0", "cT1c N0 M0", "pT3
pN1a M0", "no regional lymph node metastasis" = N0, "metastases to the liver" = M1), stage
groups ("stage IV" = "stage 4"), and the scales of other diseases (NYHA class, CKD and
KDIGO AKI stages, GOLD, Gleason score and ISUP grade group, histological grade, ECOG,
Child-Pugh and a few more).

:func:`stage_mentions` reads a text already passed through
:func:`clineval.nlp.terms.normalize`, which has turned Roman numerals after "stage",
"grade" and "class" into Arabic ones ("stage IIIA" -> "stage 3a"); the Roman numerals
it leaves ("NYHA III", "FIGO stage IB2") are read here. Each mention has a *system*
(``tnm_t``, ``tnm_n``, ``tnm_m``, ``stage``, ``ckd``, ``kdigo``, ``gold``, ``nyha``,
``gleason``, ``grade_group``, ``grade``, ``ecog``, ...), a normalised *value* ("2",
"3a", "1c", "0", "is", "+" for any positive node, "3+4" for a Gleason pattern, "low"
for a low grade, "2-3" for a range) and its span. :func:`stage_relation` says whether a
claim's mention agrees with, or contradicts, one of the evidence's.

The overall stage of a cancer is ``stage``; the stage of another disease named next to
it takes that disease's system ("CKD stage 4" and "stage 4 CKD" are ``ckd``; "stage 2
AKI" and "KDIGO stage 2" are ``kdigo``; "stage 2 pressure injury" is
``pressure_injury``), so a cancer's stage is never compared with a kidney's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = ["StageMention", "StageRelation", "stage_mentions", "stage_relation", "stage_relations"]

Relation = Literal["agree", "conflict"]


@dataclass(frozen=True)
class StageMention:
    """One stage, class or grade in a text."""

    system: str
    value: str
    start: int
    end: int
    """Character span in the normalised text, over the words that say it ("no regional
    lymph node metastasis", "t2n0m0" for each of its three components, "primary tumor is
    t2")."""
    qualifier: str = ""
    """For TNM the basis of the category: ``c`` (clinical), ``p`` (pathological), ``yp``
    (after therapy) ...; for a grade its scheme ("nottingham"); else empty."""


@dataclass(frozen=True)
class StageRelation:
    """A claim's mention, the evidence's mention it was compared with, and how they relate."""

    claim: StageMention
    evidence: StageMention
    relation: Relation


# --- values ---------------------------------------------------------------------------
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5"}
_ROMAN_OR_DIGIT = r"(?:iv|v|i{1,3}|[0-5])"


def _arabic(value: str) -> str:
    """ "iiib" -> "3b", "IV" -> "4", "1c" -> "1c"."""
    value = value.lower().replace(" ", "")
    match = re.fullmatch(r"(iv|v|i{1,3})([a-d]?\d?)", value)
    if match:
        return _ROMAN[match.group(1)] + match.group(2)
    return value


# --- TNM ------------------------------------------------------------------------------
_PREFIX = r"(?:yc|yp|rp|c|p|r|a|u|y)?"
_T = r"(?P<tp>" + _PREFIX + r")t(?P<t>x|is|0|[1-4](?:mi|[a-d]\d?)?)"
_N = r"(?P<np>" + _PREFIX + r")n(?P<n>x|0|[1-3](?:mi|[a-c])?)(?:\s*\((?:i|mol|sn)[+-]?\))?"
_M = r"(?P<mp>" + _PREFIX + r")m(?P<m>x|0|1[a-d]?)(?:\s*\((?:i)[+-]\))?"
_GAP = r"[\s,;/]*"
# Two or three components together ("t2n0m0", "ct1c n0 m0", "pt3 pn1a (2/14) m0").
_TNM_RE = re.compile(
    r"(?<![\w-])(?:"
    + _T
    + r"(?:"
    + _GAP
    + r"(?:\(\d+/\d+\)\s*)?"
    + _N
    + r")?(?:"
    + _GAP
    + r"(?:\(\d+/\d+\)\s*)?"
    + _M
    + r")?|"
    + _N.replace("?P<np>", "?P<np2>").replace("?P<n>", "?P<n2>")
    + r"(?:"
    + _GAP
    + r"(?:\(\d+/\d+\)\s*)?"
    + _M.replace("?P<mp>", "?P<mp2>").replace("?P<m>", "?P<m2>")
    + r")?)(?![\w+])"
)
# A lone component is a TNM category only with a prefix ("pT2") or in a staging context;
# "T2" is also a vertebra or an MRI sequence, "T4" thyroxine, "M1" a segment of an artery.
_STAGING_CONTEXT = re.compile(
    r"\b(?:stag\w*|tnm|ajcc|primary\s+tumou?r|tumou?r|carcinoma|cancer|adenocarcinoma|malignan\w*|node|nodes"
    r"|nodal|metasta\w*|sarcoma|melanoma|lymphoma)\b"
)
_NOT_TNM_AFTER = re.compile(
    r"\s*(?:weighted|vertebra\w*|spinous|level|levels|segment|nerve|root|disc|hyperintens\w*|signal|sequence"
    r"|images?|lesion|\(?thyrox\w*|uptake|-?\s*t\d)\b"
)
_FREE_HORMONE = re.compile(r"\b(?:free|total|serum)\s*$")
# "the primary tumor is T2", "a T1c tumor": the words that name the T category go with it.
_PRIMARY_BEFORE = re.compile(
    r"(?:\bprimary\s+tumou?r|\btumou?r)(?:\s+(?:is|was|stage|category|classified\s+as))?\s*$"
)
_TUMOR_AFTER = re.compile(r"\s+(?:primary\s+)?tumou?r\b")


def _tnm(normalized: str) -> list[StageMention]:
    out: list[StageMention] = []
    for match in _TNM_RE.finditer(normalized):
        groups = match.groupdict()
        parts = [
            ("tnm_t", groups.get("tp"), groups.get("t"), "t"),
            ("tnm_n", groups.get("np") or groups.get("np2"), groups.get("n") or groups.get("n2"), "n"),
            ("tnm_m", groups.get("mp") or groups.get("mp2"), groups.get("m") or groups.get("m2"), "m"),
        ]
        present = [p for p in parts if p[2] is not None]
        if not present:
            continue
        start, end = match.span()
        if len(present) == 1:
            system, prefix, _, _ = present[0]
            context = normalized[max(0, start - 80) : end + 40]
            if not prefix and not _STAGING_CONTEXT.search(context):
                continue
            if _NOT_TNM_AFTER.match(normalized, end) or _FREE_HORMONE.search(normalized[:start]):
                continue
            if system == "tnm_t" and not prefix and re.fullmatch(r"t[1-4]", match.group(0)):
                # a bare "T2" needs the tumour named right next to it
                near = normalized[max(0, start - 30) : end + 12]
                if not re.search(r"tumou?r|stag|tnm|ajcc|primary", near):
                    continue
        if present[0][0] == "tnm_t":
            before = _PRIMARY_BEFORE.search(normalized[max(0, start - 40) : start])
            if before is not None:
                start = start - (min(start, 40) - before.start())
            after = _TUMOR_AFTER.match(normalized, end)
            t_end = after.end() if after is not None and len(present) == 1 else end
        else:
            t_end = end
        for system, prefix, value, _ in present:
            out.append(
                StageMention(system, str(value), start, t_end if system == "tnm_t" else end, prefix or "")
            )
    return out


# Long forms of N and M. Negated forms first; an affirmed one never inside a negated one.
# ("metastatic" and "metastases" arrive normalised as "metastasis".)
_NEGATOR = (
    r"(?:no|without|negative\s+for|free\s+of|absence\s+of|absent)\s+"
    r"(?:evidence\s+of\s+|signs?\s+of\s+|any\s+)?"
)
_MET = r"(?:metastasis|metastases|metastatic)(?:\s+disease)?"
_NODES = r"(?:regional\s+)?(?:lymph\s+node|lymph\s+nodal|nodal|node)s?"
_N0_RE = re.compile(
    r"\b(?:" + _NEGATOR + _NODES + r"\s+(?:" + _MET + r"|involvement|disease|spread)"
    r"|node[\s-]+negative|(?:regional\s+)?(?:lymph\s+)?nodes?\s+(?:were\s+|are\s+|is\s+)?(?:all\s+)?negative"
    r"|negative\s+(?:regional\s+)?(?:lymph\s+)?nodes|0\s*(?:/|of)\s*\d+\s+(?:lymph\s+)?nodes?"
    r"|(?:lymph\s+)?nodes?\s*:?\s*\(?0\s*/\s*\d+\)?)"
)
_N_POSITIVE_RE = re.compile(
    r"\b(?:" + _NODES + r"\s+(?:" + _MET + r"|involvement)"
    r"|node[\s-]+positive|positive\s+(?:regional\s+)?(?:lymph\s+)?nodes"
    r"|" + _MET + r"\s+to\s+(?:\d+\s+(?:of\s+\d+\s+)?)?(?:the\s+)?(?:regional\s+)?(?:lymph\s+)?nodes?"
    r"|[1-9]\d*\s*(?:/|of)\s*\d+\s+(?:lymph\s+)?nodes?\s+(?:positive|involved)"
    r"|(?:lymph\s+)?nodes?\s*:\s*\(?[1-9]\d*\s*/\s*\d+\)?)"
)
_DISTANT_SITES = (
    r"(?:liver|lungs?|bones?|brain|adrenals?|adrenal\s+glands?|peritoneum|pleura|skin|ovar(?:y|ies)|spine"
    r"|distant\s+\w+)"
)
_NOT_NODAL = r"(?!\s+(?:to|in)\s+(?:the\s+)?(?:\d+\s+)?(?:regional\s+)?(?:lymph|node))"
_M0_RE = re.compile(
    r"\b(?:"
    + _NEGATOR
    + r"(?:distant\s+(?:"
    + _MET
    + r"|spread|disease)|"
    + _MET
    + _NOT_NODAL
    + r")|nonmetastatic|non\s+metastatic|non\s+metastasis|m0\s+disease)"
)
_M1_RE = re.compile(
    r"\b(?:distant\s+(?:" + _MET + r"|spread)"
    r"|" + _MET + r"\s+(?:to|in|of)\s+(?:the\s+)?(?:both\s+)?" + _DISTANT_SITES + r"\b"
    r"|(?:liver|hepatic|lung|pulmonary|bone|osseous|skeletal|brain|cerebral|adrenal|peritoneal|pleural)\s+"
    + _MET
    + r"|"
    + _MET
    + r"(?:\s+\w+){0,3}?\s+(?:cancer|carcinoma|adenocarcinoma|melanoma|sarcoma)\b"
    r"|metastasis\s+disease" + _NOT_NODAL + r")"
)
_NODAL_BEFORE = re.compile(
    r"\b(?:lymph\s+nodes?|nodes?|nodal|sentinel)\b(?!.*\b(?:distant|liver|lung|bone|brain)\b)"
)
_NEGATED_BEFORE = re.compile(
    r"\b(?:no|without|negative\s+for|free\s+of|absence\s+of|not|non)\s+(?:\w+\s+){0,3}$"
)


def _long_tnm(normalized: str, taken: list[tuple[int, int]]) -> list[StageMention]:
    out: list[StageMention] = []
    spans = list(taken)

    def free(a: int, b: int) -> bool:
        return not any(x < b and a < y for x, y in spans)

    for regex, system, value in ((_N0_RE, "tnm_n", "0"), (_M0_RE, "tnm_m", "0")):
        for match in regex.finditer(normalized):
            if free(*match.span()):
                clause = re.split(r"[;.,]", normalized[max(0, match.start() - 50) : match.start()])[-1]
                # "the lymph node biopsy was negative for metastases": the nodes
                system_here = "tnm_n" if system == "tnm_m" and _NODAL_BEFORE.search(clause) else system
                out.append(StageMention(system_here, value, *match.span()))
                spans.append(match.span())
    for regex, system, value in ((_N_POSITIVE_RE, "tnm_n", "+"), (_M1_RE, "tnm_m", "1")):
        for match in regex.finditer(normalized):
            if not free(*match.span()):
                continue
            clause = normalized[max(0, match.start() - 60) : match.start()]
            clause = re.split(r"[;.]", clause)[-1]
            if _NEGATED_BEFORE.search(clause):
                continue
            out.append(StageMention(system, value, *match.span()))
            spans.append(match.span())
    return out


# Depth of invasion of a hollow organ's wall (AJCC 8th edition, colon and rectum, stomach,
# small bowel, bladder): the T category it defines.
_INVASION_RE = re.compile(
    r"\b(?:invad\w*|invasion|infiltrat\w*|extend\w*|extension|penetrat\w*|through|into)\s+(?:\w+\s+){0,3}?"
    r"(?P<layer>submucosa|muscularis\s+propria|subserosa|pericolic\s+\w+|pericolorectal\s+\w+|perirectal\s+\w+"
    r"|perivesical\s+\w+|perigastric\s+\w+|visceral\s+peritoneum|serosa)\b"
)
_LAYER_T = {
    "submucosa": "1",
    "muscularis propria": "2",
    "subserosa": "3",
    "pericolic": "3",
    "pericolorectal": "3",
    "perirectal": "3",
    "perivesical": "3",
    "perigastric": "3",
    "visceral peritoneum": "4a",
    "serosa": "4a",
}


def _invasion(normalized: str) -> list[StageMention]:
    out: list[StageMention] = []
    for match in _INVASION_RE.finditer(normalized):
        layer = re.sub(r"\s+", " ", match.group("layer"))
        value = _LAYER_T.get(layer) or _LAYER_T.get(layer.split()[0])
        if value is None:
            continue
        if re.search(r"\bthrough\s+(?:\w+\s+){0,3}?muscularis\s+propria", match.group(0)):
            value = "3"  # through the muscularis propria into the tissue beyond
        clause = re.split(r"[;.]", normalized[max(0, match.start() - 40) : match.start()])[-1]
        if _NEGATED_BEFORE.search(clause) or re.search(r"\bno\s+$", clause):
            continue
        out.append(StageMention("tnm_t", value, *match.span()))
    return out


# --- stage groups and disease scales --------------------------------------------------
# Words that give a "stage" its system when they stand next to it (the nearest wins).
_STAGE_CONTEXT: tuple[tuple[str, str], ...] = (
    (r"chronic_kidney_disease|kidney\s+disease|ckd", "ckd"),
    (r"acute_kidney_injury|kdigo|akin|aki", "kdigo"),
    (r"gold|copd", "gold"),
    (r"figo", "figo"),
    (
        r"pressure\s+(?:injury|injuries|ulcer|ulcers|sore|sores)|decubitus\s+ulcers?|bed\s*sores?",
        "pressure_injury",
    ),
    (r"hypertension", "hypertension"),
    (r"ann\s+arbor", "ann_arbor"),
    (r"\brai\b", "rai"),
    (r"binet", "binet"),
    (r"bclc|barcelona\s+clinic", "bclc"),
    (r"tanner", "tanner"),
    (r"hoehn\s+and\s+yahr", "hoehn_yahr"),
    (r"heart_failure|heart\s+failure", "heart_failure"),
    (r"lymphedema", "lymphedema"),
)
_STAGE_RE = re.compile(
    r"\bstage\s*(?:group\s*)?(?:of\s+|:\s*)?(?P<v>(?:iv|v|i{1,3}|[0-5])(?:[a-d]\d?|s)?(?:\s*(?:-|to|/)\s*(?:iv|v|i{1,3}|[0-5])"
    r"(?:[a-d]\d?)?)?|[a-d])\b"
)
_CKD_RE = re.compile(
    r"\b(?:chronic_kidney_disease|ckd)\s*(?:,\s*)?(?:stage\s*|category\s*)?(?:of\s+)?g?(?P<v>[1-5][ab]?)(?:a[1-3])?\b"
)
_ESRD_RE = re.compile(r"\bend_stage_renal_disease\b")
_KDIGO_RE = re.compile(
    r"\b(?:acute_kidney_injury|aki|kdigo|akin)\s*(?:,\s*)?(?:stage\s*|grade\s*)?(?P<v>[1-3])\b"
)
_GOLD_RE = re.compile(r"\bgold\s*(?:stage\s*|grade\s*|class\s*)?(?P<v>[1-4])\b")
_NYHA_RE = re.compile(
    r"\b(?:nyha_class|nyha)\s*(?:class\s*)?(?P<v>"
    + _ROMAN_OR_DIGIT
    + r"(?:\s*(?:-|to|/|\s)\s*"
    + _ROMAN_OR_DIGIT
    + r")?)\b"
)
_GLEASON_RE = re.compile(
    r"\bgleason(?:\s+(?:score|grade|sum|pattern))?(?:\s+(?:of|is|was|=|:))?\s*"
    r"(?:(?P<a>[1-5])\s*\+\s*(?P<b>[1-5])(?:\s*=\s*(?P<s>\d{1,2}))?"
    r"|(?P<s2>\d{1,2})(?:\s*\(\s*(?P<a2>[1-5])\s*\+\s*(?P<b2>[1-5])\s*\))?)"
)
_GRADE_GROUP_RE = re.compile(
    r"\b(?:(?:isup|who|isup/who)\s+)?(?:grade\s+group|gg)\s*(?:of\s+|:\s*)?(?P<v>[1-5]|iv|v|i{1,3})\b"
)
_GRADE_SCHEMES = (
    r"nottingham|elston(?:\s+ellis)?|modified\s+bloom\s+richardson|bloom\s+richardson|histologic(?:al)?|nuclear"
    r"|fuhrman|who|fnclcc|tumou?r|isup"
)
_GRADE_RE = re.compile(
    r"\b(?:(?P<scheme>" + _GRADE_SCHEMES + r")\s+)?grade\s*(?!group)(?:of\s+|:\s*)?(?P<v>[1-4]|iv|i{1,3})"
    r"(?:\s*(?:\(\s*)?(?:of|/)\s*(?P<of>[2-4]|vi|6)\)?)?(?![\w/])"
)
_MURMUR_AFTER = re.compile(r"\s*(?:out\s+of\s+6\b|(?:\w+\s+){0,3}murmur)")
_FEVER_AFTER = re.compile(r"\s+(?:fever|fevers|temperature|temperatures|pyrexia)\b")
_GRADE_WORD_RE = re.compile(r"\b(?P<v>low|intermediate|high)\s+grade\b")
_CLASS_SCALES: tuple[tuple[str, str, str], ...] = (
    # (pattern before the value, system, value pattern)
    (r"child\s+pugh\s*(?:class\s*|score\s*|grade\s*)?", "child_pugh", r"[abc]"),
    (r"killip\s*(?:class\s*)?", "killip", _ROMAN_OR_DIGIT),
    (r"mallampati\s*(?:class\s*|score\s*)?", "mallampati", _ROMAN_OR_DIGIT),
    (
        r"(?:ecog_performance_status|ecog(?:\s+ps)?|who\s+performance\s+status)\s*(?:of\s+|:\s*)?",
        "ecog",
        r"[0-5]",
    ),
)


def _system_of_stage(normalized: str, start: int, end: int) -> str:
    """The system of a "stage" from the disease or scheme named nearest to it in its
    clause (within 40 characters), else ``stage``."""
    left = re.split(r"[;.(]", normalized[max(0, start - 40) : start])[-1]
    right = re.split(r"[;.,(]", normalized[end : end + 40])[0]
    best: tuple[int, str] | None = None
    for pattern, system in _STAGE_CONTEXT:
        for match in re.finditer(pattern, left):
            distance = len(left) - match.end()
            if best is None or distance < best[0]:
                best = (distance, system)
        found = re.search(pattern, right)
        if found is not None and (best is None or found.start() < best[0]):
            best = (found.start(), system)
    return best[1] if best else "stage"


def _range(value: str) -> str:
    """ "2 iii" -> "2-3", "ii-iii" -> "2-3", "3" -> "3"."""
    parts = [p for p in re.split(r"\s*(?:-|to|/|\s)\s*", value.strip()) if p]
    return "-".join(_arabic(p) for p in parts)


def _scales(normalized: str, taken: list[tuple[int, int]]) -> list[StageMention]:
    out: list[StageMention] = []
    spans = list(taken)

    def add(system: str, value: str, start: int, end: int, qualifier: str = "") -> None:
        if any(x < end and start < y for x, y in spans):
            return
        out.append(StageMention(system, value, start, end, qualifier))
        spans.append((start, end))

    for match in _GLEASON_RE.finditer(normalized):
        a, b = match.group("a") or match.group("a2"), match.group("b") or match.group("b2")
        total = match.group("s") or match.group("s2")
        if a and b:
            value = f"{a}+{b}"
        elif total and 2 <= int(total) <= 10:
            value = total
        else:
            continue
        add("gleason", value, match.start(), match.end())
    for match in _GRADE_GROUP_RE.finditer(normalized):
        add("grade_group", _arabic(match.group("v")), match.start(), match.end())
    for match in _CKD_RE.finditer(normalized):
        add("ckd", match.group("v"), match.start(), match.end())
    for match in _ESRD_RE.finditer(normalized):
        add("ckd", "5", match.start(), match.end())
    for match in _KDIGO_RE.finditer(normalized):
        system = (
            "ckd"
            if re.search(r"chronic_kidney_disease|ckd", normalized[match.start() : match.end() + 20])
            else "kdigo"
        )
        add(system, match.group("v"), match.start(), match.end())
    for match in _GOLD_RE.finditer(normalized):
        add("gold", match.group("v"), match.start(), match.end())
    for match in _NYHA_RE.finditer(normalized):
        add("nyha", _range(match.group("v")), match.start(), match.end())
    for pattern, system, value_pattern in _CLASS_SCALES:
        for match in re.finditer(r"\b" + pattern + r"(?P<v>" + value_pattern + r")\b", normalized):
            add(system, _arabic(match.group("v")), match.start(), match.end())
    for match in _STAGE_RE.finditer(normalized):
        value = match.group("v")
        system = _system_of_stage(normalized, match.start(), match.end())
        if len(value) == 1 and value in "abcd" and system not in ("bclc", "binet", "heart_failure"):
            continue  # "stage a" only in schemes with letters
        add(
            system,
            _range(value) if re.search(r"[\s/-]|to", value) else _arabic(value),
            match.start(),
            match.end(),
        )
    for match in _GRADE_RE.finditer(normalized):
        if match.group("of") in ("6", "vi") or _MURMUR_AFTER.match(normalized, match.end()):
            continue  # a heart murmur ("grade 3/6", "grade 3 out of 6 systolic murmur")
        scheme = re.sub(r"\s+", " ", match.group("scheme") or "")
        if scheme in ("histologic", "histological", "tumor", "tumour"):
            scheme = ""
        add("grade", _arabic(match.group("v")), match.start(), match.end(), scheme)
    for match in _GRADE_WORD_RE.finditer(normalized):
        if not _FEVER_AFTER.match(normalized, match.end()):  # "low-grade fever" is a temperature
            add("grade", match.group("v"), match.start(), match.end())
    return out


@lru_cache(maxsize=8192)
def stage_mentions(normalized: str) -> tuple[StageMention, ...]:
    """The stages, classes and grades of ``normalized`` (see the module docstring), in
    text order."""
    found = _tnm(normalized)
    found += _invasion(normalized)
    found += _long_tnm(normalized, [(m.start, m.end) for m in found])
    found += _scales(normalized, [(m.start, m.end) for m in found if m.system != "tnm_t"])
    found.sort(key=lambda m: (m.start, m.system))
    return tuple(found)


# --- comparing ------------------------------------------------------------------------
# ISUP grade group of a Gleason pattern or score (Epstein et al., 2016; ISUP 2014
# consensus): 3+3 or less is 1, 3+4 is 2, 4+3 is 3, 8 is 4, 9 and 10 are 5; a score of 7
# alone is 2 or 3.
def _grade_group(gleason: str) -> str | None:
    if "+" in gleason:
        a, b = (int(x) for x in gleason.split("+"))
        total = a + b
        if total == 7:
            return "2" if a == 3 else "3"
    else:
        total = int(gleason)
        if total == 7:
            return None
    if total <= 6:
        return "1"
    return "4" if total == 8 else "5"


def _gleason_total(value: str) -> int:
    return sum(int(x) for x in value.split("+"))


def _order(value: str) -> tuple[int, str] | None:
    """ "3b" -> (3, "b"), "4" -> (4, ""); ``None`` for what is no numbered category."""
    match = re.fullmatch(r"(\d)([a-d]?\d?)", value)
    return (int(match.group(1)), match.group(2)) if match else None


def _in_range(value: str, low: str, high: str) -> bool | None:
    """Whether ``value`` is inside ``low``-``high`` (``None``: a category that may or may
    not be, "3" against "3a-3b")."""
    v, lo, hi = _order(value), _order(low), _order(high)
    if v is None or lo is None or hi is None:
        return None
    if v[0] < lo[0] or v[0] > hi[0]:
        return False
    if not v[1]:
        return True if lo[0] < v[0] < hi[0] or (not lo[1] and not hi[1]) else None
    return lo <= v <= hi


def _compare_values(claim: str, evidence: str) -> Relation | None:
    """How a claim's value relates to the evidence's, in one system."""
    if claim == evidence:
        return "agree"
    if "x" in (claim, evidence):
        return None  # not assessed
    if claim == "+" or evidence == "+":
        # any positive node: N1, N2, N3 and their subcategories
        other = evidence if claim == "+" else claim
        if other.startswith("0"):
            return "conflict"
        return "agree" if claim == "+" else None
    if "-" in claim or "-" in evidence:
        if "-" in claim and "-" not in evidence:
            inside = _in_range(evidence, *claim.split("-", 1))
            return None if inside is None else ("agree" if inside else "conflict")
        if "-" in evidence and "-" not in claim:
            inside = _in_range(claim, *evidence.split("-", 1))
            return "conflict" if inside is False else None
        return None
    # a category and its subcategory: "T1" is said by "T1c", "T1c" is not said by "T1"
    if evidence.startswith(claim) and claim[:1].isdigit():
        return "agree"
    if claim.startswith(evidence) and evidence[:1].isdigit():
        return None
    return "conflict"


def stage_relation(claim: StageMention, evidence: StageMention) -> Relation | None:
    """Whether the evidence's mention states the claim's (``agree``), contradicts it
    (``conflict``), or neither (``None``: another system, another basis of a TNM
    category or another grading scheme, or the claim is more specific than the evidence).

    * the same value agrees, "stage IV" / "stage 4", "CKD 3a" / "CKD stage 3a";
    * another value conflicts: "3a" / "3b", "T2" / "T3", "N0" / "N1", "M0" / "M1";
    * a category is stated by its subcategory ("T1" by "T1c", "M1" by "M1b"), not the other
      way round;
    * "node positive" ("+") is stated by N1 to N3 and conflicts with N0;
    * a range ("NYHA II-III") is stated by a value inside it;
    * Gleason: "3+4" and "4+3" conflict; a score ("7") is stated by a pattern that adds up
      to it ("3+4"); a Gleason pattern and an ISUP grade group are compared through the
      grade group the pattern defines (3+4 is grade group 2);
    * an unknown category ("Tx", "Nx") relates to nothing.
    """
    systems = {claim.system, evidence.system}
    if systems == {"gleason", "grade_group"}:
        if claim.system == "grade_group":
            group = _grade_group(evidence.value)
            if group is None:
                return None
            return "agree" if group == claim.value else "conflict"
        group = _grade_group(claim.value)
        if group is None:
            # a score of 7 is grade group 2 or 3
            return "agree" if evidence.value in ("2", "3") else "conflict"
        return "agree" if group == evidence.value else "conflict"
    if claim.system != evidence.system:
        return None
    if claim.qualifier and evidence.qualifier and claim.qualifier != evidence.qualifier:
        return None  # clinical vs pathological, or two grading schemes
    if claim.system == "gleason":
        if claim.value == evidence.value:
            return "agree"
        if "+" in claim.value and "+" in evidence.value:
            return "conflict"
        if _gleason_total(claim.value) != _gleason_total(evidence.value):
            return "conflict"
        return "agree" if "+" in evidence.value else None
    return _compare_values(claim.value, evidence.value)


def stage_relations(
    claim_mentions: Iterable[StageMention], evidence_mentions: Iterable[StageMention]
) -> list[StageRelation]:
    """For each claim mention that an evidence mention relates to: the relation, with the
    evidence mention. An agreeing mention wins over conflicting ones (the evidence may
    give a clinical and a pathological stage, or a stage before and after treatment); a
    claim mention nothing relates to is left out."""
    evidence = list(evidence_mentions)
    out: list[StageRelation] = []
    for mine in claim_mentions:
        related = [(theirs, stage_relation(mine, theirs)) for theirs in evidence]
        agree = next((theirs for theirs, rel in related if rel == "agree"), None)
        if agree is not None:
            out.append(StageRelation(mine, agree, "agree"))
            continue
        conflict = next((theirs for theirs, rel in related if rel == "conflict"), None)
        if conflict is not None:
            out.append(StageRelation(mine, conflict, "conflict"))
    return out
