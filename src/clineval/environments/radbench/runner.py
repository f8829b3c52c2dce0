"""Running the benchmark as an ordinary clineval run: one case per (record, task, condition)
and trial.

Each case's "agent" is an episode: the tool set of the case's condition is built
(seeded), the agent core plans, calls tools one at a time in the simulator and
concludes; the episode trace is kept with the case's output. One metric, ``radbench``,
reads the trace: its value is task completion where it applies (a solvable tool set; an
insufficient one only with automated tool building) and its sub-scores are every metric of
:mod:`clineval.environments.radbench.metrics` (``radbench.ld_exec_gt``,
``radbench.ots``, ...; not-applicable values are left out, never 0). The run is stored,
resumable and shown like any other; ``clineval radbench summary`` tabulates it per
condition and complexity.

**Trials.** With ``trials=N`` (``clineval radbench run --trials N``; RadA-BenchPlat repeats
each experiment five times) every episode -- the same record, question and tool set -- is
run N times, each trial a case of its own: ``record/task/condition/t1`` .. ``/tN``, with
the trial number in the case's metadata (``trial``). A run of one trial keeps the case id
``record/task/condition`` and no ``trial`` field, as every run made before trials existed,
so stored runs show, compare and resume as they did. Trial 1 runs exactly as a one-trial
run (the same core seed); trial k > 1 gives the seeded reference cores their own seed
(an LLM core differs between trials by sampling: give it a temperature above 0). The
tables average each episode's trials first (:func:`~clineval.environments.radbench.stats.episode_means`).

The settings (core, conditions, tasks, records, seed, trials, step limit, automated tool
building, prompt versions) are stored with the run, so that it can be resumed and
reproduced: the same settings give the same records, questions, tool sets and, for the
reference cores, the same episodes.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from clineval.config import RunConfig
from clineval.datasets import Dataset
from clineval.environments.radbench.model import BuildFrom, Core, Episode, QAPair, Record
from clineval.environments.radbench.vocab import CONDITIONS, TASKS, Condition, task
from clineval.errors import ConfigError
from clineval.interrupts import run_sync
from clineval.metrics.base import BaseMetric, ScoreContext
from clineval.model import Case, Score, ToolCall
from clineval.results.result import EvalResult

if TYPE_CHECKING:
    from clineval.environments.radbench.cores.backprop import Guidance, RoundReport
    from clineval.environments.radbench.cores.llm import LLMCoreConfig

CoreName = Literal["oracle", "greedy", "random", "llm"]
ENVIRONMENT = "radbench"
METRIC_NAME = "radbench"


class BenchSettings(BaseModel):
    """Everything that defines a benchmark run (stored with it)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["radbench"] = "radbench"
    core: CoreName = "oracle"
    llm: dict[str, Any] | None = None
    """Settings of the LLM core (:class:`~clineval.environments.radbench.cores.llm.LLMCoreConfig`)."""
    conditions: list[Condition] = Field(default_factory=lambda: list(CONDITIONS))
    tasks: list[str] = Field(default_factory=lambda: [t.key for t in TASKS])
    n_records: int = Field(default=10, ge=1, le=100_000)
    records_per_pair: int | None = Field(default=None, ge=1, le=1_000)
    """The larger combined record set: this many distinct records per anatomy-modality pair
    (:func:`~clineval.environments.radbench.records.generate_record_set`); ``n_records`` is
    then not used. None: the default set of ``n_records`` records."""
    records_file: str | None = None
    seed: int = 0
    trials: int = Field(default=1, ge=1, le=100)
    """How often each episode (record, task, condition) is run; 1: once, as before trials
    existed (case ids without a trial)."""
    step_limit: int = Field(default=20, ge=1, le=500)
    auto_build: bool = False
    build_from: BuildFrom = "fields"
    """What automated tool building reads: the NoCall's fields, or its natural-language
    ``<Request>`` (then the LLM core is asked to write one)."""
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    """The versions of the prompts an LLM core sends (filled when the run starts)."""

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, value: list[str]) -> list[str]:
        keys = []
        for key in value:
            try:
                keys.append(task(key).key)
            except KeyError as exc:
                raise ValueError(str(exc).strip("'\"")) from None
        if not keys:
            raise ValueError("at least one task")
        return list(dict.fromkeys(keys))

    @model_validator(mode="after")
    def _one_record_source(self) -> BenchSettings:
        if self.records_file and self.records_per_pair is not None:
            raise ValueError("records_per_pair generates records; it cannot be used with a records file")
        return self

    @field_validator("conditions")
    @classmethod
    def _some_conditions(cls, value: list[Condition]) -> list[Condition]:
        if not value:
            raise ValueError("at least one condition")
        return list(dict.fromkeys(value))


def episode_seed(seed: int, *parts: str) -> int:
    """A stable 63-bit seed for one episode from the run seed and the episode's identity."""
    digest = hashlib.blake2b("\x1f".join([str(seed), *parts]).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def trial_case_id(episode: str, trial: int, trials: int) -> str:
    """The case id of one trial of an episode (``record/task/condition``): the episode's own
    id for a one-trial run, ``.../tK`` otherwise."""
    return episode if trials == 1 else f"{episode}/t{trial}"


def trial_of(metadata: dict[str, Any]) -> int:
    """The trial number a case's metadata records (1 for a case of a one-trial run)."""
    value = metadata.get("trial", 1)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"case metadata 'trial': expected a whole number, got {value!r}") from None


class Bench:
    """The records, questions and cores of one benchmark run."""

    def __init__(self, settings: BenchSettings, base_dir: Path | None = None):
        from clineval.environments.radbench.questions import questions_for
        from clineval.environments.radbench.records import generate_record_set, generate_records, load_records

        self.settings = settings
        if settings.records_file:
            path = Path(settings.records_file)
            if not path.is_absolute() and base_dir is not None:
                path = base_dir / path
            bank = load_records(path)
            records = bank.records[: settings.n_records]
            qa = dict(bank.qa)
        elif settings.records_per_pair is not None:
            try:
                records = generate_record_set(settings.records_per_pair, seed=settings.seed)
            except ValueError as exc:
                raise ConfigError(f"records_per_pair: {exc}") from None
            qa = {}
        else:
            records = generate_records(settings.n_records, seed=settings.seed)
            qa = {}
        self.records: dict[str, Record] = {r.id: r for r in records}
        self.qa: dict[str, dict[str, QAPair]] = {}
        for record in records:
            given = qa.get(record.id) or {}
            made = questions_for(record, seed=episode_seed(settings.seed, record.id, "questions"))
            self.qa[record.id] = {key: given.get(key) or made[key] for key in made}
        self.prompt_versions: dict[str, str] = {}

    def cases(self) -> list[Case]:
        cases = []
        for record in self.records.values():
            for key in self.settings.tasks:
                spec = task(key)
                pair = self.qa[record.id][key]
                for condition in self.settings.conditions:
                    metadata: dict[str, Any] = {
                        "record_id": record.id,
                        "task": key,
                        "task_name": spec.name,
                        "complexity": spec.complexity,
                        "condition": condition,
                        "anatomy": record.anatomy,
                        "modality": record.modality,
                        "pair": f"{record.anatomy} {record.modality}",
                    }
                    trials = self.settings.trials
                    for trial in range(1, trials + 1):
                        cases.append(
                            Case(
                                id=trial_case_id(f"{record.id}/{key}/{condition}", trial, trials),
                                input=pair.question,
                                reference=pair.answer,
                                metadata=metadata if trials == 1 else {**metadata, "trial": trial},
                            )
                        )
        return cases

    def core(self, seed: int) -> Core:
        from clineval.environments.radbench.cores.reference import GreedyCore, OracleCore, RandomCore

        name = self.settings.core
        if name == "oracle":
            return OracleCore()
        if name == "greedy":
            return GreedyCore()
        if name == "random":
            return RandomCore(seed=seed)
        from clineval.environments.radbench.cores.llm import LLMCore

        return LLMCore(llm_config(self.settings))

    async def episode(self, case: Case) -> Episode:
        from clineval.environments.radbench.conditions import build_tool_set
        from clineval.environments.radbench.episode import run_episode

        meta = case.metadata
        record = self.records[str(meta["record_id"])]
        key = str(meta["task"])
        condition = str(meta["condition"])
        tool_set = build_tool_set(condition, record, key, seed=self.settings.seed)  # type: ignore[arg-type]
        trial = trial_of(meta)
        parts = (record.id, key, condition, "core") + (() if trial == 1 else (f"trial {trial}",))
        core = self.core(episode_seed(self.settings.seed, *parts))
        episode = await run_episode(
            core,
            record,
            self.qa[record.id][key],
            tool_set,
            step_limit=self.settings.step_limit,
            auto_build=self.settings.auto_build,
            build_from=self.settings.build_from,
        )
        if episode.prompt_versions:
            self.prompt_versions.update(episode.prompt_versions)
        return episode

    async def agent(self, query: Any, case: Case) -> dict[str, Any]:
        """The runner's agent: one episode, its answer, its tool calls and its trace."""
        episode = await self.episode(case)
        trajectory = [
            ToolCall(name=step.tool or "?", arguments={"inputs": list(step.inputs)})
            for step in episode.steps
            if step.action in ("call", "endcall")
        ]
        return {
            "response": episode.answer or "",
            "trajectory": [t.model_dump(mode="json") for t in trajectory],
            "episode": episode.model_dump(mode="json"),
        }


def episode_of(case: Case) -> Episode | None:
    """The episode trace stored with a case's output, if any."""
    output = case.metadata.get("agent_output")
    if isinstance(output, dict) and isinstance(output.get("episode"), dict):
        return Episode.model_validate(output["episode"])
    return None


class RadbenchMetric(BaseMetric):
    """Task completion of the episode, with every RadA-BenchPlat metric as a sub-score.

    The value is task completion where RadA-BenchPlat reports it (the same rule as
    :func:`~clineval.environments.radbench.stats.reporting_rows`): on a solvable tool set,
    and on an insufficient one only in a run with automated tool building
    (``auto_build``); elsewhere it has no value, and UAR and UGR (sub-scores) say how the
    episode went, so that a generic mean of the metric (``clineval show``) is task
    completion over the solvable conditions.
    """

    name = METRIC_NAME
    description = "radiology benchmark: task completion; every RadA-BenchPlat metric as a sub-score"
    requires: tuple[str, ...] = ("agent_run",)

    def __init__(self, auto_build: bool = False):
        self.auto_build = auto_build

    def score(self, case: Case, ctx: ScoreContext) -> Score:
        from clineval.environments.radbench.metrics import episode_metrics

        episode = episode_of(case)
        if episode is None:
            return Score.failed("the case has no episode trace (the agent core did not run)")
        values = episode_metrics(episode)
        completion = values.get("completion") if episode.solvable or self.auto_build else None
        subs = {k: v for k, v in values.items() if v is not None and k != "completion"}
        label = episode.finished
        if completion is None:
            return Score(sub_scores=subs, label=label) if subs else Score.not_applicable("no metric applies")
        return Score(value=completion, sub_scores=subs, label=label, details={"finished": episode.finished})


def llm_config(settings: BenchSettings) -> LLMCoreConfig:
    """The LLM core's configuration: its settings, asked for build requests when automated
    tool building reads them."""
    from clineval.environments.radbench.cores.llm import LLMCoreConfig

    data = dict(settings.llm or {})
    if settings.auto_build and settings.build_from == "request":
        data.setdefault("build_request", True)
    try:
        return LLMCoreConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"LLM core settings: {exc}") from None


def with_prompt_versions(settings: BenchSettings) -> BenchSettings:
    """The settings with the prompt versions of their core (none for the reference cores)."""
    if settings.core != "llm":
        return settings
    return settings.model_copy(update={"prompt_versions": llm_config(settings).prompt_versions()})


def run_config(settings: BenchSettings, *, name: str | None, tags: dict[str, str], store: str) -> RunConfig:
    return RunConfig(
        name=name or f"radbench {settings.core}",
        tags={
            "environment": ENVIRONMENT,
            "core": settings.core,
            "seed": str(settings.seed),
            **({"trials": str(settings.trials)} if settings.trials > 1 else {}),
            "conditions": ",".join(settings.conditions)
            if len(settings.conditions) < len(CONDITIONS)
            else "all",
            **tags,
        },
        store=store,
        environment=settings.model_dump(mode="json"),
        group_by="condition",
    )


def bench_settings_of(config: dict[str, Any]) -> BenchSettings | None:
    """The benchmark settings stored with a run, or None for other runs."""
    environment = config.get("environment") or {}
    if environment.get("kind") != ENVIRONMENT:
        return None
    return BenchSettings.model_validate(environment)


async def arun_bench(
    settings: BenchSettings,
    *,
    store: str,
    name: str | None = None,
    tags: dict[str, str] | None = None,
    concurrency: int = 8,
    progress: Any = None,
    resume: str | None = None,
    retry_errors: bool = False,
    **run_on: Any,
) -> EvalResult:
    """Run (or resume) the benchmark grid as a stored run.

    ``run_on``: ``executor="ray"`` (and ``ray_address``, ``ray_workers``) runs the episodes
    on a Ray cluster, like any run (see docs/ray.md).
    """
    from clineval.api import aevaluate

    bench = Bench(settings)
    metric = RadbenchMetric(auto_build=settings.auto_build)
    if resume is not None:
        return await aevaluate(
            resume=resume,
            store=store,
            agent=bench.agent,
            metrics=[metric, "latency", "failure"],
            progress=progress,
            retry_errors=retry_errors,
            judge=None,
            **{k: v for k, v in run_on.items() if k in ("executor", "ray_address")},
        )
    settings = with_prompt_versions(settings)
    config = run_config(settings, name=name, tags=dict(tags or {}), store=store)
    cases = bench.cases()
    source = settings.records_file or f"generated records (seed {settings.seed})"
    trials = f" x {settings.trials} trials" if settings.trials > 1 else ""
    dataset = Dataset(
        cases=cases,
        source=f"radbench: {len(bench.records)} records x {len(settings.tasks)} tasks x "
        f"{len(settings.conditions)} conditions{trials} from {source}",
    )
    return await aevaluate(
        dataset,
        [metric],
        agent=bench.agent,
        config=config,
        judge="none",
        agent_concurrency=concurrency,
        agent_timeout_s=600.0,
        progress=progress,
        **run_on,
    )


def run_bench(settings: BenchSettings, **kwargs: Any) -> EvalResult:
    """Run the benchmark grid (see :func:`arun_bench`)."""
    return run_sync(arun_bench(settings, **kwargs))


async def optimise(
    settings: BenchSettings,
    *,
    rounds: int = 3,
    start: Guidance | None = None,
    optimiser: dict[str, Any] | str | None = None,
    concurrency: int = 4,
    on_round: Callable[[RoundReport, Guidance | None], None] | None = None,
) -> Guidance | None:
    """Rounds of (run the settings' episodes with the current guidance, back-propagate the
    failures). ``settings`` must use the LLM core; ``optimiser`` is the optimiser's endpoint
    (a judge spec or config; default: the core's). Nothing is stored; returns the last
    guidance (None if the first round had no failure)."""
    from clineval.environments.radbench.cores.backprop import RoundReport, backpropagate, failed
    from clineval.environments.radbench.cores.llm import LLMCoreConfig, _backend_for

    if settings.core != "llm" or not settings.llm:
        raise ConfigError("prompt back-propagation needs the LLM core (core 'llm' with its settings)")
    if rounds < 1:
        raise ConfigError("prompt back-propagation needs at least one round")
    core_config = LLMCoreConfig.model_validate(settings.llm)
    opt_config = core_config.model_copy(
        update={"endpoint": LLMCoreConfig.model_validate({"endpoint": optimiser}).endpoint}
        if optimiser is not None
        else {}
    )
    backend = _backend_for(opt_config)
    guidance = start
    limit = asyncio.Semaphore(concurrency)
    try:
        for number in range(1, rounds + 1):
            llm = {**settings.llm, "guidance": guidance.model_dump(mode="json") if guidance else None}
            bench = Bench(settings.model_copy(update={"llm": llm}))

            async def one(case: Any, bench: Bench = bench) -> Episode:
                async with limit:
                    return await bench.episode(case)

            episodes = await asyncio.gather(*(one(case) for case in bench.cases()))
            n_failed = sum(failed(e) for e in episodes)
            report = RoundReport(
                round=number,
                episodes=len(episodes),
                failures=n_failed,
                completion=round(1 - n_failed / len(episodes), 4) if episodes else 0.0,
            )
            guidance = await backpropagate(backend, episodes, guidance, report=report)
            if on_round is not None:
                on_round(report, guidance)
    finally:
        await backend.aclose()
    return guidance


def metric_rows(result: EvalResult) -> list[tuple[dict[str, str], dict[str, float | None]]]:
    """Per case: its metadata (record, task, complexity, condition, and the trial in a run of
    several) and its benchmark metrics, exactly as stored: one row per trial (task completion
    on an insufficient tool set is 0 in runs stored before the score followed the tables'
    rule, None since, unless the run built tools). The tables use
    :func:`~clineval.environments.radbench.stats.run_rows` instead."""
    meta = {c.id: c.metadata for c in result.cases}
    rows = []
    for record in result.results:
        if record.metric != METRIC_NAME or record.score.status == "error":
            continue
        info = {k: str(v) for k, v in meta.get(record.case_id, {}).items() if k != "agent_output"}
        values: dict[str, float | None] = dict(record.score.sub_scores)
        values["completion"] = record.score.value
        rows.append((info, values))
    return rows


def settings_from_options(
    *,
    core: str,
    conditions: Sequence[str],
    tasks: Sequence[str],
    n_records: int,
    records_file: str | None,
    seed: int,
    step_limit: int,
    auto_build: bool,
    llm: dict[str, Any] | None,
    records_per_pair: int | None = None,
    build_from: str = "fields",
    trials: int = 1,
) -> BenchSettings:
    """Command-line options as settings; a clear error for a bad value."""
    data: dict[str, Any] = {
        "core": core,
        "build_from": build_from,
        "n_records": n_records,
        "records_per_pair": records_per_pair,
        "records_file": records_file,
        "seed": seed,
        "trials": trials,
        "step_limit": step_limit,
        "auto_build": auto_build,
        "llm": llm,
    }
    if conditions:
        data["conditions"] = list(conditions)
    if tasks:
        data["tasks"] = list(tasks)
    try:
        return BenchSettings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {str(e['msg']).removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise ConfigError(f"radbench settings: {problems}") from None
