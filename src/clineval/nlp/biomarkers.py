"""Biomarker statuses: which marker a text calls positive or negative ("EGFR exon 19
deletion detected", "KRAS wild-type", "ER/PR positive, HER2 negative", "MSI-H", "MGMT
promoter unmethylated", "no pathogenic variant in BRCA1").

:func:`biomarker_statuses` reads a text already passed through
:func:`clineval.nlp.terms.normalize`, which spells out "ER" and "PR" next to a receptor
status as the oestrogen and progesterone receptors; "er" and "pr" left as they are (the
emergency room, the PR interval, "pr-" said and broken off) are no markers here. Each
status names its marker in a
canonical form, ``positive`` or ``negative``, where it is, and the detail given with it
(a variant such as "exon 19 deletion" or "g12c", an IHC score, a ratio, a percentage).

*Positive* means the alteration or expression the marker is tested for is there:
detected, mutated, amplified, overexpressed, rearranged or fused, a pathogenic variant,
an IHC score of 3+ (HER2), a percentage of at least 1 (receptors, PD-L1), high
microsatellite instability, deficient mismatch repair (lost expression of MLH1, MSH2,
MSH6 or PMS2), a methylated MGMT promoter. *Negative* is its absence: wild-type, not
detected, no mutation, not amplified, 0 or 1+ (HER2), microsatellite stable or MSI-low,
proficient or intact mismatch repair, unmethylated. An equivocal result (HER2 2+), a
variant of uncertain significance, or a test without a result ("EGFR testing pending")
gives no status.

A status is read from the words after the marker up to the next marker, a comma or the
end of the clause, and from the words right before it ("negative for", "no", "wild-type
KRAS", "loss of MLH1"). A negation before the result word reverses it ("no KRAS mutation
detected", "BRCA1: no pathogenic variant identified"), and so does one after an
alteration word ("ALK rearrangement: not detected"). Markers joined by "/", "," or "and"
with no result of their own share the result that follows ("ER/PR positive", "negative
for EGFR, ALK and ROS1 alterations"). Any other gene symbol counts as a marker when an
alteration word follows it ("PIK3CA H1047R mutation", "RET fusion").

:func:`status_conflicts` pairs the statuses of two texts that say opposite things of one
marker, :func:`status_agreements` those that say the same thing in other words ("KRAS
wild-type" / "no KRAS mutation detected", "mismatch repair deficient" / "loss of MLH1 and
PMS2").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = ["BiomarkerStatus", "biomarker_statuses", "status_agreements", "status_conflicts"]

Status = Literal["positive", "negative"]


@dataclass(frozen=True)
class BiomarkerStatus:
    """One marker's status in a text."""

    marker: str
    """Canonical name: ``egfr``, ``her2``, ``er``, ``pr``, ``alk``, ``ros1``, ``kras``,
    ``nras``, ``braf``, ``brca1``, ``brca2``, ``brca``, ``pd-l1``, ``msi``, ``mmr``,
    ``idh1``, ``idh2``, ``idh``, ``mgmt``, ``p53``, ``ki-67``, or another gene symbol in
    lower case."""
    status: Status
    start: int
    end: int
    """Character span in the normalised text: the marker and the words that give its
    status."""
    detail: str | None = None
    """What was found, as written (normalised): a variant ("exon 19 deletion", "g12c"),
    an IHC score ("3+"), a ratio ("ratio 3.1"), a percentage ("90%")."""

    @property
    def variant(self) -> str | None:
        """The detail when it names a particular variant (an exon, an amino-acid change,
        a fusion partner), which a status about another variant does not contradict."""
        if self.detail and _VARIANT_DETAIL_RE.search(self.detail):
            return self.detail
        return None


# --- markers --------------------------------------------------------------------------
# Surface forms (normalised, lower case) -> canonical marker.
_MARKER_FORMS: dict[str, str] = {
    "egfr": "egfr",
    "her2": "her2",
    "her-2": "her2",
    "her 2": "her2",
    "her2/neu": "her2",
    "her-2/neu": "her2",
    "erbb2": "her2",
    "human epidermal growth factor receptor 2": "her2",
    "human epidermal growth factor receptor": "her2",
    "her2 receptor": "her2",
    "her2 receptors": "her2",
    "estrogen receptor": "er",
    "estrogen receptors": "er",
    "oestrogen receptor": "er",
    "oestrogen receptors": "er",
    "progesterone receptor": "pr",
    "progesterone receptors": "pr",
    "pgr": "pr",
    "alk": "alk",
    "ros1": "ros1",
    "ros-1": "ros1",
    "kras": "kras",
    "nras": "nras",
    "braf": "braf",
    "brca1": "brca1",
    "brca2": "brca2",
    "brca": "brca",
    "brca1/2": "brca",
    "pd-l1": "pd-l1",
    "pdl1": "pd-l1",
    "pd l1": "pd-l1",
    "programmed death ligand 1": "pd-l1",
    "programmed death-ligand 1": "pd-l1",
    "msi": "msi",
    "microsatellite instability": "msi",
    "microsatellite status": "msi",
    "microsatellite": "msi",
    "mmr": "mmr",
    "mismatch repair": "mmr",
    "mismatch repair proteins": "mmr",
    "mismatch repair protein": "mmr",
    "mlh1": "mmr",
    "msh2": "mmr",
    "msh6": "mmr",
    "pms2": "mmr",
    "idh1": "idh1",
    "idh2": "idh2",
    "idh": "idh",
    "idh1/2": "idh",
    "mgmt": "mgmt",
    "mgmt promoter": "mgmt",
    "p53": "p53",
    "tp53": "p53",
    "ki-67": "ki-67",
    "ki67": "ki-67",
    "ki 67": "ki-67",
    "mib-1": "ki-67",
}
# Forms that carry their status in themselves.
_SELF_STATUS: dict[str, tuple[str, Status]] = {
    "msi-h": ("msi", "positive"),
    "msi-high": ("msi", "positive"),
    "msi high": ("msi", "positive"),
    "msi h": ("msi", "positive"),
    "msih": ("msi", "positive"),
    "msi-l": ("msi", "negative"),
    "msi-low": ("msi", "negative"),
    "msi low": ("msi", "negative"),
    "mss": ("msi", "negative"),
    "microsatellite stable": ("msi", "negative"),
    "microsatellite stability": ("msi", "negative"),
    "microsatellite unstable": ("msi", "positive"),
    "microsatellite instability high": ("msi", "positive"),
    "microsatellite instability-high": ("msi", "positive"),
    "high microsatellite instability": ("msi", "positive"),
    "microsatellite instability low": ("msi", "negative"),
    "microsatellite instability-low": ("msi", "negative"),
    "low microsatellite instability": ("msi", "negative"),
    "dmmr": ("mmr", "positive"),
    "pmmr": ("mmr", "negative"),
    "mismatch repair deficient": ("mmr", "positive"),
    "mismatch repair deficiency": ("mmr", "positive"),
    "deficient mismatch repair": ("mmr", "positive"),
    "mismatch repair proficient": ("mmr", "negative"),
    "proficient mismatch repair": ("mmr", "negative"),
}


def _split(text: str) -> frozenset[str]:
    return frozenset(text.lower().split())


# "triple-negative breast cancer": the two receptors and HER2.
_TRIPLE_RE = re.compile(r"\btriple[\s-]*(negative|positive)\b")

# Known markers that are ordinary English words or too short to be read as genes unless
# an alteration word follows them.
_KNOWN_GENES = _split(
    """tp53 pik3ca pten ntrk ntrk1 ntrk2 ntrk3 ret met fgfr1 fgfr2 fgfr3 fgfr4 esr1 stk11 keap1
    cdkn2a nf1 nf2 atm palb2 chek2 apc tert atrx kit pdgfra jak2 flt3 npm1 cebpa calr mpl sf3b1
    erbb3 erbb4 map2k1 akt1 ctnnb1 smad4 arid1a vhl rb1 hras mtor tsc1 tsc2 cdk4 mdm2 myc mycn
    bcr-abl bcr-abl1 abl1 eml4-alk kmt2a cd274 polE pold1 rad51c rad51d brip1 bard1 mutyh
    msh3 epcam"""
)
# Words that look like gene symbols before "mutation" but are not.
_NOT_GENES = _split(
    """no any a an the this that these gene genes germline somatic missense frameshift nonsense
    splice truncating activating sensitizing sensitising pathogenic deleterious inframe in-frame
    hotspot biallelic monoallelic heterozygous homozygous driver point known new other de novo
    resistance targetable actionable additional second secondary acquired de-novo single
    multiple common rare specific recurrent founder familial hereditary inherited clonal
    subclonal compound likely benign variant mutation mutations"""
)
_ALTERATION_WORD = (
    r"(?:mutation|mutations|mutated|mutant|variant|variants|rearrangement|rearrangements|rearranged"
    r"|fusion|fusions|amplification|amplified|alteration|alterations|translocation|deletion|insertion"
    r"|skipping)"
)

# What may stand between markers that share one result ("ER/PR", "MLH1, PMS2 and MSH6",
# "estrogen receptor (ER)"); not a sign ("ER-/PR+" gives each its own).
_SEPARATOR_RE = re.compile(r"^[\s/,&()]*(?:(?:and|or)[\s/,&()]*)?$")


def _forms_regex() -> re.Pattern[str]:
    forms = sorted({*_MARKER_FORMS, *_SELF_STATUS}, key=len, reverse=True)
    alternatives = "|".join(re.escape(f).replace(r"\ ", r"[\s-]+") for f in forms)
    # "estrogen and progesterone receptor": the first receptor named by its hormone only
    hormones = r"(?:estrogen|oestrogen|progesterone)(?=\s*(?:and|&|/|,)\s+(?:[\w-]+\s+){0,6}?receptors?\b)"
    return re.compile(r"(?<![\w-])(?:" + hormones + "|" + alternatives + r")(?![\w]|-(?:l1|67)\b)(?!/cep)")


_FORMS_RE = _forms_regex()
_GENE_RE = re.compile(
    r"(?<![\w-])(?P<gene>[a-z][a-z0-9]{1,7}(?:-[a-z0-9]{2,7})?)"
    r"(?=(?:\s+(?:gene|germline|somatic|exon\s+\d+|[a-z]\d{1,4}[a-z*]|c\.\S+|p\.\S+))*[\s-]+"
    + _ALTERATION_WORD
    + r"\b)"
)


# --- status words ---------------------------------------------------------------------
# Each pattern is tried at every position of the words after a marker; the first that
# matches decides. ``None`` marks words that end the search without a status.
_NEGATIVE_WORDS = (
    r"wild[\s-]*type|wildtype|wt|not\s+detected|not\s+identified|not\s+found|not\s+present|not\s+seen"
    r"|none\s+detected|none\s+identified|undetected|undetectable|negative|neg|not\s+amplified"
    r"|non[\s-]*amplified|unamplified|not\s+mutated|non[\s-]*mutated|unmutated|not\s+rearranged"
    r"|unmethylated|non[\s-]*methylated|not\s+methylated|absent|no\s+evidence"
)
_POSITIVE_WORDS = (
    r"positive|positivity|pos|detected|identified|present|found|mutated|mutant|amplified|overexpressed"
    r"|overexpression|rearranged|methylated|carrier|aberrant"
)
# Words that name an alteration: positive unless a negation follows or precedes them.
_ALTERATION_NOUNS = (
    r"mutations?|variants?|rearrangements?|fusions?|amplification|translocation|deletion|insertion"
    r"|duplication|skipping|alterations?|methylation"
)
_ALTERATION_END_RE = re.compile(r"\b(?:" + _ALTERATION_NOUNS + r")\s*$")
_TESTING_WORDS = (
    r"testing|test|tests|tested|analysis|status|panel|assay|sequencing|studies|study|result|results|expression"
    r"|staining|stain|level|levels"
)
_NEUTRAL_WORDS = (
    r"variants?\s+of\s+(?:uncertain|unknown|undetermined)\s+significance|vus|equivocal|indeterminate"
    r"|pending|inconclusive|insufficient|failed|not\s+(?:performed|done|assessed|tested|evaluable)"
)
_NEGATORS = r"no|not|without|absence\s+of|negative\s+for|non|never"
_PROTEIN_CHANGE = r"(?:p\.)?[a-z]\d{1,4}(?:[a-z*]|del|ins|dup|fs)\b|c\.\S+"
_PROTEIN_CHANGE_RE = re.compile(_PROTEIN_CHANGE)
_VARIANT_DETAIL_RE = re.compile(
    r"exon\s+\d+|" + _PROTEIN_CHANGE + r"|[a-z0-9]+-(?:alk|ros1|ret|ntrk\d?)|(?:alk|ros1|ret)-[a-z0-9]+"
)

_TOKEN_RE = re.compile(
    r"(?P<neutral>" + _NEUTRAL_WORDS + r")\b"
    r"|(?P<negative>" + _NEGATIVE_WORDS + r")\b"
    r"|(?P<score>[0-3]\s*\+|\+|-(?![\w]))"
    r"|(?P<percent><\s*1\s*%|(?:[<>≥≤]=?\s*)?\d{1,3}(?:\.\d+)?\s*%)"
    r"|(?P<ihc>(?:ihc|immunohistochemistry|score)\s*(?:of\s+|:\s*)?0)\b"
    r"|(?P<cps>(?:tps|cps|tumor\s+proportion\s+score|combined\s+positive\s+score)\s*(?:of\s+|:\s*)?"
    r"(?:[<>≥≤]=?\s*)?\d+(?:\.\d+)?\s*%?)"
    r"|(?P<negator>" + _NEGATORS + r")\b"
    r"|(?P<positive>" + _POSITIVE_WORDS + r")\b"
    r"|(?P<alteration>" + _ALTERATION_NOUNS + r")\b"
    r"|(?P<variant>exon\s+\d+|" + _PROTEIN_CHANGE + r")"
    r"|(?P<testing>" + _TESTING_WORDS + r")\b"
    r"|(?P<msi>high|h|unstable|instability|stable|stability|low|l)\b"
    r"|(?P<mmr>deficient|deficiency|loss|lost|proficient|intact|retained|preserved|expressed|normal)\b"
    r"|(?P<word>[\w.]+)"
)
# Marker-specific readings of words.
_MSI_WORDS: dict[str, Status] = {
    "high": "positive",
    "h": "positive",
    "unstable": "positive",
    "stable": "negative",
    "stability": "negative",
    "low": "negative",
    "l": "negative",
}
_MMR_WORDS: dict[str, Status] = {
    "deficient": "positive",
    "deficiency": "positive",
    "loss": "positive",
    "lost": "positive",
    "absent": "positive",
    "proficient": "negative",
    "intact": "negative",
    "retained": "negative",
    "preserved": "negative",
    "present": "negative",
    "expressed": "negative",
    "normal": "negative",
}
_ALTERATION_BEFORE = (
    r"(?:(?:pathogenic|likely\s+pathogenic|deleterious|germline|somatic|activating|sensitizing)\s+)*"
    r"(?:mutations?|variants?|alterations?|rearrangements?|fusions?|amplification)\s+(?:in|of|involving)(?:\s+the)?"
)
_PREFIX_RE = re.compile(
    r"(?:(?P<negative_for>negative\s+for|\bno\s+" + _ALTERATION_BEFORE + r")"
    r"|(?P<positive_for>positive\s+for|" + _ALTERATION_BEFORE + r")"
    r"|(?P<negator>\b(?:no|not|without|absence\s+of|free\s+of))"
    r"|(?P<wild>wild[\s-]*type|wildtype)|(?P<mutant>mutant|mutated|amplified|rearranged|methylated)"
    r"|(?P<unmethylated>unmethylated)|(?P<loss>loss\s+of(?:\s+expression\s+of)?)"
    r"|(?P<intact>intact|retained)\s+(?:expression\s+of\s+)?)"
    r"(?:\s+(?:evidence\s+of|detectable|detected|known|pathogenic|likely\s+pathogenic|somatic|germline"
    r"|actionable|targetable|activating|sensitizing|driver|deleterious|clinically\s+significant|significant"
    r"|other|an?|the|any))*[\s:-]*$"
)


@dataclass
class _Mention:
    marker: str
    start: int
    end: int
    status: Status | None = None
    status_end: int = 0


def _mentions(normalized: str) -> list[_Mention]:
    found: list[_Mention] = []
    for match in _FORMS_RE.finditer(normalized):
        text = re.sub(r"[\s-]+", " ", match.group(0)).replace("ki 67", "ki-67").replace("pd l1", "pd-l1")
        key = next((k for k in (match.group(0), text, text.replace(" ", "-")) if k in _SELF_STATUS), None)
        if key is not None:
            marker, status = _SELF_STATUS[key]
            found.append(_Mention(marker, match.start(), match.end(), status, match.end()))
            continue
        if text.startswith(("estrogen", "oestrogen")) and "receptor" not in text:
            marker = "er"
        elif text.startswith("progesterone") and "receptor" not in text:
            marker = "pr"
        else:
            marker = (
                _MARKER_FORMS.get(match.group(0))
                or _MARKER_FORMS.get(text)
                or _MARKER_FORMS.get(text.replace(" ", "-"), text)
            )
        found.append(_Mention(marker, match.start(), match.end()))
    taken = [(m.start, m.end) for m in found]
    for match in _GENE_RE.finditer(normalized):
        gene = match.group("gene")
        start, end = match.span("gene")
        if any(a < end and start < b for a, b in taken) or not _gene_like(gene):
            continue
        found.append(_Mention(gene, start, end))
    found.sort(key=lambda m: m.start)
    return found


@lru_cache(maxsize=4096)
def _gene_like(word: str) -> bool:
    """A gene symbol: a known one, or a short token with a digit or that is no English
    word ("pik3ca", "ret", "stk11"), never a describing word ("somatic", "point")."""
    if word in _NOT_GENES or word in _MARKER_FORMS:
        return False
    if word in _KNOWN_GENES:
        return True
    if len(word) > 8 or not word[0].isalpha() or _PROTEIN_CHANGE_RE.fullmatch(word):
        return False  # "g12c", "r132h": a variant of the gene named before it
    if any(c.isdigit() for c in word):
        return True
    from wordfreq import zipf_frequency

    return len(word) <= 6 and zipf_frequency(word, "en") < 2.5


def _status_after(marker: str, window: str) -> tuple[Status | None, int, str | None]:
    """The status the words after a marker give, where its words end, and the detail."""
    negated = False
    alteration_at: int | None = None
    detail: str | None = None
    for match in _TOKEN_RE.finditer(window):
        kind = match.lastgroup or "word"
        word = match.group(0)
        if kind == "neutral":
            return None, match.end(), detail
        if kind == "negative":
            if marker == "mmr" and word == "absent":
                return _flip("positive", negated), match.end(), detail
            return "negative", match.end(), detail
        if kind == "score":
            compact = word.replace(" ", "")
            if compact == "+":
                return _flip("positive", negated), match.end(), detail
            if compact == "-":
                return "negative", match.end(), detail
            if marker == "her2":
                detail = detail or compact
                if compact == "3+":
                    return _flip("positive", negated), match.end(), detail
                if compact == "1+":
                    return "negative", match.end(), detail
                continue  # 2+ is equivocal: a FISH result may follow
            continue
        if kind == "ihc" and marker == "her2":
            return "negative", match.end(), detail or "0"
        if kind == "percent" or kind == "cps":
            detail = detail or word
            if marker in ("er", "pr", "pd-l1"):
                value = _number(word)
                below_one = "<" in word or value < 1
                return ("negative" if below_one else _flip("positive", negated)), match.end(), detail
            continue
        if kind == "negator":
            negated = True
            continue
        if kind == "positive":
            if marker == "mmr" and word == "present":
                return "negative", match.end(), detail
            return _flip("positive", negated), match.end(), detail
        if kind in ("alteration", "variant"):
            if kind == "variant":
                detail = detail or word
            elif detail is None and word.startswith(("deletion", "insertion", "skipping", "duplication")):
                detail = word
            if alteration_at is None:
                alteration_at = match.end()
            continue
        if kind == "testing":
            continue
        if kind == "msi" and marker == "msi":
            if word == "instability":
                continue
            return _flip(_MSI_WORDS[word], negated), match.end(), detail
        if kind == "msi" and marker == "her2" and word == "low":
            return "negative", match.end(), detail
        if kind == "msi" and marker == "pd-l1" and word == "high":
            return _flip("positive", negated), match.end(), detail
        if kind == "mmr" and marker == "mmr":
            return _flip(_MMR_WORDS[word], negated), match.end(), detail
        if kind == "mmr" and word in ("deficient", "deficiency") and marker in _MMR_PROTEIN_MARKERS:
            return _flip("positive", negated), match.end(), detail
    if alteration_at is not None:
        # "KRAS G12C mutation", "EGFR exon 19 deletion": an alteration named is one found
        # (unless a negation came before it); "EGFR mutation testing" names a test only.
        if _names_a_test(window, alteration_at):
            return None, alteration_at, detail
        return _flip("positive", negated), alteration_at, detail
    return None, 0, detail


_MMR_PROTEIN_MARKERS = frozenset({"mmr"})


def _names_a_test(window: str, after: int) -> bool:
    return re.match(r"\s*(?:" + _TESTING_WORDS + r")\b", window[after:]) is not None


def _flip(status: Status, negated: bool) -> Status:
    if not negated:
        return status
    return "negative" if status == "positive" else "positive"


def _number(text: str) -> float:
    found = re.search(r"\d+(?:\.\d+)?", text)
    return float(found.group(0)) if found else 0.0


_ISH_RE = re.compile(r"[\s;,.]*(?:reflex\s+)?(?:fish|ish|sish|cish|in\s+situ\s+hybridi[sz]ation)\b")
_CLAUSE_END = re.compile(r"[;\n,]|\.(?=\s|$)")


def _window_end(normalized: str, start: int, limit: int) -> int:
    """Where the words after a marker stop: the next marker, a clause end, or a comma."""
    found = _CLAUSE_END.search(normalized, start, limit)
    return found.start() if found else limit


def _clause_start(normalized: str, before: int) -> int:
    cut = max(normalized.rfind(c, 0, before) for c in ";.\n")
    return cut + 1


@lru_cache(maxsize=8192)
def biomarker_statuses(normalized: str) -> tuple[BiomarkerStatus, ...]:
    """Every marker status stated in ``normalized`` (see the module docstring), in text
    order; a marker named without a result gives none."""
    mentions = _mentions(normalized)
    out: list[BiomarkerStatus] = []
    for triple in _TRIPLE_RE.finditer(normalized):
        status: Status = "negative" if triple.group(1) == "negative" else "positive"
        out.extend(BiomarkerStatus(m, status, triple.start(), triple.end()) for m in ("er", "pr", "her2"))
    index = 0
    previous_end = 0
    while index < len(mentions):
        # a group: markers joined by separators only ("ER/PR", "EGFR, ALK and ROS1")
        group = [mentions[index]]
        while (
            index + 1 < len(mentions)
            and group[-1].status is None
            and mentions[index + 1].status is None
            and _SEPARATOR_RE.match(normalized[group[-1].end : mentions[index + 1].start])
        ):
            index += 1
            group.append(mentions[index])
        index += 1
        first, last = group[0], group[-1]
        if last.status is not None:
            out.append(BiomarkerStatus(last.marker, last.status, last.start, last.end))
            previous_end = last.end
            continue
        limit = mentions[index].start if index < len(mentions) else len(normalized)
        window_end = _window_end(normalized, last.end, limit)
        window = normalized[last.end : window_end]
        after, words_end, detail = _status_after(last.marker, window)
        if after is None and last.marker == "her2":
            # "HER2 2+ by IHC; FISH not amplified": an equivocal score, then the ISH result
            ish = _ISH_RE.match(normalized, window_end, limit)
            if ish is not None:
                rest = normalized[ish.end() : _window_end(normalized, ish.end(), limit)]
                after, rest_end, _ = _status_after("her2", rest)
                words_end = ish.end() - last.end + rest_end if after is not None else words_end
        before_start = max(_clause_start(normalized, first.start), previous_end)
        before = normalized[before_start : first.start]
        prefix = _PREFIX_RE.search(before)
        found = _combine(prefix, after, last.marker)
        if (
            prefix is not None
            and prefix.lastgroup != "negator"
            and after is not None
            and after != found
            and not _ALTERATION_END_RE.search(window[:words_end])
        ):
            # "positive for ER and negative for PR": a result after the marker that the
            # words before it overrule is the next marker's, not this one's
            words_end = 0
        span_end = last.end + words_end if words_end else last.end
        previous_end = span_end
        if found is None:
            continue
        detail = _detail(normalized[last.end : _window_end(normalized, last.end, len(normalized))]) or detail
        span_start = before_start + prefix.start() if prefix is not None else first.start
        seen: set[str] = set()
        for mention in group:
            if mention.marker not in seen:
                seen.add(mention.marker)
                start = span_start if mention is first else mention.start
                out.append(BiomarkerStatus(mention.marker, found, start, span_end, detail))
    out.sort(key=lambda s: (s.start, s.marker))
    return tuple(out)


def _combine(prefix: re.Match[str] | None, after: Status | None, marker: str) -> Status | None:
    """The status from the words before a marker (``prefix``) and after it."""
    if prefix is None:
        return after
    kind = prefix.lastgroup
    if kind == "negative_for" or kind == "wild" or kind == "unmethylated":
        return "negative"
    if kind == "positive_for" or kind == "mutant":
        return after if after == "negative" and kind == "mutant" else "positive"
    if kind == "loss":
        return "positive" if marker == "mmr" else ("negative" if after is None else after)
    if kind == "intact":
        return "negative" if marker == "mmr" else after
    # a negation: "no KRAS mutation", "without EGFR alterations"
    if after is None:
        return None
    return "negative"


_DETAIL_RE = re.compile(
    r"exon\s+\d+\s+(?:deletion|insertion|skipping|mutation|duplication)s?|exon\s+\d+"
    r"|(?:her2/cep17\s+)?ratio\s*(?:of\s*|:\s*|=\s*)?\d+(?:\.\d+)?|"
    + _PROTEIN_CHANGE
    + r"|[0-3]\+|(?:(?:tps|cps)\s*(?:of\s+|:\s*)?)?(?:[<>≥≤]=?\s*)?\d{1,3}(?:\.\d+)?\s*%"
)


def _detail(window: str) -> str | None:
    found = _DETAIL_RE.search(window)
    return found.group(0) if found else None


# Markers one of whose statuses speaks for another: microsatellite instability and
# deficient mismatch repair go together (MSI-H is dMMR, MSS is pMMR); a family ("IDH",
# "BRCA") negative denies each of its members.
_SAME_AS = {"mmr": "msi"}
_FAMILY = {"idh1": "idh", "idh2": "idh", "brca1": "brca", "brca2": "brca"}


def _about_same_marker(a: BiomarkerStatus, b: BiomarkerStatus) -> bool:
    ma, mb = _SAME_AS.get(a.marker, a.marker), _SAME_AS.get(b.marker, b.marker)
    if ma == mb:
        return True
    # "IDH-wildtype" against "IDH1 R132H mutation": the family's negative covers the member
    negative, positive = (a, b) if a.status == "negative" else (b, a)
    return _FAMILY.get(positive.marker) == negative.marker


def status_conflicts(
    claim_statuses: Sequence[BiomarkerStatus] | Iterable[BiomarkerStatus],
    evidence_statuses: Sequence[BiomarkerStatus] | Iterable[BiomarkerStatus],
) -> list[tuple[BiomarkerStatus, BiomarkerStatus]]:
    """Pairs (claim's, evidence's) that give one marker opposite statuses: "EGFR
    wild-type" against "EGFR exon 19 deletion detected", "MSS" against "MSI-H" or "dMMR".
    A negative about one variant does not contradict a positive about another ("EGFR
    T790M not detected" / "EGFR exon 19 deletion detected"), and a negative of one member
    does not contradict a positive of its family ("BRCA2: no pathogenic variant" / "BRCA
    mutation")."""
    evidence = list(evidence_statuses)
    out: list[tuple[BiomarkerStatus, BiomarkerStatus]] = []
    for mine in claim_statuses:
        for theirs in evidence:
            if mine.status == theirs.status or not _about_same_marker(mine, theirs):
                continue
            negative = mine if mine.status == "negative" else theirs
            positive = theirs if negative is mine else mine
            if negative.variant is not None and negative.variant != positive.variant:
                continue  # a negative about one variant says nothing of another
            out.append((mine, theirs))
    return out


def status_agreements(
    claim_statuses: Sequence[BiomarkerStatus] | Iterable[BiomarkerStatus],
    evidence_statuses: Sequence[BiomarkerStatus] | Iterable[BiomarkerStatus],
) -> list[tuple[BiomarkerStatus, BiomarkerStatus]]:
    """Pairs (claim's, evidence's) that give one marker the same status ("KRAS wild-type" /
    "no KRAS mutation detected", "MSI-H" / "dMMR"), each claim status once, with the
    evidence's first; a claim status about a variant needs the same variant or none in
    the evidence ("KRAS G12C mutation" is not stated by "KRAS G12D mutation" or "KRAS
    mutation"), and a negative about a variant states nothing of the gene ("EGFR T790M
    not detected" does not state "no EGFR mutation"). A family's negative states its
    members' ("BRCA negative" states "no BRCA1 variant"); its positive does not ("BRCA
    mutation" does not state "BRCA1 mutation")."""
    evidence = list(evidence_statuses)
    out: list[tuple[BiomarkerStatus, BiomarkerStatus]] = []
    for mine in claim_statuses:
        for theirs in evidence:
            if mine.status != theirs.status:
                continue
            same = _SAME_AS.get(mine.marker, mine.marker) == _SAME_AS.get(theirs.marker, theirs.marker)
            family_denies = theirs.status == "negative" and _FAMILY.get(mine.marker) == theirs.marker
            if not (same or family_denies):
                continue
            # A positive about a variant needs that variant ("EGFR mutation" does not say
            # which); a negative about a variant says nothing of the others ("T790M not
            # detected" is not "no EGFR mutation").
            specific, general = (mine, theirs) if mine.status == "positive" else (theirs, mine)
            if specific.variant is not None and general.variant != specific.variant:
                continue
            out.append((mine, theirs))
            break
    return out
