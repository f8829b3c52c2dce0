"""Mutation testing of the modules where a silent bug harms users most (opt-in, not part of
the test run).

Each module is mutated by cosmic-ray (``pip install -e '.[mutation]'``) and only the tests
of that module run against each mutant, so a module takes minutes, not hours. The work is
done in a copy of the repository (cosmic-ray edits the file it mutates on disk; the
checkout is never touched). Prints, per module, the mutants killed, survived and skipped
and the kill rate (killed / (killed + survived); a mutant that times out counts as killed).

    python scripts/mutation.py                     # every module
    python scripts/mutation.py redaction gates     # some of them
    python scripts/mutation.py --sample 80 tbfact  # 80 mutants drawn at random (fixed draw)
    python scripts/mutation.py --survivors redaction   # also print each survivor's diff

Goal: at least 90 % killed on every module (figures in benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COPIED = ("src", "tests", "docs", "examples", "pyproject.toml", "README.md")
PYTEST = "python -m pytest -x -q -n 0 -p no:cacheprovider -p no:randomly"


@dataclass(frozen=True)
class Target:
    name: str
    module: str
    tests: tuple[str, ...]


TARGETS = (
    Target("redaction", "src/clineval/redaction.py", ("tests/redaction",)),
    Target("gates", "src/clineval/compare/gates.py", ("tests/compare/test_gates_junit.py",)),
    Target("case-gate", "src/clineval/compare/case_gate.py", ("tests/compare/test_case_gate.py",)),
    Target("stats", "src/clineval/compare/stats.py", ("tests/compare/test_stats.py",)),
    Target("aggregate", "src/clineval/results/aggregate.py", ("tests/results/test_aggregate.py",)),
    Target(
        "tbfact",
        "src/clineval/metrics/factuality.py",
        (
            "tests/metrics/test_factuality.py",
            "tests/metrics/test_tbfact_null_answers.py",
            "tests/metrics/test_tbfact_omissions.py",
        ),
    ),
    Target("trajectory", "src/clineval/metrics/agent.py", ("tests/metrics/test_trajectory.py",)),
    Target("rag", "src/clineval/metrics/rag.py", ("tests/metrics/test_rag.py",)),
    Target("loaders", "src/clineval/datasets/loaders.py", ("tests/datasets/test_loaders.py",)),
)


@dataclass
class Outcome:
    name: str
    mutants: int
    killed: int = 0
    survived: int = 0
    skipped: int = 0
    incompetent: int = 0
    minutes: float = 0.0

    @property
    def rate(self) -> float | None:
        tried = self.killed + self.survived
        return self.killed / tried if tried else None


def copy_repository(target: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.pyc", "screenshots")
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        elif source.exists():
            shutil.copy2(source, target / name)


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float | None = None) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        output = done.stdout[-2000:] + done.stderr[-2000:]
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{output}")
    return done.stdout


def mutate(target: Target, work: Path, env: dict[str, str], sample: int | None, survivors: bool) -> Outcome:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    tests = " ".join(target.tests)
    started = time.monotonic()
    baseline_start = time.monotonic()
    _run([*PYTEST.split(), *target.tests], work, env)  # the tests pass unmutated, and how long they take
    baseline = time.monotonic() - baseline_start
    config = work / f"{target.name}.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{target.module}"\n'
        f"timeout = {max(30.0, 10 * baseline):.0f}\n"
        "excluded-modules = []\n"
        f'test-command = "{PYTEST} {tests}"\n'
        '[cosmic-ray.distributor]\nname = "local"\n',
        encoding="utf-8",
    )
    session = work / f"{target.name}.sqlite"
    _run(["cosmic-ray", "init", str(config), str(session)], work, env)
    with use_db(str(session), WorkDB.Mode.open) as db:
        jobs = sorted(item.job_id for item in db.work_items)
        if sample is not None and sample < len(jobs):
            keep = set(random.Random(25).sample(jobs, sample))
            skip = [job for job in jobs if job not in keep]
            not_sampled = WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="not sampled")
            db.set_multiple_results(skip, not_sampled)
    _run(["cosmic-ray", "exec", str(config), str(session)], work, env)
    outcome = Outcome(target.name, mutants=len(jobs), minutes=(time.monotonic() - started) / 60)
    with use_db(str(session), WorkDB.Mode.open) as db:
        specs = {item.job_id: item for item in db.work_items}
        for job_id, result in db.results:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                outcome.skipped += 1
            elif result.test_outcome == TestOutcome.SURVIVED:
                outcome.survived += 1
                if survivors:
                    spec = specs[job_id].mutations[0]
                    print(f"--- survivor {target.name} line {spec.start_pos[0]} ({spec.operator_name})")
                    print(result.diff or "")
            elif result.test_outcome == TestOutcome.INCOMPETENT:
                outcome.incompetent += 1
            else:
                outcome.killed += 1
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"some of: {', '.join(t.name for t in TARGETS)}")
    parser.add_argument("--sample", type=int, help="mutants per module, drawn at random (a fixed draw)")
    parser.add_argument("--survivors", action="store_true", help="print each surviving mutant's diff")
    args = parser.parse_args(argv)
    known = {t.name: t for t in TARGETS}
    unknown = [m for m in args.modules if m not in known]
    if unknown:
        parser.error(f"unknown module(s) {', '.join(unknown)}; known: {', '.join(known)}")
    if shutil.which("cosmic-ray") is None:
        parser.error("cosmic-ray is not installed: pip install -e '.[mutation]'")
    chosen = [known[m] for m in args.modules] if args.modules else list(TARGETS)
    with tempfile.TemporaryDirectory(prefix="clineval-mutation-") as folder:
        work = Path(folder)
        copy_repository(work)
        env = {**os.environ, "PYTHONPATH": f"{work / 'src'}{os.pathsep}{work}"}
        for name in list(env):
            if name.startswith(("CLINEVAL_", "OPENAI_", "AZURE_")):
                del env[name]
        columns = ("mutants", "killed", "survived", "skipped", "kill rate", "minutes")
        print(f"{'module':<12}" + "".join(f"{c:>10}" for c in columns))
        for target in chosen:
            o = mutate(target, work, env, args.sample, args.survivors)
            rate = "-" if o.rate is None else f"{100 * o.rate:.1f} %"
            cells = (o.mutants, o.killed, o.survived, o.skipped, rate, f"{o.minutes:.1f}")
            print(f"{o.name:<12}" + "".join(f"{c:>10}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
