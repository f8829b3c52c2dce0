"""examples/traffic end to end, as its README says: generate.py writes the instrumented agents'
traffic as OTLP JSON lines, ``clineval traces import`` stores it, ``clineval traces score``
scores it offline; each conversation is one case, both agents appear, and the answers that
restate their tool result are the ones faithful to it. The same through the receiver: a
``clineval collect`` process, generate.py exporting to it over OTLP/HTTP, ``traces score``
beside it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.clirun import clineval
from tests.traces.test_instrumented_agent import running_collect, traces_score

from clineval.store.sqlite import RunStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "traffic"
N = 6  # one conversation per scenario of agent.py


def _run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


METRICS = ("conversational_faithfulness", "latency", "failure")


def _assert_the_example_scores(db: Path) -> None:
    """One run of N cases, one per conversation: both agents, and the answers that restate
    their tool result (scenarios 1, 2 and 5) are the faithful ones."""
    store = RunStore(db)
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
        if cid in {"traffic-0003", "traffic-0004", "traffic-0006"}
    )
    assert all(results[(cid, "failure")] == 0.0 for cid in cases)


def test_generate_import_and_score_the_example_traffic(tmp_path: Path) -> None:
    generated = _run(tmp_path, str(EXAMPLE / "generate.py"), "-n", str(N), "--file", "traffic.jsonl")
    assert generated.stdout.strip() == f"traffic.jsonl: {N} conversations, {4 * N} spans"
    lines = (tmp_path / "traffic.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == N and all("resourceSpans" in json.loads(line) for line in lines)

    imported = clineval("traces", "import", "traffic.jsonl", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert "Traceback" not in imported.stderr
    assert f"{4 * N} spans, {4 * N} new, 0 already stored" in imported.stdout
    db = tmp_path / ".clineval" / "clineval.db"
    traces_score(tmp_path, db, *METRICS)
    _assert_the_example_scores(db)


def test_generate_to_clineval_collect_and_score_while_it_runs(tmp_path: Path) -> None:
    """The README's receiver path, as a new user runs it: ``clineval collect --port 0`` prints
    its URL; generate.py finds it through the exporter's standard variable
    (OTEL_EXPORTER_OTLP_ENDPOINT, the base URL); ``traces score`` runs beside the receiver."""
    with running_collect(tmp_path / "X.db", tmp_path) as collector:
        base = collector.url.removesuffix("/v1/traces")
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_EXPORTER_OTLP")}
        generated = _run(
            tmp_path,
            str(EXAMPLE / "generate.py"),
            "-n",
            str(N),
            env={**env, "OTEL_EXPORTER_OTLP_ENDPOINT": base},
        )
        assert generated.stdout.strip() == f"{collector.url}: {N} conversations, {4 * N} spans sent"
        traces_score(tmp_path, tmp_path / "X.db", *METRICS)
    # the batch span processor's requests, flushed before generate.py exited: every span stored
    assert f" requests · {4 * N} spans received · {4 * N} stored · 0 duplicates" in collector.stderr
    _assert_the_example_scores(tmp_path / "X.db")


def test_generate_says_at_once_when_no_receiver_listens(tmp_path: Path) -> None:
    with socket.socket() as unused:  # a port nothing listens on: bound, never listening
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/v1/traces"
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, str(EXAMPLE / "generate.py"), "-n", "2", "--endpoint", url],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: nothing answers at {url} (")
    assert proc.stderr.rstrip().endswith("is `clineval collect` running there?")
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""
    assert time.monotonic() - started < 20  # no exporter retries (about 30 s a conversation)
