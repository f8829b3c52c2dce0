"""Gold labels from a side file, joined to conversations that do not carry them.

Traffic assembled from traces, and transcripts exported by an agent framework, hold what
the agent did, never what it should have done. A gold file adds that, keyed by
conversation id (and user turn): one row per label set, in JSON lines, JSON or CSV::

    {"conversation_id": "conv-17", "turn": 1, "gold_agent": "Pharmacy", "gold_tools": ["drug_lookup"]}
    {"conversation_id": "conv-17", "reference": "Warfarin 5 mg daily; INR 2-3."}

Columns:

* ``conversation_id`` (required): the conversation's id (for traces, its
  ``gen_ai.conversation.id``, else its trace id; ``metadata.conversation_id`` of a case);
* ``turn``: the user turn, counted from 1. ``gold_agent`` and ``gold_tools`` are labels of a
  turn, so they need it (they go on that user message, where agent and tool selection
  accuracy read them);
* ``reference``, ``reference_trajectory``, ``gold_facts``, ``expected``, ``metadata``: fields
  of the case the row names: the conversation's case (no ``turn``), or with ``--per-turn``
  that turn's case (``conv-17#turn1``).

In CSV, ``gold_tools`` is a JSON list or names separated by ``;``, and the other list or
object cells are JSON; an empty cell is no label. A column not listed above, a key given
twice or a turn below 1 is an error naming the file and line; a row whose conversation is
not among those scored is counted, not an error (a gold file usually covers more traffic
than one window).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator

from clineval.conversations.model import Conversation
from clineval.errors import DatasetError, field_errors
from clineval.model import Case
from clineval.model.case import GoldFact, Trajectory

__all__ = ["GoldLabels", "GoldRow", "load_gold"]

#: Case fields a gold row may set.
CASE_FIELDS = ("reference", "reference_trajectory", "gold_facts", "expected", "metadata")
#: Labels of a user turn.
TURN_FIELDS = ("gold_agent", "gold_tools")
_JSON_CELLS = ("reference_trajectory", "gold_facts", "expected", "metadata")


class GoldRow(BaseModel):
    """One row of a gold file."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str = Field(min_length=1)
    turn: int | None = Field(default=None, ge=1)
    gold_agent: str | None = None
    gold_tools: list[str] | None = None
    reference: str | None = None
    reference_trajectory: Trajectory | None = None
    gold_facts: list[GoldFact] | None = None
    expected: JsonValue = None
    metadata: dict[str, JsonValue] | None = None

    @field_validator("conversation_id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    def case_fields(self) -> dict[str, Any]:
        """The case fields this row sets."""
        return {name: getattr(self, name) for name in CASE_FIELDS if getattr(self, name) is not None}


@dataclass
class GoldLabels:
    """The rows of a gold file, by (conversation id, turn or ``None``)."""

    path: Path
    rows: dict[tuple[str, int | None], GoldRow] = field(default_factory=dict)
    digest: str = ""
    used: set[tuple[str, int | None]] = field(default_factory=set)
    """The rows :meth:`apply` and :meth:`complete` have joined so far."""

    def __len__(self) -> int:
        return len(self.rows)

    def conversation_ids(self) -> set[str]:
        return {cid for cid, _ in self.rows}

    def apply(self, conversation: Conversation) -> Conversation:
        """The conversation with the turn labels of its rows on its user messages (a turn past
        its last user message is left out; :meth:`join_counts` counts it)."""
        labelled = [row for (cid, turn), row in self.rows.items() if cid == conversation.id and turn]
        if not any(row.gold_agent is not None or row.gold_tools is not None for row in labelled):
            return conversation
        messages = list(conversation.messages)
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        for row in labelled:
            assert row.turn is not None
            if row.turn > len(users):
                continue
            self.used.add((conversation.id, row.turn))
            at = users[row.turn - 1]
            updates: dict[str, Any] = {}
            if row.gold_agent is not None:
                updates["gold_agent"] = row.gold_agent
            if row.gold_tools is not None:
                updates["gold_tools"] = row.gold_tools
            if updates:
                messages[at] = messages[at].model_copy(update=updates)
        return conversation.model_copy(update={"messages": messages})

    def complete(self, case: Case, conversation_id: str, turn: int | None) -> Case:
        """The case with the case fields of its row (``metadata`` merged over the case's)."""
        row = self.rows.get((conversation_id, turn))
        if row is None or not row.case_fields():
            return case
        self.used.add((conversation_id, turn))
        updates = row.case_fields()
        if "metadata" in updates:
            updates["metadata"] = {**case.metadata, **updates["metadata"], "gold_file": self.path.name}
        else:
            updates["metadata"] = {**case.metadata, "gold_file": self.path.name}
        return case.model_copy(update=updates)

    def join_counts(self, turns: Mapping[str, int], *, per_turn: bool) -> dict[str, int]:
        """How the rows meet the conversations to be scored (id -> user turns): rows joined,
        rows of no such conversation, turns past a conversation's last, and rows whose case
        fields name no case (a turn's fields without ``--per-turn``, or the reverse)."""
        counts = {"joined": 0, "no such conversation": 0, "no such turn": 0, "fields of no case": 0}
        for (cid, turn), row in self.rows.items():
            if cid not in turns:
                counts["no such conversation"] += 1
            elif turn is not None and turn > turns[cid]:
                counts["no such turn"] += 1
            elif row.case_fields() and (turn is not None) != per_turn:
                counts["fields of no case"] += 1
            else:
                counts["joined"] += 1
        return counts

    def summary(self) -> str:
        """One line on how many rows were joined (by :meth:`apply` and :meth:`complete`)."""
        left = [key for key in self.rows if key not in self.used]
        line = f"gold labels from {self.path}: {len(self.used)} of {len(self.rows)} row(s) joined"
        if left:
            shown = ", ".join(cid + (f" turn {turn}" if turn else "") for cid, turn in left[:3])
            more = ", ..." if len(left) > 3 else ""
            line += f"; {len(left)} named no conversation, turn or case scored ({shown}{more})"
        return line


def _cell(name: str, value: Any) -> Any:
    """A CSV cell as the field wants it."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if name == "gold_tools":
        return json.loads(text) if text.startswith("[") else [t.strip() for t in text.split(";") if t.strip()]
    if name in _JSON_CELLS:
        return json.loads(text)
    return value


def _rows(records: Iterable[tuple[int, Any]], path: Path, from_csv: bool) -> Iterable[tuple[int, GoldRow]]:
    problems: list[str] = []
    for line, record in records:
        if not isinstance(record, Mapping):
            problems.append(
                f"{path}:{line}: expected an object with conversation_id, got {type(record).__name__}"
            )
            continue
        values = {k: v for k, v in record.items() if v is not None}
        if from_csv:
            try:
                values = {k: _cell(k, v) for k, v in values.items()}
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{line}: a cell is not valid JSON ({exc.msg})")
                continue
        try:
            row = GoldRow.model_validate(values)
        except ValidationError as exc:
            expected = ", ".join(("conversation_id", "turn", *TURN_FIELDS, *CASE_FIELDS))
            problems.extend(
                f"{path}:{line}: {problem}" + (f" (expected: {expected})" if "unknown" in problem else "")
                for problem in field_errors(exc, unknown="unknown column")
            )
            continue
        if row.turn is None and (row.gold_agent is not None or row.gold_tools is not None):
            problems.append(
                f"{path}:{line}: gold_agent and gold_tools label a user turn: give 'turn' (1 = first)"
            )
            continue
        yield line, row
    if problems:
        raise DatasetError(
            "\n".join(problems[:20]) + (f"\n... {len(problems) - 20} more" if len(problems) > 20 else "")
        )


def load_gold(path: str | Path, *, encoding: str | None = None) -> GoldLabels:
    """A gold file (see the module docstring); every bad line is reported at once."""
    from clineval.datasets.loaders import read_records

    file = Path(path)
    records = read_records(file, encoding=encoding)
    gold = GoldLabels(path=file)
    first_line: dict[tuple[str, int | None], int] = {}
    duplicates: list[str] = []
    for line, row in _rows(records, file, file.suffix.lower() == ".csv"):
        key = (row.conversation_id, row.turn)
        if key in gold.rows:
            where = f"turn {row.turn} of " if row.turn else ""
            duplicates.append(
                f"{file}:{line}: {where}conversation {row.conversation_id!r} again (line {first_line[key]})"
            )
            continue
        gold.rows[key] = row
        first_line[key] = line
    if duplicates:
        raise DatasetError("\n".join(duplicates))
    if not gold.rows:
        raise DatasetError(f"{file}: no gold rows (expected rows with conversation_id and labels)")
    digest = hashlib.sha256()
    for key in sorted(gold.rows, key=lambda k: (k[0], k[1] or 0)):
        digest.update(gold.rows[key].model_dump_json().encode())
    gold.digest = digest.hexdigest()[:16]
    return gold
