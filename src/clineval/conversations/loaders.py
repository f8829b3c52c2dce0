"""Load saved multi-agent conversations from a file or a folder.

:func:`load_conversations` reads a ``.json`` or ``.jsonl`` file, or every ``*.json`` and
``*.jsonl`` file of a folder (sorted by name, not recursive). Each JSON value (the whole
``.json`` file, or one line of a ``.jsonl`` file) is detected on its own, so a folder
may mix formats:

**Semantic Kernel chat context** -- an object with ``chat_history``: what the healthcare
agent orchestrator (Qiu et al.) saves for simulated and real chats. ``chat_history`` is a
JSON *string* (or an object, or a list of messages) holding ``{"messages": [...]}``;
``conversation_id`` is the id; ``patient_id`` may be ``null``; the other keys
(``patient_data``, ``display_blob_urls``, ...) go to the conversation's metadata when not
empty. Each message has a ``role`` (``user``, ``assistant``, ``tool``, ``system``; upper
case and ``AuthorRole.USER`` spellings are accepted), a ``name`` (the agent) and
``items``: ``text`` items (their ``text``, joined with blank lines), ``function_call``
items (``id``; ``name``, else ``plugin_name`` + ``function_name`` as
``plugin-function``; ``arguments`` as a JSON string or an object) and
``function_result`` items (``id`` or ``call_id``, ``result``). Every function result
becomes a ``tool`` message answering its call, and its result is also copied onto the
call. The message ``metadata`` gives the timestamp (``created``, epoch seconds or ISO
8601), the token ``usage`` (``prompt_tokens``, ``completion_tokens``) and the rest of the
message metadata. Other item types (images, ...) are not read; their types are listed
under the message's ``metadata.skipped_items``. The simulator saves every trial of a
query under the same ``conversation_id``: when the file name says ``trial<N>`` (as in
``chat_context_trial1_<key>.json``) the conversation gets ``trial = N`` and the id
``<conversation_id>#trial<N>`` (the original id stays in ``metadata.conversation_id``).

**Native** -- an object with ``messages`` in which a message has a ``speaker``: the
:class:`~clineval.conversations.model.Conversation` model as JSON, validated as is.

**OpenAI-style** -- a list of chat messages, or an object with ``messages`` (and
optionally ``id`` or ``conversation_id``, ``patient_id``, ``scenario``, ``trial``,
``system_version`` and ``metadata``; any other key goes to the metadata). Each message
has a ``role`` (``system``, ``developer`` (read as ``system``), ``user``, ``assistant``,
``tool``), a ``content`` (a string, a list of parts whose ``text`` is joined, or
``null``), and optionally ``name`` (the speaker; without it the speaker is the role),
``tool_calls`` (``[{"id", "type", "function": {"name", "arguments"}}]`` with arguments
as a JSON string, or ``[{"tool_name", "tool_input"}]`` as Vertex AI agent evaluation
writes them) and ``tool_call_id``. An assistant message with only tool calls
(``content: null``) is valid. A ``tool`` message stays a message, and its content is
also copied onto the call it answers (``ToolCallRecord.result``, matched by id).

A message list whose messages have ``items`` is read as a Semantic Kernel chat history
(``{"messages": [...]}`` without the chat-context wrapper).

In a ``.json`` file, a list of objects that all have ``messages`` or ``chat_history`` is
a list of conversations; any other list is the messages of one conversation.

Ids: the file's ``id`` (or ``conversation_id``), else the file's stem, followed by
``#<line>`` for a ``.jsonl`` line and ``#<item>`` for an item of a list of conversations.
Two conversations with the same id are an error.

The patient: the file's ``patient_id``, else the ``patient_id`` given by the caller (for
instance the scenario's patient: the orchestrator only records the patient when its
``load_patient_data`` tool is called, so most simulated chats have none), else the first
string-valued tool-call argument named ``patient_id``. Where it came from is kept in the
conversation's ``metadata.patient_id_source`` (``file``, ``caller`` or ``tool_call``);
a caller's patient that differs from the file's is kept in
``metadata.patient_id_argument``.

Errors: every problem raises :class:`~clineval.errors.DatasetError` (all of them at
once), naming the file, the line (``a.jsonl:4``) or item, the message (counted from 1,
as in ``message 3``) and the field, e.g. ``chats/a.json: message 3: field 'role':
expected one of 'system', 'developer', 'user', 'assistant', 'tool', got 'bot'``. Field
paths inside a message count from 0 (``tool_calls.0.function.arguments``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clineval.conversations.cases import conversation_to_case
from clineval.conversations.gold import GoldLabels
from clineval.conversations.model import USER, Conversation, Message, TokenUsage, ToolCallRecord
from clineval.datasets.loaders import Dataset
from clineval.errors import DatasetError

__all__ = ["TranscriptProblem", "conversations_dataset", "load_conversations", "openai_message"]

_SUFFIXES = (".json", ".jsonl")
_MAX_REPORTED = 25
_OPENAI_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}
_SK_ROLES = {
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "system": "system",
    "developer": "system",
}
#: Keys of a conversation object that map onto Conversation fields (OpenAI-style and SK).
_CONVERSATION_KEYS = (
    "id",
    "conversation_id",
    "patient_id",
    "scenario",
    "trial",
    "system_version",
    "metadata",
)
#: Keys of an OpenAI message that are read; other keys go to the message's metadata.
_OPENAI_MESSAGE_KEYS = {"role", "content", "name", "tool_calls", "tool_call_id", "function_call"}
#: Keys of an OpenAI message that carry nothing when empty (dropped then).
_OPENAI_NOISE = {"refusal", "annotations", "audio"}
_TRIAL_IN_NAME = re.compile(r"(?:^|[_\-.])trial[_\-]?(\d+)(?=$|[_\-.])", re.IGNORECASE)


class _Problem(Exception):
    """One or more located problems inside one conversation (without the file part)."""

    def __init__(self, *lines: str):
        super().__init__(lines[0] if lines else "invalid")
        self.lines = list(lines)


def load_conversations(path: str | Path, *, patient_id: str | None = None) -> list[Conversation]:
    """Conversations from a ``.json``/``.jsonl`` file or from every such file of a folder.

    ``patient_id`` is the patient the conversations are about when the files do not say
    (e.g. the scenario's patient): the caller can set it, it is not only inferred from a
    ``load_patient_data``-style tool call. See the module docstring for the formats,
    ids, patient rules and error messages.
    """
    root = Path(path)
    if not root.exists():
        raise DatasetError(f"conversation file or folder not found: {root}")
    if root.is_dir():
        files = sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in _SUFFIXES)
        if not files:
            raise DatasetError(f"{root}: the folder has no .json or .jsonl files")
    else:
        if root.suffix.lower() not in _SUFFIXES:
            raise DatasetError(f"{root}: unknown conversation format {root.suffix!r}; use .json or .jsonl")
        files = [root]

    problems: list[str] = []
    conversations: list[Conversation] = []
    first_seen: dict[str, str] = {}
    for file in files:
        for where, default_id, value in _read_values(file, problems):
            try:
                conversation = _parse(value, file=file, where=where, default_id=default_id)
            except _Problem as exc:
                problems.extend(f"{where}: {line}" for line in exc.lines)
                continue
            conversation = _resolve_patient(conversation, patient_id)
            if conversation.id in first_seen:
                hint = ""
                if conversation.metadata.get("format") == "semantic_kernel":
                    hint = (
                        " (Semantic Kernel chat contexts reuse conversation_id across trials and"
                        " archives: name the files with trial<N>, or load them separately)"
                    )
                problems.append(
                    f"{where}: field 'id': conversation id {conversation.id!r} is already used at "
                    f"{first_seen[conversation.id]}{hint}"
                )
                continue
            first_seen[conversation.id] = where
            conversations.append(conversation)
    _raise_if(problems)
    if not conversations:
        raise DatasetError(f"{root}: no conversations")
    return conversations


def conversations_dataset(
    path: str | Path, *, patient_id: str | None = None, gold: GoldLabels | None = None
) -> Dataset:
    """:func:`load_conversations` as a dataset: one case per conversation
    (:func:`~clineval.conversations.cases.conversation_to_case`), source = ``path``; with
    ``gold``, its labels joined (:mod:`clineval.conversations.gold`)."""
    problems: list[str] = []
    cases = []
    for conversation in load_conversations(path, patient_id=patient_id):
        try:
            if gold is None:
                cases.append(conversation_to_case(conversation))
            else:
                case = conversation_to_case(gold.apply(conversation))
                cases.append(gold.complete(case, conversation.id, None))
        except ValidationError as exc:
            problems.extend(f"{conversation.source or conversation.id}: {line}" for line in _field_lines(exc))
    _raise_if(problems)
    return Dataset(cases=cases, source=str(path))


# -- reading files -----------------------------------------------------------------------


def _read_values(file: Path, problems: list[str]) -> Iterator[tuple[str, str, Any]]:
    """``(where, default id, JSON value)`` for each conversation-sized value of a file."""
    stem = file.stem
    if file.suffix.lower() == ".jsonl":
        with file.open(encoding="utf-8-sig") as handle:
            lines = list(enumerate(handle, start=1))
        for number, line in lines:
            if not line.strip():
                continue
            where = f"{file}:{number}"
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            yield where, f"{stem}#{number}", value
        return
    try:
        data = json.loads(file.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        problems.append(f"{file}:{exc.lineno}: not valid JSON ({exc.msg})")
        return
    if isinstance(data, list) and data and all(isinstance(item, Mapping) for item in data):
        whole = [_is_conversation_object(item) for item in data]
        if all(whole):
            for number, item in enumerate(data, start=1):
                yield f"{file} item {number}", f"{stem}#{number}", item
            return
        if any(whole):
            problems.append(
                f"{file}: a list that mixes conversations (objects with 'messages' or "
                "'chat_history') and messages"
            )
            return
    yield str(file), stem, data


def _is_conversation_object(value: Mapping[str, Any]) -> bool:
    return "messages" in value or "chat_history" in value


# -- format detection ------------------------------------------------------------------------


def _parse(value: Any, *, file: Path, where: str, default_id: str) -> Conversation:
    if isinstance(value, list):
        return _from_message_list(value, {}, where=where, default_id=default_id)
    if not isinstance(value, Mapping):
        raise _Problem(_NOT_A_CONVERSATION + f", got {_type_name(value)}")
    if "chat_history" in value:
        return _from_sk_context(value, file=file, where=where, default_id=default_id)
    if "messages" in value:
        messages = value["messages"]
        if not isinstance(messages, list):
            raise _Problem(f"field 'messages': expected a list of messages, got {_type_name(messages)}")
        if any(isinstance(m, Mapping) and "speaker" in m for m in messages):
            return _native(value, where=where, default_id=default_id)
        return _from_message_list(messages, value, where=where, default_id=default_id)
    raise _Problem(_NOT_A_CONVERSATION + f"; found keys {', '.join(sorted(map(str, value))) or 'none'}")


_NOT_A_CONVERSATION = (
    "not a conversation: expected an object with 'messages' (native or OpenAI-style) or "
    "'chat_history' (Semantic Kernel chat context), or a list of messages"
)


def _from_message_list(
    messages: list[Any], top: Mapping[str, Any], *, where: str, default_id: str
) -> Conversation:
    if any(isinstance(m, Mapping) and "items" in m for m in messages):
        parsed = _sk_messages(messages)
        fmt = "semantic_kernel"
    elif any(isinstance(m, Mapping) and "speaker" in m for m in messages):
        return _native({"messages": messages}, where=where, default_id=default_id)
    else:
        parsed = _openai_messages(messages)
        fmt = "openai"
    fields, metadata = _conversation_fields(top, skip=("messages",))
    return _make(parsed, fields, metadata, fmt=fmt, where=where, default_id=default_id)


def _native(value: Mapping[str, Any], *, where: str, default_id: str) -> Conversation:
    data = dict(value)
    if data.get("id") is None:
        data["id"] = default_id
    data.setdefault("source", where)
    try:
        return Conversation.model_validate(data)
    except ValidationError as exc:
        raise _Problem(*_field_lines(exc)) from None


def _conversation_fields(
    top: Mapping[str, Any], *, skip: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Conversation fields named in a foreign object, and the rest as metadata."""
    fields: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, value in top.items():
        if key in skip:
            continue
        if key == "metadata":
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise _Problem(f"field 'metadata': expected an object, got {_type_name(value)}")
            metadata.update(value)
        elif key in _CONVERSATION_KEYS:
            if key in ("id", "conversation_id", "patient_id") and _is_int(value):
                value = str(value)
            fields[key] = value
        elif value not in (None, "", [], {}):
            metadata[str(key)] = value
    return fields, metadata


def _make(
    messages: list[Message],
    fields: dict[str, Any],
    metadata: dict[str, Any],
    *,
    fmt: str,
    where: str,
    default_id: str,
    trial_from_name: int | None = None,
) -> Conversation:
    conversation_id = fields.pop("conversation_id", None)
    given_id = fields.pop("id", None)
    if given_id is None:
        given_id = conversation_id
    elif conversation_id is not None and conversation_id != given_id:
        metadata.setdefault("conversation_id", conversation_id)
    if given_id is None:
        ident = default_id
    else:
        ident = given_id
        if trial_from_name is not None and fields.get("trial") is None and isinstance(given_id, str):
            metadata.setdefault("conversation_id", given_id)
            ident = f"{given_id}#trial{trial_from_name}"
    if trial_from_name is not None and fields.get("trial") is None:
        fields["trial"] = trial_from_name
    metadata.setdefault("format", fmt)
    data = {**fields, "id": ident, "messages": messages, "metadata": metadata, "source": where}
    try:
        return Conversation.model_validate(data)
    except ValidationError as exc:
        raise _Problem(*_field_lines(exc)) from None


# -- OpenAI-style ---------------------------------------------------------------------------


def _openai_messages(raw_messages: list[Any]) -> list[Message]:
    messages: list[Message] = []
    problems: list[str] = []
    results = _Results()
    for number, raw in enumerate(raw_messages, start=1):
        try:
            message = _openai_message(raw)
        except _Problem as exc:
            problems.extend(f"message {number}: {line}" for line in exc.lines)
            continue
        results.add(message, message.text if message.role == "tool" and message.text else None)
        messages.append(message)
    if problems:
        raise _Problem(*problems)
    return messages


def _openai_message(raw: Any) -> Message:
    if not isinstance(raw, Mapping):
        raise _Problem(f"expected a message object, got {_type_name(raw)}")
    role = _role(raw.get("role"), _OPENAI_ROLES)
    text, skipped = _openai_text(raw.get("content"))
    name = raw.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise _Problem(f"field 'name': expected a non-empty string, got {name!r}")
    calls: list[ToolCallRecord] = []
    raw_calls = raw.get("tool_calls")
    if raw_calls is not None:
        if not isinstance(raw_calls, list):
            raise _Problem(f"field 'tool_calls': expected a list, got {_type_name(raw_calls)}")
        for index, call in enumerate(raw_calls):
            calls.append(_openai_call(call, f"tool_calls.{index}"))
    if raw.get("function_call") is not None:  # the legacy single function call
        calls.append(_openai_call({"function": raw["function_call"]}, "function_call", legacy=True))
    if calls and role != "assistant":
        raise _Problem(f"field 'tool_calls': only assistant messages make tool calls, this one is {role!r}")
    tool_call_id = raw.get("tool_call_id")
    if tool_call_id is not None and not isinstance(tool_call_id, str):
        raise _Problem(f"field 'tool_call_id': expected a string, got {_type_name(tool_call_id)}")
    metadata: dict[str, Any] = {
        str(k): v
        for k, v in raw.items()
        if k not in _OPENAI_MESSAGE_KEYS and not (k in _OPENAI_NOISE and v in (None, "", [], {}))
    }
    if skipped:
        metadata["skipped_items"] = skipped
    return _message(
        role=role,
        speaker=name or _default_speaker(role),
        text=text,
        tool_calls=calls,
        tool_call_id=tool_call_id,
        metadata=metadata,
    )


def _openai_text(content: Any) -> tuple[str, list[str]]:
    """The text of an OpenAI ``content`` and the types of the parts that are not text."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        raise _Problem(
            f"field 'content': expected a string, a list of parts or null, got {_type_name(content)}"
        )
    texts: list[str] = []
    skipped: list[str] = []
    for index, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping):
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part.get("refusal"), str):
                texts.append(part["refusal"])
            else:
                skipped.append(str(part.get("type", "unknown")))
        else:
            raise _Problem(
                f"field 'content.{index}': expected a part object or a string, got {_type_name(part)}"
            )
    return "\n".join(texts), skipped


def _openai_call(call: Any, field: str, *, legacy: bool = False) -> ToolCallRecord:
    if not isinstance(call, Mapping):
        raise _Problem(f"field '{field}': expected a tool call object, got {_type_name(call)}")
    if "function" not in call and "tool_name" in call:
        # Vertex AI agent evaluation's spelling: {"tool_name", "tool_input"}.
        name, arguments_key, prefix, function = "tool_name", "tool_input", field, call
    else:
        function = call.get("function", call)
        name, arguments_key = "name", "arguments"
        prefix = field if legacy else f"{field}.function"
    if not isinstance(function, Mapping):
        raise _Problem(f"field '{prefix}': expected an object with 'name' and 'arguments'")
    tool = function.get(name)
    if not isinstance(tool, str) or not tool.strip():
        raise _Problem(f"field '{prefix}.{name}': expected a non-empty string, got {tool!r}")
    call_id = call.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise _Problem(f"field '{field}.id': expected a string, got {_type_name(call_id)}")
    arguments = _arguments(function.get(arguments_key), f"{prefix}.{arguments_key}")
    return ToolCallRecord(id=call_id, name=tool, arguments=arguments)


# -- Semantic Kernel -----------------------------------------------------------------------


def _from_sk_context(value: Mapping[str, Any], *, file: Path, where: str, default_id: str) -> Conversation:
    history = value["chat_history"]
    if isinstance(history, str):
        try:
            history = json.loads(history)
        except json.JSONDecodeError as exc:
            raise _Problem(
                f"field 'chat_history': not valid JSON ({exc.msg} at position {exc.pos})"
            ) from None
    if isinstance(history, Mapping):
        raw_messages = history.get("messages")
        if not isinstance(raw_messages, list):
            raise _Problem(
                f"field 'chat_history.messages': expected a list of messages, got {_type_name(raw_messages)}"
            )
    elif isinstance(history, list):
        raw_messages = history
    else:
        raise _Problem(
            "field 'chat_history': expected a JSON string or an object with 'messages', "
            f"got {_type_name(history)}"
        )
    messages = _sk_messages(raw_messages)
    fields, metadata = _conversation_fields(value, skip=("chat_history",))
    match = _TRIAL_IN_NAME.search(file.stem)
    return _make(
        messages,
        fields,
        metadata,
        fmt="semantic_kernel",
        where=where,
        default_id=default_id,
        trial_from_name=int(match.group(1)) if match else None,
    )


def _sk_messages(raw_messages: list[Any]) -> list[Message]:
    messages: list[Message] = []
    problems: list[str] = []
    results = _Results()
    for number, raw in enumerate(raw_messages, start=1):
        try:
            produced = _sk_message(raw)
        except _Problem as exc:
            problems.extend(f"message {number}: {line}" for line in exc.lines)
            continue
        for message, result in produced:
            results.add(message, result)
            messages.append(message)
    if problems:
        raise _Problem(*problems)
    return messages


def _sk_message(raw: Any) -> list[tuple[Message, Any]]:
    """One SK message as clineval messages: the message itself (text and calls), then one
    ``tool`` message per function result it holds (paired with that result)."""
    if not isinstance(raw, Mapping):
        raise _Problem(f"expected a message object, got {_type_name(raw)}")
    role = _role(raw.get("role"), _SK_ROLES)
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise _Problem(f"field 'name': expected a string, got {_type_name(name)}")
    items = raw.get("items")
    if items is None:
        content = raw.get("content")
        items = [] if content is None else [{"content_type": "text", "text": content}]
    if not isinstance(items, list):
        raise _Problem(f"field 'items': expected a list, got {_type_name(items)}")

    texts: list[str] = []
    calls: list[ToolCallRecord] = []
    results: list[tuple[str | None, str | None, Any]] = []
    skipped: list[str] = []
    for index, item in enumerate(items):
        field = f"items.{index}"
        if not isinstance(item, Mapping):
            raise _Problem(f"field '{field}': expected an item object, got {_type_name(item)}")
        kind = item.get("content_type")
        if kind == "text":
            text = item.get("text")
            if text is not None and not isinstance(text, str):
                raise _Problem(f"field '{field}.text': expected a string, got {_type_name(text)}")
            if text:
                texts.append(text)
        elif kind == "function_call":
            call_id = _sk_id(item, field)
            calls.append(
                ToolCallRecord(
                    id=call_id,
                    name=_sk_function_name(item, field, required=True) or "",
                    arguments=_arguments(item.get("arguments"), f"{field}.arguments"),
                )
            )
        elif kind == "function_result":
            function = _sk_function_name(item, field, required=False)
            results.append((_sk_id(item, field), function, item.get("result")))
        else:
            skipped.append(str(kind))

    metadata, timestamp, usage = _sk_metadata(raw)
    if skipped:
        metadata["skipped_items"] = skipped
    out: list[tuple[Message, Any]] = []
    if role != "tool" or not results:
        if role != "assistant" and calls:
            raise _Problem(
                f"field 'items': only assistant messages make function calls, this one is {role!r}"
            )
        if texts or calls or not results:
            message = _message(
                role=role,
                speaker=name or _default_speaker(role),
                text="\n\n".join(texts),
                tool_calls=calls,
                metadata=metadata,
                timestamp=timestamp,
                usage=usage,
            )
            out.append((message, None))
    elif texts or calls:
        raise _Problem("a tool message with function results has text or function calls as well")
    for call_id, function, result in results:
        result_metadata = dict(metadata) if role == "tool" else {}
        if function:
            result_metadata["function"] = function
        message = _message(
            role="tool",
            speaker=(name if role == "tool" and name else "tool"),
            text=_as_text(result),
            tool_call_id=call_id,
            metadata=result_metadata,
            timestamp=timestamp,
        )
        out.append((message, result))
    return out


def _sk_id(item: Mapping[str, Any], field: str) -> str | None:
    for key in ("id", "call_id"):
        value = item.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise _Problem(f"field '{field}.{key}': expected a string, got {_type_name(value)}")
        return value
    return None


def _sk_function_name(item: Mapping[str, Any], field: str, *, required: bool) -> str | None:
    name = item.get("name")
    if isinstance(name, str) and name.strip():
        return name
    function = item.get("function_name")
    plugin = item.get("plugin_name")
    if isinstance(function, str) and function.strip():
        return f"{plugin}-{function}" if isinstance(plugin, str) and plugin.strip() else function
    if required:
        raise _Problem(f"field '{field}.name': a function call needs 'name' or 'function_name'")
    return None


def _sk_metadata(raw: Mapping[str, Any]) -> tuple[dict[str, Any], str | None, TokenUsage | None]:
    meta = raw.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, Mapping):
        raise _Problem(f"field 'metadata': expected an object, got {_type_name(meta)}")
    metadata = {str(k): v for k, v in meta.items() if k not in ("created", "usage")}
    for key in ("ai_model_id", "finish_reason"):
        if raw.get(key) is not None:
            metadata[key] = raw[key]
    timestamp = _timestamp(meta.get("created"))
    usage: TokenUsage | None = None
    raw_usage = meta.get("usage")
    if isinstance(raw_usage, Mapping):
        prompt = _int_or_none(raw_usage.get("prompt_tokens", raw_usage.get("input_tokens")))
        completion = _int_or_none(raw_usage.get("completion_tokens", raw_usage.get("output_tokens")))
        if prompt is not None or completion is not None:
            usage = TokenUsage(prompt_tokens=prompt, completion_tokens=completion)
    elif raw_usage is not None:
        metadata["usage"] = raw_usage
    return metadata, timestamp, usage


def _timestamp(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, tz=UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            raise _Problem(f"field 'metadata.created': not a timestamp: {value!r}") from None
    if isinstance(value, str):
        return value
    raise _Problem(
        f"field 'metadata.created': expected epoch seconds or an ISO 8601 string, got {_type_name(value)}"
    )


def _int_or_none(value: Any) -> int | None:
    return value if _is_int(value) else None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- shared helpers ------------------------------------------------------------------------


def _role(value: Any, allowed: Mapping[str, str]) -> str:
    text = value if isinstance(value, str) else None
    if text is not None:
        key = text.strip()
        if key.lower().startswith("authorrole."):
            key = key[len("authorrole.") :]
        key = key.lower()
        if key in allowed:
            return allowed[key]
    expected = ", ".join(repr(r) for r in allowed)
    raise _Problem(f"field 'role': expected one of {expected}, got {value!r}")


def _default_speaker(role: str) -> str:
    return USER if role == "user" else role


def _arguments(value: Any, field: str) -> dict[str, Any]:
    """Tool-call arguments as an object: a JSON object, a JSON string of one, or nothing."""
    if value is None:
        return {}
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise _Problem(f"field '{field}': not valid JSON ({exc.msg} at position {exc.pos})") from None
    if not isinstance(value, Mapping):
        raise _Problem(f"field '{field}': expected a JSON object, got {_type_name(value)}")
    return dict(value)


def _message(**fields: Any) -> Message:
    try:
        return Message.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise _Problem(*_field_lines(exc)) from None


class _Results:
    """Copies each ``tool`` message's result onto the call it answers: the latest earlier
    call with the message's ``tool_call_id``. SK results keep their JSON value; OpenAI
    results are the message's text."""

    def __init__(self) -> None:
        self._calls: dict[str, ToolCallRecord] = {}

    def add(self, message: Message, result: Any) -> None:
        for call in message.tool_calls:
            if call.id is not None:
                self._calls[call.id] = call
        call_id = message.tool_call_id
        if message.role == "tool" and result is not None and call_id is not None and call_id in self._calls:
            self._calls[call_id].result = result


def _resolve_patient(conversation: Conversation, given: str | None) -> Conversation:
    metadata = dict(conversation.metadata)
    patient = conversation.patient_id
    if patient:
        metadata["patient_id_source"] = "file"
        if given and given != patient:
            metadata["patient_id_argument"] = given
    elif given:
        patient = given
        metadata["patient_id_source"] = "caller"
    else:
        patient = _patient_from_tool_calls(conversation.messages)
        if patient:
            metadata["patient_id_source"] = "tool_call"
    return conversation.model_copy(update={"patient_id": patient or None, "metadata": metadata})


def _patient_from_tool_calls(messages: list[Message]) -> str | None:
    for message in messages:
        for call in message.tool_calls:
            value = call.arguments.get("patient_id")
            if isinstance(value, str) and value.strip():
                return value.strip()
            if _is_int(value):
                return str(value)
    return None


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__


def _field_lines(exc: ValidationError) -> list[str]:
    """``message N: field 'x': problem`` lines (messages counted from 1) for a validation error."""
    lines = []
    for err in exc.errors():
        loc = list(err.get("loc", ()))
        head = ""
        if len(loc) >= 2 and loc[0] in ("messages", "input") and isinstance(loc[1], int):
            head = f"message {loc[1] + 1}: "
            loc = loc[2:]
        path = ".".join(str(p) for p in loc)
        kind = err.get("type")
        if kind == "extra_forbidden":
            msg = "unknown field"
        elif kind == "literal_error":
            msg = f"expected one of {err.get('ctx', {}).get('expected', '?')}, got {err.get('input')!r}"
        else:
            msg = err.get("msg", "invalid")
        lines.append(f"{head}field '{path}': {msg}" if path else f"{head}{msg}")
    return lines


def _raise_if(problems: list[str]) -> None:
    if problems:
        shown = problems[:_MAX_REPORTED]
        more = len(problems) - len(shown)
        tail = f"\n... and {more} more" if more > 0 else ""
        if len(problems) == 1:
            raise DatasetError(problems[0])
        raise DatasetError(f"{len(problems)} problem(s):\n" + "\n".join(shown) + tail)


# For other readers of OpenAI-format messages (the trace assembly): one reader, one error.
TranscriptProblem = _Problem
openai_message = _openai_message
