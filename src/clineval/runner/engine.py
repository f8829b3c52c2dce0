"""The runner: agent calls and scoring as one asynchronous pipeline over a stored run.

Cases flow one way: (agent, when there is one) → metrics → store. Agent workers and
scoring workers run at once, so a case is scored as soon as its output is in. Every
agent output and every result goes to the store's background writer the moment it
exists and is committed milliseconds later; work that is already in the store is
skipped, which is all that resuming takes.

Concurrency has three bounds: agent workers (the agent's own limit), scoring workers
(enough to keep the judge busy), and the judge backend's adaptive limiter, which is the
one that talks to the rate-limited server.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from clineval.errors import (
    ClinevalError,
    ConfigError,
    JudgeConfigurationError,
    RunInterrupted,
    StoreDamagedError,
    StoreError,
    StoreFullError,
)
from clineval.judges.base import Judge
from clineval.metrics.base import Metric, ScoreContext, score_case
from clineval.model import Case, ResultRecord, RunRecord, RunStatus
from clineval.redaction import redact as mask_secrets
from clineval.results.trials import combine_results, repeats_of
from clineval.runner.agent import AgentCaller
from clineval.runner.gc_pace import paced_collection
from clineval.runner.progress import NullProgress, ProgressReporter
from clineval.store.sqlite import (
    DEFAULT_STORE,
    BackgroundWriter,
    RunLease,
    RunStore,
    TrialOutput,
    TrialResult,
)
from clineval.store.trials import count_trials, trial_outputs_for, trial_results_for


@dataclass
class RunPlan:
    """Everything the runner needs; the run record and cases are already in the store."""

    run: RunRecord
    cases: Sequence[Case] | None
    """The run's cases; ``None``: read them from the store a chunk at a time (bounded memory)."""
    metrics: Sequence[Metric]
    agent: AgentCaller | None = None
    judge: Judge | None = None
    scoring_concurrency: int = 16
    redact: Callable[[str], str] | None = None
    """Masks secrets in messages before they are stored (suites read secrets from the environment)."""
    lease: RunLease | None = None
    """The run's lock when the caller holds it already; otherwise :func:`execute` takes it."""
    retry_failed_outputs: bool = False
    """Forget the failed agent calls' outputs and their results first (``--retry-errors``)."""
    retry_errors: bool = False
    """Forget the unscored (error) results first (``--retry-errors``)."""
    keep_results: bool = True
    """Return every case and result in the :class:`RunOutcome`; ``False``: keep none in memory
    (they are in the store), so that a run of any size runs in bounded memory."""
    executor: Executor | None = None
    """Where the work runs: None in this process; e.g. :class:`~clineval.runner.ray_executor.RayExecutor`."""

    def case_chunks(self, store: RunStore) -> Iterator[list[Case]]:
        """The cases in dataset order, a chunk at a time (from the store when ``cases`` is ``None``)."""
        if self.cases is None:
            yield from store.iter_cases(self.run.id)
            return
        size = store.stream_chunk
        for start in range(0, len(self.cases), size):
            yield list(self.cases[start : start + size])


class Executor(Protocol):
    """Runs a plan's missing work elsewhere (e.g. on Ray); the store is still written here only."""

    async def run(self, plan: RunPlan, store: RunStore, progress: ProgressReporter | None) -> RunOutcome: ...


@dataclass
class RunOutcome:
    """A finished execution: the final record, the cases with outputs, every result
    (both empty when the plan did not keep them: ``kept`` is then ``False``)."""

    record: RunRecord
    cases: list[Case]
    results: list[ResultRecord]
    kept: bool = True


_DONE = None


async def execute(plan: RunPlan, store: RunStore, progress: ProgressReporter | None = None) -> RunOutcome:
    """Run what is not yet in the store; return the run's record, cases and results.

    The run's lock is held from start to end (:meth:`RunStore.acquire_lease`), so a second
    process asked to run the same run is refused. The start is one transaction
    (:meth:`RunStore.begin_run`): forgetting failed work for ``--retry-errors``, marking the
    run ``running`` and recording how many results each metric should have.
    """
    lease = plan.lease or store.acquire_lease(plan.run.id)
    try:
        expected = _expected(plan, store)
        store.begin_run(
            plan.run,
            lease,
            expected=expected,
            delete_failed_outputs=plan.retry_failed_outputs,
            delete_error_results=plan.retry_errors,
        )
        run = plan.executor.run if plan.executor is not None else _execute
        return await run(plan, store, progress)
    finally:
        lease.release()


def _expected(plan: RunPlan, store: RunStore) -> dict[str, int]:
    """How many results each metric should have (a metric may decline some cases)."""
    if plan.cases is None and not any(getattr(m, "selects", None) is not None for m in plan.metrics):
        n_cases = store.count_cases(plan.run.id)
        return {m.name: n_cases for m in plan.metrics}
    expected = dict.fromkeys((m.name for m in plan.metrics), 0)
    for chunk in plan.case_chunks(store):
        for metric in plan.metrics:
            expected[metric.name] += sum(1 for c in chunk if _selects(metric, c))
    return expected


async def _execute(plan: RunPlan, store: RunStore, progress: ProgressReporter | None) -> RunOutcome:
    # Cases stream through in chunks: the outputs and results already stored are looked up
    # per chunk, and the queues are bounded, so memory does not grow with the number of
    # cases (unless the plan keeps every result for its outcome).
    #
    # With repeats (clineval.results.trials) the unit of work is a trial of a case: the agent
    # is called once per trial, every trial is scored, and once a (case, metric) has all its
    # trials their combination is written as the case's result. Trials already stored are
    # skipped, so a resumed run does only the missing ones.
    progress = progress or NullProgress()
    run_id = plan.run.id
    names = [m.name for m in plan.metrics]
    repeats = repeats_of(plan.run)
    n_cases = len(plan.cases) if plan.cases is not None else store.count_cases(run_id)
    n_outputs = store.count_outputs(run_id) if plan.agent is not None else 0
    n_done = store.count_results_of(run_id, names)
    pending = store.expected_total(run_id) - n_done
    n_need_agent = n_cases - n_outputs if plan.agent is not None else 0
    resumed = n_done > 0 or n_outputs > 0
    if repeats > 1:
        n_trial_outputs, n_trial_results = count_trials(store, run_id)
        resumed = resumed or n_trial_outputs > 0 or n_trial_results > 0
        n_need_agent = max(0, n_cases * repeats - n_trial_outputs) if plan.agent is not None else 0
        pending = max(0, store.expected_total(run_id) * repeats - n_trial_results)
    merged: dict[str, Case] = {}
    produced: list[ResultRecord] = []
    keep = plan.keep_results
    score_queue: asyncio.Queue[tuple[Case, Metric, int] | None] = asyncio.Queue(
        maxsize=max(plan.scoring_concurrency * 4, 64)
    )
    n_scorers = max(1, plan.scoring_concurrency)
    n_agents = min(plan.agent.settings.concurrency, max(n_need_agent, 1)) if plan.agent is not None else 0
    agent_queue: asyncio.Queue[tuple[Case, int, set[str]] | None] = asyncio.Queue(
        maxsize=max(2 * n_agents, 16)
    )
    # trials of a (case, metric) scored so far, until all are in and they are combined
    trials_of: dict[tuple[str, str], dict[int, ResultRecord]] = {}

    async def enqueue(case: Case, skip: set[str], trial: int = 0) -> None:
        """Score ``case`` (trial ``trial``; 0: a run without repeats) with every metric not in ``skip``."""
        for metric in plan.metrics:
            if metric.name not in skip and _selects(metric, case):
                await score_queue.put((case, metric, trial))

    def collect(trial: int, result: ResultRecord) -> None:
        """Keep a trial's result; once the (case, metric) has every trial, write their combination."""
        got = trials_of.setdefault((result.case_id, result.metric), {})
        got[trial] = result
        if len(got) < repeats:
            return
        del trials_of[(result.case_id, result.metric)]
        combined = _redacted(combine_results([got[t] for t in sorted(got)]), redact)
        writer.result(combined)
        if keep:
            produced.append(combined)

    async def score_worker() -> None:
        while True:
            item = await score_queue.get()
            if item is _DONE:
                return
            case, metric, trial = item
            ctx = ScoreContext(plan.judge)
            started = time.perf_counter()
            score = await score_case(metric, case, ctx)
            result = ResultRecord(
                run_id=run_id,
                case_id=case.id,
                metric=metric.name,
                score=score,
                usage=ctx.usage,
                duration_s=time.perf_counter() - started,
                created_at=time.time(),
            )
            result = _redacted(result, redact)  # secrets never reach the store or the tables
            if trial:
                writer.trial(TrialResult(trial, result))
                collect(trial, result)
            else:
                writer.result(result)
                if keep:
                    produced.append(result)
            progress.scored(score.status == "error")

    async def agent_worker() -> None:
        assert plan.agent is not None
        while True:
            item = await agent_queue.get()
            if item is None:
                return
            case, trial, skip = item
            output = await plan.agent.run(case)
            if output.agent_run.error:
                run_ = output.agent_run.model_copy(update={"error": redact(output.agent_run.error)})
                output = output.model_copy(update={"agent_run": run_})
            if trial:
                writer.trial(TrialOutput(run_id, case.id, trial, output))  # trial 1: the case's output too
            else:
                writer.output(run_id, case.id, output)
            progress.agent_done(output.agent_run.failed)
            case = output.apply_to(case)
            if keep and trial <= 1:
                merged[case.id] = case
            await enqueue(case, skip, trial)

    async def feed() -> None:
        for chunk in plan.case_chunks(store):
            ids = [c.id for c in chunk]
            if repeats > 1:
                await feed_trials(chunk, ids)
                continue
            outputs = store.outputs_for(run_id, ids) if plan.agent is not None else {}
            done: dict[str, set[str]] = {}
            for case_id, metric in store.done_for(run_id, ids) if n_done else ():
                done.setdefault(case_id, set()).add(metric)
            for case in chunk:
                skip = done.get(case.id, set())
                if plan.agent is None:
                    await enqueue(case, skip)
                elif case.id in outputs:
                    await enqueue(outputs[case.id].apply_to(case), skip)
                else:
                    await agent_queue.put((case, 0, skip))
        for _ in range(n_agents):
            await agent_queue.put(None)

    async def feed_trials(chunk: list[Case], ids: list[str]) -> None:
        done = store.done_for(run_id, ids)  # (case, metric) pairs combined already
        outputs = trial_outputs_for(store, run_id, ids) if plan.agent is not None else {}
        stored = trial_results_for(store, run_id, ids)
        for case in chunk:
            wanted = [m.name for m in plan.metrics if (case.id, m.name) not in done and _selects(m, case)]
            for name in wanted:
                for trial, record in stored.get((case.id, name), {}).items():
                    collect(trial, record)  # all trials stored (killed before combining): combined now
            for trial in range(1, repeats + 1):
                skip = {n for n in names if n not in wanted or trial in stored.get((case.id, n), {})}
                if len(skip) == len(names):
                    continue
                if plan.agent is None:
                    await enqueue(case, skip, trial)
                elif (case.id, trial) in outputs:
                    await enqueue(outputs[(case.id, trial)].apply_to(case), skip, trial)
                else:
                    await agent_queue.put((case, trial, skip))

    async def produce() -> None:
        async with asyncio.TaskGroup() as feeders:
            for _ in range(n_agents):
                feeders.create_task(agent_worker())
            feeders.create_task(feed())
        for _ in range(n_scorers):
            await score_queue.put(_DONE)

    def redact(text: str) -> str:
        return mask_secrets(plan.redact(text) if plan.redact is not None else text)

    writer = store.background_writer()
    progress.start(n_need_agent, pending)
    try:
        with paced_collection():  # fewer garbage-collector passes over the calls in flight
            async with asyncio.TaskGroup() as group:
                for _ in range(n_scorers):
                    group.create_task(score_worker())
                group.create_task(produce())
    except (KeyboardInterrupt, asyncio.CancelledError):
        # Ctrl-C (asyncio.run cancels this task): keep what finished, say so, and stop.
        _stop(writer, store, run_id, "interrupted")
        raise RunInterrupted(run_id, _resume_hint(store, run_id)) from None
    except BaseExceptionGroup as errors:
        store_error = errors.subgroup(StoreError)
        if store_error is not None:  # a full disk, a damaged store: say so, keep what was written
            raise _store_failed(writer, store, run_id, _first(store_error)) from None
        config_error = errors.subgroup(JudgeConfigurationError)
        if config_error is not None:
            message = str(_first(config_error))
            _stop(writer, store, run_id, "failed", message)
            raise ClinevalError(
                f"{message}\nThe run {run_id} stopped; everything scored so far is saved. "
                f"Fix the judge setting and continue with: {_resume_hint(store, run_id)}"
            ) from None
        if errors.subgroup((KeyboardInterrupt, asyncio.CancelledError)) is not None:
            _stop(writer, store, run_id, "interrupted")
            raise RunInterrupted(run_id, _resume_hint(store, run_id)) from None
        first = _first(errors)
        _stop(writer, store, run_id, "failed", f"{type(first).__name__}: {first}")
        raise
    else:
        _commit_rest(writer, store, run_id)
    finally:
        writer.close()
        progress.stop()
        if plan.agent is not None:
            plan.agent.close()
    return _completed(plan, store, writer, resumed=resumed, merged=merged, produced=produced)


def _completed(
    plan: RunPlan,
    store: RunStore,
    writer: BackgroundWriter,
    *,
    resumed: bool,
    merged: dict[str, Case],
    produced: list[ResultRecord],
) -> RunOutcome:
    """Mark a finished run completed and return its outcome (by any executor).

    ``merged`` and ``produced`` hold the cases with outputs and the results this execution
    made; with ``keep_results`` they are returned in the plan's order, unless the run was
    resumed or its cases streamed, when the store holds the whole run.
    """
    run_id = plan.run.id
    try:
        record = store.set_status(run_id, "completed")
    except StoreError as exc:
        raise _store_failed(writer, store, run_id, exc) from None
    if not plan.keep_results:
        return RunOutcome(record, [], [], kept=False)
    if resumed or plan.cases is None:
        # A resumed run (what ran before is in the store, not in memory), or streamed cases.
        return RunOutcome(record, store.merged_cases(run_id), store.load_results(run_id))
    order = {case.id: i for i, case in enumerate(plan.cases)}
    produced.sort(key=lambda r: (order[r.case_id], r.metric))
    return RunOutcome(record, [merged.get(c.id, c) for c in plan.cases], produced)


def check_repeats(
    repeats: int, *, agent: bool, metrics: Sequence[Metric], executor: str = "local", cache: str | None = None
) -> None:
    """Refuse ``repeats`` where repeated trials cannot differ or cannot run (one line each).

    Without an agent a trial re-scores the same outputs: deterministic metrics give the same
    value every time, and only a judge that samples can differ, which the judge cache (it
    returns the first answer) would hide. So a run without an agent takes ``repeats`` only
    when a metric uses the judge and the cache is off.
    """
    if repeats <= 1:
        return
    if executor != "local":
        raise ConfigError(f"repeats: {repeats} runs in this process only, not with executor {executor}")
    if agent:
        return
    if not any(getattr(m, "needs_judge", False) for m in metrics):
        raise ConfigError(
            f"repeats: {repeats} without an agent would score the same outputs {repeats} times with "
            "metrics that do not use a judge (identical trials); give an agent, or leave repeats out"
        )
    if cache is not None:
        raise ConfigError(
            f"repeats: {repeats} without an agent re-asks the judge about the same outputs; the judge "
            "cache would return its first answer every time: turn it off (--no-cache, or cache: null "
            "in the run file)"
        )


def agent_work_missing(store: RunStore, record: RunRecord) -> bool:
    """Whether some agent call of the run (some trial of a case, with repeats) has no stored output."""
    repeats = repeats_of(record)
    if repeats == 1:
        return store.count_outputs(record.id) < store.count_cases(record.id)
    return count_trials(store, record.id)[0] < store.count_cases(record.id) * repeats


def _selects(metric: Metric, case: Case) -> bool:
    """Whether ``metric`` scores ``case``; a metric may decline cases with ``selects(case) -> False``."""
    selects = getattr(metric, "selects", None)
    return True if selects is None else bool(selects(case))


def _redacted(result: ResultRecord, redact: Callable[[str], str]) -> ResultRecord:
    score = result.score
    update = {
        key: masked
        for key in ("error", "explanation")
        if isinstance(value := getattr(score, key), str) and (masked := redact(value)) != value
    }
    if not update:
        return result
    return result.model_copy(update={"score": score.model_copy(update=update)})


def _resume_hint(store: RunStore, run_id: str) -> str:
    where = "" if str(store.path).endswith(DEFAULT_STORE) else f" --store {store.path}"
    return f"clineval run --resume {run_id}{where}"


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first leaf exception of a (possibly nested) exception group."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def _stop(
    writer: BackgroundWriter, store: RunStore, run_id: str, status: RunStatus, error: str | None = None
) -> None:
    """Commit what finished, then record how the run ended."""
    _commit_rest(writer, store, run_id)
    store.set_status(run_id, status, error=error)


def _commit_rest(writer: BackgroundWriter, store: RunStore, run_id: str) -> None:
    """Commit what is queued; if the store fails now (e.g. a full disk), stop the run with its message."""
    try:
        writer.close()
    except StoreError as exc:
        raise _store_failed(writer, store, run_id, exc) from None


def _store_failed(writer: BackgroundWriter, store: RunStore, run_id: str, exc: BaseException) -> StoreError:
    """The error for a run the store stopped: what was kept, how the run is marked, how to go on.

    Writing stops at the first failed transaction (which SQLite rolled back), so every
    committed output and result stays; the run is marked ``failed`` when the store still
    takes that small update (on a full disk it usually does: the rolled-back pages are reused).
    """
    with contextlib.suppress(StoreError):
        writer.close()
    try:
        store.set_status(run_id, "failed", error=str(exc).splitlines()[0])
        marked = "the run is marked failed"
    except (StoreError, sqlite3.Error):
        marked = "the run could not be marked failed (it still shows as running)"
    try:
        kept = f"{store.count_results(run_id)} results"
    except (StoreError, sqlite3.Error):
        kept = "as far as the store can be read"
    kind = type(exc) if isinstance(exc, StoreError) else StoreError
    if isinstance(exc, StoreDamagedError):
        return kind(f"{exc}\nThe run {run_id} stopped ({marked}).")
    step = "Free some disk space, then continue" if isinstance(exc, StoreFullError) else "Continue"
    return kind(
        f"{exc}\nThe run {run_id} stopped: everything committed before is kept ({kept}); {marked}. "
        f"{step} with: {_resume_hint(store, run_id)}"
    )
