"""The pipeline-evaluator lifecycle of the AutoAuth suite schema.

A suite names a :class:`PipelineEvaluator` subclass in ``pipeline.class``. clineval
builds it with the suite and the pipeline parameters, then calls :meth:`run_pipeline`,
which runs the three steps in a fixed order::

    await preprocess()        # prepare: load models, data, indexes
    await run_evaluations()   # run the pipeline over the cases and score them
    summary = post_processing()   # aggregate: returns a dict

``run_pipeline`` is final: a subclass that defines it is rejected when the class is
created, and it runs once per object. The three steps are abstract here; most suites
subclass :class:`SuitePipeline`, which implements them, and write only
``generate_responses`` -- the system under test, called once per case::

    class PriorAuthPipeline(SuitePipeline):
        async def generate_responses(self, case: SuiteCase) -> dict:
            return decide(case.context["policy"], case.context["notes"])

The time each ``generate_responses`` call takes is the case's time to decision
(``latency``); a call that raises or times out makes the case a failure (``failure``)
and its evaluations are unscored with the message, never 0. Without
``generate_responses``, the responses are the ones the suite gives (``response:`` in
each evaluation).
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Protocol, final

from pydantic import BaseModel, ConfigDict, Field

from clineval.judges.config import JudgeConfig
from clineval.results.result import EvalResult
from clineval.suites.schema import EvaluationItem, SuiteHeader


class SuiteCase(BaseModel):
    """One case of a suite, as the pipeline sees it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str
    description: str | None = None
    input: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    context: Any = None
    """The case's context: text, or a mapping whose ``module:Class`` entries are built objects."""
    evaluations: list[EvaluationItem]
    metrics: list[str]
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per-evaluator constructor arguments for this case (``EvaluatorName: {...}``)."""
    conversation: Any = None
    scores: dict[str, Any] | None = None

    def context_object(self, kind: type | str) -> Any:
        """The context entry built from ``kind`` (a class, or its name), or ``None``.

        The case's context is searched first, then each evaluation's context in order.
        """
        name = kind if isinstance(kind, str) else kind.__name__
        for context in (self.context, *(item.context for item in self.evaluations)):
            if not isinstance(context, Mapping):
                continue
            for key, value in context.items():
                key = str(key)
                if name in (key, key.rpartition(":")[2], key.rpartition(".")[2]):
                    return value
        return None

    def expected(self, query: str) -> Any:
        """The ground truth of the evaluation whose query is ``query`` (``None`` if there is none)."""
        for item in self.evaluations:
            if item.query == query:
                return item.ground_truth
        return None


class SuiteInfo(Protocol):
    """What a pipeline sees of its suite (a :class:`clineval.suites.Suite`): its id, file,
    header, cases and judge. A protocol, so that this module does not import the loader."""

    @property
    def id(self) -> str: ...
    @property
    def file(self) -> Path: ...
    @property
    def header(self) -> SuiteHeader: ...
    @property
    def cases(self) -> list[SuiteCase]: ...
    @property
    def judge(self) -> JudgeConfig: ...
    @property
    def secrets(self) -> set[str]: ...
    @property
    def base_dir(self) -> Path: ...
    def case(self, case_id: str) -> SuiteCase: ...


class Runtime(Protocol):
    """What runs a pipeline's cases (clineval's :class:`clineval.suites.runner.SuiteRuntime`)."""

    async def execute(self, pipeline: PipelineEvaluator) -> EvalResult: ...


_STAGES = ("new", "preprocess", "run_evaluations", "post_processing", "done")


class PipelineEvaluator(ABC):
    """The abstract lifecycle: ``preprocess`` → ``run_evaluations`` → ``post_processing``."""

    params_model: ClassVar[type[BaseModel] | None] = None
    """Optional: a pydantic model that validates the pipeline parameters (``self.config``)."""

    def __init__(self, suite: SuiteInfo, params: Mapping[str, Any] | None = None):
        self.suite = suite
        self.params: dict[str, Any] = dict(params or {})
        self.config: BaseModel | None = (
            self.params_model.model_validate(self.params) if self.params_model is not None else None
        )
        self.result: EvalResult | None = None
        self.summary: dict[str, Any] | None = None
        self._stage = "new"
        self._runtime: Runtime | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "run_pipeline" in cls.__dict__:
            raise TypeError(
                f"{cls.__qualname__} overrides run_pipeline(), which is final: it enforces the order "
                "preprocess -> run_evaluations -> post_processing; put your code in those steps instead"
            )
        for name in ("preprocess", "run_evaluations", "generate_responses"):
            fn = cls.__dict__.get(name)
            if fn is not None and not inspect.iscoroutinefunction(fn):
                raise TypeError(f"{cls.__qualname__}.{name} must be defined with 'async def'")
        fn = cls.__dict__.get("post_processing")
        if fn is not None and inspect.iscoroutinefunction(fn):
            raise TypeError(f"{cls.__qualname__}.post_processing must be a plain 'def' that returns a dict")

    @abstractmethod
    async def preprocess(self) -> None:
        """Prepare what the evaluations need (runs first)."""

    @abstractmethod
    async def run_evaluations(self) -> None:
        """Run the pipeline over the cases and score them (runs second)."""

    @abstractmethod
    def post_processing(self) -> dict[str, Any]:
        """Aggregate the results into a summary (runs last)."""

    async def generate_responses(self, case: SuiteCase) -> Any:
        """The system under test on one case: a dict (or pydantic model, or text) to score.

        Optional: without it the suite's evaluations carry their own ``response``.
        """
        raise NotImplementedError

    @classmethod
    def generates_responses(cls) -> bool:
        return cls.generate_responses is not PipelineEvaluator.generate_responses

    @property
    def stage(self) -> str:
        """Where the lifecycle is: new, preprocess, run_evaluations, post_processing or done."""
        return self._stage

    @final
    async def run_pipeline(self) -> dict[str, Any]:
        """Run the three steps in order, once; return the summary."""
        if self._stage != "new":
            raise RuntimeError(
                f"run_pipeline() runs once per pipeline object (this one is at {self._stage!r})"
            )
        self._stage = "preprocess"
        await self.preprocess()
        self._stage = "run_evaluations"
        await self.run_evaluations()
        self._stage = "post_processing"
        summary = self.post_processing()
        if not isinstance(summary, dict):
            raise TypeError(
                f"{type(self).__qualname__}.post_processing returned a {type(summary).__name__}; "
                "it must return a dict"
            )
        self.summary = summary
        self._stage = "done"
        return summary

    # for implementations ----------------------------------------------------------------

    async def evaluate_cases(self) -> EvalResult:
        """Run ``generate_responses`` over every case (timed, concurrently) and score each with
        the evaluators its ``metrics`` select; everything is saved in the run store."""
        if self._stage != "run_evaluations":
            raise RuntimeError("evaluate_cases() belongs in run_evaluations()")
        if self._runtime is None:
            raise RuntimeError("this pipeline was not started by clineval (use clineval.suites.run_suite)")
        self.result = await self._runtime.execute(self)
        return self.result

    def default_summary(self) -> dict[str, Any]:
        """Per evaluator: mean, scored, errors; plus the run id and case count."""
        if self.result is None:
            return {"evaluation_id": self.suite.id, "cases": len(self.suite.cases), "metrics": {}}
        metrics = {}
        for row in self.result.aggregate():
            if "." in row.metric and row.metric.split(".")[0] in self.result.metrics:
                continue
            metrics[row.metric] = {
                "mean": row.mean,
                "scored": row.scored,
                "errors": row.errors,
                "not_applicable": row.not_applicable,
                "ci": [row.ci_low, row.ci_high],
            }
        return {
            "evaluation_id": self.suite.id,
            "run_id": self.result.run_id,
            "cases": len(self.result.cases),
            "metrics": metrics,
        }


class SuitePipeline(PipelineEvaluator):
    """The standard lifecycle: nothing to prepare, evaluate every case, summarise.

    Subclass it and write ``generate_responses``; extend ``preprocess`` to load what the
    pipeline needs (``self.params`` holds the suite's pipeline parameters).
    """

    async def preprocess(self) -> None:
        return None

    async def run_evaluations(self) -> None:
        await self.evaluate_cases()

    def post_processing(self) -> dict[str, Any]:
        return self.default_summary()
