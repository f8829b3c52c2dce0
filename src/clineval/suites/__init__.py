"""Evaluation suites in YAML (the AutoAuth prior-authorization schema): cases as configuration,
a pipeline-evaluator lifecycle.

>>> from clineval.suites import run_suite
>>> outcome = run_suite("examples/prior_auth/suite.yaml")
>>> outcome.result.aggregate_frame()

See ``docs/suites.md`` for the schema, :mod:`clineval.suites.pipeline` for the lifecycle
and :mod:`clineval.suites.evaluators` for the evaluators that ship with clineval.
"""

from clineval.suites.loader import Suite, load_suite
from clineval.suites.pipeline import PipelineEvaluator, SuiteCase, SuitePipeline
from clineval.suites.runner import SuiteOutcome, arun_suite, run_suite
from clineval.suites.schema import looks_like_suite
from clineval.suites.source import Problem, SuiteError

__all__ = [
    "PipelineEvaluator",
    "Problem",
    "Suite",
    "SuiteCase",
    "SuiteError",
    "SuiteOutcome",
    "SuitePipeline",
    "arun_suite",
    "load_suite",
    "looks_like_suite",
    "run_suite",
]
