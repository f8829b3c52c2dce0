"""The Ray executor against the local one: same results, wall time (issue 14, item 1).

The quickstart's 25 cases repeated to N (2,000 by default, each copy with its own id), the
quickstart's example agent, and every deterministic metric of the quickstart (ROUGE,
token F1, BLEU, the five trajectory metrics, the example's own recommendation metric).
The run goes once through the local executor and once through a local Ray instance
(``ray.init(num_cpus=...)``, started by this script), each into a fresh store; the
script checks that every aggregate but latency is equal and prints both wall times.

    pip install -e '.[ray]'
    python benchmarks/ray_executor.py --cases 2000 --cpus 2

``--address auto`` (or ``HOST:PORT``, ``ray://HOST:10001``) uses a running cluster instead.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart"
METRICS = [
    "rouge",
    "token_f1",
    "bleu",
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
    f"{QUICKSTART / 'metrics.py'}:recommendation_matches",
]


def cases(n: int) -> list[dict[str, Any]]:
    """The quickstart's cases repeated to ``n``, each copy with its own id."""
    lines = (QUICKSTART / "cases.jsonl").read_text().splitlines()
    base = [json.loads(line) for line in lines if line.strip()]
    out = []
    for i in range(n):
        case = dict(base[i % len(base)])
        case["id"] = f"{case['id']}#{i // len(base)}"
        out.append(case)
    return out


def aggregates(result: Any) -> dict[str, tuple[int, int, float | None, float | None]]:
    return {
        a.metric: (a.scored, a.errors, a.mean, a.std)
        for a in result.aggregate()
        if not a.metric.startswith("latency")
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance")
    parser.add_argument("--address", help="a running Ray cluster instead of a local instance")
    args = parser.parse_args(argv)

    import ray
    from clineval import evaluate

    data = cases(args.cases)
    agent = f"{QUICKSTART / 'agent.py'}:run_agent"
    common: dict[str, Any] = {"agent": agent, "judge": "none", "progress": False}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        local = evaluate(data, METRICS, store=f"{tmp}/local.db", **common)
        local_s = time.perf_counter() - started

        started = time.perf_counter()
        if args.address:
            ray.init(address=args.address)
        else:
            ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
        init_s = time.perf_counter() - started
        started = time.perf_counter()
        on_ray = evaluate(data, METRICS, store=f"{tmp}/ray.db", executor="ray", **common)
        ray_s = time.perf_counter() - started
        ray.shutdown()

    same = aggregates(local) == aggregates(on_ray)
    print(f"{args.cases} cases, {len(METRICS) + 2} metrics ({len(local.results)} results)")
    print(f"local executor:           {local_s:7.1f} s")
    print(f"ray executor:             {ray_s:7.1f} s  (+ {init_s:.1f} s to start Ray)")
    print(f"aggregates equal (all but latency): {same}")
    if not same:
        for metric, values in aggregates(local).items():
            other = aggregates(on_ray).get(metric)
            if other != values:
                print(f"  {metric}: local {values}, ray {other}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
