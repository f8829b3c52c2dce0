"""``clineval validate RUN_FILE`` checks what ``clineval run`` checks before it runs: the
dataset's file and format and a file agent's file, each problem located in the run file
(FILE:LINE and the field), through the real command."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.clirun import clineval


@pytest.mark.parametrize(
    ("run_file", "message"),
    [
        (
            "data: nofile.jsonl\nmetrics: [exact_match]\n",
            "error: r.yaml:1: data: dataset file not found: {folder}/nofile.jsonl",
        ),
        (
            "metrics: [exact_match]\ndata: cases.txt\n",
            "error: r.yaml:2: data: {folder}/cases.txt: unknown dataset format 'txt'; "
            "use .jsonl, .json or .csv",
        ),
        (
            "data: cases.jsonl\nmetrics: [exact_match]\nagent: agentx.py:run\n",
            "error: r.yaml:3: agent: agent 'agentx.py:run': file {folder}/agentx.py does not exist",
        ),
        (
            "data: cases.jsonl\nmetrics: [exact_match]\nagent: agentx.py\n",
            "error: r.yaml:3: agent: agent 'agentx.py': expected 'module.path:name' or 'file.py:name'",
        ),
    ],
    ids=["data-file-missing", "unknown-format", "agent-file-missing", "agent-without-name"],
)
def test_validate_locates_what_run_would_refuse(tmp_path: Path, run_file: str, message: str) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": "q", "reference": "x"}\n')
    (tmp_path / "cases.txt").write_text("q\n")
    (tmp_path / "r.yaml").write_text(run_file)
    checked = clineval("validate", "r.yaml", cwd=tmp_path)
    ran = clineval("run", "r.yaml", "--store", "s.db", "-q", cwd=tmp_path)
    expected = message.format(folder=tmp_path) + "\n"
    assert (checked.returncode, checked.stdout, checked.stderr) == (2, "", expected)
    assert (ran.returncode, ran.stderr) == (2, expected)  # the same words as the run itself
    assert not (tmp_path / "s.db").exists()


def test_validate_accepts_a_run_file_whose_data_and_agent_exist(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": "q", "reference": "x"}\n')
    (tmp_path / "agent.py").write_text("def run(question):\n    return 'x'\n")
    (tmp_path / "r.yaml").write_text("data: cases.jsonl\nmetrics: [exact_match]\nagent: agent.py:run\n")
    checked = clineval("validate", "r.yaml", cwd=tmp_path)
    expected = "ok: run file with 1 metrics; dataset: 1 case\n"
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, expected, "")


def test_validate_reads_the_dataset_as_the_run_would(tmp_path: Path) -> None:
    """A mapping from a column no line has is located in the run file; a bad row names the
    data file's line; a good file gives its number of cases."""
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "question": "q"}\n{"id": "b", "question": "r"}\n')
    (tmp_path / "bad.jsonl").write_text('{"id": "a", "input": "q"}\nnot json\n')
    (tmp_path / "typo.yaml").write_text(
        "data: cases.jsonl\nmetrics: [exact_match]\nmapping: {qestion: input}\n"
    )
    (tmp_path / "bad.yaml").write_text("data: bad.jsonl\nmetrics: [exact_match]\n")
    (tmp_path / "good.yaml").write_text(
        "data: cases.jsonl\nmetrics: [exact_match]\nmapping: {question: input}\n"
    )
    typo = clineval("validate", "typo.yaml", cwd=tmp_path)
    assert (typo.returncode, typo.stderr) == (
        2,
        f"error: typo.yaml:3: mapping: column mapping 'qestion' -> 'input': no line of "
        f"{tmp_path}/cases.jsonl has the column 'qestion' (its columns: id, question)\n",
    )
    bad = clineval("validate", "bad.yaml", cwd=tmp_path)
    assert (bad.returncode, bad.stderr) == (
        2,
        f"error: 1 bad row(s):\n{tmp_path}/bad.jsonl:2: not valid JSON (Expecting value at column 1)\n",
    )
    good = clineval("validate", "good.yaml", cwd=tmp_path)
    assert (good.returncode, good.stdout) == (0, "ok: run file with 1 metrics; dataset: 2 cases\n")


MAPPED_ROWS = (
    '{"id": "a", "question": "q1", "answer": "x", "gold": "x"}\n{"id": "b", "question": "q2", "gold": "z"}\n'
)


def test_the_run_file_mapping_is_located_and_nothing_is_stored(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(MAPPED_ROWS)
    (tmp_path / "run.yaml").write_text(
        "data: cases.jsonl\nmetrics: [exact_match]\nmapping:\n  question: input\n  golden: reference\n"
    )
    ran = clineval("run", "run.yaml", "--store", "s.db", "-q", cwd=tmp_path)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == (
        f"error: run.yaml:3: mapping: column mapping 'golden' -> 'reference': no line of "
        f"{tmp_path}/cases.jsonl has the column 'golden' (its columns: id, question, answer, gold)\n"
    )
    assert not (tmp_path / "s.db").exists()
