"""Finding cases in a 200-case run in a real browser: full-text search, failures only, and a
case page whose previous / next (and j / k) keep the filter; a long message's "show all".

The run is made here through the public API (one store and one `clineval view` for this
module): 200 cases, of which the hand-placed ones below name a drug. The agent answers the
reference for every fourth case (exact_match 1) and something else for the others (0).
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.browser.helpers import Fixture, expect, open_page, shot, start_viewer

import clineval

N_CASES = 200
#: Cases whose input names warfarin; those with n % 4 == 0 pass exact_match (8, 88, 168), the others fail.
WARFARIN = (8, 47, 88, 127, 168)
APIXABAN_IN_RESPONSE = 123  # only the agent's answer names it
CLOPIDOGREL_IN_REFERENCE = 50  # only the reference names it
LONG_MESSAGE = 77  # a conversation with one very long message
LONG_TEXT = " ".join(f"Line {i}: the patient reports dizziness after the dose change." for i in range(80))


def _case(n: int) -> dict[str, object]:
    drug = " She takes warfarin 5 mg daily." if n in WARFARIN else ""
    question = f"Patient {n} asks about her blood pressure readings.{drug}"
    reference = f"Advice {n}: keep a diary of readings."
    if n == CLOPIDOGREL_IN_REFERENCE:
        reference += " Continue clopidogrel."
    if n == LONG_MESSAGE:
        return {
            "id": f"case-{n:03d}",
            "input": [
                {"role": "user", "content": LONG_TEXT},
                {"role": "assistant", "content": "Noted."},
                {"role": "user", "content": question},
            ],
            "reference": reference,
        }
    return {"id": f"case-{n:03d}", "input": question, "reference": reference}


def _agent(query: str) -> dict[str, object]:
    n = int(re.findall(r"Patient (\d+)", query)[-1])
    if n % 4 == 0:
        return {"response": f"Advice {n}: keep a diary of readings."}
    if n == APIXABAN_IN_RESPONSE:
        return {"response": "Switch to apixaban and recheck."}
    return {"response": f"Answer {n}."}


@pytest.fixture(scope="module")
def search_viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    workdir = tmp_path_factory.mktemp("search-store")
    store = workdir / "store.db"
    run = clineval.evaluate(
        [_case(n) for n in range(N_CASES)], ["exact_match"], agent=_agent, store=store, name="diary"
    ).run_id
    fx = Fixture(store=store, workdir=workdir, runs={"diary": run})
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


def _ids(page: Any) -> list[str]:
    return [str(x) for x in page.locator("#cases-table tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.caseId)"
    )]  # fmt: skip


def test_the_index_is_in_the_store_written_with_the_run(search_viewer: Fixture) -> None:
    with sqlite3.connect(search_viewer.store) as conn:
        ((docs,),) = conn.execute(
            "SELECT COUNT(*) FROM case_search_docs WHERE run_id = ?", (search_viewer.runs["diary"],)
        ).fetchall()
        hits = conn.execute(
            "SELECT d.case_id FROM case_search JOIN case_search_docs d ON d.id = case_search.rowid"
            " WHERE case_search MATCH 'apixaban'"
        ).fetchall()
    assert docs == N_CASES
    assert hits == [(f"case-{APIXABAN_IN_RESPONSE:03d}",)]  # the agent's response, indexed when saved


def test_full_text_search_finds_a_drug_in_input_response_or_reference(
    page: Any, search_viewer: Fixture
) -> None:
    run = search_viewer.runs["diary"]
    open_page(page, search_viewer, f"/runs/{run}")
    expect(page.locator("#cases-count")).to_contain_text(f"{N_CASES} of {N_CASES} cases")
    page.locator("#case-search").fill("Warfarin")  # any case; words, not the case id
    page.locator("#cases-filters button[type=submit]").click()
    expect(page.locator("#cases-count")).to_have_text(f"5 of {N_CASES} cases")
    assert _ids(page) == [f"case-{n:03d}" for n in WARFARIN]
    expect(page.locator("#cases-table mark.hit").first).to_have_text("warfarin")
    shot(page, "search-warfarin", doc="viewer-search.png", element=page.locator("#cases"))
    for word, n in (("apixaban", APIXABAN_IN_RESPONSE), ("clopidogrel", CLOPIDOGREL_IN_REFERENCE)):
        open_page(page, search_viewer, f"/runs/{run}?q={word}")
        assert _ids(page) == [f"case-{n:03d}"], word
    open_page(page, search_viewer, f"/runs/{run}?q=case-19")  # the case id still matches
    assert _ids(page) == [f"case-{n:03d}" for n in range(190, 200)]


def test_failures_only_and_next_previous_keep_the_filter(page: Any, search_viewer: Fixture) -> None:
    run = search_viewer.runs["diary"]
    open_page(page, search_viewer, f"/runs/{run}?failures=1")
    expect(page.locator("#cases-count")).to_contain_text(f"150 of {N_CASES} cases")  # 3 in 4 answer wrong
    open_page(page, search_viewer, f"/runs/{run}?q=warfarin")
    page.locator("#failures-only").check()
    page.locator("#cases-filters button[type=submit]").click()
    page.wait_for_url("**failures=1**")  # the filtered table, not the one before it (a loaded machine)
    expect(page.locator("#cases-count")).to_contain_text(f"2 of {N_CASES} cases")
    assert _ids(page) == ["case-047", "case-127"]
    expect(page.locator("#cases-table tr.row-wrong")).to_have_count(2)
    expect(page.locator("#cases-table td[data-verdict=fail]")).to_have_count(2)  # exact_match 0 in red
    page.locator("#cases-table a.case-link", has_text="case-047").click()
    expect(page.get_by_role("heading", name="Case case-047")).to_be_visible()
    expect(page.locator("#nav-filter")).to_contain_text("1 of 2 in the table's filter and sort")
    expect(page.locator("#nav-filter")).to_contain_text("failures only")
    page.wait_for_load_state("load")  # the keys' script is in place (a loaded machine is slow to run it)
    page.keyboard.press("j")
    expect(page.get_by_role("heading", name="Case case-127")).to_be_visible()
    assert "q=warfarin" in page.url and "failures=1" in page.url
    expect(page.locator("#case-nav a.next")).to_have_count(0)  # the last of the two
    page.wait_for_load_state("load")
    page.keyboard.press("k")
    expect(page.get_by_role("heading", name="Case case-047")).to_be_visible()
    page.locator("#case-nav a.all").click()
    assert _ids(page) == ["case-047", "case-127"]  # back to the same filtered table


def test_a_clipped_message_can_be_shown_whole(page: Any, search_viewer: Fixture) -> None:
    run = search_viewer.runs["diary"]
    open_page(page, search_viewer, f"/runs/{run}/cases/case-{LONG_MESSAGE:03d}")
    long_box = page.locator(".ev-text", has_text="Line 79:").first
    height = long_box.evaluate("e => e.clientHeight")
    assert long_box.evaluate("e => e.scrollHeight") > height + 100  # clipped
    button = page.locator("button.clip-toggle").first
    expect(button).to_contain_text("show all")
    button.click()
    expect(button).to_have_text("show less")
    assert long_box.evaluate("e => e.clientHeight") == long_box.evaluate("e => e.scrollHeight") > height
    shot(page, "case-show-all", element=long_box.locator("xpath=.."))


def test_a_run_added_later_is_searchable_without_restarting(
    page: Any, search_viewer: Fixture, tmp_path: Path
) -> None:
    later = clineval.evaluate(
        [{"id": "late-1", "input": "Does ibuprofen interact with lisinopril?", "reference": "Yes."}],
        ["exact_match"],
        store=search_viewer.store,
        name="later",
    ).run_id
    open_page(page, search_viewer, f"/runs/{later}?q=lisinopril")
    assert _ids(page) == ["late-1"]


@pytest.mark.slow
def test_search_among_10000_cases(tmp_path: Path) -> None:
    """The trip as reported: a drug name among 10,000 cases (about 0.3 s a page here)."""
    import time

    from clineval.viewer.data import CaseQuery, ViewerData

    cases = [
        {
            "id": f"c{n:05d}",
            "input": f"Patient {n} asks about blood pressure."
            + (" She takes warfarin." if n % 1000 == 7 else ""),
            "reference": f"Advice {n}.",
        }
        for n in range(10_000)
    ]
    run = clineval.evaluate(cases, ["exact_match"], store=tmp_path / "big.db", name="big").run_id
    data = ViewerData(tmp_path / "big.db")
    try:
        start = time.perf_counter()
        page = data.case_page(run, CaseQuery(q="warfarin"))
        elapsed = time.perf_counter() - start
        assert [row.case_id for row in page.rows] == [f"c{n:05d}" for n in range(7, 10_000, 1000)]
        assert elapsed < 3.0, elapsed
        view = data.case(run, "c05007", CaseQuery(q="warfarin"))
        assert (view.previous_id, view.next_id, view.position, view.total) == ("c04007", "c06007", 6, 10)
    finally:
        data.close()
