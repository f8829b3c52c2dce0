"""Simulated users: who talks to the system under test in a simulated conversation.

Two users come with clineval:

:class:`ScriptedUser`
    asks the scenario's initial query, then each follow-up in order (one per turn), then
    sends a closing message once and is done. Deterministic; each follow-up carries its
    gold agent (``expect``) as :attr:`~clineval.conversations.model.Message.gold_agent`.
:class:`LLMUser`
    a chat model plays the user: it gets the persona, the goal, the patient and the
    follow-ups to ask in order, sees the agents' messages since its last turn, and replies
    with the completion signal on a line of its own once the goal is met.

A user keeps no state between calls: everything it needs is in the conversation so far,
so one user object serves many conversations at once. Write your own by implementing
:class:`SimulatedUser`.
"""

from __future__ import annotations

import re
from typing import Any, Protocol, runtime_checkable

from clineval.conversations.model import USER, Conversation, Message
from clineval.conversations.scenarios import Followup, Scenario
from clineval.errors import ConfigError
from clineval.judges.base import JudgeError
from clineval.judges.config import JudgeConfig, build_judge
from clineval.judges.structured import ChatBackend, StructuredJudge

__all__ = [
    "COMPLETION_SIGNAL",
    "CONTINUATION",
    "LLMUser",
    "ScriptedUser",
    "SimulatedUser",
    "SimulatedUserError",
    "is_completion",
    "user_prompt",
]

CONTINUATION = "Thank you, that is all I need."
COMPLETION_SIGNAL = "CONVERSATION COMPLETE"
FOLLOWUP_KEY = "followup"
"""Metadata key on a user message: the index of the scenario follow-up it asks."""


@runtime_checkable
class SimulatedUser(Protocol):
    """The user side of a simulated conversation."""

    @property
    def name(self) -> str:
        """A short description stored with each conversation (``scripted``, ``llm:MODEL``)."""
        ...

    async def first_message(self, scenario: Scenario) -> Message:
        """The message that opens the conversation."""
        ...

    async def next_message(self, conversation: Conversation, scenario: Scenario) -> Message | None:
        """The next user message after the system's reply, or ``None`` when the user is done."""
        ...


class SimulatedUserError(RuntimeError):
    """The simulated user could not produce a message (e.g. its chat endpoint failed)."""


def opening_message(scenario: Scenario) -> Message:
    """The scenario's initial query as a user message, with its gold agent."""
    return Message(
        role="user",
        speaker=USER,
        text=scenario.initial_query,
        gold_agent=scenario.initial_expect,
        gold_tools=scenario.initial_tools,
    )


def _user_messages(conversation: Conversation) -> list[Message]:
    return [m for m in conversation.messages if m.role == "user"]


def _asked_followups(conversation: Conversation) -> int:
    """How many scenario follow-ups the user has asked so far (in order)."""
    count = 0
    for message in _user_messages(conversation):
        if isinstance(message.metadata.get(FOLLOWUP_KEY), int):
            count += 1
    return count


def _followup_message(text: str, followup: Followup, index: int) -> Message:
    return Message(
        role="user",
        speaker=USER,
        text=text,
        gold_agent=followup.expect,
        gold_tools=followup.tools,
        metadata={FOLLOWUP_KEY: index},
    )


class ScriptedUser:
    """Asks the initial query, each follow-up in order, then ``continuation`` once; then done.

    ``continuation=None`` (or empty) ends the conversation right after the last follow-up.
    """

    def __init__(self, continuation: str | None = CONTINUATION):
        self.continuation = continuation.strip() if continuation and continuation.strip() else None

    @property
    def name(self) -> str:
        return "scripted"

    async def first_message(self, scenario: Scenario) -> Message:
        return opening_message(scenario)

    async def next_message(self, conversation: Conversation, scenario: Scenario) -> Message | None:
        sent = len(_user_messages(conversation))
        if sent == 0:
            return opening_message(scenario)
        index = sent - 1  # the first user message was the initial query
        if index < len(scenario.followups):
            followup = scenario.followups[index]
            return _followup_message(followup.text, followup, index)
        if index == len(scenario.followups) and self.continuation is not None:
            return Message(role="user", speaker=USER, text=self.continuation, metadata={"closing": True})
        return None


# --------------------------------------------------------------------------- LLM user

_SIGNAL_TRIM = " \t\"'`*_.!"
_AGENT_PREFIX = re.compile(r"^\s*@?[A-Za-z][A-Za-z0-9_ -]{0,40}:\s*")


def is_completion(text: str, signal: str = COMPLETION_SIGNAL) -> bool:
    """True when a line of ``text`` is the completion signal.

    Case, spacing, quotes, emphasis, a final full stop and an agent-name prefix
    (``Orchestrator: CONVERSATION COMPLETE``) do not matter; the signal inside a sentence
    does not count."""
    wanted = " ".join(signal.split()).casefold()
    for line in text.splitlines():
        for form in (line, _AGENT_PREFIX.sub("", line, count=1)):
            if " ".join(form.strip(_SIGNAL_TRIM).split()).casefold() == wanted:
                return True
    return False


def user_prompt(scenario: Scenario, completion_signal: str = COMPLETION_SIGNAL) -> str:
    """The LLM user's system prompt for a scenario.

    The gold agents (``expect``) are not in it: the user should not steer the routing that
    agent selection accuracy measures.
    """
    lines = [
        f"You play {scenario.persona}, talking in a group chat with a team of AI agents led by an "
        "agent named Orchestrator. You are the human user: you ask, the agents answer. Never answer "
        "your own questions and never speak for an agent.",
        "",
        f"Your goal: {scenario.effective_goal}.",
    ]
    if scenario.patient_id:
        lines.append(f"The conversation is about patient {scenario.patient_id}.")
    lines += ["", f"You opened the conversation with: {scenario.initial_query}"]
    if scenario.followups:
        lines += ["", "Then ask these follow-up questions, in this order, one per turn, each only once:"]
        lines += [f"{i}. {f.text}" for i, f in enumerate(scenario.followups, 1)]
        lines += [
            "Ask the next one only after the agents have answered the previous one. If an answer is "
            "incomplete or an agent asks you something, reply to that first (briefly), then go on."
        ]
    lines += [
        "",
        "Rules for every message you write:",
        "- Address an agent by name at the start, e.g. 'Orchestrator: <your message>'. Address the "
        "Orchestrator unless you are answering a question a specific agent asked you.",
        "- One question or request per message; keep it short, as a busy clinician would.",
        "- If the agents are waiting for your confirmation to go on, say so, e.g. 'Orchestrator: proceed'.",
        f"- When your goal is met and every follow-up has been answered, reply with exactly "
        f"{completion_signal} and nothing else.",
    ]
    return "\n".join(lines)


def _agent_turn(messages: list[Message]) -> str:
    """What the agents said in one turn, as the user sees it (tool traffic left out)."""
    parts = [f"{m.speaker}: {m.text.strip()}" for m in messages if m.role == "assistant" and m.text.strip()]
    return "\n\n".join(parts) if parts else "(the agents did not reply)"


_STOPWORDS = frozenset(
    re.split(
        r"\s+",
        "the and for are was were you your can could would should please what which when where who how "
        "does did has have had this that these those with from about into show tell give let any all "
        "there their them then than now also just more some much very",
    )
)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.casefold()) if len(w) > 2 and w not in _STOPWORDS}


def _overlap(text: str, followup: Followup) -> float:
    expected = _words(followup.text)
    if not expected:
        same = _AGENT_PREFIX.sub("", text).strip().casefold() == followup.text.casefold()
        return 1.0 if same else 0.0
    return len(expected & _words(text)) / len(expected)


def _asks_next(text: str, followups: list[Followup], index: int) -> bool:
    """Whether a message asks follow-up ``index``: most of its content words (60 %) are in
    the message, and no later follow-up matches the message better."""
    score = _overlap(text, followups[index])
    return score >= 0.6 and all(_overlap(text, later) <= score for later in followups[index + 1 :])


class LLMUser:
    """A chat model as the user (see the module docstring).

    ``llm`` is a chat backend (e.g. ``StructuredJudge.backend``; the caller closes it), or a
    judge spec / :class:`~clineval.judges.config.JudgeConfig` for a chat endpoint
    (``openai:MODEL[@BASE_URL]``, ``azure[:DEPLOYMENT]``, ``scripted:FILE``), in which case
    each request uses a fresh connection that is closed after it (so that one user serves
    conversations in any event loop). Replies are never cached.

    The user stops when a line of its reply is ``completion_signal``; the caller's turn limit
    (:func:`~clineval.conversations.simulate.simulate_conversation`) stops it otherwise. A
    message that asks the next scripted follow-up (60 % of its content words, and no later
    follow-up matching better) carries that follow-up's gold agent.
    """

    def __init__(
        self,
        llm: ChatBackend | JudgeConfig | str,
        *,
        completion_signal: str = COMPLETION_SIGNAL,
        max_tokens: int | None = 400,
    ):
        if not completion_signal.strip():
            raise ConfigError("the LLM user needs a non-empty completion signal")
        self.completion_signal = completion_signal.strip()
        self.max_tokens = max_tokens
        self._config: JudgeConfig | None = None
        self._backend: ChatBackend | None = None
        if isinstance(llm, str | JudgeConfig):
            config = JudgeConfig.model_validate(llm) if isinstance(llm, str) else llm
            if config.provider not in ("openai", "azure", "scripted"):
                raise ConfigError(
                    f"the LLM user needs a chat endpoint ('openai:MODEL[@BASE_URL]', 'azure[:DEPLOYMENT]' "
                    f"or 'scripted:FILE'), not {config.label!r}"
                )
            self._config = config.model_copy(update={"cache": False})
            self._label = config.label
        else:
            self._backend = llm
            self._label = llm.name

    @property
    def name(self) -> str:
        return f"llm:{self._label}"

    def describe(self) -> dict[str, Any]:
        """Settings that shape the user's messages (stored with each conversation)."""
        return {"name": self.name, "completion_signal": self.completion_signal, "max_tokens": self.max_tokens}

    async def first_message(self, scenario: Scenario) -> Message:
        return opening_message(scenario)

    def messages_for(self, conversation: Conversation, scenario: Scenario) -> list[dict[str, str]]:
        """The chat the model sees: the prompt, its own messages as the assistant, and the
        agents' messages of each turn as one user message."""
        chat = [{"role": "system", "content": user_prompt(scenario, self.completion_signal)}]
        pending: list[Message] = []
        for message in conversation.messages:
            if message.role == "user":
                if pending:
                    chat.append({"role": "user", "content": _agent_turn(pending)})
                    pending = []
                chat.append({"role": "assistant", "content": message.text})
            else:
                pending.append(message)
        chat.append({"role": "user", "content": _agent_turn(pending)})
        return chat

    async def next_message(self, conversation: Conversation, scenario: Scenario) -> Message | None:
        text = (await self._ask(self.messages_for(conversation, scenario))).strip()
        if is_completion(text, self.completion_signal):
            return None
        if not text:
            raise SimulatedUserError(f"{self.name}: the model returned an empty message")
        asked = _asked_followups(conversation)
        if asked < len(scenario.followups) and _asks_next(text, scenario.followups, asked):
            return _followup_message(text, scenario.followups[asked], asked)
        return Message(role="user", speaker=USER, text=text)

    async def _ask(self, messages: list[dict[str, str]]) -> str:
        backend = self._backend
        owned = backend is None
        if backend is None:
            assert self._config is not None
            judge = build_judge(self._config)
            if not isinstance(judge, StructuredJudge):  # pragma: no cover - providers are checked above
                raise ConfigError(f"the LLM user cannot use {self._label!r}")
            backend = judge.backend
        try:
            completion = await backend.chat(
                messages,
                schema_name="simulated_user",
                json_schema={},
                mode="text",
                max_tokens=self.max_tokens,
            )
        except JudgeError as exc:
            raise SimulatedUserError(f"{self.name}: the request failed: {exc.reason}") from exc
        finally:
            if owned:
                await backend.aclose()
        return completion.text
