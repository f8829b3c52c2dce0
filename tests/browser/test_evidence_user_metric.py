"""A metric written in a user's own file brings its evidence view to the viewer by registration alone.

The user's ``my_metrics.py`` registers a metric (``@metric``) and, beside it, its evidence
view (``@evidence_view``); ``clineval run -m my_metrics.py:dosage_check`` runs it; ``clineval
view``, started from another folder and told nothing of the file, draws the case page with
that view (the run's metric spec names the file, the viewer imports it).
"""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from tests.browser.helpers import Fixture, clineval_bin, expect, open_page, shot, start_viewer

MY_METRICS = '''
import re

from clineval import Score, metric
from clineval.evidence import EvidenceContext, Markup, evidence_view, h


@metric("dosage_check")
def dosage_check(response: str) -> Score:
    """1 when the response states a dose in mg."""
    found = re.search(r"\\d+ ?mg", response)
    return Score(value=float(bool(found)), details={"dose": found.group(0) if found else None})


@evidence_view(metrics=["dosage_check"], title="dosage check (my team)")
def dosage_view(ctx: EvidenceContext) -> Markup:
    dose = ctx.details.get("dose")
    return h("p", "Dose found: ", h("strong", dose or "none"), class_="dose-evidence")
'''

CASES = (
    '{"id": "c1", "input": "What dose?", "response": "Give 500 mg twice daily."}\n'
    '{"id": "c2", "input": "What dose?", "response": "Give it twice daily."}\n'
)


@pytest.fixture(scope="module")
def user_viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    project = tmp_path_factory.mktemp("user-metric")
    (project / "my_metrics.py").write_text(textwrap.dedent(MY_METRICS), encoding="utf-8")
    (project / "cases.jsonl").write_text(CASES, encoding="utf-8")
    store = project / "store.db"
    done = subprocess.run(
        [
            clineval_bin(),
            "run",
            "-d",
            "cases.jsonl",
            "-m",
            "my_metrics.py:dosage_check",
            "--store",
            str(store),
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    elsewhere = project / "elsewhere"  # the viewer is not started beside the metric's file
    elsewhere.mkdir()
    fx = Fixture(store=store, workdir=elsewhere)
    proc = start_viewer(fx)
    try:
        yield fx
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_user_metric_shows_its_own_evidence_view(page: Any, user_viewer: Fixture) -> None:
    open_page(page, user_viewer, "/runs/latest/cases/c1")
    block = page.locator("#metric-dosage_check")
    expect(block.locator("section.ev-fam-dosage-view")).to_be_visible()
    expect(block.locator(".ev-family")).to_have_text("dosage check (my team)")
    expect(block.locator("p.dose-evidence")).to_have_text("Dose found: 500 mg")
    shot(page, "evidence-user-metric", doc="evidence-user-metric.png", element=block)

    open_page(page, user_viewer, "/runs/latest/cases/c2")
    expect(page.locator("#metric-dosage_check p.dose-evidence")).to_have_text("Dose found: none")
