"""The suite file schema of the AutoAuth prior-authorization evaluation framework, as pydantic models.

A suite file holds one evaluation: a header under the evaluation id, and one section
per case, each under its case id::

    prior_auth:                            # the evaluation id
      description: ...                     # mandatory
      disclaimer: ...                      # optional
      pipeline:
        class: pipeline.py:PriorAuthPipeline   # a PipelineEvaluator subclass
        policies: data/policies                # any other key: a pipeline parameter
      evaluators:
        - type: custom                     # custom | clineval | azure (see EvaluatorSpec.type)
          name: Decision                   # unique in the suite
          class: clineval.suites.evaluators:LabelMatch
          args: {threshold: 1}             # constructor arguments
      cases: [prior_auth.001-a, ...]

    prior_auth.001-a:
      metrics: [Decision]                  # the evaluators this case runs
      Decision: {threshold: 1}             # per-case constructor arguments (override args)
      evaluations:
        - query: decision                  # a field path into the pipeline's output
          ground_truth: approved
          context: ...                     # optional

Fields marked *extension* are clineval's additions; a file without them is a plain
AutoAuth-schema suite.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from clineval.judges.config import JudgeConfig
from clineval.model import Tags

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
HEADER_KEYS = frozenset({"pipeline", "evaluators", "cases"})
CASE_FIELDS = frozenset(
    {"metrics", "evaluations", "context", "description", "metadata", "input", "conversation", "scores"}
)


class PipelineSpec(BaseModel):
    """``pipeline``: the PipelineEvaluator class and its parameters (every other key)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    class_: str = Field(alias="class", min_length=3)
    concurrency: int = Field(default=4, ge=1, le=256)
    """*extension*: cases run by the pipeline at once."""
    timeout_s: float = Field(default=600.0, gt=0)
    """*extension*: seconds allowed per case before it counts as a failure."""

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class EvaluatorSpec(BaseModel):
    """One entry of ``evaluators``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: str = "custom"
    """``custom``, ``clineval`` or ``azure``: a label, except that with ``azure`` a bare class
    name (``SimilarityEvaluator``) is azure-ai-evaluation's (the extra ``clineval[azure]``)."""
    name: str
    class_: str | None = Field(default=None, alias="class")
    metric: str | dict[str, Any] | None = None
    """*extension*: a clineval metric instead of a class, e.g. ``tbfact`` or ``faithfulness``."""
    args: dict[str, Any] = Field(default_factory=dict)
    score_key: str | None = None
    """*extension*: which key of a dict result is the score (default: the only number, or
    ``score``/``value``/the evaluator's name)."""
    higher_is_better: bool = True
    """*extension*: false for evaluators where smaller is better (times, error counts)."""
    timeout_s: float = Field(default=300.0, gt=0)
    """*extension*: seconds one call of the evaluator may take; a call that takes longer is
    unscored with the reason (a sync evaluator's thread is abandoned, never waited for)."""
    description: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError(
                f"{value!r} is not a usable evaluator name: "
                "letters, digits, '_', '.', '-', not starting with a digit"
            )
        return value

    @model_validator(mode="after")
    def _one_source(self) -> EvaluatorSpec:
        if (self.class_ is None) == (self.metric is None):
            raise ValueError(
                "give exactly one of 'class' (module:Class) and 'metric' (a clineval metric name)"
            )
        return self


class EvaluationItem(BaseModel):
    """One entry of a case's ``evaluations``: what to look up and what it should be."""

    model_config = ConfigDict(extra="forbid")

    query: str
    """A field path into the pipeline's output (``patient_information.patient_name``)."""
    ground_truth: JsonValue
    context: JsonValue = None
    conversation: JsonValue = None
    scores: dict[str, JsonValue] | None = None
    response: JsonValue = None
    """*extension*: the output to score, when the pipeline does not generate one."""
    metrics: list[str] | None = None
    """*extension*: only these evaluators (of the case's ``metrics``) score this item."""

    @model_validator(mode="before")
    @classmethod
    def _required(cls, data: Any) -> Any:
        if isinstance(data, dict) and "ground_truth" not in data:
            raise ValueError("every evaluation needs 'query' and 'ground_truth' ('ground_truth' is missing)")
        return data


class CaseSpec(BaseModel):
    """A case section. Keys named after evaluators hold per-case constructor arguments."""

    model_config = ConfigDict(extra="allow")

    metrics: list[str] = Field(min_length=1)
    evaluations: list[EvaluationItem]
    context: JsonValue = None
    """*extension* at case level: context shared by every evaluation of the case."""
    description: str | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    """*extension*: shown in tables and usable with ``--group-by``."""
    input: str | None = None
    """*extension*: the request text, when there is one (kept with the case)."""
    conversation: JsonValue = None
    scores: dict[str, JsonValue] | None = None

    @field_validator("evaluations")
    @classmethod
    def _not_empty(cls, value: list[EvaluationItem]) -> list[EvaluationItem]:
        if not value:
            raise ValueError("the case has no evaluations: list at least one {query, ground_truth}")
        return value

    @property
    def settings(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class SuiteHeader(BaseModel):
    """The evaluation's header: what it checks, the pipeline, evaluators and cases."""

    model_config = ConfigDict(extra="forbid")

    description: str = Field(min_length=1)
    disclaimer: str | None = None
    pipeline: PipelineSpec
    evaluators: list[EvaluatorSpec] = Field(min_length=1)
    cases: list[str] = Field(min_length=1)
    judge: JudgeConfig | None = None
    """*extension*: the judge for judge-based evaluators (default: the offline judge)."""
    tags: Tags = Field(default_factory=dict)
    """*extension*: free tags stored with every run of the suite."""
    table: dict[str, str] | None = None
    """*extension*: the case table's columns, ``title: source`` (see docs/suites.md)."""
    review: Any = None
    """*extension*: the review schema clinicians answer for the suite's cases (a mapping, or
    a YAML file relative to the suite file); checked by the loader (see docs/reviewing.md)."""

    @field_validator("cases", mode="before")
    @classmethod
    def _case_ids_as_strings(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [str(v) if isinstance(v, int | float) else v for v in value]
        return value


FormName = Literal["suite", "run"]


def looks_like_suite(data: Any) -> bool:
    """True for the AutoAuth suite form: some top-level value is a header (pipeline/evaluators/cases)."""
    return isinstance(data, dict) and any(
        isinstance(value, dict) and HEADER_KEYS & set(value) for value in data.values()
    )
