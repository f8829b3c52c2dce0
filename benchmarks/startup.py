"""Start-up: how long `clineval --help` and `clineval runs` take, beside two peers.

Each command runs in a fresh process, as a user types it; the wall time of the whole
process is measured. Printed side by side:

* peer, ``python -c pass``: the interpreter alone, the floor of this machine;
* peer, ``python -c "import click"``: the interpreter and the CLI library, the floor of
  any click program;
* ``clineval --help``: target under 0.5 s;
* ``clineval runs`` on a store with 25 runs: target under 1 s;
* for information, no target: ``clineval metrics`` (the catalogue) and ``clineval show
  latest`` (loads a run and computes its aggregates and intervals).

Each is run ``--repeat`` times, interleaved; the best and the median are printed (the best
is the least disturbed by other load on the machine). Which modules a command imports is
checked by tests/faults/test_startup.py; ``--importtime`` prints the slowest imports of
one command (``python -X importtime``). Run with ``python benchmarks/startup.py``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clineval import evaluate

TARGETS = {"clineval --help": 0.5, "clineval runs": 1.0}


def clineval_command() -> list[str]:
    """The installed `clineval` entry point (as a user runs it), else `python -m clineval.cli.main`."""
    script = Path(sys.executable).with_name("clineval")
    found = str(script) if script.exists() else shutil.which("clineval")
    return [found] if found else [sys.executable, "-m", "clineval.cli.main"]


def make_store(root: Path, runs: int) -> Path:
    """A store with ``runs`` finished runs of 20 cases each (exact_match, no judge)."""
    store = root / "store.db"
    cases = [{"id": f"c{i:03d}", "input": f"q{i}", "response": "yes", "reference": "yes"} for i in range(20)]
    for i in range(runs):
        evaluate(
            cases, ["exact_match"], store=store, name=f"run {i}", tags={"bench": "startup"}, progress=False
        )
    return store


def wall(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {proc.stderr.decode(errors='replace')}")
    return elapsed


def print_importtime(command: list[str], env: dict[str, str], cwd: Path, top: int = 15) -> None:
    """The ``top`` imports with the largest cumulative time (``python -X importtime``)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "clineval.cli.main", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )
    rows = []
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if match:
            rows.append((int(match.group(2)), len(match.group(3)) // 2, match.group(4)))
    print(f"\nslowest imports of clineval {' '.join(command)} (cumulative ms, depth):")
    for cumulative, depth, name in sorted(rows, reverse=True)[:top]:
        print(f"  {cumulative / 1000:8.1f}  {depth:2d}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each command, interleaved")
    parser.add_argument("--runs", type=int, default=25, help="runs in the store listed by `clineval runs`")
    parser.add_argument(
        "--importtime", metavar="ARGS", help="also print the slowest imports of `clineval ARGS`, e.g. 'runs'"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = make_store(root, args.runs)
        env = {**os.environ, "CLINEVAL_STORE": str(store), "COLUMNS": "140"}
        env.pop("CLINEVAL_JUDGE", None)
        cli = clineval_command()
        commands = {
            "peer, python -c pass": [sys.executable, "-c", "pass"],
            "peer, python -c 'import click'": [sys.executable, "-c", "import click"],
            "clineval --help": [*cli, "--help"],
            "clineval runs": [*cli, "runs"],
            "clineval metrics": [*cli, "metrics"],
            "clineval show latest": [*cli, "show", "latest"],
        }
        times: dict[str, list[float]] = {label: [] for label in commands}
        for command in commands.values():  # warm the file cache once
            wall(command, env, root)
        for _ in range(args.repeat):
            for label, command in commands.items():
                times[label].append(wall(command, env, root))

        print(
            f"start-up, {args.repeat} interleaved runs each ({os.cpu_count()} CPUs, {sys.version.split()[0]})"
        )
        print(f"{'':32} {'best s':>7} {'median s':>9} {'target s':>9}")
        for label, walls in times.items():
            target = TARGETS.get(label)
            mark = (
                ""
                if target is None
                else f"{target:9.1f}" + (" ok" if statistics.median(walls) < target else " MISSED")
            )
            print(f"{label:32} {min(walls):7.2f} {statistics.median(walls):9.2f} {mark}")
        if args.importtime:
            print_importtime(args.importtime.split(), env, root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
