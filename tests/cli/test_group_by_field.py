"""A ``--group-by`` / ``group_by:`` field that no case has is said, not shown silently as
one "(missing)" group; a field the cases have groups them as before (through the real CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.clirun import clineval

CASES = (
    '{"id": "a", "input": "q1", "response": "x", "reference": "x", "specialty": "cardiology"}\n'
    '{"id": "b", "input": "q2", "response": "y", "reference": "z", "specialty": "oncology"}\n'
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cases.jsonl").write_text(CASES)
    return tmp_path


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def test_a_group_field_no_case_has_is_named_with_the_fields_there_are(folder: Path) -> None:
    (folder / "run.yaml").write_text("data: cases.jsonl\nmetrics: [exact_match]\ngroup_by: specality\n")
    ran = clineval("run", "run.yaml", "--store", "s.db", "-q", cwd=folder)
    assert ran.returncode == 0, ran.stderr
    warning = (
        "warning: no case has the metadata field 'specality', so every case is in (missing) "
        "(columns kept as metadata: specialty)"
    )
    assert warning in _lines(ran.stdout)
    shown = clineval("show", "latest", "--group-by", "specialty", "--store", "s.db", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    assert not any(line.startswith("warning") for line in _lines(shown.stdout))
    # exact_match: a scores 1 (x == x), b scores 0 (y != z): one group each
    rows = [line for line in _lines(shown.stdout) if line.startswith("│ exact_match │")]
    assert [row.split("│")[2].strip() for row in rows[-2:]] == ["cardiology", "oncology"]
    assert [row.split("│")[4].strip() for row in rows[-2:]] == ["1.000", "0.000"]
