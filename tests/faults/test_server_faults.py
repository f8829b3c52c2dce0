"""Fault injection: an LLM judge behind the scripted server in each fault mode, through the CLI.

``clineval run`` scores ten cases with ``rubric`` against
:class:`clineval.testing.ScriptedServer`. In each mode one case's requests always get the
fault (case c0: the fault persists, so the case must end *unscored* with a reason), one
case's first request gets it (case c1: transient, so the case ends scored after a retry
or a re-ask), and the other cases get a valid answer. The judge has two attempts per
request and a 0.5 s timeout. The judge has two attempts per request and a 0.5 s timeout.

Invariants, in every mode: exit 0 (unscored cases do not fail a run), no traceback on
standard error, every (case, metric) stored exactly once, every scored value the one the
valid answer gives (never a silent 0), every unscored result with a non-empty reason, and
the run ``completed``.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import openai
import pytest
from tests.clirun import clineval

from clineval.testing import ScriptedServer

N_CASES = 10
TIMEOUT_S = 0.5
VALID = {"json": {"explanation": "Matches the reference.", "rating": 4}}

# mode: (the fault action, what the reason of the persistently faulted case mentions)
FAULTS: dict[str, tuple[dict[str, Any], str]] = {
    "429 with Retry-After": ({"status": 429, "retry_after": 0.1}, "429"),
    "429 without Retry-After": ({"status": 429}, "429"),
    "500": ({"status": 500}, "500"),
    "503": ({"status": 503}, "503"),
    "timeout": ({**VALID, "delay_s": TIMEOUT_S * 4}, "time"),
    "malformed body": ({"malformed_body": True}, "not a valid chat completion"),
    "truncated body": ({"truncated_body": True}, "after 2 attempt(s)"),
    "reset": ({"reset": True}, "reset"),
    "wrong JSON": ({"json": {"verdict": "great", "score": "high"}}, "does not match the schema"),
}


def _script(fault: dict[str, Any]) -> dict[str, Any]:
    return {
        "rules": [
            {"pattern": "note 0:", **fault},
            {"pattern": "note 1:", "times": 1, **fault},
        ],
        "default": VALID,
    }


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("judge_faults")
    rows = [
        {
            "id": f"c{n}",
            "input": f"note {n}: latest potassium?",
            "response": f"Potassium is {4 + n / 10:.1f} mmol/L.",
            "reference": f"Potassium was {4 + n / 10:.1f} mmol/L.",
        }
        for n in range(N_CASES)
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def _run(folder: Path, server: ScriptedServer, db: Path) -> subprocess.CompletedProcess[str]:
    run_file = folder / f"{db.stem}.yaml"
    run_file.write_text(
        json.dumps(
            {
                "data": "cases.jsonl",
                "metrics": ["rubric"],
                "judge": {
                    "provider": "openai",
                    "model": "judge-model",
                    "base_url": server.base_url,
                    "timeout_s": TIMEOUT_S,
                    "max_attempts": 2,
                    "concurrency": 4,
                },
                "cache": None,
            }
        ),
        encoding="utf-8",
    )
    return clineval(
        "run", str(run_file), "--store", str(db), "-q", cwd=folder, env={"OPENAI_API_KEY": "sk-test-scripted"}
    )


@pytest.mark.parametrize("mode", list(FAULTS))
def test_judge_fault_ends_scored_or_unscored_with_a_reason(
    mode: str, workspace: Path, llm_server: ScriptedServer, tmp_path: Path
) -> None:
    fault, mentions = FAULTS[mode]
    llm_server.set_script(_script(fault))
    db = tmp_path / "runs.db"
    done = _run(workspace, llm_server, db)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "never retrieved" not in done.stderr, done.stderr

    with sqlite3.connect(db) as conn:
        ((status,),) = conn.execute("SELECT status FROM runs").fetchall()
        rows = conn.execute("SELECT case_id, metric, status, value, score FROM results").fetchall()
    assert status == "completed"
    assert sorted((r[0], r[1]) for r in rows) == sorted((f"c{n}", "rubric") for n in range(N_CASES))
    results = {r[0]: (r[2], r[3], json.loads(r[4])) for r in rows}
    clean = {results[f"c{n}"][:2] for n in range(2, N_CASES)}
    assert len(clean) == 1 and next(iter(clean))[0] == "scored"
    good_value = next(iter(clean))[1]
    assert good_value is not None and good_value > 0
    for case_id, (state, value, score) in results.items():
        if state == "scored":
            assert value == good_value, (mode, case_id, value)  # never a silent 0
        else:
            assert state == "error" and value is None, (mode, case_id, state, value)
            assert (score.get("error") or "").strip(), (mode, case_id, score)
    persistent = results["c0"]
    assert persistent[0] == "error", (mode, persistent)
    assert mentions.lower() in persistent[2]["error"].lower(), (mode, persistent[2]["error"])
    assert results["c1"][0] == "scored", (mode, results["c1"])  # a fault that passes is retried away
    assert "sk-test-scripted" not in done.stdout + done.stderr


@pytest.mark.parametrize("action", ["truncated_body", "reset"])
def test_server_cuts_the_connection(action: str, llm_server: ScriptedServer) -> None:
    """The two connection faults, as a client sees them: an answer cut short, no answer."""
    llm_server.set_script({"rules": [{"pattern": "cut", action: True}], "default": {"content": "fine"}})
    client = openai.OpenAI(base_url=llm_server.base_url, api_key="test", max_retries=0, timeout=10)
    with pytest.raises(openai.APIConnectionError) as failed:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "cut"}])
    cause = repr(failed.value.__cause__)
    if action == "truncated_body":
        assert "expected" in cause and "received" in cause, cause  # Content-Length larger than the body
    else:
        assert "reset" in cause.lower() or "disconnected" in cause.lower(), cause
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "again"}])
    assert answer.choices[0].message.content == "fine"  # the server itself is unharmed
    assert llm_server.stats()["chat_requests"] == 2
    assert [r["body"]["messages"][0]["content"] for r in llm_server.requests()] == ["cut", "again"]


def test_connection_fault_actions_are_checked() -> None:
    from clineval.testing.server import ScriptError, compile_script

    with pytest.raises(ScriptError, match=r"rules\[0\]\.reset must be true"):
        compile_script({"rules": [{"reset": 1}]})
    with pytest.raises(ScriptError, match="exactly one of"):
        compile_script({"rules": [{"reset": True, "truncated_body": True}]})
