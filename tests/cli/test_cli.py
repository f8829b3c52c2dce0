"""The command line, end to end in subprocesses, including resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tests.clirun import COMMAND, clineval
from tests.waiting import wait_for

from clineval.testing import ScriptedServer

if TYPE_CHECKING:
    from tests.conftest import QuickstartRun

CASES = [
    {
        "id": f"n{i:02d}",
        "input": f"Summarise note {i}: 58-year-old woman, type 2 diabetes, HbA1c {7 + i / 10:.1f}%.",
        "response": f"58-year-old woman with type 2 diabetes, HbA1c {7 + i / 10:.1f}%.",
        "reference": f"58-year-old woman with type 2 diabetes; HbA1c {7 + i / 10:.1f}%.",
        "metadata": {"site": "north" if i % 3 else "south"},
    }
    for i in range(30)
]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "notes.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in CASES) + "\n", encoding="utf-8")
    return path


def test_run_show_runs_export(tmp_path: Path, data: Path) -> None:
    done = clineval(
        "run",
        "--data",
        str(data),
        "-m",
        "token_f1,rouge",
        "--group-by",
        "site",
        "--tag",
        "team=endo",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "token_f1" in done.stdout and "By site" in done.stdout and "Saved as run" in done.stdout
    assert (tmp_path / ".clineval" / "clineval.db").exists()

    out = tmp_path / "scores.jsonl"
    reads = (  # read-only (export writes its own file): two at a time
        ("runs",),
        ("show", "latest", "--cases"),
        ("export", "latest", "--format", "jsonl", "-o", str(out)),
        ("export", "latest", "--format", "csv", "-o", "-"),
    )
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs, show, exported, csv_out = pool.map(lambda args: clineval(*args, cwd=tmp_path), reads)
    assert runs.returncode == 0 and "completed" in runs.stdout and "team=endo" in runs.stdout

    assert show.returncode == 0 and "n29" in show.stdout and "fingerprint" in show.stdout

    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 30 and set(lines[0]["scores"]) == {"token_f1", "rouge"}
    assert lines[0]["scores"]["rouge"]["sub_scores"]["rouge1"] > 0.8

    header = csv_out.stdout.splitlines()[0].split(",")
    assert header[0] == "case_id" and "rouge.rougeLsum" in header and "metadata.site" in header


def test_metrics_catalogue(tmp_path: Path) -> None:
    done = clineval("metrics", cwd=tmp_path)
    assert done.returncode == 0
    for name in ("trajectory_single_tool_use", "rubric", "latency", "failure", "bleu"):
        assert name in done.stdout


def test_user_errors_are_one_clear_line(tmp_path: Path, data: Path) -> None:
    unknown = clineval("run", "--data", str(data), "-m", "rouge_x", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "unknown metric 'rouge_x'" in unknown.stderr and "Did you mean 'rouge'" in unknown.stderr
    assert "Traceback" not in unknown.stderr

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a", "response": "x"}\n{"id": "b", "trajectory": "not a list"}\n', encoding="utf-8"
    )
    row = clineval("run", "--data", str(bad), "-m", "exact_match", cwd=tmp_path)
    assert row.returncode == 2 and f"{bad}:2: field 'trajectory'" in row.stderr
    assert "Traceback" not in row.stderr

    missing = clineval("show", "nope", cwd=tmp_path)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr

    no_data = clineval("run", "-m", "rouge", cwd=tmp_path)
    assert no_data.returncode == 2 and "no dataset" in no_data.stderr

    run_file = tmp_path / "run.yaml"
    run_file.write_text("data: notes.jsonl\nmetrics: [rouge]\nconcurency: 4\n", encoding="utf-8")
    typo = clineval("run", str(run_file), cwd=tmp_path)
    assert typo.returncode == 2 and "run.yaml:3: concurency: unknown field" in typo.stderr


def test_missing_field_is_unscored_and_the_run_continues(tmp_path: Path) -> None:
    path = tmp_path / "partial.jsonl"
    path.write_text(
        json.dumps({"id": "a", "response": "x", "reference": "x"})
        + "\n"
        + json.dumps({"id": "b", "response": "y"})
        + "\n",
        encoding="utf-8",
    )
    done = clineval("run", "--data", str(path), "-m", "token_f1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 score(s) could not be computed" in done.stdout
    assert "which metric 'token_f1' requires" in done.stdout


def test_run_file_with_relative_paths_and_file_agent(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "cases.jsonl").write_text(
        json.dumps({"id": "a", "input": "K?", "reference": "K 4.1"}) + "\n", encoding="utf-8"
    )
    (folder / "my_agent.py").write_text("def answer(query):\n    return 'K 4.1'\n", encoding="utf-8")
    (folder / "run.yaml").write_text(
        "name: demo\ndata: cases.jsonl\nagent: my_agent.py:answer\nmetrics:\n  - exact_match\n",
        encoding="utf-8",
    )
    done = clineval("run", "suite/run.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "exact_match" in done.stdout and "latency" in done.stdout and "failure" in done.stdout


def _count(db: Path, metric: str | None = None) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
        if metric is None:
            return int(conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        return int(conn.execute("SELECT COUNT(*) FROM results WHERE metric = ?", (metric,)).fetchone()[0])


def _count_if_ready(db: Path, metric: str | None = None) -> int:
    """Results so far, or 0 while the store file or its tables do not exist yet."""
    if not db.exists():
        return 0
    try:
        return _count(db, metric)
    except sqlite3.OperationalError:
        return 0


def _status_if_ready(db: Path) -> str | None:
    """The run's status, or None while the store file, its tables or the run do not exist yet."""
    if not db.exists():
        return None
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            row = conn.execute("SELECT status FROM runs").fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else str(row[0])


def test_resume_after_sigkill_loses_and_repeats_nothing(
    tmp_path: Path, data: Path, llm_server: ScriptedServer
) -> None:
    script = {"default": {"json": {"explanation": "accurate", "rating": 4}, "delay_s": 0.1}}
    llm_server.set_script(script)
    db = tmp_path / "runs.db"
    args = [
        "run",
        "--data",
        str(data),
        "-m",
        "token_f1",
        "-m",
        "rubric",
        "--judge",
        f"openai:judge@{llm_server.base_url}",
        "--judge-concurrency",
        "2",
        "--no-cache",
        "--store",
        str(db),
        "-q",
    ]
    proc = subprocess.Popen(
        [*COMMAND, *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_for(lambda: _count_if_ready(db, "rubric") >= 8, "8 rubric results in the store", process=proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    before_rubric = _count(db, "rubric")
    before_total = _count(db)
    assert 8 <= before_rubric < 30
    with sqlite3.connect(db) as conn:
        kept = conn.execute("SELECT case_id, metric, created_at FROM results").fetchall()

    llm_server.reset()
    llm_server.set_script(script)
    resumed = clineval("run", "--resume", "latest", "--store", str(db), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT case_id, metric, created_at FROM results").fetchall()
        status = conn.execute("SELECT status FROM runs").fetchone()[0]
    assert len(rows) == 60 and len({(r[0], r[1]) for r in rows}) == 60  # nothing lost, nothing twice
    assert set(kept) <= set(rows)  # finished work was not redone
    assert llm_server.stats()["chat_requests"] == 30 - before_rubric  # only the missing cases were judged
    assert status == "completed" and before_total < 60


def test_ctrl_c_saves_work_and_resume_finishes(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(
        "\n".join(json.dumps({"id": f"c{i}", "input": f"q{i}", "reference": "r"}) for i in range(40)) + "\n",
        encoding="utf-8",
    )
    # The first 4 cases answer at once; the others wait for a gate file, so the run cannot
    # finish before the signal however busy the machine is.
    (tmp_path / "slow.py").write_text(
        "import pathlib, time\n"
        "GATE = pathlib.Path(__file__).with_name('go')\n"
        "def agent(q):\n"
        "    if int(q[1:]) >= 4:\n"
        "        deadline = time.time() + 60\n"
        "        while not GATE.exists() and time.time() < deadline:\n"
        "            time.sleep(0.02)\n"
        "    return 'r'\n"
    )
    db = tmp_path / "runs.db"
    proc = subprocess.Popen(
        [
            *COMMAND,
            "run",
            "--data",
            "cases.jsonl",
            "--agent",
            "slow.py:agent",
            "-m",
            "exact_match",
            "--concurrency",
            "2",
            "-q",
            "--store",
            str(db),
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell running the tests in the background starts them with SIGINT ignored, which
        # Python would then keep ignoring: give the child the default disposition back.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    wait_for(lambda: _count_if_ready(db) >= 4, "the first 4 cases' results in the store", process=proc)
    proc.send_signal(signal.SIGINT)
    # the run has stopped (what finished is saved, the run marked interrupted) while the other
    # agent calls still wait: only then may they end, so the run cannot complete before the signal
    wait_for(
        lambda: _status_if_ready(db) == "interrupted", "the run marked interrupted after Ctrl-C", process=proc
    )
    (tmp_path / "go").write_text("", encoding="utf-8")  # let the waiting agent threads end
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "clineval run --resume" in err and f"--store {db}" in err
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"
        saved = conn.execute("SELECT COUNT(*) FROM outputs").fetchone()[0]
    assert 2 <= saved < 40
    resumed = clineval("run", "--resume", "latest", "--store", str(db), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert _count(db) == 40 * 3


def test_quickstart_runs_offline_with_the_installed_command(quickstart_run: QuickstartRun) -> None:
    # the run itself is the session's (tests/conftest.py), which tests/viewer and tests/browser read
    done = quickstart_run.done
    assert done.returncode == 0, done.stderr
    assert "recommendation_matches" in done.stdout and "By task" in done.stdout
    # the offline judge is the default, and every run it scores says what it is
    assert "judge offline" in done.stdout and "approximat" in done.stdout
    with sqlite3.connect(quickstart_run.store) as conn:
        assert conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0] == 25
        assert (
            conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 25 * 13
        )  # 11 metrics in the run file + latency + failure
        tbfact_scored = conn.execute(
            "SELECT COUNT(*) FROM results WHERE metric = 'tbfact' AND status = 'scored'"
        ).fetchone()[0]
        assert tbfact_scored == 24  # every case but the one where the agent failed
        failed = conn.execute(
            "SELECT COUNT(*) FROM outputs WHERE json_extract(data, '$.agent_run.failed') = 1"
        ).fetchone()[0]
    assert failed == 1


def test_run_records_provenance(tmp_path: Path, data: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.org",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
        cwd=tmp_path,
        check=True,
    )
    done = clineval("run", "--data", str(data), "-m", "exact_match", "--store", "p.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from clineval.store import RunStore

    with RunStore(tmp_path / "p.db") as store:
        (run,) = store.list_runs()
    assert run.git is not None and len(run.git.commit) == 40
    assert {"clineval", "pydantic", "rouge-score"} <= set(run.packages)
    assert run.dataset.n_cases == 30 and len(run.dataset.fingerprint) == 16
    assert run.judge is not None and run.judge["name"] == "offline" and run.python and run.platform
    assert run.config["metrics"] == [{"name": "exact_match"}]


def test_score_rescores_a_stored_run_without_the_agent(tmp_path: Path, data: Path) -> None:
    first = clineval("run", "--data", str(data), "--metrics", "exact_match", "--store", "r.db", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = clineval(
        "score", "latest", "--metrics", "token_f1,rouge(rouge_type=rouge1)", "--store", "r.db", cwd=tmp_path
    )
    assert again.returncode == 0, again.stderr
    assert "token_f1" in again.stdout and "rouge" in again.stdout
    with sqlite3.connect(tmp_path / "r.db") as conn:
        records = [json.loads(r[0]) for r in conn.execute("SELECT record FROM runs ORDER BY created_at")]
    assert records[1]["source_run_id"] == records[0]["id"]
    assert records[1]["metrics"] == ["token_f1", "rouge"]
