"""Run configuration: one pydantic model for run files, CLI options and the Python API.

A run file is YAML::

    name: quickstart
    data: cases.jsonl               # relative to this file
    encoding: cp1252                # optional: the data file's text encoding (default UTF-8)
    mapping: {question: input}      # optional: their column -> case field
    agent: agent.py:run_agent       # optional: module:function or file.py:function
                                    # ({target: ..., isolate: true}: in worker processes)
    executor: ray                   # optional: run on Ray (clineval[ray]); ray_address: auto
    metrics:
      - rouge
      - trajectory_precision
      - uses_labs=trajectory_single_tool_use(tool_name=get_labs)
      - name: rubric
        args: {criteria: "...", rating_scale: {1: "...", 5: "..."}}
    judge: offline                  # the default; or none, openai:MODEL, azure, scripted:FILE
    tags: {team: cardiology}
    review: review.yaml             # optional: what clinicians answer (clineval view --review),
                                    # a YAML file beside this one or the schema inline
    repeats: 5                      # optional: trials per case (default 1; see docs/running.md)

The same model is stored with each run, so that a run can be resumed or compared.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from clineval.errors import ClinevalError, ConfigError, DatasetError, field_errors
from clineval.importing import build_object
from clineval.judges.config import JudgeConfig, default_judge_config
from clineval.metrics.registry import MetricSpec
from clineval.model import Tags
from clineval.results.trials import MAX_REPEATS
from clineval.review.schema import ReviewSchema
from clineval.runner.agent import AgentFn, AgentSettings
from clineval.store.sqlite import DEFAULT_STORE

if TYPE_CHECKING:
    from clineval.suites.source import Document

DEFAULT_CACHE = ".clineval/judge_cache.db"


class AgentConfig(AgentSettings):
    """The agent under test: an import path, optional constructor settings, and call limits."""

    target: str = Field(min_length=3)
    args: dict[str, Any] = Field(default_factory=dict)
    num_cpus: float | None = Field(default=None, ge=0, le=1024)
    """CPUs each Ray worker running this agent asks for (``--executor ray``; default 1)."""
    num_gpus: float | None = Field(default=None, ge=0, le=64)
    """GPUs each Ray worker running this agent asks for, e.g. 1 for an agent that loads a local model."""
    isolate: bool = False
    """Call the agent in worker processes (``--isolate-agent``), so that ``os._exit``, a crash in
    native code or a blocked event loop fails one case, not the run (:mod:`clineval.runner.isolation`)."""

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"target": data}
        return data


class RunConfig(BaseModel):
    """Everything that defines a run."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    data: str | None = None
    encoding: str | None = None
    """The data file's text encoding (a Python codec name); UTF-8 when not given."""
    mapping: dict[str, str] = Field(default_factory=dict)
    metrics: list[MetricSpec] = Field(default_factory=list)
    agent: AgentConfig | None = None
    judge: JudgeConfig = Field(default_factory=default_judge_config)
    store: str = DEFAULT_STORE
    cache: str | None = DEFAULT_CACHE
    scoring_concurrency: int | None = Field(default=None, ge=1, le=4096)
    executor: Literal["local", "ray"] = "local"
    """Where agent calls and scores run: this process, or a Ray cluster (``clineval[ray]``)."""
    ray_address: str | None = None
    """The Ray cluster (``auto``, ``HOST:PORT``, ``ray://HOST:10001``); unset: a new local Ray instance."""
    ray_workers: int | None = Field(default=None, ge=1, le=100_000)
    """Ray worker actors; unset: as many as the cluster's CPUs (or GPUs) allow for the agent's request."""
    tags: Tags = Field(default_factory=dict)
    repeats: int = Field(default=1, ge=1, le=MAX_REPEATS)
    """Trials per case: the agent is called this many times on each case and every trial
    is scored; each case's score is the mean of its trials (:mod:`clineval.results.trials`)."""
    group_by: str | None = None
    base_dir: str | None = None
    review: ReviewSchema | None = None
    """The review schema clinicians answer for this run's cases (``clineval view --review``):
    a mapping in the run file, or the name of a YAML file relative to it. Stored inline."""
    environment: dict[str, Any] = Field(default_factory=dict)
    """Settings of a simulated environment the run used (e.g. the radiology benchmark's
    seed, conditions and core), enough to rebuild its cases when the run is resumed."""
    from_environment: list[str] = Field(default_factory=list)
    """Environment variables the run file read with ``${NAME}`` (set by clineval, not in a
    run file). Their values are stored as ``${NAME}`` (see :meth:`stored`) and read from the
    environment again when the run is resumed (:meth:`from_stored`)."""

    _origin: Document | None = PrivateAttr(default=None)
    """The run file this configuration was read from (where each value is)."""
    _loaded: dict[str, Any] = PrivateAttr(default_factory=dict)
    """The settings as the run file gave them: a setting changed since (an option) is not
    located in the file."""

    def revalidated(self) -> RunConfig:
        """This configuration validated again (after ``model_copy(update=...)``, which does
        not validate), still knowing its run file."""
        config = RunConfig.model_validate(self.model_dump())
        config._origin, config._loaded = self._origin, self._loaded
        return config

    def where(self, field: str) -> str | None:
        """``FILE:LINE`` of a setting read from a run file (the file's first line for a
        setting it does not give); None when the setting came from elsewhere."""
        if self._origin is None or getattr(self, field) != self._loaded.get(field):
            return None
        location = self._origin.where((field,))
        return str(location) if location else None

    @contextmanager
    def located(self, field: str) -> Iterator[None]:
        """User errors raised inside, about the setting ``field``, name the run file's
        ``FILE:LINE`` and the field (``run.yaml:2: data: dataset file not found: ...``)."""
        try:
            yield
        except ClinevalError as exc:
            if self._origin is None or self.where(field) is None or getattr(exc, "masked", False):
                raise
            from clineval.suites.source import Problem, SuiteError

            raise SuiteError([Problem(self._origin.where((field,)), field, str(exc))]) from None

    def check_inputs(self) -> None:
        """What can be checked before anything runs, each problem located in the run file:
        a dataset is given and is a file of a known format (or a folder), and a file agent's
        file exists. Nothing of the user's is imported."""
        from clineval.datasets.loaders import check_source

        with self.located("data"):
            path = self.data_path()
            if path is None:
                raise ConfigError("no dataset: give --data FILE or 'data:' in the run file")
            check_source(path)
        if self.agent is not None:
            with self.located("agent"):
                target = self.agent.target
                module, sep, name = target.rpartition(":")
                if not sep or not module or not name:
                    raise ConfigError(f"agent {target!r}: expected 'module.path:name' or 'file.py:name'")
                file = Path(module)
                if module.endswith(".py") and not file.is_absolute() and self.folder is not None:
                    file = self.folder / file
                if module.endswith(".py") and not file.is_file():
                    raise ConfigError(f"agent {target!r}: file {file} does not exist")

    def stored(self) -> dict[str, Any]:
        """The configuration as the run store keeps it: ``${NAME}`` instead of the values of
        the environment variables the run file read."""
        stored: dict[str, Any] = with_placeholders(self.model_dump(mode="json"), self.from_environment)
        if stored.get("review") is None:
            stored.pop("review", None)
        if isinstance(stored.get("agent"), dict) and not stored["agent"].get("isolate"):
            stored["agent"].pop("isolate", None)  # stored as before isolation existed
        if stored.get("repeats") == 1:  # a run without repeats is stored as before they existed
            stored.pop("repeats", None)
        return stored

    @classmethod
    def from_stored(cls, data: dict[str, Any], run_id: str = "") -> RunConfig:
        """A stored configuration, its ``${NAME}`` references read from the environment."""
        names = [str(n) for n in data.get("from_environment") or []]
        missing = [n for n in names if n not in os.environ]
        if missing:
            raise ConfigError(
                f"run {run_id or '(stored)'} was configured with environment variable(s) "
                f"{', '.join(missing)} (${{NAME}} in its run file); set them to resume it"
            )
        return cls.model_validate(_expanded(data, names))

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, value: str | None) -> str | None:
        from clineval.datasets.loaders import check_encoding

        if value is not None:
            try:
                check_encoding(value)
            except DatasetError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("data")
    @classmethod
    def _data_named(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("expected the name of a dataset file (.jsonl, .json or .csv) or a folder")
        return value

    @field_validator("mapping")
    @classmethod
    def _mapping_targets(cls, value: dict[str, str]) -> dict[str, str]:
        from clineval.datasets.loaders import check_mapping

        try:
            check_mapping(value)
        except DatasetError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("review", mode="before")
    @classmethod
    def _review_file(cls, value: Any, info: ValidationInfo) -> Any:
        """``review: FILE``: the schema read from a YAML file beside the run file."""
        if not isinstance(value, str):
            return value
        from clineval.review.schema import load_schema
        from clineval.suites.source import SuiteError

        if not value.strip():
            raise ValueError("expected a review schema (a mapping) or the name of a YAML file holding one")
        path = Path(value.strip())
        base = info.data.get("base_dir")
        if not path.is_absolute() and base:
            path = Path(base) / path
        try:
            return load_schema(path)
        except SuiteError as exc:
            raise ValueError("; ".join(str(p) for p in exc.problems)) from None
        except ConfigError as exc:
            raise ValueError(str(exc)) from None

    @property
    def folder(self) -> Path | None:
        return Path(self.base_dir) if self.base_dir else None

    def data_path(self) -> Path | None:
        if self.data is None:
            return None
        path = Path(self.data)
        if not path.is_absolute() and self.folder is not None:
            path = self.folder / path
        return path

    def effective_scoring_concurrency(self) -> int:
        if self.scoring_concurrency is not None:
            return self.scoring_concurrency
        return max(16, 2 * self.judge.concurrency)


def describe_validation_error(exc: ValidationError, where: str) -> str:
    return "\n".join(f"{where}: {line}" for line in field_errors(exc, unknown="unknown setting"))


def load_run_config(path: str | Path) -> RunConfig:
    """Read and validate a YAML run file; relative paths in it are taken from its folder.

    The file is read like a suite (:mod:`clineval.suites.source`): ``include:`` and
    ``!include``, ``${ENV}`` variables, and every problem reported with its line. Every
    metric is checked too (its name, and its settings against its typed signature), each
    problem with its line, without creating anything from user code.
    """
    from clineval.metrics.registry import check_metric
    from clineval.suites.source import SuiteError, load_settings

    config, doc = load_settings(path, RunConfig, what="run file", expected="name, data, metrics, ...")
    problems = []
    for index, spec in enumerate(config.metrics):
        for setting, message in check_metric(spec, base_dir=config.folder):
            exact: tuple[str | int, ...] = ("metrics", index, "args", str(setting))  # settings as a mapping
            problems.append(doc.problem(exact if exact in doc.locations else ("metrics", index), message))
    if problems:
        raise SuiteError(problems)
    if isinstance(doc.data, dict) and "from_environment" in doc.data:
        raise ConfigError(f"{path}: from_environment: set by clineval, not a run file setting")
    config.from_environment = sorted(_references(doc.raw))
    config._origin = doc
    config._loaded = {name: getattr(config, name) for name in RunConfig.model_fields}
    return config


_REFERENCE = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")
_MIN_PLACEHOLDER = 4


def _references(raw: Any) -> set[str]:
    """The names of the environment variables ``${NAME}`` reads in a file's text as written."""
    if isinstance(raw, str):
        return {m.group(1) for m in _REFERENCE.finditer(raw) if m.group(1)}
    if isinstance(raw, dict):
        return set().union(*(_references(v) for v in raw.values())) if raw else set()
    if isinstance(raw, list):
        return set().union(*(_references(v) for v in raw)) if raw else set()
    return set()


def with_placeholders(value: Any, names: Iterable[str]) -> Any:
    """``value`` (JSON-like) with the value of each environment variable in ``names``
    written back as ``${NAME}`` (values of 4 characters or more; longest first)."""
    pairs = sorted(
        ((os.environ[n], n) for n in names if len(os.environ.get(n, "")) >= _MIN_PLACEHOLDER),
        key=lambda pair: len(pair[0]),
        reverse=True,
    )
    if not pairs:
        return value

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            for found, name in pairs:
                node = node.replace(found, "${" + name + "}")
            return node
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(value)


def _expanded(value: Any, names: Iterable[str]) -> Any:
    """The inverse of :func:`with_placeholders`: ``${NAME}`` for each name in ``names`` read
    from the environment (other ``${...}`` text is left as it is)."""
    wanted = set(names)
    if not wanted:
        return value

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in wanted and match.group(0) == "${" + name + "}":
            return os.environ.get(name, "")
        return match.group(0)

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return _REFERENCE.sub(replace, node) if "${" in node else node
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(value)


def build_agent(config: AgentConfig, base_dir: Path | None = None) -> AgentFn:
    """The callable an agent config names (a class is created with ``args``)."""
    obj = build_object(config.target, config.args, base_dir=base_dir, what="agent")
    if not callable(obj):
        raise ConfigError(f"agent {config.target!r} is not callable")
    return obj  # type: ignore[no-any-return]
