"""Every factuality and RAG metric end to end through the local OpenAI-compatible server.

The server answers each packaged prompt (recognised by a phrase of its system message)
with a fixed JSON answer; the run goes through ``evaluate`` and the CLI, the HTTP judge,
validation, the store and the aggregates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from clineval import evaluate
from clineval.cli.main import cli
from clineval.testing import ScriptedServer

FACTS = {
    "facts": [
        {
            "text": "The patient has stage IV lung adenocarcinoma.",
            "category": "diagnosis",
            "importance": "high",
        },
        {"text": "The patient takes osimertinib 80 mg daily.", "category": "treatment", "importance": "high"},
    ]
}
VERDICTS = {
    "verdicts": [
        {"id": 2, "label": "not_entailed", "reason": "incorrect", "evidence": "40 mg", "explanation": "dose"},
        {"id": 1, "label": "entailed", "reason": None, "evidence": "stage IV", "explanation": "stated"},
    ]
}
SCRIPT: dict[str, Any] = {
    "rules": [
        {"pattern": "You check facts against a text", "json": VERDICTS},
        # the grounding step of conversational faithfulness (it sees the question)
        {"pattern": "answer are grounded in the", "json": VERDICTS},
        {
            "pattern": "You sort the sentences of an answer",
            "json": {
                "sentences": [
                    {"id": 1, "kind": "acknowledgement"},
                    {"id": 2, "kind": "informative"},
                    {"id": 3, "kind": "informative"},
                ]
            },
        },
        {
            "pattern": "which parts of a retrieved context help",
            "json": {
                "sentences": [
                    {"id": 1, "relevant": True},
                    {"id": 2, "relevant": False},
                ]
            },
        },
        {
            "pattern": "as a list of statements",
            "json": {"statements": ["Osimertinib is taken daily.", "It is 80 mg."]},
        },
        {"pattern": "declines to answer what the user", "json": {"refused": False, "explanation": "answers"}},
        {"pattern": "should decline a user's request", "json": {"decline": False, "reason": "none"}},
        {"pattern": "You judge the retrieval step", "json": {"relevant": True, "explanation": "on topic"}},
        {"pattern": "fact", "json": FACTS},  # fact extraction (checked last: other prompts mention facts)
    ]
}
CASE = {
    "id": "p1",
    "input": "What is my treatment?",
    "response": (
        "Thank you for asking. You have stage IV lung adenocarcinoma. You take osimertinib 80 mg daily."
    ),
    "reference": "Stage IV lung adenocarcinoma, EGFR exon 19 deletion. Osimertinib 40 mg daily.",
    "contexts": ["Osimertinib 40 mg daily was started in May. The clinic is open on Mondays."],
    "should_refuse": False,
}
METRICS = [
    "tbfact",
    "conversational_faithfulness",
    "refusal_accuracy",
    "context_relevance",
    "faithfulness",
    "context_relevance_ragas",
]


def _check(values: dict[str, Any]) -> None:
    # TBFact: 2 response facts (1 entailed, 1 contradicted), 2 reference facts (same verdicts)
    assert values["tbfact"] == 0.5
    assert values["tbfact.distortions"] == 1 and values["tbfact.recall_high"] == 0.5
    # CF: 2 informative sentences, verdicts 1 entailed + 1 not -> 0.5 (acknowledgement ignored)
    assert values["conversational_faithfulness"] == 0.5
    assert values["refusal_accuracy"] == 1.0
    assert values["context_relevance"] == 1.0
    assert values["faithfulness"] == 0.5
    assert values["context_relevance_ragas"] == 0.5


def test_every_metric_through_the_http_judge(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script(SCRIPT)
    result = evaluate(
        [CASE], METRICS, judge=f"openai:judge@{llm_server.base_url}", store=tmp_path / "s.db", progress=False
    )
    frame = result.to_pandas()
    row = frame.iloc[0].to_dict()
    _check(row)
    assert not result.unscored() or sum(result.unscored().values()) == 0
    # judge calls: tbfact 4 (two extractions, two directions), CF 2, RA 1 (labelled), CR 1,
    # faithfulness 2, context_relevance_ragas 1
    assert result.run.usage.calls == 11
    tb = next(r for r in result.results if r.metric == "tbfact").score
    assert tb.details["judge_kind"] == "llm"
    assert {f["id"] for f in tb.details["facts"] if f["direction"] == "precision"} == {1, 2}
    # reordered ids were aligned by id: fact 2 (the dose) is the contradicted one
    contradicted = [f for f in tb.details["facts"] if f["reason"] == "incorrect"]
    assert {f["fact"] for f in contradicted} == {"The patient takes osimertinib 80 mg daily."}


def test_every_metric_from_the_cli(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script(SCRIPT)
    data = tmp_path / "cases.jsonl"
    data.write_text(json.dumps(CASE) + "\n")
    runner = CliRunner()
    done = runner.invoke(
        cli,
        [
            "run",
            "-d",
            str(data),
            "-m",
            ",".join(METRICS),
            "--judge",
            f"openai:judge@{llm_server.base_url}",
            "--store",
            str(tmp_path / "s.db"),
            "-q",
        ],
    )
    assert done.exit_code == 0, done.output
    assert "tbfact" in done.output and "context_relevance_ragas" in done.output
    exported = tmp_path / "facts.jsonl"
    done = runner.invoke(cli, ["facts", "latest", "-o", str(exported), "--store", str(tmp_path / "s.db")])
    assert done.exit_code == 0, done.output
    (line,) = exported.read_text().splitlines()
    row = json.loads(line)
    assert row["id"] == "p1" and len(row["gold_facts"]) == 2
    assert row["source"] == "extracted from reference"
    # curate: re-grade the first fact as low importance, then score the stored run again
    row["gold_facts"][0]["importance"] = "low"
    exported.write_text(json.dumps(row) + "\n")
    done = runner.invoke(
        cli,
        [
            "score",
            "latest",
            "-m",
            f"tbfact(reference_facts={exported})",
            "--judge",
            f"openai:judge@{llm_server.base_url}",
            "--store",
            str(tmp_path / "s.db"),
            "-q",
        ],
    )
    assert done.exit_code == 0, done.output
    from clineval import load_run

    rescored = load_run("latest", store=tmp_path / "s.db")
    score = next(r for r in rescored.results if r.metric == "tbfact").score
    assert score.details["reference_facts_source"] == "reference_facts file"
    assert score.sub_scores["recall_low"] == 1.0 and score.sub_scores["recall_high"] == 0.0
