"""Gold labels from a side file (clineval.conversations.gold): joined by conversation id and
user turn to transcripts that carry none, so agent and tool selection accuracy have labels
on real conversations; bad rows are located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.clirun import clineval
from tests.conversations.test_loaders import OPENAI

from clineval.conversations.cases import conversation_of, conversation_to_case
from clineval.conversations.gold import load_gold
from clineval.conversations.loaders import load_conversations
from clineval.errors import DatasetError


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _conversation(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "chats.json").write_text(json.dumps(OPENAI), encoding="utf-8")
    (conversation,) = load_conversations(tmp_path / "chats.json")
    return conversation


def test_turn_labels_go_on_the_user_message_and_case_fields_on_the_case(tmp_path: Path) -> None:
    gold = load_gold(
        _jsonl(
            tmp_path / "gold.jsonl",
            [
                {"conversation_id": "oa-1", "turn": 1, "gold_agent": "LabAgent", "gold_tools": ["get_labs"]},
                {
                    "conversation_id": "oa-1",
                    "reference": "Potassium 5.9 mmol/L, high.",
                    "metadata": {"ward": "4B"},
                },
                {"conversation_id": "oa-2", "turn": 1, "gold_agent": "Pharmacy"},
            ],
        )
    )
    conversation = gold.apply(_conversation(tmp_path))
    (user,) = [m for m in conversation.messages if m.role == "user"]
    assert (user.gold_agent, user.gold_tools) == ("LabAgent", ["get_labs"])
    case = gold.complete(conversation_to_case(conversation), "oa-1", None)
    assert case.reference == "Potassium 5.9 mmol/L, high."
    assert case.metadata["ward"] == "4B" and case.metadata["gold_file"] == "gold.jsonl"
    held = conversation_of(case)
    assert held is not None and [m.gold_agent for m in held.messages if m.role == "user"] == ["LabAgent"]
    assert gold.summary() == (
        f"gold labels from {tmp_path / 'gold.jsonl'}: 2 of 3 row(s) joined; "
        "1 named no conversation, turn or case scored (oa-2 turn 1)"
    )
    # how rows meet a window of conversations (id -> user turns), before anything is read
    assert gold.join_counts({"oa-1": 1}, per_turn=False) == {
        "joined": 2,
        "no such conversation": 1,
        "no such turn": 0,
        "fields of no case": 0,
    }
    assert gold.join_counts({"oa-1": 1, "oa-2": 0}, per_turn=True)["no such turn"] == 1
    assert (
        gold.join_counts({"oa-1": 1}, per_turn=True)["fields of no case"] == 1
    )  # no turn: a conversation's case


def test_csv_cells_lists_and_numbers(tmp_path: Path) -> None:
    path = tmp_path / "gold.csv"
    path.write_text(
        "conversation_id,turn,gold_agent,gold_tools,reference\n"
        "17,1,LabAgent,get_labs; get_meds,\n"
        '17,2,LabAgent,"[""get_vitals""]",\n'
        "17,,,,Potassium is high.\n",
        encoding="utf-8",
    )
    gold = load_gold(path)
    assert gold.rows[("17", 1)].gold_tools == ["get_labs", "get_meds"]
    assert gold.rows[("17", 2)].gold_tools == ["get_vitals"]
    assert gold.rows[("17", None)].reference == "Potassium is high."
    assert len(gold.digest) == 16


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [{"conversation_id": "a", "gold_agent": "X"}],
            "gold.jsonl:1: gold_agent and gold_tools label a user turn",
        ),
        (
            [{"conversation_id": "a", "turn": 0, "gold_agent": "X"}],
            "gold.jsonl:1: field 'turn': Input should be greater than or equal to 1",
        ),
        (
            [{"conversation_id": "a", "turn": 1, "gold_agnet": "X"}],
            "gold.jsonl:1: field 'gold_agnet': unknown column (expected: conversation_id, turn, gold_agent",
        ),
        ([{"turn": 1, "gold_agent": "X"}], "gold.jsonl:1: field 'conversation_id': Field required"),
        (
            [
                {"conversation_id": "a", "turn": 1, "gold_agent": "X"},
                {"conversation_id": "a", "turn": 1, "gold_agent": "Y"},
            ],
            "gold.jsonl:2: turn 1 of conversation 'a' again (line 1)",
        ),
        ([], "gold.jsonl: no gold rows"),
        ([["a", 1]], "gold.jsonl:1: expected an object with conversation_id, got list"),
    ],
)
def test_bad_rows_are_located(tmp_path: Path, rows: list[dict[str, object]], message: str) -> None:
    with pytest.raises(DatasetError) as raised:
        load_gold(_jsonl(tmp_path / "gold.jsonl", rows))
    assert message in str(raised.value)


def test_a_missing_or_unknown_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        load_gold(tmp_path / "nope.jsonl")
    (tmp_path / "gold.txt").write_text("x", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"expected a \.jsonl, \.json or \.csv file"):
        load_gold(tmp_path / "gold.txt")


def test_conversations_score_with_gold_through_the_cli(tmp_path: Path) -> None:
    """An OpenAI-format transcript has no gold agent: with --gold, agent and tool selection
    accuracy are scored instead of n/a."""
    (tmp_path / "chats.json").write_text(json.dumps(OPENAI), encoding="utf-8")
    _jsonl(
        tmp_path / "gold.jsonl",
        [
            {
                "conversation_id": "oa-1",
                "turn": 1,
                "gold_agent": "LabAgent",
                "gold_tools": ["get_labs", "get_meds"],
            }
        ],
    )
    done = clineval(
        "conversations",
        "score",
        "chats.json",
        "--gold",
        "gold.jsonl",
        "-m",
        "agent_selection_accuracy",
        "-m",
        "tool_selection_accuracy",
        "--store",
        "runs.db",
        "-q",
        "--cases",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "gold labels from gold.jsonl: 1 of 1 row(s) joined" in done.stderr
    table = done.stdout
    assert "agent_selection_accuracy" in table and "tool_selection_accuracy" in table
    assert "n/a" not in table.split("agent_selection_accuracy", 1)[1].splitlines()[0]
    from clineval.store.sqlite import RunStore

    store = RunStore(tmp_path / "runs.db")
    try:
        (run,) = store.list_runs()
        assert run.tags["gold"] == "gold.jsonl"
        scores = {r.metric: r.score.value for r in store.iter_results(run.id)}
        assert scores == {"agent_selection_accuracy": 1.0, "tool_selection_accuracy": 1.0}
    finally:
        store.close()
