"""A radiology benchmark episode's evidence explains its abbreviations (LD, OTS, ECR, PFSP,
THR, MHR, UAR, UGR ...) in a legend beside the scores, in headless Chromium."""

from __future__ import annotations

from typing import Any

from tests.browser.helpers import Fixture, expect, open_page, shot


def test_an_episode_page_has_the_abbreviations_legend(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, f"/runs/{viewer.runs['radbench']}")
    page.locator("#cases-table tbody tr a").first.click()
    legend = page.locator(".ev-abbreviations").first
    expect(legend).to_be_visible()
    expect(legend.locator("summary")).to_contain_text("Abbreviations (")
    terms = legend.locator("dt").all_inner_texts()
    assert {"OTS", "ECR", "THR"} <= set(terms), terms
    expect(legend.locator("dd").nth(terms.index("OTS"))).to_contain_text("optimal tool score")
    shot(page, "evidence-radbench-legend", doc="evidence-radbench-legend.png", element=legend)
