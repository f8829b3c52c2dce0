"""Records of a run: what ran, on what, and every result it produced."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, JsonValue

from clineval.judges.base import Usage
from clineval.model.case import AgentRun, Case, ToolCall
from clineval.model.score import Score

RunStatus = Literal["running", "completed", "interrupted", "failed"]


def _tags_as_strings(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    return value


#: Free labels of a run; values written as numbers or booleans in YAML are kept as text.
Tags = Annotated[dict[str, str], BeforeValidator(_tags_as_strings)]


class GitInfo(BaseModel):
    """The evaluated project's code version, when it is a git checkout."""

    model_config = ConfigDict(extra="forbid")

    commit: str
    dirty: bool = False
    branch: str | None = None


class DatasetInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str
    fingerprint: str
    n_cases: int
    metadata_columns: list[str] = Field(default_factory=list)
    """Columns that were not case fields and were kept as metadata (a typo shows up here)."""


class RunRecord(BaseModel):
    """One run: its configuration and provenance, enough to rebuild and compare it."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str | None = None
    created_at: float
    finished_at: float | None = None
    status: RunStatus = "running"
    error: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    metrics: list[str] = Field(default_factory=list)
    lower_is_better: list[str] = Field(default_factory=list)
    """The metrics (of ``metrics``) where a smaller value is better, e.g. latency."""
    judge: dict[str, Any] | None = None
    dataset: DatasetInfo
    tags: dict[str, str] = Field(default_factory=dict)
    clineval_version: str
    python: str
    platform: str
    packages: dict[str, str] = Field(default_factory=dict)
    git: GitInfo | None = None
    source_run_id: str | None = None
    usage: Usage = Field(default_factory=Usage)


def run_kind(record: RunRecord) -> str | None:
    """What kind of run a record is: ``suite``, ``radbench`` (the radiology benchmark),
    ``calibration``, or ``None`` for an ordinary run."""
    if record.config.get("kind") == "suite":
        return "suite"
    environment = record.config.get("environment")
    if isinstance(environment, dict) and environment.get("kind") == "radbench":
        return "radbench"
    if "calibration" in record.tags:
        return "calibration"
    return None


class AgentOutput(BaseModel):
    """What the agent under test returned for one case (or how it failed)."""

    model_config = ConfigDict(extra="forbid")

    response: str | None = None
    trajectory: list[ToolCall] | None = None
    contexts: list[str] | None = None
    extra: dict[str, JsonValue] = Field(default_factory=dict)
    agent_run: AgentRun

    def apply_to(self, case: Case) -> Case:
        """The case with the agent's output in place of any output it carried."""
        update: dict[str, Any] = {"agent_run": self.agent_run}
        if self.response is not None or self.agent_run.failed:
            update["response"] = self.response
        if self.trajectory is not None or self.agent_run.failed:
            update["trajectory"] = self.trajectory
        if self.contexts is not None:
            update["contexts"] = self.contexts
        if self.extra:
            update["metadata"] = {**case.metadata, "agent_output": self.extra}
        return case.model_copy(update=update)


class ResultRecord(BaseModel):
    """One (case, metric) result as stored."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    case_id: str
    metric: str
    score: Score
    usage: Usage = Field(default_factory=Usage)
    duration_s: float = 0.0
    created_at: float = 0.0
