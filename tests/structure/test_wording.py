"""Docs and code name the systems and papers they follow, never internal source codes.

A user has never seen the numbered source documents the project was built from, so a
sentence like "as in seed 002" tells them nothing: the docs and the code name the source
instead ("the AutoAuth evaluation framework", "RadA-BenchPlat", ...; see
docs/references.md). The word *seed* keeps its other meaning, the random seed ("seed 0",
``--seed``, ``seed=42``), which none of the patterns below matches.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Where user-facing text lives: the docs, the package (code, prompts, templates, data),
#: the README, examples, benchmarks, validation and the tests themselves.
SCANNED = ("docs", "src", "README.md", "examples", "benchmarks", "validation", "tests")
SUFFIXES = {
    ".py",
    ".md",
    ".yaml",
    ".yml",
    ".json",
    ".jsonl",
    ".txt",
    ".html",
    ".j2",
    ".toml",
    ".csv",
    ".js",
    ".css",
}

#: "seed 000", "seed-002", "seeds 001 and 003", "seed_004"; a path into a seeds folder;
#: "the seed document/paper/system/...".
FORBIDDEN = re.compile(
    r"\bseeds?[ _-]*0\d\d\b"
    r"|\bseeds/"
    r"|\bseed (?:documents?|papers?|systems?|sources?|tables?|fidelity)\b",
    re.IGNORECASE,
)


def offending_lines(text: str) -> list[tuple[int, str]]:
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if FORBIDDEN.search(line)]


def _files() -> list[Path]:
    found: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(p for p in sorted(path.rglob("*")) if p.is_file() and p.suffix in SUFFIXES)
    return [p for p in found if "__pycache__" not in p.parts]


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("as the seed 002 schema says", True),
        ("Suites (seed-002)", True),
        ("seeds 001 and 003 define", True),
        ("SEED_004 metrics", True),
        ("read ../shared/seeds/004.txt", True),
        ("the seed document leaves it open", True),
        ("the seed paper's table", True),
        # the random seed
        ("2,000 resamples, seed 0", False),
        ("seeds 1, 2 and 3 give", False),
        ("--seed 42", False),
        ("seed=0", False),
        ("the same seed always gives the same records", False),
        ("a seeded random generator", False),
        ("seed 100 draws", False),
    ],
)
def test_pattern(text: str, flagged: bool) -> None:
    assert bool(offending_lines(text)) is flagged


def test_docs_and_code_name_sources_not_seed_codes() -> None:
    files = _files()
    assert any(p.name == "references.md" for p in files)  # the scan reaches the docs
    problems = [
        f"{path.relative_to(ROOT)}:{n}: {line}"
        for path in files
        if path != Path(__file__).resolve()
        for n, line in offending_lines(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert problems == [], "name the system or paper (see docs/references.md) instead of:\n" + "\n".join(
        problems
    )
