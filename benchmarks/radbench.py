"""Throughput of the radiology benchmark environment, offline.

The grid is records x 11 tasks x 8 conditions. Printed side by side, in one run:

* **environment, oracle core**: tool sets built, episodes run in the simulator and every
  metric computed, in one process with no store -- the figure the target is about
  (target: the full grid of 100 records, 8,800 episodes, in under 60 s);
* **environment, greedy core**: the same with an imperfect core (episodes end earlier, on
  I/O errors), as a peer;
* **clineval run (store)**: the same oracle grid as an ordinary stored run through
  ``clineval radbench run`` -- the runner, the progress-free engine and a committed row
  per result -- to show what the run store adds.

    python benchmarks/radbench.py                 # --records 100 --seed 0 --skip-store
    python benchmarks/radbench.py --trials 5      # each episode five times (the paper's trials)
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from clineval.environments.radbench.metrics import episode_metrics
from clineval.environments.radbench.runner import Bench, BenchSettings, run_bench

TARGET_S = 60.0


async def _environment(bench: Bench) -> int:
    n = 0
    for case in bench.cases():
        episode = await bench.episode(case)
        episode_metrics(episode)
        n += 1
    return n


def environment(core: str, n_records: int, seed: int, trials: int = 1) -> tuple[int, float]:
    started = time.perf_counter()
    settings = BenchSettings(core=core, n_records=n_records, seed=seed, trials=trials)  # type: ignore[arg-type]
    bench = Bench(settings)
    n = asyncio.run(_environment(bench))
    return n, time.perf_counter() - started


def stored(n_records: int, seed: int, trials: int = 1) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        result = run_bench(
            BenchSettings(core="oracle", n_records=n_records, seed=seed, trials=trials),
            store=str(Path(folder) / "runs.db"),
            progress=False,
        )
        return len(result.cases), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trials", type=int, default=1, help="Run each episode this many times.")
    parser.add_argument("--skip-store", action="store_true", help="Do not time the stored run.")
    args = parser.parse_args()

    rows = []
    for label, core in (("environment, oracle core", "oracle"), ("environment, greedy core", "greedy")):
        n, seconds = environment(core, args.records, args.seed, args.trials)
        rows.append((label, n, seconds))
    if not args.skip_store:
        n, seconds = stored(args.records, args.seed, args.trials)
        rows.append(("clineval run (store), oracle", n, seconds))

    trials = f" x {args.trials} trials" if args.trials > 1 else ""
    print(
        f"grid: {args.records} records x 11 tasks x 8 conditions{trials}; "
        f"target {TARGET_S:.0f} s for the oracle grid of one trial"
    )
    print(f"{'':32} {'episodes':>9} {'seconds':>9} {'episodes/s':>11}")
    for label, n, seconds in rows:
        print(f"{label:32} {n:9d} {seconds:9.2f} {n / seconds:11.0f}")
    oracle_seconds = rows[0][2]
    verdict = "meets" if oracle_seconds < TARGET_S else "misses"
    print(f"oracle grid {verdict} the target ({oracle_seconds:.1f} s vs {TARGET_S:.0f} s)")


if __name__ == "__main__":
    main()
