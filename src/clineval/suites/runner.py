"""Running a suite: the pipeline's lifecycle on top of clineval's runner and run store.

``run_suite(path)`` loads and checks the suite, builds its pipeline, and calls
``run_pipeline()``. The pipeline's ``evaluate_cases()`` runs the cases through the same
engine as every clineval run: ``generate_responses`` is the agent (timed per case, with
bounded concurrency and a timeout), each evaluator is a metric that scores only the
cases whose ``metrics`` name it, and everything lands in the run store as it finishes,
so an interrupted suite resumes with ``clineval run --resume RUN_ID``.

A suite run is tagged ``suite`` (the evaluation id) and ``pipeline`` (the class), plus
the suite's and the caller's tags; it records the evaluated project's git commit (the
suite's folder, or ``CLINEVAL_GIT_COMMIT``) and the suite as written -- environment
variables as ``${NAME}``, never their values.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from clineval.config import DEFAULT_CACHE, AgentConfig
from clineval.datasets import fingerprint_cases
from clineval.errors import ConfigError
from clineval.interrupts import run_sync
from clineval.judges.base import Judge
from clineval.judges.config import JudgeConfig, build_judge
from clineval.metrics.base import BaseMetric, ScoreContext
from clineval.metrics.registry import build_metric
from clineval.model import Case, DatasetInfo, GitInfo, RunRecord, Score
from clineval.results.result import EvalResult
from clineval.runner.agent import AgentCaller
from clineval.runner.engine import RunPlan, check_repeats, execute
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
from clineval.suites.binding import BoundEvaluator, ItemInputs, as_text, combine, redacted_args
from clineval.suites.calling import call_generate, create_pipeline, response_call
from clineval.suites.evaluators import MetricEvaluator
from clineval.suites.loader import Suite, load_suite
from clineval.suites.paths import MISSING, lookup
from clineval.suites.pipeline import PipelineEvaluator
from clineval.suites.source import mask

SUITE_KIND = "suite"
OUTPUT_KEY = "output"
AGENT_METRICS = ("latency", "failure")


def context_passages(context: Any) -> list[str] | None:
    """A context as passages of text: a string, or each text-like entry of a mapping or list."""
    if context is None:
        return None
    if isinstance(context, str):
        return [context] if context.strip() else []
    if isinstance(context, Mapping):
        return [p for value in context.values() for p in (context_passages(value) or [])]
    if isinstance(context, list):
        return [p for value in context for p in (context_passages(value) or [])]
    if isinstance(context, BaseModel):
        return [context.model_dump_json()]
    return [as_text(context)]


def jsonable(value: Any) -> Any:
    """A pipeline's output as JSON data (pydantic models and dataclasses are dumped)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json.loads(json.dumps(dataclasses.asdict(value), default=str))
    return json.loads(json.dumps(value, default=_not_json))


def _not_json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"the pipeline's output holds a {type(value).__name__}, which is not JSON data")


def case_output(case: Case) -> Any:
    """The pipeline's output stored with a case, or MISSING."""
    agent_output = case.metadata.get("agent_output")
    if isinstance(agent_output, dict) and OUTPUT_KEY in agent_output:
        return agent_output[OUTPUT_KEY]
    return MISSING


class SuiteMetric(BaseMetric):
    """One evaluator of a suite as a metric: scores the cases whose ``metrics`` name it."""

    requires = ()

    def __init__(self, bound: BoundEvaluator, suite: Suite, generates: bool):
        self.bound = bound
        self.suite = suite
        self.generates = generates
        self.name = bound.name
        self.higher_is_better = bound.higher_is_better
        made = bound.instance()
        self.needs_judge = isinstance(made, MetricEvaluator) and made.needs_judge
        self.description = (
            bound.spec.description or f"suite evaluator {bound.spec.class_ or bound.spec.metric}"
        )

    def selects(self, case: Case) -> bool:
        try:
            suite_case = self.suite.case(case.id)
        except KeyError:
            return False
        if self.name not in suite_case.metrics:
            return False
        if not self.bound.per_item:
            return True
        return any(self.name in (item.metrics or suite_case.metrics) for item in suite_case.evaluations)

    async def score(self, case: Case, ctx: ScoreContext) -> Score:
        suite_case = self.suite.case(case.id)
        run = case.agent_run
        if run is not None and run.failed:
            return Score.failed(f"the pipeline failed on this case: {run.error or 'unknown error'}")
        output = case_output(case) if self.generates else MISSING
        latency = run.latency_s if run is not None else None
        try:
            made = self.bound.instance(suite_case.settings.get(self.name))
        except ConfigError as exc:
            return Score.failed(str(exc))
        if not self.bound.per_item:
            score = await self.bound.call(
                made, item=None, case=case, output=_plain(output), latency_s=latency, ctx=ctx
            )
            return combine(self.name, [(None, score)])
        results = []
        for item in suite_case.evaluations:
            if self.name not in (item.metrics or suite_case.metrics):
                continue
            if self.generates:
                response = lookup(output, item.query) if output is not MISSING else MISSING
            else:
                response = item.response
            context = item.context if item.context is not None else suite_case.context
            inputs = ItemInputs(
                query=item.query,
                ground_truth=item.ground_truth,
                response=response,
                context=None if context is None else "\n\n".join(context_passages(context) or []),
                conversation=item.conversation if item.conversation is not None else suite_case.conversation,
                scores=item.scores,
                contexts=context_passages(context),
            )
            score = await self.bound.call(
                made, item=inputs, case=case, output=_plain(output), latency_s=latency, ctx=ctx
            )
            if response is MISSING and score.status == "scored":
                note = f"the output has no field {item.query!r}"
                score = score.model_copy(
                    update={"explanation": f"{note}; {score.explanation}" if score.explanation else note}
                )
            results.append((inputs, score))
        return combine(self.name, results)


def _plain(output: Any) -> Any:
    return None if output is MISSING else output


class SuiteRuntime:
    """What a pipeline's ``evaluate_cases()`` runs on: store, judge, metrics, record."""

    def __init__(
        self,
        suite: Suite,
        *,
        store: RunStore,
        cache: str | None,
        name: str | None,
        tags: Mapping[str, str],
        progress: ProgressReporter,
        judge: Judge | None = None,
        record: RunRecord | None = None,
        lease: RunLease | None = None,
        retry_errors: bool = False,
        repeats: int = 1,
    ):
        self.suite = suite
        self.repeats = repeats
        """``--repeats``: trials of each case (read back from the record on resume)."""
        self.store = store
        self.cache = cache
        self.name = name
        self.tags = dict(tags)
        self.progress = progress
        self.judge = judge
        self.record = record
        self.lease = lease
        """The run's lock, taken by a resume before the pipeline starts."""
        self.retry_errors = retry_errors
        """``--retry-errors``: forget failed work when the run starts (one transaction)."""

    def redact(self, text: str) -> str:
        return mask(text, self.suite.secrets)

    def cases(self) -> list[Case]:
        out = []
        for case in self.suite.cases:
            out.append(
                Case(
                    id=case.id,
                    input=case.input,
                    metadata=json.loads(
                        json.dumps(
                            {
                                **case.metadata,
                                "suite_case": {
                                    "metrics": case.metrics,
                                    "evaluations": [
                                        item.model_copy(update={"context": None}).model_dump(mode="json")
                                        for item in case.evaluations
                                    ],
                                    "settings": redacted_args(case.settings),
                                },
                            },
                            default=str,
                        )
                    ),
                )
            )
        return out

    def metrics(self, generates: bool) -> list[Any]:
        built: list[Any] = [SuiteMetric(b, self.suite, generates) for b in self.suite.evaluators.values()]
        if generates:
            present = {m.name for m in built}
            built += [build_metric(n) for n in AGENT_METRICS if n not in present]
        return built

    def new_record(self, cases: list[Case], metrics: list[Any]) -> RunRecord:
        suite = self.suite
        header = suite.header
        tags = {
            "suite": suite.id,
            "pipeline": header.pipeline.class_.rpartition(":")[2] or header.pipeline.class_,
            **header.tags,
            **self.tags,
        }
        config = {
            "kind": SUITE_KIND,
            "suite_file": str(suite.file.resolve()),
            "suite": json.loads(mask(json.dumps(suite.document.raw, default=str), suite.secrets)),
            "files": suite.document.files,
            "judge": suite.judge.model_dump(mode="json"),
            "cache": self.cache,
            "store": str(self.store.path),
            "name": self.name,
            "tags": dict(self.tags),
        }
        if self.repeats > 1:  # read by the engine (results.trials.repeats_of), also on resume
            config["repeats"] = self.repeats
        if suite.review is not None:  # found by clineval.review.data.review_schema
            config["review"] = json.loads(mask(suite.review.model_dump_json(), suite.secrets))
        return RunRecord(
            id=new_run_id(),
            name=self.name or suite.id,
            created_at=time.time(),
            config=config,
            metrics=[m.name for m in metrics],
            lower_is_better=[m.name for m in metrics if not getattr(m, "higher_is_better", True)],
            judge=self.judge_record(),
            dataset=DatasetInfo(
                source=str(suite.file), fingerprint=fingerprint_cases(cases), n_cases=len(cases)
            ),
            tags=tags,
            clineval_version=clineval_version(),
            python=python_version(),
            platform=platform_name(),
            packages=package_versions(("rapidfuzz",)),
            git=evaluated_commit(suite.base_dir),
        )

    def judge_record(self) -> dict[str, Any]:
        """The run's judge: clineval's (for judge-based metrics), and the models the
        evaluators were given (``model_config``: the Azure AI evaluators), so that a run
        that used a model never says "judge none"."""
        models = sorted({m for bound in self.suite.evaluators.values() for m in bound.models})
        users = [name for name, bound in self.suite.evaluators.items() if bound.models]
        if self.judge is not None:
            record = {"name": self.judge.name, **self.judge.describe(), "config": self.suite.judge.label}
            if models:
                record["evaluator_models"] = {"models": models, "evaluators": users}
            return record
        if not models:
            return {"name": "none"}
        return {
            "name": ", ".join(models),
            "kind": "evaluator model_config",
            "evaluators": users,
            "used": True,
        }

    async def execute(self, pipeline: PipelineEvaluator) -> EvalResult:
        generates = pipeline.generates_responses()
        cases = self.cases()
        metrics = self.metrics(generates)
        if self.record is None:
            check_repeats(self.repeats, agent=generates, metrics=metrics, cache=self.cache)
            self.record = self.new_record(cases, metrics)
            self.store.create_run(self.record, cases)
        elif [m.name for m in metrics] != self.record.metrics:
            raise ConfigError(
                f"run {self.record.id} has evaluators {self.record.metrics}; the suite now has "
                f"{[m.name for m in metrics]} (start a new run instead of resuming)"
            )
        caller = None
        if generates:
            spec = self.suite.header.pipeline

            call = response_call(type(pipeline))

            async def agent(query: Any, case: Case) -> dict[str, Any]:
                output = await call_generate(pipeline, call, self.suite.case(case.id))
                data = jsonable(output)
                text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
                return {"response": text, OUTPUT_KEY: data}

            caller = AgentCaller(
                agent, AgentConfig(target=spec.class_, concurrency=spec.concurrency, timeout_s=spec.timeout_s)
            )
        plan = RunPlan(
            run=self.record,
            cases=cases,
            metrics=metrics,
            agent=caller,
            judge=self.judge,
            scoring_concurrency=16,
            redact=self.redact,
            lease=self.lease,
            retry_failed_outputs=self.retry_errors,
            retry_errors=self.retry_errors,
        )
        outcome = await execute(plan, self.store, self.progress)
        return EvalResult(
            run=outcome.record, cases=outcome.cases, results=outcome.results, store_path=str(self.store.path)
        )


def needs_judge(suite: Suite) -> bool:
    """Whether any evaluator of the suite is a judge-based clineval metric."""
    for bound in suite.evaluators.values():
        made = bound.instance()
        if isinstance(made, MetricEvaluator) and made.needs_judge:
            return True
    return False


def evaluated_commit(folder: Path) -> GitInfo | None:
    """The evaluated project's commit: ``CLINEVAL_GIT_COMMIT``, else the git checkout of ``folder``."""
    given = os.environ.get("CLINEVAL_GIT_COMMIT", "").strip()
    if given:
        return GitInfo(commit=given)
    return git_info(folder)


@dataclasses.dataclass
class SuiteOutcome:
    """A finished suite: its results (as any run), the pipeline's summary, and the suite."""

    result: EvalResult
    summary: dict[str, Any]
    suite: Suite


async def arun_suite(
    suite: Suite | str | Path,
    *,
    judge: JudgeConfig | str | None = None,
    store: str | Path | RunStore = DEFAULT_STORE,
    cache: str | None = DEFAULT_CACHE,
    name: str | None = None,
    tags: Mapping[str, str] | None = None,
    progress: bool | ProgressReporter | None = None,
    resume: RunRecord | None = None,
    lease: RunLease | None = None,
    retry_errors: bool = False,
    repeats: int = 1,
) -> SuiteOutcome:
    """Async form of :func:`run_suite`.

    ``resume``, ``lease`` and ``retry_errors`` are for :func:`aresume_suite`: the run to
    continue, its lock (released here), and whether to forget failed work first.
    """
    try:
        return await _arun_suite(
            suite,
            judge=judge,
            store=store,
            cache=cache,
            name=name,
            tags=tags,
            progress=progress,
            resume=resume,
            lease=lease,
            retry_errors=retry_errors,
            repeats=repeats,
        )
    finally:
        if lease is not None:
            lease.release()


async def _arun_suite(
    suite: Suite | str | Path,
    *,
    judge: JudgeConfig | str | None,
    store: str | Path | RunStore,
    cache: str | None,
    name: str | None,
    tags: Mapping[str, str] | None,
    progress: bool | ProgressReporter | None,
    resume: RunRecord | None,
    lease: RunLease | None,
    retry_errors: bool,
    repeats: int = 1,
) -> SuiteOutcome:
    judge_config = JudgeConfig.model_validate(judge) if isinstance(judge, str) else judge
    if not isinstance(suite, Suite):
        suite = load_suite(suite, judge=judge_config)
    elif judge_config is not None:
        suite.judge = judge_config
    reporter = progress if not isinstance(progress, bool | None) else default_progress(progress)
    run_store = store if isinstance(store, RunStore) else RunStore(store)
    judge_obj = (
        build_judge(suite.judge, cache_path=cache, base_dir=suite.base_dir) if needs_judge(suite) else None
    )
    runtime = SuiteRuntime(
        suite,
        store=run_store,
        cache=cache,
        name=name,
        tags=tags or {},
        progress=reporter,
        judge=judge_obj,
        record=resume,
        lease=lease,
        retry_errors=retry_errors,
        repeats=repeats,
    )
    pipeline = create_pipeline(suite, suite.pipeline_class, suite.header.pipeline.params)
    pipeline._runtime = runtime
    try:
        summary = await pipeline.run_pipeline()
    finally:
        if judge_obj is not None:
            await judge_obj.aclose()
    if pipeline.result is None:
        raise ConfigError(
            f"pipeline {suite.header.pipeline.class_} finished without evaluating the cases: its "
            "run_evaluations() must call 'await self.evaluate_cases()'"
        )
    return SuiteOutcome(result=pipeline.result, summary=summary, suite=suite)


def run_suite(suite: Suite | str | Path, **kwargs: Any) -> SuiteOutcome:
    """Load, check and run a suite file; the results are saved in the run store like any run.

    ``judge`` overrides the suite's judge; ``store``, ``cache``, ``name``, ``tags``,
    ``progress`` and ``repeats`` are as for :func:`clineval.evaluate` (with ``repeats``, each
    case's pipeline call and scores run that many times; the case's value is their mean).
    """
    return run_sync(arun_suite(suite, **kwargs))


def is_suite_record(record: RunRecord) -> bool:
    return record.config.get("kind") == SUITE_KIND


async def aresume_suite(
    record: RunRecord,
    *,
    store: RunStore,
    judge: JudgeConfig | None = None,
    progress: bool | ProgressReporter | None = None,
    retry_errors: bool = False,
) -> SuiteOutcome:
    """Continue an interrupted suite run from its suite file (which must still define the same cases)."""
    file = Path(record.config["suite_file"])
    stored_judge = JudgeConfig.model_validate(record.config.get("judge") or "offline")
    suite = load_suite(file, judge=judge or stored_judge)
    stored_ids = [c.id for c in store.load_cases(record.id)]
    if stored_ids != [c.id for c in suite.cases]:
        raise ConfigError(
            f"the suite {file} no longer has the cases run {record.id} started with; start a new run"
        )
    # The lock before the pipeline starts: a second resume of a run being run stops here.
    lease = store.acquire_lease(record.id)
    return await arun_suite(
        suite,
        store=store,
        cache=record.config.get("cache"),
        name=record.name,
        progress=progress,
        resume=record,
        lease=lease,
        retry_errors=retry_errors,
    )
