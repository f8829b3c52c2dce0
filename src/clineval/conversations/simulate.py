"""Simulated conversations (Healthcare Agent Orchestrator): a simulated user talks with the system under test,
scenario by scenario and trial by trial; each finished trial is saved and scored.

The pieces, from the bottom up:

:func:`simulate_conversation`
    one conversation: the user's opening message, then system and user turns in
    alternation until the user is done or the turn limit (user turns) is reached. Its id is
    ``{scenario}#trial{n}`` (unique per trial) and it records the scenario's patient.
:func:`save_conversation` / :func:`load_saved`
    the native form (one JSON line) in ``{out}/{scenario}__trial{n}.jsonl``, written to a
    temporary file and renamed into place, so a file that exists is a finished trial.
:class:`Simulator`
    the runner's agent for the cases of :func:`scenario_cases` (one per scenario x trial):
    a trial already saved is loaded (the system is not called again), others are simulated
    and saved. Its output keeps the conversation (``metadata.agent_output.conversation``),
    which the conversation metrics read.
:func:`simulate_and_score`
    a simulation file (:class:`SimulationConfig`) as a stored, resumable run.
:func:`score_conversations`
    saved or real conversations (a file or a folder) scored as a stored run.

An interrupted simulation resumes in two ways: ``resume=RUN_ID`` (``clineval
conversations simulate --resume RUN_ID``) continues the stored run, re-running the trials
that failed; and a new run with the same ``out`` folder simulates only the trials that
have no saved file. Either way no finished trial is simulated twice.

The system under test is any callable that takes the conversation so far (a
:class:`~clineval.conversations.model.Conversation`, a copy it may keep) and returns the
new messages: a list of :class:`~clineval.conversations.model.Message` or of dicts, one
message, or a string (one message from the ``Orchestrator``); sync or async. An exception
it raises ends the trial as a failure (recorded by the runner, not saved).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import inspect
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from clineval.conversations.cases import CONVERSATION_KEY
from clineval.conversations.gold import GoldLabels
from clineval.conversations.model import Conversation, Message
from clineval.conversations.scenarios import Scenario, load_scenarios
from clineval.conversations.users import (
    COMPLETION_SIGNAL,
    CONTINUATION,
    LLMUser,
    ScriptedUser,
    SimulatedUser,
)
from clineval.errors import ConfigError
from clineval.interrupts import run_sync
from clineval.judges.config import JudgeConfig, default_judge_config
from clineval.metrics.registry import MetricSpec
from clineval.model import Case, Tags
from clineval.results.result import EvalResult
from clineval.runner.threads import call_in_thread
from clineval.store.sqlite import DEFAULT_STORE, RunStore

__all__ = [
    "ENVIRONMENT_KIND",
    "ORCHESTRATOR",
    "SimulationConfig",
    "Simulator",
    "System",
    "SystemConfig",
    "SystemOutputError",
    "SystemUnderTest",
    "as_system",
    "ascore_conversations",
    "asimulate_and_score",
    "build_simulator",
    "build_system",
    "build_user",
    "load_saved",
    "load_simulation_config",
    "save_conversation",
    "saved_path",
    "scenario_cases",
    "score_conversations",
    "simulate_and_score",
    "simulate_conversation",
    "simulation_config_of",
]

ORCHESTRATOR = "Orchestrator"
"""The speaker of a system reply given as a plain string (or a dict without a speaker)."""
ENVIRONMENT_KIND = "conversations.simulate"
"""``RunConfig.environment['kind']`` of a simulation run."""

SystemUnderTest = Callable[[Conversation], Any]
"""The conversation so far in; new messages out (see the module docstring). Sync or async."""


class SystemOutputError(TypeError):
    """The system under test returned something that is not one or more messages."""


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


def _describe(obj: Any) -> str:
    target = obj.func if isinstance(obj, partial) else obj
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    module = getattr(target, "__module__", None) or type(target).__module__
    return f"{module}:{name}" if module and not module.startswith("clineval_user_") else str(name)


# --------------------------------------------------------------------------- the system


class System:
    """A system under test, adapted: ``await system(conversation)`` gives a list of messages.

    Made by :func:`as_system`; checks that the callable takes one argument (the
    conversation so far) and turns what it returns into messages, or raises
    :class:`SystemOutputError` naming the system.
    """

    def __init__(self, fn: SystemUnderTest, *, name: str | None = None):
        self.name = name or _describe(fn)
        if not callable(fn):
            raise ConfigError(
                f"system {self.name!r} is not callable: give a function or an object with __call__ "
                "that takes the conversation so far"
            )
        self.fn = fn
        target = fn if inspect.isroutine(fn) or isinstance(fn, partial) else getattr(fn, "__call__", fn)  # noqa: B004
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            signature = None
        if signature is not None:
            try:
                signature.bind(None)
            except TypeError:
                raise ConfigError(
                    f"system {self.name!r} must take one argument, the conversation so far; "
                    f"its signature is {signature}"
                ) from None
        self._is_async = inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004
        )

    async def __call__(self, conversation: Conversation) -> list[Message]:
        view = conversation.model_copy(deep=True)
        if self._is_async:
            result = await self.fn(view)
        else:
            # A daemon thread: a system that never returns cannot keep the process alive.
            result = await call_in_thread(self.fn, view)
            if inspect.isawaitable(result):
                result = await result
        return system_messages(result, self.name)

    def __repr__(self) -> str:
        return f"System({self.name!r})"


def as_system(obj: SystemUnderTest | System, *, name: str | None = None) -> System:
    """``obj`` as a :class:`System` (checked: callable, one argument)."""
    if isinstance(obj, System):
        return obj
    return System(obj, name=name)


_ALIASES = (("content", "text"), ("name", "speaker"))


def system_messages(result: Any, name: str = "system") -> list[Message]:
    """What a system returned, as messages.

    ``None`` or ``[]``: no message; a string: one ``Orchestrator`` message; a
    :class:`Message`; a dict (``role`` defaults to ``assistant``, ``speaker`` to
    ``Orchestrator``; OpenAI-style ``content``/``name`` are accepted); or a list of these.
    """
    if result is None:
        return []
    items = list(result) if isinstance(result, list | tuple) else [result]
    messages: list[Message] = []
    for index, item in enumerate(items):
        where = f"system {name!r}" + (f", item {index}" if len(items) > 1 else "")
        if isinstance(item, Message):
            message = item
        elif isinstance(item, str):
            message = Message(role="assistant", speaker=ORCHESTRATOR, text=item)
        elif isinstance(item, Mapping):
            data = {str(k): v for k, v in item.items()}
            for alias, field in _ALIASES:
                if alias in data and field not in data:
                    data[field] = data.pop(alias)
            data.setdefault("role", "assistant")
            data.setdefault("speaker", ORCHESTRATOR)
            if data.get("text") is None:
                data["text"] = ""
            try:
                message = Message.model_validate(data)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'message'}: {e['msg']}" for e in exc.errors()[:5]
                )
                raise SystemOutputError(f"{where}: not a message: {problems}") from None
        else:
            raise SystemOutputError(
                f"{where}: returned a {type(item).__name__}; return the new messages: a string, a "
                "Message, a dict (role, speaker, text, tool_calls) or a list of them"
            )
        if message.role == "user":
            raise SystemOutputError(f"{where}: returned a user message; the simulated user writes those")
        if message.timestamp is None:
            message = message.model_copy(update={"timestamp": _now()})
        messages.append(message)
    return messages


# --------------------------------------------------------------------------- one conversation


def conversation_id(scenario_id: str, trial: int) -> str:
    """``{scenario}#trial{n}``: the id of a simulated conversation and of its case."""
    return f"{scenario_id}#trial{trial}"


async def simulate_conversation(
    system: SystemUnderTest | System,
    user: SimulatedUser,
    scenario: Scenario,
    *,
    trial: int,
    max_turns: int | None = None,
    system_version: str | None = None,
) -> Conversation:
    """One simulated conversation between ``user`` and ``system`` for ``scenario``.

    The user opens; then the system answers each user message, until the user is done
    (``next_message`` returns ``None``) or has had ``max_turns`` turns (default: the
    scenario's). An exception from the system or the user propagates.
    """
    if trial < 1:
        raise ValueError("trials are numbered from 1")
    runner = as_system(system)
    limit = max_turns if max_turns is not None else scenario.max_turns
    if limit < 1:
        raise ValueError("max_turns must be at least 1")
    conversation = Conversation(
        id=conversation_id(scenario.id, trial),
        messages=[],
        patient_id=scenario.patient_id,
        scenario=scenario.id,
        trial=trial,
        system_version=system_version,
        metadata={"user": user.name, "system": runner.name, "turn_limit": limit},
    )
    message: Message | None = await user.first_message(scenario)
    turns = 0
    ended = "user_done"
    while message is not None:
        if message.role != "user":
            raise TypeError(f"the simulated user {user.name!r} wrote a message with role {message.role!r}")
        if message.timestamp is None:
            message = message.model_copy(update={"timestamp": _now()})
        conversation.messages.append(message)
        turns += 1
        conversation.messages.extend(await runner(conversation))
        if turns >= limit:
            ended = "turn_limit"
            break
        message = await user.next_message(conversation, scenario)
    conversation.metadata.update({"user_turns": turns, "ended": ended})
    return conversation


# --------------------------------------------------------------------------- saving


def saved_path(folder: str | Path, scenario: str | Scenario, trial: int) -> Path:
    """``{folder}/{scenario}__trial{n}.jsonl``."""
    scenario_id = scenario.id if isinstance(scenario, Scenario) else scenario
    return Path(folder) / f"{scenario_id}__trial{trial}.jsonl"


def save_conversation(conversation: Conversation, folder: str | Path) -> Path:
    """Write a simulated conversation in the native form (one JSON line), atomically.

    The text goes to a temporary file in ``folder`` that is then renamed over the final
    name, so the file either does not exist or holds the whole conversation.
    """
    if conversation.scenario is None or conversation.trial is None:
        raise ValueError(f"conversation {conversation.id!r} has no scenario and trial to name its file")
    target = saved_path(folder, conversation.scenario, conversation.trial)
    target.parent.mkdir(parents=True, exist_ok=True)
    line = conversation.model_dump_json(exclude_none=True) + "\n"
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target


def load_saved(folder: str | Path, scenario: str | Scenario, trial: int) -> Conversation | None:
    """The saved conversation of a trial, or ``None`` when it has not finished."""
    path = saved_path(folder, scenario, trial)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        if len(lines) != 1:
            raise ValueError(f"expected one conversation (one JSON line), found {len(lines)} lines")
        conversation = Conversation.model_validate_json(lines[0])
    except (ValueError, ValidationError) as exc:
        raise ConfigError(
            f"saved conversation {path} cannot be read ({str(exc).splitlines()[0]}); delete it to "
            "simulate that trial again"
        ) from None
    scenario_id = scenario.id if isinstance(scenario, Scenario) else scenario
    if conversation.scenario != scenario_id or conversation.trial != trial:
        raise ConfigError(
            f"saved conversation {path} is scenario {conversation.scenario!r} trial {conversation.trial}, "
            f"not {scenario_id!r} trial {trial}"
        )
    return conversation


# --------------------------------------------------------------------------- cases and the runner's agent


def scenario_cases(scenarios: Sequence[Scenario], trials: int | None = None) -> list[Case]:
    """One case per scenario and trial (``trials`` overrides the scenarios' own counts).

    Case ``{scenario}#trial{n}``; input: the initial query; metadata: the scenario's own,
    then ``scenario``, ``patient_id`` and ``trial``.
    """
    if trials is not None and trials < 1:
        raise ConfigError("trials must be at least 1")
    cases = []
    for scenario in scenarios:
        for trial in range(1, (trials or scenario.trials) + 1):
            metadata: dict[str, Any] = {**scenario.metadata, "scenario": scenario.id, "trial": trial}
            if scenario.patient_id is not None:
                metadata["patient_id"] = scenario.patient_id
            cases.append(
                Case(id=conversation_id(scenario.id, trial), input=scenario.initial_query, metadata=metadata)
            )
    return cases


def _fingerprint(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class Simulator:
    """The runner's agent: simulates (or loads) the trial a case names.

    ``out``: where finished trials are saved (``None``: not saved, so only the run store
    resumes). ``setup``: what describes the system and the user (stored with each
    conversation); a saved trial simulated with another setup or another version of its
    scenario is refused rather than silently reused.
    """

    def __init__(
        self,
        system: SystemUnderTest | System,
        user: SimulatedUser,
        scenarios: Sequence[Scenario],
        *,
        out: str | Path | None = None,
        max_turns: int | None = None,
        system_version: str | None = None,
        setup: Mapping[str, Any] | None = None,
    ):
        self.system = as_system(system)
        self.user = user
        self.scenarios = {s.id: s for s in scenarios}
        self.out = Path(out) if out is not None else None
        self.max_turns = max_turns
        self.system_version = system_version
        describe = getattr(user, "describe", None)
        user_setup = describe() if callable(describe) else {"name": user.name}
        self.setup: dict[str, Any] = dict(
            setup
            if setup is not None
            else {"system": self.system.name, "system_version": system_version, "user": user_setup}
        )
        self.simulated = 0
        """Trials simulated by this object (not loaded from saved files)."""

    def simulation_key(self, scenario: Scenario) -> str:
        """A fingerprint of what shapes a trial: the scenario, the setup and the turn limit."""
        return _fingerprint(
            {
                "scenario": scenario.model_dump(mode="json", exclude={"trials"}),
                "setup": self.setup,
                "max_turns": self.max_turns,
            }
        )

    def scenario(self, scenario_id: str) -> Scenario:
        try:
            return self.scenarios[scenario_id]
        except KeyError:
            raise ConfigError(
                f"scenario {scenario_id!r} is not among the simulator's scenarios "
                f"({', '.join(self.scenarios) or 'none'})"
            ) from None

    async def conversation(self, scenario: Scenario, trial: int) -> tuple[Conversation, bool]:
        """The trial's conversation and whether it came from a saved file."""
        key = self.simulation_key(scenario)
        if self.out is not None:
            saved = load_saved(self.out, scenario, trial)
            if saved is not None:
                stored = saved.metadata.get("simulation_key")
                if stored is not None and stored != key:
                    raise ConfigError(
                        f"{saved_path(self.out, scenario, trial)} was simulated with another version of "
                        f"scenario {scenario.id!r} or another system/user setup; delete it (or use another "
                        "'out' folder) to simulate the trial again"
                    )
                return saved, True
        conversation = await simulate_conversation(
            self.system,
            self.user,
            scenario,
            trial=trial,
            max_turns=self.max_turns,
            system_version=self.system_version,
        )
        conversation.metadata["simulation_key"] = key
        self.simulated += 1
        if self.out is not None:
            save_conversation(conversation, self.out)
        return conversation, False

    async def __call__(self, input: Any, case: Case) -> dict[str, Any]:
        scenario_id = case.metadata.get("scenario")
        trial = case.metadata.get("trial")
        if not isinstance(scenario_id, str) or not isinstance(trial, int):
            raise ConfigError(f"case {case.id!r} is not a simulation case (made by scenario_cases)")
        conversation, from_saved = await self.conversation(self.scenario(scenario_id), trial)
        return simulation_output(
            conversation,
            from_saved=from_saved,
            saved=str(saved_path(self.out, scenario_id, trial)) if self.out is not None else None,
        )


def simulation_output(
    conversation: Conversation, *, from_saved: bool = False, saved: str | None = None
) -> dict[str, Any]:
    """The runner output for a conversation: the last agent text as the response, the
    agents' tool calls as the trajectory, and the whole conversation."""
    last = next((m.text for m in reversed(conversation.messages) if m.role == "assistant" and m.text), "")
    trajectory = [
        {"name": call.name, "arguments": call.arguments, "output": call.result, "id": call.id}
        for message in conversation.messages
        if message.role == "assistant"
        for call in message.tool_calls
    ]
    output: dict[str, Any] = {
        "response": last,
        CONVERSATION_KEY: conversation.model_dump(mode="json", exclude_none=True),
        "from_saved": from_saved,
    }
    if trajectory:
        output["trajectory"] = trajectory
    if saved is not None:
        output["saved"] = saved
    return output


# --------------------------------------------------------------------------- configuration


class SystemConfig(BaseModel):
    """The system under test: an import path, constructor settings and call limits."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(min_length=3)
    """``file.py:name`` (relative to the simulation file) or ``package.module:name``."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments: for a class, its constructor's; for a function, bound to it."""
    version: str | None = None
    """Recorded as each conversation's ``system_version``."""
    concurrency: int = Field(default=4, ge=1, le=256)
    """Trials simulated at once."""
    timeout_s: float = Field(default=1800.0, gt=0)
    """Seconds for a whole conversation (a trial that takes longer fails)."""

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"target": data}
        return data


class SimulationConfig(BaseModel):
    """A simulation file (YAML)::

    name: orchestrator v2
    scenarios: scenarios.yaml        # relative to this file
    system: my_system.py:build       # or {target: ..., args: {...}, version: v2}
    user: scripted                   # or llm (then user_judge: openai:MODEL[@URL])
    trials: 3                        # default: each scenario's own
    max_turns: 6                     # default: each scenario's own
    out: simulations/v2              # saved conversations; default simulations/<name>
    metrics: [agent_selection_accuracy, intent_resolution]
    judge: offline                   # for the metrics
    tags: {team: oncology}
    """

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    scenarios: str = Field(min_length=1)
    system: SystemConfig
    user: Literal["scripted", "llm"] = "scripted"
    user_judge: JudgeConfig | None = Field(default=None, validate_default=True)
    """The chat endpoint the LLM user runs on (``openai:MODEL[@BASE_URL]``, ``azure``, ...)."""
    continuation: str | None = CONTINUATION
    """The scripted user's closing message (``null``: none)."""
    completion_signal: str = COMPLETION_SIGNAL
    """What the LLM user replies when it is done."""
    trials: int | None = Field(default=None, ge=1, le=1000)
    max_turns: int | None = Field(default=None, ge=1, le=200)
    out: str | None = None
    metrics: list[MetricSpec] = Field(default_factory=list)
    judge: JudgeConfig = Field(default_factory=default_judge_config)
    tags: Tags = Field(default_factory=dict)
    base_dir: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _system_args(cls, data: Any) -> Any:
        """``system: file.py:Class`` with ``args:`` next to it, as in run files' agents."""
        if isinstance(data, dict) and "args" in data and isinstance(data.get("system"), str):
            data = dict(data)
            data["system"] = {"target": data["system"], "args": data.pop("args")}
        return data

    @field_validator("user_judge")
    @classmethod
    def _chat_endpoint(cls, value: JudgeConfig | None, info: ValidationInfo) -> JudgeConfig | None:
        if value is None and info.data.get("user") == "llm":
            raise ValueError(
                "user: llm needs user_judge (e.g. 'openai:gpt-4o-mini@http://localhost:8000/v1')"
            )
        if value is not None and value.provider not in ("openai", "azure", "scripted"):
            raise ValueError(
                "the LLM user needs a chat endpoint ('openai:MODEL[@BASE_URL]', 'azure[:DEPLOYMENT]' or "
                f"'scripted:FILE'), not {value.label!r}"
            )
        return value

    @model_validator(mode="after")
    def _user(self) -> SimulationConfig:
        if self.user == "llm" and self.user_judge is None:
            raise ValueError(
                "user: llm needs user_judge (e.g. 'openai:gpt-4o-mini@http://localhost:8000/v1')"
            )
        return self

    @property
    def folder(self) -> Path | None:
        return Path(self.base_dir) if self.base_dir else None

    def path(self, value: str) -> Path:
        """A path of the file, taken from its folder when relative."""
        path = Path(value)
        if not path.is_absolute() and self.folder is not None:
            path = self.folder / path
        return path

    @property
    def run_name(self) -> str:
        return self.name or f"simulation {Path(self.scenarios).stem}"

    @property
    def scenarios_path(self) -> Path:
        return self.path(self.scenarios)

    @property
    def out_path(self) -> Path:
        """Where conversations are saved: ``out``, or ``simulations/<name>`` next to the file."""
        if self.out:
            return self.path(self.out)
        stem = "".join(
            c if c.isalnum() or c in "._-" else "_" for c in (self.name or Path(self.scenarios).stem)
        )
        return self.path(str(Path("simulations") / stem))


def load_simulation_config(path: str | Path) -> SimulationConfig:
    """Read and validate a simulation file; relative paths in it are taken from its folder.

    Read like run files (includes, ``${ENV}``); every problem is reported with its line.
    """
    from clineval.suites.source import SuiteError, load_settings

    config, doc = load_settings(
        path, SimulationConfig, what="simulation file", expected="scenarios, system, user, metrics, ..."
    )
    if not config.scenarios_path.exists():
        raise SuiteError([doc.problem(("scenarios",), f"file not found: {config.scenarios_path}")])
    return config


def build_system(config: SystemConfig, base_dir: Path | None = None) -> System:
    """The system a config names (a class is created with ``args``)."""
    from clineval.importing import build_object

    obj = build_object(config.target, config.args, base_dir=base_dir, what="system")
    return as_system(obj, name=config.target)


def build_user(config: SimulationConfig) -> SimulatedUser:
    """The simulated user a config names."""
    if config.user == "scripted":
        return ScriptedUser(config.continuation)
    assert config.user_judge is not None
    judge = config.user_judge
    if judge.script:
        judge = judge.model_copy(update={"script": str(config.path(judge.script))})
    return LLMUser(judge, completion_signal=config.completion_signal)


def build_simulator(config: SimulationConfig, scenarios: Sequence[Scenario] | None = None) -> Simulator:
    """The :class:`Simulator` a simulation config describes."""
    if scenarios is None:
        scenarios = load_scenarios(config.scenarios_path)
    user = build_user(config)
    setup = {
        "system": config.system.model_dump(mode="json", include={"target", "args", "version"}),
        "user": config.user,
        "user_judge": config.user_judge.label if config.user_judge else None,
        "continuation": config.continuation if config.user == "scripted" else None,
        "completion_signal": config.completion_signal if config.user == "llm" else None,
    }
    _check_writable(config.out_path)
    return Simulator(
        build_system(config.system, config.folder),
        user,
        scenarios,
        out=config.out_path,
        max_turns=config.max_turns,
        system_version=config.system.version,
        setup=setup,
    )


def _check_writable(folder: Path) -> None:
    """Refuse, before any trial runs, a folder where conversations cannot be saved."""
    from clineval.errors import ConfigError

    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".clineval-probe-"):
            pass
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise ConfigError(
            f"simulation out folder {folder}: cannot write ({reason}); set 'out' in the simulation file "
            "to a folder you can write"
        ) from None


def simulation_config_of(run_config: Mapping[str, Any]) -> SimulationConfig | None:
    """The simulation settings stored with a run, or ``None`` for other runs."""
    environment = run_config.get("environment") or {}
    if not isinstance(environment, Mapping) or environment.get("kind") != ENVIRONMENT_KIND:
        return None
    settings = {k: v for k, v in environment.items() if k != "kind"}
    return SimulationConfig.model_validate(settings)


# --------------------------------------------------------------------------- runs


async def asimulate_and_score(
    config: SimulationConfig | None,
    *,
    store: str | Path | RunStore = DEFAULT_STORE,
    progress: Any = None,
    resume: str | None = None,
    judge: JudgeConfig | str | None = None,
    **run_on: Any,
) -> EvalResult:
    """Simulate every scenario x trial and score the conversations, as a stored run.

    ``resume=RUN_ID`` continues a stored simulation run with its own settings (``config``
    is then not used): trials that failed are simulated again, finished ones are not.
    ``judge`` overrides the metrics' judge (also when resuming). ``run_on``:
    ``executor="ray"`` (and ``ray_address``, ``ray_workers``) simulates and scores on a Ray
    cluster, like any run (see docs/ray.md).
    """
    from clineval.api import aevaluate
    from clineval.config import AgentConfig, RunConfig
    from clineval.datasets import Dataset

    if resume is not None:
        run_store = store if isinstance(store, RunStore) else RunStore(store)
        record = run_store.get_run(resume)
        try:
            settings = simulation_config_of(record.config)
        except ValidationError as exc:
            raise ConfigError(f"run {record.id}: its simulation settings are not usable: {exc}") from None
        if settings is None:
            raise ConfigError(
                f"run {record.id} is not a conversation simulation; resume it with 'clineval run --resume'"
            )
        return await aevaluate(
            resume=record.id,
            store=run_store,
            agent=build_simulator(settings),
            judge=judge,
            progress=progress,
            retry_errors=True,
            **{k: v for k, v in run_on.items() if k in ("executor", "ray_address")},
        )
    if config is None:
        raise ConfigError("give a simulation config, or resume=RUN_ID")
    if judge is not None:
        config = config.model_copy(update={"judge": JudgeConfig.model_validate(judge)})
    scenarios = load_scenarios(config.scenarios_path)
    cases = scenario_cases(scenarios, config.trials)
    simulator = build_simulator(config, scenarios)
    environment = {"kind": ENVIRONMENT_KIND, **config.model_dump(mode="json")}
    run_config = RunConfig(
        name=config.run_name,
        metrics=config.metrics,
        agent=AgentConfig(
            target="python:Simulator",
            concurrency=config.system.concurrency,
            timeout_s=config.system.timeout_s,
        ),
        judge=config.judge,
        store=str(getattr(store, "path", store)),
        tags={"environment": "conversations", "user": config.user, **config.tags},
        group_by="scenario",
        base_dir=config.base_dir,
        environment=environment,
    )
    trials = f"{config.trials} trial(s) each" if config.trials else "their own trial counts"
    source = f"simulated conversations: {len(scenarios)} scenario(s) x {trials} from {config.scenarios_path}"
    dataset = Dataset(cases=cases, source=source)
    return await aevaluate(
        dataset,
        agent=simulator,
        config=run_config,
        store=store,
        progress=progress,
        **run_on,
    )


def simulate_and_score(config: SimulationConfig | None, **kwargs: Any) -> EvalResult:
    """Simulate and score as a stored run (see :func:`asimulate_and_score`)."""
    return run_sync(asimulate_and_score(config, **kwargs))


async def ascore_conversations(
    path: str | Path,
    metrics: Sequence[Any],
    *,
    judge: JudgeConfig | str | None = None,
    store: str | Path | RunStore = DEFAULT_STORE,
    patient_id: str | None = None,
    name: str | None = None,
    tags: Mapping[str, str] | None = None,
    progress: Any = None,
    gold: GoldLabels | None = None,
) -> EvalResult:
    """Score saved conversations (a file or a folder, any format the loaders read) as a run.

    ``patient_id`` is passed to the loaders (the patient of conversations that do not
    record one). ``gold``: labels joined to the conversations by id and turn
    (:mod:`clineval.conversations.gold`; ``gold.used`` then says which rows were).
    """
    from clineval.api import aevaluate
    from clineval.config import RunConfig
    from clineval.conversations.loaders import conversations_dataset

    dataset = conversations_dataset(path, patient_id=patient_id, gold=gold)
    source = Path(path)
    run_tags = {
        "environment": "conversations",
        **({"gold": gold.path.name} if gold else {}),
        **dict(tags or {}),
    }
    # Relative paths in metric settings (references=..., sources=...) are taken from the
    # working directory, and kept that way for a resumed run started elsewhere.
    config = RunConfig(base_dir=str(Path.cwd()))
    return await aevaluate(
        dataset,
        list(metrics),
        judge=judge,
        store=store,
        name=name or f"conversations {source.name}",
        tags=run_tags,
        progress=progress,
        config=config,
    )


def score_conversations(path: str | Path, metrics: Sequence[Any], **kwargs: Any) -> EvalResult:
    """Score saved conversations as a stored run (see :func:`ascore_conversations`)."""
    return run_sync(ascore_conversations(path, metrics, **kwargs))
