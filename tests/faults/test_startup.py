"""Start-up: a command imports only what it uses.

Every command used to import the whole framework first (``rouge_score`` -> ``nltk`` ->
``scipy.stats``, pandas, sklearn, the offline judge's tokenizers, ...), 6-10 s on a small
machine even for ``clineval --help``. These tests run the real CLI in a subprocess under
``python -X importtime`` and check which modules it loaded: deterministic, no timing (the
times are in benchmarks/startup.py and benchmarks/README.md).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from tests.clirun import clineval

#: Libraries no listing command needs: metric back ends, the offline judge's model files,
#: the HTTP stacks, dataframes, statistics.
HEAVY = (
    "rouge_score",
    "nltk",
    "scipy",
    "sklearn",
    "pandas",
    "tokenizers",
    "safetensors",
    "sacrebleu",
    "openai",
    "aiohttp",
    "numpy",
    "rapidfuzz",
    "jinja2",
)
#: What `clineval --help` does not need either: the retry machinery, YAML, asyncio, pydantic
#: and the framework's own store, data model, runner, judges, metrics and suites.
NOT_FOR_HELP = (
    *HEAVY,
    "tenacity",
    "yaml",
    "asyncio",
    "pydantic",
    "clineval.store.sqlite",
    "clineval.model",
    "clineval.api",
    "clineval.runner",
    "clineval.judges.config",
    "clineval.metrics",
    "clineval.suites",
    "clineval.config",
)
#: `clineval runs` reads the store (pydantic, the data model) and nothing else of the framework.
NOT_FOR_RUNS = tuple(
    module for module in NOT_FOR_HELP if module not in ("pydantic", "clineval.store.sqlite", "clineval.model")
)
#: A run without ROUGE, BLEU, an LLM judge or a dataframe does not import their libraries.
NOT_FOR_PLAIN_RUN = ("rouge_score", "nltk", "scipy", "sklearn", "pandas", "sacrebleu", "openai", "aiohttp")

_LINE = re.compile(r"import time:\s+\d+ \|\s+\d+ \|\s*(\S+)")


def _imported(args: list[str], cwd: Path, store: Path) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The modules `clineval ARGS` imports, from `python -X importtime` (exact names and their parents)."""
    # PYTHONPROFILEIMPORTTIME=1 is `python -X importtime`
    proc = clineval(*args, cwd=cwd, env={"CLINEVAL_STORE": str(store), "PYTHONPROFILEIMPORTTIME": "1"})
    names: set[str] = set()
    for line in proc.stderr.splitlines():
        match = _LINE.match(line)
        if match:
            parts = match.group(1).split(".")
            names.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return names, proc


def _loaded(names: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return [module for module in forbidden if module in names]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two finished runs (exact_match, no judge), made through the real CLI."""
    root = tmp_path_factory.mktemp("startup")
    data = root / "cases.jsonl"
    rows = [{"id": f"c{i}", "input": f"q{i}", "response": "yes", "reference": "yes"} for i in range(3)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    path = root / "store.db"
    for name in ("first", "second"):
        args = ["run", "--data", str(data), "-m", "exact_match", "--judge", "none", "--name", name, "-q"]
        proc = clineval(*args, "--store", str(path), cwd=root)
        assert proc.returncode == 0, proc.stderr
    return path


@pytest.mark.parametrize(
    "args",
    [["--help"], ["run", "--help"], ["show", "--help"], ["runs", "--help"], ["--version"]],
    ids=" ".join,
)
def test_help_loads_no_framework(args: list[str], tmp_path: Path) -> None:
    names, proc = _imported(args, tmp_path, tmp_path / "none.db")
    assert proc.returncode == 0, proc.stderr
    assert _loaded(names, NOT_FOR_HELP) == []


def test_help_lists_every_command(tmp_path: Path) -> None:
    _, proc = _imported(["--help"], tmp_path, tmp_path / "none.db")
    listed = re.findall(r"^  (\S+)\s", proc.stdout.split("Commands:")[1], flags=re.M)
    expected = {"agreement", "calibrate", "compare", "conversations", "export", "facts", "metrics"}
    expected |= {"predict-ratings", "radbench", "run", "runs", "score", "show", "validate"}
    expected |= {"report"}  # clineval report: the self-contained HTML report
    expected |= {"view"}  # clineval view: the local web viewer
    expected |= {"review"}  # clineval review: review queues, export and import of verdicts
    expected |= {"collect", "traces"}  # OpenTelemetry traces: the OTLP/HTTP receiver, trace files
    expected |= {"monitor"}  # clineval monitor: scoring new traffic on a schedule
    assert set(listed) == expected


def test_runs_loads_no_heavy_library(store: Path, tmp_path: Path) -> None:
    names, proc = _imported(["runs"], tmp_path, store)
    assert proc.returncode == 0, proc.stderr
    assert "first" in proc.stdout and "second" in proc.stdout
    assert _loaded(names, NOT_FOR_RUNS) == []


def test_metrics_catalogue_imports_no_metric_back_end(tmp_path: Path) -> None:
    """The catalogue lists ROUGE, BLEU, BERTScore-like and judge metrics without their libraries."""
    names, proc = _imported(["metrics"], tmp_path, tmp_path / "none.db")
    assert proc.returncode == 0, proc.stderr
    assert "rouge" in proc.stdout and "bleu" in proc.stdout and "tbfact" in proc.stdout
    assert _loaded(names, (*NOT_FOR_PLAIN_RUN, "tokenizers", "safetensors")) == []


@pytest.mark.parametrize("judge", [["--judge", "none"], []], ids=["no judge", "default offline judge"])
def test_run_without_rouge_does_not_import_it(judge: list[str], tmp_path: Path) -> None:
    """A lexical metric needs neither ROUGE's libraries nor the offline judge's model files."""
    data = tmp_path / "cases.jsonl"
    row = {"id": "a", "input": "q", "response": "x", "reference": "x"}
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    args = ["run", "--data", str(data), "-m", "exact_match", *judge, "-q"]
    names, proc = _imported(args, tmp_path, tmp_path / "s.db")
    assert proc.returncode == 0, proc.stderr
    assert _loaded(names, (*NOT_FOR_PLAIN_RUN, "tokenizers", "safetensors")) == []


def test_lazy_commands_help_matches_their_own() -> None:
    """`clineval --help` lists the other modules' commands without importing them: same text."""
    from clineval.cli.main import LAZY_COMMANDS, cli

    ctx = click.Context(cli)
    for name, (_, short_help) in LAZY_COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name
        stand_in = click.Command(name, help=short_help)
        for limit in (30, 45, 60, 10_000):
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), name


def test_package_names_load_on_first_use() -> None:
    code = (
        "import sys, clineval, clineval.errors\n"
        "assert 'clineval.api' not in sys.modules\n"
        "from clineval import evaluate, Case, JudgeConfig, metric\n"
        "import clineval.judges as j\n"
        "assert j.ScriptedJudge.__name__ == 'ScriptedJudge'\n"
        "assert callable(evaluate) and 'evaluate' in dir(clineval)\n"
        "try:\n    clineval.nope\nexcept AttributeError:\n    pass\nelse:\n    raise SystemExit('no error')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_validate_builds_rouge_without_importing_nltk(tmp_path: Path) -> None:
    """Checking a run file builds its metrics, but ROUGE's scorer (nltk, scipy, sklearn) waits for a score."""
    (tmp_path / "cases.jsonl").write_text(json.dumps({"id": "a", "input": "q", "reference": "x"}) + "\n")
    (tmp_path / "run.yaml").write_text(
        "name: r\ndata: cases.jsonl\nmetrics:\n  - rouge(use_stemmer=true)\n  - token_f1\n"
    )
    names, proc = _imported(["validate", "run.yaml"], tmp_path, tmp_path / "s.db")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _loaded(names, ("rouge_score", "nltk", "scipy", "sklearn", "pandas")) == []
