"""`clineval calibrate --reviews RUN --judge A --judge B`: every judge against the run's reviewers,
on the same items, through the real command and a real OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tests.clirun import invoke
from tests.review.quickstart_reviews import CASES, reviewed_store

from clineval.review.agreement import agreement_from_store
from clineval.review.calibrate import ReviewCalibrationReport
from clineval.store.sqlite import RunStore

if TYPE_CHECKING:
    from tests.conftest import QuickstartRun

    from clineval.testing import ScriptedServer

ALWAYS = """\
# a judge that says every claim is entailed (and cannot extract facts)
default:
  verdicts: {each: {label: entailed, explanation: "always entailed"}}
"""


@pytest.fixture(scope="module")
def reviewed(quickstart_run: QuickstartRun, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("calibrate-reviews")
    (folder / "always.yaml").write_text(ALWAYS, encoding="utf-8")
    return reviewed_store(quickstart_run, folder)


def _invoke(store: Path, *args: str) -> tuple[int, str, str]:
    done = invoke("calibrate", *args, "--store", str(store), "--no-cache", "-q", catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


@pytest.fixture(scope="module")
def two_judges_run(reviewed: tuple[Path, str]) -> tuple[ReviewCalibrationReport, str]:
    """One run of two judges as a user runs it: the table on the terminal, the JSON in a file."""
    store, run_id = reviewed
    always = str(store.parent / "always.yaml")
    report_file = store.parent / "report.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "220")
        code, stdout, stderr = _invoke(
            store,
            "--reviews",
            run_id,
            "-j",
            "offline",
            "-j",
            f"scripted:{always}",
            "--json",
            str(report_file),
        )
    assert code == 0, stderr
    return ReviewCalibrationReport.model_validate_json(report_file.read_text(encoding="utf-8")), stdout


@pytest.fixture(scope="module")
def two_judges(two_judges_run: tuple[ReviewCalibrationReport, str]) -> ReviewCalibrationReport:
    return two_judges_run[0]


def test_the_offline_judge_agrees_with_its_own_run(
    two_judges: ReviewCalibrationReport, reviewed: tuple[Path, str]
) -> None:
    """The run was scored by the offline judge: checking the reviewed facts again with it gives
    the same verdicts, so the same fact-level figures as `clineval agreement --reviews`."""
    store, run_id = reviewed
    with RunStore(store, readonly=True) as source:
        original = agreement_from_store(source, source.get_run(run_id))
    offline = two_judges.judge("offline")
    assert offline is not None and offline.label.startswith("offline-heuristic/")
    again = offline.row("fact/tbfact/verdict")
    before = original.row("fact/tbfact/verdict")
    assert again is not None and before is not None and again.n == before.n
    for name in ("cohen_kappa3", "cohen_kappa2", "roc_auc", "accuracy"):
        assert again.get(name).value == pytest.approx(before.get(name).value), name
    case = offline.row("case/factuality/tbfact")
    assert case is not None and case.n == len(CASES)
    assert case.get("spearman").value == pytest.approx(
        original.row("case/factuality/tbfact").get("spearman").value
    )


def test_an_always_entailed_judge_has_no_agreement_and_the_difference_says_so(
    two_judges: ReviewCalibrationReport,
) -> None:
    always = next(j for j in two_judges.judges if j.spec.startswith("scripted:"))
    row = always.row("fact/tbfact/verdict")
    assert row is not None
    # it calls everything entailed: κ is 0 by construction and its credit ranks nothing (AUC ½)
    assert row.get("cohen_kappa2").value == pytest.approx(0.0)
    assert row.get("roc_auc").value == pytest.approx(0.5)
    diff = two_judges.difference("fact/tbfact/verdict", "roc_auc", always.spec)
    offline = two_judges.judge("offline").row("fact/tbfact/verdict")  # type: ignore[union-attr]
    assert diff is not None and diff.versus == "offline"
    assert diff.difference.value == pytest.approx(0.5 - offline.get("roc_auc").value)
    assert diff.difference.ci_low is not None and diff.difference.ci_high is not None
    # both judges were measured on the same facts
    assert row.n == offline.n
    # the scripted judge cannot extract facts, so it takes no part in the case-level comparison
    assert always.row("case/factuality/tbfact") is None
    assert any("scored none of case/factuality/tbfact" in note for note in two_judges.notes)


def test_each_judge_is_stored_as_a_run(
    two_judges: ReviewCalibrationReport, reviewed: tuple[Path, str]
) -> None:
    store, run_id = reviewed
    with RunStore(store, readonly=True) as source:
        for judge in two_judges.judges:
            assert judge.run_id is not None
            record = source.get_run(judge.run_id)
            assert record.tags["calibration"] == "reviews" and record.tags["reviews_of"] == run_id
            assert record.tags["judge"] == judge.spec


def test_table_in_the_terminal(
    reviewed: tuple[Path, str], two_judges_run: tuple[ReviewCalibrationReport, str]
) -> None:
    _, run_id = reviewed
    stdout = two_judges_run[1]
    assert f"Judges against the reviewers of run {run_id}" in stdout
    assert "(1) offline-heuristic/" in stdout and "(2) scripted:always.yaml" in stdout
    assert "Δ (2) − (1)" in stdout and "ROUGE-L" in stdout and "reviewers with each other" in stdout
    assert "κ (entailed or not)" in stdout and "stored as run" in stdout


def test_an_openai_compatible_server_as_a_judge(
    reviewed: tuple[Path, str],
    llm_server: ScriptedServer,
    tmp_path: Path,
    two_judges: ReviewCalibrationReport,
) -> None:
    """A judge behind a real local HTTP server speaking the OpenAI API: every claim 'partial'."""
    store, run_id = reviewed
    copy = tmp_path / "q.db"
    with RunStore(store, readonly=True) as source, RunStore(copy) as target:
        source._conn.backup(target._conn)
    llm_server.set_script(
        {
            "rules": [
                {
                    "pattern": "check facts",
                    "json": {"verdicts": {"each": {"label": "partial", "reason": "missing"}}},
                }
            ]
        }
    )
    code, stdout, stderr = _invoke(
        copy,
        "--reviews",
        run_id,
        "-j",
        f"openai:judge-model@{llm_server.base_url}",
        "-m",
        "tbfact",
        "--json",
        "-",
    )
    assert code == 0, stderr
    report = ReviewCalibrationReport.model_validate_json(stdout)
    (served,) = report.judges
    assert served.label.startswith("openai:judge-model")
    row = served.row("fact/tbfact/verdict")
    # the same reviewed facts the offline judge was measured on
    assert row is not None and row.n == two_judges.judge("offline").row("fact/tbfact/verdict").n  # type: ignore[union-attr]
    assert llm_server.stats()["chat_requests"] > 0, "the judge was never asked"
    # every claim partial with reason missing: credit ½ for every fact, so AUC ½ and κ 0
    assert row.get("roc_auc").value == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--reviews", "RUN", "--data", "x"], "--data: --reviews measures the judges"),
        (["--reviews", "RUN", "-j", "offline", "-j", "offline"], "--judge offline given twice"),
        (["-j", "offline", "-j", "none"], "--judge given 2 times"),
        (["--metric", "tbfact"], "--metric goes with --reviews RUN"),
        (["--reviews", "RUN", "--reviewer", "carol"], "no review by carol"),
        (["--reviews", "RUN", "-j", "none"], "calibration measures a judge"),
    ],
)
def test_mistakes_are_one_line(reviewed: tuple[Path, str], args: list[str], message: str) -> None:
    store, run_id = reviewed
    code, stdout, stderr = _invoke(store, *[run_id if a == "RUN" else a for a in args])
    assert code == 2, stdout
    assert message in stderr and "Traceback" not in stderr


def test_a_calibration_run_points_to_the_reviewed_run(
    reviewed: tuple[Path, str], two_judges: ReviewCalibrationReport
) -> None:
    store, run_id = reviewed
    code, _, stderr = _invoke(store, "--reviews", str(two_judges.judges[0].run_id))
    assert code == 2
    assert f"is a calibration of the reviews of run {run_id}" in stderr
    assert f"clineval calibrate --reviews {run_id}" in stderr


def test_json_is_valid_and_complete(two_judges: ReviewCalibrationReport) -> None:
    data = json.loads(two_judges.model_dump_json())
    assert {j["spec"] for j in data["judges"]} == {
        "offline",
        next(j.spec for j in two_judges.judges if j.spec != "offline"),
    }
    assert data["items"]["fact/tbfact/verdict"] > 0
