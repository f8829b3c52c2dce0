"""Reading an LLM core's replies: the plan (stage 1) and one action per step (stage 2).

The public RadABench harness reads replies with a first-match regular expression and
finds inputs by *substring* search over the ``<Input>`` text, so a reply mentioning
``Disease`` anywhere passes ``$Disease$`` (research note 1.7). These parsers are strict
about structure and lenient about spelling:

* :func:`parse_plan` accepts a JSON object (bare, in a ```` ```json ```` fence, or with
  Python quoting) with the keys ``known``/``chain`` or the RadA-BenchPlat-style ``"Known Info"`` /
  ``"Tool Chain"``, or a line ``Tool Chain: [*A* -> *B*]`` (RadA-BenchPlat's Part-1 format).
  Category names are matched leniently (``"Organ Segmentation Tool"``,
  ``"Anomaly Biomarker Quantification Tool"``, ``"Treatment Planner"``, ``"6"``...);
  a step naming no category makes the whole plan :class:`Malformed`.
* :func:`parse_action` needs exactly one complete ``<Call>``, ``<EndCall>`` or
  ``<NoCall>`` block (tags in any case, in a code fence or not, with any other text
  around it such as a ``<Reflection>`` block); two blocks are :class:`Malformed`. The
  tool must look like ``TOOL12``; inputs are parsed as a list and every entry must be a
  ``$Variable$`` token (an unknown variable is kept, so the simulator reports an invalid
  input; a bare word is :class:`Malformed`).

Both return a model or ``Malformed(reply, reason)`` and never raise, whatever the string.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from clineval.environments.radbench.model import Call, Malformed, NoCall, Plan
from clineval.environments.radbench.vocab import (
    ANATOMIES,
    CATEGORY_NAMES,
    GAP_KINDS,
    MODALITIES,
    VARIABLES,
    Category,
    GapKind,
)

__all__ = [
    "category_of",
    "gap_kind_of",
    "json_objects",
    "parse_action",
    "parse_inputs",
    "parse_plan",
    "tool_name_of",
    "variable_of",
]

# --------------------------------------------------------------------------- categories

C = Category
_FILLER = frozenset({"tool", "tools", "the", "a", "an", "model", "module", "wise"})
_ABBREVIATIONS: dict[str, Category] = {
    "ac": C.ANATOMY_CLASSIFIER,
    "mc": C.MODALITY_CLASSIFIER,
    "os": C.ORGAN_SEGMENTOR,
    "ad": C.ANOMALY_DETECTOR,
    "dd": C.DISEASE_DIAGNOSER,
    "id": C.DISEASE_DIAGNOSER,
    "di": C.DISEASE_INFERENCER,
    "gd": C.DISEASE_INFERENCER,
    "sd": C.DISEASE_INFERENCER,
    "bq": C.BIOMARKER_QUANTIFIER,
    "ie": C.INDICATOR_EVALUATOR,
    "ic": C.INDICATOR_EVALUATOR,
    "rg": C.REPORT_GENERATOR,
    "tr": C.TREATMENT_RECOMMENDER,
    "tp": C.TREATMENT_RECOMMENDER,
}
# (subjects, actions) per category: every "subject action" pair is a name of it.
_NAME_PARTS: dict[Category, tuple[tuple[str, ...], tuple[str, ...]]] = {
    C.ANATOMY_CLASSIFIER: (
        ("anatomy", "anatomical", "anatomic", "body part", "body region"),
        ("classifier", "classification", "recognition", "identifier", "identification", "detection"),
    ),
    C.MODALITY_CLASSIFIER: (
        ("modality", "imaging modality", "image modality"),
        ("classifier", "classification", "recognition", "identifier", "identification", "detection"),
    ),
    C.ORGAN_SEGMENTOR: (
        ("organ",),
        ("segmentor", "segmenter", "segmentation", "segmentator"),
    ),
    C.ANOMALY_DETECTOR: (
        ("anomaly", "abnormality", "lesion", "anomalies", "abnormalities"),
        ("detector", "detection", "localization", "localizer", "grounding"),
    ),
    C.DISEASE_DIAGNOSER: (
        ("disease", "imaging", "image", "direct"),
        ("diagnoser", "diagnosis", "diagnostic", "diagnostics", "dignoser", "classifier"),
    ),
    C.DISEASE_INFERENCER: (
        ("disease", "grounded", "synthetic", "grounding"),
        ("inferencer", "inference", "inferrer", "inferer", "reasoner"),
    ),
    C.BIOMARKER_QUANTIFIER: (
        ("biomarker", "organ biomarker", "anomaly biomarker", "biomarkers"),
        ("quantifier", "quantification", "quantifying", "calculator", "calculation", "measurement"),
    ),
    C.INDICATOR_EVALUATOR: (
        ("indicator", "organ indicator", "anomaly indicator", "clinical indicator", "indicators"),
        ("evaluator", "evaluation", "calculator", "calculation", "assessment", "scorer"),
    ),
    C.REPORT_GENERATOR: (
        ("report", "radiology report", "reports"),
        ("generator", "generation", "writer", "writing"),
    ),
    C.TREATMENT_RECOMMENDER: (
        ("treatment", "therapy"),
        ("recommender", "recommendation", "recommendations", "planner", "planning", "advisor"),
    ),
}
_EXTRA_NAMES: dict[str, Category] = {
    "grounded diagnoser": C.DISEASE_INFERENCER,
    "grounded diagnosis": C.DISEASE_INFERENCER,
    "synthetic diagnoser": C.DISEASE_INFERENCER,
    "synthetic dignoser": C.DISEASE_INFERENCER,
    "synthetic diagnosis": C.DISEASE_INFERENCER,
}


def _normalise(text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", " ", text.lower()).split()
    return " ".join(w for w in words if w not in _FILLER)


def _build_aliases() -> dict[str, Category]:
    aliases: dict[str, Category] = {}
    for category, (subjects, actions) in _NAME_PARTS.items():
        for subject in subjects:
            for action in actions:
                for form in (action, action + "s") if action.endswith(("er", "or")) else (action,):
                    aliases[_normalise(f"{subject} {form}")] = category
    for name, category in _EXTRA_NAMES.items():
        aliases[_normalise(name)] = category
    for category, title in CATEGORY_NAMES.items():
        aliases[_normalise(title)] = category
        aliases[str(int(category))] = category
    return aliases


_ALIASES: dict[str, Category] = _build_aliases()


def category_of(text: str) -> Category | None:
    """The tool category a name means, or None.

    Exact names first (``"Organ Segmentor"``, ``"*Organ Segmentation Tool*"``,
    ``"Anomaly Biomarker Quantification Tool"``, the digit ``"6"``, the abbreviation
    ``"BQ"``), then a name found inside the text (``"3. Organ Segmentor (TOOL3)"``) when
    exactly one category is named there.
    """
    key = _normalise(text)
    if not key:
        return None
    if key in _ALIASES:
        return _ALIASES[key]
    if key in _ABBREVIATIONS:
        return _ABBREVIATIONS[key]
    padded = f" {key} "
    found = {category for alias, category in _ALIASES.items() if " " in alias and f" {alias} " in padded}
    if len(found) == 1:
        return found.pop()
    return None


# --------------------------------------------------------------------------- small values

_VARIABLE_BY_KEY: dict[str, str] = {v.strip("$").lower(): v for v in VARIABLES}
_ANATOMY_BY_KEY: dict[str, str] = {_normalise(a): a for a in (*ANATOMIES, "Universal")}
_MODALITY_BY_KEY: dict[str, str] = {_normalise(m): m for m in (*MODALITIES, "Universal")}
_MODALITY_BY_KEY.update({"xray": "X-ray", "x ray": "X-ray", "us": "Ultrasound", "mr": "MRI"})
_TOOL_ID = re.compile(r"\btool\s*[_\-#:]?\s*(\d+)\b", re.IGNORECASE)
_DOLLAR_TOKEN = re.compile(r"\$\s*([A-Za-z][A-Za-z0-9_ ]*?)\s*\$")
_QUOTES = "'\"`‘’“”"


def variable_of(name: str) -> str:
    """``$Image$`` for ``image`` or ``$ image $``; an unknown name as ``$Name$``."""
    bare = name.strip().strip("$").strip()
    return _VARIABLE_BY_KEY.get(bare.lower().replace(" ", ""), f"${bare}$")


def tool_name_of(text: str) -> str | None:
    """``TOOL12`` for ``TOOL12``, ``tool12``, ``Tool 12``, ``TOOL_12``; None if no single tool is named."""
    ids = {int(m.group(1)) for m in _TOOL_ID.finditer(text)}
    if len(ids) != 1:
        return None
    return f"TOOL{ids.pop()}"


def gap_kind_of(text: str) -> GapKind | None:
    """One of :data:`~clineval.environments.radbench.vocab.GAP_KINDS`, tolerant of case and spacing."""
    key = re.sub(r"[^a-z]", "", text.lower())
    if not key:
        return None
    for kind in GAP_KINDS:
        if kind.lower() in key:
            return kind
    if "categor" in key and "missing" in key:
        return "CategoryMissing"
    if ("specific" in key or "tool" in key) and "missing" in key:
        return "SpecificToolMissing"
    if "insufficient" in key or "capabilit" in key:
        return "InsufficientCapability"
    return None


def _anatomy(text: str) -> str:
    return _ANATOMY_BY_KEY.get(_normalise(text), text.strip())


def _modality(text: str) -> str:
    return _MODALITY_BY_KEY.get(_normalise(text), text.strip())


def parse_inputs(text: str) -> list[str] | str:
    """The variables of an ``<Input>`` text, or the reason it cannot be read.

    Accepts ``['$Image$', '$Anatomy$']`` (Python or JSON quoting), ``[$Image$, $Anatomy$]``
    and ``$Image$, $Anatomy$`` (also separated by spaces or semicolons); ``[]`` and
    ``none`` are no inputs. Variables are spelt as in the vocabulary (``$image$`` →
    ``$Image$``); unknown ones are kept; duplicates are dropped.
    """
    body = text.strip().strip("`").strip()
    bracketed = re.search(r"\[(.*?)\]", body, re.DOTALL)
    if bracketed:
        body = bracketed.group(1)
    if body.strip().lower() in ("", "none", "null", "n/a", "nothing"):
        return []
    out: list[str] = []
    for piece in re.split(r"[,;\n]", body):
        token = piece.strip().strip(_QUOTES).strip()
        if not token:
            continue
        names = _DOLLAR_TOKEN.findall(token)
        rest = _DOLLAR_TOKEN.sub(" ", token).strip(_QUOTES + " \t")
        if not names or rest:
            shown = token if len(token) <= 60 else token[:57] + "..."
            return f"input entry {shown!r} is not a memory-bank variable written as $Name$"
        for name in names:
            variable = variable_of(name)
            if variable not in out:
                out.append(variable)
    return out


# --------------------------------------------------------------------------- plan

_FENCED = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
_CHAIN_SEPARATOR = re.compile(r"\s*(?:-+>|=+>|→|⟶|➔|⇒)\s*")
_CHAIN_LINE = re.compile(
    r"(?:tool[\s_-]*chain|\bchain)\W{0,3}\s*[:=]\s*(\[(?P<bracketed>.*?)\]|(?P<line>[^\n]*))",
    re.IGNORECASE | re.DOTALL,
)
_KNOWN_LINE = re.compile(
    r"(?:known[\s_-]*info(?:rmation)?|\bknown)\W{0,3}\s*[:=]\s*(\[(?P<bracketed>.*?)\]|(?P<line>[^\n]*))",
    re.IGNORECASE | re.DOTALL,
)


def _json_objects(reply: str) -> list[dict[str, Any]]:
    """Dicts found in the reply: fenced blocks first, then the outermost braces."""
    candidates = [m.group(1) for m in _FENCED.finditer(reply)]
    start, end = reply.find("{"), reply.rfind("}")
    if 0 <= start < end:
        candidates.append(reply[start : end + 1])
    found: list[dict[str, Any]] = []
    for candidate in candidates:
        text = candidate.strip()
        if not text.startswith("{"):
            s, e = text.find("{"), text.rfind("}")
            if not 0 <= s < e:
                continue
            text = text[s : e + 1]
        value: Any = None
        try:
            value = json.loads(text)
        except ValueError:
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                value = None
        if isinstance(value, dict):
            found.append(value)
    return found


def json_objects(reply: str) -> list[dict[str, Any]]:
    """The JSON (or Python-literal) objects in a reply: fenced blocks first, then the
    outermost braces."""
    return _json_objects(reply)


def _key(name: object) -> str:
    return re.sub(r"[^a-z]", "", str(name).lower())


def _chain_steps(value: Any) -> list[str] | None:
    if isinstance(value, list | tuple):
        steps: list[str] = []
        for item in value:
            if isinstance(item, list | tuple):
                steps.extend(str(x) for x in item)
            else:
                steps.append(str(item))
        return steps
    if isinstance(value, str):
        return _split_chain(value)
    if isinstance(value, int):
        return [str(value)]
    return None


def _split_chain(text: str) -> list[str]:
    text = text.strip().strip("[]").strip()
    if not text:
        return []
    separator = _CHAIN_SEPARATOR if _CHAIN_SEPARATOR.search(text) else re.compile(r"[,;\n]")
    parts = separator.split(text)
    return [p.strip() for p in parts if p.strip(" \t\n*'\"`")]


def _known_entries(value: Any) -> list[str]:
    items: list[str]
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, list | tuple | dict):
        items = [str(x) for x in value]
    else:
        items = []
    known: list[str] = []
    for item in items:
        names = _DOLLAR_TOKEN.findall(item)
        if not names:
            bare = item.strip().strip(_QUOTES).strip()
            if bare.lower().replace(" ", "") in _VARIABLE_BY_KEY:
                names = [bare]
        for name in names:
            variable = variable_of(name)
            if variable not in known:
                known.append(variable)
    return known


def _plan_from(reply: str, steps: list[str], known: list[str]) -> Plan | Malformed:
    if not steps:
        return Malformed(reply=reply, reason="the plan's tool chain is empty")
    chain: list[Category] = []
    for step in steps:
        category = category_of(step)
        if category is None:
            shown = step.strip().strip("*'\"` ")
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            return Malformed(reply=reply, reason=f"unknown tool category {shown!r} in the tool chain")
        chain.append(category)
    return Plan(known=known, chain=chain, raw=reply)


def _parse_plan(reply: str) -> Plan | Malformed:
    for obj in _json_objects(reply):
        keys = {_key(k): v for k, v in obj.items()}
        chain_value = next((keys[k] for k in ("chain", "toolchain", "steps") if k in keys), None)
        if chain_value is None:
            continue
        steps = _chain_steps(chain_value)
        if steps is None:
            return Malformed(reply=reply, reason="the plan's tool chain is neither a list nor a string")
        known_keys = ("known", "knowninfo", "knowninformation")
        known_value: Any = next((keys[k] for k in known_keys if k in keys), [])
        return _plan_from(reply, steps, _known_entries(known_value))
    match = _CHAIN_LINE.search(reply)
    if match is None:
        return Malformed(
            reply=reply,
            reason=(
                "no plan found: expected a JSON object with 'known' and 'chain' or a 'Tool Chain: [...]' line"
            ),
        )
    chain_text = match.group("bracketed") if match.group("bracketed") is not None else match.group("line")
    known_match = _KNOWN_LINE.search(reply)
    known: list[str] = []
    if known_match is not None:
        known_text = known_match.group("bracketed")
        if known_text is None:
            known_text = known_match.group("line")
        known = _known_entries(re.split(r"[,;\n]", known_text or ""))
    return _plan_from(reply, _split_chain(chain_text or ""), known)


def parse_plan(reply: str) -> Plan | Malformed:
    """The plan in a stage-1 reply, or :class:`Malformed` with the reason."""
    if not isinstance(reply, str):
        return Malformed(reply=repr(reply), reason="the reply is not text")
    try:
        return _parse_plan(reply)
    except Exception as exc:  # never raise on any input
        return Malformed(reply=reply, reason=f"the plan could not be read ({type(exc).__name__})")


# --------------------------------------------------------------------------- actions

_KIND = r"(?:end[\s_-]*call|no[\s_-]*call|call)"
_OPEN = re.compile(rf"<\s*({_KIND})\s*>", re.IGNORECASE)
_BLOCK = re.compile(
    rf"<\s*(?P<open>{_KIND})\s*>(?P<body>(?:(?!<\s*{_KIND}\s*>).)*?)<\s*/\s*(?P<close>{_KIND})\s*>",
    re.IGNORECASE | re.DOTALL,
)
_TAG_NAMES = {"call": "Call", "endcall": "EndCall", "nocall": "NoCall"}


def _kind(tag: str) -> str:
    return re.sub(r"[\s_-]", "", tag.lower())


def _fields(body: str, name: str) -> list[str]:
    closed = re.findall(rf"<\s*{name}\s*>(.*?)<\s*/\s*{name}\s*>", body, re.IGNORECASE | re.DOTALL)
    if closed:
        return [c.strip() for c in closed]
    # An unclosed field: up to the next tag or the end of the block.
    return [c.strip() for c in re.findall(rf"<\s*{name}\s*>([^<]*)", body, re.IGNORECASE)]


def _field(body: str, name: str) -> str | None:
    values = _fields(body, name)
    return values[0] if values else None


def _action_block(reply: str) -> tuple[str, str] | Malformed:
    blocks = list(_BLOCK.finditer(reply))
    if len(blocks) > 1:
        kinds = ", ".join(f"<{_TAG_NAMES[_kind(b.group('open'))]}>" for b in blocks)
        return Malformed(
            reply=reply, reason=f"{len(blocks)} action blocks ({kinds}); a reply must hold exactly one"
        )
    if len(blocks) == 1:
        block = blocks[0]
        opened, closed = _kind(block.group("open")), _kind(block.group("close"))
        if opened != closed:
            return Malformed(
                reply=reply,
                reason=f"the <{_TAG_NAMES[opened]}> block is closed with </{_TAG_NAMES[closed]}>",
            )
        return opened, block.group("body")
    openings = list(_OPEN.finditer(reply))
    if len(openings) == 1:  # a reply cut short before its closing tag
        return _kind(openings[0].group(1)), reply[openings[0].end() :]
    if openings:
        return Malformed(reply=reply, reason="several unclosed action tags and no complete action block")
    return Malformed(reply=reply, reason="no <Call>, <EndCall> or <NoCall> block in the reply")


def _parse_call(reply: str, kind: str, body: str) -> Call | Malformed:
    tag = _TAG_NAMES[kind]
    tools = _fields(body, "Tool")
    if not tools:
        return Malformed(reply=reply, reason=f"the <{tag}> block has no <Tool>")
    if len(tools) > 1:
        return Malformed(reply=reply, reason=f"the <{tag}> block has more than one <Tool>")
    tool = tool_name_of(tools[0])
    if tool is None:
        shown = tools[0] if len(tools[0]) <= 60 else tools[0][:57] + "..."
        return Malformed(reply=reply, reason=f"<Tool> {shown!r} does not name one tool such as TOOL3")
    inputs_text = _fields(body, "Input")
    if not inputs_text:
        return Malformed(reply=reply, reason=f"the <{tag}> block has no <Input>")
    if len(inputs_text) > 1:
        return Malformed(reply=reply, reason=f"the <{tag}> block has more than one <Input>")
    inputs = parse_inputs(inputs_text[0])
    if isinstance(inputs, str):
        return Malformed(reply=reply, reason=inputs)
    return Call(
        tool=tool,
        inputs=inputs,
        purpose=_field(body, "Purpose") or "",
        final=kind == "endcall",
        raw=reply,
    )


def _parse_nocall(reply: str, body: str) -> NoCall:
    category_text = _field(body, "Category") or ""
    ability_text = _field(body, "Ability") or ""
    anatomy = _field(body, "Anatomy")
    modality = _field(body, "Modality")
    return NoCall(
        purpose=_field(body, "Purpose") or "",
        category=category_of(category_text) if category_text else None,
        category_text=category_text,
        anatomy=_anatomy(anatomy) if anatomy else "Universal",
        modality=_modality(modality) if modality else "Universal",
        ability=gap_kind_of(ability_text),
        ability_text=ability_text,
        request=_field(body, "Request") or "",
        raw=reply,
    )


def _parse_action(reply: str) -> Call | NoCall | Malformed:
    found = _action_block(reply)
    if isinstance(found, Malformed):
        return found
    kind, body = found
    if kind == "nocall":
        return _parse_nocall(reply, body)
    return _parse_call(reply, kind, body)


def parse_action(reply: str) -> Call | NoCall | Malformed:
    """The one action in a stage-2 reply, or :class:`Malformed` with the reason.

    A ``<NoCall>`` is a decline even when its fields are incomplete: an unknown category
    or ability leaves ``category``/``ability`` None and keeps the text; a missing
    ``<Anatomy>``/``<Modality>`` reads as ``Universal``.
    """
    if not isinstance(reply, str):
        return Malformed(reply=repr(reply), reason="the reply is not text")
    try:
        return _parse_action(reply)
    except Exception as exc:  # never raise on any input
        return Malformed(reply=reply, reason=f"the action could not be read ({type(exc).__name__})")
