"""A run that an agent took down in-process is resumed with the agent isolated
(``clineval run --resume RUN --isolate-agent``): the case that ended the process fails with
its reason, the others are scored, the run completes, and the stored configuration says
the rest ran isolated. Through the real CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.clirun import clineval
from tests.faults.test_agent_isolation import _assert_clean, _outcome, _run, _workspace


def test_a_run_ended_by_os_exit_is_resumed_with_the_agent_isolated(tmp_path: Path) -> None:
    folder = _workspace(tmp_path)
    args = ("--data", "cases.jsonl", "-m", "exact_match", "--agent", "agents.py:exits", "--concurrency", "1")
    crashed = _run(folder, *args)
    assert crashed.returncode == 3, crashed.stderr  # os._exit(3) on q3 ended clineval itself
    assert _outcome(folder)[0] == ["running"]
    resumed = clineval("run", "--resume", "latest", "--isolate-agent", "--store", "s.db", "-q", cwd=folder)
    assert resumed.returncode == 0, resumed.stderr
    _assert_clean(resumed.stderr)
    statuses, runs, scores = _outcome(folder)
    assert statuses == ["completed"]
    assert runs["c03"]["failed"] and runs["c03"]["error"] == "the agent's worker process died (exit code 3)"
    assert scores == {"c00": 1.0, "c01": 1.0, "c02": 1.0, "c03": None, "c04": 1.0, "c05": 1.0}
    with sqlite3.connect(folder / "s.db") as db:
        (record,) = db.execute("SELECT record FROM runs").fetchone()
    assert json.loads(record)["config"]["agent"]["isolate"] is True


def test_resume_refuses_other_agent_settings_and_names_the_one_it_takes(tmp_path: Path) -> None:
    folder = _workspace(tmp_path, n=2)
    done = _run(folder, "--data", "cases.jsonl", "-m", "exact_match", "--agent", "agents.py:exits")
    assert done.returncode == 0, done.stderr
    refused = clineval("run", "--resume", "latest", "--concurrency", "3", "--store", "s.db", cwd=folder)
    assert (refused.returncode, refused.stderr) == (
        2,
        "error: --resume continues a run with its own data, agent, metrics and tags; --concurrency cannot "
        "change them (to score a stored run with other metrics use 'clineval score'; --isolate-agent may be "
        "added)\n",
    )


def test_a_run_without_an_agent_has_nothing_to_isolate(tmp_path: Path) -> None:
    folder = _workspace(tmp_path, n=2)
    (folder / "answered.jsonl").write_text('{"id": "a", "input": "q", "response": "x", "reference": "x"}\n')
    done = _run(folder, "--data", "answered.jsonl", "-m", "exact_match")
    assert done.returncode == 0, done.stderr
    again = clineval("run", "--resume", "latest", "--isolate-agent", "--store", "s.db", cwd=folder)
    assert again.returncode == 2
    assert again.stderr.startswith("error: run ") and again.stderr.endswith(" has no agent to isolate\n")
