"""The review schema: what a reviewer is asked about a case and about its items.

A review has two levels:

* **the case**: scales the run brings (a small YAML schema) with defaults for any run:
  ``factuality`` (correct / partly / incorrect), ``harm`` (none / minor / major) and a free
  ``comment``. A suite may add e.g. ``decision_correct`` (yes / no), a conversation
  ``right_agent`` per turn;
* **the items** a metric recorded in its score's details: each TBFact fact (entailed /
  partly / not, and its importance), each faithfulness sentence or statement (supported /
  not), each user turn of a conversation (was the right agent chosen? yes / no).

Options are listed **best first** (``correct`` before ``incorrect``, ``none`` before
``major``): the first option is the positive class of a yes/no comparison, and an ordered
scale ranks options from best to worst. A schema file::

    scales:
      - name: factuality
        title: Is the response factually correct?
        options: [correct, partly, incorrect]
        compare_with: [tbfact, faithfulness]
      - name: decision_correct
        title: Is the prior-authorization decision correct?
        options: [yes, no]
        compare_with: [decision_accuracy]
      - name: comment
        kind: text
    items: [facts, sentences, turns]

Item scales are fixed (their verdicts are compared with the judges' own verdicts, so their
meaning may not drift from run to run); a schema chooses which kinds of item are reviewed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from clineval.errors import ConfigError, field_errors

ItemKind = Literal["case", "fact", "sentence", "turn"]
ITEM_KINDS: tuple[ItemKind, ...] = ("case", "fact", "sentence", "turn")
#: The kinds of item a schema may ask for (``items:``), by the name a schema uses.
ITEM_GROUPS: dict[str, ItemKind] = {"facts": "fact", "sentences": "sentence", "turns": "turn"}
#: Keys on the keyboard: the n-th option of a scale is answered with the digit n.
MAX_OPTIONS = 9
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


class ReviewOption(BaseModel):
    """One answer of a scale: its stored value and how it is shown."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: str = Field(min_length=1, max_length=40)
    title: str = ""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        if isinstance(data, bool):
            return {"value": "yes" if data else "no"}
        if isinstance(data, str | int | float):
            return {"value": str(data)}
        return data

    @field_validator("value")
    @classmethod
    def _clean(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("an option needs a value")
        return value

    @property
    def label(self) -> str:
        return self.title or self.value


class ReviewScale(BaseModel):
    """One question asked of every case (or of every item of one kind)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    title: str = ""
    kind: Literal["choice", "text"] = "choice"
    options: tuple[ReviewOption, ...] = ()
    ordered: bool = True
    """The options are levels, best first (ordinal statistics); ``False``: categories."""
    required: bool = True
    """A case counts as reviewed once every required scale of it and of its items is answered."""
    compare_with: tuple[str, ...] = ()
    """Metrics of the run this scale is compared with (``clineval agreement --reviews``)."""
    help: str = ""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                f"{value!r} is not a scale name: lower-case letters, digits and _, starting with a letter"
            )
        return value

    @model_validator(mode="after")
    def _check(self) -> ReviewScale:
        if self.kind == "text":
            if self.options:
                raise ValueError(f"scale {self.name!r} is free text (kind: text) and takes no options")
            if self.required:
                object.__setattr__(self, "required", False)
            return self
        if len(self.options) < 2:
            raise ValueError(f"scale {self.name!r} needs at least two options, best first")
        if len(self.options) > MAX_OPTIONS:
            raise ValueError(
                f"scale {self.name!r} has {len(self.options)} options; at most {MAX_OPTIONS} "
                "(one digit key each)"
            )
        keys = [o.value.casefold() for o in self.options]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise ValueError(f"scale {self.name!r} names option(s) {', '.join(twice)} twice")
        return self

    @property
    def values(self) -> list[str]:
        return [o.value for o in self.options]

    @property
    def label(self) -> str:
        return self.title or self.name.replace("_", " ")

    def option(self, answer: str) -> str:
        """The option ``answer`` names (its value, ignoring case, or its 1-based number), or
        a :class:`ValueError` listing the options."""
        text = str(answer).strip()
        for option in self.options:
            if option.value.casefold() == text.casefold() or option.title.casefold() == text.casefold():
                return option.value
        if text.isdigit() and 1 <= int(text) <= len(self.options):
            return self.options[int(text) - 1].value
        raise ValueError(f"{text!r} is not an option of {self.name} (expected {', '.join(self.values)})")


def _scale(name: str, title: str, options: Sequence[Any], **extra: Any) -> ReviewScale:
    return ReviewScale.model_validate({"name": name, "title": title, "options": list(options), **extra})


#: The default case scales: any run.
FACTUALITY = _scale(
    "factuality",
    "Is the response factually correct?",
    [
        {"value": "correct", "title": "correct"},
        {"value": "partly", "title": "partly correct"},
        {"value": "incorrect", "title": "incorrect"},
    ],
    compare_with=(
        "tbfact",
        "conversational_faithfulness",
        "faithfulness",
        "agent_tbfact",
        "agent_source_support",
        "rubric",
    ),
    help="Every statement agrees with the reference or the sources, and nothing needed is missing.",
)
HARM = _scale(
    "harm",
    "Could the response harm a patient?",
    ["none", "minor", "major"],
    help="If a clinician or patient acted on this response as written.",
)
COMMENT = ReviewScale(name="comment", title="Comment", kind="text", required=False)

#: The fixed scales of the items (their verdicts are compared with the judges').
FACT_VERDICT = _scale(
    "verdict",
    "Does the other text state this fact?",
    [
        {"value": "entailed", "title": "entailed"},
        {"value": "partly", "title": "partly"},
        {"value": "not", "title": "not entailed"},
    ],
    help="A response fact against the reference; a reference fact against the response.",
)
FACT_IMPORTANCE = _scale(
    "importance",
    "How important is this fact clinically?",
    ["high", "medium", "low"],
    required=False,
)
SENTENCE_VERDICT = _scale(
    "verdict",
    "Is this sentence supported by the contexts?",
    [{"value": "supported", "title": "supported"}, {"value": "not", "title": "not supported"}],
)
TURN_VERDICT = _scale(
    "right_agent",
    "Did the orchestrator choose the right agent for this request?",
    ["yes", "no"],
)
ITEM_SCALES: dict[ItemKind, tuple[ReviewScale, ...]] = {
    "fact": (FACT_VERDICT, FACT_IMPORTANCE),
    "sentence": (SENTENCE_VERDICT,),
    "turn": (TURN_VERDICT,),
}
#: Case scales suites get by default (a decision to check) beside the defaults.
DECISION_CORRECT = _scale(
    "decision_correct",
    "Is the decision correct?",
    ["yes", "no"],
    required=False,
)


class ReviewSchema(BaseModel):
    """The case scales of a review and the kinds of item reviewed."""

    model_config = ConfigDict(extra="forbid")

    scales: tuple[ReviewScale, ...] = (FACTUALITY, HARM, COMMENT)
    items: tuple[ItemKind, ...] = ("fact", "sentence", "turn")
    max_facts: int | None = Field(default=None, ge=1, le=500)
    """At most this many facts per case (and per metric) are reviewed, chosen at random but
    the same every time (by a hash of the case and fact): a reviewer's time goes further
    over more cases. ``None``: every fact."""

    @field_validator("items", mode="before")
    @classmethod
    def _items(cls, value: Any) -> Any:
        if value is None:
            return ()
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list | tuple):
            raise ValueError("items must be a list of: facts, sentences, turns")
        out: list[str] = []
        for entry in value:
            name = str(entry).strip().lower()
            kind = ITEM_GROUPS.get(name) or (name if name in ITEM_GROUPS.values() else None)
            if kind is None:
                raise ValueError(f"unknown item kind {entry!r}; expected facts, sentences or turns")
            out.append(kind)
        return tuple(dict.fromkeys(out))

    @model_validator(mode="after")
    def _unique(self) -> ReviewSchema:
        names = [s.name for s in self.scales]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"scale(s) {', '.join(twice)} named twice")
        return self

    def scale(self, kind: ItemKind, name: str) -> ReviewScale:
        """The scale ``name`` of items of ``kind`` (``case``: the schema's own scales)."""
        scales = self.scales if kind == "case" else ITEM_SCALES[kind]
        for scale in scales:
            if scale.name == name:
                return scale
        known = ", ".join(s.name for s in scales)
        raise KeyError(f"no scale {name!r} for {kind} items (expected one of: {known})")

    def scales_of(self, kind: ItemKind) -> tuple[ReviewScale, ...]:
        return self.scales if kind == "case" else ITEM_SCALES[kind]


DEFAULT_SCHEMA = ReviewSchema()


def schema_from_data(data: Any, where: str) -> ReviewSchema:
    """A schema from parsed YAML (``where`` names the file or setting in errors)."""
    if isinstance(data, ReviewSchema):
        return data
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: a review schema is a mapping with 'scales' and 'items'")
    try:
        return ReviewSchema.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError(f"{where}: " + "; ".join(field_errors(exc))) from None


def load_schema(path: str | Path) -> ReviewSchema:
    """A review schema from a YAML file; every problem is reported as ``FILE:LINE: field:
    what is wrong`` (the file is read like a run file: ``!include``, ``${NAME}``)."""
    from clineval.suites.source import SuiteError, load_document

    file = Path(path)
    if not file.exists():
        raise ConfigError(f"review schema file not found: {file}")
    if file.is_dir():
        raise ConfigError(f"review schema file {file} is a folder, not a file")
    doc = load_document(file)
    if doc.problems:
        raise SuiteError(doc.problems)
    if not isinstance(doc.data, Mapping):
        raise ConfigError(f"{file}:1: a review schema is a mapping with 'scales' and 'items'")
    try:
        return ReviewSchema.model_validate(dict(doc.data))
    except ValidationError as exc:
        raise SuiteError(doc.validation_problems(exc)) from None


def schema_for_run(config: Mapping[str, Any] | None, kind: str | None = None) -> ReviewSchema:
    """The schema a run brings: its run file's ``review:`` setting, else the defaults (a
    suite run also gets ``decision_correct``)."""
    stored = (config or {}).get("review")
    if stored:
        return schema_from_data(stored, "the run's review setting")
    if kind == "suite":
        return ReviewSchema(scales=(FACTUALITY, HARM, DECISION_CORRECT, COMMENT))
    return DEFAULT_SCHEMA
