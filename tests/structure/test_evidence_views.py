"""Evidence views live beside their metrics; the viewer holds pages and shared widgets only.

Every built-in view is registered from a module outside :mod:`clineval.viewer`, and no
module of the viewer names a metric family: no view's name, no name of a metric of a
family with a view, no key that only one family's details carry (checked on the string
literals of ``src/clineval/viewer/*.py``, statically).
"""

from __future__ import annotations

import ast
from pathlib import Path

import clineval
from clineval.evidence.lookup import load_views
from clineval.evidence.registry import registered_views
from clineval.metrics.registry import catalogue

VIEWER = Path(clineval.__file__).resolve().parent / "viewer"

#: Keys that one family's details carry (TBFact, RAG, trajectory, conversation, suite, radiology).
FAMILY_KEYS = frozenset(
    {
        "facts",
        "direction",
        "statements",
        "sentences",
        "questions",
        "expectation",
        "refusal",
        "retrieval",
        "matched",
        "tool_name",
        "positions",
        "turns",
        "segments",
        "per_segment",
        "documents",
        "evaluations",
        "episode",
        "finished",
    }
)

#: The pages of run kinds (a suite's decisions, the radiology benchmark's summary) name their
#: kind: page code of the viewer's pages, not evidence. (file, literal) pairs.
PAGES_OF_RUN_KINDS = frozenset(
    {
        ("app.py", "evaluations"),
        ("app.py", "radbench"),
        ("data.py", "radbench"),
        ("report.py", "radbench"),
    }
)


def _family_names() -> set[str]:
    load_views()
    views = registered_views()
    names = {v.name for v in views} | {m for v in views for m in v.metrics}
    family_modules = ("clineval.metrics.factuality", "clineval.metrics.rag", "clineval.metrics.trajectory")
    for entry in catalogue():
        module = getattr(entry.factory, "__module__", "")
        if module.startswith(family_modules) or module.startswith("clineval.conversations"):
            names.add(entry.name)
    return names


def _literals(path: Path) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_every_built_in_view_lives_outside_the_viewer() -> None:
    load_views()
    views = registered_views()
    expected = {"tbfact", "faithfulness", "trajectory", "turns", "evaluations", "radbench"}
    assert expected <= {v.name for v in views}
    inside = [
        f"{v.name} ({v.render.__module__})"
        for v in views
        if v.render.__module__.startswith("clineval.viewer")
    ]
    assert inside == []


def test_no_viewer_module_names_a_metric_family() -> None:
    forbidden = _family_names() | FAMILY_KEYS
    assert {"tbfact", "faithfulness", "agent_selection", "trajectory_exact_match"} <= forbidden
    found = sorted(
        f"viewer/{path.name}:{line}: {text!r}"
        for path in sorted(VIEWER.glob("*.py"))
        for line, text in _literals(path)
        if text in forbidden and (path.name, text) not in PAGES_OF_RUN_KINDS
    )
    assert found == [], "family-specific code in the viewer: move it into the family's evidence view"


def test_the_check_finds_a_family_key(tmp_path: Path) -> None:
    module = tmp_path / "page.py"
    module.write_text('def f(d):\n    return d.get("statements")\n', encoding="utf-8")
    assert [(line, text) for line, text in _literals(module) if text in FAMILY_KEYS] == [(2, "statements")]
