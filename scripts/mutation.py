"""Mutation testing of the modules where a silent bug harms users most (opt-in, not part of
the test run).

Each module is mutated by cosmic-ray (``pip install -e '.[mutation]'``) and only the tests
of that module run against each mutant, so a module takes minutes, not hours. The work is
done in a copy of the repository (cosmic-ray edits the file it mutates on disk; the
checkout is never touched). Prints, per module, the mutants killed, survived and skipped
and the kill rate (killed / (killed + survived); a mutant that times out counts as killed).

Two kinds of mutant are not run, and each is counted in its own column so that nothing is
hidden: mutants of a function's annotations in a module that has ``from __future__ import
annotations`` (they are never evaluated, so no test can tell them apart), and mutants on a
line marked ``# pragma: no mutate (why)``, which is only for code whose every mutant is
equivalent (a memo's size, a fast path that gives the same answer); the reason is
required and the script refuses a pragma without one.

    python scripts/mutation.py                     # every module
    python scripts/mutation.py redaction gates     # some of them
    python scripts/mutation.py --sample 80 tbfact  # 80 mutants drawn at random (fixed draw)
    python scripts/mutation.py --survivors redaction   # also print each survivor's diff

Goal: at least 90 % killed on every module (figures in benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import re
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
    Target(
        "gates",
        "src/clineval/compare/gates.py",
        ("tests/compare/test_gates_pinned.py", "tests/compare/test_gates_junit.py"),
    ),
    Target(
        "case-gate",
        "src/clineval/compare/case_gate.py",
        ("tests/compare/test_case_gate_pinned.py", "tests/compare/test_case_gate.py"),
    ),
    Target(
        "stats",
        "src/clineval/compare/stats.py",
        ("tests/compare/test_stats_pinned.py", "tests/compare/test_stats.py"),
    ),
    Target(
        "aggregate",
        "src/clineval/results/aggregate.py",
        ("tests/results/test_aggregate_pinned.py", "tests/results/test_aggregate.py"),
    ),
    Target(
        "tbfact",
        "src/clineval/metrics/factuality.py",
        (
            "tests/metrics/test_factuality_pinned.py",
            "tests/metrics/test_factuality.py",
            "tests/metrics/test_tbfact_null_answers.py",
            "tests/metrics/test_tbfact_omissions.py",
        ),
    ),
    Target(
        "trajectory",
        "src/clineval/metrics/trajectory.py",
        ("tests/metrics/test_trajectory_pinned.py", "tests/metrics/test_trajectory.py"),
    ),
    Target(
        "rag",
        "src/clineval/metrics/rag.py",
        (
            "tests/metrics/test_rag_pinned.py",
            "tests/metrics/test_rag.py",
            "tests/metrics/test_answer_relevance.py",
        ),
    ),
    Target(
        "loaders",
        "src/clineval/datasets/loaders.py",
        (
            "tests/datasets/test_loaders_pinned.py",
            "tests/datasets/test_mapping_columns.py",
            "tests/datasets/test_loaders.py",
        ),
    ),
)
"""Each module and the tests run against its mutants: a ``*_pinned.py`` file of tests that
pin values the mutants showed unchecked, first (fast, and most mutants fail there: the run
stops at the first failure), then the module's own tests (a listed file that does not exist
yet is left out)."""


@dataclass
class Outcome:
    name: str
    mutants: int
    killed: int = 0
    survived: int = 0
    skipped: int = 0
    annotations: int = 0
    marked: int = 0
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


Span = tuple[tuple[int, int], tuple[int, int]]
_PRAGMA = re.compile(r"#\s*pragma:\s*no mutate\b(?P<why>.*)$")


def annotation_spans(source: str) -> list[Span]:
    """Where a function's annotations are, when the module postpones annotations (``from
    __future__ import annotations``): its parameters', its return's and its local
    variables'. Class and module annotations are left out: pydantic and dataclasses read
    them."""
    tree = ast.parse(source)
    postponed = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    )
    if not postponed:
        return []
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            found += [p.annotation for p in params if p is not None and p.annotation is not None]
            if node.returns is not None:
                found.append(node.returns)
            found += [inner.annotation for inner in ast.walk(node) if isinstance(inner, ast.AnnAssign)]
    return [((e.lineno, e.col_offset), (e.end_lineno or e.lineno, e.end_col_offset or 0)) for e in found]


def marked_lines(source: str, module: str) -> set[int]:
    """Lines marked ``# pragma: no mutate (why)``; a mark without its reason is refused."""
    marked: set[int] = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = _PRAGMA.search(line)
        if match is None:
            continue
        if not match["why"].strip(" :-()"):
            raise SystemExit(f"{module}:{number}: '# pragma: no mutate' needs its reason: (why)")
        marked.add(number)
    return marked


def _inside(start: tuple[int, int], end: tuple[int, int], spans: list[Span]) -> bool:
    return any(low <= start and end <= high for low, high in spans)


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

    present = tuple(t for t in target.tests if (work / t).exists())
    tests = " ".join(present)
    started = time.monotonic()
    baseline_start = time.monotonic()
    _run([*PYTEST.split(), *present], work, env)  # the tests pass unmutated, and how long they take
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
    source = (work / target.module).read_text(encoding="utf-8")
    spans, marked = annotation_spans(source), marked_lines(source, target.module)
    not_run: dict[str, str] = {}  # job -> why it is not run
    with use_db(str(session), WorkDB.Mode.open) as db:
        items = {item.job_id: item for item in db.work_items}
        for job, item in items.items():
            spec = item.mutations[0]
            if _inside(spec.start_pos, spec.end_pos, spans):
                not_run[job] = "annotation"
            elif spec.start_pos[0] in marked or spec.end_pos[0] in marked:
                not_run[job] = "marked"

        # in the module's order (cosmic-ray's job ids are new random ids at every init), so
        # that --sample draws the same mutants each time the module is unchanged
        def place(job: str) -> tuple[int, int, str, int]:
            spec = items[job].mutations[0]
            return (*spec.start_pos, spec.operator_name, spec.occurrence)

        jobs = sorted((job for job in items if job not in not_run), key=place)
        if sample is not None and sample < len(jobs):
            keep = set(random.Random(25).sample(jobs, sample))
            not_run.update({job: "not sampled" for job in jobs if job not in keep})
        for job, why in not_run.items():
            db.set_result(job, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=why))
        jobs = sorted(items)
    _run(["cosmic-ray", "exec", str(config), str(session)], work, env)
    outcome = Outcome(target.name, mutants=len(jobs), minutes=(time.monotonic() - started) / 60)
    alive: list[tuple[tuple[int, int], str, str]] = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        specs = {item.job_id: item for item in db.work_items}
        for job_id, result in db.results:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                why = not_run.get(job_id)
                if why == "annotation":
                    outcome.annotations += 1
                elif why == "marked":
                    outcome.marked += 1
                else:
                    outcome.skipped += 1
            elif result.test_outcome == TestOutcome.SURVIVED:
                outcome.survived += 1
                spec = specs[job_id].mutations[0]
                alive.append((spec.start_pos, spec.operator_name, result.diff or ""))
            elif result.test_outcome == TestOutcome.INCOMPETENT:
                outcome.incompetent += 1
            else:
                outcome.killed += 1
    if survivors:
        for (line, _), operator, diff in sorted(alive):
            print(f"--- survivor {target.module}:{line} ({operator})\n{diff}")
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
        columns = ("mutants", "annot.", "marked", "sampled out", "killed", "survived", "kill rate", "minutes")
        print(f"{'module':<12}" + "".join(f"{c:>12}" for c in columns))
        for target in chosen:
            o = mutate(target, work, env, args.sample, args.survivors)
            rate = "-" if o.rate is None else f"{100 * o.rate:.1f} %"
            cells = (o.mutants, o.annotations, o.marked, o.skipped, o.killed, o.survived, rate)
            cells += (f"{o.minutes:.1f}",)
            print(f"{o.name:<12}" + "".join(f"{c:>12}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
