"""Natural-language tool-building requests: automated tool building from what the core writes.

RadA-BenchPlat's agent, finding a tool missing, writes a tool-building specification in
natural language ("I need a model to calculate the biomarker size in Chest X-ray"; "Head
and Neck X-ray Organ Segmentation Tool needed to identify and outline organs ... Must work
specifically with X-ray modality for head and neck region"): the tool category, the
imaging modality, the anatomical target and, for a capability, what the tool must be
able to output. The simulated builder assumes that a well-specified request gives a
suitable tool.

:func:`parse_build_request` reads such a ``<Request>`` text into a :class:`BuildRequest`;
:func:`request_problem` checks it against the tool set's gap and says, in one sentence, why
a request does not specify the missing tool (None: it does, and the tool is built):

* the category: the first tool category the request names (by its name, e.g. "Organ
  Segmentor", "anomaly detection", or a phrase such as "segment the organs", "calculate
  the biomarker"); none named is a failure; it must be the gap's category;
* the region and the modality: the ones named ("head/neck", "chest", "CT", "X-ray",
  "radiograph", ...), or "any region"/"any modality"/"universal". Two different regions
  (or modalities) are a failure. A missing *specific* tool needs the image's region and
  modality, both named (a universal request does not state this gap, as with the NoCall's
  fields); otherwise a region or modality, if named, must be the image's;
* a biomarker quantifier or indicator evaluator for the organ or the anomaly: if the
  request says which, it must be the needed one;
* a missing capability: the request must say what the tool must output -- the needed
  label, or that it must work without a label list ("any", "all", "every",
  "unrestricted", "not only").
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from clineval.environments.radbench.model import BiomarkerKind, Gap, Record
from clineval.environments.radbench.tools import same_label
from clineval.environments.radbench.vocab import CATEGORY_NAMES, Category

__all__ = ["BuildRequest", "parse_build_request", "request_problem"]

C = Category

_CATEGORY_CUES: dict[Category, str] = {
    C.ANATOMY_CLASSIFIER: r"anatomy classif\w*|anatomical classif\w*|(?:classif|identif|recogni)\w* (?:the )?"
    r"(?:anatomy|body (?:part|region))",
    C.MODALITY_CLASSIFIER: r"modality classif\w*|(?:classif|identif|recogni)\w* (?:the )?"
    r"(?:imaging )?modality",
    C.ORGAN_SEGMENTOR: r"organ segment\w*|segment\w* (?:the |all |any )?(?:organs?|structures)"
    r"|outline\w* (?:the )?organs?",
    C.ANOMALY_DETECTOR: r"(?:anomal\w*|abnormalit\w*|lesion) detect\w*|detect\w* (?:the |any |an )?"
    r"(?:anomal|abnormal|lesion)\w*|locat\w* (?:the |any )?(?:anomal|abnormal|lesion)\w*",
    C.DISEASE_INFERENCER: r"disease inferenc\w*|infer\w* (?:the )?diseases?|grounded diagnos\w*",
    C.DISEASE_DIAGNOSER: r"disease diagnos\w*|imaging diagnos\w*|diagnos\w*",
    C.BIOMARKER_QUANTIFIER: r"biomarker\w*|quantif\w*|measur\w*",
    C.INDICATOR_EVALUATOR: r"indicator\w*|(?:score|grade|grading|stage|staging) (?:evaluat|calculat)\w*"
    r"|(?:evaluat|calculat|comput)\w* (?:the |a |an )?(?:clinical )?(?:score|grade|stage)",
    C.REPORT_GENERATOR: r"report\w*",
    C.TREATMENT_RECOMMENDER: r"treatment\w*|therap\w* recommend\w*|recommend\w* (?:a |the )?therap\w*",
}
_ANATOMY_CUES = {
    "Head and Neck": r"head\s*(?:and|&|/)\s*neck|head-neck|\bbrain\b|\bskull\b",
    "Chest": r"\bchest\b|\bthora\w*|\bthorax\b",
    "Breast": r"\bbreasts?\b",
    "Abdomen and Pelvis": r"\babdom\w*|\bpelvi\w*",
    "Limb": r"\blimbs?\b|\bextremit\w*",
    "Spine": r"\bspin\w*|\bvertebr\w*",
}
_MODALITY_CUES = {
    "X-ray": r"\bx-?rays?\b|\bradiograph\w*",
    "CT": r"\bct\b|computed tomograph\w*",
    "MRI": r"\bmri\b|\bmr\b|magnetic resonance",
    "Ultrasound": r"\bultrasound\b|\bsonograph\w*",
    "Mammography": r"\bmammogra\w*",
}
_ANOMALY_WORDS = r"\b(?:anomal\w*|abnormal\w*|lesions?|nodules?|tumou?rs?|mass(?:es)?)\b"
_ANY_REGION = r"any (?:body )?(?:region|anatomy|body part)|all (?:body )?regions|every region|universal"
_ANY_MODALITY = r"any (?:imaging )?modalit\w*|all (?:imaging )?modalities|every modality|universal"
_UNRESTRICTED = (
    r"\b(?:any|all|every)\b(?! (?:body |imaging )?(?:regions?|modalit\w*|anatom\w*|body parts?)\b)"
    r"|\b(?:unrestricted|not only|not just|without (?:a |any )?(?:label )?(?:list|restriction)s?)\b"
)


class BuildRequest(BaseModel):
    """What a natural-language build request asks for (None: not said)."""

    model_config = ConfigDict(extra="forbid")

    text: str
    category: Category | None = None
    anatomy: str | None = None
    """A region, ``"Universal"``, or None when the request names none."""
    modality: str | None = None
    biomarker_kind: BiomarkerKind | None = None
    problem: str | None = None
    """Why the text cannot be read as one request (e.g. two regions)."""


def _first(cues: dict[str, str] | dict[Category, str], text: str) -> list[tuple[int, int, object]]:
    found = []
    for key, pattern in cues.items():
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            found.append((match.start(), -(match.end() - match.start()), key))
    return sorted(found, key=lambda item: (item[0], item[1]))


def _one(cues: dict[str, str], universal: str, text: str, noun: str) -> tuple[str | None, str | None]:
    named = {key for _, _, key in _first(cues, text)}
    if len(named) > 1:
        return None, f"the request names several {noun}s ({', '.join(sorted(str(n) for n in named))})"
    if named:
        return str(named.pop()), None
    if re.search(universal, text, re.IGNORECASE):
        return "Universal", None
    return None, None


def parse_build_request(text: str) -> BuildRequest:
    """Read a ``<Request>`` text (never raises)."""
    flat = " ".join(text.split())
    categories = _first(_CATEGORY_CUES, flat)
    category = categories[0][2] if categories else None
    anatomy, problem = _one(_ANATOMY_CUES, _ANY_REGION, flat, "region")
    modality, problem_m = _one(_MODALITY_CUES, _ANY_MODALITY, flat, "modality")
    kind: BiomarkerKind | None = None
    if category in (C.BIOMARKER_QUANTIFIER, C.INDICATOR_EVALUATOR):
        organ = re.search(r"\borgans?\b", flat, re.IGNORECASE)
        anomaly = re.search(
            r"\b(?:anomal\w*|abnormal\w*|lesions?|nodules?|tumou?rs?|mass(?:es)?)\b", flat, re.I
        )
        if organ and not anomaly:
            kind = "organ"
        elif anomaly and not organ:
            kind = "anomaly"
    return BuildRequest(
        text=text,
        category=category if isinstance(category, Category) else None,
        anatomy=anatomy,
        modality=modality,
        biomarker_kind=kind,
        problem=problem or problem_m,
    )


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def request_problem(request: BuildRequest, gap: Gap, record: Record) -> str | None:
    """Why the request does not specify the tool the gap needs (None: it does)."""
    if not request.text.strip():
        return "the request is empty"
    if request.problem is not None:
        return request.problem
    if request.category is None:
        return "the request names no tool category"
    needed = CATEGORY_NAMES[gap.category]
    if request.category != gap.category:
        return (
            f"the request asks for {_a(CATEGORY_NAMES[request.category])}, but the missing tool is "
            f"{_a(needed)}"
        )
    if (
        gap.biomarker_kind is not None
        and request.biomarker_kind is not None
        and request.biomarker_kind != gap.biomarker_kind
    ):
        return (
            f"the request asks for the {request.biomarker_kind} one, but the {gap.biomarker_kind} one "
            "is missing"
        )
    pair = f"{record.anatomy} {record.modality}"
    if gap.kind == "SpecificToolMissing" and (
        request.anatomy in (None, "Universal") or request.modality in (None, "Universal")
    ):
        return f"the request does not name both the region and the modality the tool must cover ({pair})"
    for asked, actual, noun in (
        (request.anatomy, record.anatomy, "region"),
        (request.modality, record.modality, "modality"),
    ):
        if asked not in (None, "Universal") and not same_label(asked, actual):
            return f"the request asks for a tool for the {noun} {asked}, not this image's ({actual})"
    if gap.kind == "InsufficientCapability":
        label = gap.needed_label or ""
        names_label = bool(label) and label.casefold() in request.text.casefold()
        if not names_label and not re.search(_UNRESTRICTED, request.text, re.IGNORECASE):
            return (
                "the request does not say what the tool must be able to output (the needed label, "
                "or any label: an unrestricted tool)"
            )
    return None
