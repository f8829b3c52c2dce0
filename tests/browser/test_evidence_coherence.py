"""Evidence blocks say one thing, in headless Chromium: verdict words, quotation and value agree
with the score, and identical blocks are shown once.

A small store made as a user makes one (``clineval run`` with two metrics of the user's own
file whose details have the shape of TBFact's and of conversational faithfulness's, so
that those views draw them, and the five trajectory metrics on a case with two empty
trajectories). Screenshots go to docs/images/ (CLINEVAL_UPDATE_SCREENSHOTS=1).
"""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from tests.browser.helpers import Fixture, clineval_bin, expect, open_page, shot, start_viewer

SHAPED = '''
from clineval import Score, metric


@metric("facts_of_mine")
def facts_of_mine(response: str) -> Score:
    """Two response facts: one partly supported at support 0.97, one not supported."""
    facts = [
        {"fact": "Aspirin 75 mg daily.", "label": "partial", "reason": "missing", "support": 0.97,
         "direction": "precision", "evidence": "Aspirin daily"},
        {"fact": "Warfarin was started.", "label": "not_entailed", "reason": "missing", "support": 0.1,
         "direction": "precision", "evidence": "Heparin was stopped"},
    ]
    return Score(value=0.5, details={"facts": facts})


@metric("grounded_of_mine")
def grounded_of_mine(response: str) -> Score:
    """Two informative sentences, one supported, one partly supported at credit 1.0."""
    sentences = [
        {"sentence": "Aspirin is given daily.", "kind": "informative", "label": "entailed", "credit": 1.0},
        {"sentence": "The dose is 75 mg.", "kind": "informative", "label": "partial", "reason": "missing",
         "credit": 1.0},
    ]
    said = "1 of 2 informative sentence(s) grounded"
    return Score(value=1.0, explanation=said, details={"sentences": sentences})
'''

CASES = (
    '{"id": "c1", "input": "Plan?", "response": "Aspirin 75 mg daily.", '
    '"reference": "Aspirin daily. Heparin was stopped.", '
    '"contexts": ["Aspirin daily. Heparin was stopped."], '
    '"trajectory": [], "reference_trajectory": []}\n'
)
TRAJECTORY = [
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
]


@pytest.fixture(scope="module")
def coherence_viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    project = tmp_path_factory.mktemp("coherence")
    (project / "shaped.py").write_text(textwrap.dedent(SHAPED), encoding="utf-8")
    (project / "cases.jsonl").write_text(CASES, encoding="utf-8")
    store = project / "store.db"
    metrics = ["shaped.py:facts_of_mine", "shaped.py:grounded_of_mine", *TRAJECTORY]
    command = [clineval_bin(), "run", "-d", "cases.jsonl", "--store", str(store)]
    for name in metrics:
        command += ["-m", name]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    fx = Fixture(store=store, workdir=project)
    proc = start_viewer(fx)
    try:
        yield fx
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_verdict_words_quotation_and_value_agree(page: Any, coherence_viewer: Fixture) -> None:
    open_page(page, coherence_viewer, "/runs/latest/cases/c1")
    facts = page.locator("#metric-facts_of_mine")
    partly, refused = facts.locator("tr.ev-fact-row").nth(0), facts.locator("tr.ev-fact-row").nth(1)
    expect(partly.locator(".ev-verdict")).to_contain_text("partly")
    expect(partly.locator(".ev-reason")).to_have_text("part of it not in the reference")
    expect(partly.locator(".ev-support")).to_be_hidden()  # support 0.97 beside "partly": not shown
    expect(partly.locator(".ev-closest-label")).to_have_count(0)
    # a fact judged not entailed: its quotation is the nearest text, said to be so
    expect(refused.locator(".ev-evidence")).to_contain_text("closest, does not support")
    expect(refused.locator("q.ev-quote-closest")).to_have_text("Heparin was stopped")
    expect(refused.locator(".ev-support")).to_have_text("support 0.10")
    shot(page, "evidence-coherent-facts", doc="evidence-coherent-facts.png", element=facts)

    grounded = page.locator("#metric-grounded_of_mine")
    expect(grounded.locator(".ev-value")).to_have_text("1")
    expect(grounded.locator(".ev-credit")).to_contain_text(
        "value = credit 2 over 2 judged sentences (1 supported, 1 partly supported"
    )
    shot(page, "evidence-coherent-grounding", doc="evidence-coherent-grounding.png", element=grounded)


def test_identical_evidence_blocks_are_shown_once(page: Any, coherence_viewer: Fixture) -> None:
    open_page(page, coherence_viewer, "/runs/latest/cases/c1")
    empty = page.get_by_text("Both trajectories are empty.")
    expect(empty).to_have_count(5)  # in the page, for readers without JS
    visible = [i for i in range(5) if empty.nth(i).is_visible()]
    assert len(visible) == 1
    first = page.locator(f"#metric-{TRAJECTORY[0]}")
    expect(first.locator(".ev-times")).to_have_text("×5")
    expect(page.locator(f"#metric-{TRAJECTORY[1]} .ev-same")).to_contain_text(
        f"The same evidence as {TRAJECTORY[0]}"
    )
    blocks = first.locator("xpath=..")  # the metrics' evidence, one after another
    shot(page, "evidence-collapsed", doc="evidence-collapsed.png", element=blocks)
