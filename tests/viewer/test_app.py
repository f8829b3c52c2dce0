"""The viewer's pages (starlette TestClient) and `clineval view` through the real CLI."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from starlette.testclient import TestClient
from tests.viewer.stores import SECRET, XSS_IMG, XSS_SCRIPT, build_store

from clineval.viewer.app import create_app


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("viewer-app") / "runs.db"
    return path, build_store(path)


@pytest.fixture(scope="module")
def client(store: tuple[Path, dict[str, str]]) -> Iterator[TestClient]:
    with TestClient(create_app(store[0])) as test_client:
        yield test_client


def _h1(html: str) -> str:
    match = re.search(r"<h1>(.*?)</h1>", html, re.S)
    assert match, "page has no <h1>"
    return match.group(1).strip()


def test_runs_page(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    ids = store[1]
    page = client.get("/")
    assert page.status_code == 200 and _h1(page.text) == "Runs"
    assert str(store[0]) in page.text  # the header names the store
    table = page.text[page.text.index('id="runs-table"') :]
    order = [ids[n] for n in ("tbfact", "many", "second", "first")]
    assert [table.index(f'data-run-id="{i}"') for i in order] == sorted(
        table.index(f'data-run-id="{i}"') for i in order
    )
    filtered = client.get("/", params={"tag": "team=a"})
    assert ids["first"] in filtered.text and ids["second"] not in filtered.text
    assert "No run matches the filters." in client.get("/", params={"name": "zzz"}).text


def test_run_page(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    run = store[1]["first"]
    page = client.get(f"/runs/{run}")
    assert page.status_code == 200
    assert _h1(page.text) == "Run first"
    for marker in ('id="provenance"', 'id="aggregates-table"', 'id="unscored-table"', 'id="cases-table"'):
        assert marker in page.text
    assert "the case has no &#39;reference&#39;, which metric &#39;token_f1&#39; requires" in page.text
    assert "[0.000, 1.000]" in page.text  # exact_match's CI over {0, 1}
    grouped = client.get(f"/runs/{run}", params={"by": "task"})
    assert 'id="by-table"' in grouped.text and ">meds<" in grouped.text


def test_case_table_pagination_sort_filter(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    run = store[1]["many"]
    first = client.get(f"/runs/{run}", params={"size": 20})
    assert 'class="pager"' in first.text and "page 1 of 2" in first.text
    rows = re.findall(r'<tr data-case-id="([^"]+)"', first.text)
    assert rows == [f"m{n:02d}" for n in range(20)]
    assert f"/runs/{run}?size=20&amp;page=2#cases" in first.text
    second = client.get(f"/runs/{run}", params={"size": 20, "page": 2})
    assert re.findall(r'<tr data-case-id="([^"]+)"', second.text) == [f"m{n:02d}" for n in range(20, 25)]
    by_id = client.get(f"/runs/{run}", params={"sort": "case", "order": "desc", "size": 20})
    assert re.findall(r'<tr data-case-id="([^"]+)"', by_id.text)[0] == "m24"
    matched = client.get(f"/runs/{run}", params={"metric": "exact_match", "min": "1"})
    assert re.findall(r'<tr data-case-id="([^"]+)"', matched.text) == [f"m{n:02d}" for n in range(0, 25, 3)]
    assert "9 of 25 cases" in matched.text
    bad = client.get(f"/runs/{run}", params={"size": "huge", "page": "x", "min": "nan"})
    assert bad.status_code == 200 and "25 of 25 cases" in bad.text


def test_case_page_and_escaping(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    run = store[1]["first"]
    for case_id in ("c1", "c2"):
        page = client.get(f"/runs/{run}/cases/{case_id}")
        assert page.status_code == 200 and _h1(page.text) == f"Case {case_id}"
        assert XSS_SCRIPT not in page.text and XSS_IMG not in page.text
        assert "<img src=x" not in page.text and "<b>bold</b>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in client.get(f"/runs/{run}/cases/c1").text
    assert "&lt;b&gt;bold&lt;/b&gt;" in client.get(f"/runs/{run}/cases/c2").text
    run_page = client.get(f"/runs/{run}").text
    assert XSS_SCRIPT not in run_page and "<img src=x" not in run_page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in run_page


def test_secrets_stay_masked(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    run = store[1]["first"]
    for url in ("/", f"/runs/{run}", f"/runs/{run}/cases/c3", f"/compare?a={run}&b={store[1]['second']}"):
        assert SECRET not in client.get(url).text
    assert "sk-***" in client.get(f"/runs/{run}/cases/c3").text


def test_tbfact_case_page(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    page = client.get(f"/runs/{store[1]['tbfact']}/cases/t1")
    assert page.status_code == 200
    assert 'id="metric-tbfact"' in page.text and "osimertinib" in page.text


def test_compare_pages(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    a, b = store[1]["first"], store[1]["second"]
    page = client.get("/compare", params={"a": a, "b": b})
    assert page.status_code == 200 and _h1(page.text) == "Compare first → second"
    assert 'id="compare-table"' in page.text and 'data-metric="exact_match"' in page.text
    # a few cases: the note that no change could be significant, as the terminal says it
    assert '<ul class="warnings" id="small-n"><li>exact_match: too few cases to detect:' in page.text
    link = f"/compare/case?a={a}&amp;b={b}&amp;case=c2"
    assert link in page.text
    ticked = client.get(f"/compare?run={b}&run={a}")  # the runs list's form: the older run is A
    assert ticked.status_code == 200 and _h1(ticked.text) == "Compare first → second"
    side = client.get(link.replace("&amp;", "&"))
    assert side.status_code == 200 and _h1(side.text) == "Case c2: A vs B"
    assert "Sodium 140 mmol/L." in side.text and "&lt;b&gt;bold&lt;/b&gt;" in side.text
    assert client.get("/compare", params={"a": a}).status_code == 400
    unrelated = client.get("/compare", params={"a": a, "b": store[1]["tbfact"]})
    assert unrelated.status_code == 400 and "Cannot compare" in unrelated.text


def test_not_found_pages(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    missing = client.get("/runs/no-such-run")
    assert missing.status_code == 404 and "no run &#39;no-such-run&#39; in this store" in missing.text
    case = client.get(f"/runs/{store[1]['first']}/cases/nope")
    assert case.status_code == 404 and "has no case &#39;nope&#39;" in case.text
    assert client.get("/nowhere").status_code == 404
    assert client.get(f"/compare?a={store[1]['first']}&b=nope").status_code == 404


def test_read_only(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        for url in ("/", f"/runs/{store[1]['first']}", "/compare", "/static/viewer.css"):
            response = client.request(method, url)
            assert response.status_code == 405, (method, url)


def test_static_files_and_no_traversal(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    css = client.get("/static/viewer.css")
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    assert client.get("/static/viewer.js").status_code == 200
    evidence = pytest.importorskip("clineval.viewer.evidence")
    served = client.get("/static/evidence.css")
    assert served.status_code == 200 and served.text == evidence.EVIDENCE_CSS
    assert client.get("/static/evidence.js").text == evidence.EVIDENCE_JS
    for url in (
        "/static/../app.py",
        "/static/%2e%2e/app.py",
        "/static/..%2fdata.py",
        "/static/%2e%2e/%2e%2e/store/sqlite.py",
        f"/static/{store[0]}",
        "/static//etc/passwd",
    ):
        response = client.get(url)
        assert response.status_code == 404, url
        assert "import" not in response.text and "root:" not in response.text


def test_only_local_host_names_when_asked(store: tuple[Path, dict[str, str]]) -> None:
    """clineval view on localhost refuses a request addressed to another name (DNS rebinding)."""
    app = create_app(store[0], allowed_hosts=["127.0.0.1", "localhost"])
    with TestClient(app, base_url="http://127.0.0.1:8765") as local:
        assert local.get("/").status_code == 200
    with TestClient(app, base_url="http://attacker.example:8765") as remote:
        response = remote.get("/")
        assert response.status_code == 400 and 'id="runs-table"' not in response.text


# --------------------------------------------------------------------------- the CLI


def _cli(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.Popen(
        [sys.executable, "-m", "clineval.cli.main", "view", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env,
    )


def _serve(args: list[str], cwd: Path) -> tuple[subprocess.Popen[str], str]:
    proc = _cli(*args, cwd=cwd)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"http://[\w.\[\]:]+/", line)
    if match is None:
        proc.kill()
        raise AssertionError(f"no URL in {line!r}; stderr: {proc.stderr.read() if proc.stderr else ''}")
    return proc, match.group(0)


def test_clineval_view_serves_on_a_free_port(store: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    proc, url = _serve(["--store", str(store[0]), "--port", "0", "--no-open"], tmp_path)
    try:
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200
            assert b'id="runs-table"' in response.read()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_clineval_view_on_all_interfaces_warns(store: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    proc, url = _serve(["--store", str(store[0]), "--port", "0", "--no-open", "--host", "0.0.0.0"], tmp_path)
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert "anyone who can reach this machine on the network can read every run" in " ".join(stderr.split())


def test_clineval_view_errors(store: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    missing = _cli("--store", str(tmp_path / "none.db"), "--no-open", cwd=tmp_path)
    _, err = missing.communicate(timeout=60)
    assert missing.returncode == 2 and "no run store at" in err and "Traceback" not in err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        busy = _cli("--store", str(store[0]), "--port", str(port), "--no-open", cwd=tmp_path)
        _, err = busy.communicate(timeout=60)
    assert busy.returncode == 2 and f"port {port} on 127.0.0.1 is already in use" in " ".join(err.split())


def test_large_run_shows_intervals_when_ready(
    store: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of SYNC_CI_RESULTS results or more opens without its bootstrap intervals; the
    page's script fetches the table with them from /runs/ID/aggregates."""
    import clineval.viewer.data as data_module

    monkeypatch.setattr(data_module, "SYNC_CI_RESULTS", 1)
    run = store[1]["many"]
    with TestClient(create_app(store[0])) as fresh:
        page = fresh.get(f"/runs/{run}")
        assert page.status_code == 200
        assert "computing…" in page.text and f'data-fragment="/runs/{run}/aggregates"' in page.text
        fragment = fresh.get(f"/runs/{run}/aggregates")
        assert fragment.status_code == 200 and 'id="aggregates-table"' in fragment.text
        assert "computing" not in fragment.text and "data-fragment" not in fragment.text
        again = fresh.get(f"/runs/{run}")
        assert "computing…" not in again.text
        cells = re.findall(r'<td class="num ci">([^<]*)</td>', fragment.text)
        assert cells == re.findall(r'<td class="num ci">([^<]*)</td>', again.text) and cells


def test_empty_store_and_a_run_without_results(tmp_path: Path, store: tuple[Path, dict[str, str]]) -> None:
    from clineval.model import Case
    from clineval.store.sqlite import RunStore

    empty = tmp_path / "empty.db"
    RunStore(empty).close()
    with TestClient(create_app(empty)) as client:
        page = client.get("/")
        assert page.status_code == 200 and "No runs in this store yet" in page.text

    # a run whose process died before any result: listed as stopped, its page says so
    with RunStore(store[0], readonly=True) as source:
        record = source.get_run(store[1]["first"])
    bare = tmp_path / "bare.db"
    record = record.model_copy(update={"id": "bare-run", "status": "running", "name": "bare"})
    with RunStore(bare) as target:
        target.create_run(record, [Case(id="only", input="hello <b>there</b>")])
    with TestClient(create_app(bare)) as client:
        assert "status-stopped" in client.get("/").text
        run = client.get("/runs/bare-run")
        assert run.status_code == 200 and "No results yet." in run.text
        assert 'data-case-id="only"' in run.text and "hello &lt;b&gt;there&lt;/b&gt;" in run.text
        case = client.get("/runs/bare-run/cases/only")
        assert case.status_code == 200 and "No results for this case yet." in case.text


# --- what a reviewer found confusing ------------------------------------------------------


def test_plot_scales_follow_the_metric() -> None:
    from clineval.viewer.app import metric_scale

    assert metric_scale("latency", [0.004, 0.006]) == (False, "seconds")
    assert metric_scale("TimeToDecision", [0.02], "clineval.suites.evaluators:TimeToDecision") == (
        False,
        "seconds",
    )
    assert metric_scale("Speed", [0.02], "clineval.suites.evaluators:TimeToDecision") == (False, "seconds")
    assert metric_scale("FieldFuzzy", [100.0, 87.5]) == (False, "value")
    assert metric_scale("token_f1", [0.0, 0.5, 1.0]) == (True, "score")


def test_short_dataset_source() -> None:
    from clineval.viewer.app import short_source

    assert short_source("/work/main/examples/quickstart/cases.jsonl") == "…/quickstart/cases.jsonl"
    assert short_source("cases.jsonl") == "cases.jsonl"
    long = "simulated conversations: 4 scenario(s) x 1 trial(s) each from /tmp/x/scenarios.yaml"
    assert short_source(long) == long[:47] + "…" and short_source(None) == "–"


def test_run_page_plots_latency_in_seconds(client: TestClient, store: tuple[Path, dict[str, str]]) -> None:
    page = client.get(f"/runs/{store[1]['first']}").text
    figures = dict(re.findall(r'<figure class="plot" data-metric="([^"]+)">(.*?)</figure>', page, re.S))
    assert "latency" in figures and "token_f1" in figures
    assert ">seconds (" in figures["latency"] and ">score (" not in figures["latency"]
    assert ">score (" in figures["token_f1"]


def test_unscored_table_counts_cases_and_results(tmp_path: Path) -> None:
    import clineval

    def agent(query: str) -> dict[str, object]:
        if "fail" in query:
            raise RuntimeError("the service is down")
        return {"response": "ok"}

    cases = [
        {"id": "a", "input": "fine", "reference": "ok"},
        {"id": "b", "input": "fail please", "reference": "ok"},
    ]
    path = tmp_path / "runs.db"
    run = clineval.evaluate(cases, ["exact_match", "token_f1"], agent=agent, store=path, name="down").run_id
    with TestClient(create_app(path)) as c:
        page = c.get(f"/runs/{run}").text
    table = page[
        page.index('id="unscored-table"') : page.index("</table>", page.index('id="unscored-table"'))
    ]
    assert ">Cases<" in table and ">Results<" in table
    rows = re.findall(r'unscored-cases">(\d+)<.*?unscored-results">(\d+)<', table, re.S)
    assert rows and rows[0] == ("1", "2")  # one failed case, two unscored results (one per metric)


def test_compare_plot_agrees_with_the_verdicts(
    client: TestClient, store: tuple[Path, dict[str, str]]
) -> None:
    a, b = store[1]["first"], store[1]["second"]
    page = client.get("/compare", params={"a": a, "b": b}).text
    verdicts = dict(re.findall(r'<tr data-metric="([^"]+)" class="verdict-([\w-]+)"', page))
    assert verdicts
    scores = page[page.index('id="compare-plot"') : page.index("</figure>", page.index('id="compare-plot"'))]
    for metric in ("exact_match", "token_f1"):
        assert re.search(rf'class="metric row-{verdicts[metric]}"[^>]*>{metric}<', scores), metric
    # latency is in seconds: its own panel, not on the axis of the 0-1 scores
    assert "latency" not in scores
    seconds = page[page.index('id="compare-plot-seconds"') :]
    assert re.search(r">latency ?[↓↑]?<", seconds[: seconds.index("</figure>")])


def test_runs_list_judge_name_and_short_metric_lists(
    client: TestClient, store: tuple[Path, dict[str, str]]
) -> None:
    page = client.get("/").text
    row = page[page.index(f'data-run-id="{store[1]["tbfact"]}"') :]
    row = row[: row.index("</tr>")]
    assert 'class="judge">offline<' in row and "heuristic" not in row


def test_suite_case_shows_inputs_and_output_as_fields() -> None:
    from clineval.model import Case
    from clineval.viewer.app import suite_case_view

    case = Case.model_validate(
        {
            "id": "001",
            "metadata": {
                "suite_case": {
                    "metrics": ["Decision"],
                    "evaluations": [
                        {"query": "decision", "ground_truth": "approved", "metrics": ["Decision"]}
                    ],
                },
                "agent_output": {
                    "output": {"decision": "denied", "patient": {"name": "<b>N</b>"}, "codes": ["A", "B"]}
                },
            },
        }
    )

    record = SimpleNamespace(
        config={"suite": {"001": {"context": {"notes": "Note text", "policy": "Policy text"}}}}
    )
    view = suite_case_view(record, case)
    assert view is not None
    assert view.inputs == [("context.notes", "Note text"), ("context.policy", "Policy text")]
    assert view.checks == [("decision", "approved", "denied", ["Decision"])]
    assert ("patient.name", "<b>N</b>") in view.output and ("codes", ["A", "B"]) in view.output
    assert suite_case_view(record, Case(id="x", input="q")) is None


def test_suite_case_template_ids_take_a_prefix() -> None:
    from clineval.viewer.app import SuiteCaseView, environment

    view = SuiteCaseView([("context", "<b>x</b>")], [("q", "1", "2", ["M"])], [("k", "v")], None, False)
    template = environment().get_template("_suite_case.html")
    plain = template.render(suite_case=view)
    assert 'id="suite-inputs"' in plain and "&lt;b&gt;x&lt;/b&gt;" in plain and "<b>x</b>" not in plain
    side = template.render(suite_case=view, sc_prefix="a-")
    assert 'id="a-suite-inputs"' in side and 'id="a-suite-output"' in side
