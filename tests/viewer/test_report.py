"""The self-contained HTML report: ``clineval report`` and ``clineval compare --html``.

Through the real CLI in a subprocess, on a temporary store holding the quickstart run and
two small runs of the same cases (one with hostile inputs) to compare; the ranking of the
worst cases and the large-run case table in process, with hand-computed means.
"""

from __future__ import annotations

import dataclasses
import functools
import html as html_lib
import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tests.clirun import clineval

from clineval import evaluate
from clineval.results.result import EvalResult
from clineval.viewer import report

if TYPE_CHECKING:
    from tests.conftest import QuickstartRun

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'

#: Any reference to the outside: a URL in src/href, a stylesheet link, a script source,
#: a CSS import or url() (the SVG's xmlns is a name, not a reference).
EXTERNAL = re.compile(
    r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//|<link\b|<script[^>]+src|@import|url\(""", re.I
)


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return clineval(*args, cwd=cwd, timeout=300)


def _cli_together(*calls: tuple[list[str], Path]) -> list[subprocess.CompletedProcess[str]]:
    """Independent commands (none reads what another writes), two at a time: the machine's cores."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda call: _cli(*call), calls))


def _write_cases(path: Path, responses: dict[str, str]) -> None:
    rows = [
        {
            "id": "xss-script",
            "input": SCRIPT,
            "reference": "potassium high",
            "response": responses["xss-script"],
        },
        {"id": "xss-img", "input": IMG, "reference": "sodium low", "response": responses["xss-img"]},
        {
            "id": "plain",
            "input": "What is the potassium?",
            "reference": "potassium high today",
            "response": responses["plain"],
        },
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, quickstart_run: QuickstartRun) -> Path:
    """The quickstart run (the session's, tests/conftest.py), then two runs of three small
    cases (B worse on two of them)."""
    root = tmp_path_factory.mktemp("report")
    path = root / "store.db"
    quickstart_run.copy_into(path)
    before = {"xss-script": "potassium high", "xss-img": "sodium low", "plain": "potassium high today"}
    after = {"xss-script": "potassium normal " + SCRIPT, "xss-img": IMG, "plain": "potassium high today"}
    for name, responses in (("before", before), ("after", after)):
        data = root / f"{name}.jsonl"
        _write_cases(data, responses)
        args = ["run", "--data", str(data), "-m", "exact_match,token_f1", "--judge", "none", "--name", name]
        proc = _cli([*args, "--store", str(path), "-q"], root)
        assert proc.returncode == 0, proc.stderr
    return path


@functools.cache  # the module's store is only read after the fixture: one `clineval runs` per name
def _run_id(store: Path, name: str) -> str:
    proc = _cli(["runs", "--store", str(store), "--name", name], store.parent)
    match = re.search(r"^\S*\s*(\d{8}-\d{6}-[0-9a-f]{4})\b.*" + name, proc.stdout, flags=re.M)
    assert match, proc.stdout
    return match.group(1)


def _self_contained(html: str) -> None:
    assert html.startswith("<!doctype html>")
    assert EXTERNAL.search(html) is None, EXTERNAL.search(html)
    assert "<style>" in html and "<svg" in html


def test_quickstart_report_holds_the_run_and_the_tbfact_evidence(store: Path, tmp_path: Path) -> None:
    quickstart = _run_id(store, "quickstart")
    out = tmp_path / "quickstart.html"
    everything = tmp_path / "all.html"  # with every case's evidence
    proc, proc_all = _cli_together(
        (["report", quickstart, "--store", str(store), "-o", str(out)], tmp_path),
        (["report", quickstart, "--store", str(store), "-o", str(everything), "--worst", "25"], tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stderr
    html = out.read_text(encoding="utf-8")
    _self_contained(html)
    for section in ("provenance", "aggregates", "distributions", "unscored", "cases", "worst"):
        assert f'id="{section}"' in html
    assert 'id="by-title">By task<' in html  # the run's own group_by
    assert len(re.findall(r'<svg [^>]*class="plot plot-distribution"', html)) == 13  # one per metric
    assert html.count('<tr data-case-id="') == 25  # every case: the run has fewer than 500
    # the 20 worst cases, the agent failure first, with TBFact's fact tables
    sections = re.findall(r'<section class="card case-evidence" id="case-\d+" data-case-id="([^"]+)"', html)
    assert len(sections) == 20 and sections[0] == "tool-014"
    assert "agent failed" in html and "no patient named &#39;Whitfield&#39;" in html
    assert html.count('data-metric="tbfact"') >= 19 and "ev-fam-tbfact" in html
    # with every case's evidence, a summary case's facts and the quotes they were checked against
    assert proc_all.returncode == 0, proc_all.stderr
    full = everything.read_text(encoding="utf-8")
    assert len(re.findall(r'<section class="card case-evidence" id="case-\d+"', full)) == 25
    assert "ticagrelor 90 mg twice daily" in full


def test_default_file_name_and_worst_n(store: Path, tmp_path: Path) -> None:
    after = _run_id(store, "after")
    proc, none = _cli_together(
        (["report", after, "--store", str(store), "--worst", "2"], tmp_path),
        (["report", after, "--store", str(store), "--worst", "0", "-o", "none.html"], tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    target = tmp_path / f"clineval-report-{after}.html"
    assert proc.stderr.strip() == f"wrote clineval-report-{after}.html"
    html = target.read_text(encoding="utf-8")
    assert len(re.findall(r'<section class="card case-evidence"', html)) == 2
    assert none.returncode == 0, none.stderr
    assert 'class="card case-evidence"' not in (tmp_path / "none.html").read_text(encoding="utf-8")


def test_worst_three_shows_three_case_sections(store: Path, tmp_path: Path) -> None:
    quickstart = _run_id(store, "quickstart")
    proc = _cli(["report", quickstart, "--store", str(store), "--worst", "3", "-o", "r.html"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert len(re.findall(r'<section class="card case-evidence"', html)) == 3
    assert "The 3 worst cases" in html


def test_hostile_case_text_is_escaped(store: Path, tmp_path: Path) -> None:
    after = _run_id(store, "after")
    proc = _cli(["report", after, "--store", str(store), "-o", "x.html"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "x.html").read_text(encoding="utf-8")
    _self_contained(html)
    assert "<script>alert" not in html and "<img src=x" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    # the page's own scripts are the report's and the evidence's, inline
    assert html.count("<script>") == 1


def test_unwritable_output_is_one_line_exit_2(store: Path, tmp_path: Path) -> None:
    after = _run_id(store, "after")
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    targets = (str(blocker / "r.html"), str(tmp_path / "no" / "such" / "dir" / "r.html"), str(tmp_path))
    *refused, unknown = _cli_together(
        *[(["report", after, "--store", str(store), "-o", target], tmp_path) for target in targets],
        (["report", "nope", "--store", str(store)], tmp_path),
    )
    for target, proc in zip(targets, refused, strict=True):
        assert proc.returncode == 2, (target, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: --out {target}: cannot write"), proc.stderr
        assert "Traceback" not in proc.stderr
    assert (
        unknown.returncode == 2 and unknown.stderr.startswith("error: ") and "Traceback" not in unknown.stderr
    )


def test_png_dir_writes_one_png_per_plot(store: Path, tmp_path: Path) -> None:
    before = _run_id(store, "before")
    proc = _cli(["report", before, "--store", str(store), "--png-dir", "pngs", "-o", "r.html"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    pngs = sorted((tmp_path / "pngs").glob("*.png"))
    assert [p.name for p in pngs] == [f"{before}-exact_match.png", f"{before}-token_f1.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert proc.stderr.count("wrote ") == 3


def test_compare_html(store: Path, tmp_path: Path) -> None:
    before, after = _run_id(store, "before"), _run_id(store, "after")
    args = ["compare", before, after, "--store", str(store), "--html", "cmp.html", "--png-dir", "png"]
    proc = _cli(args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "wrote cmp.html" in proc.stderr and "B vs A" in proc.stdout
    html = (tmp_path / "cmp.html").read_text(encoding="utf-8")
    _self_contained(html)
    assert 'id="compare-table"' in html and 'class="plot plot-compare"' in html
    # the terminal's "too few cases to detect" notes are in the page too
    small = [line.strip() for line in proc.stdout.splitlines() if "too few cases to detect" in line]
    assert small, proc.stdout
    listed = re.search(r'<ul class="warnings" id="small-n">(.*?)</ul>', html, re.S)
    assert listed is not None
    for line in small:
        assert html_lib.escape(line.split(": too few", 1)[0], quote=False) in listed.group(1)
    assert listed.group(1).count("too few cases to detect") == len(small)
    for metric in ("exact_match", "token_f1"):
        assert re.search(rf'<tr class="verdict-[a-z-]+" data-metric="{metric}"', html)
    # the two cases that got worse, each with both runs' evidence; none got better
    worse = re.findall(
        r'<section class="card case-evidence changed-case" id="worse-\d+" data-case-id="([^"]+)"', html
    )
    assert sorted(worse) == ["xss-img", "xss-script"]
    assert 'id="better-0"' not in html
    assert "<script>alert" not in html and "<img src=x" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert len(list((tmp_path / "png").glob("*.png"))) == 1
    proc = _cli(["compare", before, after, "--store", str(store), "--html", str(tmp_path)], tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip().startswith(f"error: --html {tmp_path}: cannot write")
    proc = _cli(["compare", before, after, "--store", str(store), "--png-dir", "png"], tmp_path)
    assert proc.returncode == 2 and "--png-dir goes with --html" in proc.stderr


def test_suite_and_radiology_benchmark_tables(tmp_path: Path) -> None:
    """A suite run's report has the suite's case table; a benchmark run's, its summary."""
    path = tmp_path / "s.db"
    # a two-case suite (the prior-auth example's own run is checked in tests/examples)
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "s:\n  description: d\n  pipeline:\n    class: tests.suites.standins:Recording\n"
        "  evaluators: [{name: E, class: clineval.suites.evaluators:ExactMatch}]\n  cases: [s.1, s.2]\n"
        "s.1:\n  metrics: [E]\n  evaluations: [{query: answer, ground_truth: 'yes'}]\n"
        "s.2:\n  metrics: [E]\n  evaluations: [{query: answer, ground_truth: 'no'}]\n",
        encoding="utf-8",
    )
    proc = _cli(["run", str(suite), "--store", str(path), "-q"], ROOT)
    assert proc.returncode == 0, proc.stderr
    args = ["radbench", "run", "--core", "greedy", "-n", "1", "--condition", "baseline", "--task", "1"]
    proc = _cli([*args, "--store", str(path), "-q"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    for ref, table, absent in (
        ("latest~1", "suite-table", "radbench-table"),
        ("latest", "radbench-table", "suite-table"),
    ):
        proc = _cli(["report", ref, "--store", str(path), "-o", "r.html", "--worst", "1"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        html = (tmp_path / "r.html").read_text(encoding="utf-8")
        _self_contained(html)
        assert f'id="{table}"' in html and f'id="{absent}"' not in html
        assert len(re.findall(r'<section class="card case-evidence"', html)) == 1


# --------------------------------------------------------------------------- in process


def _small_run(tmp_path: Path) -> EvalResult:
    ref = "potassium high sodium low"
    rows = [
        {"id": "c1", "input": "q1", "response": ref, "reference": ref},  # 1 and 1: mean 1
        {"id": "c2", "input": "q2", "response": "nothing relevant", "reference": ref},  # 0 and 0: mean 0
        {"id": "c3", "input": "q3", "response": "potassium high", "reference": ref},  # 0 and 2/3: mean 1/3
        {"id": "c4", "input": "q4", "reference": ref},  # no response: unscored on both
    ]
    return evaluate(rows, ["exact_match", "token_f1"], judge="none", store=tmp_path / "s.db", progress=False)


def test_rank_cases_worst_first(tmp_path: Path) -> None:
    result = _small_run(tmp_path)
    ranked = report.rank_cases(result)
    assert [r.case.id for r in ranked] == ["c4", "c2", "c3", "c1"]
    assert ranked[0].mean is None and ranked[0].unscored == ["exact_match", "token_f1"]
    assert [r.mean for r in ranked[1:]] == [0.0, pytest.approx(1 / 3), 1.0]
    assert [r.rank for r in ranked] == [1, 2, 3, 4]
    assert report.main_metrics(result) == ["exact_match", "token_f1"]


def test_large_run_lists_the_worst_cases_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _small_run(tmp_path)
    monkeypatch.setattr(report, "CASE_TABLE_LIMIT", 3)
    html = report.run_report_html(result, worst=2)
    assert "The 2 worst of 4 cases" in html
    assert re.findall(r'<tr data-case-id="([^"]+)"', html) == ["c4", "c2"]
    monkeypatch.setattr(report, "CASE_TABLE_LIMIT", 500)
    html = report.run_report_html(result, worst=2)
    assert re.findall(r'<tr data-case-id="([^"]+)"', html) == ["c1", "c2", "c3", "c4"]  # dataset order


def test_run_without_cases_or_results(tmp_path: Path) -> None:
    """A run stopped before anything was scored, and one with no case at all: a report, not an error."""
    result = _small_run(tmp_path)
    unscored = dataclasses.replace(result, results=[], _aggregates={})
    html = report.run_report_html(unscored)
    _self_contained(html)
    assert (
        len(re.findall(r'class="empty"[^>]*>no scored values<', html)) == 2
        and html.count('<tr data-case-id="') == 4
    )
    assert 'id="all-scored"' in html  # nothing unscored either: nothing was computed
    empty = dataclasses.replace(result, cases=[], results=[], _aggregates={})
    html = report.run_report_html(empty)
    _self_contained(html)
    assert "This run has no case." in html and 'class="card case-evidence"' not in html


def test_the_header_names_the_agent_model_of_a_run_without_a_judge(tmp_path: Path) -> None:
    """A run scored without a judge whose agent is an LLM: the report's header names that
    model (as clineval's own header does), not just 'judge none'."""
    result = _small_run(tmp_path)
    run = result.run.model_copy(
        update={"judge": {"name": "none"}, "config": {**result.run.config, "agent_model": "openai:gpt-4o"}}
    )
    html = report.run_report_html(dataclasses.replace(result, run=run))
    assert "judge none · agent openai:gpt-4o</p>" in html
