"""Scenarios for simulated conversations (Healthcare Agent Orchestrator): who the user is, what they ask, in
which order, and which agent should answer each question.

A scenario file is YAML, either a list of scenarios or a mapping with ``scenarios:``::

    scenarios:
      - id: p4-timeline
        patient_id: patient_4
        initial_query: "Orchestrator: prepare patient_4 for the tumor board"
        initial_expect: Orchestrator          # optional: the agent that should answer it
        followups:
          - "Show me the patient's timeline"  # a plain follow-up
          - text: "What do the latest images show?"
            expect: Radiology                  # the gold agent for this turn
        persona: a thoracic oncologist         # default: a clinician
        goal: a complete picture of the patient before the meeting
        trials: 3                              # default 1
        max_turns: 6                           # user turns, default 8
        metadata: {site: north}

The file is read with :func:`clineval.suites.source.load_document` (``include:``,
``!include`` and ``${ENV}`` work as in run files), and every problem is reported as
``file:line: field: what is wrong`` -- all of them at once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    field_validator,
    model_validator,
)

__all__ = ["DEFAULT_PERSONA", "Followup", "Scenario", "load_scenarios"]

DEFAULT_PERSONA = "a clinician preparing a patient's case for a multidisciplinary tumor board"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class Followup(BaseModel):
    """A question the user asks after the initial query, with the agent that should answer it."""

    model_config = ConfigDict(extra="forbid")

    text: str
    expect: str | None = None
    """The agent that should answer (the turn's gold agent), when known."""
    tools: list[str] | None = None
    """The tools the answer should call (the turn's gold tools), when known."""

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"text": data}
        return data

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a follow-up must not be empty")
        return value.strip()

    @field_validator("expect")
    @classmethod
    def _agent_name(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("the expected agent must not be empty (leave 'expect' out instead)")
        return value.strip() if value is not None else None


class Scenario(BaseModel):
    """One scenario: a patient, an opening query, scripted follow-ups and the user's persona."""

    model_config = ConfigDict(extra="forbid")

    id: str
    """Unique in its file; names the saved conversations (``{id}__trial{n}.jsonl``) and cases
    (``{id}#trial{n}``), so it is limited to letters, digits, ``.``, ``_`` and ``-``."""
    patient_id: str | None = None
    """The patient the conversation is about; recorded on every simulated conversation."""
    initial_query: str
    initial_expect: str | None = None
    """The agent that should answer the initial query, when known."""
    initial_tools: list[str] | None = None
    """The tools the answer to the initial query should call, when known."""
    followups: list[Followup] = Field(default_factory=list)
    persona: str = DEFAULT_PERSONA
    goal: str | None = None
    """What the user wants out of the conversation (the LLM user stops when it is met)."""
    trials: int = Field(default=1, ge=1, le=1000)
    max_turns: int = Field(default=8, ge=1, le=200)
    """The most user turns (the initial query included) before the conversation is cut off."""
    metadata: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("id", "patient_id", mode="before")
    @classmethod
    def _number_as_text(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(
                f"{value!r} is not a usable scenario id: use letters, digits, '.', '_' and '-' "
                "(it names the saved conversation files), starting with a letter or digit"
            )
        return value

    @field_validator("initial_query")
    @classmethod
    def _query(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the initial query must not be empty")
        return value.strip()

    @field_validator("persona")
    @classmethod
    def _persona(cls, value: str) -> str:
        return value.strip() or DEFAULT_PERSONA

    @field_validator("initial_expect")
    @classmethod
    def _expect(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("the expected agent must not be empty (leave it out instead)")
        return value.strip() if value is not None else None

    @property
    def effective_goal(self) -> str:
        """The goal, or: answers to the initial query and every follow-up."""
        if self.goal and self.goal.strip():
            return self.goal.strip()
        return "get a complete, correct answer to the initial query and to every follow-up question"


def load_scenarios(path: str | Path) -> list[Scenario]:
    """The scenarios of a YAML file (a list, or ``{scenarios: [...]}``).

    Raises :class:`~clineval.suites.source.SuiteError` listing every problem with its
    ``file:line`` (an unknown field, an empty query, a duplicate id, ...), or a
    :class:`~clineval.errors.ConfigError` when the file does not exist.
    """
    from clineval.suites.source import Problem, SuiteError, read_document

    file = Path(path)
    doc = read_document(file, "scenario file")
    data = doc.data
    base: tuple[str | int, ...] = ()
    if isinstance(data, dict):
        unknown = [k for k in data if k != "scenarios"]
        problems = [doc.problem((k,), "unknown field (expected 'scenarios: [...]')") for k in unknown]
        if problems:
            raise SuiteError(problems)
        data = data.get("scenarios")
        base = ("scenarios",)
    if not isinstance(data, list):
        raise SuiteError(
            [doc.problem(base, "expected a list of scenarios, or a mapping with 'scenarios: [...]'")]
        )
    if not data:
        raise SuiteError([doc.problem(base, "no scenarios")])
    scenarios: list[Scenario] = []
    problems = []
    first_seen: dict[str, int] = {}
    for index, item in enumerate(data):
        where = (*base, index)
        if not isinstance(item, dict):
            problems.append(doc.problem(where, "a scenario must be a mapping (id, initial_query, ...)"))
            continue
        try:
            scenario = Scenario.model_validate(item)
        except ValidationError as exc:
            problems.extend(doc.validation_problems(exc, base=where))
            continue
        if scenario.id in first_seen:
            first = doc.where((*base, first_seen[scenario.id], "id"))
            problems.append(
                Problem(
                    doc.where((*where, "id")),
                    f"{_field(where)}.id",
                    f"duplicate scenario id {scenario.id!r} (first defined at line "
                    f"{first.line if first else '?'})",
                )
            )
            continue
        first_seen[scenario.id] = index
        scenarios.append(scenario)
    if problems:
        raise SuiteError(problems)
    return scenarios


def _field(path: tuple[str | int, ...]) -> str:
    from clineval.suites.source import field_name

    return field_name(path)
