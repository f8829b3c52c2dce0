"""The viewer's review mode (clineval.viewer.review) through starlette's TestClient: who may
write, what a write must hold, what a blind reviewer can see, undo; and `clineval view
--review` through the real command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import clineval
from clineval.model import ReviewQueue
from clineval.store.reviews import ReviewStore
from clineval.store.sqlite import RunStore
from clineval.viewer.app import create_app
from clineval.viewer.review import TOKEN_HEADER, ReviewSettings

BASE = "http://127.0.0.1:8765"
_TEXTS = [
    {
        "input": "Summarise the tumour board note.",
        "response": "Stage IIIA adenocarcinoma; EGFR exon 19 deletion. Start osimertinib 80 mg daily.",
        "reference": "Stage IIIA lung adenocarcinoma with an EGFR exon 19 deletion. "
        "Plan: osimertinib 80 mg once daily.",
    },
    {
        "input": "Summarise the renal note.",
        "response": "Potassium 5.9 mmol/L; stop ramipril.",
        "reference": "Hyperkalaemia (potassium 5.9 mmol/L): ramipril was held.",
    },
]
#: Six cases, t1 t3 t5 of the first text, t2 t4 t6 of the second. A case's progress counts
#: every reviewer's verdicts on it, in any queue: a test that counts a queue's cases gets cases
#: of its own (Store.new_queue).
_CASES = [{"id": f"t{n}", **_TEXTS[(n - 1) % 2]} for n in range(1, 7)]
#: What the offline judge makes of them (checked in test_the_store_is_as_expected): case ->
#: the facts, in the panel's order, and the values as the viewer prints them.
FACTS = {
    "t1": [
        "fact/tbfact/precision/1",
        "fact/tbfact/precision/2",
        "fact/tbfact/precision/3",
        "fact/tbfact/recall/1",
        "fact/tbfact/recall/2",
    ],
    "t2": ["fact/tbfact/precision/1", "fact/tbfact/precision/2", "fact/tbfact/recall/1"],
}
VALUES = {"t1": ("0.857", "0.815"), "t2": ("0.667", "0.714")}
for _n in range(3, 7):
    FACTS[f"t{_n}"] = FACTS[f"t{2 - _n % 2}"]
    VALUES[f"t{_n}"] = VALUES[f"t{2 - _n % 2}"]


@dataclass(frozen=True)
class Store:
    path: Path
    run: str
    queue: str
    """A queue of both cases, one reviewer each (for tests whose reviewers take no case of it)."""

    def new_queue(self, name: str, cases: tuple[str, str], per_case: int = 1) -> Store:
        """This store with a queue of its own (two cases no other test reviews)."""
        with RunStore(self.path) as runs:
            queue = ReviewQueue(
                id=f"q-{name}",
                run_id=self.run,
                created_at=time.time(),
                strategy="given",
                per_case=per_case,
                case_ids=list(cases),
            )
            ReviewStore(runs).create_queue(queue)
        return Store(self.path, self.run, queue.id)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    path = tmp_path_factory.mktemp("review-app") / "runs.db"
    run = clineval.evaluate(_CASES, ["tbfact", "token_f1"], store=path, name="review me").run_id
    with RunStore(path) as runs:
        queue = ReviewQueue(
            id="q-test", run_id=run, created_at=time.time(), strategy="given", case_ids=["t1", "t2"]
        )
        ReviewStore(runs).create_queue(queue)
    return Store(path, run, "q-test")


@contextmanager
def reviewing(store: Store, reviewer: str, *, blind: bool = True) -> Iterator[tuple[TestClient, str]]:
    """A review-mode app for ``reviewer``: its client (on 127.0.0.1) and its token."""
    settings = ReviewSettings(reviewer=reviewer, blind=blind)
    with TestClient(create_app(store.path, review=settings), base_url=BASE) as client:
        yield client, settings.token


def _verdict(store: Store, case: str, item: str, scale: str, verdict: str, **extra: Any) -> dict[str, Any]:
    return {"run": store.run, "case": case, "item": item, "scale": scale, "verdict": verdict, **extra}


def _answer_all(client: TestClient, token: str, store: Store, case: str) -> dict[str, Any]:
    """Every required question of the case: factuality, harm and each fact's verdict."""
    answer: dict[str, Any] = {}
    questions = [("case", "factuality", "correct"), ("case", "harm", "none")]
    questions += [(fact, "verdict", "entailed") for fact in FACTS[case]]
    for item, scale, verdict in questions:
        response = client.post(
            "/api/review",
            json=_verdict(store, case, item, scale, verdict, queue=store.queue),
            headers={TOKEN_HEADER: token},
        )
        assert response.status_code == 200, response.text
        answer = response.json()
    return answer


def _current(store: Store, reviewer: str) -> list[tuple[str, str, str, str | None, str | None]]:
    with RunStore(store.path, readonly=True) as runs:
        return [
            (r.case_id, r.item, r.scale, r.verdict, r.comment)
            for r in ReviewStore(runs).current(store.run, reviewer=reviewer)
        ]


def test_the_store_is_as_expected(store: Store) -> None:
    """The facts and values the other tests name (what the offline judge made of the cases)."""
    with reviewing(store, "check") as (client, _):
        for case, facts in FACTS.items():
            page = client.get(f"/runs/{store.run}/cases/{case}").text
            items = re.findall(r'<article class="rv-item" id="[^"]+" data-item="([^"]+)"', page)
            assert items == ["case", *facts]
    with TestClient(create_app(store.path)) as plain:
        for case, values in VALUES.items():
            page = plain.get(f"/runs/{store.run}/cases/{case}").text
            for value in values:
                assert f">{value}</td>" in page


# --------------------------------------------------------------------------- who may write


def test_the_plain_viewer_refuses_every_write(store: Store) -> None:
    body = _verdict(store, "t1", "case", "factuality", "correct")
    with TestClient(create_app(store.path)) as client:
        for url in ("/", f"/runs/{store.run}", f"/runs/{store.run}/cases/t1"):
            response = client.post(url, json=body)
            assert response.status_code == 405, url
            assert response.text == "405 Method Not Allowed: the viewer is read-only\n"
        for url in ("/api/review", "/api/review/undo", "/review"):  # no such page
            assert client.post(url, json=body).status_code == 404, url
        assert 'name="clineval-token"' not in client.get(f"/runs/{store.run}/cases/t1").text


def test_a_write_without_the_token_or_with_a_wrong_one_is_refused(store: Store) -> None:
    body = _verdict(store, "t1", "case", "factuality", "correct", queue=store.queue)
    with reviewing(store, "no-token") as (client, token):
        missing = client.post("/api/review", json=body)
        assert missing.status_code == 403
        assert missing.json() == {"error": f"a write needs the session's token in {TOKEN_HEADER}"}
        wrong = client.post("/api/review", json=body, headers={TOKEN_HEADER: token[:-1] + "x"})
        assert wrong.status_code == 403 and "missing or wrong" in wrong.json()["error"]
        # another session's token is a wrong one too
        with reviewing(store, "no-token") as (_, other):
            assert client.post("/api/review", json=body, headers={TOKEN_HEADER: other}).status_code == 403
        undo = client.post("/api/review/undo", json={"run": store.run, "case": "t1"})
        assert undo.status_code == 403
    assert _current(store, "no-token") == []


def test_a_write_from_another_origin_is_refused(store: Store) -> None:
    body = _verdict(store, "t1", "case", "factuality", "correct")
    with reviewing(store, "origin") as (client, token):
        for origin in ("http://attacker.example", "http://127.0.0.1:9999", "null", "https://127.0.0.1:8765"):
            response = client.post("/api/review", json=body, headers={TOKEN_HEADER: token, "Origin": origin})
            assert response.status_code == 403, origin
            assert response.json() == {"error": f"a write from another origin ({origin}) is refused"}
        assert _current(store, "origin") == []
        own = client.post("/api/review", json=body, headers={TOKEN_HEADER: token, "Origin": BASE})
        assert own.status_code == 200, own.text
    assert _current(store, "origin") == [("t1", "case", "factuality", "correct", None)]


def test_a_body_that_is_not_json_is_refused(store: Store) -> None:
    form = {"run": store.run, "case": "t1", "item": "case", "scale": "factuality", "verdict": "correct"}
    with reviewing(store, "form") as (client, token):
        response = client.post("/api/review", data=form, headers={TOKEN_HEADER: token})
        assert response.status_code == 415
        assert response.json() == {
            "error": "the body must be application/json (got application/x-www-form-urlencoded)"
        }
        garbled = client.post(
            "/api/review",
            content=b"{not json",
            headers={TOKEN_HEADER: token, "Content-Type": "application/json"},
        )
        assert garbled.status_code == 400 and garbled.json() == {"error": "the body is not valid JSON"}
    assert _current(store, "form") == []


def test_the_host_is_checked_in_review_mode(store: Store) -> None:
    settings = ReviewSettings(reviewer="host")
    app = create_app(store.path, review=settings)
    with TestClient(app, base_url="http://attacker.example:8765") as remote:
        page = remote.get("/review")
        assert page.status_code == 400 and "clineval-token" not in page.text
        write = remote.post(
            "/api/review",
            json=_verdict(store, "t1", "case", "factuality", "correct"),
            headers={TOKEN_HEADER: settings.token},
        )
        assert write.status_code == 400
    assert _current(store, "host") == []


# --------------------------------------------------------------------------- what a write must hold


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"case": "t9"}, "run RUN has no case 't9'"),
        ({"run": "nope"}, "no run 'nope' in this store"),
        ({"item": "fact/tbfact/precision/9"}, "case 't1' has no review item 'fact/tbfact/precision/9'"),
        (
            {"scale": "importance"},
            "no scale 'importance' for case items (expected one of: factuality, harm, comment)",
        ),
        (
            {"verdict": "wrong"},
            "'wrong' is not an option of factuality for a case (expected one of: correct, partly, incorrect)",
        ),
        ({"verdict": None}, "factuality: give a 'verdict' (one of: correct, partly, incorrect)"),
        (
            {"verdict": None, "comment": "text"},
            "factuality takes a 'verdict' (one of: correct, partly, incorrect)",
        ),
        ({"scale": "comment", "verdict": "correct"}, "comment is free text: send 'comment', not 'verdict'"),
        ({"queue": "q-none"}, "no review queue 'q-none'"),
        ({"colour": "red"}, "field 'colour': unknown field"),
    ],
)
def test_a_bad_verdict_is_refused_with_the_reason(store: Store, change: dict[str, Any], reason: str) -> None:
    body = {**_verdict(store, "t1", "case", "factuality", "correct"), **change}
    with reviewing(store, "bad") as (client, token):
        response = client.post("/api/review", json=body, headers={TOKEN_HEADER: token})
    assert response.status_code == 400
    assert reason.replace("RUN", store.run) in response.json()["error"]
    assert _current(store, "bad") == []


def test_item_scales_follow_the_item_kind(store: Store) -> None:
    fact = FACTS["t1"][0]
    with reviewing(store, "kinds") as (client, token):
        headers = {TOKEN_HEADER: token}
        wrong = client.post(
            "/api/review", json=_verdict(store, "t1", fact, "verdict", "correct"), headers=headers
        )
        assert wrong.status_code == 400
        assert wrong.json()["error"] == (
            "'correct' is not an option of verdict for a fact (expected one of: entailed, partly, not)"
        )
        harm = client.post("/api/review", json=_verdict(store, "t1", fact, "harm", "none"), headers=headers)
        assert harm.json()["error"] == "no scale 'harm' for fact items (expected one of: verdict, importance)"
        for scale, verdict in (("verdict", "partly"), ("importance", "high")):
            ok = client.post("/api/review", json=_verdict(store, "t1", fact, scale, verdict), headers=headers)
            assert ok.status_code == 200
    assert _current(store, "kinds") == [
        ("t1", fact, "verdict", "partly", None),
        ("t1", fact, "importance", "high", None),
    ]


def test_a_write_while_the_run_is_being_run_is_refused(store: Store) -> None:
    body = _verdict(store, "t1", "case", "factuality", "correct")
    with RunStore(store.path) as runs, reviewing(store, "locked") as (client, token):
        lease = runs.acquire_lease(store.run)  # as `clineval run --resume` does
        try:
            response = client.post("/api/review", json=body, headers={TOKEN_HEADER: token})
            undo = client.post(
                "/api/review/undo", json={"run": store.run, "case": "t1"}, headers={TOKEN_HEADER: token}
            )
        finally:
            lease.release()
        assert response.status_code == 409 and undo.status_code == 409
        error = response.json()["error"]
        assert (
            error.startswith(f"run {store.run} is being run by ")
            and "reviews are saved once it has finished" in error
        )
        assert client.post("/api/review", json=body, headers={TOKEN_HEADER: token}).status_code == 200
    assert _current(store, "locked") == [("t1", "case", "factuality", "correct", None)]


def test_the_answer_holds_the_record_and_the_progress(store: Store) -> None:
    store = store.new_queue("progress", ("t3", "t4"))
    with reviewing(store, "progress") as (client, token):
        first = client.post(
            "/api/review",
            json=_verdict(store, "t4", "case", "harm", "minor", queue=store.queue),
            headers={TOKEN_HEADER: token},
        ).json()
        saved = first["saved"]
        assert (saved["reviewer"], saved["case_id"], saved["item"], saved["scale"], saved["verdict"]) == (
            "progress",
            "t4",
            "case",
            "harm",
            "minor",
        )
        assert saved["seq"] > 0 and saved["queue_id"] == store.queue and saved["source"] == "viewer"
        assert saved["shown"] == {
            "blind": True,
            "revealed": False,
            "text": "Potassium 5.9 mmol/L; stop ramipril.",
            "queue": store.queue,
        }
        # 2 case scales + 3 facts are required
        assert first["case"] == {"answered": 1, "required": 5, "complete": False}
        assert first["queue"] == {
            "id": store.queue,
            "done": 0,
            "left": 2,
            "size": 2,
            "per_case": 1,
            "fully_reviewed": 0,
        }
        last = _answer_all(client, token, store, "t4")
        assert last["case"] == {"answered": 5, "required": 5, "complete": True}
        assert last["queue"]["done"] == 1 and last["queue"]["left"] == 1
        # once the case is complete, a changed answer was given with the scores shown
        again = client.post(
            "/api/review",
            json=_verdict(store, "t4", "case", "harm", "none", queue=store.queue),
            headers={TOKEN_HEADER: token},
        ).json()
        assert again["saved"]["shown"]["revealed"] is True


def test_an_empty_comment_clears_it(store: Store) -> None:
    body = {"run": store.run, "case": "t1", "item": "case", "scale": "comment"}
    with reviewing(store, "comments") as (client, token):
        headers = {TOKEN_HEADER: token}
        assert (
            client.post(
                "/api/review", json={**body, "comment": "dose <b>unclear</b>"}, headers=headers
            ).status_code
            == 200
        )
        assert _current(store, "comments") == [("t1", "case", "comment", None, "dose <b>unclear</b>")]
        page = client.get(f"/runs/{store.run}/cases/t1").text
        assert "dose &lt;b&gt;unclear&lt;/b&gt;</textarea>" in page
        cleared = client.post("/api/review", json={**body, "comment": "  "}, headers=headers)
        assert cleared.status_code == 200 and cleared.json()["saved"]["retracted"] is True
        assert _current(store, "comments") == []
        long = client.post("/api/review", json={**body, "comment": "x" * 10_001}, headers=headers)
        assert (
            long.status_code == 400 and long.json()["error"] == "a comment may hold at most 10,000 characters"
        )


def test_undo_brings_back_the_answer_before(store: Store) -> None:
    fact = FACTS["t1"][1]
    with reviewing(store, "undo") as (client, token):
        headers = {TOKEN_HEADER: token}
        for verdict in ("entailed", "not"):
            client.post("/api/review", json=_verdict(store, "t1", fact, "verdict", verdict), headers=headers)
        assert _current(store, "undo") == [("t1", fact, "verdict", "not", None)]
        undone = client.post(
            "/api/review/undo", json={"run": store.run, "case": "t1"}, headers=headers
        ).json()
        assert undone["undone"] == {"item": fact, "scale": "verdict", "verdict": "entailed", "comment": None}
        assert undone["case"] == {"answered": 1, "required": 7, "complete": False}
        assert _current(store, "undo") == [("t1", fact, "verdict", "entailed", None)]
        page = client.get(f"/runs/{store.run}/cases/t1").text
        question = page[page.index(f'data-item="{fact}" data-scale="verdict"') :]
        assert question.index('class="rq-opt is-selected" data-value="entailed"') < question.index("</div>")
        again = client.post("/api/review/undo", json={"run": store.run, "case": "t1"}, headers=headers).json()
        assert again["undone"] == {"item": fact, "scale": "verdict", "verdict": None, "comment": None}
        nothing = client.post(
            "/api/review/undo", json={"run": store.run, "case": "t1"}, headers=headers
        ).json()
        assert nothing["undone"] is None
    assert _current(store, "undo") == []


# --------------------------------------------------------------------------- what a blind reviewer sees


def _explanations(store: Store, case: str) -> list[str]:
    with RunStore(store.path, readonly=True) as runs:
        results = runs.results_for(store.run, [case])
    found = [r.score.explanation for r in results if r.score.explanation]
    for result in results:
        for row in result.score.details.get("facts", []):
            found += [row[k] for k in ("explanation",) if row.get(k)]
    assert found
    return found


def _assert_blind(page: str, store: Store, case: str) -> None:
    for value in VALUES[case]:
        assert value not in page
    for text in _explanations(store, case):
        assert text not in page
    for marker in (
        'id="results-table"',
        "ev-result",
        "ev-v-",
        "judge:",
        "data-judge-for",
        "support 0",
        "coverage check",
    ):
        assert marker not in page, marker


def test_a_blind_case_page_holds_no_score_until_answered(store: Store) -> None:
    store = store.new_queue("blind", ("t1", "t2"))
    with reviewing(store, "blind") as (client, token):
        page = client.get(f"/runs/{store.run}/cases/t1?queue={store.queue}")
        assert page.status_code == 200
        _assert_blind(page.text, store, "t1")
        assert "Stage IIIA adenocarcinoma." in page.text  # the facts to review are there
        assert 'id="blind-note"' in page.text
        assert f'<meta name="clineval-token" content="{token}">' in page.text
        assert "reviewing as <strong>blind</strong>" in page.text
        revealed = client.get(f"/runs/{store.run}/cases/t1/revealed?queue={store.queue}")
        assert (
            revealed.status_code == 403 and "until you have answered every required question" in revealed.text
        )
        _answer_all(client, token, store, "t1")
        revealed = client.get(f"/runs/{store.run}/cases/t1/revealed?queue={store.queue}")
        assert revealed.status_code == 200
        assert 'id="results-table"' in revealed.text and ">0.857</td>" in revealed.text
        assert 'data-judge-for="fact/tbfact/recall/1">judge: partly · support' in revealed.text
        reloaded = client.get(f"/runs/{store.run}/cases/t1?queue={store.queue}").text
        assert ">0.857</td>" in reloaded and 'id="blind-note"' not in reloaded
        assert '<span class="rv-judge rv-judge-entailed">judge: entailed · importance' in reloaded
        # the other case stays blind
        _assert_blind(client.get(f"/runs/{store.run}/cases/t2").text, store, "t2")


def test_blind_run_and_compare_pages_hide_the_scores(store: Store) -> None:
    with reviewing(store, "pages") as (client, _):
        run = client.get(f"/runs/{store.run}?sort=tbfact&metric=tbfact&min=0.8").text
        assert 'id="hidden-blind"' in run and 'id="aggregates-table"' not in run
        assert 'id="distributions"' not in run and "<svg" not in run
        for case, values in VALUES.items():
            assert f'data-case-id="{case}"' in run  # the filter on a score is not applied
            for value in values:
                assert value not in run
        for url in (
            f"/compare?a={store.run}&b={store.run}",
            f"/compare/case?a={store.run}&b={store.run}&case=t1",
            f"/runs/{store.run}/aggregates",
            f"/runs/{store.run}/agreement",
        ):
            page = client.get(url)
            assert page.status_code == 200 and "Hidden while you review blind" in page.text, url
            assert "0.857" not in page.text
    with reviewing(store, "pages", blind=False) as (client, _):
        assert 'id="aggregates-table"' in client.get(f"/runs/{store.run}").text


def test_unblind_shows_scores_and_the_judge_from_the_start(store: Store) -> None:
    with reviewing(store, "open", blind=False) as (client, _):
        page = client.get(f"/runs/{store.run}/cases/t2").text
        assert ">0.667</td>" in page and 'id="results-table"' in page and "ev-result" in page
        assert '<span class="rv-judge rv-judge-partly">judge: partly · support' in page
        assert "review, scores shown" in page
        assert client.get(f"/runs/{store.run}/cases/t2/revealed").status_code == 200


# --------------------------------------------------------------------------- queues


def test_next_claims_the_first_open_case_and_says_when_the_queue_is_done(store: Store) -> None:
    store = store.new_queue("next", ("t5", "t6"))
    with reviewing(store, "next-a") as (a, token), reviewing(store, "next-b") as (b, _):
        first = a.get(f"/review/{store.queue}/next", follow_redirects=False)
        assert first.status_code == 303
        assert first.headers["location"] == f"/runs/{store.run}/cases/t5?queue={store.queue}"
        # one reviewer per case: the other reviewer gets the other case
        other = b.get(f"/review/{store.queue}/next", follow_redirects=False)
        assert other.headers["location"] == f"/runs/{store.run}/cases/t6?queue={store.queue}"
        start = a.get("/review").text
        row = start[start.index(f'data-queue-id="{store.queue}"') :]
        row = row[: row.index("</tr>")]
        assert '<span class="q-done">0 done</span> · <span class="q-left">1 left</span>' in row
        assert '<td class="q-full">0 of 2</td>' in row and ">Continue</a>" in row
        _answer_all(a, token, store, "t5")
        done = a.get(f"/review/{store.queue}/next")
        assert done.status_code == 200 and f"Queue {store.queue}: done" in done.text
        assert "<strong>1</strong> case reviewed by you" in done.text
        missing = a.get("/review/q-nothing/next")
        assert missing.status_code == 404 and "no review queue &#39;q-nothing&#39;" in missing.text
        outside = a.get(f"/runs/{store.run}/cases/t1?queue={store.queue}")
        assert outside.status_code == 404 and "is not in review queue" in outside.text


def test_the_start_page_without_queues_says_how_to_plan_one(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    run = clineval.evaluate(_CASES[:1], ["token_f1"], store=path).run_id
    with TestClient(create_app(path, review=ReviewSettings(reviewer="x")), base_url=BASE) as client:
        page = client.get("/review").text
    assert 'id="no-queues"' in page and f"clineval review plan {run} --n 20 --store {path}" in page


# --------------------------------------------------------------------------- the command


def _view(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "clineval.cli.main", "view", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def test_review_mode_listens_on_this_machine_only(store: Store, tmp_path: Path) -> None:
    for host in ("0.0.0.0", "192.168.1.5", "::1"):
        proc = _view("--review", "--store", str(store.path), "--host", host, "--no-open", cwd=tmp_path)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, (host, out, err)
        assert err.strip() == (
            f"error: --host {host}: review mode listens on 127.0.0.1 only (it writes to the store, with no "
            "login); reviewers on other machines run their own viewer on a copy or a shared store"
        )
        assert "Traceback" not in err
    proc = _view("--unblind", "--store", str(store.path), "--no-open", cwd=tmp_path)
    _, err = proc.communicate(timeout=60)
    assert (
        proc.returncode == 2
        and err.strip() == "error: --unblind: only with --review (clineval view --review ...)"
    )


def test_clineval_view_review_names_the_reviewer_and_the_start_page(store: Store, tmp_path: Path) -> None:
    proc = _view(
        "--review", "--store", str(store.path), "--port", "0", "--no-open", "--queue", "q-te",
        cwd=tmp_path, env={"CLINEVAL_REVIEWER": "dr.env"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/review", line)
        assert match, line
        assert line.startswith("clineval view --review: reviewing as dr.env (blind: scores shown once")
        assert f"queue {store.queue}: http://127.0.0.1:{match.group(1)}/review/{store.queue}/next" in line
    finally:
        proc.terminate()
        proc.wait(timeout=30)
