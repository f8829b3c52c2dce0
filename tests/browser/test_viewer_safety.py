"""Markup from a case, an agent or a run's name renders as text; the pages stay on 127.0.0.1.

The `page` fixture fails any test whose tab opened a dialog (an `alert(1)` that ran) or
requested a host other than 127.0.0.1; these tests also look for the injected elements.
"""

from __future__ import annotations

from typing import Any

from tests.browser.helpers import IMG_XSS, SCRIPT_XSS, Fixture, Watch, expect, open_page, shot


def _no_injected_elements(page: Any) -> None:
    expect(page.locator("img[src=x]")).to_have_count(0)
    expect(page.locator("img[onerror]")).to_have_count(0)
    scripts = page.locator("script").evaluate_all("els => els.map(e => e.textContent)")
    assert not [s for s in scripts if "alert(1)" in s], "a <script> from the data is in the page"


def test_markup_in_run_names_and_tags_is_text_in_the_runs_list(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, "/")
    table = page.locator("#runs-table")
    expect(table.get_by_text(f"markup {SCRIPT_XSS}", exact=True)).to_be_visible()
    expect(table.get_by_text(f"markup {IMG_XSS}", exact=True)).to_be_visible()
    expect(table.get_by_text(f"note={SCRIPT_XSS}", exact=True)).to_be_visible()
    _no_injected_elements(page)


def test_script_input_renders_as_text(page: Any, viewer: Fixture, watch: Watch) -> None:
    run = viewer.runs["xss_script"]
    open_page(page, viewer, f"/runs/{run}")
    expect(page.get_by_role("heading", name=f"Run markup {SCRIPT_XSS}")).to_be_visible()
    expect(page.locator("#cases-table td.preview").first).to_have_text(SCRIPT_XSS)
    _no_injected_elements(page)
    page.locator("#cases-table a.case-link", has_text="xss-script").click()
    expect(page.get_by_text(SCRIPT_XSS, exact=True).first).to_be_visible()
    expect(page.get_by_text(f"The answer repeats the input: {SCRIPT_XSS}").first).to_be_visible()
    # ... and in a metric's evidence (exact_match's details: the normalised texts)
    details = page.locator("#metric-exact_match")
    expect(details.get_by_text(f"the answer repeats the input: {SCRIPT_XSS}", exact=True)).to_be_visible()
    _no_injected_elements(page)
    shot(page, "case-xss-script")
    assert not watch.dialogs


def test_img_onerror_input_renders_as_text(page: Any, viewer: Fixture, watch: Watch) -> None:
    run = viewer.runs["xss_img"]
    open_page(page, viewer, f"/runs/{run}")
    expect(page.get_by_role("heading", name=f"Run markup {IMG_XSS}")).to_be_visible()
    expect(page.locator("#cases-table td.preview").first).to_have_text(IMG_XSS)
    _no_injected_elements(page)
    open_page(page, viewer, f"/runs/{run}/cases/xss-img")
    expect(page.get_by_text(IMG_XSS, exact=True).first).to_be_visible()
    _no_injected_elements(page)
    shot(page, "case-xss-img")
    assert not watch.dialogs


def test_pages_load_only_from_the_viewer(page: Any, viewer: Fixture, watch: Watch) -> None:
    """Every request of the main pages goes to 127.0.0.1 (the fixture aborts and records others)."""
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    qs = viewer.runs["quickstart"]
    for path in ("/", f"/runs/{qs}", f"/runs/{qs}/cases/sum-001"):
        open_page(page, viewer, path)
        page.wait_for_load_state("networkidle")
    assert any(url.endswith("/static/viewer.css") for url in requested), requested
    assert all(url.startswith(viewer.url.rstrip("/") + "/") for url in requested), requested
    assert not watch.foreign


def test_unknown_run_and_case_are_a_clear_not_found(page: Any, viewer: Fixture) -> None:
    response = page.goto(viewer.url.rstrip("/") + "/runs/no-such-run")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    response = page.goto(viewer.url.rstrip("/") + f"/runs/{viewer.runs['quickstart']}/cases/no-such-case")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
