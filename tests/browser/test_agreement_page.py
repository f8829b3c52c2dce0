"""The Agreement page of a reviewed run in Chromium: the same figures as `clineval agreement
RUN --reviews --json -`, every disagreement a link to its case, and the page hidden in a blind
review. The store is the quickstart run with two reviewers' verdicts on six cases."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tests.browser.helpers import Fixture, clineval_bin, expect, shot, start_viewer
from tests.review.quickstart_reviews import reviewed_store

from clineval.review.render import fmt_figure, fmt_value

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.conftest import QuickstartRun


@pytest.fixture(scope="module")
def reviewed_viewer(
    quickstart_run: QuickstartRun, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Fixture, str]]:
    folder = tmp_path_factory.mktemp("agreement-page")
    store, run_id = reviewed_store(quickstart_run, folder)
    fx = Fixture(store=store, workdir=folder)
    proc = start_viewer(fx)
    try:
        yield fx, run_id
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _cli_report(store: Path, run_id: str) -> dict[str, Any]:
    done = subprocess.run(
        [clineval_bin(), "agreement", run_id, "--reviews", "--json", "-", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_the_page_shows_the_figures_the_command_prints(
    page: Any, reviewed_viewer: tuple[Fixture, str]
) -> None:
    fx, run_id = reviewed_viewer
    report = _cli_report(fx.store, run_id)
    page.goto(f"{fx.url}/runs/{run_id}")
    page.locator("#agreement-link").click()
    expect(page.locator("h1")).to_have_text("Agreement with reviewers")
    expect(page.locator("#agreement-lede")).to_contain_text("2 reviewers: ann, bob")
    from clineval.review.rows import Figure

    for row in report["rows"]:
        section = page.locator(f'section.agreement-row[data-key="{row["key"]}"]')
        expect(section).to_have_count(1)
        for stat in row["statistics"]:
            figure = Figure.model_validate(stat)
            line = section.locator("tr", has=page.locator(f'th:text-is("{figure.title}")'))
            expect(line.locator("td.stat-value")).to_have_text(fmt_figure(figure))
        for baseline in row["baselines"]:
            value = fmt_value(baseline["value"]["value"])
            diff = fmt_figure(Figure.model_validate(baseline["difference"]), sign=True)
            expect(section).to_contain_text(f"{value} · Δ {diff}")
    shot(page, "agreement-page", doc="review-agreement.png")


def test_every_disagreement_links_to_its_case(page: Any, reviewed_viewer: tuple[Fixture, str]) -> None:
    fx, run_id = reviewed_viewer
    report = _cli_report(fx.store, run_id)
    page.goto(f"{fx.url}/runs/{run_id}/agreement")
    links = page.locator("#disagreements-table tbody a")
    expect(links).to_have_count(len(report["disagreements"]))
    first = report["disagreements"][0]
    assert links.first.get_attribute("href") == first["link"]
    links.first.click()
    expect(page).to_have_url(re.compile(re.escape(f"/runs/{run_id}/cases/{first['case_id']}")))
    # the plain case page has no review panel: the link lands on the metric's evidence
    metric_box = page.locator(f"#metric-{first['metric']}")
    expect(metric_box).to_be_visible()
    assert page.evaluate("window.scrollY") > 0


def test_one_reviewer_at_a_time(page: Any, reviewed_viewer: tuple[Fixture, str]) -> None:
    fx, run_id = reviewed_viewer
    page.goto(f"{fx.url}/runs/{run_id}/agreement")
    page.locator("#reviewer-form select").select_option("bob")
    expect(page).to_have_url(re.compile(r"reviewer=bob"))
    expect(page.locator("#agreement-lede")).to_contain_text("1 reviewer (only bob): bob")
    expect(page.locator("body")).to_contain_text("no item has two reviewers yet")
