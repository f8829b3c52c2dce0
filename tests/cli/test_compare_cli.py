"""`clineval compare`, the gates of `clineval run` and the `runs` filters, end to end with CliRunner."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import Result
from tests.clirun import invoke
from tests.compare.data import FLIPPED, METRICS, cases, write

from clineval import evaluate
from clineval.store import RunStore

RUN_METRICS = ",".join(METRICS)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Data files a.jsonl and b.jsonl, and a store with run A (name 'base') and run B."""
    folder = tmp_path_factory.mktemp("compare-cli")
    write(folder, "a")
    write(folder, "b")
    store = folder / "runs.db"
    evaluate(
        cases("a"), METRICS, store=store, judge="none", progress=False, name="base", tags={"suite": "qa"}
    )
    evaluate(
        cases("b"),
        METRICS,
        store=store,
        judge="none",
        progress=False,
        name="candidate",
        tags={"suite": "qa", "pipeline": "v2"},
    )
    return folder


def _ids(folder: Path) -> tuple[str, str]:
    with RunStore(folder / "runs.db") as store:
        runs = {r.name: r.id for r in store.list_runs()}
    return runs["base"], runs["candidate"]


def _count(folder: Path) -> int:
    with RunStore(folder / "runs.db") as store:
        return len(store.list_runs())


def clineval(folder: Path, *args: str) -> Result:
    return invoke(*args, "--store", str(folder / "runs.db"), env={"COLUMNS": "200"})


def run(folder: Path, version: str, *gates: str) -> Result:
    data = str(folder / f"{version}.jsonl")
    return clineval(folder, "run", "--data", data, "-m", RUN_METRICS, "--judge", "none", "-q", *gates)


# --- compare -----------------------------------------------------------------------------------


def test_compare_shows_regressions_and_improvements(folder: Path) -> None:
    base, candidate = _ids(folder)
    done = clineval(folder, "compare", base, candidate)
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert "exact_match" in out and "McNemar exact" in out and "permutation exact" in out
    assert out.count("regressed") >= 2 and "improved" in out
    assert "12 case(s) worse" in out and "c00 (1 → 0)" in out and "and 2 more" in out
    assert "c39 · exact_match: scored → error" in out
    assert "warning: the runs' datasets differ" in out
    assert "regressed: exact_match, token_f1" in out and "improved: latency" in out


def test_compare_fail_on_regression_and_json(folder: Path, tmp_path: Path) -> None:
    base, candidate = _ids(folder)
    target = tmp_path / "comparison.json"
    done = clineval(folder, "compare", base, candidate, "--fail-on-regression", "--json", str(target))
    assert done.exit_code == 1, done.output
    report = json.loads(target.read_text())
    verdicts = {m["metric"]: m["verdict"] for m in report["metrics"]}
    assert verdicts == {
        "exact_match": "regressed",
        "token_f1": "regressed",
        "latency": "improved",
        "failure": "no significant change",
    }
    regressed = next(m for m in report["metrics"] if m["metric"] == "exact_match")["regressed_cases"]
    assert [c["case_id"] for c in regressed] == FLIPPED
    # the improvement alone does not fail
    only_latency = clineval(folder, "compare", base, candidate, "-m", "latency", "--fail-on-regression")
    assert only_latency.exit_code == 0, only_latency.output
    # JSON only on standard output
    as_json = clineval(folder, "compare", base, candidate, "--json", "-", "--sub-scores")
    assert as_json.exit_code == 0
    names = [m["metric"] for m in json.loads(as_json.stdout)["metrics"]]
    assert "token_f1.precision" in names


def test_compare_user_errors(folder: Path, tmp_path: Path) -> None:
    base, candidate = _ids(folder)
    unknown = clineval(folder, "compare", base, candidate, "-m", "nope")
    assert unknown.exit_code == 2
    assert "error: metric 'nope' is not in both runs; metrics of both: exact_match" in unknown.stderr
    missing = clineval(folder, "compare", base, "nope")
    assert missing.exit_code == 2 and "no run 'nope'" in missing.stderr
    no_store = invoke("compare", "a", "b", "--store", str(tmp_path / "none.db"))
    assert no_store.exit_code == 2 and "no run store" in no_store.stderr
    bad_alpha = clineval(folder, "compare", base, candidate, "--alpha", "2")
    assert bad_alpha.exit_code == 2 and "--alpha" in bad_alpha.stderr


# --- gates on `run` ------------------------------------------------------------------------------


def test_fail_under_passes_and_fails(folder: Path) -> None:
    passed = run(folder, "b", "--fail-under", "exact_match=0.6", "--fail-under", "token_f1.recall=0.9")
    assert passed.exit_code == 0, passed.output
    assert "pass  fail-under exact_match=0.6" in passed.stdout
    failed = run(folder, "b", "--fail-under", "exact_match=0.9")
    assert failed.exit_code == 1, failed.output
    assert (
        "FAIL  fail-under exact_match=0.9: exact_match: mean 0.6923 over 39 scored case(s)" in failed.stdout
    )
    assert "1 of 1 gate(s) failed" in failed.stdout


def test_fail_over_latency(folder: Path) -> None:
    # B's latency: 1.5 + (i mod 5) · 0.1, mean 1.7
    assert run(folder, "b", "--fail-over", "latency=1.8").exit_code == 0
    failed = run(folder, "b", "--fail-over", "latency=1.6")
    assert failed.exit_code == 1 and "is above 1.6" in failed.stdout


def test_no_regression_vs_baseline(folder: Path) -> None:
    base, _ = _ids(folder)
    regressed = run(folder, "b", "--no-regression-vs", base)
    assert regressed.exit_code == 1, regressed.output
    assert f"FAIL  no-regression-vs {base}: regressed vs {base}: exact_match" in regressed.stdout
    identical = run(folder, "a", "--no-regression-vs", base)
    assert identical.exit_code == 0, identical.output
    assert f"pass  no-regression-vs {base}: no metric regressed" in identical.stdout


def test_junit_report(folder: Path, tmp_path: Path) -> None:
    target = tmp_path / "reports" / "junit.xml"
    done = run(
        folder, "b", "--fail-under", "exact_match=0.5", "--fail-over", "latency=1", "--junit", str(target)
    )
    assert done.exit_code == 1, done.output
    root = ET.parse(target).getroot()
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == [*METRICS, "gates"]

    def counts(element: ET.Element) -> tuple[str | None, ...]:
        return tuple(element.get(k) for k in ("tests", "failures", "errors", "skipped"))

    # exact_match: 12 wrong answers fail, c39 (no response) is an error
    assert counts(suites["exact_match"]) == ("40", "12", "1", "0")
    assert counts(suites["token_f1"]) == ("40", "0", "1", "0")
    assert counts(suites["failure"]) == ("40", "0", "0", "0")
    assert counts(suites["gates"]) == ("2", "1", "0", "0")
    assert counts(root) == ("162", "13", "2", "0")


def test_bad_gate_options_fail_before_the_run(folder: Path) -> None:
    before = _count(folder)
    syntax = run(folder, "b", "--fail-under", "exact_match")
    assert syntax.exit_code == 2
    assert "Invalid value for '--fail-under': 'exact_match': expected METRIC=VALUE" in syntax.stderr
    number = run(folder, "b", "--fail-over", "latency=fast")
    assert number.exit_code == 2 and "'fast' is not a number" in number.stderr
    baseline = run(folder, "b", "--no-regression-vs", "nope")
    assert baseline.exit_code == 2
    assert "error: --no-regression-vs nope: no run 'nope'" in baseline.stderr
    metric = run(folder, "b", "--fail-under", "exact_mach=0.5")
    assert metric.exit_code == 2
    assert "the run has no metric 'exact_mach'. Did you mean 'exact_match'?" in metric.stderr
    assert "Traceback" not in syntax.output + number.output + baseline.output + metric.output
    assert _count(folder) == before


def test_gates_after_resume(folder: Path) -> None:
    _, candidate = _ids(folder)
    done = clineval(folder, "run", "--resume", candidate, "-q", "--fail-under", "exact_match=0.9")
    assert done.exit_code == 1, done.output
    assert "FAIL  fail-under exact_match=0.9" in done.stdout
    typo = clineval(folder, "run", "--resume", candidate, "-q", "--fail-under", "exact=0.9")
    assert typo.exit_code == 2 and "no metric 'exact'" in typo.stderr


# --- runs ------------------------------------------------------------------------------------------


def test_runs_filters_by_tag_and_name(folder: Path) -> None:
    base, candidate = _ids(folder)
    both = clineval(folder, "runs", "--tag", "suite=qa")
    assert both.exit_code == 0 and base in both.stdout and candidate in both.stdout
    assert "suite=qa," in both.stdout and both.stdout.index("suite=qa") < both.stdout.index("pipeline=v2")
    v2 = clineval(folder, "runs", "--tag", "suite=qa", "--tag", "pipeline=v2")
    assert candidate in v2.stdout and base not in v2.stdout
    named = clineval(folder, "runs", "--name", "BASE")
    assert base in named.stdout and candidate not in named.stdout
    none = clineval(folder, "runs", "--tag", "suite=other")
    assert none.exit_code == 0 and "No run matches the filters." in none.stdout
    bad = clineval(folder, "runs", "--tag", "suite")
    assert bad.exit_code == 2 and "--tag 'suite': expected KEY=VALUE" in bad.stderr


def test_gates_on_a_stored_run_with_show(folder: Path, tmp_path: Path) -> None:
    base, candidate = _ids(folder)
    failed = clineval(
        folder, "show", candidate, "--fail-under", "exact_match=0.9", "--no-regression-vs", base
    )
    assert failed.exit_code == 1, failed.output
    assert (
        "FAIL  fail-under exact_match=0.9" in failed.stdout
        and f"FAIL  no-regression-vs {base}" in failed.stdout
    )
    report = tmp_path / "show.xml"
    passed = clineval(folder, "show", base, "--fail-under", "exact_match=0.5", "--junit", str(report))
    assert passed.exit_code == 0, passed.output
    assert report.exists()
    unknown = clineval(folder, "show", base, "--fail-under", "exact_mach=0.5")
    assert unknown.exit_code == 2 and "Did you mean 'exact_match'" in unknown.output
