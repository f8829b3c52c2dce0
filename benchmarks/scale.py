"""Scale: a 100,000-case run, its peak memory and the runner's overhead per case.

What is measured, each in a fresh process (as a user runs it):

1. ``clineval run --data cases.jsonl --agent scale.py:agent -m exact_match,token_f1,rouge``
   over ``--cases`` generated cases (100,000 by default) with a fast fake agent (an async
   function that answers at once) and deterministic metrics; ``latency`` and ``failure``
   are added by clineval as for every agent run. The peak resident memory (RSS) of the
   process is read from the kernel when it ends (``os.wait4``), the wall time around it.
2. **peer, plain loop** (the floor), in its own process: read the same JSONL line by
   line, validate each line as a ``Case``, call the same agent and the same metric
   objects, and write one row per result to a SQLite file (``executemany`` per 1,000
   cases). No run record, no progress, no aggregates, no store schema.
3. ``clineval show`` and ``clineval export`` (JSONL and CSV) of the run;
4. a second run of the same cases with a changed agent (``agent_b``: a sixth of the
   exact answers become wrong, a twelfth of the wrong ones right), then what reads two
   runs or every case: ``clineval show --cases --limit 0`` (every row), ``clineval
   compare`` A B, the gates (``clineval show B --no-regression-vs A
   --fail-on-case-regression exact_match``, which fail: exit 1 is expected), ``compare``
   with its HTML report and JSON written, and
   ``clineval score`` (run B re-scored with ``token_f1,rouge``).

Definitions:

* **work**: the time spent inside the agent and the metric functions themselves, measured
  by the peer (a ``perf_counter`` around each call), the same work clineval does;
* **runner overhead per case** = (wall time of ``clineval run`` − work) / N: everything
  clineval adds (interpreter start, imports, dataset validation, the run record, the
  pipeline, store writes, aggregates with bootstrap intervals, the printed table),
  per case. The peer's own overhead, (its wall − work) / N, is printed beside it. The
  same in CPU time (user + system of the process, all threads, against the work's CPU
  time) is printed too: on a machine shared with other work the wall time varies from
  run to run, the CPU time much less.

Targets (issues 14 and 25): peak RSS under 600 MB and runner overhead under 1 ms per case at
100,000 cases; every other command under 600 MB too.

Run with ``python benchmarks/scale.py`` (``--cases 20000`` for a quick look; ``--profile``
writes a cProfile of the run next to the store and prints its top functions).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

METRICS = "exact_match,token_f1,rouge(use_stemmer=false)"

_TEXT = (
    "patient presents with chest pain shortness of breath troponin elevated ecg shows st "
    "depression started on aspirin heparin referred for angiography history of diabetes "
    "hypertension smoker no known allergies discharged home on day three follow up clinic"
)
_WORDS = _TEXT.split(" ")


async def agent(text: str) -> str:
    """The fast fake agent: a deterministic answer, at once (no I/O)."""
    words = text.split()
    if len(words) % 3 == 0:
        return " ".join(words[:12])  # the reference for a third of the cases: exact match
    return " ".join(reversed(words[:12]))


async def agent_b(text: str) -> str:
    """The changed agent of the second run: some exact answers lost, some wrong ones fixed."""
    words = text.split()
    right = len(words) % 3 == 0
    if right and len(words) % 2 == 0 and len(words) % 5 == 0:
        right = False  # regressed
    elif not right and len(words) % 4 == 1 and len(words) % 3 == 1:
        right = True  # improved
    return " ".join(words[:12] if right else reversed(words[:12]))


def make_cases(path: Path, n: int) -> None:
    """``n`` cases: an id, a note of about 40 words, a reference and metadata."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            words = [_WORDS[(i * 7 + k * 13) % len(_WORDS)] for k in range(30 + i % 20)]
            note = " ".join(words)
            handle.write(
                json.dumps(
                    {
                        "id": f"case-{i:06d}",
                        "input": note,
                        "reference": " ".join(words[:12]),
                        "metadata": {"ward": f"ward-{i % 7}", "site": "A" if i % 2 else "B"},
                    }
                )
                + "\n"
            )


def clineval_command() -> list[str]:
    script = Path(sys.executable).with_name("clineval")
    found = str(script) if script.exists() else shutil.which("clineval")
    return [found] if found else [sys.executable, "-m", "clineval.cli.main"]


def measured(
    command: list[str], cwd: Path, stdout: int | None = subprocess.DEVNULL, ok: tuple[int, ...] = (0,)
) -> tuple[float, float, float]:
    """Run ``command``; its wall time and CPU time (user + system, all threads) in seconds and
    its peak RSS in MB, as the kernel reports them when it ends (an exit status not in ``ok``
    stops the benchmark)."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "160"}
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}):\n{stderr[-3000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # ru_maxrss: KB on Linux


PEER = r"""
import asyncio, json, sqlite3, sys, time
sys.path.insert(0, {bench_dir!r})
from scale import agent
from clineval.metrics.base import ScoreContext, to_score
from clineval.metrics.registry import build_metric
from clineval.model import AgentRun, Case

names = {metrics!r}.split(",") + ["latency", "failure"]
metrics = [build_metric(name) for name in names]
db = sqlite3.connect({db!r}, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=NORMAL")
db.execute(
    "CREATE TABLE results (case_id TEXT, metric TEXT, value REAL, score TEXT, PRIMARY KEY (case_id, metric))"
)
work = 0.0  # wall time in the agent and the metrics
work_cpu = 0.0  # CPU time in them (the figure that does not depend on other load on the machine)
rows = []


def commit():
    global rows
    db.execute("BEGIN")
    db.executemany("INSERT INTO results VALUES (?, ?, ?, ?)", rows)
    db.execute("COMMIT")
    rows = []


async def main():
    global work, work_cpu
    with open({data!r}, encoding="utf-8") as handle:
        for line in handle:
            case = Case.model_validate_json(line)
            start, cpu = time.perf_counter(), time.process_time()
            response = await agent(case.input)
            latency = time.perf_counter() - start
            work += latency
            work_cpu += time.process_time() - cpu
            case = case.model_copy(update={{"response": response, "agent_run": AgentRun(latency_s=latency)}})
            for metric in metrics:
                ctx = ScoreContext()
                start, cpu = time.perf_counter(), time.process_time()
                score = to_score(metric.score(case, ctx), metric.name)
                work += time.perf_counter() - start
                work_cpu += time.process_time() - cpu
                rows.append((case.id, metric.name, score.value, score.model_dump_json()))
            if len(rows) >= 5000:
                commit()
    commit()


asyncio.run(main())
print(json.dumps({{"work_s": work, "work_cpu_s": work_cpu}}))
"""


class Measure(NamedTuple):
    label: str
    wall: float
    cpu: float
    rss: float


def run_peer(root: Path, data: Path) -> tuple[Measure, float, float]:
    """The plain loop: its measure, and the work it timed (wall s, CPU s)."""
    for leftover in root.glob("peer.db*"):
        leftover.unlink()
    script = root / "peer.py"
    script.write_text(
        PEER.format(
            bench_dir=str(Path(__file__).parent), metrics=METRICS, db=str(root / "peer.db"), data=str(data)
        )
    )
    out = root / "peer.out"
    with out.open("w") as handle:
        wall, cpu, rss = measured([sys.executable, str(script)], root, stdout=handle.fileno())
    work = json.loads(out.read_text().strip().splitlines()[-1])
    return Measure("peer, plain loop", wall, cpu, rss), work["work_s"], work["work_cpu_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--keep", help="Keep the files in this folder (default: a temporary folder).")
    parser.add_argument("--profile", action="store_true", help="Also profile the run with cProfile.")
    parser.add_argument(
        "--legacy",
        action="store_true",
        help="Options as clineval before issue 25 took them (to measure that code, on PYTHONPATH).",
    )
    args = parser.parse_args()
    n = args.cases
    root = Path(args.keep or tempfile.mkdtemp(prefix="clineval-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    data = root / "cases.jsonl"
    make_cases(data, n)
    store = root / "store.db"
    for leftover in root.glob("store.db*"):
        leftover.unlink()
    cli = clineval_command()
    agent_ref = f"{Path(__file__).resolve()}:agent"
    run_cmd = [
        *cli,
        "run",
        "--data",
        str(data),
        "--agent",
        agent_ref,
        "-m",
        METRICS,
        "--store",
        str(store),
        "-q",
    ]
    print(
        f"{n:,} cases in {data} ({data.stat().st_size / 1e6:.1f} MB), metrics {METRICS} (+ latency, failure)"
    )

    peer, work, work_cpu = run_peer(root, data)
    rows = [peer, Measure("clineval run", *measured(run_cmd, root))]
    for label, command in (
        ("clineval show", [*cli, "show", "--store", str(store)]),
        ("clineval export jsonl", [*cli, "export", "--store", str(store), "-o", str(root / "run.jsonl")]),
        (
            "clineval export csv",
            [*cli, "export", "--store", str(store), "--format", "csv", "-o", str(root / "run.csv")],
        ),
    ):
        rows.append(Measure(label, *measured(command, root)))
    run_b = [
        *run_cmd[: run_cmd.index("--agent") + 1],
        f"{Path(__file__).resolve()}:agent_b",
        *run_cmd[run_cmd.index("--agent") + 2 :],
    ]
    rows.append(Measure("clineval run (B)", *measured(run_b, root)))
    first, second = "latest~1", "latest"
    every_row = [] if args.legacy else ["--limit", "0"]  # before issue 25 `show --cases` printed every row
    for label, command, ok in (
        ("clineval show --cases", [*cli, "show", first, "--cases", *every_row, "--store", str(store)], (0,)),
        ("clineval compare", [*cli, "compare", first, second, "--store", str(store)], (0,)),
        (
            "clineval compare --html --json",
            [
                *cli,
                "compare",
                first,
                second,
                "--html",
                str(root / "compare.html"),
                "--json",
                str(root / "compare.json"),
                "--store",
                str(store),
            ],
            (0,),
        ),
        (
            "gates (show B --no-regression-vs A)",
            [
                *cli,
                "show",
                second,
                "--no-regression-vs",
                first,
                "--fail-on-case-regression",
                "exact_match",
                "--store",
                str(store),
            ],
            (0, 1),
        ),
        (
            "clineval score",
            [*cli, "score", second, "-m", "token_f1,rouge(use_stemmer=false)", "-q", "--store", str(store)],
            (0,),
        ),
    ):
        rows.append(Measure(label, *measured(command, root, ok=ok)))

    print(
        f"\nwork (agent + metric functions, timed by the peer): {work:.2f} s wall, {work_cpu:.2f} s CPU "
        f"= {work_cpu / n * 1e3:.3f} ms CPU per case\n"
    )
    print(f"{'':<38}{'wall s':>8}{'CPU s':>8}{'peak RSS MB':>13}{'overhead ms/case':>18}{'(CPU)':>8}")
    for m in rows:
        overhead = cpu_overhead = ""
        if m.label in ("peer, plain loop", "clineval run"):
            overhead = f"{(m.wall - work) / n * 1e3:.3f}"
            cpu_overhead = f"{(m.cpu - work_cpu) / n * 1e3:.3f}"
        print(f"{m.label:<38}{m.wall:>8.2f}{m.cpu:>8.2f}{m.rss:>13.0f}{overhead:>18}{cpu_overhead:>8}")
    run = rows[1]
    over = [m.label for m in rows[1:] if m.rss >= 600]
    verdict = "met" if not over else "not met: " + ", ".join(over)
    print(
        f"\ntargets: every clineval command's peak RSS < 600 MB ({verdict}); "
        f"clineval run {run.rss:.0f} MB; runner overhead < 1 ms per case "
        f"({(run.wall - work) / n * 1e3:.3f} wall, {(run.cpu - work_cpu) / n * 1e3:.3f} CPU)"
    )
    if args.profile:
        profile = root / "run.prof"
        for leftover in root.glob("store.db*"):
            leftover.unlink()
        module_cmd = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "clineval.cli.main"]
        measured([*module_cmd, *run_cmd[len(cli) :]], root)
        import pstats

        pstats.Stats(str(profile)).sort_stats("tottime").print_stats(30)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
