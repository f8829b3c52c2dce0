"""The viewer read as a clinician's worksheet, in a real browser, on the session's store.

The prior-authorization suite run and its regressed variant: the regressed suite approves
003-b and 004-b, which the suite expects denied, and writes dates as MM/DD/YYYY.
Wrong decisions highlighted, pass/fail and 0/1 metrics coloured, the compare-case page's
word-level diff aligned by field and criterion with the scores first, the case table's
columns chosen with the case column pinned, and the HTML report's passing cases folded.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.browser.helpers import Fixture, clineval_bin, expect, open_page, shot

FAIL_BG = "rgb(251, 233, 231)"  # --fail-bg
PASS_BG = "rgb(228, 244, 234)"  # --pass-bg
_BG = "e => getComputedStyle(e).backgroundColor"


def test_wrong_decisions_are_highlighted_and_pass_fail_metrics_coloured(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["prior_auth_regressed"]
    open_page(page, viewer, f"/runs/{run}")
    expect(page.locator("#suite-wrong-count")).to_contain_text("2 of 10 cases answered wrong")
    wrong = page.locator("#suite-table tr.row-wrong")
    assert wrong.evaluate_all("rows => rows.map(r => r.dataset.caseId)") == ["003-b", "004-b"]
    cell = wrong.first.locator("td.cell-wrong")
    expect(cell).to_have_text("approved")  # the 'actual' column; 'expected' says denied
    assert cell.evaluate(_BG) == FAIL_BG
    ok = page.locator("#suite-table tr[data-case-id='003-a'] td.cell-wrong")
    expect(ok).to_have_count(0)
    # the case table: Decision (pass/fail) and UnmetCriteria (0/1, no label) coloured both ways
    row = page.locator("#cases-table tr[data-case-id='003-b']")
    decision = row.locator("td[data-column='m-1']")
    expect(decision).to_have_text("0.000")
    assert decision.get_attribute("data-verdict") == "fail" and decision.evaluate(_BG) == FAIL_BG
    unmet = row.locator("td[data-column='m-2']")
    assert unmet.get_attribute("data-verdict") == "fail"
    passing = page.locator("#cases-table tr[data-case-id='003-a'] td[data-column='m-1']")
    assert passing.get_attribute("data-verdict") == "pass" and passing.evaluate(_BG) == PASS_BG
    assert (
        page.locator("#cases-table tr[data-case-id='003-a'] td[data-column='m-2']").evaluate(_BG) == PASS_BG
    )
    shot(page, "suite-wrong-decisions", doc="viewer-suite-wrong.png", element=page.locator("#suite"))


def test_compare_case_diffs_a_and_b_by_field_and_criterion(page: Any, viewer: Fixture) -> None:
    a, b = viewer.runs["prior_auth"], viewer.runs["prior_auth_regressed"]
    open_page(page, viewer, f"/compare/case?a={a}&b={b}&case=003-b")
    scores, differences = page.locator("#scores-ab"), page.locator("#differences")
    assert scores.bounding_box()["y"] < differences.bounding_box()["y"]  # the scores first
    expect(scores.locator("tr[data-metric='Decision'] td")).to_have_text(["1.000", "0.000", "-1.000"])
    decision = page.locator("#diff-table tr[data-field='decision']")
    expect(decision.locator("td.expected")).to_have_text("denied")
    expect(decision.locator("td.diff-a del.diff-del")).to_have_text("denied")
    expect(decision.locator("td.diff-b ins.diff-ins")).to_have_text("approved")
    born = page.locator("#diff-table tr[data-field='patient_information.date_of_birth']")
    expect(born.locator("del")).to_have_text("1978-11-30")
    expect(born.locator("ins")).to_have_text("11/30/1978")
    # B left out the 'Prior therapy' criterion: its rows say so, and the criteria after it stay aligned
    missing = page.locator("#diff-table tr[data-field='criteria[Prior therapy].assessment']")
    expect(missing.locator("td.diff-a")).to_have_text("not met")
    expect(missing.locator("td.diff-b")).to_have_text("(not in B)")
    prescriber = page.locator("#diff-table tr[data-field='criteria[Prescriber].assessment']")
    expect(prescriber).to_have_class("same")  # met in both: aligned by name, not by position
    expect(prescriber).to_be_hidden()
    page.locator("#diff-show-same").check()
    expect(prescriber).to_be_visible()
    page.locator("#diff-show-same").uncheck()
    shot(page, "compare-case-diff", doc="viewer-compare-case.png", element=differences)


def test_choose_columns_with_the_case_column_pinned(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["prior_auth_regressed"]
    page.set_viewport_size({"width": 900, "height": 900})
    open_page(page, viewer, f"/runs/{run}#cases")
    table = page.locator("#cases-table")
    case_cell = table.locator("tr[data-case-id='003-b'] td.pin-2")
    wrap = page.locator(".cases-wrap")
    x = case_cell.bounding_box()["x"]
    assert wrap.evaluate("e => e.scrollWidth > e.clientWidth")  # wide: it scrolls sideways
    wrap.evaluate("e => { e.scrollLeft = 600; }")
    page.wait_for_timeout(50)
    assert abs(case_cell.bounding_box()["x"] - x) < 1  # the case column stays
    expect(case_cell).to_be_visible()
    wrap.evaluate("e => { e.scrollLeft = 0; }")
    page.locator("#columns-chooser summary").click()
    page.locator("#columns-chooser input[data-column='response']").uncheck()
    page.locator("#columns-chooser input[data-column='m-5']").uncheck()  # RationaleFaithfulness
    expect(table.locator("th[data-column='response']")).to_be_hidden()
    expect(table.locator("td[data-column='m-5']").first).to_be_hidden()
    page.reload()  # the choice is kept
    expect(table.locator("th[data-column='response']")).to_be_hidden()
    expect(table.locator("th[data-column='m-1']")).to_be_visible()
    shot(page, "cases-columns", doc="viewer-columns.png", full_page=False)
    page.locator("#columns-chooser summary").click()
    page.locator("#columns-chooser [data-columns=all]").click()
    expect(table.locator("th[data-column='response']")).to_be_visible()


def _report_height(page: Any, viewer: Fixture, run: str, out: Path) -> tuple[int, int, int]:
    done = subprocess.run(
        [clineval_bin(), "report", run, "--store", str(viewer.store), "-o", str(out)],
        cwd=viewer.workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    page.goto(out.as_uri())
    folded = page.locator("section.case-evidence details.case-fold:not([open])").count()
    opened = page.locator("section.case-evidence details.case-fold[open]").count()
    return int(page.evaluate("document.documentElement.scrollHeight")), folded, opened


def test_report_folds_passing_cases(page: Any, viewer: Fixture, tmp_path: Path) -> None:
    # every case of the prior-authorization suite passes its pass/fail metrics: all ten folded
    height, folded, opened = _report_height(page, viewer, viewer.runs["prior_auth"], tmp_path / "pa.html")
    assert (folded, opened) == (10, 0)
    assert height < 12_000, height  # 41,955 px with every case open
    expect(page.locator("details.case-fold.passing")).to_have_count(10)
    page.locator("section.case-evidence[data-case-id='003-b'] details.case-fold > summary").click()
    expect(page.locator("section.case-evidence[data-case-id='003-b'] .case-texts")).to_be_visible()
    # the regressed one fails a pass/fail metric in every case: the five worst open, five folded
    height, folded, opened = _report_height(
        page, viewer, viewer.runs["prior_auth_regressed"], tmp_path / "regressed.html"
    )
    assert (folded, opened) == (5, 5)
    shot(page, "report-folded", full_page=False)
