"""Reading YAML with locations, includes and environment variables."""

from __future__ import annotations

from pathlib import Path

from clineval.suites.source import Location, load_document, mask


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_values_remember_their_lines(tmp_path: Path) -> None:
    file = write(tmp_path, "a.yaml", "top:\n  list:\n    - one\n    - key: 2\n  other: x\n")
    doc = load_document(file)
    assert doc.problems == []
    assert doc.data == {"top": {"list": ["one", {"key": 2}], "other": "x"}}
    assert doc.where(("top", "list", 1, "key")) == Location(str(file), 4)
    assert doc.where(("top", "other")) == Location(str(file), 5)
    # a path that does not exist reports its nearest ancestor's line
    assert doc.where(("top", "list", 1, "missing")) == Location(str(file), 4)


def test_environment_variables_resolve_and_are_kept_as_written(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        "a.yaml",
        'key: "${API_KEY}"\nurl: "${BASE:-http://localhost:8000}"\nliteral: "$${NOT_A_VAR}"\n',
    )
    doc = load_document(file, env={"API_KEY": "sk-very-secret"})
    assert doc.data == {"key": "sk-very-secret", "url": "http://localhost:8000", "literal": "${NOT_A_VAR}"}
    assert doc.raw["key"] == "${API_KEY}"
    assert doc.secrets == {"sk-very-secret"}
    assert mask("401: bad key sk-very-secret", doc.secrets) == "401: bad key ***"


def test_missing_environment_variable_is_a_located_problem(tmp_path: Path) -> None:
    file = write(tmp_path, "a.yaml", "a: 1\nb: ${NOPE}\n")
    doc = load_document(file, env={})
    assert [str(p) for p in doc.problems] == [
        f"{file}:2: b: environment variable NOPE is not set (write ${{NOPE:-default}} for a default)"
    ]


def test_include_merges_files_and_the_including_file_wins(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "s:\n  pipeline:\n    class: a:B\n    mode: fast\n  cases: [c1]\n")
    file = write(tmp_path, "main.yaml", "include: base.yaml\ns:\n  pipeline:\n    mode: slow\n")
    doc = load_document(file)
    assert doc.problems == []
    assert doc.data == {"s": {"pipeline": {"class": "a:B", "mode": "slow"}, "cases": ["c1"]}}
    assert doc.where(("s", "pipeline", "mode")) == Location(str(file), 4)
    assert doc.where(("s", "pipeline", "class")) == Location(str(tmp_path / "base.yaml"), 3)
    assert len(doc.files) == 2


def test_include_tag_reads_text_and_yaml(tmp_path: Path) -> None:
    write(tmp_path, "policy.md", "# Policy\nAge 6 or older.\n")
    write(tmp_path, "part.yaml", "x: 1\ny: [2, 3]\n")
    file = write(tmp_path, "main.yaml", "policy: !include policy.md\npart: !include part.yaml\n")
    doc = load_document(file)
    assert doc.problems == []
    assert doc.data == {"policy": "# Policy\nAge 6 or older.\n", "part": {"x": 1, "y": [2, 3]}}
    assert doc.where(("part", "y")) == Location(str(tmp_path / "part.yaml"), 2)


def test_include_problems(tmp_path: Path) -> None:
    write(tmp_path, "loop.yaml", "include: main.yaml\n")
    file = write(tmp_path, "main.yaml", "include: [loop.yaml]\nv: !include absent.txt\n")
    doc = load_document(file)
    messages = [str(p) for p in doc.problems]
    assert any("files include each other" in m for m in messages)
    assert any(m.startswith(f"{file}:2: v: !include: file not found") for m in messages)


def test_duplicate_keys_and_unsafe_tags_are_problems(tmp_path: Path) -> None:
    file = write(tmp_path, "a.yaml", "a: 1\nb: 2\na: 3\nc: !!python/object:os.system 'ls'\n")
    doc = load_document(file)
    messages = [str(p) for p in doc.problems]
    assert f"{file}:3: a: duplicate key (first defined at line 1)" in messages
    assert any(m.startswith(f"{file}:4: c: unsupported YAML tag") for m in messages)


def test_syntax_error_has_a_line(tmp_path: Path) -> None:
    file = write(tmp_path, "a.yaml", "a: [1, 2\nb: 3\n")
    doc = load_document(file)
    assert len(doc.problems) == 1
    assert doc.problems[0].location is not None and doc.problems[0].location.line >= 2
    assert "not valid YAML" in doc.problems[0].message
