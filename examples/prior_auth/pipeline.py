"""The system under test of the prior-authorization suite, as a clineval pipeline.

``PriorAuthPipeline`` runs :func:`decide.decide` -- a small deterministic decision
pipeline written for this example -- on each case's policy excerpt and clinical notes
(the suite puts both in the case's ``context``), and returns its structured output:
patient, physician and clinical information, the assessment of every policy criterion,
the decision and its rationale. The suite then checks fields of that output.

Two parameters exist to show how a regression looks, as a careless change to a prompt or
a parser would cause one: ``skip_criteria`` lists criterion kinds (e.g. ``[Prior
therapy]``) that the policy reader drops, and ``date_format`` rewrites the extracted date
of birth (e.g. ``"%m/%d/%Y"``). ``suite_regressed.yaml`` sets both.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from decide import decide  # the example's decision logic, next to this file
from pydantic import BaseModel, Field

from clineval.suites import SuiteCase, SuitePipeline


class PriorAuthParams(BaseModel):
    """The pipeline parameters the suite may set."""

    skip_criteria: list[str] = Field(default_factory=list)
    date_format: str | None = None


def drop_criteria(policy: str, kinds: list[str]) -> str:
    """The policy text without its numbered criteria of the given kinds (``N. **Kind**: ...``)."""
    if not kinds:
        return policy
    pattern = re.compile(
        r"^\s*\d+\.\s*\*\*(?:" + "|".join(re.escape(k) for k in kinds) + r")\*\*", re.IGNORECASE
    )
    return "\n".join(line for line in policy.splitlines() if not pattern.match(line))


class PriorAuthPipeline(SuitePipeline):
    """Decides one prior-authorization request per case from its policy and notes."""

    params_model = PriorAuthParams

    async def generate_responses(self, case: SuiteCase) -> dict[str, Any]:
        params = PriorAuthParams.model_validate(self.params)
        context = case.context or {}
        policy = drop_criteria(str(context["policy"]), params.skip_criteria)
        output = decide(policy, str(context["notes"]))
        if params.date_format:
            patient = output["patient_information"]
            born = date.fromisoformat(patient["date_of_birth"])
            patient["date_of_birth"] = born.strftime(params.date_format)
        return output
