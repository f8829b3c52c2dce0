"""The viewer's Traffic page in headless Chromium: a small store of scored traffic (two days,
two agents, tests/results/traffic_store.py), its daily means, the plots, and a worst
conversation's link to its case page."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from tests.browser.helpers import Fixture, expect, open_page, shot, start_viewer
from tests.results.traffic_store import build_traffic_store


@pytest.fixture(scope="module")
def traffic_viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    workdir = tmp_path_factory.mktemp("traffic-viewer")
    fx = Fixture(store=workdir / "store.db", workdir=workdir)
    fx.runs = build_traffic_store(fx.store)
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


def test_traffic_page_means_plots_and_worst_conversations(page: Any, traffic_viewer: Fixture) -> None:
    open_page(page, traffic_viewer, "/")
    page.locator("#traffic-link a").click()
    expect(page).to_have_url(traffic_viewer.url.rstrip("/") + "/traffic")
    expect(page.locator("h1")).to_have_text("Traffic")
    day1 = page.locator('#trends-table tr[data-period="2026-11-27"][data-agent="all"]')
    expect(day1.locator("td").nth(2)).to_have_text("3")
    expect(day1.locator("td.mean")).to_contain_text("0.667")
    pharmacy2 = page.locator('#trends-table tr[data-period="2026-11-28"][data-agent="Pharmacy"]')
    expect(pharmacy2.locator("td.mean")).to_contain_text("0.000")
    expect(pharmacy2.locator("td").nth(2)).to_have_text("2")
    # one plot for all agents and one per agent, each a mean per day
    expect(page.locator('section.trend[data-metric="exact_match"] svg')).to_have_count(3)
    expect(page.locator("section.trend svg title").first).to_have_text("exact_match: all agents")
    shot(page, "traffic", doc="traffic.png")
    # the worst conversation of day 1 opens its case page
    worst = page.locator('#worst-table tr[data-period="2026-11-27"] a.worst-link').first
    expect(worst).to_have_text("d1-b")
    worst.click()
    expect(page).to_have_url(
        traffic_viewer.url.rstrip("/") + f"/runs/{traffic_viewer.runs['traffic']}/cases/d1-b"
    )
    expect(page.locator("main")).to_contain_text("Question d1-b")
    # by hour
    open_page(page, traffic_viewer, "/traffic")
    page.locator("#by-switch").click()
    expect(page.locator('#trends-table tr[data-period="2026-11-27 14:00"][data-agent="all"]')).to_have_count(
        1
    )
