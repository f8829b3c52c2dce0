"""The benchmark as stored runs: the oracle's perfect table, a baseline, the CLI, resume,
core comparison, and an LLM core through the command line against the local server."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.clirun import clineval

from clineval.environments.radbench.conditions import build_tool_set
from clineval.environments.radbench.questions import questions_for
from clineval.environments.radbench.records import generate_records
from clineval.environments.radbench.runner import BenchSettings, episode_seed, metric_rows, run_bench
from clineval.environments.radbench.stats import summarise
from clineval.environments.radbench.vocab import UNSOLVABLE_CONDITIONS, Category
from clineval.testing import ScriptedServer


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    store = tmp_path_factory.mktemp("radbench") / "runs.db"
    result = run_bench(BenchSettings(core="oracle", n_records=2, seed=5), store=str(store), progress=False)
    return store, result


def test_the_oracle_scores_perfectly_in_every_condition(oracle_run: tuple[Path, object]) -> None:
    _, result = oracle_run
    rows = metric_rows(result)  # type: ignore[arg-type]
    assert len(rows) == 2 * 11 * 8
    for meta, values in rows:
        if meta["condition"] in UNSOLVABLE_CONDITIONS:
            assert values["uar"] == 1.0 and values["ugr"] == 1.0, meta
            # no task completion on an insufficient tool set without automated tool building
            assert values["completion"] is None
        else:
            assert values["completion"] == 1.0, meta
            assert values["ld_exec_gt"] == 0.0 and values["ld_plan_gt"] == 0.0
            assert values["ots"] == 1.0 and values["ecr"] == 1.0 and values["thr"] == 1.0
            assert values.get("uar") is None
    run = result.run  # type: ignore[attr-defined]
    assert run.tags["environment"] == "radbench" and run.tags["core"] == "oracle" and run.tags["seed"] == "5"
    settings = BenchSettings.model_validate(run.config["environment"])
    assert settings.seed == 5 and len(settings.conditions) == 8


def test_summary_and_compare_from_the_cli(oracle_run: tuple[Path, object], tmp_path: Path) -> None:
    store, result = oracle_run
    cwd = tmp_path
    shown = clineval("radbench", "summary", result.run.id, "--store", str(store), cwd=cwd)  # type: ignore[attr-defined]
    assert shown.returncode == 0, shown.stderr
    assert "By condition" in shown.stdout and "By complexity" in shown.stdout
    as_json = clineval(
        "radbench", "summary", "latest", "--store", str(store), "--by", "task", "--json", "-", cwd=cwd
    )
    rows = json.loads(as_json.stdout)["task"]
    completion = {r["group"][0]: r["mean"] for r in rows if r["metric"] == "completion"}
    assert set(completion) == {
        "012",
        "013",
        "014",
        "0123",
        "01235",
        "0126",
        "0136",
        "01348",
        "0123568",
        "01235678",
        "012356789",
    }
    greedy = clineval(
        "radbench", "run", "--core", "greedy", "-n", "2", "--seed", "5", "--store", str(store), "-q", cwd=cwd
    )
    assert greedy.returncode == 0, greedy.stderr
    compared = clineval(
        "radbench",
        "compare",
        result.run.id,
        "latest",
        "--store",
        str(store),
        "-m",
        "completion",
        cwd=cwd,  # type: ignore[attr-defined]
    )
    assert compared.returncode == 0, compared.stderr
    line = next(line for line in compared.stdout.splitlines() if line.strip("│ ").startswith("completion"))
    cells = line.replace("│", " ").split()
    # over the 5 solvable conditions, two records paired; the oracle (A) completes all of them
    assert cells[1:5] == ["5", "solvable", "2", "1.000"]
    # the greedy core (B) is worse than the oracle (A) on both records: 0 wins, 0 ties, 2 losses
    assert cells[-4:-1] == ["0", "0", "2"]


def test_summary_statistics_by_complexity(oracle_run: tuple[Path, object]) -> None:
    _, result = oracle_run
    table = summarise(metric_rows(result), by=("complexity",), metrics=["completion"])  # type: ignore[arg-type]
    # the stored score has task completion on the 5 solvable conditions only (2 records x
    # 5 conditions x 3, 5 and 3 tasks), and the oracle completes all of them
    assert {row.group[0]: (row.n, row.mean) for row in table} == {
        "simple": (30, 1.0),
        "moderate": (50, 1.0),
        "complex": (30, 1.0),
    }


def test_an_interrupted_benchmark_run_resumes(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    ran = clineval(
        "radbench",
        "run",
        "-n",
        "1",
        "--task",
        "0126",
        "--condition",
        "baseline",
        "--condition",
        "insufficient_2",
        "--store",
        str(store),
        "-q",
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    with sqlite3.connect(store) as conn:  # lose one episode, as a crash would
        run_id = conn.execute("SELECT id FROM runs").fetchone()[0]
        conn.execute("DELETE FROM results WHERE case_id LIKE '%insufficient_2'")
        conn.execute("DELETE FROM outputs WHERE case_id LIKE '%insufficient_2'")
        conn.execute("UPDATE runs SET status = 'interrupted'")
    resumed = clineval("radbench", "run", "--resume", run_id, "--store", str(store), "-q", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 2 * 3
        conn.execute("DELETE FROM results WHERE case_id LIKE '%baseline'")
        conn.execute("DELETE FROM outputs WHERE case_id LIKE '%baseline'")
    # the generic command resumes a benchmark run too
    generic = clineval("run", "--resume", run_id, "--store", str(store), "-q", cwd=tmp_path)
    assert generic.returncode == 0, generic.stderr
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 2 * 3


def test_bad_options_are_clear(tmp_path: Path) -> None:
    bad = clineval("radbench", "run", "--task", "0999", "--store", str(tmp_path / "r.db"), cwd=tmp_path)
    assert bad.returncode == 2 and "no task '0999'" in bad.stderr
    llm = clineval("radbench", "run", "--core", "llm", "--store", str(tmp_path / "r.db"), cwd=tmp_path)
    assert llm.returncode == 2 and "--core llm needs --judge" in llm.stderr
    assert not (tmp_path / "r.db").exists()


def test_an_llm_core_runs_from_the_cli_against_a_local_endpoint(tmp_path: Path) -> None:
    """One baseline episode of organ segmentation, scripted reply by reply."""
    seed = 9
    record = generate_records(1, seed=seed)[0]
    tools = build_tool_set("baseline", record, "012", seed=seed)
    by_category = {tool.category: tool.name for tool in tools.tools}
    question = questions_for(record, seed=episode_seed(seed, record.id, "questions"))["012"]
    plan = json.dumps(
        {"known": [], "chain": ["Anatomy Classifier", "Modality Classifier", "Organ Segmentor"]}
    )
    replies = [
        plan,
        f"<Call><Purpose>anatomy</Purpose><Tool>{by_category[Category.ANATOMY_CLASSIFIER]}</Tool>"
        "<Input>['$Image$']</Input></Call>",
        f"<Call><Purpose>modality</Purpose><Tool>{by_category[Category.MODALITY_CLASSIFIER]}</Tool>"
        "<Input>['$Image$']</Input></Call>",
        f"<EndCall><Purpose>segment</Purpose><Tool>{by_category[Category.ORGAN_SEGMENTOR]}</Tool>"
        "<Input>['$Image$', '$Anatomy$', '$Modality$']</Input></EndCall>",
        f"The {record.organ_biomarker.organ_object} is segmented [Organ Mask].",
    ]
    with ScriptedServer({"rules": [{"content": r, "times": 1} for r in replies]}) as server:
        ran = clineval(
            "radbench",
            "run",
            "--core",
            "llm",
            "--judge",
            f"openai:core-model@{server.base_url}",
            "-n",
            "1",
            "--seed",
            str(seed),
            "--task",
            "012",
            "--condition",
            "baseline",
            "--concurrency",
            "1",
            "--store",
            str(tmp_path / "r.db"),
            "-q",
            cwd=tmp_path,
            env={"OPENAI_API_KEY": "sk-local"},
        )
        sent = server.requests()
    assert ran.returncode == 0, ran.stderr
    assert len(sent) == 5 and question.question in json.dumps(sent[0]["body"])
    with sqlite3.connect(tmp_path / "r.db") as conn:
        value, record_json = conn.execute(
            "SELECT value, score FROM results WHERE metric = 'radbench'"
        ).fetchone()
    assert value == 1.0, record_json
    with sqlite3.connect(tmp_path / "r.db") as conn:
        stored = json.loads(conn.execute("SELECT record FROM runs").fetchone()[0])
    versions = stored["config"]["environment"]["prompt_versions"]
    assert versions["radbench.system"] == "1" and "radbench.tool_card" in versions


def test_the_same_settings_give_the_same_results(tmp_path: Path) -> None:
    settings = BenchSettings(core="random", n_records=2, seed=11, conditions=["baseline", "insufficient_3"])
    first = run_bench(settings, store=str(tmp_path / "a.db"), progress=False)
    again = run_bench(settings, store=str(tmp_path / "b.db"), progress=False)
    other = run_bench(settings.model_copy(update={"seed": 12}), store=str(tmp_path / "c.db"), progress=False)

    def table(result: object) -> list[tuple[str, dict[str, float | None]]]:
        return sorted(
            (r.case_id, dict(r.score.sub_scores))
            for r in result.results  # type: ignore[attr-defined]
            if r.metric == "radbench"
        )

    assert table(first) == table(again)
    assert table(first) != table(other)
