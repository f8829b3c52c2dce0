"""Running a run's agent calls and scores on a Ray cluster (``--executor ray``, ``clineval[ray]``).

The driver (the process that runs ``clineval run`` or ``evaluate``) keeps everything it
keeps for a local run: the run's lock, the store and its one background writer, the
progress display, resuming. What it sends out is the work that is not yet in the store,
in shards of cases, to a pool of Ray actors ("workers"); each worker builds the agent
caller, the metrics and the judge once and runs a shard with the same code as a local
run (:class:`~clineval.runner.agent.AgentCaller`, :func:`~clineval.metrics.base.score_case`),
with its own concurrency. A finished shard's agent outputs and results come back to the
driver, which masks secrets in them and hands them to the writer; the driver is the
only process that writes the store.

Faults: a worker process that dies mid-shard (killed, out of memory, its node gone) is
restarted by Ray and the shard is run again (``max_restarts`` / ``max_task_retries``).
A shard's results come back only when the whole shard finished, and the driver keeps
every (case, metric) pair once, so a retried shard neither loses nor duplicates results.

The judge is rebuilt on each worker from the run's judge settings, its concurrency
divided among the workers, so that N workers do not multiply the requests in flight on
one endpoint; requests per minute and tokens per minute (when set) are paced by one
:class:`ClusterBudget` actor shared by every worker. Each worker's judge cache is a
file local to its node, at the path the run names (made absolute on the driver).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import socket
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.errors import (
    ClinevalError,
    ConfigError,
    JudgeConfigurationError,
    RunInterrupted,
    StoreError,
)
from clineval.model import AgentOutput, Case, ResultRecord
from clineval.redaction import redact as mask_secrets
from clineval.runner.progress import NullProgress, ProgressReporter

if TYPE_CHECKING:
    from clineval.config import AgentConfig, RunConfig
    from clineval.judges.base import Judge
    from clineval.judges.config import JudgeConfig
    from clineval.metrics.base import Metric
    from clineval.runner.agent import AgentCaller, AgentFn, AgentSettings
    from clineval.runner.engine import RunOutcome, RunPlan
    from clineval.store.sqlite import RunStore

INSTALL_HINT = "pip install 'clineval[ray]'"


class RaySettings(BaseModel):
    """Where and how a run is spread over Ray."""

    model_config = ConfigDict(extra="forbid")

    address: str | None = None
    """``auto`` (a running cluster found on this machine), ``HOST:PORT`` (a cluster's head),
    ``ray://HOST:10001`` (Ray Client), or None: the cluster Ray is connected to already, or
    ``$RAY_ADDRESS``, or a new local Ray instance."""
    workers: int | None = Field(default=None, ge=1, le=100_000)
    """Worker actors; by default as many as the cluster's CPUs (or GPUs) allow for the agent's request."""
    shard_size: int | None = Field(default=None, ge=1, le=100_000)
    """Cases per shard; by default about 8 shards per worker, at most 64 cases each."""
    num_cpus: float | None = Field(default=None, ge=0)
    """CPUs each worker asks Ray for (the agent's ``num_cpus``; default 1)."""
    num_gpus: float | None = Field(default=None, ge=0)
    """GPUs each worker asks Ray for (the agent's ``num_gpus``, e.g. 1 for a local model)."""
    max_retries: int = Field(default=3, ge=0, le=100)
    """Restarts of a dead worker, and new attempts of the shard it was running."""
    judge_rpm: float | None = Field(default=None, gt=0)
    """Judge requests per minute, for the whole cluster."""
    judge_tpm: float | None = Field(default=None, gt=0)
    """Judge tokens per minute (as responses report them), for the whole cluster."""


# ---------------------------------------------------------------------------- connecting


def import_ray() -> ModuleType:
    """The ``ray`` module, or a clear error telling how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


def connect(address: str | None) -> ModuleType:
    """Connect this process to Ray (once); a clear one-line error when the cluster cannot be reached."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    where = (address or "").removeprefix("ray://")
    if address and address != "auto" and ":" in where:
        host, _, port = where.rpartition(":")
        try:  # Ray itself waits half a minute or more for a head that is not there
            with socket.create_connection((host, int(port)), timeout=5):
                pass
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"--ray-address {address!r}: no Ray cluster answers there ({exc}); give the head's "
                "HOST:PORT (6379 by default), ray://HOST:10001, or auto for a cluster on this machine"
            ) from None
    try:
        if address is None and not os.environ.get("RAY_ADDRESS"):
            ray.init(include_dashboard=False)  # a new local instance: no dashboard to start
            _watch_local_instance(ray)
        else:
            ray.init(address=address)
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        where = f"--ray-address {address!r}" if address else "Ray"
        raise ConfigError(f"{where}: could not connect to a Ray cluster: {first}") from None
    return ray


_WATCHERS: list[Any] = []
"""The watchers of the local Ray instances this process started (kept: their pipes must stay open)."""


def _watch_local_instance(ray: ModuleType) -> None:
    """End the new local instance's processes when this process ends, even by SIGKILL
    (:mod:`clineval.runner.ray_reaper`)."""
    from clineval.runner.ray_reaper import start_watcher

    try:
        session_dir = str(ray._private.worker.global_worker.node.get_session_dir_path())
    except Exception:  # another Ray version's internals: the instance is left to ray.shutdown
        return
    watcher = start_watcher(session_dir)
    if watcher is not None:
        _WATCHERS.append(watcher)


# ---------------------------------------------------------------------------- what the workers get


@dataclass
class WorkerJudge:
    """How a worker rebuilds the run's judge (its settings are the run's, concurrency divided)."""

    config: JudgeConfig
    cache_path: str | None
    base_dir: str | None


@dataclass
class DeferredAgent:
    """An agent class named in the run's settings, created on each worker (where it may load a
    model onto the worker's GPU), not on the driver. The class travels pickled (by value when
    it is in a user's file), so the workers need no copy of the file."""

    target: str
    cls: type
    args: dict[str, Any]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"the agent {self.target!r} is created and called on the Ray workers")

    def build(self) -> AgentFn:
        try:
            agent = self.cls(**self.args)
        except TypeError as exc:
            raise ConfigError(f"agent {self.target!r}: cannot be created with {self.args}: {exc}") from None
        if not callable(agent):
            raise ConfigError(f"agent {self.target!r} is not callable")
        return agent  # type: ignore[no-any-return]


def agent_for_workers(config: AgentConfig, base_dir: Path | None) -> AgentFn:
    """The agent of a run on Ray: a class as a :class:`DeferredAgent` (imported and checked
    here, created on the workers); a function as it is."""
    import inspect

    from clineval.importing import build_object, import_object

    obj = import_object(config.target, base_dir=base_dir, what="agent")
    if inspect.isclass(obj):
        return DeferredAgent(config.target, obj, dict(config.args))
    agent = build_object(config.target, config.args, base_dir=base_dir, what="agent")
    if not callable(agent):
        raise ConfigError(f"agent {config.target!r} is not callable")
    return agent  # type: ignore[no-any-return]


@dataclass
class WorkerSpec:
    """Everything a worker needs to run shards of one run; sent once, pickled (cloudpickle)."""

    run_id: str
    metrics: list[Metric]
    agent: AgentFn | None
    agent_settings: AgentSettings | None
    judge: WorkerJudge | Judge | None
    scoring_concurrency: int
    budget: Any = None
    """The :class:`ClusterBudget` actor's handle, when requests are paced cluster-wide."""


@dataclass
class Item:
    """One case of a shard: whether its agent still has to run, and which metrics are left."""

    case: Case
    run_agent: bool
    metrics: list[str]


@dataclass
class ShardResult:
    outputs: list[tuple[str, AgentOutput]] = field(default_factory=list)
    results: list[ResultRecord] = field(default_factory=list)


def _by_value_modules() -> list[ModuleType]:
    """The loaded modules of user code, which a worker may not be able to import.

    Code of installed packages (and clineval's) is pickled by reference; code of a user's
    own files (an agent in ``agent.py``, a metric in ``metrics.py``, a test module) is
    pickled by value, so that workers need neither the files nor an import path for them.
    """
    installed = tuple({sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")})
    modules = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if module is None or path is None or name == "__main__" or name.split(".")[0] == "clineval":
            continue
        if str(path).startswith(installed) or not str(path).endswith(".py"):
            continue
        modules.append(module)
    return modules


def pickle_spec(spec: WorkerSpec) -> bytes:
    """``spec`` as bytes for the workers; a clear error for an agent or metric that cannot be sent."""
    from ray import cloudpickle

    modules = _by_value_modules()
    for module in modules:
        cloudpickle.register_pickle_by_value(module)  # type: ignore[no-untyped-call]
    try:
        return bytes(cloudpickle.dumps(spec))  # type: ignore[no-untyped-call]
    except Exception as exc:
        raise ConfigError(
            f"the agent, a metric or the judge cannot be sent to Ray workers ({type(exc).__name__}: "
            f"{exc}); give the agent as file.py:function (or module:function), metrics by name and "
            "the judge as a spec or JudgeConfig, or build what cannot be pickled inside the agent"
        ) from None
    finally:
        for module in modules:
            with contextlib.suppress(ValueError):
                cloudpickle.unregister_pickle_by_value(module)  # type: ignore[no-untyped-call]


# ---------------------------------------------------------------------------- the worker


class ShardRunner:
    """A worker's state for one run: the agent caller, metrics and judge, built once."""

    def __init__(self, spec: WorkerSpec):
        self.spec = spec
        self.metrics = {m.name: m for m in spec.metrics}
        self.caller: AgentCaller | None = None
        self._judge: Judge | None = None
        self._judge_ready = False
        self._scoring: asyncio.Semaphore | None = None

    def judge(self) -> Judge | None:
        if self._judge_ready:
            return self._judge
        given = self.spec.judge
        if isinstance(given, WorkerJudge):
            from clineval.judges.config import build_judge

            base = Path(given.base_dir) if given.base_dir else None
            # a cache file local to this node (made with its folder; read-only if it cannot be written)
            self._judge = build_judge(given.config, cache_path=given.cache_path, base_dir=base)
        else:
            self._judge = given
        backend = getattr(self._judge, "backend", None)
        if self.spec.budget is not None and backend is not None and hasattr(backend, "budget"):
            backend.budget = ClusterBudget(self.spec.budget)
        self._judge_ready = True
        return self._judge

    async def run(self, items: Sequence[Item]) -> ShardResult:
        from clineval.metrics.base import ScoreContext, score_case
        from clineval.runner.engine import _selects

        judge = self.judge()
        if self.caller is None and self.spec.agent is not None and self.spec.agent_settings is not None:
            from clineval.runner.agent import AgentCaller

            agent = self.spec.agent
            built = agent.build() if isinstance(agent, DeferredAgent) else agent  # a class: created here
            self.caller = AgentCaller(built, self.spec.agent_settings)
        if self._scoring is None:
            self._scoring = asyncio.Semaphore(max(1, self.spec.scoring_concurrency))
        scoring = self._scoring
        shard = ShardResult()

        async def score(case: Case, metric: Metric) -> None:
            async with scoring:
                ctx = ScoreContext(judge)
                started = time.perf_counter()
                value = await score_case(metric, case, ctx)
            shard.results.append(
                ResultRecord(
                    run_id=self.spec.run_id,
                    case_id=case.id,
                    metric=metric.name,
                    score=value,
                    usage=ctx.usage,
                    duration_s=time.perf_counter() - started,
                    created_at=time.time(),
                )
            )

        async def one(item: Item) -> None:
            case = item.case
            if item.run_agent and self.caller is not None:
                output = await self.caller.run(case)
                shard.outputs.append((case.id, output))
                case = output.apply_to(case)
            metrics = [self.metrics[n] for n in item.metrics if n in self.metrics]
            await asyncio.gather(*(score(case, m) for m in metrics if _selects(m, case)))

        await asyncio.gather(*(one(item) for item in items))
        return shard

    async def aclose(self) -> None:
        if self._judge is not None and isinstance(self.spec.judge, WorkerJudge):
            await self._judge.aclose()  # the judge this worker built: flush its cache, close its session


class ClusterBudget:
    """:class:`~clineval.judges.budget.RequestBudget` on a worker, backed by one shared actor.

    The actor holds one :class:`~clineval.judges.budget.RateBudget` for the whole cluster.
    A round trip to it costs milliseconds (2.3 ms measured on a busy 2-core machine), so
    permission is asked in small batches: one call waits for one request's turn and takes
    up to ``batch`` - 1 more only if the budget has them to spare at that moment (so at a
    rate the budget holds back, requests still go one by one, evenly spaced). The tokens
    responses reported are sent along with the next call, or every ``batch`` responses.
    """

    def __init__(self, actor: Any, batch: int = 8):
        self.actor = actor
        self.batch = batch
        self._permits = 0
        self._lock: asyncio.Lock | None = None
        self._spent: list[int] = []

    async def acquire(self) -> None:
        if self._permits > 0:
            self._permits -= 1
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one call to the actor at a time; the others wait for its permits
            if self._permits == 0:
                spent, self._spent = self._spent, []
                self._permits = int(await self.actor.grant.remote(self.batch, spent))
            self._permits -= 1

    def spent(self, tokens: int) -> None:
        self._spent.append(int(tokens))  # every acquire() is matched by one spent()
        if len(self._spent) >= self.batch:
            spent, self._spent = self._spent, []
            self.actor.report.remote(spent)


class _BudgetActorImpl:
    """The cluster-wide judge budget: one :class:`~clineval.judges.budget.RateBudget` (one actor per run)."""

    def __init__(self, rpm: float | None, tpm: float | None):
        from clineval.judges.budget import RateBudget

        self.budget = RateBudget(rpm, tpm)

    async def grant(self, most: int, spent: list[int]) -> int:
        """Wait for one request's turn, then take up to ``most`` - 1 more that are free now."""
        self.report(spent)
        await self.budget.acquire()
        granted = 1
        while granted < most and self.budget.wait_s() == 0.0:
            self.budget.take()
            granted += 1
        return granted

    def report(self, spent: list[int]) -> None:
        for tokens in spent:
            self.budget.spent(tokens)


class _WorkerImpl:
    def __init__(self, spec: bytes):
        import pickle

        self.runner = ShardRunner(pickle.loads(spec))

    async def run_shard(self, items: list[Item]) -> ShardResult:
        return await self.runner.run(items)

    async def close(self) -> None:
        await self.runner.aclose()


_ACTORS: dict[str, Any] = {}


def _actor_classes(ray: ModuleType) -> tuple[Any, Any]:
    if not _ACTORS:
        _ACTORS["worker"] = ray.remote(_WorkerImpl)
        _ACTORS["budget"] = ray.remote(_BudgetActorImpl)
    return _ACTORS["worker"], _ACTORS["budget"]


# ---------------------------------------------------------------------------- the driver


def _shards(items: Iterator[Item], size: int) -> Iterator[list[Item]]:
    shard: list[Item] = []
    for item in items:
        shard.append(item)
        if len(shard) >= size:
            yield shard
            shard = []
    if shard:
        yield shard


def default_workers(ray: ModuleType, settings: RaySettings) -> int:
    """As many workers as the cluster's CPUs (and GPUs, when asked for) allow."""
    resources = ray.cluster_resources()
    for key, asked in (("CPU", settings.num_cpus), ("GPU", settings.num_gpus)):
        if asked and resources.get(key, 0) < asked:
            raise ConfigError(
                f"the agent asks for num_{key.lower()}s={asked:g} per Ray worker; the Ray cluster has "
                f"{resources.get(key, 0):g} {key}(s) (lower the agent's num_{key.lower()}s or add nodes)"
            )
    cpus = settings.num_cpus if settings.num_cpus is not None else 1.0
    counts = []
    if cpus > 0:
        counts.append(int(resources.get("CPU", 1) // cpus))
    if settings.num_gpus:
        counts.append(int(resources.get("GPU", 0) // settings.num_gpus))
    if settings.workers is not None:
        return settings.workers
    return max(1, min(counts) if counts else 1)


class RayExecutor:
    """Runs a :class:`~clineval.runner.engine.RunPlan` on Ray (see the module's notes)."""

    def __init__(self, settings: RaySettings, judge: WorkerJudge | None = None):
        self.settings = settings
        self.worker_judge = judge
        """How workers rebuild the judge; None: the plan's judge object is sent as it is."""

    def connect(self) -> None:
        connect(self.settings.address)

    async def run(self, plan: RunPlan, store: RunStore, progress: ProgressReporter | None) -> RunOutcome:
        from clineval.runner.engine import (
            _commit_rest,
            _completed,
            _first,
            _redacted,
            _resume_hint,
            _selects,
            _stop,
            _store_failed,
        )

        ray = connect(self.settings.address)
        progress = progress or NullProgress()
        run_id = plan.run.id
        names = [m.name for m in plan.metrics]
        # What is left, counted as the local runner counts it (the store holds what is done).
        n_cases = len(plan.cases) if plan.cases is not None else store.count_cases(run_id)
        n_outputs = store.count_outputs(run_id) if plan.agent is not None else 0
        n_done = store.count_results_of(run_id, names)
        resumed = n_done > 0 or n_outputs > 0
        n_need_agent = n_cases - n_outputs if plan.agent is not None else 0
        pending = store.expected_total(run_id) - n_done
        keep = plan.keep_results

        def items() -> Iterator[Item]:
            """The work left, case by case, read a chunk at a time (outputs and results done skipped)."""
            for chunk in plan.case_chunks(store):
                ids = [c.id for c in chunk]
                outputs = store.outputs_for(run_id, ids) if plan.agent is not None else {}
                done = store.done_for(run_id, ids) if n_done else set()
                for case in chunk:
                    todo = [n for n in names if (case.id, n) not in done]
                    if plan.agent is not None and case.id not in outputs:
                        yield Item(case, True, todo)
                        continue
                    if case.id in outputs:
                        case = outputs[case.id].apply_to(case)
                    todo = [m.name for m in plan.metrics if m.name in todo and _selects(m, case)]
                    if todo:
                        yield Item(case, False, todo)

        def redact(text: str) -> str:
            return mask_secrets(plan.redact(text) if plan.redact is not None else text)

        merged: dict[str, Case] = {}
        produced: list[ResultRecord] = []

        def take(shard: list[Item], answer: ShardResult) -> None:
            """Store a finished shard's outputs and results, each (case, metric) pair once."""
            wanted = {item.case.id: item for item in shard}
            allowed = {item.case.id: set(item.metrics) for item in shard}
            for case_id, output in answer.outputs:
                item = wanted.get(case_id)
                if item is None or not item.run_agent:
                    continue
                item.run_agent = False  # a second output for the same case is dropped
                if output.agent_run.error:
                    run_ = output.agent_run.model_copy(update={"error": redact(output.agent_run.error)})
                    output = output.model_copy(update={"agent_run": run_})
                writer.output(run_id, case_id, output)
                progress.agent_done(output.agent_run.failed)
                if keep:
                    merged[case_id] = output.apply_to(item.case)
            for result in answer.results:
                left = allowed.get(result.case_id)
                if left is None or result.metric not in left:
                    continue  # not asked of this shard, or already taken
                left.discard(result.metric)
                result = _redacted(result, redact)
                writer.result(result)
                if keep:
                    produced.append(result)
                progress.scored(result.score.status == "error")

        writer = store.background_writer()
        progress.start(n_need_agent, pending)
        workers: list[Any] = []
        budget = None
        retries = self.settings.max_retries
        try:
            try:
                if n_need_agent or pending:
                    n_workers = max(1, min(default_workers(ray, self.settings), n_need_agent + pending))
                    size = self.settings.shard_size or max(1, min(64, math.ceil(n_cases / (n_workers * 8))))
                    workers, budget = self._start_workers(ray, plan, n_workers)
                    await self._drive(ray, workers, _shards(items(), size), take)
            finally:
                await _close_workers(ray, workers, budget)
        except (KeyboardInterrupt, asyncio.CancelledError):
            _stop(writer, store, run_id, "interrupted")
            raise RunInterrupted(run_id, _resume_hint(store, run_id)) from None
        except StoreError as exc:
            raise _store_failed(writer, store, run_id, exc) from None
        except Exception as exc:
            cause = _cause(ray, exc)
            if isinstance(cause, JudgeConfigurationError):
                message = str(cause)
                _stop(writer, store, run_id, "failed", message)
                raise ClinevalError(
                    f"{message}\nThe run {run_id} stopped; everything scored so far is saved. "
                    f"Fix the judge setting and continue with: {_resume_hint(store, run_id)}"
                ) from None
            if isinstance(cause, ConfigError):  # e.g. an agent that cannot be pickled: nothing ran
                _stop(writer, store, run_id, "failed", str(cause))
                raise
            if isinstance(cause, BaseExceptionGroup):
                cause = _first(cause)
            message = _failure(ray, cause, retries)
            _stop(writer, store, run_id, "failed", message)
            raise ClinevalError(
                f"{message}\nThe run {run_id} stopped; everything finished so far is saved. "
                f"Continue with: {_resume_hint(store, run_id)}"
            ) from None
        else:
            _commit_rest(writer, store, run_id)
        finally:
            writer.close()
            progress.stop()
            if plan.agent is not None:
                plan.agent.close()
        return _completed(plan, store, writer, resumed=resumed, merged=merged, produced=produced)

    def _start_workers(self, ray: ModuleType, plan: RunPlan, n_workers: int) -> tuple[list[Any], Any]:
        """The worker actors (and the budget actor when requests are paced), sent the plan's parts once."""
        worker_cls, budget_cls = _actor_classes(ray)
        rpm, tpm = self.settings.judge_rpm, self.settings.judge_tpm
        local = getattr(getattr(plan.judge, "backend", None), "budget", None)
        if self.worker_judge is None and rpm is None and tpm is None and local is not None:
            # a judge object with its own limits: one budget for the cluster, not one per worker
            rpm, tpm = getattr(local, "rpm", None), getattr(local, "tpm", None)
        budget = None
        if rpm is not None or tpm is not None:
            budget = budget_cls.options(num_cpus=0).remote(rpm, tpm)
        judge: WorkerJudge | Judge | None = plan.judge
        if self.worker_judge is not None:
            config = self.worker_judge.config
            per_worker = max(1, math.ceil(config.concurrency / n_workers))  # the endpoint's total stays
            judge = WorkerJudge(
                config.model_copy(update={"concurrency": per_worker}),
                self.worker_judge.cache_path,
                self.worker_judge.base_dir,
            )
        spec = WorkerSpec(
            run_id=plan.run.id,
            metrics=list(plan.metrics),
            agent=plan.agent.agent if plan.agent is not None else None,
            agent_settings=plan.agent.settings if plan.agent is not None else None,
            judge=judge,
            scoring_concurrency=max(1, math.ceil(plan.scoring_concurrency / n_workers)),
            budget=budget,
        )
        spec_bytes = pickle_spec(spec)
        options: dict[str, Any] = {
            "num_cpus": self.settings.num_cpus if self.settings.num_cpus is not None else 1,
            "max_restarts": self.settings.max_retries,
            "max_task_retries": self.settings.max_retries,
        }
        if self.settings.num_gpus:
            options["num_gpus"] = self.settings.num_gpus
        workers = [worker_cls.options(**options).remote(spec_bytes) for _ in range(n_workers)]
        return workers, budget

    @staticmethod
    async def _drive(
        ray: ModuleType,
        workers: list[Any],
        shards: Iterator[list[Item]],
        take: Callable[[list[Item], ShardResult], None],
    ) -> None:
        """Keep two shards on each worker (one running, one waiting) until every shard is taken."""
        per_worker = 2
        running: dict[asyncio.Future[ShardResult], tuple[int, list[Item]]] = {}
        refs: dict[asyncio.Future[ShardResult], Any] = {}
        load = [0] * len(workers)

        def submit() -> bool:
            index = min(range(len(workers)), key=load.__getitem__)
            if load[index] >= per_worker:
                return False
            shard = next(shards, None)
            if shard is None:
                return False
            ref = workers[index].run_shard.remote(shard)
            future = asyncio.ensure_future(_await(ref))
            running[future] = (index, shard)
            refs[future] = ref
            load[index] += 1
            return True

        try:
            while submit():
                pass
            while running:
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for future in finished:
                    index, shard = running.pop(future)
                    refs.pop(future, None)
                    load[index] -= 1
                    take(shard, future.result())
                while submit():
                    pass
        finally:
            for future in running:  # a failed run: the other shards' answers are not wanted
                future.cancel()
                with contextlib.suppress(Exception):
                    ray.cancel(refs[future])  # and not to be retried once their worker is ended
            if running:
                await asyncio.wait(running)


async def _await(ref: Any) -> Any:
    return await ref


async def _close_workers(ray: ModuleType, workers: list[Any], budget: Any) -> None:
    """Let each worker close its judge (its cache is flushed), then end the actors."""
    closing = [w.close.remote() for w in workers]
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.gather(*(_await(r) for r in closing), return_exceptions=True), 10)
    for actor in [*workers, budget]:
        if actor is not None:
            with contextlib.suppress(Exception):
                ray.kill(actor)


def _cause(ray: ModuleType, exc: BaseException) -> BaseException:
    """The exception raised in a worker, unwrapped from Ray's task error."""
    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = exc.cause if getattr(exc, "cause", None) is not None else exc
        return cause if isinstance(cause, BaseException) else exc
    return exc


def _failure(ray: ModuleType, exc: BaseException, retries: int) -> str:
    if isinstance(exc, ray.exceptions.RayActorError):
        return f"a Ray worker died and was restarted {retries} times without finishing its shard"
    if isinstance(exc, ray.exceptions.RayError):
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"Ray: {first}"
    return f"{type(exc).__name__}: {exc}"


def executor_for(config: RunConfig, *, rebuild_judge: bool) -> RayExecutor:
    """The Ray executor of a run's configuration.

    ``rebuild_judge``: the judge was built from ``config.judge`` (workers build their own
    from it); otherwise the caller's judge object is sent to the workers as it is.
    """
    agent = config.agent
    settings = RaySettings(
        address=config.ray_address,
        workers=config.ray_workers,
        num_cpus=agent.num_cpus if agent is not None else None,
        num_gpus=agent.num_gpus if agent is not None else None,
        judge_rpm=config.judge.rpm,
        judge_tpm=config.judge.tpm,
    )
    judge = None
    if rebuild_judge:
        cache = str(Path(config.cache).resolve()) if config.cache and config.judge.cache else None
        folder = str(config.folder.resolve()) if config.folder is not None else None
        judge = WorkerJudge(config.judge, cache, folder)
    return RayExecutor(settings, judge)
