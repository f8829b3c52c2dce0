"""`clineval calibrate` end to end with the offline judge, and its user errors.

The run uses a small sample folder written by ``write_samples`` (a few records of each
packaged set), so that every protocol runs in seconds; one test runs a protocol on the
packaged samples themselves.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import Result
from tests.clirun import invoke

from clineval import evaluate
from clineval.calibration import CalibrationReport, load_samples, select_samples
from clineval.calibration.data import write_samples

PROTOCOLS = ("kqa_nli", "kqa_support", "radfact", "medec", "refusal")


def _error_line(result: Result) -> str:
    """A user error: status 2, one line on standard error, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # the judge cache and default outputs stay in the test's folder
    for name in ("CLINEVAL_JUDGE", "CLINEVAL_STORE", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "200")


class Calibrated:
    def __init__(self, folder: Path, store: Path, result: Result, report: CalibrationReport):
        self.folder, self.store, self.result, self.report = folder, store, result, report

    @property
    def run_id(self) -> str:
        assert self.report.run_id is not None
        return self.report.run_id


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Calibrated:
    """One calibration of the offline judge on a small sample folder, every protocol."""
    folder = tmp_path_factory.mktemp("calibrate-cli")
    data = select_samples(
        load_samples(), kqa_pairs=6, kqa_contradictions=1, medec_per_type=1, refusal_per_category=1, radfact=3
    )
    write_samples(data, folder / "samples")
    store = folder / "runs.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.delenv("CLINEVAL_JUDGE", raising=False)
        patch.setenv("COLUMNS", "200")
        result = invoke(
            "calibrate",
            "--data",
            str(folder / "samples"),
            "--store",
            str(store),
            "--json",
            str(folder / "report.json"),
            "-q",
        )
    assert result.exit_code == 0, (result.output, result.exception)
    report = CalibrationReport.model_validate_json((folder / "report.json").read_text(encoding="utf-8"))
    return Calibrated(folder, store, result, report)


def test_calibrate_runs_every_protocol_stores_the_run_and_says_how_to_export_it(
    calibrated: Calibrated,
) -> None:
    report, out = calibrated.report, calibrated.result.stdout
    assert report.judge == "offline" and report.judge_kind == "heuristic"
    assert [p.name for p in report.protocols] == list(PROTOCOLS)
    sizes = {p.name: p.n for p in report.protocols}
    assert sizes == {"kqa_nli": 11, "kqa_support": 11, "radfact": 3, "medec": 5, "refusal": 18}
    assert report.seconds is not None and report.seconds > 0
    assert all(p.unscored == 0 for p in report.protocols)
    # what a person sees: each protocol's title and counts, the table, the verdict column
    for protocol in report.protocols:
        assert protocol.title in out
    assert "n = 11 statements scored · 0 statements unscored" in out
    assert "n = 5 texts · 0 text comparisons unscored" in out
    assert "judge − baseline [95% CI]" in out and "verdict" in out
    assert "Physicians among themselves (the ceiling)" in out
    assert (
        f"calibration of judge offline (heuristic) on the sample files in {calibrated.folder / 'samples'}"
        in out
    )
    store = str(calibrated.store)
    assert f"Saved as run {report.run_id}." in out
    assert f"clineval export {report.run_id} --store {store}" in out
    assert f"clineval calibrate --from {report.run_id} --store {store}" in out
    # the JSON file is the report shown
    kqa = report.protocol("kqa_nli")
    assert kqa is not None and kqa.figure("kappa3") is not None
    assert kqa.figure("kappa3").judge.fmt() in out  # type: ignore[union-attr]


def test_from_a_stored_run_gives_the_same_report_without_the_judge(calibrated: Calibrated) -> None:
    again = calibrated.folder / "again.json"
    result = invoke(
        "calibrate", "--from", calibrated.run_id, "--store", str(calibrated.store), "--json", str(again)
    )
    assert result.exit_code == 0, result.output
    assert f"Stored run {calibrated.run_id}." in result.stdout
    assert f"wrote {again}" in result.stderr
    original = calibrated.report.model_dump()
    reanalysed = CalibrationReport.model_validate_json(again.read_text(encoding="utf-8")).model_dump()
    assert reanalysed["seconds"] is None  # nothing was run
    original["seconds"] = None
    assert reanalysed == original


def test_from_with_protocols_shows_only_those(calibrated: Calibrated) -> None:
    result = invoke(
        "calibrate",
        "--from",
        "latest",
        "--store",
        str(calibrated.store),
        "--protocol",
        "refusal",
        "--json",
        "-",
    )
    assert result.exit_code == 0, result.output
    report = CalibrationReport.model_validate_json(result.stdout)  # JSON alone on standard output
    assert [p.name for p in report.protocols] == ["refusal"]
    assert report.protocols[0] == calibrated.report.protocol("refusal")


def test_markdown_on_standard_output_and_to_a_file(calibrated: Calibrated) -> None:
    result = invoke(
        "calibrate", "--from", calibrated.run_id, "--store", str(calibrated.store), "--markdown", "-"
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "|  | `offline` |"
    assert "### MEDEC: one inserted medical error per text" in lines
    assert "| texts (unscored text comparisons) | 5 (0) |" in lines
    assert "Saved as run" not in result.stdout and "Stored run" not in result.stdout
    path = calibrated.folder / "report.md"
    result = invoke(
        "calibrate", "--from", calibrated.run_id, "--store", str(calibrated.store), "--markdown", str(path)
    )
    assert result.exit_code == 0
    assert path.read_text(encoding="utf-8").splitlines() == lines
    assert "calibration of judge offline" in result.stdout  # the terminal report as well


def test_show_and_export_work_on_a_calibration_run(calibrated: Calibrated) -> None:
    store = str(calibrated.store)
    shown = invoke("show", calibrated.run_id, "--store", store)
    assert shown.exit_code == 0, shown.output
    assert "claim_check" in shown.stdout and "refusal_labelled" in shown.stdout
    assert f"clineval calibrate --from {calibrated.run_id} --store {store}" in " ".join(shown.stdout.split())
    target = calibrated.folder / "export.jsonl"
    exported = invoke("export", calibrated.run_id, "--store", store, "-o", str(target))
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    protocols = {row["case"]["metadata"]["protocol"] for row in rows}
    assert protocols == {"kqa_nli", "kqa_support", "radfact_phrases", "radfact_reports", "medec", "refusal"}
    # K-QA: one case per answer (2), per statement (11); RadFact: 2 sides + 1 report per pair;
    # MEDEC: 3 comparisons per text with a clean sibling; refusal: one per response
    assert len(rows) == 2 + 11 + 3 * 3 + 5 * 3 + 18


def test_a_protocol_on_the_packaged_samples(tmp_path: Path) -> None:
    result = invoke("calibrate", "--protocol", "refusal", "--store", str(tmp_path / "s.db"), "-q")
    assert result.exit_code == 0, (result.output, result.exception)
    out = result.stdout
    assert "on the samples packaged with clineval" in out
    assert "n = 90 responses · 0 responses unscored" in out
    assert "refusal keywords" in out
    assert "K-QA: statements" not in out  # only the protocol asked for


# --- user errors ------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_unknown_protocol(tmp_path: Path) -> None:
    line = _error_line(invoke("calibrate", "--protocol", "kqa_nli,nope", "--store", str(tmp_path / "s.db")))
    assert line == (
        "error: --protocol 'nope': unknown; expected one of kqa_nli, kqa_support, radfact, medec, refusal"
    )
    assert not (tmp_path / "s.db").exists()  # nothing was run


def test_data_folder_that_does_not_exist(tmp_path: Path) -> None:
    line = _error_line(invoke("calibrate", "--data", str(tmp_path / "nowhere")))
    assert line.startswith(f"error: --data {tmp_path / 'nowhere'}: no such folder; expected the public sets")


def test_data_folder_without_the_sets(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    line = _error_line(invoke("calibrate", "--data", str(tmp_path / "empty"), "--protocol", "kqa_nli"))
    expected = tmp_path / "empty" / "kqa" / "NLI_medical_annotator.csv"
    assert f"cannot read {expected}: No such file or directory" in line
    assert "expected the public sets as released (kqa/, medec/, radfact/, medsafetybench/" in line


def test_sample_folder_without_the_protocol_s_set(tmp_path: Path) -> None:
    data = select_samples(load_samples(), kqa_pairs=1, refusal_per_category=1)
    data.medec = []
    write_samples(data, tmp_path / "samples")
    line = _error_line(invoke("calibrate", "--data", str(tmp_path / "samples"), "--protocol", "medec"))
    assert line == f"error: --data {tmp_path / 'samples'} has no MEDEC texts, which protocol medec needs"


def test_sample_file_that_is_not_json(tmp_path: Path) -> None:
    write_samples(select_samples(load_samples(), kqa_pairs=1), tmp_path / "samples")
    (tmp_path / "samples" / "refusal.jsonl").write_text("{not json\n", encoding="utf-8")
    line = _error_line(invoke("calibrate", "--data", str(tmp_path / "samples")))
    assert f"{tmp_path / 'samples' / 'refusal.jsonl'}:1: not valid JSON" in line


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("foo", "error: unknown judge 'foo': use 'offline', 'none', 'openai:MODEL[@BASE_URL]'"),
        ("none", "error: --judge 'none': calibration measures a judge; give 'offline',"),
        ("openai:", "error: --judge 'openai:': an openai judge needs a model"),
        ("openai:gpt-4o-mini", "error: the judge 'openai:gpt-4o-mini' needs an API key in $OPENAI_API_KEY"),
    ],
)
def test_bad_judge_spec(spec: str, expected: str, tmp_path: Path) -> None:
    line = _error_line(invoke("calibrate", "--judge", spec, "--store", str(tmp_path / "s.db")))
    assert line.startswith(expected), line
    assert not (tmp_path / "s.db").exists()


def test_unreachable_endpoint(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    line = _error_line(
        invoke("calibrate", "--judge", f"openai:judge@{url}", "--store", str(tmp_path / "s.db"))
    )
    assert line.startswith(f"error: --judge 'openai:judge@{url}': cannot reach the judge endpoint {url} (")
    assert line.endswith("start the server or check the URL")
    assert not (tmp_path / "s.db").exists()


def test_from_a_run_that_is_not_a_calibration_run(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    other = evaluate(
        [{"id": "a", "response": "potassium 4.1", "reference": "potassium 4.1"}],
        ["token_f1"],
        store=store,
        judge="none",
        progress=False,
    )
    line = _error_line(invoke("calibrate", "--from", other.run_id, "--store", str(store)))
    assert line == (
        f"error: --from {other.run_id}: run {other.run_id} is not a calibration run (it was not made by "
        "'clineval calibrate'); give the id of a run that 'clineval calibrate' stored"
    )


def test_from_refuses_options_that_would_change_the_run(calibrated: Calibrated) -> None:
    line = _error_line(
        invoke(
            "calibrate", "--from", calibrated.run_id, "--store", str(calibrated.store), "--judge", "offline"
        )
    )
    assert line.startswith("error: --from analyses a stored run with its own judge and data; --judge cannot")
    line = _error_line(
        invoke("calibrate", "--from", calibrated.run_id, "--store", str(calibrated.store), "-p", "nope")
    )
    assert "unknown; expected one of" in line


def test_from_a_protocol_the_run_does_not_have(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    made = invoke("calibrate", "--protocol", "refusal", "--store", str(store), "-q")
    assert made.exit_code == 0, made.output
    line = _error_line(invoke("calibrate", "--from", "latest", "--store", str(store), "--protocol", "medec"))
    assert line.startswith("error: --protocol medec: run ") and line.endswith(
        "has no such protocol (it has refusal)"
    )


def test_from_without_a_store_or_with_an_unknown_run(calibrated: Calibrated, tmp_path: Path) -> None:
    line = _error_line(invoke("calibrate", "--from", "latest", "--store", str(tmp_path / "none.db")))
    assert line.startswith(f"error: no run store at {tmp_path / 'none.db'}")
    line = _error_line(invoke("calibrate", "--from", "zzzz", "--store", str(calibrated.store)))
    assert "zzzz" in line


def test_output_options(tmp_path: Path) -> None:
    line = _error_line(invoke("calibrate", "--json", "-", "--markdown", "-"))
    assert line == "error: --json - and --markdown -: only one of them can take standard output"
    line = _error_line(
        invoke("calibrate", "--json", str(tmp_path / "no" / "r.json"), "--store", str(tmp_path / "s.db"))
    )
    assert line == f"error: --json {tmp_path / 'no' / 'r.json'}: the folder {tmp_path / 'no'} does not exist"
    assert not (tmp_path / "s.db").exists()  # checked before the judge runs
