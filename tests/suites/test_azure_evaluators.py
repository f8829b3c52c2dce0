"""The Azure AI evaluators (azure-ai-evaluation, the optional extra ``clineval[azure]``) in suites.

They run as an AutoAuth suite writes them (``type: azure``, ``class:
azure.ai.evaluation:SimilarityEvaluator``), with ``model_config`` injected from
``AZURE_OPENAI_*`` or the suite's OpenAI-compatible judge, against the project's local
server posing as Azure OpenAI. Installed here by ``pip install --no-deps -c constraints.txt
-r azure-light.txt`` (CI does the same); without it these tests are skipped, and the
missing-extra message is tested either way.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clineval.suites import SuiteError, load_suite, run_suite
from clineval.testing import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]

needs_azure = pytest.mark.skipif(
    importlib.util.find_spec("azure") is None or importlib.util.find_spec("azure.ai.evaluation") is None,
    reason="azure-ai-evaluation is not installed (the optional extra clineval[azure]; "
    "here: pip install --no-deps -c constraints.txt -r azure-light.txt)",
)


def write(folder: Path, text: str, name: str = "suite.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def scores_of(outcome: Any) -> dict[tuple[str, str], Any]:
    return {(r.case_id, r.metric): r.score for r in outcome.result.results}


# --- network: every connection the evaluators open, recorded by an audit hook -------------

_CONNECTS: list[Any] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _CONNECTS is None:
        return
    if event == "socket.connect":
        _CONNECTS.append(args[1])
    elif event == "socket.getaddrinfo":  # a name looked up (a host to reach), even if never connected
        _CONNECTS.append(("lookup", args[0]))


sys.addaudithook(_audit)


@pytest.fixture
def connections() -> Iterator[list[Any]]:
    """The addresses sockets connect to, and the names looked up, while the test body runs
    (audit hooks cannot be removed: this one records only while the fixture is active)."""
    global _CONNECTS
    _CONNECTS = []
    try:
        yield _CONNECTS
    finally:
        _CONNECTS = None


# --- F1ScoreEvaluator: no model -------------------------------------------------------------

F1_SUITE = """\
prior_auth_rationale:
  description: Azure AI evaluators as the AutoAuth framework writes them
  pipeline: {class: 'clineval.suites:SuitePipeline'}
  evaluators:
    - type: azure
      name: F1ScoreEvaluator
      class: azure.ai.evaluation:F1ScoreEvaluator
      args: {threshold: 0.5}
    - type: azure
      name: F1Bare
      class: F1ScoreEvaluator
  cases: [prior_auth_rationale.001-a, prior_auth_rationale.001-b]
prior_auth_rationale.001-a:
  metrics: [F1ScoreEvaluator, F1Bare]
  evaluations:
    - query: rationale
      ground_truth: Patient meets criteria.
      response: The patient meets all criteria
prior_auth_rationale.001-b:
  metrics: [F1ScoreEvaluator]
  F1ScoreEvaluator: {threshold: 0.9}
  evaluations:
    - query: rationale
      ground_truth: approved
      response: denied
"""


@needs_azure
def test_f1_score_evaluator_runs_as_written(tmp_path: Path, connections: list[Any]) -> None:
    outcome = run_suite(write(tmp_path, F1_SUITE), store=tmp_path / "r.db", progress=False)
    scores = scores_of(outcome)
    # Tokens after azure's normalisation (lower case, no punctuation, no articles):
    # response [patient, meets, all, criteria], reference [patient, meets, criteria]:
    # precision 3/4, recall 3/3, F1 = 2·0.75·1 / 1.75 = 6/7.
    f1 = scores[("prior_auth_rationale.001-a", "F1ScoreEvaluator")]
    assert f1.status == "scored" and f1.value == pytest.approx(6 / 7)
    assert f1.label == "pass"  # 6/7 ≥ the threshold 0.5
    assert f1.details["f1_score_threshold"] == 0.5
    # a bare class name under type: azure is azure-ai-evaluation's
    assert scores[("prior_auth_rationale.001-a", "F1Bare")].value == pytest.approx(6 / 7)
    # no shared token: 0, and the per-case threshold (0.9) replaced the suite's
    wrong = scores[("prior_auth_rationale.001-b", "F1ScoreEvaluator")]
    assert (wrong.value, wrong.label, wrong.details["f1_score_threshold"]) == (0.0, "fail", 0.9)
    assert connections == []  # F1 needs no model: no connection at all


# --- LLM evaluators against the local server posing as Azure OpenAI ---------------------------

LLM_SUITE = """\
prior_auth_llm:
  description: Similarity, groundedness and relevance judged by Azure OpenAI
  pipeline: {class: 'clineval.suites:SuitePipeline'}
  evaluators:
    - {type: azure, name: Similarity, class: azure.ai.evaluation:SimilarityEvaluator, args: {threshold: 3}}
    - {type: azure, name: Groundedness, class: azure.ai.evaluation:GroundednessEvaluator}
    - {type: azure, name: Relevance, class: azure.ai.evaluation.RelevanceEvaluator}
  cases: [prior_auth_llm.001-a]
prior_auth_llm.001-a:
  metrics: [Similarity, Groundedness, Relevance]
  context: The policy approves adalimumab after a failed corticosteroid course.
  evaluations:
    - query: Should the adalimumab request be approved?
      ground_truth: Approved, corticosteroids failed.
      response: Approved because corticosteroid therapy failed.
"""


def _judge_script() -> dict[str, Any]:
    def answer(score: int, why: str) -> dict[str, Any]:
        return {"json": {"reason": f"Let's think step by step: {why}", "score": score, "status": "completed"}}

    return {
        "rules": [
            {"pattern": "Equivalence", **answer(5, "same decision and reason")},
            {"pattern": "groundedness", **answer(2, "the reason is not in the context")},
        ],
        "default": answer(4, "answers the question"),
    }


@needs_azure
def test_llm_evaluators_against_local_azure_openai(
    tmp_path: Path, llm_server: ScriptedServer, connections: list[Any]
) -> None:
    llm_server.set_script(_judge_script())
    env = {
        "AZURE_OPENAI_ENDPOINT": llm_server.root_url,
        "AZURE_OPENAI_API_KEY": "azure-secret-4711",
        "AZURE_OPENAI_DEPLOYMENT": "gpt-4o-eval",
        "AZURE_OPENAI_API_VERSION": "2024-10-21",
    }
    outcome = run_suite(
        load_suite(write(tmp_path, LLM_SUITE), env=env), store=tmp_path / "r.db", progress=False
    )
    port = int(llm_server.root_url.rsplit(":", 1)[1])
    opened = list(connections)
    connections.clear()
    scores = scores_of(outcome)
    case = "prior_auth_llm.001-a"
    similarity = scores[(case, "Similarity")]
    assert (similarity.value, similarity.label) == (5.0, "pass")
    assert similarity.explanation == "Let's think step by step: same decision and reason"
    grounded = scores[(case, "Groundedness")]
    assert (grounded.value, grounded.label) == (2.0, "fail")  # below azure's default threshold 3
    relevance = scores[(case, "Relevance")]
    assert (relevance.value, relevance.label) == (4.0, "pass")
    requests = llm_server.requests()
    assert len(requests) == 3
    assert {r["path"] for r in requests} == {"/openai/deployments/gpt-4o-eval/chat/completions"}
    assert all(r["query"] == {"api-version": "2024-10-21"} and r["auth"] == "api-key" for r in requests)
    grounded_prompt = next(r for r in requests if "groundedness" in str(r["body"]).lower())
    assert "failed corticosteroid course" in str(grounded_prompt["body"])  # the case's context
    # every connection went to the local server: no telemetry, no trace upload
    assert opened and {tuple(a) for a in opened} <= {("127.0.0.1", port), ("lookup", "127.0.0.1")}
    assert ("127.0.0.1", port) in {tuple(a) for a in opened}
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("r.db*"))
    assert b"azure-secret-4711" not in raw


@needs_azure
def test_model_config_from_the_suites_openai_judge(tmp_path: Path, llm_server: ScriptedServer) -> None:
    llm_server.set_script(_judge_script())
    text = LLM_SUITE.replace(
        "  cases: [prior_auth_llm.001-a]",
        f"  judge: openai:judge-model@{llm_server.base_url}\n  cases: [prior_auth_llm.001-a]",
    ).replace("metrics: [Similarity, Groundedness, Relevance]", "metrics: [Similarity]")
    outcome = run_suite(
        load_suite(write(tmp_path, text), env={"OPENAI_API_KEY": "sk-local"}),
        store=tmp_path / "r.db",
        progress=False,
    )
    assert scores_of(outcome)[("prior_auth_llm.001-a", "Similarity")].value == 5.0
    [request] = llm_server.requests()
    assert request["path"] == "/v1/chat/completions" and request["body"]["model"] == "judge-model"


@needs_azure
def test_an_unreadable_judge_answer_is_an_error_not_a_score(
    tmp_path: Path, llm_server: ScriptedServer
) -> None:
    llm_server.set_script({"default": {"content": "four"}})  # not the JSON the prompt asks for
    text = LLM_SUITE.replace("metrics: [Similarity, Groundedness, Relevance]", "metrics: [Similarity]")
    env = {
        "AZURE_OPENAI_ENDPOINT": llm_server.root_url,
        "AZURE_OPENAI_API_KEY": "k",
        "AZURE_OPENAI_DEPLOYMENT": "d",
    }
    outcome = run_suite(load_suite(write(tmp_path, text), env=env), store=tmp_path / "r.db", progress=False)
    score = scores_of(outcome)[("prior_auth_llm.001-a", "Similarity")]
    assert score.status == "error" and score.value is None
    assert "evaluator 'Similarity'" in (score.error or "")


# --- without the extra ----------------------------------------------------------------------


def test_without_the_extra_the_error_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "azure.ai.evaluation", None)  # import fails as if not installed
    with pytest.raises(SuiteError) as caught:
        load_suite(write(tmp_path, F1_SUITE))
    message = str(caught.value)
    assert (
        "evaluator 'F1ScoreEvaluator': azure.ai.evaluation:F1ScoreEvaluator is an Azure AI evaluator"
        in message
    )
    assert "azure-ai-evaluation is not installed: pip install 'clineval[azure]'" in message
    assert "evaluator 'F1Bare': F1ScoreEvaluator is an Azure AI evaluator" in message
    assert "suite.yaml" in message and "Traceback" not in message


def test_without_the_extra_the_cli_says_how_to_install(tmp_path: Path) -> None:
    from tests.clirun import clineval

    blocker = tmp_path / "blocker" / "azure"  # a plain package 'azure' hides the installed namespace
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("", encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([str(blocker.parent), str(ROOT)]), "COLUMNS": "200"}
    done = clineval("validate", str(write(tmp_path, F1_SUITE)), cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert "pip install 'clineval[azure]'" in done.stderr and "Traceback" not in done.stderr


def test_a_custom_class_labelled_azure_is_only_a_label(tmp_path: Path) -> None:
    text = (
        "s:\n  description: d\n  pipeline: {class: 'clineval.suites:SuitePipeline'}\n"
        "  evaluators: [{type: azure, name: E, class: 'clineval.suites.evaluators:ExactMatch'}]\n"
        "  cases: [s.1]\n"
        "s.1:\n  metrics: [E]\n  evaluations: [{query: a, ground_truth: 'yes', response: 'yes'}]\n"
    )
    outcome = run_suite(write(tmp_path, text), store=tmp_path / "r.db", progress=False)
    assert scores_of(outcome)[("s.1", "E")].value == 1.0
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("select count(*) from sqlite_master").fetchone()[0] > 0


def test_the_local_server_answers_the_azure_form_as_azure_does(llm_server: ScriptedServer) -> None:
    import json
    import urllib.error
    import urllib.request

    from clineval.testing.process import OPENER  # loopback: no proxy

    llm_server.set_script({"default": {"content": "ok"}})
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    url = f"{llm_server.root_url}/openai/deployments/dep-1/chat/completions"
    request = urllib.request.Request(url, body, {"api-key": "k", "content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:  # Azure OpenAI needs an api-version
        OPENER.open(request, timeout=10)
    assert refused.value.code == 404
    request.full_url = url + "?api-version=2024-10-21"
    with OPENER.open(request, timeout=10) as answer:
        assert json.load(answer)["model"] == "dep-1"  # the deployment, when the body names no model
    logged = llm_server.requests()
    assert [(r["query"], r["auth"]) for r in logged] == [
        ({}, "api-key"),
        ({"api-version": "2024-10-21"}, "api-key"),
    ]
