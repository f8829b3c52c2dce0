"""examples/traffic end to end, as its README says: generate.py writes the instrumented agents'
traffic as OTLP JSON lines, ``clineval traces import`` stores it, ``clineval traces score``
scores it offline; each conversation is one case, both agents appear, and the answers that
restate their tool result are the ones faithful to it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from clineval.store.sqlite import RunStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "traffic"
N = 6  # one conversation per scenario of agent.py


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


def test_generate_import_and_score_the_example_traffic(tmp_path: Path) -> None:
    generated = _run(tmp_path, str(EXAMPLE / "generate.py"), "-n", str(N), "--file", "traffic.jsonl")
    assert generated.stdout.strip() == f"traffic.jsonl: {N} conversations, {4 * N} spans"
    lines = (tmp_path / "traffic.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == N and all("resourceSpans" in json.loads(line) for line in lines)

    cli = ("-m", "clineval.cli.main")
    imported = _run(tmp_path, *cli, "traces", "import", "traffic.jsonl")
    assert f"{4 * N} spans, {4 * N} new, 0 already stored" in imported.stdout
    _run(
        tmp_path,
        *cli,
        "traces",
        "score",
        "--since",
        "1h",
        "--idle",
        "0",
        "-m",
        "conversational_faithfulness",
        "-m",
        "latency",
        "-m",
        "failure",
        "-q",
    )

    store = RunStore(tmp_path / ".clineval" / "clineval.db")
    try:
        (run,) = store.list_runs()
        assert run.tags["source"] == "traces"
        cases = {c.id: c for c in store.load_cases(run.id)}
        results = {(r.case_id, r.metric): r.score.value for r in store.iter_results(run.id)}
    finally:
        store.close()
    assert sorted(cases) == [f"traffic-{i:04d}" for i in range(1, N + 1)]
    # the scenarios alternate Labs, Pharmacy; odd ones restate the tool result, 3, 4 and 6 do not
    agents = [cases[f"traffic-{i:04d}"].metadata["agent"] for i in range(1, N + 1)]
    assert agents == ["Labs", "Pharmacy"] * (N // 2)
    assert (
        cases["traffic-0001"].response
        == "Potassium is 5.9 mmol/L (reference 3.5-5.1), drawn 2026-11-30 07:40."
    )
    assert cases["traffic-0001"].contexts == [
        "Potassium 5.9 mmol/L (reference 3.5-5.1), drawn 2026-11-30 07:40."
    ]
    faithfulness = {cid: results[(cid, "conversational_faithfulness")] for cid in cases}
    assert {cid for cid, value in faithfulness.items() if value == 1.0} == {
        "traffic-0001",
        "traffic-0002",
        "traffic-0005",
    }
    assert all(
        value is not None and value < 1.0
        for cid, value in faithfulness.items()
        if cid
        in {
            "traffic-0003",
            "traffic-0004",
            "traffic-0006",
        }
    )
    assert all(results[(cid, "failure")] == 0.0 for cid in cases)
