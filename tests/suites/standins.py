"""Stand-in classes for the suite tests: a pipeline, evaluators and a context model.

They stand where a real project's classes would be named in a suite file
(``class: module_path:ClassName``), and record what clineval did with them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel

from clineval.suites import PipelineEvaluator, SuiteCase, SuitePipeline

CALLS: list[tuple[str, Any]] = []


class PatientInformation(BaseModel):
    patient_name: str
    date_of_birth: str | None = None


class StandInPipeline(SuitePipeline):
    """Answers from the case's context: the patient object and a fixed decision."""

    async def preprocess(self) -> None:
        CALLS.append(("preprocess", dict(self.params)))

    async def generate_responses(self, case: SuiteCase) -> dict[str, Any]:
        await asyncio.sleep(0)
        patient = case.context_object(PatientInformation)
        return {
            "patient_information": patient.model_dump() if patient else {"patient_name": "Unknown"},
            "decision": "Approved",
            "criteria": [{"name": "age", "met": True}, {"name": "prescriber", "met": False}],
        }


@dataclass
class FuzzyResult:
    indel_similarity: float


class StandInFuzzy:
    """Returns a dataclass, as AutoAuth's fuzzy evaluator does; records its threshold."""

    def __init__(self, threshold: float = 95.0):
        self.threshold = threshold

    def __call__(self, *, response: str, ground_truth: str, **kwargs: Any) -> FuzzyResult:
        from rapidfuzz import fuzz

        CALLS.append(("fuzzy", self.threshold))
        return FuzzyResult(fuzz.ratio(response, ground_truth))


class Exploding:
    """An evaluator that always raises."""

    def __call__(self, *, response: str, ground_truth: str) -> float:
        raise RuntimeError("the scoring service is down")


class NeedsModel:
    """An evaluator that asks for a model configuration (as LLM-judged evaluators do)."""

    seen: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, model_config: dict[str, Any]):
        NeedsModel.seen.append(model_config)
        self.model_config = model_config

    def __call__(self, *, response: str, ground_truth: str) -> dict[str, Any]:
        return {"similarity": 5.0, "similarity_reason": "stand-in", "similarity_result": "pass"}


class Recording(PipelineEvaluator):
    """Implements the three abstract steps itself and records their order."""

    order: ClassVar[list[str]] = []

    async def preprocess(self) -> None:
        Recording.order.append(f"preprocess:{self.stage}")

    async def run_evaluations(self) -> None:
        Recording.order.append(f"run_evaluations:{self.stage}")
        await self.evaluate_cases()

    def post_processing(self) -> dict[str, Any]:
        Recording.order.append(f"post_processing:{self.stage}")
        return {"n": len(self.result.cases) if self.result else 0}

    async def generate_responses(self, case: Any) -> dict[str, Any]:
        Recording.order.append(f"generate:{case.id}")
        return {"answer": "yes"}


class NotADict(SuitePipeline):
    def post_processing(self) -> Any:
        return ["not", "a", "dict"]


class FailsOnSecond(SuitePipeline):
    async def generate_responses(self, case: Any) -> dict[str, Any]:
        if case.id == "s.2":
            raise ValueError("the policy service timed out")
        return {"answer": "yes", "name": "Sarah"}


class LeakyPipeline(SuitePipeline):
    async def generate_responses(self, case: Any) -> dict[str, Any]:
        raise PermissionError(f"401 for key {self.params['api_key']}")
