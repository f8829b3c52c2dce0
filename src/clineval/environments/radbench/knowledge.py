"""The knowledge base of the synthetic records: disease scenarios read from data files.

For each of the 22 anatomy-modality pairs, disease scenarios in which the modality does
show the disease for that anatomy: the finding (anomaly part and symptom), an organ and
an anomaly biomarker with plausible ranges and units, a fitting clinical indicator (score,
grade or stage) with its possible values, finding, impression and treatment texts,
demographics, histories and complaints. They live in YAML files, one per region, under
``data/knowledge/`` in this package (written for clineval, reviewed and extended without
Python: each file's header explains the fields). Records are sampled from them with a
seeded random generator (:mod:`clineval.environments.radbench.records`).

Texts are ``str.format`` templates over: ``{organ}``, ``{organ_dim}``, ``{organ_quant}``,
``{part}``, ``{symptom}``, ``{anomaly_dim}``, ``{anomaly_quant}``, ``{disease}``,
``{indicator}``, ``{indicator_value}``, ``{age}``, ``{sex}`` (lower case).

:func:`load_knowledge` validates every entry (pydantic) and reports the first problem as
``FILE:LINE: scenario N (disease): field 'x': what was expected``. A scenario marked
``mirror: true`` may also be drawn with left and right swapped in all its texts
(:func:`mirrored`), for the larger record sets.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from clineval.environments.radbench.vocab import PAIRS
from clineval.errors import DatasetError

__all__ = [
    "PLACEHOLDERS",
    "SCENARIOS",
    "Quantity",
    "Scenario",
    "knowledge_dir",
    "load_knowledge",
    "mirrored",
    "scenarios_for",
]

PLACEHOLDERS = frozenset(
    {
        "organ",
        "organ_dim",
        "organ_quant",
        "part",
        "symptom",
        "anomaly_dim",
        "anomaly_quant",
        "disease",
        "indicator",
        "indicator_value",
        "age",
        "sex",
    }
)
"""The names a finding, impression or treatment text may use in braces."""

_TEXTS = ("finding", "impression", "treatment")


class Quantity(BaseModel):
    """A plausible numeric value: sampled uniformly in [low, high], written with its unit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    low: float
    high: float
    unit: str = ""
    decimals: int = Field(default=1, ge=0, le=6)

    @model_validator(mode="after")
    def _range(self) -> Quantity:
        if not self.low < self.high:
            raise ValueError(f"low ({self.low:g}) must be below high ({self.high:g})")
        return self

    def sample(self, rng: random.Random) -> str:
        value = rng.uniform(self.low, self.high)
        text = f"{value:.{self.decimals}f}" if self.decimals > 0 else str(round(value))
        return (
            f"{text} {self.unit}".strip()
            if self.unit and not self.unit.startswith("%")
            else f"{text}{self.unit}"
        )


class Scenario(BaseModel):
    """One disease seen on one anatomy-modality pair, with everything a record needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    anatomy: str
    modality: str
    disease: str = Field(min_length=1)
    part: str = Field(min_length=1)
    """Where the anomaly is (e.g. "right lower lobe")."""
    mirror: bool = False
    """The lesion may equally be on the other side: :func:`mirrored` swaps left and right."""
    symptom: str = Field(min_length=1)
    """What the anomaly is (e.g. "consolidation"); also the anomaly biomarker's object."""
    organ: str = Field(min_length=1)
    organ_dim: str = Field(min_length=1)
    organ_quantity: Quantity
    anomaly_dim: str = Field(min_length=1)
    anomaly_quantity: Quantity
    indicator: str = Field(min_length=1)
    indicator_values: tuple[str, ...] = Field(min_length=1)
    finding: str = Field(min_length=1)
    impression: str = Field(min_length=1)
    treatment: str = Field(min_length=1)
    age: tuple[int, int]
    female_share: float = Field(ge=0, le=1)
    histories: tuple[str, ...] = Field(min_length=1)
    complaints: tuple[str, ...] = Field(min_length=1)

    @field_validator("finding", "impression", "treatment")
    @classmethod
    def _known_placeholders(cls, value: str) -> str:
        try:
            names = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
        except ValueError as exc:
            raise ValueError(f"not a valid template ({exc}); write a literal brace as {{{{ or }}}}") from None
        unknown = sorted(n for n in names if n not in PLACEHOLDERS)
        if unknown:
            raise ValueError(
                f"unknown placeholder {{{unknown[0]}}} (expected one of {', '.join(sorted(PLACEHOLDERS))})"
            )
        return value

    @field_validator("age")
    @classmethod
    def _age_range(cls, value: tuple[int, int]) -> tuple[int, int]:
        low, high = value
        if not 0 <= low <= high <= 110:
            raise ValueError(
                f"expected [youngest, oldest] with 0 <= youngest <= oldest <= 110, got {list(value)}"
            )
        return value

    @field_validator("modality")
    @classmethod
    def _known_pair(cls, modality: str, info: ValidationInfo) -> str:
        anatomy = info.data.get("anatomy")
        if (anatomy, modality) not in PAIRS:
            pairs = ", ".join(m for a, m in PAIRS if a == anatomy) or "(none: unknown anatomy)"
            raise ValueError(
                f"{anatomy} {modality} is not an anatomy-modality pair of the benchmark "
                f"(modalities of {anatomy}: {pairs})"
            )
        return modality


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    anatomy: str
    scenarios: list[dict[str, Any]] = Field(min_length=1)


# mirroring ----------------------------------------------------------------------------

_SIDE = re.compile(r"\b(right|left)\b", re.IGNORECASE)


def _swap(text: str) -> str:
    def other(match: re.Match[str]) -> str:
        word = match.group(0)
        swapped = "left" if word.lower() == "right" else "right"
        if word.isupper():
            return swapped.upper()
        return swapped.capitalize() if word[0].isupper() else swapped

    return _SIDE.sub(other, text)


def mirrored(scenario: Scenario) -> Scenario:
    """The scenario with left and right swapped in every text (only for ``mirror: true``)."""
    if not scenario.mirror:
        raise ValueError(f"{scenario.disease} ({scenario.anatomy} {scenario.modality}) is not marked mirror")
    data = scenario.model_dump()
    for key, value in data.items():
        if isinstance(value, str) and key not in ("anatomy", "modality"):
            data[key] = _swap(value)
        elif isinstance(value, tuple | list) and value and all(isinstance(v, str) for v in value):
            data[key] = tuple(_swap(v) for v in value)
    return Scenario.model_validate(data)


# loading ------------------------------------------------------------------------------


def knowledge_dir() -> Path:
    """The package's knowledge folder (``data/knowledge``)."""
    return Path(str(resources.files("clineval.environments.radbench").joinpath("data", "knowledge")))


def _line(node: yaml.Node | None, path: Sequence[object]) -> int | None:
    """The 1-based line of the YAML node at ``path`` (or of the deepest node found)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            found = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            found = node.value[part]
        else:
            found = None
        if found is None:
            break
        node = found
        line = node.start_mark.line + 1
    return line


def _explain(exc: ValidationError) -> tuple[tuple[object, ...], str]:
    error = exc.errors()[0]
    loc = tuple(error.get("loc", ()))
    message = str(error.get("msg", "invalid"))
    if error.get("type") == "missing":
        message = "missing"
    elif error.get("type") == "extra_forbidden":
        message = "not a field of a scenario (check the spelling against the file's header)"
    message = message.removeprefix("Value error, ")
    return loc, message


def _read(path: Path) -> list[Scenario]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise DatasetError(f"{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    try:
        file = _File.model_validate(data)
    except ValidationError as exc:
        loc, message = _explain(exc)
        field = ".".join(str(p) for p in loc) or "(top level)"
        raise DatasetError(
            f"{path}:{_line(root, loc) or 1}: field '{field}': {message} "
            "(expected 'anatomy: REGION' and a list 'scenarios:')"
        ) from None
    scenarios = []
    for index, entry in enumerate(file.scenarios):
        label = f"scenario {index + 1}"
        if not isinstance(entry, dict):
            line = _line(root, ("scenarios", index))
            raise DatasetError(f"{path}:{line}: {label}: expected a mapping of fields")
        if isinstance(entry.get("disease"), str):
            label += f" ({entry['disease']})"
        try:
            scenarios.append(Scenario.model_validate({"anatomy": file.anatomy, **entry}))
        except ValidationError as exc:
            loc, message = _explain(exc)
            field = ".".join(str(p) for p in loc) or "(the scenario)"
            line = _line(root, ("scenarios", index, *loc))
            raise DatasetError(f"{path}:{line}: {label}: field '{field}': {message}") from None
    return scenarios


def load_knowledge(directory: str | Path | None = None) -> tuple[Scenario, ...]:
    """Every scenario of the ``*.yaml`` files of a folder (default: the package's), in file
    name order; raises :class:`~clineval.errors.DatasetError` naming file, line and field."""
    folder = Path(directory) if directory is not None else knowledge_dir()
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise DatasetError(f"{folder}: no knowledge files (*.yaml)")
    found: list[Scenario] = []
    seen: dict[tuple[str, str, str], str] = {}
    for path in files:
        for scenario in _read(path):
            key = (scenario.anatomy, scenario.modality, scenario.disease.casefold())
            if key in seen:
                raise DatasetError(
                    f"{path}: {scenario.disease} ({scenario.anatomy} {scenario.modality}) is also in "
                    f"{seen[key]}: one scenario per disease and pair"
                )
            seen[key] = path.name
            found.append(scenario)
    return tuple(found)


@cache
def _package_scenarios() -> tuple[Scenario, ...]:
    return load_knowledge()


SCENARIOS: tuple[Scenario, ...] = _package_scenarios()


def scenarios_for(anatomy: str, modality: str) -> list[Scenario]:
    """The scenarios of one anatomy-modality pair (the package's knowledge base)."""
    return [s for s in SCENARIOS if s.anatomy == anatomy and s.modality == modality]
