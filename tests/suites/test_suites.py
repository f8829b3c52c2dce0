"""Loading, validating and running suites; the pipeline lifecycle; model settings from the environment."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.suites import standins

from clineval.suites import SuiteError, SuitePipeline, load_suite, run_suite
from clineval.suites.loader import Suite

DATA = Path(__file__).parent / "data"


def write(folder: Path, text: str, name: str = "suite.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def results_by_metric(outcome: Any) -> dict[str, Any]:
    return {(r.case_id, r.metric): r.score for r in outcome.result.results}


# --- the AutoAuth framework's annotated example ----------------------------------------------------


def test_seed_annotated_example_loads_and_runs(tmp_path: Path) -> None:
    standins.CALLS.clear()
    suite = load_suite(DATA / "prior_auth_example.yaml")
    assert suite.id == "evaluation_id"
    assert suite.header.pipeline.params == {"uploaded_files": "path/to/documents"}
    assert [c.id for c in suite.cases] == ["evaluation_id.v0"]
    outcome = run_suite(suite, store=tmp_path / "runs.db", progress=False)
    scores = results_by_metric(outcome)
    score = scores[("evaluation_id.v0", "EvaluatorUniqueName")]
    assert score.value == 100.0  # the pipeline read the patient from the evaluation's context object
    # preprocess ran with the pipeline parameters, and the per-case threshold replaced args' 95
    assert ("preprocess", {"uploaded_files": "path/to/documents"}) in standins.CALLS
    assert ("fuzzy", 90.0) in standins.CALLS and ("fuzzy", 95.0) not in standins.CALLS
    assert outcome.summary["evaluation_id"] == "evaluation_id"
    assert outcome.summary["metrics"]["EvaluatorUniqueName"]["mean"] == 100.0
    run = outcome.result.run
    assert (
        run.tags["suite"] == "evaluation_id"
        and run.tags["pipeline"] == "tests.suites.standins.StandInPipeline"
    )
    assert "latency" in run.lower_is_better
    assert scores[("evaluation_id.v0", "latency")].value is not None  # time to decision is kept


# --- validation: every problem, with file, line and field -----------------------------

BROKEN = """\
check:
  description: broken on purpose
  pipeline:
    class: tests.suites.standins:StandInPipeline
  evaluators:
    - name: Fuzzy
      class: tests.suites.standins:StandInFuzzy
    - name: Fuzzy
      class: clineval.suites.evaluators:ExactMatch
    - name: Ghost
      class: not_a_module_anywhere:Nothing
    - name: Exact
      class: clineval.suites.evaluators:ExactMatch
      args: {case_sensitiv: true}
  cases: [check.a, check.b, check.c]
check.a:
  metrics: [Fuzy]
  evaluations:
    - query: patient_information.patient_name
      ground_truth: x
check.b:
  metrics: [Fuzzy]
check.c:
  metrics: [Fuzzy]
  Exact: {case_sensitive: true}
  evaluations:
    - query: a..b
      ground_truth: y
check.d:
  metrics: [Fuzzy]
  evaluations: [{query: a, ground_truth: b}]
"""


def test_every_validation_problem_is_reported_with_its_location(tmp_path: Path) -> None:
    file = write(tmp_path, BROKEN)
    with pytest.raises(SuiteError) as caught:
        load_suite(file)
    problems = {(p.location.line if p.location else None, p.field): p.message for p in caught.value.problems}
    text = str(caught.value)
    assert text.startswith(f"{len(caught.value.problems)} problems:")
    # an evaluator name used twice
    assert problems[(8, "check.evaluators[1].name")].startswith(
        "evaluator name 'Fuzzy' is used twice (first at line 6)"
    )
    # a class that does not import
    assert "cannot be imported" in problems[(11, "check.evaluators[2].class")]
    # a constructor argument the class does not take
    assert "has no parameter 'case_sensitiv'" in problems[(14, "check.evaluators[3].args")]
    # an unknown evaluator name, with a suggestion
    assert problems[(17, "check.a.metrics[0]")] == "unknown evaluator 'Fuzy'; did you mean 'Fuzzy'?"
    # a case without evaluations
    assert "has no evaluations" in problems[(21, "check.b")]
    # settings for an evaluator the case does not run, and a field path that does not parse
    assert "which this case does not run" in problems[(25, "check.c.Exact")]
    assert "empty key" in problems[(27, "check.c.evaluations[0].query")]
    # a case section that is not listed
    assert "'check.d' is not listed under check.cases" in problems[(29, "check.d")]
    for line in text.splitlines()[1:]:
        assert line.strip().startswith(f"{file}:")


def test_more_validation_problems(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        """\
s:
  description: d
  pipeline: {class: clineval.suites:SuitePipeline}
  evaluators:
    - {name: E, class: clineval.suites.evaluators:ExactMatch, metric: tbfact}
    - {name: F, class: clineval.suites.evaluators:ExactMatch}
  cases: [s.1, s.2]
  colour: blue
s.1:
  metrics: [F]
  evaluations:
    - {query: a, ground_truth: b}
s.2:
  metrics: [F]
  evaluations:
    - {query: a}
""",
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(file)
    found = {(p.location.line if p.location else None, p.field): p.message for p in caught.value.problems}
    assert "exactly one of 'class'" in found[(5, "s.evaluators[0]")]
    assert found[(8, "s.colour")] == "unknown field"
    # a pipeline without generate_responses needs responses in the suite
    assert "needs a 'response'" in found[(12, "s.1.evaluations[0]")]
    assert "'ground_truth' is missing" in found[(16, "s.2.evaluations[0]")]


def test_pipeline_class_problems(tmp_path: Path) -> None:
    module = write(
        tmp_path,
        "from clineval.suites import PipelineEvaluator\n"
        "class NotAPipeline:\n    pass\n"
        "class Half(PipelineEvaluator):\n"
        "    async def preprocess(self):\n        pass\n",
        "mypipes.py",
    )
    assert module.exists()
    for target, message in (
        ("mypipes.py:NotAPipeline", "is not a PipelineEvaluator subclass"),
        ("mypipes.py:Half", "does not implement post_processing, run_evaluations"),
        ("mypipes.py:Absent", "has no attribute 'Absent'"),
    ):
        file = write(
            tmp_path,
            f"s:\n  description: d\n  pipeline:\n    class: {target}\n"
            "  evaluators: [{name: E, class: clineval.suites.evaluators:ExactMatch}]\n  cases: [s.1]\n"
            "s.1:\n  metrics: [E]\n  evaluations: [{query: a, ground_truth: b, response: b}]\n",
        )
        with pytest.raises(SuiteError) as caught:
            load_suite(file)
        (problem,) = caught.value.problems
        assert problem.location is not None and problem.location.line == 4
        assert message in problem.message


# --- the lifecycle ---------------------------------------------------------------------


def test_run_pipeline_cannot_be_overridden() -> None:
    with pytest.raises(TypeError, match="overrides run_pipeline\\(\\), which is final"):

        class Sneaky(SuitePipeline):
            async def run_pipeline(self) -> dict[str, Any]:  # type: ignore[misc]
                return {}


def test_lifecycle_steps_must_be_async_and_post_processing_sync() -> None:
    with pytest.raises(TypeError, match="preprocess must be defined with 'async def'"):

        class SyncPrep(SuitePipeline):
            def preprocess(self) -> None:  # type: ignore[override]
                pass

    with pytest.raises(TypeError, match="post_processing must be a plain 'def'"):

        class AsyncPost(SuitePipeline):
            async def post_processing(self) -> dict[str, Any]:  # type: ignore[override]
                return {}


def _simple_suite(tmp_path: Path, pipeline: str, *, response: bool = False) -> Path:
    given = ", response: 'yes'" if response else ""
    return write(
        tmp_path,
        f"s:\n  description: d\n  pipeline:\n    class: {pipeline}\n"
        "  evaluators: [{name: E, class: clineval.suites.evaluators:ExactMatch}]\n  cases: [s.1, s.2]\n"
        f"s.1:\n  metrics: [E]\n  evaluations: [{{query: answer, ground_truth: 'yes'{given}}}]\n"
        f"s.2:\n  metrics: [E]\n  evaluations: [{{query: answer, ground_truth: 'no'{given}}}]\n",
    )


def test_run_pipeline_enforces_the_order_and_runs_once(tmp_path: Path) -> None:
    standins.Recording.order.clear()
    suite = load_suite(_simple_suite(tmp_path, "tests.suites.standins:Recording"))
    outcome = run_suite(suite, store=tmp_path / "r.db", progress=False)
    order = standins.Recording.order
    assert order[0] == "preprocess:preprocess"
    assert order[1] == "run_evaluations:run_evaluations"
    assert sorted(order[2:4]) == ["generate:s.1", "generate:s.2"]
    assert order[4] == "post_processing:post_processing"
    assert outcome.summary == {"n": 2}
    scores = results_by_metric(outcome)
    assert scores[("s.1", "E")].value == 1.0 and scores[("s.2", "E")].value == 0.0
    pipeline = standins.Recording(suite, {})
    pipeline._stage = "done"
    with pytest.raises(RuntimeError, match="runs once"):
        import asyncio

        asyncio.run(pipeline.run_pipeline())


def test_post_processing_must_return_a_dict(tmp_path: Path) -> None:
    suite = load_suite(_simple_suite(tmp_path, "tests.suites.standins:NotADict", response=True))
    with pytest.raises(TypeError, match="must return a dict"):
        run_suite(suite, store=tmp_path / "r.db", progress=False)


def test_given_responses_without_a_generating_pipeline(tmp_path: Path) -> None:
    outcome = run_suite(
        _simple_suite(tmp_path, "clineval.suites:SuitePipeline", response=True),
        store=tmp_path / "r.db",
        progress=False,
    )
    scores = results_by_metric(outcome)
    assert scores[("s.1", "E")].value == 1.0 and scores[("s.2", "E")].value == 0.0
    assert "latency" not in outcome.result.metrics  # nothing ran, nothing was timed


# --- errors are never zeros -------------------------------------------------------------


def test_an_evaluator_that_raises_gives_an_error_score(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        "s:\n  description: d\n  pipeline: {class: 'tests.suites.standins:FailsOnSecond'}\n"
        "  evaluators:\n"
        "    - {name: Boom, class: 'tests.suites.standins:Exploding'}\n"
        "    - {name: E, class: 'clineval.suites.evaluators:ExactMatch'}\n"
        "  cases: [s.1, s.2]\n"
        "s.1:\n  metrics: [Boom, E]\n  evaluations:\n"
        "    - {query: answer, ground_truth: 'yes', metrics: [E]}\n"
        "    - {query: name, ground_truth: Sarah}\n"
        "s.2:\n  metrics: [E]\n  evaluations: [{query: answer, ground_truth: 'yes'}]\n",
    )
    outcome = run_suite(file, store=tmp_path / "r.db", progress=False)
    scores = results_by_metric(outcome)
    boom = scores[("s.1", "Boom")]
    assert boom.status == "error" and boom.value is None
    assert "evaluator 'Boom' raised RuntimeError: the scoring service is down" in (boom.error or "")
    # two evaluations for E on s.1: the mean, with each kept as a sub-score
    exact = scores[("s.1", "E")]
    assert exact.value == 1.0 and exact.sub_scores == {"answer": 1.0, "name": 1.0}
    # the pipeline failed on s.2: its evaluations are unscored with the reason, and failure is 1
    failed = scores[("s.2", "E")]
    assert failed.status == "error" and "the policy service timed out" in (failed.error or "")
    assert scores[("s.2", "failure")].value == 1.0
    assert ("s.2", "Boom") not in scores  # Boom is not in s.2's metrics: not run, not counted
    aggregates = {a.metric: a for a in outcome.result.aggregate()}
    assert aggregates["E"].scored == 1 and aggregates["E"].errors == 1 and aggregates["E"].mean == 1.0


def test_a_missing_output_field_scores_as_wrong_with_the_reason(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        "s:\n  description: d\n  pipeline: {class: 'tests.suites.standins:FailsOnSecond'}\n"
        "  evaluators: [{name: E, class: 'clineval.suites.evaluators:ExactMatch'}]\n  cases: [s.1]\n"
        "s.1:\n  metrics: [E]\n  evaluations: [{query: patient.name, ground_truth: Sarah}]\n",
    )
    score = results_by_metric(run_suite(file, store=tmp_path / "r.db", progress=False))[("s.1", "E")]
    assert score.value == 0.0
    assert (score.explanation or "").startswith("the output has no field 'patient.name'")


# --- model configuration from the environment, and secrets ------------------------------

NEEDS_MODEL = """\
s:
  description: d
  pipeline: {class: 'tests.suites.standins:FailsOnSecond'}
  evaluators:
    - {name: Judge, class: 'tests.suites.standins:NeedsModel'}
  cases: [s.1]
s.1:
  metrics: [Judge]
  evaluations: [{query: answer, ground_truth: 'yes'}]
"""


def test_model_config_is_injected_from_azure_environment(tmp_path: Path) -> None:
    standins.NeedsModel.seen.clear()
    env = {
        "AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com",
        "AZURE_OPENAI_KEY": "azure-secret-123",
        "AZURE_OPENAI_CHAT_DEPLOYMENT_ID": "gpt-4o",
    }
    suite = load_suite(write(tmp_path, NEEDS_MODEL), env=env)
    assert standins.NeedsModel.seen[-1] == {
        "azure_endpoint": "https://example.openai.azure.com",
        "api_key": "azure-secret-123",
        "azure_deployment": "gpt-4o",
        "api_version": "2024-06-01",
    }
    outcome = run_suite(suite, store=tmp_path / "r.db", progress=False)
    score = results_by_metric(outcome)[("s.1", "Judge")]
    assert (score.value, score.label, score.explanation) == (5.0, "pass", "stand-in")
    # the key is nowhere in the store
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("r.db*"))
    assert b"azure-secret-123" not in raw


def test_model_config_from_the_openai_judge_or_a_clear_problem(tmp_path: Path) -> None:
    standins.NeedsModel.seen.clear()
    file = write(
        tmp_path,
        NEEDS_MODEL.replace("  cases:", "  judge: openai:gpt-4o-mini@http://127.0.0.1:9/v1\n  cases:"),
    )
    load_suite(file, env={"OPENAI_API_KEY": "sk-local"})
    assert standins.NeedsModel.seen[-1] == {
        "type": "openai",
        "model": "gpt-4o-mini",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key": "sk-local",
    }
    with pytest.raises(SuiteError, match="needs a model configuration"):
        load_suite(write(tmp_path, NEEDS_MODEL, "plain.yaml"), env={})
    # given in the suite, it is used as is
    explicit = NEEDS_MODEL.replace(
        "class: 'tests.suites.standins:NeedsModel'}",
        "class: 'tests.suites.standins:NeedsModel', args: {model_config: {type: openai, model: m}}}",
    )
    load_suite(write(tmp_path, explicit, "explicit.yaml"), env={})
    assert standins.NeedsModel.seen[-1] == {"type": "openai", "model": "m"}


def test_secrets_from_the_environment_are_never_stored(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        "s:\n  description: d\n  pipeline:\n    class: 'tests.suites.standins:LeakyPipeline'\n"
        "    api_key: ${PA_SERVICE_KEY}\n"
        "  evaluators: [{name: E, class: 'clineval.suites.evaluators:ExactMatch'}]\n  cases: [s.1]\n"
        "s.1:\n  metrics: [E]\n  evaluations: [{query: answer, ground_truth: 'yes'}]\n",
    )
    outcome = run_suite(
        load_suite(file, env={"PA_SERVICE_KEY": "pa-key-98765"}), store=tmp_path / "r.db", progress=False
    )
    failure = results_by_metric(outcome)[("s.1", "E")]
    assert "***" in (failure.error or "") and "pa-key-98765" not in (failure.error or "")
    assert outcome.result.run.config["suite"]["s"]["pipeline"]["api_key"] == "${PA_SERVICE_KEY}"
    with sqlite3.connect(tmp_path / "r.db") as conn:
        dump = "\n".join(conn.iterdump())
    assert "pa-key-98765" not in dump


def test_suite_file_with_includes_and_a_copied_example(tmp_path: Path) -> None:
    shutil.copy(DATA / "prior_auth_example.yaml", tmp_path / "base.yaml")
    file = write(
        tmp_path,
        "include: base.yaml\nevaluation_id:\n  tags: {team: pa}\n"
        "evaluation_id.v0:\n  EvaluatorUniqueName: {threshold: 80}\n",
    )
    suite: Suite = load_suite(file)
    assert suite.header.tags == {"team": "pa"}
    assert suite.cases[0].settings == {"EvaluatorUniqueName": {"threshold": 80}}
    outcome = run_suite(suite, store=tmp_path / "r.db", progress=False, tags={"change": "prompt-v2"})
    assert outcome.result.run.tags == {
        "suite": "evaluation_id",
        "pipeline": "tests.suites.standins.StandInPipeline",
        "team": "pa",
        "change": "prompt-v2",
    }


def test_a_suite_run_can_be_rescored_and_resumed_from_python(tmp_path: Path) -> None:
    from clineval import evaluate, rescore

    store = tmp_path / "r.db"
    suite_file = _simple_suite(tmp_path, "tests.suites.standins:Recording")
    outcome = run_suite(suite_file, store=store, progress=False)
    again = rescore(outcome.result.run_id, ["latency", "token_f1"], store=store, progress=False)
    by_metric = {(r.case_id, r.metric): r.score for r in again.results}
    assert by_metric[("s.1", "latency")].status == "scored"
    assert by_metric[("s.1", "token_f1")].status == "error"  # suite cases carry no reference text
    resumed = evaluate(resume=outcome.result.run_id, store=store, progress=False)
    assert resumed.run_id == outcome.result.run_id and len(resumed.results) == len(outcome.result.results)
