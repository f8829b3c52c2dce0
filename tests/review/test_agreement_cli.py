"""`clineval agreement RUN --reviews` end to end on the quickstart run with stored reviews: the
printed tables, the JSON report, and the same figures as the Python API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tests.clirun import invoke
from tests.review.quickstart_reviews import reviewed_store

from clineval.review.agreement import ReviewAgreementReport, agreement_from_store
from clineval.store.sqlite import RunStore

if TYPE_CHECKING:
    from tests.conftest import QuickstartRun


@pytest.fixture(scope="module")
def reviewed(quickstart_run: QuickstartRun, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return reviewed_store(quickstart_run, tmp_path_factory.mktemp("reviews-cli"))


def _invoke(store: Path, *args: str) -> tuple[int, str, str]:
    done = invoke("agreement", *args, "--store", str(store))
    return done.exit_code, done.stdout, done.stderr


def test_json_report_matches_the_python_api(reviewed: tuple[Path, str]) -> None:
    store_path, run_id = reviewed
    code, stdout, stderr = _invoke(store_path, "latest", "--reviews", "--json", "-")
    assert code == 0, stderr
    report = ReviewAgreementReport.model_validate_json(stdout)
    with RunStore(store_path, readonly=True) as store:
        expected = agreement_from_store(store, store.get_run(run_id))
    assert report == expected
    assert report.reviewers == ["ann", "bob"] and report.cases_reviewed == 6
    facts = report.row("fact/tbfact/verdict")
    assert facts is not None and facts.cases == 6 and facts.reviewer_pairs == facts.n
    case = report.row("case/factuality/tbfact")
    assert case is not None and case.n == 6 and case.reviewer_pairs == 6


def test_printed_tables_name_the_figures_baselines_and_disagreements(
    reviewed: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store_path, run_id = reviewed
    monkeypatch.setenv("COLUMNS", "220")
    code, stdout, stderr = _invoke(store_path, run_id, "--reviews", "--disagreements", "3")
    assert code == 0, stderr
    assert f"Agreement with reviewers · run {run_id}" in stdout
    assert "2 reviewer(s): ann, bob · 6 case(s) reviewed" in stdout
    assert "Facts of tbfact: does the other text state the fact? (judge offline-heuristic/" in stdout
    for words in ("κ (3 verdicts)", "κ (entailed or not)", "ROC AUC of the fact's credit", "Spearman ρ"):
        assert words in stdout
    assert "ROUGE-L · Δ metric − it [95% CI]" in stdout and "content-word share" in stdout
    assert "reviewers with each other (the ceiling)" in stdout
    assert "interval" in stdout and "wide from 6 cases" in stdout
    assert "Disagreements (" in stdout and "3 shown" in stdout
    flat = " ".join(stdout.split())  # the hint may wrap at the terminal's width
    assert (
        f"Each case opens in clineval view at its item, e.g. http://127.0.0.1:8765/runs/{run_id}/cases/"
        in flat
    )
    assert "reference fact" in stdout or "response fact" in stdout


def test_one_reviewer_and_one_metric(reviewed: tuple[Path, str]) -> None:
    store_path, run_id = reviewed
    code, stdout, stderr = _invoke(
        store_path, run_id, "--reviews", "--reviewer", "bob", "-m", "tbfact", "--json", "-"
    )
    assert code == 0, stderr
    report = json.loads(stdout)
    assert report["reviewers"] == ["bob"]
    assert all(row["reviewer_pairs"] == 0 for row in report["rows"])
    assert {row["metric"] for row in report["rows"]} == {"tbfact"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--reviews"], "--reviews needs the run"),
        (
            ["latest", "--reviews", "--labels", "x.csv"],
            "--labels: --reviews reads the reviews stored with the run",
        ),
        (["latest", "--reviews", "--reviewer", "carol"], "--reviewer carol: no verdict of this reviewer"),
        (["latest", "--reviews", "-m", "nope"], "--metric nope: run "),
        (
            ["latest", "--reviewer", "ann", "-m", "tbfact", "--labels", "x.csv"],
            "--reviewer goes with --reviews",
        ),
        (["latest", "-m", "tbfact"], "missing --labels FILE"),
    ],
)
def test_mistakes_are_one_line(reviewed: tuple[Path, str], args: list[str], message: str) -> None:
    store_path, _ = reviewed
    code, stdout, stderr = _invoke(store_path, *args)
    assert code == 2, stdout
    assert message in stderr and "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
