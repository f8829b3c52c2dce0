"""``clineval calibrate --judge nli:PATH`` and ``clineval run`` with ``judge: nli:PATH``, through
the real command line, with the tiny random model (its figures mean nothing: these tests
check that the judge runs, is named and is recorded)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.clirun import invoke

from clineval.calibration import CalibrationReport, load_samples, select_samples
from clineval.calibration.data import write_samples
from clineval.store.sqlite import RunStore


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # the judge cache and default outputs stay in the test's folder
    for name in ("CLINEVAL_JUDGE", "CLINEVAL_STORE", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "200")


def test_calibrate_reports_the_nli_judge(tiny_model: Path, tmp_path: Path) -> None:
    data = select_samples(load_samples(), kqa_pairs=3, kqa_contradictions=1, medec_per_type=1, radfact=1)
    write_samples(data, tmp_path / "samples")
    shutil.copytree(tiny_model, tmp_path / "tiny-nli")
    result = invoke(
        "calibrate",
        "--judge",
        "nli:tiny-nli",  # relative to the working directory
        "--data",
        "samples",
        "--protocol",
        "kqa_nli,kqa_support,radfact",  # the claim check, grounding and TBFact; MEDEC's notes take longer
        "--store",
        "runs.db",
        "--json",
        "report.json",
        "-q",
    )
    assert result.exit_code == 0, (result.output, result.exception)
    report = CalibrationReport.model_validate_json((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report.judge == "nli:tiny-nli" and report.judge_kind == "heuristic"
    assert [p.name for p in report.protocols] == ["kqa_nli", "kqa_support", "radfact"]
    assert all(p.unscored == 0 and p.n > 0 for p in report.protocols)
    kqa = report.protocol("kqa_nli")
    assert kqa is not None and kqa.figure("kappa3") is not None
    assert "calibration of judge nli:tiny-nli (heuristic) on the sample files in samples" in result.stdout
    assert report.run_id is not None
    with RunStore(tmp_path / "runs.db", readonly=True) as store:
        judge = store.get_run(report.run_id).judge or {}
    assert judge["provider"] == "nli" and judge["config"] == "nli:tiny-nli"
    assert judge["verifier_model"]["path"] == str((tmp_path / "tiny-nli").resolve())
    assert len(judge["verifier_model"]["sha256"]) == 64


def test_calibrate_with_a_missing_model_folder_is_one_line(tmp_path: Path) -> None:
    result = invoke(
        "calibrate", "--judge", "nli:nowhere", "--protocol", "refusal", "--store", "runs.db", "-q"
    )
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Traceback" not in result.output
    assert result.stderr.strip() == f"error: judge nli:{tmp_path / 'nowhere'}: no such model folder"


def test_a_run_file_with_an_nli_judge(tiny_model: Path, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    shutil.copytree(tiny_model, folder / "models" / "tiny-nli")
    rows = [
        {
            "id": "dose",
            "input": "What was started?",
            "response": "The patient was started on lisinopril 5 mg daily.",
            "reference": "The patient was started on lisinopril 50 mg daily.",
        }
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "run.yaml").write_text(
        "name: nli\ndata: cases.jsonl\nmetrics: [tbfact]\njudge: nli:models/tiny-nli\n", encoding="utf-8"
    )
    result = invoke("run", str(folder / "run.yaml"), "--store", "runs.db")
    assert result.exit_code == 0, (result.output, result.exception)
    assert "· judge nli:tiny-nli ·" in " ".join(result.stdout.split())
    with RunStore(tmp_path / "runs.db", readonly=True) as store:
        [record] = store.list_runs()
        [row] = store.load_results(record.id)
    facts = row.score.details["facts"]
    assert row.score.details["judge"] == "nli:tiny-nli"
    # the dose swap is caught by the offline check whatever the random model says
    assert [(f["label"], f["reason"]) for f in facts] == [("not_entailed", "incorrect")] * 2
    assert row.score.value == 0.0
