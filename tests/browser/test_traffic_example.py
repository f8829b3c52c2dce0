"""The Traffic page of examples/traffic's store in headless Chromium: the example's traffic
generated, imported and scored as its README says, the page's means by agent and the worst
conversations, and the screenshot in docs/traces.md (docs/images/traffic-example.png)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.browser.helpers import Fixture, expect, open_page, shot, start_viewer
from tests.clirun import clineval

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "traffic"


def _run(cwd: Path, *args: str) -> None:
    proc = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def example_viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    workdir = tmp_path_factory.mktemp("traffic-example")
    _run(workdir, str(EXAMPLE / "generate.py"), "-n", "12", "--file", "traffic.jsonl")
    metrics = ("-m", "conversational_faithfulness", "-m", "latency", "-m", "failure")
    for args in (
        ("traces", "import", "traffic.jsonl"),
        ("traces", "score", "--since", "1h", "--idle", "0", *metrics, "-q"),
    ):
        proc = clineval(*args, cwd=workdir)
        assert proc.returncode == 0, proc.stderr
    fx = Fixture(store=workdir / ".clineval" / "clineval.db", workdir=workdir)
    proc = start_viewer(fx)
    try:
        yield fx
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_traffic_page_of_the_example(page: Any, example_viewer: Fixture) -> None:
    open_page(page, example_viewer, "/traffic")
    expect(page.locator("h1")).to_have_text("Traffic")
    rows = page.locator("#trends-table tr[data-agent]")
    expect(rows).to_have_count(3)  # one day: all, Labs, Pharmacy
    labs = page.locator('#trends-table tr[data-agent="Labs"]')
    pharmacy = page.locator('#trends-table tr[data-agent="Pharmacy"]')
    expect(labs.locator("td").nth(2)).to_have_text("6")
    expect(pharmacy.locator("td").nth(2)).to_have_text("6")
    # the wrong HbA1c (Labs) and the missed interaction (Pharmacy) are the day's worst
    worst = page.locator("#worst-table a.worst-link")
    expect(worst.first).to_have_text("traffic-0003")
    shot(page, "traffic-example", doc="traffic-example.png", full_page=False)
