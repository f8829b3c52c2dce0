"""Option handling of `clineval run`: clear refusals, overrides, and paths kept for resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests import clirun

from clineval.store import RunStore


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLINEVAL_JUDGE", raising=False)
    (tmp_path / "cases.jsonl").write_text(
        "\n".join(json.dumps({"id": f"c{i}", "input": f"q{i}", "reference": "K 4.1"}) for i in range(3))
        + "\n",
        encoding="utf-8",
    )
    (tmp_path / "agent.py").write_text(
        "from pathlib import Path\n"
        "def answer(query):\n"
        "    if query == 'q2' and not Path('recovered').exists():\n"
        "        raise TimeoutError('upstream EHR timed out')\n"
        "    return 'K 4.1'\n",
        encoding="utf-8",
    )
    return tmp_path


def invoke(*args: str) -> tuple[int, str]:
    result = clirun.invoke(*args)
    return result.exit_code, result.output


def test_bad_judge_spec_is_a_clear_error(folder: Path) -> None:
    code, out = invoke("run", "--data", "cases.jsonl", "-m", "rouge", "--judge", "openai:")
    assert code == 2 and "--judge 'openai:'" in out and "needs a model" in out
    code, out = invoke("run", "--data", "cases.jsonl", "-m", "rouge", "--judge", "gemini:pro")
    assert code == 2 and "'openai:MODEL[@BASE_URL]'" in out  # brackets are printed, not read as markup


def test_environment_judge_applies_without_a_run_file(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (folder / "rules.yaml").write_text("default: {explanation: fine, rating: 4}\n", encoding="utf-8")
    monkeypatch.setenv("CLINEVAL_JUDGE", f"scripted:{folder / 'rules.yaml'}")
    (folder / "answered.jsonl").write_text(json.dumps({"id": "a", "input": "K?", "response": "K 4.1"}) + "\n")
    code, out = invoke("run", "--data", "answered.jsonl", "-m", "rubric", "--store", "s.db")
    assert code == 0, out
    with RunStore("s.db") as store:
        (run,) = store.list_runs()
        assert run.judge is not None and run.judge["name"] == "scripted"
        assert {r.score.value for r in store.load_results(run.id)} == {4.0}


def test_agent_options_need_an_agent(folder: Path) -> None:
    code, out = invoke("run", "--data", "cases.jsonl", "-m", "exact_match", "--concurrency", "4")
    assert code == 2 and "need an agent" in out


def test_store_option_overrides_the_run_file(folder: Path) -> None:
    (folder / "run.yaml").write_text(
        "data: cases.jsonl\nmetrics: [exact_match]\nstore: file.db\n", encoding="utf-8"
    )
    assert invoke("run", "run.yaml")[0] == 0
    assert (folder / "file.db").exists()
    assert invoke("run", "run.yaml", "--store", "option.db")[0] == 0
    assert (folder / "option.db").exists()


def test_agent_option_keeps_run_file_settings(folder: Path) -> None:
    (folder / "run.yaml").write_text(
        "data: cases.jsonl\nmetrics: [exact_match]\nagent: {target: nowhere.py:x, timeout_s: 7}\n",
        encoding="utf-8",
    )
    code, out = invoke("run", "run.yaml", "--agent", "agent.py:answer", "--store", "s.db")
    assert code == 0, out
    with RunStore("s.db") as store:
        config = store.list_runs()[0].config
    assert config["agent"]["timeout_s"] == 7
    assert config["agent"]["target"] == f"{folder / 'agent.py'}:answer"  # absolute: resumable from anywhere


def test_resume_refuses_options_it_cannot_apply(folder: Path) -> None:
    assert invoke("run", "--data", "cases.jsonl", "-m", "exact_match", "--store", "s.db")[0] == 0
    code, out = invoke("run", "--resume", "latest", "--store", "s.db", "--name", "x", "--tag", "a=b")
    assert code == 2 and "--name, --tag cannot change them" in out
    code, out = invoke("run", "--data", "cases.jsonl", "-m", "exact_match", "--retry-errors")
    assert code == 2 and "goes with --resume" in out


def test_retry_errors_calls_the_agent_again_on_failed_cases(folder: Path) -> None:
    code, out = invoke(
        "run", "--data", "cases.jsonl", "--agent", "agent.py:answer", "-m", "exact_match", "--store", "s.db"
    )
    assert code == 0, out
    with RunStore("s.db") as store:
        run = store.list_runs()[0]
        failed = store.load_outputs(run.id)["c2"].agent_run
        assert failed.failed and failed.error == "TimeoutError: upstream EHR timed out"
    (folder / "recovered").touch()  # the upstream system is back
    code, out = invoke("run", "--resume", run.id, "--store", "s.db", "--retry-errors")
    assert code == 0, out
    with RunStore("s.db") as store:
        outputs = store.load_outputs(run.id)
        assert not outputs["c2"].agent_run.failed
        scores = {(r.case_id, r.metric): r.score for r in store.load_results(run.id)}
    assert scores[("c2", "exact_match")].value == 1.0 and scores[("c2", "failure")].value == 0.0
    assert len(scores) == 9


def test_columns_kept_as_metadata_are_shown(folder: Path) -> None:
    (folder / "typo.jsonl").write_text(
        json.dumps({"id": "a", "response": "K 4.1", "referenc": "K 4.1", "ward": "renal"}) + "\n",
        encoding="utf-8",
    )
    code, out = invoke("run", "--data", "typo.jsonl", "-m", "token_f1", "--store", "s.db")
    assert code == 0
    assert "columns kept as metadata (not case fields): referenc, ward" in out
    assert "which metric 'token_f1' requires" in out
