"""Simulated conversations: scenarios, simulated users, the simulation loop, saving,
resuming, and the ``clineval conversations`` commands."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import clineval

from clineval.conversations.model import Conversation, Message, ToolCallRecord
from clineval.conversations.scenarios import DEFAULT_PERSONA, Followup, Scenario, load_scenarios
from clineval.conversations.simulate import (
    ENVIRONMENT_KIND,
    SimulationConfig,
    Simulator,
    SystemOutputError,
    as_system,
    load_saved,
    load_simulation_config,
    save_conversation,
    saved_path,
    scenario_cases,
    score_conversations,
    simulate_and_score,
    simulate_conversation,
)
from clineval.conversations.users import LLMUser, ScriptedUser, is_completion
from clineval.errors import ConfigError
from clineval.judges.config import JudgeConfig
from clineval.suites.source import SuiteError
from clineval.testing import ScriptedServer

SCENARIOS_YAML = """\
scenarios:
  - id: p4-timeline
    patient_id: patient_4
    initial_query: "Orchestrator: prepare patient_4 for the tumor board"
    initial_expect: Orchestrator
    followups:
      - "Show me the patient's timeline"
      - text: "What do the latest images show?"
        expect: Radiology
    persona: a thoracic oncologist
    goal: a complete picture of the patient before the meeting
    trials: 2
    max_turns: 6
    metadata: {site: north}
  - id: p7
    patient_id: 7
    initial_query: Summarise the patient's history
"""


def _scenario(**changes: Any) -> Scenario:
    data: dict[str, Any] = {
        "id": "s1",
        "patient_id": "patient_4",
        "initial_query": "Orchestrator: prepare patient_4 for the tumor board",
        "initial_expect": "Orchestrator",
        "followups": [
            {"text": "Show me the patient's timeline", "expect": "PatientHistory"},
            {"text": "What do the latest images show?", "expect": "Radiology"},
        ],
        "persona": "a thoracic oncologist",
        "goal": "a complete picture of the patient before the meeting",
    }
    data.update(changes)
    return Scenario.model_validate(data)


def toy_system(conversation: Conversation) -> list[Message] | str:
    """Routes by keyword: images to Radiology, the timeline to PatientHistory (with a tool call)."""
    last = conversation.messages[-1].text.lower()
    if "image" in last:
        return [
            Message(role="assistant", speaker="Orchestrator", text="Asking Radiology."),
            Message(role="assistant", speaker="Radiology", text="Stable disease on the last CT."),
        ]
    if "timeline" in last:
        return [
            Message(
                role="assistant",
                speaker="PatientHistory",
                text="2019: diagnosis of NSCLC; 2020: carboplatin.",
                tool_calls=[
                    ToolCallRecord(
                        name="load_patient_data", arguments={"patient_id": conversation.patient_id or ""}
                    )
                ],
            )
        ]
    return "Noted."


# --------------------------------------------------------------------------- scenarios


def test_load_scenarios_mapping_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "scenarios.yaml"
    path.write_text(SCENARIOS_YAML, encoding="utf-8")
    first, second = load_scenarios(path)
    assert first.id == "p4-timeline" and first.patient_id == "patient_4"
    assert first.followups == [
        Followup(text="Show me the patient's timeline"),
        Followup(text="What do the latest images show?", expect="Radiology"),
    ]
    assert first.initial_expect == "Orchestrator"
    assert (first.trials, first.max_turns, first.metadata) == (2, 6, {"site": "north"})
    # defaults, and a numeric patient id read as text
    assert second.patient_id == "7"
    assert (second.persona, second.trials, second.max_turns, second.followups) == (DEFAULT_PERSONA, 1, 8, [])
    assert second.goal is None and "every follow-up" in second.effective_goal


def test_load_scenarios_plain_list(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("- {id: a, initial_query: hello}\n- {id: b, initial_query: hi}\n", encoding="utf-8")
    assert [s.id for s in load_scenarios(path)] == ["a", "b"]


def test_load_scenarios_reports_every_problem_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            scenarios:
              - id: a
                initial_query: hello
              - id: a
                initial_query: again
              - id: b
                initial_query: "   "
              - id: c
                initial_query: hi
                folowups: []
              - id: "bad id/x"
                initial_query: hi
              - id: d
                initial_query: hi
                followups:
                  - text: ""
                trials: 0
            """
        ),
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as info:
        load_scenarios(path)
    message = str(info.value)
    assert f"{path}:4: scenarios[1].id: duplicate scenario id 'a' (first defined at line 2)" in message
    assert f"{path}:7: scenarios[2].initial_query: the initial query must not be empty" in message
    assert f"{path}:10: scenarios[3].folowups: unknown field" in message
    assert f"{path}:11: scenarios[4].id:" in message and "not a usable scenario id" in message
    assert f"{path}:16: scenarios[5].followups[0].text: a follow-up must not be empty" in message
    assert f"{path}:17: scenarios[5].trials:" in message
    assert len(info.value.problems) == 6


def test_load_scenarios_other_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="scenario file not found"):
        load_scenarios(tmp_path / "missing.yaml")
    path = tmp_path / "s.yaml"
    path.write_text("scenarios: []\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="no scenarios"):
        load_scenarios(path)
    path.write_text("scenario:\n  - {id: a, initial_query: q}\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"s\.yaml:1: scenario: unknown field"):
        load_scenarios(path)
    path.write_text("- {id: a}\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"s\.yaml:1: \[0\]\.initial_query: required field is missing"):
        load_scenarios(path)


# --------------------------------------------------------------------------- the scripted user


async def test_scripted_user_order_gold_agents_continuation_done() -> None:
    scenario = _scenario()
    user = ScriptedUser()
    conversation = await simulate_conversation(toy_system, user, scenario, trial=1)
    users = [m for m in conversation.messages if m.role == "user"]
    assert [m.text for m in users] == [
        "Orchestrator: prepare patient_4 for the tumor board",
        "Show me the patient's timeline",
        "What do the latest images show?",
        "Thank you, that is all I need.",
    ]
    assert [m.gold_agent for m in users] == ["Orchestrator", "PatientHistory", "Radiology", None]
    assert conversation.metadata["ended"] == "user_done"
    assert conversation.metadata["user_turns"] == 4
    assert await user.next_message(conversation, scenario) is None
    # no closing message: done right after the last follow-up
    short = await simulate_conversation(toy_system, ScriptedUser(continuation=None), scenario, trial=1)
    assert [m.text for m in short.messages if m.role == "user"][-1] == "What do the latest images show?"


# --------------------------------------------------------------------------- the LLM user


def _llm_user(server: ScriptedServer, **kwargs: Any) -> LLMUser:
    return LLMUser(f"openai:user-model@{server.base_url}", **kwargs)


async def test_llm_user_prompt_and_a_followup_turn(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"content": "Orchestrator: Show me the patient's timeline, please"}})
    scenario = _scenario()
    user = _llm_user(llm_server)
    opening = await user.first_message(scenario)
    assert (opening.text, opening.gold_agent) == (scenario.initial_query, "Orchestrator")
    conversation = Conversation(
        id="c",
        messages=[
            opening,
            Message(role="assistant", speaker="Orchestrator", text="Which data do you need first?"),
            Message(role="tool", speaker="tool", text="{...}", tool_call_id="x"),
        ],
    )
    message = await user.next_message(conversation, scenario)
    assert message is not None
    assert message.text == "Orchestrator: Show me the patient's timeline, please"
    assert (message.role, message.speaker, message.gold_agent) == ("user", "user", "PatientHistory")
    assert message.metadata == {"followup": 0}

    body = llm_server.requests()[-1]["body"]
    assert body["model"] == "user-model"
    system, *chat = body["messages"]
    prompt = system["content"]
    assert system["role"] == "system"
    for expected in (
        "a thoracic oncologist",
        "a complete picture of the patient before the meeting",
        "patient patient_4",
        "1. Show me the patient's timeline\n2. What do the latest images show?",
        "'Orchestrator: <your message>'",
        "One question or request per message",
        "reply with exactly CONVERSATION COMPLETE",
    ):
        assert expected in prompt
    assert "Radiology" not in prompt and "PatientHistory" not in prompt  # gold labels stay hidden
    # its own messages as the assistant, the agents' messages since its last turn as the user
    assert chat == [
        {"role": "assistant", "content": scenario.initial_query},
        {"role": "user", "content": "Orchestrator: Which data do you need first?"},
    ]


async def test_llm_user_gold_agent_only_for_the_next_scripted_followup(llm_server: ScriptedServer) -> None:
    scenario = _scenario()
    user = _llm_user(llm_server)
    conversation = Conversation(
        id="c",
        messages=[
            await user.first_message(scenario),
            Message(role="assistant", speaker="Orchestrator", text="Shall I go on?"),
        ],
    )
    llm_server.set_script({"default": {"content": "Orchestrator: proceed"}})
    message = await user.next_message(conversation, scenario)
    assert message is not None and message.gold_agent is None and message.metadata == {}
    # the second follow-up before the first is not taken as the first
    llm_server.set_script({"default": {"content": "Orchestrator: what do the latest images show?"}})
    message = await user.next_message(conversation, scenario)
    assert message is not None and message.gold_agent is None


async def test_llm_user_stops_on_the_signal_line(llm_server: ScriptedServer) -> None:
    scenario = _scenario()
    user = _llm_user(llm_server)
    conversation = Conversation(id="c", messages=[await user.first_message(scenario)])
    llm_server.set_script({"default": {"content": "  conversation   complete.  "}})
    assert await user.next_message(conversation, scenario) is None
    llm_server.set_script({"default": {"content": "Thanks!\n**CONVERSATION COMPLETE**"}})
    assert await user.next_message(conversation, scenario) is None
    # the signal inside a sentence is not the signal
    llm_server.set_script({"default": {"content": "I will say CONVERSATION COMPLETE when done."}})
    assert await user.next_message(conversation, scenario) is not None

    assert is_completion("Orchestrator: CONVERSATION COMPLETE")
    assert is_completion("done", "DONE") and not is_completion("not done", "DONE")


async def test_llm_user_conversation_until_signal_or_turn_limit(llm_server: ScriptedServer) -> None:
    scenario = _scenario(max_turns=3)
    user = _llm_user(llm_server)
    llm_server.set_script(
        {
            "rules": [
                {"pattern": "Stable disease", "content": "CONVERSATION COMPLETE"},
                {"pattern": "NSCLC", "content": "Orchestrator: What do the latest images show?"},
            ],
            "default": {"content": "Orchestrator: Show me the patient's timeline"},
        }
    )
    conversation = await simulate_conversation(toy_system, user, scenario, trial=1, max_turns=10)
    users = [m for m in conversation.messages if m.role == "user"]
    assert [m.gold_agent for m in users] == ["Orchestrator", "PatientHistory", "Radiology"]
    assert conversation.metadata["ended"] == "user_done"
    assert conversation.metadata["user"] == "llm:openai:user-model"

    # a user that never finishes is cut off at the turn limit (the scenario's by default)
    llm_server.set_script({"default": {"content": "Orchestrator: proceed"}})
    conversation = await simulate_conversation(toy_system, user, scenario, trial=1)
    assert conversation.metadata["ended"] == "turn_limit"
    assert sum(m.role == "user" for m in conversation.messages) == 3
    assert conversation.messages[-1].role == "assistant"  # the system answered the last turn


async def test_llm_user_errors(llm_server: ScriptedServer) -> None:
    with pytest.raises(ConfigError, match="chat endpoint"):
        LLMUser("offline")
    llm_server.set_script({"default": {"status": 500}})
    endpoint = JudgeConfig.model_validate(f"openai:m@{llm_server.base_url}")
    user = LLMUser(endpoint.model_copy(update={"max_attempts": 1}))
    scenario = _scenario()
    conversation = Conversation(id="c", messages=[await user.first_message(scenario)])
    with pytest.raises(RuntimeError, match="the request failed"):
        await user.next_message(conversation, scenario)


# --------------------------------------------------------------------------- simulate_conversation


async def test_simulate_conversation_ids_patient_alternation() -> None:
    scenario = _scenario()
    calls: list[int] = []

    async def system(conversation: Conversation) -> Any:
        calls.append(len(conversation.messages))
        conversation.messages.clear()  # a copy: the simulation's conversation is untouched
        return {"content": "ok", "name": "Orchestrator"}

    one = await simulate_conversation(system, ScriptedUser(), scenario, trial=1, system_version="v2")
    two = await simulate_conversation(system, ScriptedUser(), scenario, trial=2)
    assert (one.id, two.id) == ("s1#trial1", "s1#trial2")
    assert (one.scenario, one.trial, two.trial) == ("s1", 1, 2)
    assert one.patient_id == two.patient_id == "patient_4"
    assert one.system_version == "v2" and two.system_version is None
    assert [m.role for m in one.messages] == ["user", "assistant"] * 4
    assert calls[:4] == [1, 3, 5, 7]
    assert all(m.timestamp for m in one.messages)
    assert one.metadata["system"].endswith("system")

    # several messages and tool calls per turn, as given
    conversation = await simulate_conversation(toy_system, ScriptedUser(), scenario, trial=1, max_turns=2)
    assert [(m.role, m.speaker) for m in conversation.messages] == [
        ("user", "user"),
        ("assistant", "Orchestrator"),
        ("user", "user"),
        ("assistant", "PatientHistory"),
    ]
    assert conversation.messages[-1].tool_calls[0].arguments == {"patient_id": "patient_4"}
    assert conversation.metadata["ended"] == "turn_limit"


async def test_system_errors_name_the_system() -> None:
    scenario = _scenario()
    with pytest.raises(ConfigError, match="not callable"):
        as_system(42)  # type: ignore[arg-type]

    def two_args(a: Any, b: Any) -> str:
        return "x"

    with pytest.raises(ConfigError, match=r"two_args.*must take one argument"):
        as_system(two_args)

    def returns_number(conversation: Conversation) -> int:
        return 3

    with pytest.raises(SystemOutputError, match=r"returns_number.*returned a int"):
        await simulate_conversation(returns_number, ScriptedUser(), scenario, trial=1)

    def returns_user(conversation: Conversation) -> dict[str, str]:
        return {"role": "user", "text": "hi"}

    with pytest.raises(SystemOutputError, match=r"returns_user.*user message"):
        await simulate_conversation(returns_user, ScriptedUser(), scenario, trial=1)

    def bad_dict(conversation: Conversation) -> list[Any]:
        return ["fine", {"role": "robot"}]

    with pytest.raises(SystemOutputError, match="bad_dict', item 1: not a message: role"):
        await simulate_conversation(bad_dict, ScriptedUser(), scenario, trial=1)

    def crashes(conversation: Conversation) -> str:
        raise RuntimeError("orchestrator down")

    with pytest.raises(RuntimeError, match="orchestrator down"):
        await simulate_conversation(crashes, ScriptedUser(), scenario, trial=1)


# --------------------------------------------------------------------------- saving


async def test_save_atomically_and_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = _scenario()
    conversation = await simulate_conversation(toy_system, ScriptedUser(), scenario, trial=3)
    out = tmp_path / "out"
    path = save_conversation(conversation, out)
    assert path == saved_path(out, "s1", 3) == out / "s1__trial3.jsonl"
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1
    assert load_saved(out, scenario, 3) == conversation
    assert load_saved(out, "s1", 1) is None
    assert os.listdir(out) == ["s1__trial3.jsonl"]

    # a write that fails before the rename leaves the previous file whole and no temporary file
    def fail(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    changed = conversation.model_copy(update={"system_version": "v9"})
    with pytest.raises(OSError, match="disk full"):
        save_conversation(changed, out)
    monkeypatch.undo()
    assert os.listdir(out) == ["s1__trial3.jsonl"]
    assert load_saved(out, scenario, 3) == conversation

    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"cannot be read.*delete it"):
        load_saved(out, scenario, 3)


async def test_simulator_loads_saved_trials_and_refuses_stale_ones(tmp_path: Path) -> None:
    scenario = _scenario()
    calls = 0

    def system(conversation: Conversation) -> str:
        nonlocal calls
        calls += 1
        return "ok"

    cases = scenario_cases([scenario], trials=2)
    assert [c.id for c in cases] == ["s1#trial1", "s1#trial2"]
    assert cases[0].input == scenario.initial_query
    assert cases[1].metadata == {"scenario": "s1", "trial": 2, "patient_id": "patient_4"}

    simulator = Simulator(system, ScriptedUser(), [scenario], out=tmp_path)
    first = await simulator(cases[0].input, case=cases[0])
    assert first["response"] == "ok" and first["from_saved"] is False
    assert first["conversation"]["id"] == "s1#trial1"
    assert calls == 4 and simulator.simulated == 1
    again = await Simulator(system, ScriptedUser(), [scenario], out=tmp_path)(cases[0].input, case=cases[0])
    assert again["from_saved"] is True and again["conversation"] == first["conversation"]
    assert calls == 4
    # the scenario changed since the trial was saved: refused, not silently reused
    edited = _scenario(initial_query="something else")
    with pytest.raises(ConfigError, match="another version of scenario 's1'"):
        await Simulator(system, ScriptedUser(), [edited], out=tmp_path)(cases[0].input, case=cases[0])


# --------------------------------------------------------------------------- runs and resume

TOY_SYSTEM_FILE = """\
from pathlib import Path

HERE = Path(__file__).parent


def system(conversation):
    with open(HERE / "calls.log", "a", encoding="utf-8") as log:
        log.write(conversation.id + "\\n")
    flag = HERE / "fail_once.flag"
    if conversation.trial == 2 and flag.exists():
        flag.unlink()
        raise RuntimeError("the orchestrator crashed")
    last = conversation.messages[-1].text.lower()
    if "image" in last:
        return [
            {"speaker": "Orchestrator", "text": "Asking Radiology."},
            {"speaker": "Radiology", "text": "Stable disease on the last CT."},
        ]
    if "timeline" in last:
        return [{"speaker": "PatientHistory", "text": "2019: diagnosis of NSCLC."}]
    return "Noted."
"""

SIMULATION_YAML = """\
name: toy simulation
scenarios: scenarios.yaml
system: {target: toy_system.py:system, version: v1}
user: scripted
trials: 2
out: saved
metrics: [agent_selection_accuracy]
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "toy_system.py").write_text(TOY_SYSTEM_FILE, encoding="utf-8")
    (tmp_path / "scenarios.yaml").write_text(
        textwrap.dedent(
            """\
            - id: s1
              patient_id: patient_4
              initial_query: "Orchestrator: prepare patient_4"
              initial_expect: Orchestrator
              followups:
                - {text: "Show me the timeline", expect: PatientHistory}
                - {text: "What do the latest images show?", expect: Radiology}
            """
        ),
        encoding="utf-8",
    )
    config = tmp_path / "simulation.yaml"
    config.write_text(SIMULATION_YAML, encoding="utf-8")
    return config


def _calls(tmp_path: Path) -> dict[str, int]:
    log = tmp_path / "calls.log"
    counts: dict[str, int] = {}
    for line in log.read_text(encoding="utf-8").split() if log.exists() else []:
        counts[line] = counts.get(line, 0) + 1
    return counts


def _scores(result: Any, metric: str) -> dict[str, float | None]:
    return {r.case_id: r.score.value for r in result.results if r.metric == metric}


def test_simulation_config_paths_and_errors(tmp_path: Path) -> None:
    config = load_simulation_config(_project(tmp_path))
    assert config.base_dir == str(tmp_path.resolve())
    assert config.scenarios_path == tmp_path.resolve() / "scenarios.yaml"
    assert config.out_path == tmp_path.resolve() / "saved"
    assert config.system.target == "toy_system.py:system" and config.system.version == "v1"
    assert config.judge.provider == "offline"
    default_out = SimulationConfig.model_validate(
        {"scenarios": "s.yaml", "system": "m:f", "name": "My run", "base_dir": "/x"}
    )
    assert default_out.out_path == Path("/x/simulations/My_run")

    bad = tmp_path / "bad.yaml"
    bad.write_text("scenarios: nowhere.yaml\nsystem: toy_system.py:system\nuser: llm\nmax_turn: 3\n")
    with pytest.raises(SuiteError) as info:
        load_simulation_config(bad)
    message = str(info.value)
    assert f"{bad}:4: max_turn: unknown field" in message
    assert "user: llm needs user_judge" in message
    bad.write_text("scenarios: nowhere.yaml\nsystem: toy_system.py:system\n")
    with pytest.raises(SuiteError, match=r"bad\.yaml:1: scenarios: file not found"):
        load_simulation_config(bad)


def test_resume_does_not_redo_finished_trials(tmp_path: Path) -> None:
    config = load_simulation_config(_project(tmp_path))
    store = tmp_path / "runs.db"
    (tmp_path / "fail_once.flag").write_text("", encoding="utf-8")

    first = simulate_and_score(config, store=store, progress=False)
    by_case = {c.id: c for c in first.cases}
    assert by_case["s1#trial1"].agent_run is not None and not by_case["s1#trial1"].agent_run.failed
    failed = by_case["s1#trial2"].agent_run
    assert failed is not None and failed.failed and "the orchestrator crashed" in (failed.error or "")
    assert (tmp_path / "saved" / "s1__trial1.jsonl").exists()
    assert not (tmp_path / "saved" / "s1__trial2.jsonl").exists()
    assert _scores(first, "agent_selection_accuracy")["s1#trial1"] == 1.0
    assert first.run.config["environment"]["kind"] == ENVIRONMENT_KIND
    assert _calls(tmp_path) == {"s1#trial1": 4, "s1#trial2": 1}

    # resume: only the failed trial runs again
    resumed = simulate_and_score(None, store=store, progress=False, resume=first.run.id)
    assert resumed.run.id == first.run.id and resumed.run.status == "completed"
    assert _calls(tmp_path) == {"s1#trial1": 4, "s1#trial2": 5}
    assert all(c.agent_run is not None and not c.agent_run.failed for c in resumed.cases)
    assert _scores(resumed, "agent_selection_accuracy") == {"s1#trial1": 1.0, "s1#trial2": 1.0}
    saved = load_saved(tmp_path / "saved", "s1", 2)
    assert saved is not None and saved.patient_id == "patient_4" and saved.system_version == "v1"

    # a new run with the same out folder: every trial is loaded, the system is not called
    again = simulate_and_score(config, store=store, progress=False)
    assert again.run.id != first.run.id
    assert _calls(tmp_path) == {"s1#trial1": 4, "s1#trial2": 5}
    assert all(c.metadata["agent_output"]["from_saved"] for c in again.cases)  # type: ignore[index]
    assert _scores(again, "agent_selection_accuracy") == {"s1#trial1": 1.0, "s1#trial2": 1.0}

    # the saved folder scores as real conversations do
    scored = score_conversations(
        tmp_path / "saved", ["agent_selection_accuracy"], store=store, progress=False
    )
    assert _scores(scored, "agent_selection_accuracy") == {"s1#trial1": 1.0, "s1#trial2": 1.0}
    assert {c.metadata["patient_id"] for c in scored.cases} == {"patient_4"}


def test_resume_refuses_other_runs(tmp_path: Path) -> None:
    from clineval import evaluate

    store = tmp_path / "runs.db"
    other = evaluate([{"id": "a", "response": "x", "reference": "x"}], ["exact_match"], store=store)
    with pytest.raises(ConfigError, match="not a conversation simulation"):
        simulate_and_score(None, store=store, resume=other.run.id)


# --------------------------------------------------------------------------- the command line


def test_cli_simulate_resume_and_score(tmp_path: Path) -> None:
    config = _project(tmp_path)
    (tmp_path / "fail_once.flag").write_text("", encoding="utf-8")
    done = clineval("conversations", "simulate", str(config), "--store", "runs.db", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "agent_selection_accuracy" in done.stdout
    assert "1 trial(s) failed" in done.stderr
    assert "conversations simulate --resume" in done.stderr and "--store runs.db" in done.stderr
    assert _calls(tmp_path)["s1#trial1"] == 4

    done = clineval(
        "conversations", "simulate", "--resume", "latest", "--store", "runs.db", "-q", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "2 conversation(s)" in done.stderr and "read from saved files" not in done.stderr
    assert _calls(tmp_path) == {"s1#trial1": 4, "s1#trial2": 5}
    assert sorted(os.listdir(tmp_path / "saved")) == ["s1__trial1.jsonl", "s1__trial2.jsonl"]

    done = clineval(
        "conversations",
        "simulate",
        str(config),
        "--trials",
        "3",
        "--store",
        "runs.db",
        "-q",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "3 conversation(s), 2 of them read from saved files" in done.stderr
    assert _calls(tmp_path)["s1#trial3"] == 4

    done = clineval(
        "conversations",
        "score",
        "saved",
        "-m",
        "agent_selection_accuracy",
        "--name",
        "saved chats",
        "--tag",
        "team=onc",
        "--store",
        "runs.db",
        "-q",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "saved chats" in done.stdout and "agent_selection_accuracy" in done.stdout


def test_cli_errors_without_tracebacks(tmp_path: Path) -> None:
    config = _project(tmp_path)
    (tmp_path / "scenarios.yaml").write_text("- {id: s1, initial_query: ''}\n", encoding="utf-8")
    done = clineval("conversations", "simulate", str(config), "--store", "runs.db", cwd=tmp_path)
    assert done.returncode == 2
    assert "scenarios.yaml:1: [0].initial_query: the initial query must not be empty" in done.stderr
    assert "Traceback" not in done.stderr

    done = clineval("conversations", "simulate", cwd=tmp_path)
    assert done.returncode == 2 and "give a simulation file" in done.stderr
    done = clineval("conversations", "simulate", str(config), "--resume", "latest", cwd=tmp_path)
    assert done.returncode == 2 and "CONFIG_FILE" in done.stderr

    (tmp_path / "chats.jsonl").write_text(json.dumps({"messages": "nope"}) + "\n", encoding="utf-8")
    done = clineval("conversations", "score", "chats.jsonl", "-m", "agent_selection_accuracy", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
