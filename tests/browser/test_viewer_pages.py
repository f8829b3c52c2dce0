"""`clineval view` in a real browser: the runs list and the run pages of every kind of run.

Assertions are on what a person sees (visible text, rows, links), never on pixels.
"""

from __future__ import annotations

import re
from typing import Any

from tests.browser.helpers import Fixture, expect, open_page, shot


def _case_ids(page: Any) -> list[str]:
    return [str(v) for v in page.locator("#cases-table tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.caseId)"
    )]  # fmt: skip


# --- runs --------------------------------------------------------------------------------


def test_runs_list_shows_every_run_newest_first(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, "/")
    expect(page.get_by_role("heading", name="Runs", exact=True)).to_be_visible()
    rows = page.locator("#runs-table tbody tr")
    expect(rows).to_have_count(len(viewer.runs))
    for name in ("quickstart", "patient_qa", "prior_auth", "tumor-board", "radbench greedy"):
        expect(page.locator("#runs-table").get_by_text(name, exact=True).first).to_be_visible()
    created = rows.locator("td.nowrap").all_inner_texts()  # the Created column
    assert len(created) == len(viewer.runs) and created == sorted(created, reverse=True), created
    expect(page.locator("#store-path")).to_have_text(str(viewer.store))
    shot(page, "runs", doc="viewer-runs.png")


def test_runs_list_filters_by_name_tag_and_metric(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, "/")
    page.locator("#runs-filters input[name=name]").fill("prior_auth")
    page.locator("#runs-filters button[type=submit]").click()
    expect(page.locator("#runs-table tbody tr")).to_have_count(2)
    expect(page.locator("#runs-table tbody tr").first).to_contain_text(viewer.runs["prior_auth_regressed"])
    open_page(page, viewer, "/?tag=example%3Dprior_auth")
    expect(page.locator("#runs-table tbody tr")).to_have_count(2)
    page.locator("#runs-filters input[name=tag]").fill("")
    page.locator("#runs-filters select[name=metric]").select_option("radbench")
    page.locator("#runs-filters button[type=submit]").click()
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    expect(page.locator("#runs-table tbody tr")).to_contain_text("radbench greedy")
    page.locator("#runs-filters select[name=metric]").select_option("")
    page.locator("#runs-filters input[name=name]").fill("no run has this name")
    page.locator("#runs-filters button[type=submit]").click()
    expect(page.locator("#no-runs")).to_have_text("No run matches the filters.")


def test_runs_table_fits_1280_px_with_judge_names(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, "/")
    wrap = page.locator("#runs-table").locator("xpath=..")
    widths = wrap.evaluate("w => [w.scrollWidth, w.clientWidth]")
    assert widths[0] <= widths[1], f"the runs table needs a horizontal scroll: {widths}"
    row = page.locator(f"#runs-table tr[data-run-id='{viewer.runs['quickstart']}']")
    expect(row.locator("td.judge")).to_have_text("offline")  # the judge's name, as `clineval runs`
    metrics = row.locator("td.metrics")
    expect(metrics).to_contain_text("more")  # a long metric list is cut, whole in the tooltip
    assert "trajectory_recall" in (metrics.get_attribute("title") or "")
    expect(row.locator("td.tags")).to_contain_text("example=quickstart")
    box = row.locator("td.tags .tag").bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1280, box  # on screen, not scrolled off


# --- run pages ----------------------------------------------------------------------------


def test_quickstart_run_page(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["quickstart"]
    open_page(page, viewer, f"/runs/{run}")
    expect(page.get_by_role("heading", name="Run quickstart")).to_be_visible()
    expect(page.locator("#provenance")).to_contain_text("cases.jsonl")
    expect(page.locator("#fingerprint")).to_be_visible()
    aggregates = page.locator("#aggregates-table")
    for metric in ("tbfact", "rouge", "token_f1", "trajectory_exact_match", "rubric"):
        expect(aggregates.get_by_role("rowheader", name=metric, exact=True)).to_be_visible()
    # rubric needs an LLM judge: its cases are unscored, with the reason
    expect(page.locator("#unscored-table")).to_contain_text("rubric")
    # 25 cases on one page (50 per page by default)
    expect(page.locator("#cases-count")).to_have_text("25 of 25 cases")
    expect(page.locator("#cases-table tbody tr")).to_have_count(25)
    expect(page.locator("#cases-table a.case-link", has_text="sum-001")).to_be_visible()
    shot(page, "run-quickstart", doc="viewer-run.png")


def test_run_page_by_group(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, f"/runs/{viewer.runs['quickstart']}")
    page.locator("#by-form select[name=by]").select_option("task")
    expect(page.locator("#by-title")).to_have_text("By task")
    by = page.locator("#by-table")
    expect(by.get_by_text("summary", exact=True).first).to_be_visible()
    expect(by.get_by_text("tool_use", exact=True).first).to_be_visible()


def test_distribution_plots_are_inline_svg(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, f"/runs/{viewer.runs['quickstart']}")
    figure = page.locator("#distributions figure.plot[data-metric=tbfact] svg")
    expect(figure).to_be_visible()
    expect(figure.locator("title").first).to_contain_text("tbfact")


def test_patient_qa_run_page(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, f"/runs/{viewer.runs['patient_qa']}")
    expect(page.get_by_role("heading", name="Run patient_qa")).to_be_visible()
    for metric in ("conversational_faithfulness", "refusal_accuracy", "context_relevance", "faithfulness"):
        expect(page.get_by_role("rowheader", name=metric, exact=True)).to_be_visible()
    expect(page.locator("#cases-table tbody tr")).to_have_count(10)
    shot(page, "run-patient-qa")


def test_suite_run_page_has_the_suite_case_table(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, f"/runs/{viewer.runs['prior_auth']}")
    expect(page.get_by_role("heading", name="Suite case table")).to_be_visible()
    table = page.locator("#suite-table")
    for column in ("case", "diagnosis", "medication", "expected"):
        expect(table.locator("thead th", has_text=re.compile(rf"^{column}$"))).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(10)
    expect(table.locator("tbody tr[data-case-id='003-b']")).to_contain_text("denied")
    shot(page, "run-suite")


def test_suite_run_page_plots_times_in_seconds_and_counts_cases(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, f"/runs/{viewer.runs['prior_auth']}")
    timed = page.locator("#distributions figure.plot[data-metric=TimeToDecision] svg")
    expect(timed.locator("text.x-label")).to_contain_text("seconds")
    fuzzy = page.locator("#distributions figure.plot[data-metric=FieldFuzzy] svg")
    expect(fuzzy.locator("text.x-label")).to_contain_text("value")
    expect(page.locator("#distributions figure.plot[data-metric=Decision] text.x-label")).to_contain_text(
        "score"
    )


def test_suite_case_page_shows_inputs_and_output_fields(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, f"/runs/{viewer.runs['prior_auth']}/cases/001-a")
    texts = page.locator("#texts")
    expect(texts).not_to_contain_text("not given")
    expect(page.locator("#suite-inputs dt", has_text="context.notes")).to_be_visible()
    expect(page.locator("#suite-inputs")).to_contain_text("Pediatric Gastroenterology Clinic")
    checks = page.locator("#suite-checks")
    expect(checks.locator("tr", has_text="patient_information.patient_name")).to_contain_text("Nora Example")
    output = page.locator("#suite-output")
    expect(
        output.locator("tr", has_text="clinical_information.treatment_request.medication")
    ).to_contain_text("adalimumab")
    expect(output).not_to_contain_text('{"patient_information"')  # no raw JSON dump
    # TBFact's explanation lists facts without a doubled period
    why = page.locator("#results-table tr[data-metric=RationaleFactuality] td.why")
    expect(why).to_contain_text("precision")
    assert ".." not in why.inner_text() and "…." not in why.inner_text()
    shot(page, "case-suite")


def test_tumor_board_run_page(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, f"/runs/{viewer.runs['tumor_board']}")
    expect(page.get_by_role("heading", name="Run tumor-board")).to_be_visible()
    for metric in ("agent_selection_accuracy", "tool_selection_accuracy", "history_tbfact"):
        expect(page.get_by_role("rowheader", name=metric, exact=True)).to_be_visible()
    expect(page.locator("#cases-table tbody tr")).to_have_count(4)
    expect(page.locator("#cases-table a.case-link", has_text="gbm-recurrence-review#trial1")).to_be_visible()
    shot(page, "run-tumor-board")


def test_radbench_run_page_has_the_benchmark_summary(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, f"/runs/{viewer.runs['radbench']}")
    expect(page.get_by_role("heading", name="Radiology benchmark summary")).to_be_visible()
    table = page.locator("#radbench-table")
    expect(table.locator("tbody tr")).to_have_count(2)  # baseline and insufficient_1
    expect(table.get_by_text("baseline", exact=True)).to_be_visible()
    expect(table.get_by_text("insufficient_1", exact=True)).to_be_visible()
    shot(page, "run-radbench")


# --- the case table: pagination, sorting, filters -----------------------------------------


def test_case_table_paginates_on_the_server(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["radbench"]  # 2 records x 11 tasks x 2 conditions = 44 cases
    open_page(page, viewer, f"/runs/{run}")
    expect(page.locator("#cases-count")).to_have_text("44 of 44 cases")
    page.locator("#cases-filters select[name=size]").select_option("20")
    page.locator("#cases-filters button[type=submit]").click()
    expect(page.locator("#cases-count")).to_have_text("44 of 44 cases · page 1 of 3")
    expect(page.locator("#cases-table tbody tr")).to_have_count(20)
    first_page = _case_ids(page)
    page.locator("nav.pager a.next").click()
    expect(page.locator("nav.pager .current")).to_have_text("page 2 of 3")
    expect(page.locator("#cases-table tbody tr")).to_have_count(20)
    second_page = _case_ids(page)
    assert not set(first_page) & set(second_page)
    page.locator("nav.pager a.last").click()
    expect(page.locator("nav.pager .current")).to_have_text("page 3 of 3")
    expect(page.locator("#cases-table tbody tr")).to_have_count(4)
    assert len(set(first_page + second_page + _case_ids(page))) == 44
    page.locator("nav.pager a.first").click()
    expect(page.locator("nav.pager .current")).to_have_text("page 1 of 3")
    assert _case_ids(page) == first_page
    shot(page, "run-radbench-page")


def test_case_table_sorts_by_case_and_by_metric(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["quickstart"]
    open_page(page, viewer, f"/runs/{run}")
    header = page.locator("#cases-table thead")
    header.get_by_role("link", name=re.compile(r"^Case")).click()
    expect(header.locator("a.sort.active")).to_contain_text("Case")
    ids = _case_ids(page)
    assert ids == sorted(ids)
    header.get_by_role("link", name=re.compile(r"^Case")).click()
    expect(header.locator("a.sort.active.desc")).to_contain_text("Case")
    assert _case_ids(page) == sorted(ids, reverse=True)

    header.get_by_role("link", name=re.compile(r"^token_f1")).click()
    expect(header.locator("a.sort.active")).to_contain_text("token_f1")
    texts = page.locator("#cases-table thead th").all_inner_texts()
    column = next(i for i, t in enumerate(texts) if t.startswith("token_f1")) + 1
    cells = page.locator(f"#cases-table tbody tr td:nth-child({column})").all_inner_texts()
    assert len(cells) == 25
    # scored values ascending; tool-014 (its agent call failed) is unscored and comes last
    values = [float(v) for v in cells if v != "unscored"]
    assert values == sorted(values) and len(values) == 24
    assert cells[-1] == "unscored"


def test_case_table_filters_by_score_range(page: Any, viewer: Fixture) -> None:
    open_page(page, viewer, f"/runs/{viewer.runs['quickstart']}")
    form = page.locator("#cases-filters")
    form.locator("select[name=metric]").select_option("trajectory_exact_match")
    form.locator("input[name=max]").fill("0.5")
    form.locator("button[type=submit]").click()
    # tool-002, -003, -005, -006, -011, -012 called the wrong tools (scored 0)
    expect(page.locator("#cases-table tbody tr")).to_have_count(6)
    expect(page.locator("#cases-count")).to_have_text("6 of 25 cases")
    assert _case_ids(page) == ["tool-002", "tool-003", "tool-005", "tool-006", "tool-011", "tool-012"]
    form = page.locator("#cases-filters")
    form.locator("input[name=max]").fill("")
    form.locator("select[name=status]").select_option("error")
    form.locator("button[type=submit]").click()
    # tool-014's agent call failed: its trajectory could not be scored
    assert _case_ids(page) == ["tool-014"]
