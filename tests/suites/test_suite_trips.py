"""What suite users tripped on: validate says ok and every case then fails (a ``**kwargs``
generate_responses, a context entry that cannot be built, a pipeline that cannot be
created), and a misspelled field path that scores every case 0 in silence."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import clineval
from tests.suites.test_suite_cli import env

from clineval.errors import ConfigError
from clineval.suites import SuiteCase, SuiteError, SuitePipeline, load_suite
from clineval.suites.calling import call_generate, case_problems, response_call
from clineval.suites.fields import field_paths, nearest_field

PIPES = '''
from pydantic import BaseModel
from clineval.suites import SuitePipeline


class Patient(BaseModel):
    name: str
    age: int


class KwargsPipeline(SuitePipeline):
    """The signature the prior-authorization team documents."""

    async def generate_responses(self, **kwargs):
        patient = kwargs["context"]["pipes.py:Patient"]
        return {"decision": "approved", "patient": {"name": patient.name}, "given": sorted(kwargs)}


class NeedsInput(SuitePipeline):
    async def generate_responses(self, *, input, context=None):
        return {"decision": input}


class Refuses(SuitePipeline):
    def __init__(self, suite, params=None):
        super().__init__(suite, params)
        raise RuntimeError("no model endpoint configured\\nsecond line")

    async def generate_responses(self, case):
        return {}
'''


def _suite(folder: Path, pipeline: str, cases: str) -> Path:
    (folder / "pipes.py").write_text(PIPES, encoding="utf-8")
    path = folder / "suite.yaml"
    path.write_text(
        "s:\n"
        "  description: d\n"
        f"  pipeline: {{class: 'pipes.py:{pipeline}'}}\n"
        "  evaluators: [{name: Decision, class: 'clineval.suites.evaluators:ExactMatch'}]\n"
        "  cases: [s.1, s.2]\n" + cases,
        encoding="utf-8",
    )
    return path


CASE = (
    "{id}:\n"
    "  metrics: [Decision]\n"
    "  context:\n"
    "    pipes.py:Patient: {{name: Ann, age: {age}}}\n"
    "  evaluations: [{{query: {query}, ground_truth: approved}}]\n"
)


def test_validate_reports_what_every_case_would_fail_on(tmp_path: Path) -> None:
    """A context entry that cannot be built, a case without the input generate_responses
    needs: validate lists both, with their lines, and exits 2 (through the real CLI)."""
    suite = _suite(
        tmp_path,
        "NeedsInput",
        CASE.format(id="s.1", age="forty", query="decision")
        + CASE.format(id="s.2", age=40, query="decision").replace("  metrics:", "  input: hi\n  metrics:"),
    )
    checked = clineval("validate", str(suite), cwd=tmp_path, env=env())
    assert checked.returncode == 2, checked.stdout
    assert "Traceback" not in checked.stderr
    assert "2 problems:" in checked.stderr
    # line 9: age of s.1's patient; line 6: the section of s.1, which has no input
    assert f"{suite}:9: s.1.context.pipes.py:Patient.age: pipes.py:Patient cannot be built: Input " in (
        checked.stderr
    )
    assert (
        f"{suite}:6: s.1: case 's.1': generate_responses needs 'input', which this case does not give"
        in checked.stderr
    )


def test_validate_creates_the_pipeline(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        "Refuses",
        CASE.format(id="s.1", age=40, query="decision") + CASE.format(id="s.2", age=41, query="decision"),
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(suite, instantiate=False)  # what clineval validate does
    (problem,) = caught.value.problems
    assert problem.location is not None and problem.location.line == 3
    assert problem.message == (
        "pipeline Refuses cannot be created: RuntimeError: no model endpoint configured"
    )


def test_a_kwargs_pipeline_runs_and_a_misspelled_path_is_said(tmp_path: Path) -> None:
    """generate_responses(self, **kwargs) runs every case; a path that matches nothing in any
    output is a console warning naming the nearest field, and each row says why it scored 0."""
    suite = _suite(
        tmp_path,
        "KwargsPipeline",
        CASE.format(id="s.1", age=40, query="decision") + CASE.format(id="s.2", age=41, query="patient.nme"),
    )
    checked = clineval("validate", str(suite), cwd=tmp_path, env=env())
    assert checked.returncode == 0 and "ok: suite 's': 2 cases" in checked.stdout, checked.stderr
    store = str(tmp_path / "r.db")
    ran = clineval("run", str(suite), "--store", store, "-q", cwd=tmp_path, env={**env(), "COLUMNS": "400"})
    assert ran.returncode == 0, ran.stderr
    assert "the pipeline failed" not in ran.stdout
    assert (
        "warning: field path 'patient.nme' (Decision) matches nothing in the output of the one case "
        "that asks it, which scored it as a wrong answer; nearest existing field: 'patient.name'"
    ) in ran.stdout
    rows = {line.split("│")[1].strip(): line for line in ran.stdout.splitlines() if line.startswith("│ s.")}
    assert "1 (pass)" in rows["s.1"] and "scored 0" not in rows["s.1"]
    assert "0 (fail)" in rows["s.2"] and "scored 0: the output has no field 'patient.nme'" in rows["s.2"]
    shown = clineval("show", "latest", "--store", store, cwd=tmp_path, env={**env(), "COLUMNS": "400"})
    assert "nearest existing field: 'patient.name'" in shown.stdout


class _Named(SuitePipeline):
    async def generate_responses(self, case_id: str, metadata: dict[str, Any] | None = None) -> Any:
        return {"id": case_id, "meta": metadata}


class _Bad(SuitePipeline):
    async def generate_responses(self, case: SuiteCase, patient: Any) -> Any:
        return {}


class _Positional(SuitePipeline):
    async def generate_responses(self, context: SuiteCase) -> Any:  # one parameter: the case, by any name
        return {"id": context.id}


def test_how_generate_responses_is_given_a_case() -> None:
    case = SuiteCase(id="c", evaluations=[], metrics=[], metadata={"a": 1})
    named = response_call(_Named)
    assert not named.positional
    assert (named.keywords, named.required) == (("case_id", "metadata"), ("case_id",))
    assert asyncio.run(call_generate(_Named.__new__(_Named), named, case)) == {"id": "c", "meta": {"a": 1}}
    positional = response_call(_Positional)
    assert positional.positional and case_problems(positional, case) == []
    assert asyncio.run(call_generate(_Positional.__new__(_Positional), positional, case)) == {"id": "c"}
    with pytest.raises(ConfigError, match="parameter 'patient' is not a case field"):
        response_call(_Bad)
    needs_input = response_call(type("I", (SuitePipeline,), {"generate_responses": _needs_input}))
    assert case_problems(needs_input, case) == [
        "generate_responses needs 'input', which this case does not give (add 'input:' to the case)"
    ]


async def _needs_input(self: Any, *, input: str) -> Any:
    return input


def test_field_paths_and_the_nearest_one() -> None:
    output = {"decision": "a", "criteria": [{"name": "x", "met": True}, {"name": "y", "note": 1}]}
    assert list(field_paths(output)) == [
        "decision",
        "criteria",
        "criteria[*].name",
        "criteria[*].met",
        "criteria[*].note",
    ]
    fields = list(field_paths(output))
    assert nearest_field("decison", fields) == "decision"
    assert nearest_field("criteria[*].nme", fields) == "criteria[*].name"
    assert nearest_field("zzz", fields) is None


SLOW = """
import time
from clineval.suites import SuitePipeline

class Slow(SuitePipeline):
    async def generate_responses(self, case):
        import asyncio
        await asyncio.sleep(0.3)
        return {"answer": "yes"}

def slow_check(*, response, ground_truth):
    time.sleep(0.3)
    return float(response == ground_truth)
"""


def test_junit_times_of_a_suite_run_are_wall_times(tmp_path: Path) -> None:
    """Four cases at once, each 0.3 s in the pipeline and 0.3 s in the evaluator: the JUnit
    report gives the evaluator about 0.3 s and the run about 0.6 s of wall time, not the
    1.2 s sum of the scores' durations."""
    import xml.etree.ElementTree as ET

    (tmp_path / "slow.py").write_text(SLOW, encoding="utf-8")
    cases = [f"s.{i}" for i in range(4)]
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "s:\n  description: d\n  pipeline: {class: 'slow.py:Slow', concurrency: 4}\n"
        "  evaluators: [{name: Check, class: 'slow.py:slow_check'}]\n"
        f"  cases: [{', '.join(cases)}]\n"
        + "".join(
            f"{c}:\n  metrics: [Check]\n  evaluations: [{{query: answer, ground_truth: 'yes'}}]\n"
            for c in cases
        ),
        encoding="utf-8",
    )
    report = tmp_path / "junit.xml"
    ran = clineval(
        "run",
        str(suite),
        "--store",
        str(tmp_path / "r.db"),
        "-q",
        "--junit",
        str(report),
        cwd=tmp_path,
        env=env(),
    )
    assert ran.returncode == 0, ran.stderr
    root = ET.parse(report).getroot()
    check = root.find("testsuite[@name='Check']")
    assert check is not None
    durations = [float(c.get("time", "0")) for c in check.findall("testcase")]
    assert len(durations) == 4 and sum(durations) >= 1.19  # what the report used to give
    assert 0.29 <= float(check.get("time", "0")) < 0.9
    assert 0.59 <= float(root.get("time", "0")) < 1.1


def _given_suite(folder: Path, answer: str) -> Path:
    path = folder / f"given-{answer}.yaml"
    path.write_text(
        "s:\n  description: d\n  pipeline: {class: 'clineval.suites:SuitePipeline'}\n"
        "  evaluators: [{name: E, class: 'clineval.suites.evaluators:ExactMatch'}]\n  cases: [s.1, s.2]\n"
        f"s.1:\n  metrics: [E]\n  evaluations: [{{query: a, ground_truth: 'yes', response: '{answer}'}}]\n"
        "s.2:\n  metrics: [E]\n  evaluations: [{query: a, ground_truth: 'no', response: 'no'}]\n",
        encoding="utf-8",
    )
    return path


def test_runs_are_named_in_every_command_and_export_json(tmp_path: Path) -> None:
    """show/compare/export take a run's name; a name two runs share is an error listing both
    ids; ids, prefixes and latest keep working; export --format json is one document."""
    import json

    from clineval.results.export import export_run, jsonl_records
    from clineval.results.stored import StoredResult
    from clineval.store.sqlite import RunStore
    from clineval.suites import run_suite

    store = tmp_path / "r.db"
    base = run_suite(_given_suite(tmp_path, "yes"), store=store, name="baseline", progress=False)
    new = run_suite(_given_suite(tmp_path, "nope"), store=store, name="candidate", progress=False)
    twins = [
        run_suite(_given_suite(tmp_path, "yes"), store=store, name="twin", progress=False).result.run.id
        for _ in range(2)
    ]
    runs = RunStore(store)
    assert runs.get_run("baseline").id == base.result.run.id
    assert runs.get_run(new.result.run.id[:-1]).id == new.result.run.id  # a prefix
    assert runs.get_run("latest").id == twins[1]
    from clineval.viewer.data import ViewerData

    viewer = ViewerData(store)  # the viewer's pages find runs the same way (/runs/baseline)
    try:
        assert viewer.get_run("baseline").id == base.result.run.id
    finally:
        viewer.close()
    cli_env = {**env(), "COLUMNS": "300"}
    shown = clineval("show", "candidate", "--store", str(store), cwd=tmp_path, env=cli_env)
    assert shown.returncode == 0 and new.result.run.id in shown.stdout, shown.stderr
    twin = clineval("show", "twin", "--store", str(store), cwd=tmp_path, env=cli_env)
    assert twin.returncode != 0 and "Traceback" not in twin.stderr
    assert "2 runs are named 'twin': " in twin.stderr and all(t in twin.stderr for t in twins)
    compared = clineval("compare", "baseline", "candidate", "--store", str(store), cwd=tmp_path, env=cli_env)
    assert compared.returncode == 0, compared.stderr
    assert base.result.run.id in compared.stdout and new.result.run.id in compared.stdout
    exported = clineval(
        "export", "baseline", "--format", "json", "-o", "-", "--store", str(store), cwd=tmp_path, env=cli_env
    )
    assert exported.returncode == 0, exported.stderr
    document = json.loads(exported.stdout)
    assert document["run"]["id"] == base.result.run.id and document["run"]["name"] == "baseline"
    means = {row["metric"]: row["mean"] for row in document["aggregates"] if row["group"] is None}
    assert means == {"E": 1.0}
    assert [row["case"]["id"] for row in document["cases"]] == ["s.1", "s.2"]
    assert document["cases"][0]["scores"]["E"]["value"] == 1.0
    _view_opens_a_run_by_name(store, "baseline", base.result.run.id, tmp_path)
    # streamed from the store (clineval export) or from memory: the same document
    streamed = tmp_path / "streamed.json"
    export_run(StoredResult(runs.get_run("candidate"), str(store)), "json", streamed)
    in_memory = tmp_path / "memory.json"
    export_run(new.result, "json", in_memory)
    assert json.loads(streamed.read_text()) == json.loads(in_memory.read_text())
    assert json.loads(in_memory.read_text())["cases"] == jsonl_records(new.result)


def test_run_headers_name_the_model_actually_used(tmp_path: Path) -> None:
    """A suite whose evaluator was given an Azure model configuration, and a run whose agent
    is an LLM core: neither header says "judge none" (the suite's through the CLI)."""
    from clineval.model import DatasetInfo, RunRecord
    from clineval.results.render import run_header

    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "s:\n  description: d\n  pipeline: {class: 'clineval.suites:SuitePipeline'}\n"
        "  evaluators: [{name: Judge, class: 'tests.suites.standins:NeedsModel'}]\n  cases: [s.1]\n"
        "s.1:\n  metrics: [Judge]\n  evaluations: [{query: a, ground_truth: b, response: b}]\n",
        encoding="utf-8",
    )
    azure = {
        "AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com",
        "AZURE_OPENAI_API_KEY": "azure-secret-123",
        "AZURE_OPENAI_DEPLOYMENT": "gpt-4o-mini",
    }
    store = str(tmp_path / "r.db")
    ran = clineval("run", str(suite), "--store", store, "-q", cwd=tmp_path, env={**env(), **azure})
    assert ran.returncode == 0, ran.stderr
    header = ran.stdout.splitlines()[0]
    assert "judge azure:gpt-4o-mini · status completed" in header and "judge none" not in header
    assert "azure-secret-123" not in ran.stdout
    from clineval.viewer.data import ViewerData

    viewer = ViewerData(store)  # what the viewer's run list is given
    try:
        assert [row.judge for row in viewer.runs()] == ["azure:gpt-4o-mini"]
    finally:
        viewer.close()
    run = RunRecord(
        id="r",
        created_at=1.0,
        status="completed",
        metrics=["radbench"],
        judge={"name": "none"},
        config={"environment": {"kind": "radbench", "core": "llm", "llm": {"endpoint": "openai:gpt-4o"}}},
        dataset=DatasetInfo(source="radbench", fingerprint="f", n_cases=2),
        clineval_version="0",
        python="3.11",
        platform="test",
    )
    assert "judge none · agent openai:gpt-4o · status" in run_header(run)
    reference = run.model_copy(update={"config": {"environment": {"kind": "radbench", "core": "oracle"}}})
    assert "judge none · status" in run_header(reference)


def test_time_to_decision_is_a_plain_case_value_that_repeats_average() -> None:
    """The suite's time to decision per case is its seconds (a value, never an aggregate), so
    the repeated-trials engine averages it like any value: trials of 1.0, 2.0 and 4.5 s
    (all within max_seconds 5) give 2.5 s, pass; 1.0 and 6.0 s give 3.5 s and no label,
    as the trials disagree. The case table shows the case mean."""
    from clineval.model import AgentRun, Case, ResultRecord
    from clineval.results.trials import combine_trials
    from clineval.suites.binding import combine
    from clineval.suites.evaluators import TimeToDecision
    from clineval.suites.table import cell

    ttd = TimeToDecision(max_seconds=5)

    def trial(seconds: float) -> Any:
        return combine("TimeToDecision", [(None, ttd(latency_s=seconds))])

    within = combine_trials([trial(1.0), trial(2.0), trial(4.5)])
    assert (within.value, within.label) == (2.5, "pass")
    assert within.details["trials"]["values"] == [1.0, 2.0, 4.5]
    straddling = combine_trials([trial(1.0), trial(6.0)])
    assert (straddling.value, straddling.label) == (3.5, None)
    latency = ResultRecord(run_id="r", case_id="c", metric="latency", score=within)
    case = Case(id="c", agent_run=AgentRun(latency_s=1.0))
    assert cell("time", case, {"latency": latency}) == "2.50 s (mean of 3)"
    assert cell("time", case, {}) == "1.00 s"


def _view_opens_a_run_by_name(store: Path, name: str, run_id: str, cwd: Path) -> None:
    """clineval view NAME serves the store and opens that run's page."""
    import os
    import re
    import subprocess
    import sys
    import urllib.request

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clineval.cli.main",
            "view",
            name,
            "--store",
            str(store),
            "--port",
            "0",
            "--no-open",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, **env()},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://[\w.:]+/runs/\S+", line)
        assert found is not None, line
        assert found.group(0).endswith(f"/runs/{run_id}")
        with urllib.request.urlopen(found.group(0), timeout=30) as response:
            assert response.status == 200 and run_id in response.read().decode("utf-8")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


COUNTING = '''
import itertools
from pathlib import Path
from clineval.suites import SuitePipeline

CALLS = Path(__file__).with_name("calls.txt")
_answers = itertools.cycle(["approved", "approved", "denied"])


class Counting(SuitePipeline):
    """Answers approved, approved, denied, ... and records each call."""

    async def generate_responses(self, **kwargs):
        with CALLS.open("a") as out:
            out.write(kwargs["case_id"] + "\\n")
        return {"decision": next(_answers)}
'''


def test_a_suite_runs_with_repeated_trials(tmp_path: Path) -> None:
    """clineval run SUITE --repeats 3: each case's pipeline call runs three times and its
    Decision is the mean of its trials (hand-worked: 2 of 3 trials approve, as expected)."""
    (tmp_path / "pipes.py").write_text(COUNTING, encoding="utf-8")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "s:\n  description: d\n  pipeline: {class: 'pipes.py:Counting', concurrency: 1}\n"
        "  evaluators: [{name: Decision, class: 'clineval.suites.evaluators:ExactMatch'}]\n"
        "  cases: [s.1]\n"
        "s.1:\n  metrics: [Decision]\n  evaluations: [{query: decision, ground_truth: approved}]\n",
        encoding="utf-8",
    )
    store = tmp_path / "r.db"
    ran = clineval("run", str(suite), "--repeats", "3", "--store", str(store), "-q", cwd=tmp_path, env=env())
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "calls.txt").read_text(encoding="utf-8").split() == ["s.1", "s.1", "s.1"]
    from clineval.store.sqlite import RunStore

    run_store = RunStore(store)
    try:
        (run,) = run_store.list_runs()
        assert run.config["repeats"] == 3
        decision = [r for r in run_store.iter_results(run.id) if r.metric == "Decision"]
        assert [r.score.value for r in decision] == [pytest.approx(2 / 3)]
    finally:
        run_store.close()
