"""Metrics of multi-agent conversations: the orchestrator and each agent, after the
Healthcare Agent Orchestrator's evaluation framework (Qiu et al.).

Every metric reads the conversation a case holds (:func:`~clineval.conversations.conversation_of`:
a loaded transcript or the simulator's output); a case without one gets an error score
saying so, never a 0. See docs/metrics/conversations.md.

Orchestrator:

``agent_selection``
    LLM-judge rating 1-5: did the orchestrator route each request to the right agent(s)?
``agent_selection_accuracy``
    deterministic, offline: the share of user messages labelled with a ``gold_agent`` whose
    selected agent (the first agent other than the orchestrator to answer before the next
    user message; the orchestrator when it alone answered) is the gold one.
``intent_resolution``
    LLM-judge rating 1-5: did the system understand and complete the user's requests,
    within scope, asking for clarification when a request was ambiguous?
``information_aggregation``
    LLM-judge rating 1-5: did the orchestrator synthesise the agents' outputs correctly and
    completely, without contradiction or loss?

Individual agents (setting ``agent``):

``agent_context_relevancy``
    share of the agent's segments whose response is relevant to the user's request
    (the ``context_relevant`` primitive; runs with the offline judge or an LLM judge).
``agent_tbfact``
    TBFact (:mod:`clineval.metrics.factuality`) of the agent's messages against the
    reference text of the conversation's patient.
``agent_source_support``
    share of the facts in the agent's messages entailed by at least one of the patient's
    source documents (the Healthcare Agent Orchestrator evaluation's "97% of facts
    entailed by any source" analysis).

The three rating metrics show the judge the whole transcript, tool calls and results
included, and need an LLM judge: with the offline judge (or none) their cases are
unscored with that reason. Their ratings are directional signals, not absolute
measurements (as the Healthcare Agent Orchestrator's evaluation framework puts it).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from clineval.conversations.cases import conversation_of
from clineval.conversations.model import Conversation, render_transcript
from clineval.conversations.segments import Segment, agent_segments, user_turns
from clineval.errors import ConfigError
from clineval.judges.primitives import DEFAULT_CATEGORIES, Fact, Primitives, Verdict
from clineval.metrics.base import BaseMetric, ScoreContext
from clineval.metrics.factuality import POLICIES, TBFact
from clineval.metrics.registry import metric
from clineval.model import Case, Score

__all__ = [
    "AgentSelection",
    "AgentSelectionAccuracy",
    "AgentSourceSupport",
    "AgentTBFact",
    "ContextRelevancy",
    "ConversationRating",
    "InformationAggregation",
    "IntentResolution",
    "ReferenceTexts",
    "SourceDocuments",
    "load_references",
    "load_sources",
]

ORCHESTRATOR = "Orchestrator"
DIRECTIONAL = (
    "An LLM judge's rating: a directional signal for comparing system versions, not an "
    "absolute measure of correctness, as the Healthcare Agent Orchestrator's evaluation advises."
)
TEXT_SUFFIXES = (".txt", ".md")
#: The source of the conversation metrics, as the metric catalogue names it.
HAO_EVALUATION = "Healthcare Agent Orchestrator evaluation (Qiu et al.)"


# --------------------------------------------------------------------------- helpers


def _key(name: str) -> str:
    """Agent names compared case- and punctuation-insensitively: ``Patient History`` = ``patienthistory``."""
    return re.sub(r"[^0-9a-z]+", "", name.lower())


def _excerpt(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _no_conversation(name: str) -> Score:
    return Score.failed(
        f"the case holds no conversation, which metric {name!r} reads (load a conversation "
        "dataset, or run the conversation simulator)"
    )


def _find_agent(conversation: Conversation, agent: str) -> str | None:
    """The name the conversation uses for ``agent`` (matched like :func:`_key`), if it spoke."""
    wanted = _key(agent)
    return next((name for name in conversation.agents if _key(name) == wanted), None)


def _need_agent(metric_name: str, agent: str | None) -> str:
    if agent is None or not str(agent).strip():
        raise ConfigError(
            f"metric {metric_name!r} needs the setting 'agent', the agent to evaluate "
            f"(e.g. {metric_name}(agent=PatientHistory))"
        )
    return str(agent).strip()


def _window(metric_name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"metric {metric_name!r}: context_window must be a whole number >= 0, not {value!r}"
        )
    return value


# --------------------------------------------------------------------------- orchestrator: judge ratings


class ConversationRating(BaseModel):
    """The judge's answer: reasoning first, then a whole rating from 1 to 5."""

    explanation: str = Field(description="Reasoning for the rating, naming the requests and agents concerned")
    rating: Literal[5, 4, 3, 2, 1] = Field(description="One whole number from 1 (worst) to 5 (best)")


class _RatingMetric(BaseMetric):
    """An LLM-judge rating (1-5, with explanation) of a whole conversation.

    Settings: ``orchestrator`` (the orchestrator's name, default ``Orchestrator``, matched
    case-insensitively), ``agents`` (optional ``{name: what it does}``, shown to the judge
    with the agents that spoke; list agents that exist but never spoke here so that the
    judge knows they were available), ``max_tokens`` (a cap on the judge's answer).
    """

    prompt_name: ClassVar[str] = ""
    requires: tuple[str, ...] = ()
    needs_judge = True

    def __init__(
        self,
        *,
        orchestrator: str = ORCHESTRATOR,
        agents: Mapping[str, str] | None = None,
        max_tokens: int | None = None,
    ):
        from clineval.prompts import load_prompt

        if not str(orchestrator).strip():
            raise ConfigError(f"metric {self.name!r}: orchestrator must name an agent")
        self.orchestrator = str(orchestrator).strip()
        if agents is not None and not isinstance(agents, Mapping):
            raise ConfigError(f"metric {self.name!r}: agents must map each agent's name to what it does")
        self.agent_roles = {str(k): str(v) for k, v in (agents or {}).items()}
        self.max_tokens = max_tokens
        self.prompt = load_prompt(self.prompt_name)

    def not_applicable(self, conversation: Conversation) -> str | None:
        """Why the conversation offers nothing to rate, or ``None``."""
        if not any(m.role == "user" for m in conversation.messages):
            return "the conversation has no user message"
        if not conversation.agents:
            return "no agent answered in the conversation"
        return None

    def _agents(self, conversation: Conversation) -> list[dict[str, str]]:
        roles = {_key(k): v for k, v in self.agent_roles.items()}
        names = list(conversation.agents)
        spoken = {_key(n) for n in names}
        names += [n for n in self.agent_roles if _key(n) not in spoken]
        return [{"name": n, "role": roles.get(_key(n), "")} for n in names]

    async def score(self, case: Case, ctx: ScoreContext) -> Score:
        conversation = conversation_of(case)
        if conversation is None:
            return _no_conversation(self.name)
        reason = self.not_applicable(conversation)
        if reason is not None:
            return Score.not_applicable(reason)
        judge = ctx.require_judge()
        shown = [m for m in conversation.messages if m.role != "system"]
        agents = self._agents(conversation)
        n_user = sum(m.role == "user" for m in shown)
        messages = self.prompt.render(
            orchestrator=self.orchestrator,
            agents=agents,
            n_user_turns=n_user,
            transcript=render_transcript(shown),
        )
        answer = await judge.ask(messages, ConversationRating, max_tokens=self.max_tokens)
        rating = float(answer.output.rating)
        orchestrator_spoke = any(_key(a) == _key(self.orchestrator) for a in conversation.agents)
        return Score(
            value=rating,
            label=f"{int(rating)}/5",
            explanation=answer.output.explanation.strip(),
            details={
                "scale_min": 1,
                "scale_max": 5,
                "normalized": (rating - 1) / 4,
                "prompt": self.prompt.id,
                "judge": judge.name,
                "orchestrator": self.orchestrator,
                "orchestrator_spoke": orchestrator_spoke,
                "agents": [a["name"] for a in agents],
                "user_turns": n_user,
                "messages": len(shown),
                "cached": answer.cached,
                "note": DIRECTIONAL,
            },
        )


@metric(
    "agent_selection",
    description="LLM-judge rating 1-5: did the orchestrator route each request to the right agent(s) "
    "(Healthcare Agent Orchestrator evaluation)",
    source=HAO_EVALUATION,
)
class AgentSelection(_RatingMetric):
    """Rating 1-5 of the orchestrator's routing of each user request to the right agent(s).

    The judge reads the whole transcript (tool calls and results included) with the agent
    list and rates on the rubric of prompt ``conversation_agent_selection``. Value: the
    rating (1-5); label ``N/5``; explanation: the judge's reasoning. Not applicable without
    a user message or an agent's answer. Needs an LLM judge.
    """

    name = "agent_selection"
    prompt_name = "conversation_agent_selection"


@metric(
    "intent_resolution",
    description="LLM-judge rating 1-5: did the system understand and complete the user's requests, "
    "with scoping and clarification (Healthcare Agent Orchestrator evaluation)",
    source=HAO_EVALUATION,
)
class IntentResolution(_RatingMetric):
    """Rating 1-5 of how well the system understood and completed the user's requests.

    Includes scoping (doing what was asked, not more or something else) and clarification
    (asking when a request is ambiguous, not otherwise). Rubric: prompt
    ``conversation_intent_resolution``. Value: the rating (1-5). Needs an LLM judge.
    """

    name = "intent_resolution"
    prompt_name = "conversation_intent_resolution"


@metric(
    "information_aggregation",
    description="LLM-judge rating 1-5: did the orchestrator synthesise the agents' outputs correctly "
    "and completely (Healthcare Agent Orchestrator evaluation)",
    source=HAO_EVALUATION,
)
class InformationAggregation(_RatingMetric):
    """Rating 1-5 of the orchestrator's synthesis of the agents' outputs.

    Correct (no misstated or invented finding), complete (nothing relevant lost) and
    consistent (disagreements flagged). Rubric: prompt
    ``conversation_information_aggregation``. Value: the rating (1-5). Not applicable when
    no agent other than the orchestrator spoke (nothing to aggregate). Needs an LLM judge.
    """

    name = "information_aggregation"
    prompt_name = "conversation_information_aggregation"

    def not_applicable(self, conversation: Conversation) -> str | None:
        reason = super().not_applicable(conversation)
        if reason is not None:
            return reason
        if not [a for a in conversation.agents if _key(a) != _key(self.orchestrator)]:
            return f"no agent other than {self.orchestrator} spoke, so there was nothing to aggregate"
        return None


# --------------------------------------------------------------------------- orchestrator: gold labels


@metric(
    "agent_selection_accuracy",
    description="Share of gold-labelled user turns answered first by the gold agent "
    "(Healthcare Agent Orchestrator evaluation; no judge)",
    source=HAO_EVALUATION,
)
class AgentSelectionAccuracy(BaseMetric):
    """Turn-level agent selection against gold next-agent labels; deterministic.

    For each user message carrying ``gold_agent``, the agent selected is the first agent
    other than the orchestrator that answered before the next user message; when only the
    orchestrator answered, the orchestrator; when nobody answered, none (counted wrong).
    Names are compared ignoring case, spaces and punctuation. Value: correct turns /
    labelled turns, in [0, 1]; not applicable when no user message is labelled. Details
    list every labelled turn (query excerpt, gold, selected, correct, agents that answered).

    Setting: ``orchestrator`` (default ``Orchestrator``).
    """

    name = "agent_selection_accuracy"
    requires: tuple[str, ...] = ()
    needs_judge = False

    def __init__(self, *, orchestrator: str = ORCHESTRATOR):
        if not str(orchestrator).strip():
            raise ConfigError("metric 'agent_selection_accuracy': orchestrator must name an agent")
        self.orchestrator = str(orchestrator).strip()

    def selected(self, agents: Sequence[str]) -> str | None:
        """The agent a turn selected, from the agents that answered it in order."""
        orchestrator = _key(self.orchestrator)
        others = [a for a in agents if _key(a) != orchestrator]
        if others:
            return others[0]
        return agents[0] if agents else None

    def score(self, case: Case, ctx: ScoreContext) -> Score:
        conversation = conversation_of(case)
        if conversation is None:
            return _no_conversation(self.name)
        turns = user_turns(conversation)
        rows: list[dict[str, Any]] = []
        for turn in turns:
            gold = turn.message.gold_agent
            if gold is None or not gold.strip():
                continue
            selected = self.selected(turn.agents)
            rows.append(
                {
                    "turn": turn.index + 1,
                    "query": _excerpt(turn.message.text, 120),
                    "gold": gold,
                    "selected": selected,
                    "correct": selected is not None and _key(selected) == _key(gold),
                    "answered_by": list(turn.agents),
                }
            )
        if not rows:
            return Score.not_applicable(
                f"no user message carries a gold_agent label ({len(turns)} user message(s))"
            )
        correct = sum(r["correct"] for r in rows)
        wrong = [r for r in rows if not r["correct"]]
        explanation = f"{correct} of {len(rows)} labelled turn(s) went to the gold agent"
        if wrong:
            explanation += "; wrong: " + "; ".join(
                f"turn {r['turn']} gold {r['gold']}, selected {r['selected'] or 'nobody'}" for r in wrong[:3]
            )
        return Score(
            value=correct / len(rows),
            label=f"{correct}/{len(rows)}",
            explanation=explanation,
            sub_scores={"labelled_turns": float(len(rows)), "correct": float(correct)},
            details={"orchestrator": self.orchestrator, "user_turns": len(turns), "turns": rows},
        )


@metric(
    "tool_selection_accuracy",
    description="Share of gold-labelled user turns answered with exactly the gold tools "
    "(Healthcare Agent Orchestrator evaluation; no judge)",
    source=HAO_EVALUATION,
)
class ToolSelectionAccuracy(BaseMetric):
    """Turn-level tool selection against gold tool labels; deterministic.

    For each user message carrying ``gold_tools`` (a list of tool names, possibly empty),
    the tools called are the names of every tool call made before the next user message.
    A turn is correct when the *set* of called tools equals the gold set (names compared
    ignoring case, spaces and punctuation; repeating a gold tool is not penalised here).
    Value: correct turns / labelled turns, in [0, 1]; not applicable when no user message is
    labelled. Sub-scores over all labelled turns (multiset counts, so a duplicated call
    beyond the gold count is a false positive): ``tool_precision`` (called calls that are
    gold) and ``tool_recall`` (gold tools that were called); either is left out when its
    denominator is 0. Details list every labelled turn (gold, called, missing, extra).
    """

    name = "tool_selection_accuracy"
    requires: tuple[str, ...] = ()
    needs_judge = False

    def score(self, case: Case, ctx: ScoreContext) -> Score:
        conversation = conversation_of(case)
        if conversation is None:
            return _no_conversation(self.name)
        turns = user_turns(conversation)
        rows: list[dict[str, Any]] = []
        hits = called_total = gold_total = 0
        for turn in turns:
            gold = turn.message.gold_tools
            if gold is None:
                continue
            called = [call.name for message in turn.responses for call in message.tool_calls]
            gold_counts = Counter(_key(g) for g in gold)
            called_counts = Counter(_key(c) for c in called)
            overlap = sum((gold_counts & called_counts).values())
            hits += overlap
            called_total += sum(called_counts.values())
            gold_total += sum(gold_counts.values())
            rows.append(
                {
                    "turn": turn.index + 1,
                    "query": _excerpt(turn.message.text, 120),
                    "gold": list(gold),
                    "called": called,
                    "missing": sorted({g for g in gold if _key(g) not in called_counts}),
                    "extra": sorted({c for c in called if _key(c) not in gold_counts}),
                    "correct": set(gold_counts) == set(called_counts),
                }
            )
        if not rows:
            return Score.not_applicable(
                f"no user message carries a gold_tools label ({len(turns)} user message(s))"
            )
        correct = sum(r["correct"] for r in rows)
        subs: dict[str, float | None] = {"labelled_turns": float(len(rows)), "correct": float(correct)}
        if called_total:
            subs["tool_precision"] = hits / called_total
        if gold_total:
            subs["tool_recall"] = hits / gold_total
        wrong = [r for r in rows if not r["correct"]]
        explanation = f"{correct} of {len(rows)} labelled turn(s) called exactly the gold tools"
        if wrong:
            explanation += "; " + "; ".join(
                f"turn {r['turn']} missing {r['missing'] or '-'}, extra {r['extra'] or '-'}"
                for r in wrong[:3]
            )
        return Score(
            value=correct / len(rows),
            label=f"{correct}/{len(rows)}",
            explanation=explanation,
            sub_scores=subs,
            details={"user_turns": len(turns), "turns": rows},
        )


# --------------------------------------------------------------------------- per-agent texts


def _resolve(path: str | Path, base_dir: str | Path | None) -> Path:
    file = Path(path).expanduser()
    if not file.is_absolute() and base_dir is not None:
        file = Path(base_dir) / file
    return file


def _safe_id(patient_id: str) -> bool:
    """A patient id usable as a file name (no folder part, not ``.``/``..``)."""
    return bool(patient_id) and Path(patient_id).name == patient_id and patient_id not in (".", "..")


def _read_json_rows(file: Path, what: str) -> Any:
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the {what} file {file}: {exc.strerror}") from None
    if file.suffix.lower() == ".jsonl":
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{file}:{number}: not valid JSON ({exc.msg})") from None
        return rows
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{file}: not valid JSON ({exc.msg})") from None


def _locate(source: str | Path, base_dir: str | Path | None, what: str, hint: str) -> Path:
    """The folder or file a ``references``/``sources`` setting names; a clear error if neither."""
    path = _resolve(source, base_dir)
    if not (path.is_dir() or path.is_file()):
        raise ConfigError(f"{what} not found: {path} ({hint})")
    return path


def _row_patient(row: Any, where: str) -> str:
    if not isinstance(row, dict) or not isinstance(row.get("patient_id", row.get("id")), str | int):
        raise ConfigError(f"{where}: expected an object with 'patient_id'")
    return str(row.get("patient_id", row.get("id")))


@dataclass(frozen=True)
class _Lookup:
    """What a patient lookup found: the texts (name, text), or where it looked."""

    texts: list[tuple[str, str]]
    where: str


class ReferenceTexts:
    """Reference texts by patient id: a folder of ``<patient_id>.txt|.md`` files, a JSON
    object ``{patient_id: text}``, a JSON-lines file of ``{"patient_id", "reference"}`` rows
    (``text`` is accepted for ``reference``), or a mapping given in Python."""

    def __init__(self, source: str | Path | Mapping[str, str], *, base_dir: str | Path | None = None):
        self.folder: Path | None = None
        self.mapping: dict[str, str] | None = None
        if isinstance(source, Mapping):
            self.mapping = {str(k): str(v) for k, v in source.items()}
            self.label = "the references mapping"
            return
        path = _locate(
            source, base_dir, "references", "a folder of <patient_id>.txt|.md files or a JSON file"
        )
        self.label = str(path)
        if path.is_dir():
            self.folder = path
            return
        data = _read_json_rows(path, "references")
        mapping: dict[str, str] = {}
        if isinstance(data, dict):
            for key, value in data.items():
                if not isinstance(value, str):
                    raise ConfigError(f"{path}: the reference of {key!r} must be a string")
                mapping[str(key)] = value
        elif isinstance(data, list):
            for index, row in enumerate(data, start=1):
                where = f"{path}: row {index}"
                if isinstance(row, dict) and len(row) == 1 and not {"patient_id", "id"} & set(row):
                    ((key, value),) = row.items()
                    row = {"patient_id": key, "reference": value}
                patient = _row_patient(row, where)
                text = row.get("reference", row.get("text"))
                if not isinstance(text, str):
                    raise ConfigError(f"{where}: expected a 'reference' string")
                mapping[patient] = text
        else:
            raise ConfigError(f"{path}: expected an object {{patient_id: text}} or rows with 'patient_id'")
        self.mapping = mapping

    def get(self, patient_id: str) -> _Lookup:
        if self.mapping is not None:
            text = self.mapping.get(patient_id)
            return _Lookup(
                [(patient_id, text)] if text is not None else [],
                f"{self.label} ({len(self.mapping)} patients)",
            )
        assert self.folder is not None
        names = [f"{patient_id}{suffix}" for suffix in TEXT_SUFFIXES]
        where = f"{' or '.join(names)} in {self.folder}"
        if not _safe_id(patient_id):
            return _Lookup([], where)
        for name in names:
            file = self.folder / name
            if file.is_file():
                return _Lookup([(name, file.read_text(encoding="utf-8"))], str(file))
        return _Lookup([], where)


class SourceDocuments:
    """Source documents by patient id: a folder with one sub-folder per patient holding
    ``*.txt|*.md`` files (searched recursively, sorted by path), a JSON object
    ``{patient_id: [text, ...]}`` (items may also be ``{"name", "text"}``), a JSON-lines
    file of ``{"patient_id", "text", "name"?}`` rows (one document each), or a mapping
    given in Python."""

    def __init__(
        self,
        source: str | Path | Mapping[str, Sequence[str | Mapping[str, str]] | str],
        *,
        base_dir: str | Path | None = None,
    ):
        self.folder: Path | None = None
        self.mapping: dict[str, list[tuple[str, str]]] | None = None
        if isinstance(source, Mapping):
            self.label = "the sources mapping"
            self.mapping = {str(k): self._documents(v, f"sources[{k!r}]") for k, v in source.items()}
            return
        path = _locate(
            source, base_dir, "sources", "a folder with one sub-folder per patient, or a JSON file"
        )
        self.label = str(path)
        if path.is_dir():
            self.folder = path
            return
        data = _read_json_rows(path, "sources")
        mapping: dict[str, list[tuple[str, str]]] = {}
        if isinstance(data, dict):
            mapping = {str(k): self._documents(v, f"{path}: {k!r}") for k, v in data.items()}
        elif isinstance(data, list):
            for index, row in enumerate(data, start=1):
                where = f"{path}: row {index}"
                patient = _row_patient(row, where)
                docs = mapping.setdefault(patient, [])
                text = row.get("text")
                if not isinstance(text, str):
                    raise ConfigError(f"{where}: expected a 'text' string")
                docs.append((str(row.get("name") or f"document {len(docs) + 1}"), text))
        else:
            raise ConfigError(f"{path}: expected an object {{patient_id: [texts]}} or rows with 'patient_id'")
        self.mapping = mapping

    @staticmethod
    def _documents(value: Any, where: str) -> list[tuple[str, str]]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            raise ConfigError(f"{where}: expected a list of texts")
        out: list[tuple[str, str]] = []
        for index, item in enumerate(items, start=1):
            if isinstance(item, str):
                out.append((f"document {index}", item))
            elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
                out.append(
                    (str(item.get("name") or item.get("id") or f"document {index}"), str(item["text"]))
                )
            else:
                raise ConfigError(f"{where}: item {index} must be a text or an object with 'text'")
        return out

    def get(self, patient_id: str) -> _Lookup:
        if self.mapping is not None:
            return _Lookup(
                list(self.mapping.get(patient_id, [])), f"{self.label} ({len(self.mapping)} patients)"
            )
        assert self.folder is not None
        folder = self.folder / patient_id
        where = f"*.txt|*.md files in {folder}"
        if not _safe_id(patient_id) or not folder.is_dir():
            return _Lookup([], where)
        files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
        return _Lookup(
            [(p.relative_to(folder).as_posix(), p.read_text(encoding="utf-8")) for p in files], where
        )


def load_references(
    source: str | Path | Mapping[str, str], *, base_dir: str | Path | None = None
) -> ReferenceTexts:
    """Reference texts by patient id (see :class:`ReferenceTexts`)."""
    return ReferenceTexts(source, base_dir=base_dir)


def load_sources(
    source: str | Path | Mapping[str, Any], *, base_dir: str | Path | None = None
) -> SourceDocuments:
    """Source documents by patient id (see :class:`SourceDocuments`)."""
    return SourceDocuments(source, base_dir=base_dir)


def _last_request(conversation: Conversation, before: int) -> str:
    """The text of the last user message before position ``before``, or ``""``."""
    for message in reversed(conversation.messages[:before]):
        if message.role == "user" and message.text.strip():
            return message.text.strip()
    return ""


class _AgentMetric(BaseMetric):
    """Shared by the per-agent metrics: the agent, its segments, the judge details."""

    requires: tuple[str, ...] = ()
    needs_judge = True

    def __init__(self, *, agent: str | None, context_window: int):
        self.agent = _need_agent(self.name, agent)
        self.context_window = _window(self.name, context_window)

    def segments(self, conversation: Conversation) -> tuple[str | None, list[Segment]]:
        """The agent's name as the conversation writes it, and its segments (none if it never spoke)."""
        name = _find_agent(conversation, self.agent)
        if name is None:
            return None, []
        return name, agent_segments(conversation, name, context_window=self.context_window)

    def never_spoke(self, conversation: Conversation) -> Score:
        spoke = ", ".join(conversation.agents) or "none"
        return Score.not_applicable(f"agent {self.agent!r} never spoke in the conversation (agents: {spoke})")

    @staticmethod
    def judge_details(prims: Primitives) -> dict[str, Any]:
        return {"judge": prims.name, "judge_kind": prims.kind, "judge_settings": prims.describe()}


# --------------------------------------------------------------------------- context relevancy


@metric(
    "agent_context_relevancy",
    description="Share of an agent's responses relevant to the user's request in context "
    "(Healthcare Agent Orchestrator evaluation)",
    source=HAO_EVALUATION,
)
class ContextRelevancy(_AgentMetric):
    """Relevance of an agent's responses to the user's requests; offline or LLM judge.

    The agent's messages are cut into segments (:func:`~clineval.conversations.segments.agent_segments`:
    runs of the agent's messages, with up to ``context_window`` earlier messages as
    context). For each segment the request is the last user message in its context, or,
    when the window holds none, the last user message before the segment; the response is
    the agent's own words (``answer_text``), or its tool calls and results when it wrote
    nothing. The judgement primitive ``context_relevant(question=request,
    contexts=[response])`` decides whether the response holds what the request needs (LLM:
    the ``context_relevance`` prompt; offline: a response sentence about the request by
    MiniLM similarity and shared terms). Value: relevant segments / judged segments, in
    [0, 1]. A segment before any user message, or with nothing in it, is listed but not
    judged. Not applicable when the agent never spoke or no segment could be judged.

    Settings: ``agent`` (required), ``context_window`` (default 5).
    """

    name = "agent_context_relevancy"

    def __init__(self, *, agent: str | None = None, context_window: int = 5):
        super().__init__(agent=agent, context_window=context_window)

    async def score(self, case: Case, ctx: ScoreContext) -> Score:
        conversation = conversation_of(case)
        if conversation is None:
            return _no_conversation(self.name)
        agent, segments = self.segments(conversation)
        if agent is None or not segments:
            return self.never_spoke(conversation)
        prims = ctx.primitives()
        rows: list[dict[str, Any]] = []
        jobs: list[tuple[dict[str, Any], str, str]] = []
        for segment in segments:
            request, request_from = segment.request.strip(), "context"
            if not request:
                request, request_from = _last_request(conversation, segment.start), "earlier"
            response = segment.answer_text.strip() or segment.response_text.strip()
            row: dict[str, Any] = {
                "segment": segment.index,
                "request": _excerpt(request),
                "request_from": request_from if request else None,
                "response": _excerpt(response),
            }
            rows.append(row)
            if not request:
                row["skipped"] = "no user message before the segment"
            elif not response:
                row["skipped"] = "the agent's messages are empty"
            else:
                jobs.append((row, request, response))
        details: dict[str, Any] = {
            "agent": agent,
            "context_window": self.context_window,
            **self.judge_details(prims),
        }
        if not jobs:
            return Score.not_applicable(
                f"none of the {len(segments)} segment(s) of {agent} could be judged", **details, segments=rows
            )
        decisions = await asyncio.gather(
            *(prims.context_relevant(question=request, contexts=[response]) for _, request, response in jobs)
        )
        for (row, _, _), decision in zip(jobs, decisions, strict=True):
            row["relevant"] = decision.value
            row["explanation"] = decision.explanation
        relevant = sum(d.value for d in decisions)
        judged = len(jobs)
        explanation = f"{relevant} of {judged} segment(s) of {agent} relevant to the user's request"
        off = [row for row, _, _ in jobs if not row["relevant"]]
        if off:
            explanation += "; not relevant: " + " | ".join(
                f"segment {r['segment']} ({_excerpt(r['request'], 60)!r})" for r in off[:3]
            )
        return Score(
            value=relevant / judged,
            label=f"{relevant}/{judged}",
            explanation=explanation,
            sub_scores={"segments": float(judged), "relevant": float(relevant)},
            details={**details, "segments": rows},
        )


# --------------------------------------------------------------------------- TBFact of an agent


@metric(
    "agent_tbfact",
    description="TBFact F1 of an agent's messages against the patient's reference text",
    source=HAO_EVALUATION,
)
class AgentTBFact(_AgentMetric):
    """TBFact of one agent's messages against the reference of the conversation's patient.

    The agent's own words (``answer_text`` of all its segments, joined in order; tool calls
    and results left out, so that tool output is not taken for the agent's answer) are the
    response; the reference text of the conversation's ``patient_id`` is the reference;
    TBFact (:class:`~clineval.metrics.factuality.TBFact`) does the rest. Value: F1 under
    ``policy`` in [0, 1]; sub-scores: everything TBFact gives (precision, recall, f1,
    recall_high, strict and lenient variants, per category, counts of inclusions,
    distortions, omissions). With ``per_segment=true`` each segment is scored on its own
    and the value and sub-scores are their means (over the segments where each is defined).
    Error (never 0) when the conversation has no patient or the patient has no reference;
    not applicable when the agent never spoke.

    Settings: ``agent`` (required), ``references`` (required: a folder of
    ``<patient_id>.txt|.md`` files or a JSON/JSONL mapping; a relative path is taken from
    the run file's folder), ``context_window`` (default 0), ``per_segment`` (default false),
    ``policy`` and ``categories`` (as for ``tbfact``).
    """

    name = "agent_tbfact"

    def __init__(
        self,
        *,
        agent: str | None = None,
        references: str | Path | Mapping[str, str] | None = None,
        context_window: int = 0,
        per_segment: bool = False,
        policy: str = "default",
        categories: Sequence[str] | None = None,
        base_dir: str | Path | None = None,
    ):
        super().__init__(agent=agent, context_window=context_window)
        if references is None:
            raise ConfigError(
                "metric 'agent_tbfact' needs the setting 'references': a folder of <patient_id>.txt|.md "
                "files or a JSON/JSONL file mapping patient ids to reference texts"
            )
        if policy not in POLICIES:
            raise ConfigError(f"agent_tbfact: policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        self.references = ReferenceTexts(references, base_dir=base_dir)
        self.per_segment = bool(per_segment)
        self.tbfact = TBFact(categories=categories, policy=policy)

    async def score(self, case: Case, ctx: ScoreContext) -> Score:
        conversation = conversation_of(case)
        if conversation is None:
            return _no_conversation(self.name)
        patient = conversation.patient_id
        if not patient:
            return Score.failed(
                "the conversation has no patient_id, which metric 'agent_tbfact' needs to find the reference",
                missing="patient_id",
            )
        found = self.references.get(patient)
        if not found.texts:
            return Score.failed(
                f"no reference for patient {patient!r}: looked for {found.where}", missing="reference"
            )
        reference = found.texts[0][1]
        agent, segments = self.segments(conversation)
        if agent is None or not segments:
            return self.never_spoke(conversation)
        texts = [s.answer_text for s in segments]
        common = {
            "agent": agent,
            "patient_id": patient,
            "reference_source": found.where,
            "context_window": self.context_window,
            "segments": len(segments),
            "mode": "per_segment" if self.per_segment else "joined",
        }
        if not self.per_segment:
            joined = "\n\n".join(t for t in texts if t.strip())
            inner = await self.tbfact.score(Case(id=case.id, response=joined, reference=reference), ctx)
            return self._wrap(inner, common)
        # segments where the agent wrote nothing (tool calls only) are not scored on their own
        spoken = [(s.index, s.answer_text) for s in segments if s.answer_text.strip()]
        scores = await asyncio.gather(
            *(
                self.tbfact.score(Case(id=f"{case.id}#{i}", response=text, reference=reference), ctx)
                for i, text in spoken
            )
        )
        return self._mean([i for i, _ in spoken], scores, common)

    def _wrap(self, inner: Score, common: dict[str, Any]) -> Score:
        if inner.status != "scored":
            return inner.model_copy(update={"details": {**inner.details, **common}})
        return Score(
            value=inner.value,
            explanation=f"{common['agent']}: {inner.explanation}",
            sub_scores=inner.sub_scores,
            details={**common, **inner.details},
        )

    def _mean(self, indices: Sequence[int], scores: Sequence[Score], common: dict[str, Any]) -> Score:
        scored = [s for s in scores if s.status == "scored" and s.value is not None]
        per_segment = [
            {"segment": i, "status": s.status, "f1": s.value, "explanation": s.explanation}
            for i, s in zip(indices, scores, strict=True)
        ]
        if not scored:
            return Score.not_applicable(
                f"no segment of {common['agent']} states a fact", **common, per_segment=per_segment
            )
        keys = list(dict.fromkeys(k for s in scored for k in s.sub_scores))
        sub_scores: dict[str, float | None] = {}
        for key in keys:
            values = [v for s in scored if (v := s.sub_scores.get(key)) is not None]
            sub_scores[key] = sum(values) / len(values) if values else None
        value = sum(s.value for s in scored if s.value is not None) / len(scored)
        return Score(
            value=value,
            explanation=(
                f"{common['agent']}: mean TBFact F1 {value:.2f} over {len(scored)} segment(s) "
                f"({self.tbfact.policy} policy)"
            ),
            sub_scores={**sub_scores, "scored_segments": float(len(scored))},
            details={**common, "policy": self.tbfact.policy, "per_segment": per_segment},
        )


# --------------------------------------------------------------------------- support by any source


_RANK = {"entailed": 2, "partial": 1, "not_entailed": 0}


@metric(
    "agent_source_support",
    description="Share of an agent's facts entailed by at least one of the patient's source documents "
    "(Healthcare Agent Orchestrator evaluation)",
    source=HAO_EVALUATION,
)
class AgentSourceSupport(_AgentMetric):
    """Grounding of an agent's facts in the patient's source documents, one to one.

    The facts of the agent's own words (``answer_text`` of all its segments, joined; tool
    output left out) are extracted once; each source document of the conversation's
    patient is then checked with all the facts in one ``check_facts`` call. A fact's
    support is its best verdict over the documents. Value: the share of facts fully
    entailed by at least one document, in [0, 1];
    sub-scores ``support_lenient`` (entailed or partially entailed by some document),
    ``partial`` (share whose best verdict is partial), and the counts ``n_facts``,
    ``n_documents``, ``supported``, ``unsupported``. A fact that condenses several
    documents can be supported by none of them one to one (the TBFact study found most of
    its unsupported 3% to be such syntheses), so unsupported is not the same as hallucinated.
    Details list every fact with its best document and evidence, unsupported facts first.
    Error when the conversation has no patient or the patient has no source document; not
    applicable when the agent never spoke or stated no fact.

    Settings: ``agent`` (required), ``sources`` (required: a folder with one sub-folder
    per patient id holding ``*.txt|*.md`` documents, or a JSON/JSONL mapping patient ->
    texts; a relative path is taken from the run file's folder), ``context_window``
    (default 0), ``categories`` (fact categories for extraction).
    """

    name = "agent_source_support"

    def __init__(
        self,
        *,
        agent: str | None = None,
        sources: str | Path | Mapping[str, Any] | None = None,
        context_window: int = 0,
        categories: Sequence[str] | None = None,
        base_dir: str | Path | None = None,
    ):
        super().__init__(agent=agent, context_window=context_window)
        if sources is None:
            raise ConfigError(
                "metric 'agent_source_support' needs the setting 'sources': a folder with one sub-folder "
                "per patient id holding its documents, or a JSON file mapping patient ids to texts"
            )
        self.sources = SourceDocuments(sources, base_dir=base_dir)
        cats = [str(c).strip().lower() for c in (categories or DEFAULT_CATEGORIES)]
        if not cats or any(not c for c in cats):
            raise ConfigError("agent_source_support: categories must be a non-empty list of names")
        self.categories = tuple(dict.fromkeys(cats))

    async def score(self, case: Case, ctx: ScoreContext) -> Score:
        conversation = conversation_of(case)
        if conversation is None:
            return _no_conversation(self.name)
        patient = conversation.patient_id
        if not patient:
            return Score.failed(
                "the conversation has no patient_id, which metric 'agent_source_support' needs "
                "to find the source documents",
                missing="patient_id",
            )
        found = self.sources.get(patient)
        documents = [(name, text) for name, text in found.texts if text.strip()]
        if not documents:
            return Score.failed(
                f"no source document for patient {patient!r}: looked for {found.where}", missing="sources"
            )
        agent, segments = self.segments(conversation)
        if agent is None or not segments:
            return self.never_spoke(conversation)
        prims = ctx.primitives()
        text = "\n\n".join(t for t in (s.answer_text for s in segments) if t.strip())
        facts: list[Fact] = await prims.extract_facts(text, self.categories) if text.strip() else []
        details: dict[str, Any] = {
            "agent": agent,
            "patient_id": patient,
            "sources": found.where,
            "documents": [name for name, _ in documents],
            "context_window": self.context_window,
            **self.judge_details(prims),
        }
        if not facts:
            return Score.not_applicable(f"{agent} states no fact in the conversation", **details)
        claims = [f.text for f in facts]
        verdicts_by_doc: list[list[Verdict]] = await asyncio.gather(
            *(prims.check_facts(claims, doc) for _, doc in documents)
        )
        rows: list[dict[str, Any]] = []
        for index, fact in enumerate(facts):
            best_doc, best = max(
                (
                    (name, verdicts[index])
                    for (name, _), verdicts in zip(documents, verdicts_by_doc, strict=True)
                ),
                key=lambda item: _RANK[item[1].label],
            )
            rows.append(
                {
                    "id": index + 1,
                    "fact": fact.text,
                    "category": fact.category,
                    "importance": fact.importance,
                    "label": best.label,
                    "reason": best.reason,
                    "document": best_doc if best.label != "not_entailed" else None,
                    "evidence": best.evidence,
                    "explanation": best.explanation,
                    "supporting_documents": [
                        name
                        for (name, _), verdicts in zip(documents, verdicts_by_doc, strict=True)
                        if verdicts[index].label == "entailed"
                    ],
                }
            )
        n = len(rows)
        supported = sum(r["label"] == "entailed" for r in rows)
        partial = sum(r["label"] == "partial" for r in rows)
        unsupported = [r for r in rows if r["label"] != "entailed"]
        explanation = (
            f"{supported} of {n} fact(s) of {agent} entailed by at least one of {len(documents)} "
            f"source document(s); {partial} partially"
        )
        if unsupported:
            explanation += "; not fully supported: " + " | ".join(
                _excerpt(r["fact"], 90) for r in unsupported[:3]
            )
        details["facts"] = unsupported + [r for r in rows if r["label"] == "entailed"]
        details["unsupported"] = [r["fact"] for r in unsupported]
        return Score(
            value=supported / n,
            label=f"{supported}/{n}",
            explanation=explanation,
            sub_scores={
                "support_lenient": (supported + partial) / n,
                "partial": partial / n,
                "n_facts": float(n),
                "n_documents": float(len(documents)),
                "supported": float(supported),
                "unsupported": float(n - supported),
            },
            details=details,
        )
