"""What the trace file readers share: the result of reading a file, the JSON shapes exports
come in, and the pieces the observability-tool readers (:mod:`clineval.traces.langfuse`,
:mod:`clineval.traces.phoenix`) build spans from.

* :class:`TraceFile`: one file read, its spans or the errors of what did not parse (then
  nothing of the file is stored).
* :func:`json_items`: the items of a JSON export, whichever shape it has: JSON lines (one
  object per line, located ``FILE:LINE``), a JSON array (``FILE: item N``, counted from 1),
  an object with ``data: [...]`` (a paginated API answer, also ``FILE: item N``), or one
  object (``FILE``). A syntax error is located by its line.
* :func:`trace_id`, :func:`span_id`: an id as OpenTelemetry needs it; an id that is not
  hexadecimal of the right length (a UUID, a tool's own id) is hashed, so the same export
  always gives the same ids and importing it again stores nothing twice.
* :func:`time_ns`: ISO 8601 times (``Z`` or an offset; no offset is UTC) and epoch numbers.
* :func:`chat_message` and :func:`genai_messages`: chat messages in the forms tools record
  them (OpenAI chat, LangChain, Anthropic content blocks) as the GenAI semantic
  conventions' ``{role, parts}`` JSON that :mod:`clineval.traces.assemble` reads.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from clineval.errors import ConfigError
from clineval.model.trace import SpanRecord

__all__ = [
    "MAX_ERRORS",
    "ChatMessage",
    "Item",
    "ItemProblem",
    "TraceFile",
    "chat_message",
    "genai_messages",
    "json_items",
    "json_or_text",
    "merged_answer",
    "messages_from",
    "open_text",
    "read_text",
    "span_id",
    "time_ns",
    "trace_id",
    "walk",
]

#: Bad lines or items reported per file (the count of the rest is given).
MAX_ERRORS = 20


@dataclass
class TraceFile:
    """One trace file read: its spans, and the errors of its bad lines or items (then
    nothing is stored)."""

    path: Path
    lines: int = 0
    spans: list[SpanRecord] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bad_lines: int = 0
    """Lines (JSON lines) or items (a JSON document) that did not parse."""

    @property
    def ok(self) -> bool:
        return self.bad_lines == 0

    def fail(self, where: str, reason: str) -> None:
        """Records one bad line or item."""
        self.bad_lines += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(f"{where}: {reason}")

    def close(self) -> TraceFile:
        """All or nothing: with any bad line or item, no spans (and the count of unlisted errors)."""
        if self.bad_lines:
            if self.bad_lines > len(self.errors):
                more = self.bad_lines - len(self.errors)
                self.errors.append(f"{self.path}: {more} more bad lines or items")
            self.spans = []
        return self


def open_text(path: Path) -> IO[str]:
    """The file as text (UTF-8; a ``.gz`` file through gzip)."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8")


@contextmanager
def file_errors(path: Path, where: Callable[[], str] | None = None) -> Iterator[None]:
    """Reading a trace file: what goes wrong as a one-line :class:`ConfigError` naming it
    (``where()``, e.g. ``FILE:LINE``, for text that is not UTF-8)."""
    try:
        yield
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: a folder, not a trace file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where() if where else path}: not UTF-8 text ({exc.reason})") from None
    except (OSError, EOFError) as exc:
        raise ConfigError(f"{path}: cannot be read ({exc})") from None


def read_text(path: Path) -> str:
    """The whole file as text, or a one-line :class:`ConfigError`."""
    with file_errors(path), open_text(path) as handle:
        return handle.read()


# -- the items of a JSON export --------------------------------------------------------------


class ItemProblem(Exception):
    """A field of an item that is not what the format expects."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason

    def under(self, prefix: str) -> ItemProblem:
        """The same problem with its field path under ``prefix`` (``observations[2]``)."""
        if self.field and not self.field.startswith("["):
            return ItemProblem(f"{prefix}.{self.field}", self.reason)
        joined = prefix + self.field
        return ItemProblem(joined, self.reason)


@dataclass(frozen=True)
class Item:
    """One item of an export and where it is (``FILE:LINE``, ``FILE: item N`` or ``FILE``)."""

    where: str
    value: Any


def json_items(path: Path, text: str, result: TraceFile) -> list[Item]:
    """The items of ``text`` (see the module's docstring); what does not parse is recorded
    in ``result`` (FILE:LINE)."""
    stripped = text.lstrip()
    if not stripped:
        return []
    document: Any = None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        if stripped[0] == "{" and _looks_like_json_lines(text):
            return _json_lines(path, text, result)
        result.lines = len(text.splitlines())
        result.fail(f"{path}:{exc.lineno}", f"not valid JSON ({exc.msg} at column {exc.colno})")
        return []
    result.lines = len(text.splitlines())
    if isinstance(document, list):
        return [Item(f"{path}: item {n}", value) for n, value in enumerate(document, start=1)]
    if isinstance(document, dict) and isinstance(document.get("data"), list):
        return [Item(f"{path}: item {n}", value) for n, value in enumerate(document["data"], start=1)]
    return [Item(str(path), document)]


def _looks_like_json_lines(text: str, lines: int = 20) -> bool:
    """Whether one of the first lines is a whole JSON object starting at its first column
    (a pretty-printed document's objects are indented or span lines)."""
    for line in text.splitlines()[:lines]:
        if line.startswith("{"):
            try:
                if isinstance(json.loads(line), dict):
                    return True
            except json.JSONDecodeError:
                continue
    return False


def _json_lines(path: Path, text: str, result: TraceFile) -> list[Item]:
    items: list[Item] = []
    for number, line in enumerate(text.splitlines(), start=1):
        result.lines = number
        if not line.strip():
            continue
        try:
            items.append(Item(f"{path}:{number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            result.fail(f"{path}:{number}", f"not valid JSON ({exc.msg} at column {exc.colno})")
    return items


# -- ids and times ----------------------------------------------------------------------------

#: Epoch numbers told by their size: nanoseconds, microseconds, milliseconds, else seconds.
_EPOCH_SCALES = ((1e17, 1), (1e14, 1_000), (1e11, 1_000_000), (0.0, 1_000_000_000))
_HEX = re.compile(r"^[0-9a-fA-F]+$")


def _id(value: str, digits: int, namespace: str) -> str:
    if len(value) == digits and _HEX.match(value) and set(value) != {"0"}:
        return value.lower()
    return hashlib.sha256(f"{namespace}:{value}".encode()).hexdigest()[:digits]


def trace_id(value: str, namespace: str) -> str:
    """``value`` when it is 32 hexadecimal digits, else a hash of it (deterministic)."""
    return _id(value, 32, namespace)


def span_id(value: str, namespace: str) -> str:
    """``value`` when it is 16 hexadecimal digits, else a hash of it (deterministic)."""
    return _id(value, 16, namespace)


def time_ns(value: Any, field: str) -> int:
    """Nanoseconds since the epoch of an ISO 8601 time (no offset: UTC) or an epoch number
    (seconds, milliseconds, microseconds or nanoseconds, told by its size)."""
    if isinstance(value, bool) or value is None:
        raise ItemProblem(field, f"expected an ISO 8601 time, got {json.dumps(value)}")
    if isinstance(value, int | float):
        magnitude = abs(value)
        scale = next(s for floor, s in _EPOCH_SCALES if magnitude >= floor)
        return int(value * scale)
    if not isinstance(value, str):
        raise ItemProblem(field, f"expected an ISO 8601 time, got {type(value).__name__}")
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ItemProblem(field, f"expected an ISO 8601 time, got {json.dumps(value)}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1_000


# -- chat messages as the GenAI conventions' {role, parts} ----------------------------------

_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
}


@dataclass
class ChatMessage:
    """A chat message on its way to the GenAI conventions' form."""

    role: str
    texts: list[str] = field(default_factory=list)
    calls: list[tuple[str | None, str, Any]] = field(default_factory=list)
    """(id, name, arguments) of the tool calls it makes."""
    responses: list[tuple[str | None, Any]] = field(default_factory=list)
    """(call id, result) of the tool calls it answers."""
    other_parts: list[str] = field(default_factory=list)
    name: str | None = None

    def parts(self) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = [{"type": "text", "content": text} for text in self.texts]
        for call_id, name, arguments in self.calls:
            part: dict[str, Any] = {"type": "tool_call", "name": name, "arguments": arguments}
            if call_id:
                part["id"] = call_id
            parts.append(part)
        for call_id, response in self.responses:
            answer: dict[str, Any] = {"type": "tool_call_response", "response": response}
            if call_id:
                answer["id"] = call_id
            parts.append(answer)
        parts.extend({"type": kind} for kind in self.other_parts)
        return parts


def json_or_text(value: Any) -> Any:
    """A string holding JSON as the value it holds; any other string or value as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _call(raw: Mapping[str, Any]) -> tuple[str | None, str, Any] | None:
    """A tool call in the OpenAI (``function: {name, arguments}``), LangChain (``name,
    args``) or Anthropic (``tool_use``: ``name, input``) form."""
    function = raw.get("function")
    if isinstance(function, Mapping):
        name, arguments = function.get("name"), function.get("arguments")
    else:
        name = raw.get("name")
        arguments = raw.get("arguments", raw.get("args", raw.get("input")))
    if not isinstance(name, str) or not name:
        return None
    call_id = raw.get("id")
    return (call_id if isinstance(call_id, str) and call_id else None, name, json_or_text(arguments))


def chat_message(raw: Any) -> ChatMessage | None:
    """A chat message of the forms tools record (OpenAI chat: ``role``, ``content`` as text
    or parts, ``tool_calls``, ``tool_call_id``; LangChain: ``type`` human/ai/tool,
    ``tool_calls`` with ``args``; Anthropic content blocks ``tool_use``/``tool_result``),
    or None when ``raw`` is none of them."""
    if not isinstance(raw, Mapping):
        return None
    role = _ROLES.get(str(raw.get("role") or raw.get("type") or "").lower())
    if role is None:
        return None
    message = ChatMessage(role=role)
    if isinstance(raw.get("parts"), list):  # already the GenAI conventions' form
        for part in raw["parts"]:
            _genai_part(part, message)
        return message
    name = raw.get("name")
    message.name = name if isinstance(name, str) and name and role == "assistant" else None
    content = raw.get("content")
    tool_call_id = raw.get("tool_call_id")
    answered = tool_call_id if isinstance(tool_call_id, str) and tool_call_id else None
    if isinstance(content, list):
        for part in content:
            _content_part(part, message)
    elif content is not None:
        message.texts.append(_text_of(content))
    calls = raw.get("tool_calls")
    if calls is None and isinstance(raw.get("additional_kwargs"), Mapping):
        calls = raw["additional_kwargs"].get("tool_calls")
    if isinstance(calls, list):
        for entry in calls:
            call = _call(entry) if isinstance(entry, Mapping) else None
            if call is not None and all(c[0] != call[0] or call[0] is None for c in message.calls):
                message.calls.append(call)
    function_call = raw.get("function_call")
    if isinstance(function_call, Mapping):
        call = _call(function_call)
        if call is not None:
            message.calls.append(call)
    if role == "tool" and not message.responses:
        message.responses.append((answered, "\n".join(message.texts)))
        message.texts = []
    return message


def _genai_part(part: Any, message: ChatMessage) -> None:
    if not isinstance(part, Mapping):
        return
    kind = part.get("type")
    call_id = part.get("id") if isinstance(part.get("id"), str) else None
    if kind == "text":
        message.texts.append(_text_of(part.get("content")))
    elif kind == "tool_call" and isinstance(part.get("name"), str):
        message.calls.append((call_id, part["name"], json_or_text(part.get("arguments"))))
    elif kind == "tool_call_response":
        message.responses.append((call_id, part.get("response", part.get("result"))))
    else:
        message.other_parts.append(str(kind))


def _content_part(part: Any, message: ChatMessage) -> None:
    if isinstance(part, str):
        message.texts.append(part)
        return
    if not isinstance(part, Mapping):
        return
    kind = str(part.get("type") or "")
    if kind in ("text", "input_text", "output_text") or (not kind and isinstance(part.get("text"), str)):
        message.texts.append(_text_of(part.get("text", part.get("content"))))
    elif kind == "tool_use":
        call = _call(part)
        if call is not None:
            message.calls.append(call)
    elif kind == "tool_result":
        tool_use_id = part.get("tool_use_id")
        inner = part.get("content")
        if isinstance(inner, list):
            inner = "\n".join(
                _text_of(p.get("text")) if isinstance(p, Mapping) else _text_of(p) for p in inner
            )
        message.responses.append((tool_use_id if isinstance(tool_use_id, str) else None, _text_of(inner)))
    else:
        message.other_parts.append(kind or "unknown")


def messages_from(value: Any, role: str) -> list[ChatMessage]:
    """The chat messages of a recorded input or output, whatever it is: a list of messages,
    ``{messages: [...]}`` (a request), ``{choices: [{message}]}`` (an OpenAI response), one
    message, or anything else as one message of ``role`` with its text (JSON for objects)."""
    value = json_or_text(value)
    if value is None or value == "" or value == [] or value == {}:
        return []
    if isinstance(value, list):
        messages = [chat_message(item) for item in value]
        if all(m is not None for m in messages):
            return [m for m in messages if m is not None]
    elif isinstance(value, Mapping):
        if isinstance(value.get("messages"), list):
            return messages_from(value["messages"], role)
        choices = value.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
            return messages_from(choices[0].get("message"), role)
        message = chat_message(value)
        if message is not None:
            return [message]
    return [ChatMessage(role=role, texts=[_text_of(value)])]


def genai_messages(messages: Sequence[ChatMessage]) -> str:
    """``messages`` as the JSON of ``gen_ai.input.messages`` / ``gen_ai.output.messages``."""
    out: list[dict[str, Any]] = []
    for message in messages:
        entry: dict[str, Any] = {"role": message.role, "parts": message.parts()}
        if message.name:
            entry["name"] = message.name
        out.append(entry)
    return json.dumps(out, ensure_ascii=False)


def merged_answer(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """Several assistant messages of one model call as one answer (the OpenAI Agents SDK
    records parallel tool calls as one output message each); other roles are kept."""
    answers = [m for m in messages if m.role == "assistant"]
    if len(answers) < 2:
        return list(messages)
    merged = ChatMessage(role="assistant", name=answers[0].name)
    for message in answers:
        merged.texts.extend(message.texts)
        merged.calls.extend(message.calls)
        merged.other_parts.extend(message.other_parts)
    return [merged, *(m for m in messages if m.role != "assistant")]


def walk(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted keys of nested objects (``{"llm": {"model_name": ...}}`` -> ``llm.model_name``;
    lists of objects get their index: ``llm.input_messages.0.message.role``); other values
    are yielded as they are."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from walk(inner, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for index, inner in enumerate(value):
            yield from walk(inner, f"{prefix}.{index}")
    elif prefix:
        yield prefix, value
