"""No secret in the store, the terminal, the exports or the JUnit report (issue 12, item 4).

A real ``clineval run`` with secrets everywhere a user could put or meet one: a token
read into the run file's tags with ``${MY_SERVICE_TOKEN}``, an agent whose error quotes
it, a judge key in a custom variable (``api_key_env``), a judge whose error body echoes
``Bearer sk-...`` (HTTP 400 for one case, HTTP 401 for a whole run), and a judge
explanation quoting the token. Then every place a secret could surface is searched for
it: the store file's bytes (with its WAL), ``clineval runs``, ``show --cases``, the three
export formats, the JUnit report, and every command's stdout and stderr.

Also: the run file's ``${NAME}`` is stored as written and read again on resume, and the
rule for which endpoint receives which key.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import clineval

from clineval.testing import ScriptedServer

SERVICE_TOKEN = "svc-live-7Hq2Zr9LmK4pX8wB"
JUDGE_KEY = "sk-judge-key-5f1e9c2a7b3d4e6f"
ECHOED = "sk-test-0123456789abcdefXYZ"
SECRETS = (SERVICE_TOKEN, JUDGE_KEY, ECHOED, "0123456789abcdefXYZ", "7Hq2Zr9LmK4pX8wB")
FORMATS = ("jsonl", "csv", "long-csv")
GOOD = {"explanation": "Matches the reference.", "rating": 5}

AGENT = """
import os


def agent(question: str) -> str:
    if "note 1:" in question:
        raise PermissionError(f"the records service refused token {os.environ['MY_SERVICE_TOKEN']}")
    n = int(question.split()[1].rstrip(":"))
    return f"Patient {n} has potassium {4 + n / 10:.1f} mmol/L."
"""


def _workspace(folder: Path, server: ScriptedServer, n: int = 6) -> Path:
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(n):
            row = {
                "id": f"c{i:02d}",
                "input": f"note {i}: latest potassium?",
                "reference": f"Patient {i} has potassium {4 + i / 10:.1f} mmol/L.",
            }
            handle.write(json.dumps(row) + "\n")
    (folder / "agent.py").write_text(AGENT, encoding="utf-8")
    run_file = folder / "run.yaml"
    run_file.write_text(
        f"""
name: secrets
data: cases.jsonl
agent: agent.py:agent
metrics: [rubric, token_f1]
judge:
  provider: openai
  model: judge-model
  base_url: {server.base_url}
  api_key_env: MY_JUDGE_KEY
  max_attempts: 2
store: runs.db
cache: null
tags:
  service: ${{MY_SERVICE_TOKEN}}
  team: cardiology
""",
        encoding="utf-8",
    )
    return run_file


def _env(**extra: str | None) -> dict[str, str | None]:
    return {"MY_SERVICE_TOKEN": SERVICE_TOKEN, "MY_JUDGE_KEY": JUDGE_KEY, **extra}


def _cli(*args: str, cwd: Path, env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    return clineval(*args, cwd=cwd, env=env if env is not None else _env(), timeout=90, columns=250)


def _assert_clean(where: str, text: str | bytes) -> None:
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    for secret in SECRETS:
        assert secret.encode("utf-8") not in data, f"{secret!r} found in {where}"


def _store_bytes(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.glob("runs.db*")))


def test_no_secret_in_store_terminal_exports_or_junit(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script(
        {
            "rules": [
                {
                    "pattern": "Patient 2 has",
                    "status": 400,
                    "error_message": f"Incorrect API key provided: Bearer {ECHOED}",
                },
                {
                    "pattern": "Patient 3 has",
                    "json": {"explanation": f"The note mentions {SERVICE_TOKEN}; correct.", "rating": 4},
                },
            ],
            "default": {"json": GOOD},
        }
    )
    run_file = _workspace(tmp_path, llm_server)
    outputs: list[tuple[str, subprocess.CompletedProcess[str]]] = []

    first = _cli("run", str(run_file), "--cases", "--junit", "report.xml", cwd=tmp_path)
    outputs.append(("run", first))
    assert first.returncode == 0, first.stderr
    assert "unscored" in first.stdout  # the reasons table is printed, masked
    assert "Bearer ***" in first.stdout or "Bearer ***" in first.stderr

    # a second run whose judge refuses the key, echoing one in its error body
    llm_server.set_script(
        {"default": {"status": 401, "error_message": f"Incorrect API key provided: Bearer {ECHOED}"}}
    )
    second = _cli("run", str(run_file), cwd=tmp_path)
    outputs.append(("run (401)", second))
    assert second.returncode == 2, second.stderr
    assert "refused the credentials" in second.stderr and "Bearer ***" in second.stderr

    conn = sqlite3.connect(tmp_path / "runs.db")
    run_ids = [r[0] for r in conn.execute("SELECT id FROM runs ORDER BY created_at")]
    conn.close()
    assert len(run_ids) == 2
    runs = _cli("runs", "--store", "runs.db", cwd=tmp_path)
    outputs.append(("runs", runs))
    exports: dict[tuple[str, str], str] = {}
    # the reads of the stored runs are independent: two at a time (the machine's cores)
    reads = [("show", run_id, "--cases") for run_id in run_ids]
    reads += [("export", run_id, "--format", fmt, "-o", "-") for run_id in run_ids for fmt in FORMATS]
    reads += [("export", run_id, "--format", "csv", "-o", f"{run_id}.csv") for run_id in run_ids]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(lambda args: _cli(*args, "--store", "runs.db", cwd=tmp_path), reads))
    for args, proc in zip(reads, done, strict=True):
        if args[0] == "show":
            outputs.append(("show", proc))
        elif args[-1] == "-":
            assert proc.returncode == 0, proc.stderr
            outputs.append((f"export {args[3]}", proc))
            exports[(args[1], args[3])] = proc.stdout
        else:
            assert proc.returncode == 0, proc.stderr
            _assert_clean(args[-1], (tmp_path / args[-1]).read_bytes())

    for what, proc in outputs:
        assert "Traceback" not in proc.stderr, proc.stderr
        _assert_clean(f"stdout of {what}", proc.stdout)
        _assert_clean(f"stderr of {what}", proc.stderr)
    _assert_clean("the JUnit report", (tmp_path / "report.xml").read_bytes())
    _assert_clean("the store file", _store_bytes(tmp_path))

    # what was masked is still there, as ***: the reasons stay readable
    jsonl = [json.loads(line) for line in exports[(run_ids[0], "jsonl")].splitlines()]
    by_case = {row["case"]["id"]: row for row in jsonl}
    assert by_case["c02"]["scores"]["rubric"]["error"].endswith("Incorrect API key provided: Bearer ***")
    assert "the records service refused token ***" in by_case["c01"]["case"]["agent_run"]["error"]
    assert by_case["c03"]["scores"]["rubric"]["explanation"] == "The note mentions ***; correct."
    assert "service=${MY_SERVICE_TOKEN}" in runs.stdout  # clineval runs: the tag as written


def test_run_file_variables_are_stored_as_written_and_read_again_on_resume(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    llm_server.set_script({"rules": [{"times": 2, "json": GOOD}], "default": {"status": 401}})
    run_file = _workspace(tmp_path, llm_server, n=4)
    text = run_file.read_text().replace("  team: cardiology", "  team: ${TEAM_NAME}")
    run_file.write_text(text.replace("[rubric, token_f1]", "[rubric]"))
    first = _cli(
        "run", str(run_file), "--judge-concurrency", "1", cwd=tmp_path, env=_env(TEAM_NAME="cardiology-west")
    )
    assert first.returncode == 2, first.stderr  # the 401 after two answers
    conn = sqlite3.connect(tmp_path / "runs.db")
    ((run_id, raw),) = conn.execute("SELECT id, record FROM runs").fetchall()
    conn.close()
    record = json.loads(raw)
    assert record["tags"] == {"service": "${MY_SERVICE_TOKEN}", "team": "${TEAM_NAME}"}
    assert record["config"]["tags"] == record["tags"]
    assert record["config"]["from_environment"] == ["MY_SERVICE_TOKEN", "TEAM_NAME"]
    assert "cardiology-west" not in raw

    llm_server.set_script({"default": {"json": GOOD}})
    refused = _cli("run", "--resume", run_id, "--store", "runs.db", cwd=tmp_path, env=_env(TEAM_NAME=None))
    assert refused.returncode == 2
    assert "TEAM_NAME" in refused.stderr and "set them to resume it" in refused.stderr
    assert "Traceback" not in refused.stderr
    resumed = _cli(
        "run", "--resume", run_id, "--store", "runs.db", cwd=tmp_path, env=_env(TEAM_NAME="cardiology-west")
    )
    assert resumed.returncode == 0, resumed.stderr
    conn = sqlite3.connect(tmp_path / "runs.db")
    ((status, raw),) = conn.execute("SELECT status, record FROM runs").fetchall()
    n_results = conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    conn.close()
    assert status == "completed" and n_results == 4 * 3  # rubric, latency, failure
    assert "cardiology-west" not in raw and json.loads(raw)["tags"]["team"] == "${TEAM_NAME}"


# --- which endpoint receives which key ---------------------------------------------------


def _headers(config: dict[str, Any]) -> dict[str, str]:
    from clineval.judges import JudgeConfig, build_judge

    judge = build_judge(JudgeConfig(provider="openai", model="m", **config))
    return dict(judge.backend._headers)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("config", "env", "sent", "warning"),
    [
        ({}, {}, True, None),  # api.openai.com
        ({"base_url": "http://127.0.0.1:8000/v1"}, {}, True, None),
        ({"base_url": "http://localhost:11434/v1"}, {}, True, None),
        ({}, {"OPENAI_BASE_URL": "https://gateway-a.example.com/v1"}, True, None),
        (
            {"base_url": "https://gateway-b.example.com/v1"},
            {},
            False,
            "is not sent to https://gateway-b.example.com",
        ),
        ({"base_url": "https://gateway-c.example.com/v1", "api_key_env": "OPENAI_API_KEY"}, {}, True, None),
        (
            {"base_url": "http://10.9.8.7:8000/v1", "api_key_env": "OPENAI_API_KEY"},
            {},
            True,
            "sent over plain HTTP to 10.9.8.7:8000",
        ),
    ],
)
def test_the_openai_key_goes_only_where_it_belongs(
    config: dict[str, Any],
    env: dict[str, str],
    sent: bool,
    warning: str | None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-abcdefghijklmnop")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    headers = _headers(config)
    assert ("authorization" in headers) is sent
    stderr = capsys.readouterr().err
    if warning is None:
        assert "warning" not in stderr
    else:
        assert warning in stderr and stderr.count("warning:") == 1
    assert "sk-openai-abcdefghijklmnop" not in stderr


def test_a_key_in_a_custom_variable_is_masked_like_any_other(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key's variable may have any name (api_key_env: GATEWAY): the key is masked anyway."""
    from clineval.redaction import redact

    monkeypatch.setenv("GATEWAY", "gw-0f9e8d7c6b5a4")
    _headers({"base_url": "http://127.0.0.1:9/v1", "api_key_env": "GATEWAY"})
    assert redact("denied: gw-0f9e8d7c6b5a4 is revoked") == "denied: *** is revoked"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (
            "Incorrect API key provided: Bearer sk-abc123def456ghi789",
            "Incorrect API key provided: Bearer ***",
        ),
        ("key sk-proj-AbC_12-xyz987654321 was revoked", "key sk-*** was revoked"),
        ("api-key: 0123456789abcdef0123456789abcdef", "api-key: ***"),
        ('{"api_key": "hunter2-secret-value"}', '{"api_key": "***"}'),
        ("GET https://bob:hunter22@gw.example.com/v1", "GET https://***@gw.example.com/v1"),
        ("azure key 0123456789abcdef0123456789ABCDEF here", "azure key *** here"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123", "token ***"),
        # clinical text and ordinary ids are left alone
        ("risk-benefit of a task-force review; sk- alone", "risk-benefit of a task-force review; sk- alone"),
        (
            "commit 0123456789abcdef0123456789abcdef01234567",
            "commit 0123456789abcdef0123456789abcdef01234567",
        ),
        ("The token provided was wrong", "The token provided was wrong"),
        ('{"api_key": "${PA_SERVICE_KEY}"}', '{"api_key": "${PA_SERVICE_KEY}"}'),  # a reference, not a key
    ],
)
def test_credential_patterns_are_masked(text: str, masked: str) -> None:
    from clineval.redaction import redact

    assert redact(text, env={}) == masked
    assert redact(masked, env={}) == masked  # idempotent


def test_secret_looking_variables_are_masked_and_stay_valid_json() -> None:
    from clineval.redaction import redact, redact_json

    env = {"MY_SERVICE_TOKEN": 'a"quoted\\secret', "DB_PASSWORD": "short", "HOME": "/root/abcdefgh"}
    assert redact('token a"quoted\\secret!', env=env) == "token ***!"
    assert redact("short and /root/abcdefgh", env=env) == "short and /root/abcdefgh"  # too short / not secret
    document = json.dumps({"error": 'refused a"quoted\\secret', "n": 1})
    os.environ["CLINEVAL_TEST_SECRET_TOKEN"] = 'a"quoted\\secret'
    try:
        assert json.loads(redact_json(document)) == {"error": "refused ***", "n": 1}
    finally:
        del os.environ["CLINEVAL_TEST_SECRET_TOKEN"]


def test_a_401_after_no_key_was_sent_says_so(llm_server: ScriptedServer, tmp_path: Path) -> None:
    """OPENAI_API_KEY is withheld from a custom endpoint; when that endpoint answers 401, the
    message says no key was sent and how to send one (here the endpoint is local, so the
    key is left unset instead)."""
    llm_server.set_script({"default": {"status": 401, "error_message": "missing credentials"}})
    (tmp_path / "cases.jsonl").write_text(
        json.dumps({"id": "c1", "input": "q", "response": "r", "reference": "x"}) + "\n", encoding="utf-8"
    )
    proc = _cli(
        "run", "-d", "cases.jsonl", "-m", "rubric", "--judge", f"openai:m@{llm_server.base_url}",
        "--store", "runs.db", "--no-cache", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "(HTTP 401: missing credentials); no API key was sent" in proc.stderr
    assert "api_key_env" in proc.stderr and "Traceback" not in proc.stderr


def test_runs_stored_before_masking_are_masked_when_shown(tmp_path: Path) -> None:
    """A store written by a clineval that did not mask (secrets put back into its rows with
    plain SQL): ``runs``, ``show --cases`` and the exports still show no secret."""
    (tmp_path / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": f"c{i}", "response": "K 4.1", "reference": "K 4.1"}) + "\n" for i in range(3)
        ),
        encoding="utf-8",
    )
    made = _cli("run", "-d", "cases.jsonl", "-m", "token_f1", "--store", "runs.db", "-q", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        (run_id, record) = conn.execute("SELECT id, record FROM runs").fetchone()
        data = json.loads(record)
        data["tags"] = {"service": SERVICE_TOKEN}
        data["name"] = f"nightly with {ECHOED}"
        conn.execute("UPDATE runs SET record = ? WHERE id = ?", (json.dumps(data), run_id))
        (score,) = conn.execute("SELECT score FROM results WHERE case_id = 'c0'").fetchone()
        loaded = json.loads(score)
        loaded["explanation"] = f"the service answered with Bearer {SERVICE_TOKEN}"
        conn.execute("UPDATE results SET score = ? WHERE case_id = 'c0'", (json.dumps(loaded),))
    env = _env()
    for args in (
        ("runs",),
        ("show", run_id, "--cases"),
        ("export", run_id, "--format", "jsonl"),
        ("export", run_id, "--format", "csv"),
    ):
        shown = _cli(*args, "--store", "runs.db", cwd=tmp_path, env=env)
        assert shown.returncode == 0, (args, shown.stderr)
        _assert_clean(f"{args[0]} stdout", shown.stdout)
        _assert_clean(f"{args[0]} stderr", shown.stderr)
    listed = _cli("runs", "--store", "runs.db", cwd=tmp_path, env=env)
    assert "service=***" in listed.stdout, listed.stdout
