"""The Python API: ``evaluate`` (and ``aevaluate``), ``rescore`` and ``load_run``.

>>> from clineval import evaluate
>>> result = evaluate("cases.jsonl", metrics=["rouge", "trajectory_precision"], agent=my_agent)
>>> result.to_pandas()          # one row per case
>>> result.aggregate()          # mean, std, 95 % CI, unscored count per metric

Every run is saved in the run store (``.clineval/clineval.db`` by default, ``store=None``
to keep a run in memory only) as it goes; ``resume=RUN_ID`` continues an interrupted run,
``rescore(RUN_ID, metrics=...)`` scores a stored run's outputs with other metrics without
calling the agent again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from clineval.config import DEFAULT_CACHE, AgentConfig, RunConfig, build_agent, with_placeholders
from clineval.datasets import Dataset, fingerprint_cases, load_dataset
from clineval.datasets.loaders import stream_dataset
from clineval.datasets.streams import CaseStream
from clineval.errors import ColumnMappingError, ConfigError, field_errors
from clineval.interrupts import run_sync
from clineval.judges.base import Judge
from clineval.judges.config import JudgeConfig, build_judge, default_judge_config
from clineval.metrics.base import Metric, higher_is_better
from clineval.metrics.registration import REGISTERED
from clineval.metrics.registry import MetricSpec, build_metric, resolve_metrics
from clineval.model import Case, DatasetInfo, RunRecord
from clineval.results.result import EvalResult
from clineval.runner.agent import AgentCaller, AgentFn
from clineval.runner.engine import RunPlan, agent_work_missing, check_repeats, execute
from clineval.runner.progress import ProgressReporter, default_progress
from clineval.runner.provenance import (
    clineval_version,
    git_info,
    new_run_id,
    package_versions,
    platform_name,
    python_version,
)
from clineval.store.sqlite import DEFAULT_STORE, RunLease, RunStore

MetricLike = Metric | MetricSpec | str | Callable[..., Any]
AGENT_METRICS = ("latency", "failure")


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


#: Marks a keyword argument that was not given (so a run file's setting applies).
UNSET: Any = _Unset()


def _open_store(store: str | Path | RunStore) -> RunStore:
    return store if isinstance(store, RunStore) else RunStore(store)


def _judge_from(judge: Judge | JudgeConfig | str | None) -> tuple[JudgeConfig | None, Judge | None]:
    if judge is None:
        return default_judge_config(), None
    if isinstance(judge, str):
        try:
            return JudgeConfig.model_validate(judge), None
        except ValidationError as exc:
            raise ConfigError(f"judge {judge!r}: {'; '.join(field_errors(exc))}") from None
    if isinstance(judge, JudgeConfig):
        return judge, None
    return None, judge


def _metric_spec(metric: Metric) -> dict[str, Any]:
    spec = getattr(metric, "spec", None)
    if isinstance(spec, MetricSpec):
        return spec.model_dump(exclude_defaults=True)
    settings = getattr(metric, "settings", None)
    entry = REGISTERED.get(metric.name)
    if callable(settings) and entry is not None and entry.factory is type(metric):
        # a built-in metric made directly (TrajectorySingleToolUse(tool_name=...)): its
        # registry name and settings rebuild it on resume
        return MetricSpec(name=metric.name, args=settings()).model_dump(exclude_defaults=True)
    return {"name": f"python:{type(metric).__qualname__}", "alias": metric.name}


def _check_names(metrics: Sequence[Metric]) -> None:
    seen: set[str] = set()
    for metric in metrics:
        if metric.name in seen:
            raise ConfigError(
                f"two metrics are named {metric.name!r}; give one an alias, e.g. "
                f"'{metric.name}_2={metric.name}(...)'"
            )
        seen.add(metric.name)


def _judge_record(
    judge: Judge | None, config: JudgeConfig | None, metrics: Sequence[Metric] = ()
) -> dict[str, Any] | None:
    if judge is None:
        return {"name": "none"}
    record = {"name": judge.name, **judge.describe(), **({"config": config.label} if config else {})}
    if metrics and not any(getattr(m, "needs_judge", False) for m in metrics):
        record["used"] = False  # no metric of the run asks the judge (no judge notice is shown)
    return record


class _Session:
    """Builds the parts of a run (store, judge, metrics, agent) and runs it once."""

    def __init__(self, config: RunConfig, store: RunStore, progress: ProgressReporter):
        self.config = config
        self.store = store
        self.progress = progress
        self._owns_judge = False

    def judge(self, given: Judge | None) -> Judge | None:
        """The caller's judge object, or one built from the config (closed after the run)."""
        if given is not None:
            return given
        self._owns_judge = True
        return build_judge(self.config.judge, cache_path=self.config.cache, base_dir=self.config.folder)

    async def run(
        self,
        record: RunRecord,
        cases: Sequence[Case] | None,
        metrics: Sequence[Metric],
        agent: AgentFn | None,
        judge: Judge | None,
        *,
        lease: RunLease | None = None,
        retry_failed_outputs: bool = False,
        retry_errors: bool = False,
        keep_results: bool = True,
    ) -> EvalResult:
        try:
            caller = None
            if agent is not None:
                settings = self.config.agent or AgentConfig(target="python:agent")
                pool = None
                if settings.isolate and self.config.executor == "local":  # Ray workers are processes already
                    from clineval.runner.isolation import AgentPool, AgentRecipe

                    recipe = AgentRecipe.of(settings.target, settings.args, self.config.folder, agent)
                    pool = AgentPool(recipe, settings.concurrency)
                caller = AgentCaller(agent, settings, pool)
            executor = None
            if self.config.executor == "ray":
                from clineval.runner.ray_executor import executor_for

                executor = executor_for(self.config, rebuild_judge=self._owns_judge)
            plan = RunPlan(
                run=record,
                cases=cases,
                metrics=metrics,
                agent=caller,
                judge=judge,
                scoring_concurrency=self.config.effective_scoring_concurrency(),
                lease=lease,
                retry_failed_outputs=retry_failed_outputs,
                retry_errors=retry_errors,
                keep_results=keep_results,
                executor=executor,
            )
            outcome = await execute(plan, self.store, self.progress)
        finally:
            if lease is not None:
                lease.release()  # execute() released it already, unless it never started
            if judge is not None and self._owns_judge:
                await judge.aclose()
        if not outcome.kept:
            from clineval.results.stored import StoredResult

            return StoredResult(outcome.record, str(self.store.path), store=self.store)
        return EvalResult(
            run=outcome.record, cases=outcome.cases, results=outcome.results, store_path=str(self.store.path)
        )


def _new_record(
    config: RunConfig,
    dataset_source: str | Dataset | CaseStream,
    cases: Sequence[Case] | CaseStream,
    metrics: Sequence[Metric],
    judge: Judge | None,
    judge_config: JudgeConfig | None,
    source_run_id: str | None = None,
) -> RunRecord:
    # ${NAME} values of the run file are stored as ${NAME} (read again on resume)
    stored = config.model_copy(update={"metrics": []}).stored()
    stored["metrics"] = with_placeholders([_metric_spec(m) for m in metrics], config.from_environment)
    fingerprint = cases.fingerprint_value if isinstance(cases, CaseStream) else fingerprint_cases(cases)
    return RunRecord(
        id=new_run_id(),
        name=config.name,
        created_at=time.time(),
        config=stored,
        metrics=[m.name for m in metrics],
        lower_is_better=[m.name for m in metrics if not higher_is_better(m)],
        judge=_judge_record(judge, judge_config, metrics),
        dataset=DatasetInfo(
            source=dataset_source if isinstance(dataset_source, str) else dataset_source.source,
            fingerprint=fingerprint,
            n_cases=len(cases),
            metadata_columns=[] if isinstance(dataset_source, str) else dataset_source.metadata_columns,
        ),
        tags=stored["tags"],
        clineval_version=clineval_version(),
        python=python_version(),
        platform=platform_name(),
        packages=package_versions(),
        git=git_info(),
        source_run_id=source_run_id,
    )


def _metrics_from(items: Sequence[MetricLike], base_dir: Path | None) -> list[Metric]:
    return resolve_metrics(items, base_dir=base_dir)  # every bad metric reported at once


def _given(value: Any) -> bool:
    return value is not UNSET


def _built_agent(config: RunConfig) -> AgentFn:
    """The agent the configuration names; on Ray, a class is created on each worker, not here."""
    assert config.agent is not None
    if config.executor == "ray" or config.agent.isolate:  # a class is created where it is called
        from clineval.runner.ray_executor import agent_for_workers

        return agent_for_workers(config.agent, config.folder)
    return build_agent(config.agent, config.folder)


def _connect_executor(config: RunConfig) -> None:
    """Reach the Ray cluster of a run on Ray before anything is stored (a clear error if it cannot)."""
    if config.executor == "ray":
        from clineval.runner.ray_executor import connect

        connect(config.ray_address)


def _assemble_config(
    config: RunConfig | None,
    *,
    data: Any,
    agent: Any,
    judge_config: JudgeConfig | None,
    mapping: Any,
    encoding: Any,
    name: Any,
    tags: Any,
    store: Any,
    cache: Any,
    agent_concurrency: Any,
    agent_timeout_s: Any,
    agent_max_attempts: Any,
    agent_isolate: Any = UNSET,
    judge_concurrency: Any,
    scoring_concurrency: Any,
    executor: Any = UNSET,
    ray_address: Any = UNSET,
    ray_workers: Any = UNSET,
    agent_num_cpus: Any = UNSET,
    agent_num_gpus: Any = UNSET,
    repeats: Any = UNSET,
) -> RunConfig:
    """The run configuration: ``config`` (or the defaults), with every given keyword applied."""
    base = config or RunConfig()
    updates: dict[str, Any] = {}
    if isinstance(data, str | Path):
        updates["data"] = str(data)
    if judge_config is not None:
        updates["judge"] = judge_config
    for key, value in (
        ("name", name),
        ("encoding", encoding),
        ("store", store),
        ("cache", cache),
        ("scoring_concurrency", scoring_concurrency),
        ("executor", executor),
        ("ray_address", ray_address),
        ("ray_workers", ray_workers),
        ("repeats", repeats),
    ):
        if key == "store" and value is None:
            updates[key] = ":memory:"  # no store: the run is kept in memory only
        elif _given(value):
            updates[key] = str(getattr(value, "path", value)) if key == "store" else value
    if _given(mapping):
        updates["mapping"] = dict(mapping or {})
    if _given(tags):
        updates["tags"] = {**base.tags, **dict(tags or {})}
    agent_config = base.agent
    if isinstance(agent, AgentConfig):
        agent_config = agent
    elif agent is not None:
        target = agent if isinstance(agent, str) else f"python:{getattr(agent, '__qualname__', 'agent')}"
        agent_config = (agent_config or AgentConfig(target=target)).model_copy(update={"target": target})
    limits = {
        key: value
        for key, value in (
            ("concurrency", agent_concurrency),
            ("timeout_s", agent_timeout_s),
            ("max_attempts", agent_max_attempts),
            ("isolate", agent_isolate),
            ("num_cpus", agent_num_cpus),
            ("num_gpus", agent_num_gpus),
        )
        if _given(value)
    }
    if limits:
        if agent_config is None:
            raise ConfigError(
                "agent_concurrency, agent_timeout_s, agent_max_attempts, agent_isolate, "
                "agent_num_cpus and agent_num_gpus need an agent"
            )
        agent_config = agent_config.model_copy(update=limits)
    updates["agent"] = agent_config
    assembled = base.model_copy(update=updates)
    if _given(judge_concurrency) and judge_concurrency is not None:
        assembled.judge = assembled.judge.model_copy(update={"concurrency": judge_concurrency})
    try:  # model_copy does not validate: check the assembled settings once
        return assembled.revalidated()
    except ValidationError as exc:
        raise ConfigError("\n".join(field_errors(exc, unknown="unknown setting"))) from None


async def aevaluate(
    data: Any = None,
    metrics: Sequence[MetricLike] = (),
    *,
    agent: AgentFn | str | AgentConfig | None = None,
    judge: Judge | JudgeConfig | str | None = None,
    mapping: Mapping[str, str] | None = UNSET,
    encoding: str = UNSET,
    name: str | None = UNSET,
    tags: Mapping[str, str] | None = UNSET,
    store: str | Path | RunStore | None = UNSET,
    cache: str | None = UNSET,
    agent_concurrency: int = UNSET,
    agent_timeout_s: float = UNSET,
    agent_max_attempts: int = UNSET,
    agent_isolate: bool = UNSET,
    judge_concurrency: int | None = UNSET,
    scoring_concurrency: int | None = UNSET,
    executor: Literal["local", "ray"] = UNSET,
    ray_address: str | None = UNSET,
    ray_workers: int | None = UNSET,
    agent_num_cpus: float | None = UNSET,
    agent_num_gpus: float | None = UNSET,
    repeats: int = UNSET,
    progress: bool | ProgressReporter | None = None,
    resume: str | None = None,
    retry_errors: bool = False,
    config: RunConfig | None = None,
    keep_results: bool = True,
) -> EvalResult:
    """Async form of :func:`evaluate`.

    Settings not given keep their defaults, or the values in ``config`` when one is given
    (a run file loaded with :func:`clineval.config.load_run_config`); given ones override.
    ``executor="ray"`` runs the agent calls and scores on a Ray cluster (``ray_address``;
    ``agent_num_cpus``/``agent_num_gpus``: what each worker asks Ray for; see docs/ray.md).
    ``repeats=N`` calls the agent N times on each case and scores each case by the mean of
    its trials (:mod:`clineval.results.trials`; docs/running.md). ``agent_isolate=True`` runs
    the agent in worker processes (an agent that exits or crashes fails its case, not the
    run; docs/running.md); with ``resume`` it isolates the rest of an interrupted run.
    """
    reporter = progress if not isinstance(progress, bool | None) else default_progress(progress)
    if resume is not None:
        return await _resume(
            resume,
            store=store if _given(store) and store is not None else DEFAULT_STORE,
            judge=judge,
            agent=agent,
            progress=reporter,
            retry_errors=retry_errors,
            metrics=metrics,
            judge_concurrency=judge_concurrency if _given(judge_concurrency) else None,
            cache=cache,
            keep_results=keep_results,
            executor=executor,
            ray_address=ray_address,
            agent_isolate=agent_isolate,
        )
    judge_config, judge_obj = (None, None) if judge is None else _judge_from(judge)
    config = _assemble_config(
        config,
        data=data,
        agent=agent,
        judge_config=judge_config,
        mapping=mapping,
        encoding=encoding,
        name=name,
        tags=tags,
        store=store,
        cache=cache,
        agent_concurrency=agent_concurrency,
        agent_timeout_s=agent_timeout_s,
        agent_max_attempts=agent_max_attempts,
        agent_isolate=agent_isolate,
        judge_concurrency=judge_concurrency,
        scoring_concurrency=scoring_concurrency,
        executor=executor,
        ray_address=ray_address,
        ray_workers=ray_workers,
        agent_num_cpus=agent_num_cpus,
        agent_num_gpus=agent_num_gpus,
        repeats=repeats,
    )
    _connect_executor(config)
    if judge_obj is None:
        judge_config = config.judge
    store = store if isinstance(store, RunStore) else config.store

    # Data (without keep_results, a JSONL file is checked line by line and never held in memory)
    load = load_dataset if keep_results else stream_dataset
    dataset: Dataset | CaseStream
    try:
        if isinstance(data, Dataset | CaseStream):
            dataset = data
        elif data is None:
            path = config.data_path()
            if path is None:
                raise ConfigError("no data: pass a dataset (a file, a DataFrame or a list of dicts)")
            dataset = load(path, mapping=config.mapping, encoding=config.encoding)
        elif isinstance(data, str | Path):
            dataset = load(Path(data), mapping=config.mapping, encoding=config.encoding)
        else:
            dataset = load_dataset(data, mapping=config.mapping)
    except ColumnMappingError:
        with config.located("mapping"):  # a run file's mapping: the error names FILE:LINE too
            raise

    # Agent
    agent_fn: AgentFn | None
    if agent is not None and callable(agent) and not isinstance(agent, AgentConfig):
        agent_fn = agent
    elif config.agent is not None:
        with config.located("agent"):  # a run file's agent: its errors name FILE:LINE
            agent_fn = _built_agent(config)
    else:
        agent_fn = None

    # Metrics
    items: list[MetricLike] = list(metrics) or list(config.metrics)
    built = _metrics_from(items, config.folder)
    if agent_fn is not None:
        present = {m.name for m in built}
        built += [build_metric(n) for n in AGENT_METRICS if n not in present]
    if not built:
        raise ConfigError("no metrics: name at least one (see 'clineval metrics')")
    _check_names(built)
    check_repeats(
        config.repeats,
        agent=agent_fn is not None,
        metrics=built,
        executor=config.executor,
        cache=config.cache,
    )

    # Only now, with every input checked, is the store opened (a bad dataset leaves no file).
    with config.located("store"):
        run_store = _open_store(store)
    session = _Session(config, run_store, reporter)
    with config.located("judge"):
        judge_instance = session.judge(judge_obj)
    cases = dataset if isinstance(dataset, CaseStream) else dataset.cases
    record = _new_record(config, dataset, cases, built, judge_instance, judge_config)
    run_store.create_run(record, cases)
    if not keep_results and getattr(config, "executor", "local") != "ray":
        # the runner reads the cases back from the store, a chunk at a time
        del dataset, cases
        return await session.run(record, None, built, agent_fn, judge_instance, keep_results=False)
    if isinstance(cases, CaseStream):
        cases = list(cases)
    return await session.run(record, cases, built, agent_fn, judge_instance, keep_results=keep_results)


def evaluate(data: Any = None, metrics: Sequence[MetricLike] = (), **kwargs: Any) -> EvalResult:
    """Evaluate a dataset with metrics, optionally running an agent over it first.

    ``data``: a JSONL/JSON/CSV path, a pandas DataFrame, a list of dicts or cases.
    ``metrics``: registry names (``"rouge"``, ``"trajectory_single_tool_use(tool_name=x)"``),
    import paths, :class:`~clineval.metrics.Metric` objects or plain functions.
    ``agent``: a callable (sync or async) that takes the case input and returns the
    response, or a dict with ``response`` and ``trajectory``; latency and failure are
    then recorded for every case.
    ``judge``: ``None`` (``$CLINEVAL_JUDGE`` or no judge), a spec such as
    ``"openai:gpt-4o-mini"``, a :class:`~clineval.judges.JudgeConfig` or a judge object.
    ``keep_results``: ``True`` (default) returns every case and result in memory;
    ``False`` keeps memory bounded at any number of cases: a JSONL file is read line by
    line, cases and results go to the store and stay there, and the returned result
    (:class:`~clineval.results.stored.StoredResult`) reads its aggregates from the store and
    loads ``cases``/``results`` only when they are used (``clineval run`` does this).
    See :func:`aevaluate` for the other keyword arguments.
    """
    return run_sync(aevaluate(data, metrics, **kwargs))


async def _resume(
    run_ref: str,
    *,
    store: str | Path | RunStore,
    judge: Judge | JudgeConfig | str | None,
    agent: Any,
    progress: ProgressReporter,
    retry_errors: bool,
    metrics: Sequence[MetricLike],
    judge_concurrency: int | None,
    cache: Any,
    keep_results: bool = True,
    executor: Any = UNSET,
    ray_address: Any = UNSET,
    agent_isolate: Any = UNSET,
) -> EvalResult:
    run_store = _open_store(store)
    record = run_store.get_run(run_ref)
    if record.config.get("kind") == "suite":
        from clineval.suites.runner import aresume_suite

        suite_judge = judge if isinstance(judge, JudgeConfig) else None
        if isinstance(judge, str):
            suite_judge = _judge_from(judge)[0]
        outcome = await aresume_suite(
            record, store=run_store, judge=suite_judge, progress=progress, retry_errors=retry_errors
        )
        return outcome.result
    config = RunConfig.from_stored(record.config, record.id)
    judge_config, judge_obj = (None, None) if judge is None else _judge_from(judge)
    if judge_config is not None:
        config.judge = judge_config
    if judge_concurrency is not None:
        config.judge = config.judge.model_copy(update={"concurrency": judge_concurrency})
    if cache is not UNSET:
        config.cache = cache
    if _given(executor):
        config.executor = executor
    if _given(ray_address):
        config.ray_address = ray_address
    if config.repeats > 1 and config.executor != "local":
        raise ConfigError(f"run {record.id} has repeats: {config.repeats}, which run in this process only")
    if _given(agent_isolate) and agent_isolate is not None:
        if config.agent is None:
            raise ConfigError(f"run {record.id} has no agent to isolate")
        config.agent = config.agent.model_copy(update={"isolate": bool(agent_isolate)})
        if isinstance(record.config.get("agent"), dict):  # what the rest of the run used
            record.config["agent"] = {**record.config["agent"], "isolate": bool(agent_isolate)}
    _connect_executor(config)
    # What a resumed run used is what its record says.
    record.config["judge"] = with_placeholders(config.judge.model_dump(mode="json"), config.from_environment)
    record.config["cache"] = with_placeholders(config.cache, config.from_environment)
    session = _Session(config, run_store, progress)
    stream = not keep_results and getattr(config, "executor", "local") != "ray"
    cases = None if stream else run_store.load_cases(record.id)
    if metrics:
        built = _metrics_from(list(metrics), config.folder)
    else:
        built = []
        for spec in config.metrics:
            if spec.name.startswith("python:"):
                raise ConfigError(
                    f"run {record.id} used a metric given as a Python object ({spec.name}); resume it "
                    "from Python with evaluate(..., metrics=[...same objects...], resume=RUN_ID)"
                )
            built.append(build_metric(spec, base_dir=config.folder))
    if [m.name for m in built] != record.metrics:
        raise ConfigError(
            f"run {record.id} has metrics {record.metrics}; resume with the same ones "
            "(use 'clineval score' to add metrics to a stored run)"
        )
    # The run's lock first: a second resume of a run being run stops here, before its agent and
    # judge are built. The failed work --retry-errors forgets is forgotten when the run starts,
    # in one transaction with marking it running (RunStore.begin_run).
    lease = run_store.acquire_lease(record.id)
    try:
        agent_fn: AgentFn | None = None
        if config.agent is not None:
            if callable(agent):
                agent_fn = agent
            elif config.agent.target.startswith("python:"):
                if agent_work_missing(run_store, record):
                    raise ConfigError(
                        f"run {record.id} ran an agent given as a Python object; resume it from Python "
                        "with evaluate(..., agent=<the same agent>, resume=RUN_ID)"
                    )
            else:
                agent_fn = _built_agent(config)
        judge_instance = session.judge(judge_obj)
        if judge_config is not None or judge_obj is not None or judge_concurrency is not None:
            record.judge = _judge_record(judge_instance, config.judge if judge_obj is None else None, built)
    except BaseException:
        lease.release()
        raise
    return await session.run(
        record,
        cases,
        built,
        agent_fn,
        judge_instance,
        lease=lease,
        retry_failed_outputs=retry_errors and agent_fn is not None,
        retry_errors=retry_errors,
        keep_results=keep_results,
    )


async def arescore(
    run_ref: str,
    metrics: Sequence[MetricLike],
    *,
    judge: Judge | JudgeConfig | str | None = None,
    store: str | Path | RunStore = DEFAULT_STORE,
    cache: str | None = DEFAULT_CACHE,
    name: str | None = None,
    tags: Mapping[str, str] | None = None,
    judge_concurrency: int | None = None,
    progress: bool | ProgressReporter | None = None,
    keep_results: bool = True,
) -> EvalResult:
    """Async form of :func:`rescore`."""
    reporter = progress if not isinstance(progress, bool | None) else default_progress(progress)
    run_store = _open_store(store)
    source = run_store.get_run(run_ref)
    source_base: str | None
    if source.config.get("kind") == "suite":  # a suite run: paths are relative to the suite file
        source_base = str(Path(str(source.config.get("suite_file", "."))).parent)
    else:
        try:  # the folder as the run used it (its ${NAME} references read again)
            source_base = RunConfig.from_stored(source.config, source.id).base_dir
        except ConfigError:
            source_base = RunConfig.model_validate(source.config).base_dir
    cases: Sequence[Case] | CaseStream
    if keep_results or str(run_store.path) == ":memory:":
        cases = run_store.merged_cases(source.id)
    else:  # read a chunk at a time, here and by the runner (clineval score)
        from clineval.results.stored import stored_cases

        cases = stored_cases(run_store, source.id)
    judge_config, judge_obj = _judge_from(judge)
    config = RunConfig(
        name=name or (f"{source.name} (rescored)" if source.name else None),
        judge=judge_config or JudgeConfig(),
        store=str(run_store.path),
        cache=cache,
        tags={**source.tags, **dict(tags or {})},
        base_dir=source_base,
        review=source.config.get("review"),  # the same cases: the same review questions
    )
    if judge_concurrency is not None:
        config.judge = config.judge.model_copy(update={"concurrency": judge_concurrency})
    built = _metrics_from(list(metrics), config.folder)
    if not built:
        raise ConfigError("no metrics: name at least one (see 'clineval metrics')")
    _check_names(built)
    session = _Session(config, run_store, reporter)
    judge_instance = session.judge(judge_obj)
    record = _new_record(
        config, f"run {source.id}", cases, built, judge_instance, judge_config, source_run_id=source.id
    )
    run_store.create_run(record, cases)
    if isinstance(cases, CaseStream):
        return await session.run(record, None, built, None, judge_instance, keep_results=False)
    return await session.run(record, cases, built, None, judge_instance)


def rescore(run_ref: str, metrics: Sequence[MetricLike], **kwargs: Any) -> EvalResult:
    """Score a stored run's cases and agent outputs with other metrics, as a new run.

    The agent is not called again; the new run records the run it came from.
    ``keep_results=False`` reads the cases a chunk at a time and returns a
    :class:`~clineval.results.stored.StoredResult` (``clineval score``, bounded memory).
    """
    return run_sync(arescore(run_ref, metrics, **kwargs))


def load_run(run_ref: str, *, store: str | Path | RunStore = DEFAULT_STORE, lazy: bool = False) -> EvalResult:
    """A stored run as an :class:`EvalResult` (``latest`` names the newest); a path is opened read-only.

    ``lazy=True`` gives a :class:`~clineval.results.stored.StoredResult`: nothing but the run
    record is read now; aggregates and exports stream from the store (``clineval show`` and
    ``export`` use it, in bounded memory at any number of cases).
    """
    run_store = store if isinstance(store, RunStore) else RunStore(store, readonly=True)
    try:
        record = run_store.get_run(run_ref)
        from clineval.redaction import redact_json

        # What is shown, exported or compared is masked, also for runs stored before masking.
        record = RunRecord.model_validate_json(redact_json(record.model_dump_json()))
        if lazy:
            from clineval.results.stored import StoredResult

            held = run_store if run_store is store else None  # a path: opened again when read
            return StoredResult(record, str(run_store.path), store=held)
        return EvalResult(
            run=record,
            cases=run_store.merged_cases(record.id),
            results=run_store.load_results(record.id),
            store_path=str(run_store.path),
        )
    finally:
        if run_store is not store:
            run_store.close()
