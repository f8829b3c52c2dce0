"""The viewer's review mode in a real browser, started as a reviewer starts it
(`clineval view --review --reviewer NAME --store STORE --port 0 --no-open`), on copies of the
session's quickstart run with queues planned by `clineval review plan`.

A reviewer answers a whole queue with the keyboard alone; what the pages showed as saved is
in the store, also after the viewer is killed; two reviewers share a queue; a blind page holds
no score until the case is answered; writes without the token or from another origin are
refused; a comment full of markup stays text.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tests.browser.helpers import IMG_XSS, SCRIPT_XSS, Watch, clineval_bin, expect, shot

from clineval.model import ReviewRecord
from clineval.store.reviews import ReviewStore
from clineval.store.sqlite import RunStore
from clineval.viewer.app import fmt

if TYPE_CHECKING:
    from tests.conftest import QuickstartRun

_URL = re.compile(r"http://127\.0\.0\.1:(\d+)/review")
_QUEUE = re.compile(r"^queue (q-\S+)", re.M)


# --- stores, queues and viewers -------------------------------------------------------


@dataclass
class Viewer:
    """One `clineval view --review` process."""

    proc: subprocess.Popen[str]
    url: str
    log: list[str] = field(default_factory=list)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Desk:
    """A copy of the quickstart run, its queues, and the viewers started on it."""

    store: Path
    workdir: Path
    run: str
    queues: dict[str, str] = field(default_factory=dict)
    viewers: list[Viewer] = field(default_factory=list)

    def plan(self, **queues: list[str]) -> list[str]:
        """`clineval review plan RUN ARGS` for each queue (by role), all at once: their ids."""
        procs = {
            role: subprocess.Popen(
                [clineval_bin(), "review", "plan", self.run, *args, "--store", str(self.store)],
                cwd=self.workdir,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "COLUMNS": "200"},
            )
            for role, args in queues.items()
        }
        for role, proc in procs.items():
            out, err = proc.communicate(timeout=120)
            match = _QUEUE.search(out)
            assert proc.returncode == 0 and match, f"clineval review plan failed:\n{out}\n{err}"
            self.queues[role] = match.group(1)
        return [self.queues[role] for role in queues]

    def serve(self, reviewer: str, *args: str) -> Viewer:
        """`clineval view --review --reviewer NAME --store STORE --port 0 --no-open ARGS`."""
        return self.serve_all([reviewer, *args])[0]

    def serve_all(self, *commands: list[str]) -> list[Viewer]:
        """Start a viewer for each [reviewer, args...] at once; wait for each one's URL."""
        return [self._await(*started) for started in [self._start(c[0], *c[1:]) for c in commands]]

    def _start(self, reviewer: str, *args: str) -> tuple[str, subprocess.Popen[str], list[str], list[str]]:
        proc = subprocess.Popen(
            [clineval_bin(), "view", "--review", "--reviewer", reviewer, "--store", str(self.store),
             "--port", "0", "--no-open", *args],
            cwd=self.workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
        )  # fmt: skip
        log: list[str] = []
        found: list[str] = []

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                log.append(line)
                match = _URL.search(line)
                if match and not found:
                    found.append(f"http://127.0.0.1:{match.group(1)}")

        threading.Thread(target=read, daemon=True).start()
        return reviewer, proc, log, found

    def _await(self, reviewer: str, proc: subprocess.Popen[str], log: list[str], found: list[str]) -> Viewer:
        deadline = time.monotonic() + 60
        while not found and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        if not found:
            proc.kill()
            raise AssertionError("clineval view --review printed no URL:\n" + "".join(log)[-3000:])
        assert f"reviewing as {reviewer} " in log[0], log[0]
        viewer = Viewer(proc, found[0], log)
        self.viewers.append(viewer)
        return viewer

    def current(self, reviewer: str) -> list[ReviewRecord]:
        with RunStore(self.store, readonly=True) as runs:
            return ReviewStore(runs).current(self.run, reviewer=reviewer)

    def queue_cases(self, queue: str) -> list[str]:
        with RunStore(self.store, readonly=True) as runs:
            return ReviewStore(runs).get_queue(queue).case_ids


@pytest.fixture(scope="module")
def quickstart_copy(tmp_path_factory: pytest.TempPathFactory, quickstart_run: QuickstartRun) -> Any:
    """Make a fresh desk (a copy of the quickstart store) per call; stop its viewers at the end."""
    desks: list[Desk] = []

    def make(name: str) -> Desk:
        workdir = tmp_path_factory.mktemp(f"review-{name}")
        store = workdir / "store.db"
        quickstart_run.copy_into(store)
        desk = Desk(store=store, workdir=workdir, run=quickstart_run.run_id)
        desks.append(desk)
        return desk

    yield make
    viewers = [viewer for desk in desks for viewer in desk.viewers if viewer.proc.poll() is None]
    for viewer in viewers:
        viewer.proc.terminate()
    for viewer in viewers:
        viewer.stop()


@pytest.fixture(scope="module")
def desk(quickstart_copy: Any) -> Iterator[Desk]:
    """The module's main store: a queue of 10 cases for `ana` (blind), a second queue, and
    `ana`'s viewer."""
    desk: Desk = quickstart_copy("main")
    desk.plan(
        keyboard=["--n", "10", "--seed", "1"],
        stratified=["--n", "6", "--strategy", "stratified", "--seed", "2", "--reviewers-per-case", "2"],
    )
    desk.serve_all(["ana"], ["uma", "--unblind"])
    yield desk


def _spare(desk: Desk, n: int) -> str:
    """A summary case (they have facts) in no queue of the desk, the n-th."""
    taken = {c for q in desk.queues.values() for c in desk.queue_cases(q)}
    with RunStore(desk.store, readonly=True) as runs:
        ids = [c.id for c in runs.load_cases(desk.run)]
    spare = [c for c in ids if c.startswith("sum-") and c not in taken]
    return spare[n]


def _go(page: Any, url: str) -> None:
    response = page.goto(url)
    assert response is not None and response.status == 200, f"{url}: HTTP {response and response.status}"
    expect(page.locator("#review-panel .rq.is-focused")).to_have_count(1)  # the script has started


def _questions(page: Any) -> list[dict[str, Any]]:
    return list(
        page.locator("#review-panel .rq").evaluate_all(
            """els => els.map(e => ({item: e.dataset.item, scale: e.dataset.scale, kind: e.dataset.kind,
                required: e.hasAttribute('data-required'),
                options: Array.from(e.querySelectorAll('.rq-opt')).map(b => b.dataset.value)}))"""
        )
    )


def _focused(page: Any, item: str, scale: str) -> None:
    focused = page.locator("#review-panel .rq.is-focused")
    expect(focused).to_have_attribute("data-item", item)
    expect(focused).to_have_attribute("data-scale", scale)


def _answer_by_keyboard(page: Any, n: int, *, follow: bool = True) -> dict[tuple[str, str], str]:
    """Answer every required question of the open case with digit keys (the n-th case picks
    other digits than the one before); on the first fact also its importance, reached with ↑.
    ``follow``: check which question is highlighted after each key. What was answered, by
    (item, scale)."""
    questions = _questions(page)
    required = [q for q in questions if q["required"]]
    answers: dict[tuple[str, str], str] = {}
    _focused(page, required[0]["item"], required[0]["scale"])
    for k, q in enumerate(required):
        digit = 1 + (n + k) % len(q["options"])
        page.keyboard.press(str(digit))
        answers[(q["item"], q["scale"])] = q["options"][digit - 1]
        if follow and k + 1 < len(required):
            _focused(page, required[k + 1]["item"], required[k + 1]["scale"])
        if q["scale"] == "factuality":  # ↓ and ↑ move without answering
            page.keyboard.press("ArrowDown")
            if follow:
                _focused(page, "case", "comment")
            page.keyboard.press("ArrowUp")
            _focused(page, "case", "harm")
        if (
            q["item"].startswith("fact/")
            and k + 1 < len(required)
            and not any(key[1] == "importance" for key in answers)
        ):
            page.keyboard.press("ArrowUp")  # back to this fact's (optional) importance
            _focused(page, q["item"], "importance")
            page.keyboard.press("2")
            answers[(q["item"], "importance")] = "medium"
            _focused(page, required[k + 1]["item"], required[k + 1]["scale"])
    expect(page.locator("#rb-answered")).to_have_text(str(len(required)))
    expect(page.locator("#rb-required")).to_have_text(str(len(required)))
    expect(page.locator("#review-panel .rq[data-required] .rq-status")).to_have_text(
        ["saved"] * len(required)
    )
    return answers


def _selected(page: Any) -> dict[tuple[str, str], str]:
    """The answers the page shows selected, by (item, scale)."""
    rows = page.locator("#review-panel .rq-opt.is-selected").evaluate_all(
        "els => els.map(b => [b.closest('.rq').dataset.item, b.closest('.rq').dataset.scale,"
        " b.dataset.value])"
    )
    return {(item, scale): value for item, scale, value in rows}


def _values_and_explanations(desk: Desk, case_id: str) -> tuple[dict[str, str], list[str]]:
    """The case's metric values as the viewer prints them, and every explanation stored with them."""
    with RunStore(desk.store, readonly=True) as runs:
        results = runs.results_for(desk.run, [case_id])
    values = {r.metric: fmt(r.score.value) for r in results if r.score.value is not None}
    explanations = [r.score.explanation for r in results if r.score.explanation]
    for result in results:
        for row in result.score.details.get("facts", []) or []:
            if isinstance(row, dict) and row.get("explanation"):
                explanations.append(str(row["explanation"]))
    return values, explanations


# --- the tests ------------------------------------------------------------------------


def test_blind_case_page_shows_no_score_until_answered(page: Any, desk: Desk, quickstart_copy: Any) -> None:
    ana = desk.viewers[0]
    case_id = _spare(desk, 0)
    values, explanations = _values_and_explanations(desk, case_id)
    assert "tbfact" in values and len(explanations) > 5  # its facts' explanations
    _go(page, f"{ana.url}/runs/{desk.run}/cases/{case_id}")
    expect(page.locator("#reviewer")).to_have_text("reviewing as ana")
    expect(page.locator("#blind-note")).to_be_visible()
    expect(page.locator("#results-table")).to_have_count(0)
    expect(page.locator(".ev-result")).to_have_count(0)
    expect(page.locator(".rv-judge")).to_have_count(0)
    html, text = page.content(), page.locator("body").inner_text()
    for metric, value in values.items():
        assert value not in html and value not in text, f"{metric} {value} is in the blind page"
    for explanation in explanations:
        assert explanation not in html, f"{explanation!r} is in the blind page"
    assert "judge:" not in html and "support 0." not in html
    # the facts to review and what they are checked against are there
    facts = page.locator(".rv-kind-fact .rv-item")
    n_facts = facts.count()
    assert n_facts >= 5
    expect(page.locator(".rv-against h4").first).to_have_text("The reference")
    _scroll_to(page, "review-panel")
    shot(page, "review-case-blind", full_page=False)
    shot(page, "review-case-blind-full")

    _answer_by_keyboard(page, 0)
    # answered: the scores and the judge's verdict beside each fact appear
    expect(page.locator("#revealed #results-table")).to_be_visible()
    expect(page.locator("#results-table tr[data-metric=tbfact] td.num")).to_have_text(values["tbfact"])
    expect(page.locator("#revealed .ev-result[data-metric=tbfact]")).to_be_visible()
    expect(page.locator(".rv-kind-fact .rv-judge")).to_have_count(n_facts)
    expect(page.locator(".rv-kind-fact .rv-judge").first).to_contain_text("judge: ")
    expect(page.locator("#blind-note")).to_have_count(0)
    expect(page.locator("#blind-hint")).to_have_count(0)
    _scroll_to(page, "review-panel")
    shot(page, "review-case-revealed", full_page=False)
    _scroll_to(page, "revealed")
    shot(page, "review-case-revealed-scores", full_page=False)
    # ... and on reload
    _go(page, f"{ana.url}/runs/{desk.run}/cases/{case_id}")
    expect(page.locator("#results-table tr[data-metric=tbfact] td.num")).to_have_text(values["tbfact"])
    expect(page.locator(".rv-kind-fact .rv-judge")).to_have_count(n_facts)

    # the run page and a comparison hide every score while blind
    _go_plain(page, f"{ana.url}/runs/{desk.run}")
    expect(page.locator("#hidden-blind")).to_be_visible()
    expect(page.locator("#aggregates-table")).to_have_count(0)
    expect(page.locator("#distributions")).to_have_count(0)
    expect(page.locator("#cases-table thead th")).to_have_text([re.compile("#"), "Case", "Input", "Response"])
    _go_plain(page, f"{ana.url}/compare?a={desk.run}&b={desk.run}")
    expect(page.get_by_role("heading", name="Hidden while you review blind")).to_be_visible()

    # unblind: the scores and the judge's verdicts from the start
    other = _spare(desk, 1)
    uma = desk.viewers[1]
    _go(page, f"{uma.url}/runs/{desk.run}/cases/{other}")
    expect(page.locator("#results-table")).to_be_visible()
    expect(page.locator(".rv-kind-fact .rv-judge").first).to_contain_text("judge: ")
    expect(page.locator(".review-badge")).to_have_text("review, scores shown")
    _go_plain(page, f"{uma.url}/runs/{desk.run}")
    expect(page.locator("#aggregates-table")).to_be_visible()


def _scroll_to(page: Any, element_id: str) -> None:
    """The element at the top of the window, under the sticky bar."""
    page.evaluate(
        """id => { const bar = document.getElementById('review-bar').getBoundingClientRect().height;
            const top = document.getElementById(id).getBoundingClientRect().top + window.scrollY;
            window.scrollTo(0, top - bar - 12); }""",
        element_id,
    )


def _go_plain(page: Any, url: str) -> None:
    response = page.goto(url)
    assert response is not None and response.status == 200, url


def test_a_whole_queue_by_keyboard_is_all_in_the_store(page: Any, desk: Desk) -> None:
    ana = desk.viewers[0]
    queue = desk.queues["keyboard"]
    cases = desk.queue_cases(queue)
    _go_plain(page, f"{ana.url}/review")
    row = page.locator(f'#queues-table tr[data-queue-id="{queue}"]')
    expect(row.locator(".q-done")).to_have_text("0 done")
    expect(row.locator(".q-left")).to_have_text("10 left")
    shot(page, "review-queues-start")
    _go(page, f"{ana.url}/review/{queue}/next")
    expected: dict[tuple[str, str, str], str] = {}
    for n, case_id in enumerate(cases):
        expect(page.get_by_role("heading", name=f"Case {case_id}", exact=True)).to_be_visible()
        expect(page.locator("#rb-done")).to_have_text(str(n))
        expect(page.locator("#rb-left")).to_have_text(str(10 - n))
        if n == 3:  # the pictures in docs/viewer.md
            _scroll_to(page, "review-panel")
            shot(page, "review-queue-case-blind", doc="review-case-blind.png", full_page=False)
        answers = _answer_by_keyboard(page, n, follow=n < 2)
        expected.update({(case_id, item, scale): value for (item, scale), value in answers.items()})
        expect(page.locator("#rb-done")).to_have_text(str(n + 1))
        expect(page.locator("#revealed #results-table")).to_be_visible()  # blind: shown once answered
        if n == 3:
            _scroll_to(page, "review-panel")
            shot(page, "review-queue-case-revealed", doc="review-case-revealed.png", full_page=False)
        with page.expect_navigation():
            page.keyboard.press("j")
    expect(page.locator("#queue-done")).to_be_visible()
    expect(page.locator("#done-yours")).to_have_text("10 cases reviewed by you")
    expect(page.locator("#done-full")).to_contain_text("10 of 10 cases fully reviewed")
    facts = [key for key in expected if key[1].startswith("fact/") and key[2] == "verdict"]
    assert len(facts) >= 20
    stored = {(r.case_id, r.item, r.scale): r.verdict for r in desk.current("ana") if r.case_id in cases}
    assert stored == expected
    # what each verdict recorded of what was shown
    record = next(r for r in desk.current("ana") if r.case_id == cases[0] and r.item == facts[0][1])
    assert record.shown["blind"] is True and record.shown["revealed"] is False
    assert record.shown["queue"] == queue and record.queue_id == queue and record.shown["text"]
    _go_plain(page, f"{ana.url}/review")
    expect(row.locator(".q-done")).to_have_text("10 done")
    expect(row.locator(".q-full")).to_have_text("10 of 10")
    shot(page, "review-queues", doc="review-queues.png")


def test_nothing_saved_is_lost_when_the_viewer_is_killed(page: Any, quickstart_copy: Any) -> None:
    desk: Desk = quickstart_copy("kill")
    (queue,) = desk.plan(kill=["--n", "4", "--seed", "3"])
    cases = desk.queue_cases(queue)
    ben = desk.serve("ben")
    _go(page, f"{ben.url}/review/{queue}/next")
    answered = _answer_by_keyboard(page, 0, follow=False)
    with page.expect_navigation():
        page.keyboard.press("j")
    # the second case, half answered
    expect(page.get_by_role("heading", name=f"Case {cases[1]}", exact=True)).to_be_visible()
    half = [q for q in _questions(page) if q["required"]][:3]
    for _ in half:
        page.keyboard.press("1")
    expect(page.locator("#rb-answered")).to_have_text("3")
    statuses = page.locator("#review-panel .rq[data-required] .rq-status")
    for k in range(3):
        expect(statuses.nth(k)).to_have_text("saved")
    ben.proc.kill()  # SIGKILL: no shutdown of any kind
    ben.proc.wait(timeout=10)

    again = desk.serve("ben")
    _go(page, f"{again.url}/runs/{desk.run}/cases/{cases[1]}?queue={queue}")
    assert _selected(page) == {(q["item"], q["scale"]): q["options"][0] for q in half}
    expect(page.locator("#rb-answered")).to_have_text("3")
    _go(page, f"{again.url}/runs/{desk.run}/cases/{cases[0]}?queue={queue}")
    assert _selected(page) == answered
    # the queue resumes at the first unfinished case
    _go(page, f"{again.url}/review/{queue}/next")
    expect(page).to_have_url(re.compile(re.escape(f"/cases/{cases[1]}?queue={queue}") + "$"))
    expect(page.locator("#rb-done")).to_have_text("1")
    expect(page.locator("#rb-left")).to_have_text("3")


def test_two_reviewers_at_once_on_one_queue(browser_context: Any, quickstart_copy: Any, watch: Watch) -> None:
    desk: Desk = quickstart_copy("two")
    single, double = desk.plan(
        single=["--n", "4", "--seed", "4"], double=["--n", "4", "--seed", "5", "--reviewers-per-case", "2"]
    )
    carl, dana = desk.serve_all(["carl"], ["dana"])
    first, second = browser_context.new_page(), browser_context.new_page()

    def dialog(opened: Any) -> None:
        watch.dialogs.append(opened.message)
        opened.dismiss()

    try:
        for tab in (first, second):
            tab.on("dialog", dialog)
        # one reviewer per case: each gets a case of their own
        _go(first, f"{carl.url}/review/{single}/next")
        _go(second, f"{dana.url}/review/{single}/next")
        one, two = desk.queue_cases(single)[:2]
        expect(first.get_by_role("heading", name=f"Case {one}", exact=True)).to_be_visible()
        expect(second.get_by_role("heading", name=f"Case {two}", exact=True)).to_be_visible()
        expect(second.locator("#rb-left")).to_have_text("3")  # carl has one of the four
        _go(first, first.url)
        expect(first.locator("#rb-left")).to_have_text("3")
        # two reviewers per case: both get the same cases
        _go(first, f"{carl.url}/review/{double}/next")
        _go(second, f"{dana.url}/review/{double}/next")
        same = desk.queue_cases(double)[0]
        for tab in (first, second):
            expect(tab.get_by_role("heading", name=f"Case {same}", exact=True)).to_be_visible()
            expect(tab.locator("#rb-left")).to_have_text("4")
        # both answer at once, each through their own viewer, into the one store
        first.keyboard.press("1")
        second.keyboard.press("3")
        for tab in (first, second):
            expect(tab.locator('.rq[data-scale="factuality"] .rq-status')).to_have_text("saved")
    finally:
        first.close()
        second.close()
    assert not watch.dialogs
    assert [(r.case_id, r.scale, r.verdict) for r in desk.current("carl")] == [
        (same, "factuality", "correct")
    ]
    assert [(r.case_id, r.scale, r.verdict) for r in desk.current("dana")] == [
        (same, "factuality", "incorrect")
    ]


def test_writes_without_the_token_or_from_another_origin_are_refused(page: Any, desk: Desk) -> None:
    ana = desk.viewers[0]
    case_id = _spare(desk, 2)
    _go(page, f"{ana.url}/runs/{desk.run}/cases/{case_id}")
    token = page.locator('meta[name="clineval-token"]').get_attribute("content")
    assert token and len(token) >= 32
    body = {"run": desk.run, "case": case_id, "item": "case", "scale": "harm", "verdict": "major"}
    url = f"{ana.url}/api/review"
    json_type = {"Content-Type": "application/json"}
    without = page.request.post(url, data=json.dumps(body), headers=json_type)
    assert without.status == 403 and without.json() == {
        "error": "a write needs the session's token in X-Clineval-Token"
    }
    foreign = page.request.post(
        url,
        data=json.dumps(body),
        headers={**json_type, "X-Clineval-Token": token, "Origin": "http://evil.example"},
    )
    assert foreign.status == 403 and "another origin (http://evil.example)" in foreign.json()["error"]
    form = page.request.post(url, form=body, headers={"X-Clineval-Token": token})
    assert form.status == 415
    # a script of the page itself without the token
    status = page.evaluate(
        """([url, body]) => fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'},
            body: JSON.stringify(body)}).then(r => r.status)""",
        [url, body],
    )
    assert status == 403
    assert [r for r in desk.current("ana") if r.case_id == case_id] == []

    # a run being run refuses reviews: the question says why, and nothing is shown as saved
    with RunStore(desk.store) as runs:
        lease = runs.acquire_lease(desk.run)
        try:
            page.keyboard.press("2")
            status_line = page.locator('#review-panel .rq[data-scale="factuality"] .rq-status')
            expect(status_line).to_contain_text(f"not saved: run {desk.run} is being run by ")
            expect(page.locator('.rq[data-scale="factuality"] .rq-opt.is-selected')).to_have_count(0)
        finally:
            lease.release()
    page.locator('.rq[data-scale="factuality"] .rq-opt[data-value="partly"]').click()
    expect(page.locator('.rq[data-scale="factuality"] .rq-status')).to_have_text("saved")
    expect(page.locator('.rq[data-scale="factuality"] .rq-opt.is-selected')).to_have_text("2 partly correct")
    assert [(r.scale, r.verdict) for r in desk.current("ana") if r.case_id == case_id] == [
        ("factuality", "partly")
    ]
    # u takes it back
    page.keyboard.press("u")
    expect(page.locator('.rq[data-scale="factuality"] .rq-opt.is-selected')).to_have_count(0)
    expect(page.locator('.rq[data-scale="factuality"] .rq-status')).to_have_text("undone: no answer")
    assert [r for r in desk.current("ana") if r.case_id == case_id] == []


def test_a_comment_with_markup_stays_text(page: Any, desk: Desk, watch: Watch) -> None:
    ana = desk.viewers[0]
    case_id = _spare(desk, 3)
    comment = f"check the dose {SCRIPT_XSS} and {IMG_XSS} (jkuc1?)"
    _go(page, f"{ana.url}/runs/{desk.run}/cases/{case_id}")
    page.keyboard.press("c")
    box = page.locator("#review-panel textarea.rq-comment")
    expect(box).to_be_focused()
    page.keyboard.type(comment)  # j, k, u, c, 1 and ? are typed, not obeyed
    page.keyboard.press("Escape")  # leaves the box, which saves it
    expect(page.locator('.rq[data-scale="comment"] .rq-status')).to_have_text("saved")
    expect(page).to_have_url(re.compile(re.escape(f"/cases/{case_id}") + "$"))
    stored = [(r.scale, r.verdict, r.comment) for r in desk.current("ana") if r.case_id == case_id]
    assert stored == [("comment", None, comment)]
    _go(page, f"{ana.url}/runs/{desk.run}/cases/{case_id}")
    expect(page.locator("#review-panel textarea.rq-comment")).to_have_value(comment)
    expect(page.locator("img[src=x]")).to_have_count(0)
    expect(page.locator("img[onerror]")).to_have_count(0)
    scripts = page.locator("script").evaluate_all("els => els.map(e => e.textContent)")
    assert not [s for s in scripts if "alert(1)" in s]
    assert not watch.dialogs
