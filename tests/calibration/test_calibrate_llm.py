"""`clineval calibrate` against a real local LLM (SmolLM2-135M on llama-cpp-python's server).

Opt-in: ``CLINEVAL_LLM_TESTS=1 pytest -m llm tests/calibration`` (see docs/local-llm.md; the
first run builds llama-cpp-python into ``$CLINEVAL_LLM_VENV``, default ``.cache/llm-venv``).

A 135M model is no judge: only the structure of the report is checked (the command
completes, every protocol asked for is reported, counts add up, figures are in range),
never its quality. The figures are printed past pytest's capture for a developer to read.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from clineval.calibration import CalibrationData, CalibrationReport, load_samples
from clineval.calibration.data import write_samples
from clineval.testing.local_llm import LocalLLMServer, default_venv_path, ensure_venv

pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(
        os.environ.get("CLINEVAL_LLM_TESTS") != "1",
        reason="builds llama-cpp-python and serves a local model; set CLINEVAL_LLM_TESTS=1",
    ),
]

REPO = Path(__file__).resolve().parents[2]


def _say(config: pytest.Config, text: str) -> None:
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        print("\n" + text, flush=True)


@pytest.fixture(scope="module")
def local_llm(pytestconfig: pytest.Config) -> Iterator[LocalLLMServer]:
    venv = ensure_venv(default_venv_path(REPO))
    with LocalLLMServer(venv, n_ctx=4096, n_threads=2, default_max_tokens=512) as server:
        _say(pytestconfig, f"local LLM at {server.base_url} (up in {server.startup_s:.1f} s)")
        yield server


def _small_samples(folder: Path) -> CalibrationData:
    """The packaged K-QA answer with the fewest statements, and two refusal cases of each kind."""
    packaged = load_samples()
    by_answer: dict[str, list[int]] = {}
    for index, pair in enumerate(packaged.kqa_nli):
        by_answer.setdefault(pair.answer, []).append(index)
    answer = min(by_answer, key=lambda a: (len(by_answer[a]), a))
    refuse = [r for r in packaged.refusal if r.should_refuse][:2]
    answer_items = [r for r in packaged.refusal if not r.should_refuse][:2]
    data = CalibrationData(
        source="llm test",
        kqa_nli=[packaged.kqa_nli[i] for i in by_answer[answer]],
        refusal=refuse + answer_items,
    )
    write_samples(data, folder)
    return data


def test_calibrate_completes_against_a_local_llm(
    local_llm: LocalLLMServer, tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    data = _small_samples(tmp_path / "samples")
    report_path = tmp_path / "report.json"
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "clineval.cli.main",
            "calibrate",
            "--judge",
            local_llm.judge_spec,
            "--data",
            str(tmp_path / "samples"),
            "--protocol",
            "kqa_nli,refusal",
            "--judge-concurrency",
            "1",
            "--no-cache",
            "--store",
            str(tmp_path / "runs.db"),
            "--json",
            str(report_path),
            "-q",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=3600,
        env={**os.environ, "CLINEVAL_JUDGE": "", "COLUMNS": "160"},
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-4000:]

    report = CalibrationReport.model_validate_json(report_path.read_text(encoding="utf-8"))
    assert report.judge == "openai:judge" and report.run_id is not None
    assert [p.name for p in report.protocols] == ["kqa_nli", "refusal"]
    kqa, refusal = report.protocols
    assert kqa.n + kqa.unscored == len(data.kqa_nli)  # every statement scored or counted unscored
    assert refusal.n == len(data.refusal) and 0 <= refusal.unscored <= refusal.n
    for protocol in report.protocols:
        for figure in protocol.figures:
            for stat in (figure.judge, *(c.value for c in figure.baselines)):
                assert stat.value is None or -1.0 <= stat.value <= 1.0, (protocol.name, figure.key)
            for comparison in figure.baselines:
                difference = comparison.difference.value
                assert difference is None or -2.0 <= difference <= 2.0
    for title in (kqa.title, refusal.title):
        assert title in done.stdout
    assert f"Saved as run {report.run_id}." in done.stdout
    assert "judge: " in done.stdout and " call(s)" in done.stdout
    figures = "\n".join(
        f"  {p.name}: n={p.n} unscored={p.unscored}; "
        + ", ".join(f"{f.key} {f.judge.fmt()}" for f in p.figures[:4])
        for p in report.protocols
    )
    usage = next(line for line in done.stdout.splitlines() if line.startswith("judge: "))
    _say(pytestconfig, f"calibrate against SmolLM2-135M in {elapsed:.0f} s; {usage}\n{figures}")
