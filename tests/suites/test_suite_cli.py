"""Suites from the command line: run, validate, show and resume, in subprocesses."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.clirun import clineval

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"


def env() -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "200"}


def test_run_validate_and_show_a_suite(tmp_path: Path) -> None:
    store = str(tmp_path / "runs.db")
    suite = str(DATA / "prior_auth_example.yaml")
    checked = clineval("validate", suite, cwd=ROOT, env=env())
    assert checked.returncode == 0, checked.stderr
    assert "ok: suite 'evaluation_id': 1 cases, evaluators EvaluatorUniqueName" in checked.stdout
    ran = clineval("run", suite, "--store", store, "-q", "--tag", "change=baseline", cwd=ROOT, env=env())
    assert ran.returncode == 0, ran.stderr
    assert "EvaluatorUniqueName" in ran.stdout and "Cases" in ran.stdout
    assert "evaluation_id.v0" in ran.stdout and "disclaimer: Any notes on limitations" in ran.stdout
    shown = clineval("show", "latest", "--store", store, cwd=ROOT, env=env())
    assert shown.returncode == 0 and "Cases" in shown.stdout and "evaluation_id.v0" in shown.stdout
    listed = clineval("runs", "--store", store, cwd=ROOT, env=env())
    assert "evaluation_id" in listed.stdout


def test_suite_options_that_do_not_apply_are_refused(tmp_path: Path) -> None:
    refused = clineval(
        "run",
        str(DATA / "prior_auth_example.yaml"),
        "--metric",
        "rouge",
        "--store",
        str(tmp_path / "r.db"),
        cwd=ROOT,
        env=env(),
    )
    assert refused.returncode == 2
    assert "is a suite" in refused.stderr and "--metric cannot change them" in refused.stderr
    assert not (tmp_path / "r.db").exists()


def test_a_broken_suite_lists_every_problem_and_exits_2(tmp_path: Path) -> None:
    text = (DATA / "prior_auth_example.yaml").read_text(encoding="utf-8")
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        text.replace("metrics: [EvaluatorUniqueName]", "metrics: [EvaluatorUniqeName]").replace(
            "tests.suites.standins:StandInFuzzy", "tests.suites.standins:Missing"
        ),
        encoding="utf-8",
    )
    for command in ("validate", "run"):
        store = ["--store", str(tmp_path / "r.db")] if command == "run" else []
        result = clineval(command, str(broken), *store, cwd=ROOT, env=env())
        assert result.returncode == 2
        assert "Traceback" not in result.stderr
        assert "3 problems:" in result.stderr
        assert f"{broken}:14: evaluation_id.evaluators[0].class:" in result.stderr
        assert (
            f"{broken}:21: evaluation_id.v0.metrics[0]: unknown evaluator 'EvaluatorUniqeName'"
            in result.stderr
        )
    assert not (tmp_path / "r.db").exists()


def test_an_interrupted_suite_run_resumes(tmp_path: Path) -> None:
    """A suite run whose pipeline failed on some cases is continued with --resume --retry-errors."""
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "flaky.py").write_text(
        "from pathlib import Path\n"
        "from clineval.suites import SuitePipeline\n"
        "class Flaky(SuitePipeline):\n"
        "    async def generate_responses(self, case):\n"
        "        if Path(self.params['flag']).exists() and case.id == 's.2':\n"
        "            raise ConnectionError('service unavailable')\n"
        "        return {'answer': 'yes'}\n",
        encoding="utf-8",
    )
    flag = folder / "down"
    flag.write_text("x", encoding="utf-8")
    (folder / "suite.yaml").write_text(
        f"s:\n  description: d\n  pipeline:\n    class: flaky.py:Flaky\n    flag: {flag}\n"
        "  evaluators: [{name: E, class: 'clineval.suites.evaluators:ExactMatch'}]\n"
        "  cases: [s.1, s.2]\n"
        "s.1:\n  metrics: [E]\n  evaluations: [{query: answer, ground_truth: 'yes'}]\n"
        "s.2:\n  metrics: [E]\n  evaluations: [{query: answer, ground_truth: 'yes'}]\n",
        encoding="utf-8",
    )
    store = str(tmp_path / "r.db")
    first = clineval("run", str(folder / "suite.yaml"), "--store", store, "-q", cwd=tmp_path, env=env())
    assert first.returncode == 0, first.stderr
    assert "service unavailable" in first.stdout
    flag.unlink()
    again = clineval(
        "run", "--resume", "latest", "--retry-errors", "--store", store, "-q", cwd=tmp_path, env=env()
    )
    assert again.returncode == 0, again.stderr
    assert "service unavailable" not in again.stdout
    shown = clineval(
        "export", "latest", "--store", store, "--format", "long-csv", "-o", "-", cwd=tmp_path, env=env()
    )
    rows = [line for line in shown.stdout.splitlines() if ",E," in line]
    assert len(rows) == 2 and all(",1.0," in row for row in rows)
    shutil.rmtree(folder)
