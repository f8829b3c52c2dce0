"""The judge interface: chat messages plus an output schema in, a validated object out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict

T = TypeVar("T", bound=BaseModel)


class ChatMessage(BaseModel):
    """One chat message sent to a judge."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


MessagesLike = Sequence[ChatMessage | dict[str, str]]


def as_messages(messages: MessagesLike) -> list[ChatMessage]:
    """Validate messages given as models or plain ``{"role", "content"}`` dicts."""
    return [m if isinstance(m, ChatMessage) else ChatMessage.model_validate(m) for m in messages]


class Usage(BaseModel):
    """Token and call accounting of judge work, summed per score and per run."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    """Requests sent to the endpoint: re-asks and every attempt count, failed ones included."""
    cached: int = 0
    """Answers served from the judge cache with no request."""
    reasks: int = 0
    """Times an answer failed validation and the judge was asked again."""

    def add(self, other: Usage) -> None:
        # Summed in the instance's __dict__ (what pydantic's __setattr__ ends in, at a fifth
        # of its cost: this runs for every judge call), the fields marked set as it would.
        mine, theirs = self.__dict__, other.__dict__
        for field in _USAGE_FIELDS:
            mine[field] += theirs[field]
        self.__pydantic_fields_set__.update(_USAGE_FIELDS)

    def record(self, *, calls: int, prompt_tokens: int, completion_tokens: int) -> None:
        """Add one answer's requests and tokens (as :meth:`add` does, without a :class:`Usage`)."""
        mine = self.__dict__
        mine["calls"] += calls
        mine["prompt_tokens"] += prompt_tokens
        mine["completion_tokens"] += completion_tokens
        self.__pydantic_fields_set__.update(("calls", "prompt_tokens", "completion_tokens"))

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def is_empty(self) -> bool:
        return self == Usage()


_USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "calls", "cached", "reasks")


class JudgeAnswer(BaseModel, Generic[T]):
    """A validated judge answer with the raw text it came from."""

    output: T
    raw: str
    usage: Usage
    cached: bool = False


class JudgeError(Exception):
    """The judge could not produce a valid answer for this request.

    The case stays unscored (an error score with this reason); the run goes on.
    """

    def __init__(self, reason: str, *, raw: str | None = None, usage: Usage | None = None):
        super().__init__(reason)
        self.reason = reason
        self.raw = raw
        self.usage = usage or Usage()


@runtime_checkable
class Judge(Protocol):
    """Anything that answers chat messages with an object of a given pydantic schema."""

    @property
    def name(self) -> str:
        """A short identity such as ``openai:gpt-4o-mini`` (kept in run records)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Settings that shape the answers (model, endpoint, temperature), never secrets."""
        ...

    async def ask(
        self, messages: MessagesLike, schema: type[T], *, max_tokens: int | None = None
    ) -> JudgeAnswer[T]:
        """Answer ``messages`` with a validated ``schema`` object, or raise :class:`JudgeError`."""
        ...

    async def aclose(self) -> None:
        """Release connections and caches."""
        ...
