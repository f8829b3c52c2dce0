"""`clineval report RUN -o FILE.html` opened from disk with the network off, as a clinician
opens an e-mail attachment: the TBFact evidence is there, nothing is fetched, markup is text."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.browser.helpers import SCRIPT_XSS, Fixture, Watch, clineval_bin, expect, shot


def _report(viewer: Fixture, run: str, out: Path, *extra: str) -> Path:
    proc = subprocess.run(
        [clineval_bin(), "report", run, "--store", str(viewer.store), "-o", str(out), *extra],
        cwd=viewer.workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.exists()
    return out


@pytest.fixture
def offline(page: Any, browser_context: Any) -> Iterator[list[str]]:
    """The browser with the network off; yields the URL of every request the tab makes."""
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    browser_context.set_offline(True)
    try:
        yield requested
    finally:
        browser_context.set_offline(False)


def test_quickstart_report_shows_tbfact_evidence_offline(
    page: Any, viewer: Fixture, tmp_path: Path, offline: list[str], watch: Watch
) -> None:
    # every case's evidence (the quickstart has 25), so that sum-001 is in whatever its rank
    report = _report(viewer, viewer.runs["quickstart"], tmp_path / "quickstart report.html", "--worst", "25")
    page.goto(report.as_uri())
    expect(page.get_by_role("heading", name="Aggregates")).to_be_visible()
    expect(
        page.locator("#aggregates-table").get_by_role("rowheader", name="tbfact", exact=True)
    ).to_be_visible()
    expect(page.locator("#distributions svg").first).to_be_visible()
    case = page.locator("section.case-evidence[data-case-id='sum-001']")
    expect(case).to_be_visible()
    if case.locator("details.case-fold[open]").count() == 0:  # beyond the worst few: folded to its line
        case.locator("details.case-fold > summary").click()
    tbfact = case.locator(".ev-result[data-metric=tbfact]")
    precision = tbfact.locator(".ev-side[data-side=precision]")
    recall = tbfact.locator(".ev-side[data-side=recall]")
    expect(precision.locator("tr.ev-fact-row")).to_have_count(3)
    expect(recall.locator("tr.ev-fact-row")).to_have_count(8)
    # a report opens its fact tables on the facts short of entailed; the switch shows them all
    switch = precision.locator("input.ev-only-problems")
    expect(switch).to_be_checked()
    expect(precision.locator("tr.ev-fact-row.ev-v-entailed").first).to_be_hidden()
    switch.uncheck()
    expect(precision.locator("tr.ev-fact-row").first).to_be_visible()
    expect(precision.locator("tr.ev-fact-row").first).to_contain_text(
        "non-ST-elevation myocardial infarction"
    )
    expect(precision.locator("mark.ev-mark", has_text="troponin T peak 212 ng/L")).to_be_visible()
    # the inline script works from disk: hovering a fact lights up its evidence
    precision.locator("tr.ev-fact-row").first.hover()
    expect(precision.locator("mark.ev-mark.ev-active").first).to_be_visible()
    shot(page, "report", doc="report.png", full_page=False)  # the whole file is ~80,000 px tall
    # one file: nothing but the file itself was requested (no CSS, script, font or image)
    assert all(url.startswith("file://") or url.startswith("data:") for url in offline), offline
    assert not watch.errors, watch.errors


def test_report_of_a_markup_run_shows_it_as_text(
    page: Any, viewer: Fixture, tmp_path: Path, offline: list[str], watch: Watch
) -> None:
    report = _report(viewer, viewer.runs["xss_script"], tmp_path / "markup.html")
    page.goto(report.as_uri())
    expect(page.get_by_text(SCRIPT_XSS, exact=True).first).to_be_visible()
    expect(page.locator("img[src=x]")).to_have_count(0)
    scripts = page.locator("script").evaluate_all("els => els.map(e => e.textContent)")
    assert not [s for s in scripts if "alert(1)" in s]
    assert not watch.dialogs


def test_compare_report_shows_the_regressed_cases_offline(
    page: Any, viewer: Fixture, tmp_path: Path, offline: list[str], watch: Watch
) -> None:
    a, b = viewer.runs["prior_auth"], viewer.runs["prior_auth_regressed"]
    out = tmp_path / "compare.html"
    proc = subprocess.run(
        [clineval_bin(), "compare", a, b, "--store", str(viewer.store), "--html", str(out)],
        cwd=viewer.workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.exists(), proc.stdout + proc.stderr
    page.goto(out.as_uri())
    table = page.locator("#compare-table")
    expect(table).to_be_visible()
    expect(table.locator("tr", has_text="FieldExact").locator(".verdict")).to_have_text("regressed")
    worse = page.locator("#worse")
    case = worse.locator("section.case-evidence[data-case-id='003-b']")
    expect(case).to_be_visible()
    expect(case.locator(".changes-list")).to_contain_text("Decision")
    worse.get_by_role("button", name="Expand all").click()
    expect(case.get_by_text("expected denied, got approved").first).to_be_visible()
    shot(page, "compare-report", full_page=False)
    assert all(url.startswith("file://") or url.startswith("data:") for url in offline), offline
    assert not watch.errors, watch.errors
