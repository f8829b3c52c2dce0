"""Clicking through the viewer as a reviewer does: runs → run → case → back; two runs → compare
→ a regressed case side by side."""

from __future__ import annotations

import re
from typing import Any

from tests.browser.helpers import Fixture, expect, open_page, shot


def test_runs_to_run_to_case_and_back(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["quickstart"]
    open_page(page, viewer, "/")
    page.locator(f"#runs-table tr[data-run-id='{run}'] a.run-link").click()
    expect(page).to_have_url(re.compile(rf"/runs/{run}$"))
    expect(page.get_by_role("heading", name="Run quickstart")).to_be_visible()
    page.locator("#cases-table a.case-link", has_text="tool-006").click()
    expect(page).to_have_url(re.compile(rf"/runs/{run}/cases/tool-006$"))
    expect(page.get_by_text("Mrs. Mensah reports more breathlessness").first).to_be_visible()
    page.go_back()
    expect(page.get_by_role("heading", name="Run quickstart")).to_be_visible()
    expect(page.locator("#cases-table tbody tr")).to_have_count(25)
    page.go_back()
    expect(page.get_by_role("heading", name="Runs", exact=True)).to_be_visible()
    # the breadcrumb leads back too
    page.locator(f"#runs-table tr[data-run-id='{run}'] a.run-link").click()
    page.locator("nav.breadcrumbs").get_by_role("link", name="Runs").click()
    expect(page.get_by_role("heading", name="Runs", exact=True)).to_be_visible()


def test_select_two_runs_compare_and_open_a_regressed_case(page: Any, viewer: Fixture) -> None:
    a, b = viewer.runs["prior_auth"], viewer.runs["prior_auth_regressed"]
    open_page(page, viewer, "/")
    page.locator(f"#runs-table tr[data-run-id='{b}'] input[type=checkbox]").check()
    page.locator(f"#runs-table tr[data-run-id='{a}'] input[type=checkbox]").check()
    page.locator("#compare-button").click()
    expect(page.get_by_role("heading", name="Compare prior_auth → prior_auth")).to_be_visible()
    # the older run is the baseline A
    expect(page.locator(".compare-sides")).to_contain_text(f"A baseline {a}")
    expect(page.locator(".compare-sides")).to_contain_text(f"B candidate {b}")
    table = page.locator("#compare-table")
    expect(table.locator("tr[data-metric='FieldExact'] .verdict")).to_have_text("regressed")
    expect(table.locator("tr[data-metric='FieldFuzzy'] .verdict")).to_have_text("regressed")
    expect(table.locator("tr[data-metric='FieldExact'] td.delta")).to_have_text("-0.167")
    expect(page.locator("#compare-plot svg")).to_be_visible()
    # FieldFuzzy (0-100) and the times (seconds) get panels of their own, not the 0-1 scores' axis
    expect(page.locator("#compare-plot svg text.metric", has_text="FieldFuzzy")).to_have_count(0)
    expect(page.locator("#compare-plot-other svg text.metric", has_text="FieldFuzzy")).to_have_count(1)
    expect(page.locator("#compare-plot-seconds svg text.metric", has_text="TimeToDecision")).to_have_count(1)
    # every metric of the table has an interval (the suite's 9), so each is plotted once, in
    # the colour of the table's verdict
    expect(table.locator("tbody tr")).to_have_count(9)
    for row in table.locator("tbody tr").all():
        metric = row.get_attribute("data-metric")
        verdict = row.locator(".verdict").inner_text().replace(" ", "-")
        label = page.locator(
            "figure.plot svg text.metric", has_text=re.compile(rf"^{re.escape(metric or '')}\b")
        )
        expect(label).to_have_count(1)
        assert f"row-{verdict}" in (label.first.get_attribute("class") or ""), (metric, verdict)
    # Decision: the regressed suite turns two approvals... into wrong decisions on 003-b and 004-b
    decision = page.locator("#changes-Decision")
    expect(decision.get_by_role("heading", name="Decision: 2 worse, 0 better")).to_be_visible()
    regressed = decision.locator("table.regressed-cases a.compare-case-link")
    expect(regressed).to_have_text(["003-b", "004-b"])
    shot(page, "compare", doc="viewer-compare.png")

    regressed.first.click()
    expect(page.get_by_role("heading", name="Case 003-b: A vs B")).to_be_visible()
    row = page.locator("#compare-case-table tr[data-metric='Decision'] td")
    expect(row).to_have_text(["1.000", "0.000", "-1.000"])
    expect(page.locator("#side-by-side .side-col")).to_have_count(2)
    # a suite case: each run's checked fields as rows, the regressed output visible as text
    decision_a = page.locator("#a-suite-checks tr", has_text="decision").first
    decision_b = page.locator("#b-suite-checks tr", has_text="decision").first
    expect(decision_a.locator("td:visible")).to_have_text(["decision", "denied", "denied"])
    expect(decision_b.locator("td:visible")).to_have_text(["decision", "denied", "approved"])
    shot(page, "compare-case")
    page.locator("nav.breadcrumbs").get_by_role("link", name="Compare").click()
    expect(page.locator("#compare-table")).to_be_visible()
