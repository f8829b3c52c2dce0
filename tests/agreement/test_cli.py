"""`clineval agreement` end to end: a stored run, a labels file, the table and the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests import clirun

from clineval import evaluate
from clineval.agreement import AgreementReport

REFERENCE = "potassium 4.1 mmol/L within normal range"
RESPONSES = {
    "c0": "potassium 4.1 mmol/L within normal range",
    "c1": "potassium 4.1 mmol/L normal",
    "c2": "sodium 140",
    "c3": "potassium is fine",
    "c4": "4.1 mmol/L within normal range",
    "c5": "no relevant finding",
    "c6": "potassium 4.1 mmol/L",
    "c7": "potassium within normal range at 4.1",
}
# Clinicians' verdicts (is the answer acceptable?) and an importance grade; c7 is unlabelled,
# zz is a label for a case that is not in the run.
LABELS = """id,acceptable,importance
c0,yes,high
c1,yes,high
c2,no,low
c3,no,medium
c4,yes,medium
c5,no,low
c6,yes,high
zz,no,low
"""


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("agreement-cli")
    cases = [{"id": cid, "response": text, "reference": REFERENCE} for cid, text in RESPONSES.items()]
    result = evaluate(cases, ["token_f1"], store=folder / "runs.db", progress=False, judge="none")
    (folder / "labels.csv").write_text(LABELS, encoding="utf-8")
    return folder, result.run_id


def invoke(folder: Path, *args: str) -> tuple[int, str, str]:
    done = clirun.invoke("agreement", *args, "--store", str(folder / "runs.db"))
    return done.exit_code, done.stdout, done.stderr


def test_binary_labels_table_and_json(stored: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder, run_id = stored
    monkeypatch.setenv("COLUMNS", "160")
    out_file = folder / "report.json"
    code, stdout, stderr = invoke(
        folder,
        run_id,
        "--metric",
        "token_f1",
        "--labels",
        str(folder / "labels.csv"),
        "--label-column",
        "acceptable",
        "--kind",
        "binary",
        "--json",
        str(out_file),
    )
    assert code == 0, stderr
    for text in ("ROC AUC", "Cohen's κ", "F1 (positive: yes)", "95% CI", "positive class 'yes'"):
        assert text in stdout
    assert "7 of 8 run cases have a label" in stdout
    assert "1 run case(s) without a label (c7)" in stdout
    assert "1 label(s) without a case in the run (zz)" in stdout
    assert f"wrote {out_file}" in stderr
    report = AgreementReport.model_validate_json(out_file.read_text(encoding="utf-8"))
    assert report.kind == "binary" and report.n == 7 and not report.kind_inferred
    assert report.join is not None and report.join.run_id == run_id and report.join.labels_without_case == 1
    auc = report.get("roc_auc")
    assert auc.value is not None and auc.value > 0.9 and auc.ci_low is not None


def test_ordinal_labels_on_stdout_as_json(stored: tuple[Path, str]) -> None:
    folder, _ = stored
    code, stdout, stderr = invoke(
        folder,
        "latest",
        "-m",
        "token_f1",
        "--labels",
        str(folder / "labels.csv"),
        "--label-column",
        "importance",
        "--order",
        "low,medium,high",
        "--score",
        "recall",
        "--json",
        "-",
    )
    assert code == 0, stderr
    data = json.loads(stdout)
    assert data["kind"] == "ordinal" and data["kind_inferred"] is True
    assert data["label_order"] == ["low", "medium", "high"]
    assert data["join"]["score"] == "recall"
    names = [s["name"] for s in data["statistics"]]
    assert names[-3:] == ["spearman", "kendall", "pearson"]
    spearman = next(s for s in data["statistics"] if s["name"] == "spearman")
    assert spearman["value"] > 0.5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "rouge", "--labels", "labels.csv"], "has no metric 'rouge'; its metrics are 'token_f1'"),
        (
            ["-m", "token_f1", "--labels", "labels.csv"],
            "no label column 'label'; its columns are 'id', 'acceptable', 'importance'",
        ),
        (["-m", "token_f1", "--labels", "missing.csv"], "missing.csv does not exist"),
        (["-m", "token_f1", "--labels", "bad.jsonl", "--label-column", "x"], "bad.jsonl cannot be read"),
        (["-m", "token_f1", "--labels", "other.csv"], "matches a case of run"),
        (
            ["-m", "token_f1", "--labels", "labels.csv", "--label-column", "acceptable", "--score", "bleu"],
            "no sub-score 'bleu'",
        ),
        (
            ["-m", "token_f1", "--labels", "labels.csv", "--label-column", "importance", "--order", "low"],
            "--order 'low'",
        ),
        (
            ["-m", "token_f1", "--labels", "labels.csv", "--label-column", "importance", "--kind", "ordinal"],
            "give their order",
        ),
    ],
)
def test_user_mistakes_exit_2_with_one_clear_line(
    stored: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    folder, run_id = stored
    monkeypatch.chdir(folder)
    (folder / "bad.jsonl").write_text('{"id": "c1", "x": \n', encoding="utf-8")
    (folder / "other.csv").write_text("id,label\nq1,yes\n", encoding="utf-8")
    code, stdout, stderr = invoke(folder, run_id, *args)
    assert code == 2
    assert stderr.startswith("error: ") and message in stderr
    assert "Traceback" not in stderr and stdout == ""


def test_missing_store_and_run(tmp_path: Path, stored: tuple[Path, str]) -> None:
    done = clirun.invoke(
        "agreement", "latest", "-m", "token_f1", "--labels", "x.csv", "--store", str(tmp_path / "no.db")
    )
    assert done.exit_code == 2 and "no run store" in done.stderr
    folder, _ = stored
    code, _, stderr = invoke(folder, "nosuchrun", "-m", "token_f1", "--labels", "x.csv")
    assert code == 2 and "Traceback" not in stderr


def test_help_lists_the_command() -> None:
    done = clirun.invoke("--help")
    assert "agreement" in done.output
    helped = clirun.invoke("agreement", "--help")
    assert helped.exit_code == 0 and "--label-column" in helped.output and "--order" in helped.output
