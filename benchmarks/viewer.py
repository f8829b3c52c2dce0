"""The viewer at scale: a 10,000-case run's page and case pages, beside two peers.

Builds a store holding one run of 10,000 cases (a fast fake agent; ``exact_match`` and
``token_f1``, so with ``latency`` and ``failure`` four metrics and two sub-scores), starts
``clineval view`` on it as a user does (a real uvicorn on a free port) and times HTTP GETs
with ``urllib``. Printed side by side (median and best of ``--repeat`` requests):

* the run page (provenance, aggregates with 95 % bootstrap CIs, a distribution plot per
  metric, the unscored reasons, page 1 of the case table): target under 1.5 s; its first
  request after the viewer started (the aggregates of the newest runs are being computed
  then; the page opens with the intervals pending) and the fetch of the intervals that
  the page's script makes next;
* the run page sorted by a metric's value, at case-table page 100 (sorting in SQL);
* a case page (its texts and the evidence of every metric): target under 0.3 s;
* the run page grouped by a metadata field (``?by=task``), first request (computed) and again;
* the run page with nothing cached (in-process, TestClient: what any run's first view costs
  once the statistics libraries are loaded): as served (a run this large opens without its
  bootstrap intervals, fetched by the page when ready) and waiting for the intervals;
* peer, ``clineval show RUN``: the CLI's summary of the same run (loads every case);
* peer, plain ``sqlite3``: reading the run's cases and results and decoding their JSON,
  with no framework: the cost of loading the whole run, which the pages avoid.

Run with ``python benchmarks/viewer.py`` (``--cases``, ``--repeat``, ``--store`` to reuse one).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

TARGETS = {"run page": 1.5, "case page": 0.3}


def clineval_command() -> list[str]:
    script = Path(sys.executable).with_name("clineval")
    found = str(script) if script.exists() else shutil.which("clineval")
    return [found] if found else [sys.executable, "-m", "clineval.cli.main"]


def build(store: Path, n: int) -> str:
    from clineval import evaluate

    tasks = ("labs", "medications", "notes")
    cases = [
        {
            "id": f"case-{i:05d}",
            "input": f"What was the last potassium of patient {i}?",
            "reference": f"Potassium {i % 7}.{i % 10} mmol/L, measured on day {i % 30}.",
            "metadata": {"task": tasks[i % 3], "site": f"site-{i % 5}"},
        }
        for i in range(n)
    ]

    def agent(query: str) -> dict[str, str]:
        i = int(query.rstrip("?").split()[-1])
        if i % 4:
            return {"response": f"Potassium {i % 7}.{i % 10} mmol/L, measured on day {i % 30}."}
        return {"response": f"Potassium {(i + 1) % 7}.{i % 10} mmol/L."}

    start = time.perf_counter()
    result = evaluate(cases, ["exact_match", "token_f1"], agent=agent, store=store, name=f"viewer bench {n}")
    print(f"built run {result.run_id}: {n} cases in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return result.run_id


def get(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}")
    elapsed = time.perf_counter() - start
    if b"<h1>" not in body:
        raise RuntimeError(f"{url}: not a page")
    return elapsed


def get_fragment(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read()
    if b'id="aggregates-table"' not in body:
        raise RuntimeError(f"{url}: not the aggregates")
    return time.perf_counter() - start


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def sqlite_peer(store: Path, run_id: str) -> None:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        cases = [json.loads(r[0]) for r in conn.execute("SELECT data FROM cases WHERE run_id = ?", (run_id,))]
        results = [
            (r[0], r[1], json.loads(r[2]))
            for r in conn.execute("SELECT case_id, metric, score FROM results WHERE run_id = ?", (run_id,))
        ]
        assert cases and results
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--store", type=Path, help="Reuse (or create) this store instead of a temporary one.")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="clineval-viewer-bench-"))
    store = args.store or root / "store.db"
    run_id = None
    if store.exists():
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        row = conn.execute(
            "SELECT r.id FROM runs r WHERE (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.id) = ?"
            " ORDER BY r.created_at DESC LIMIT 1",
            (args.cases,),
        ).fetchone()
        conn.close()
        run_id = row[0] if row else None
    if run_id is None:
        run_id = build(store, args.cases)

    rows: list[tuple[str, list[float]]] = []
    env = {**os.environ, "COLUMNS": "200"}
    started = time.perf_counter()
    server = subprocess.Popen(
        [*clineval_command(), "view", "--store", str(store), "--port", "0", "--no-open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        match = re.search(r"http://[\d.]+:\d+/", line)
        if match is None:
            raise RuntimeError(f"clineval view printed {line!r}")
        base = match.group(0).rstrip("/")
        run_url = f"{base}/runs/{run_id}"
        rows.append(("runs list, first request", [get(f"{base}/")]))
        first = get(run_url)
        rows.append(("run page, first view after start (incl. start-up)", [time.perf_counter() - started]))
        rows.append(("run page, first request", [first]))
        # what the page's script does next: fetch the aggregates with their intervals
        rows.append(("its intervals, fetched by the page", [get_fragment(f"{run_url}/aggregates")]))
        rows.append(("run page", [get(run_url) for _ in range(args.repeat)]))
        rows.append(
            (
                "run page sorted by token_f1, case page 100",
                [get(f"{run_url}?sort=token_f1&order=desc&page={100 + i}") for i in range(args.repeat)],
            )
        )
        step = max(1, args.cases // (args.repeat * 3))
        case_ids = [f"case-{i:05d}" for i in range(1, args.cases, step)][: args.repeat * 3]
        rows.append(("case page", [get(f"{run_url}/cases/{c}") for c in case_ids]))
        rows.append(("run page by task, first request", [get(f"{run_url}?by=task")]))
        rows.append(("run page by task", [get(f"{run_url}?by=task") for _ in range(args.repeat)]))
    finally:
        server.terminate()
        server.wait(timeout=30)

    from starlette.testclient import TestClient

    from clineval.viewer.app import create_app

    with TestClient(create_app(store)) as client:
        data = client.app.state.data  # type: ignore[attr-defined]
        client.get(f"/runs/{run_id}")  # templates compiled, statistics imported

        compute = data.compute_aggregates

        def uncached() -> None:
            # as served, without the intervals' computation that follows the response (a browser
            # has the page by then; TestClient would wait for it)
            data._cache.clear()
            data.compute_aggregates = lambda *args, **kwargs: None
            try:
                assert client.get(f"/runs/{run_id}").status_code == 200
            finally:
                data.compute_aggregates = compute

        def uncached_with_intervals() -> None:
            data._cache.clear()
            assert client.get(f"/runs/{run_id}?cis=wait").status_code == 200

        rows.append(("run page, nothing cached (in-process)", timed(uncached, max(3, args.repeat // 2))))
        rows.append(
            (
                "run page, nothing cached, waiting for the CIs",
                timed(uncached_with_intervals, max(3, args.repeat // 2)),
            )
        )

    show = [*clineval_command(), "show", run_id, "--store", str(store)]
    rows.append(
        (
            "peer: clineval show RUN (CLI process)",
            timed(lambda: subprocess.run(show, stdout=subprocess.DEVNULL, check=True, env=env), 3),
        )
    )
    rows.append(("peer: sqlite3, read + decode the whole run", timed(lambda: sqlite_peer(store, run_id), 3)))

    print(f"\n{args.cases:,} cases, run {run_id}; seconds (median / best of n)\n")
    print(f"{'':52} {'median':>8} {'best':>8} {'n':>4}  target")
    for name, times in rows:
        target = next((f"< {t} s" for key, t in TARGETS.items() if name == key), "")
        print(f"{name:52} {statistics.median(times):8.3f} {min(times):8.3f} {len(times):4d}  {target}")
    if not args.store:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
