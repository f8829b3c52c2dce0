"""A scripted, OpenAI-compatible chat completions server for tests and benchmarks.

Code that calls an LLM is tested against this real HTTP server instead of a patched
client, so that the whole path (the ``openai`` SDK, HTTP, status codes, headers, bodies
and timeouts) is exercised. The server runs in a separate process (its CPU work does not
share the GIL with the client under test) and listens on ``127.0.0.1``, on a free port
unless one is given.

Usage::

    from clineval.testing import ScriptedServer

    with ScriptedServer({"default": {"content": "yes"}}) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        ...
        server.set_script({"rules": [{"pattern": "capital", "content": "Paris"}]})
        assert server.requests()[-1]["body"]["model"] == "gpt-test"

or from a shell: ``python -m clineval.testing.server [--port 0] [--delay 0.05]
[--script FILE.json]``, which prints one line ``READY <port>`` once it is listening.

Endpoints
---------
``POST /v1/chat/completions`` (also ``/chat/completions`` and the Azure form
``/openai/deployments/{deployment}/chat/completions?api-version=...``)
    Answers with a ChatCompletion chosen by the script. Token counts in ``usage`` are
    word counts: approximate but deterministic. Streaming is not supported (HTTP 400).
    As Azure OpenAI does, the Azure form without ``api-version`` is answered 404
    ("Resource not found"); the deployment is the model when the body names none.
``GET /v1/models``
    A model list: ``scripted-model`` and every ``model`` named by a rule.
``POST /_admin/script``
    Replaces the script (body: the script, see below). An invalid script is refused with
    HTTP 400 and the reason, and the previous script stays in force.
``POST /_admin/reset``
    Clears the rules, the default, the request log and the counters. The base delay given
    on the command line (``--delay``) is kept.
``GET /_admin/requests``
    The chat requests received, in arrival order: ``{"path", "query", "auth", "body",
    "timestamp"}`` each, where ``query`` is the query string's parameters (``{"api-version":
    ...}`` on the Azure form), ``auth`` the way the key came (``"api-key"`` header, ``"bearer"``
    or ``None``; never the key), ``body`` the decoded JSON body (``None`` if it was not JSON)
    and ``timestamp`` is ``time.time()`` at arrival.
``GET /_admin/stats``
    ``{"chat_requests", "in_flight", "max_in_flight"}``: chat requests received, chat
    requests being answered now, and the most ever answered at the same time.

Script format
-------------
::

    {
      "rules": [                       # tried in order; the first that applies answers
        {
          "pattern": "capital of",     # regex, searched case-insensitively in the
                                       # "content" of all request messages joined by
                                       # newlines; absent = matches every request
          "model": "gpt-test",         # exact request model; absent = any model
          "response_format": "json_schema",  # the request's response_format.type
                                       # ("text" also matches a request without a
                                       # response_format); absent = any format
          "times": 2,                  # answers only its first 2 matching requests,
                                       # later ones fall through to the next rules
          "delay_s": 0.3,              # sleep before answering (asyncio.sleep)
          # ... and exactly one action:
          "content": "Paris"           # the assistant message content, sent as is
                                       # (it may be invalid JSON on purpose)
          # or "tool_calls": [{"name": "get_labs", "arguments": {"mrn": "1"}, "id": "call_1"}]
          #      the assistant asks for tools: content null, these calls (arguments sent
          #      as a JSON string; id optional, "call_N" by default), finish_reason
          #      "tool_calls"
          # or "json": {"verdict": "yes"}   serialised with json.dumps as the content;
          #      a field written {"each": ITEM} becomes one ITEM per item the request's
          #      response_format schema asks for, numbered in "id" (as the scripted judge)
          # or "status": 429, "retry_after": 2, "error_message": "slow down"
          #      an HTTP error with an OpenAI-style body {"error": {"message", "type",
          #      "code"}}; retry_after (seconds) sets the Retry-After header
          # or "malformed_body": true
          #      HTTP 200, Content-Type application/json, a body that is not valid JSON
          # or "truncated_body": true
          #      HTTP 200 announcing a whole ChatCompletion (Content-Length) but sending
          #      only its first half, then closing the connection: a proxy or server
          #      that died mid-answer
          # or "reset": true
          #      the connection is closed (reset where the platform allows) without any
          #      answer: no status line, no headers
        }
      ],
      "default": {"content": "no opinion"},  # when no rule applies: an action, with an
                                             # optional delay_s; without a default such
                                             # requests get HTTP 400 "no scripted answer"
      "delay_s": 0.05                        # added to every chat answer; when absent the
                                             # server's base delay (--delay) applies
    }

Unknown keys are refused, so that a misspelt field fails loudly instead of being ignored.
The ``times`` counters start again whenever a script is set. A request answered by
``truncated_body`` or ``reset`` is logged and counted like any other; these two actions
write to (or close) the connection directly, which works under uvicorn (the server run by
``python -m clineval.testing.server`` and :class:`ScriptedServer`); under another ASGI
server they answer HTTP 500.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import itertools
import json
import math
import os
import queue
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from clineval.judges.base import JudgeError
from clineval.judges.scripted import expand_each
from clineval.testing.process import HOST, OPENER, ChildServer

try:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "clineval.testing.server needs starlette and uvicorn, which come with the test "
        "extra: pip install 'clineval[test]'"
    ) from exc

__all__ = ["ScriptError", "ScriptedServer", "compile_script", "create_app", "main"]

DEFAULT_MODEL = "scripted-model"

_ACTION_KEYS = frozenset(
    {"content", "json", "tool_calls", "status", "malformed_body", "truncated_body", "reset"}
)
_STATUS_KEYS = frozenset({"retry_after", "error_message"})
_DEFAULT_KEYS = _ACTION_KEYS | _STATUS_KEYS | {"delay_s"}
_RULE_KEYS = _DEFAULT_KEYS | {"pattern", "model", "response_format", "times"}
_SCRIPT_KEYS = frozenset({"rules", "default", "delay_s"})

# A truncated ChatCompletion: what a proxy that cuts a response short would deliver.
_MALFORMED_BODY = b'{"id": "chatcmpl-malformed", "object": "chat.completion", "choices": [{"ind'

# (type, code) of the OpenAI-style error body, by status.
_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "not_found"),
    408: ("timeout", None),
    409: ("conflict", None),
    422: ("invalid_request_error", None),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
}


class ScriptError(ValueError):
    """A script that cannot be used; the message says why."""


# --------------------------------------------------------------------------- script


@dataclass(frozen=True, slots=True)
class _Action:
    content: str | None = None
    data: Any = None
    """The ``json`` action's value, for fields written ``{"each": ITEM}`` (expanded per request)."""
    status: int | None = None
    retry_after: str | None = None
    error_message: str | None = None
    malformed_body: bool = False
    truncated_body: bool = False
    reset: bool = False
    tool_calls: list[dict[str, Any]] | None = None
    """OpenAI ``tool_calls`` of the assistant message (``type``/``function`` form)."""
    delay_s: float = 0.0


@dataclass(slots=True)
class _Rule:
    regex: re.Pattern[str] | None
    model: str | None
    times: int | None
    action: _Action
    response_format: str | None = None
    used: int = 0


@dataclass(frozen=True, slots=True)
class _Script:
    rules: tuple[_Rule, ...] = ()
    default: _Action | None = None
    delay_s: float | None = None

    @property
    def models(self) -> list[str]:
        return sorted({rule.model for rule in self.rules if rule.model is not None})


_NO_SCRIPTED_ANSWER = _Action(status=400, error_message="no scripted answer for this request")


def _number(value: object, where: str, *, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScriptError(f"{where} must be a number, not {value!r}")
    if not math.isfinite(value) or value < minimum:
        raise ScriptError(f"{where} must be a finite number >= {minimum:g}, not {value!r}")
    return float(value)


def _optional_str(spec: Mapping[str, Any], key: str, where: str) -> str | None:
    value = spec.get(key)
    if value is not None and not isinstance(value, str):
        raise ScriptError(f"{where}.{key} must be a string, not {value!r}")
    return value


def _compile_action(spec: Mapping[str, Any], where: str, allowed: frozenset[str]) -> _Action:
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
    actions = sorted(_ACTION_KEYS & set(spec))
    if len(actions) != 1:
        raise ScriptError(
            f"{where} needs exactly one of content, json, tool_calls, status, malformed_body, "
            "truncated_body, reset; "
            f"got {actions}"
        )
    delay_s = _number(spec.get("delay_s", 0.0), f"{where}.delay_s")
    if actions != ["status"] and _STATUS_KEYS & set(spec):
        raise ScriptError(f"{where}: retry_after and error_message only go with status")
    kind = actions[0]
    if kind == "content":
        content = spec["content"]
        if not isinstance(content, str):
            raise ScriptError(f"{where}.content must be a string (use json for objects)")
        return _Action(content=content, delay_s=delay_s)
    if kind == "json":
        try:
            return _Action(content=json.dumps(spec["json"]), data=spec["json"], delay_s=delay_s)
        except (TypeError, ValueError) as exc:
            raise ScriptError(f"{where}.json cannot be serialised: {exc}") from None
    if kind == "tool_calls":
        return _Action(
            tool_calls=_compile_tool_calls(spec["tool_calls"], f"{where}.tool_calls"), delay_s=delay_s
        )
    if kind in ("malformed_body", "truncated_body", "reset"):
        if spec[kind] is not True:
            raise ScriptError(f"{where}.{kind} must be true")
        return _Action(
            malformed_body=kind == "malformed_body",
            truncated_body=kind == "truncated_body",
            reset=kind == "reset",
            delay_s=delay_s,
        )
    status = spec["status"]
    if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
        raise ScriptError(f"{where}.status must be an HTTP error status (400-599), not {status!r}")
    retry_after: str | None = None
    if spec.get("retry_after") is not None:
        retry_after = f"{_number(spec['retry_after'], f'{where}.retry_after'):g}"
    return _Action(
        status=status,
        retry_after=retry_after,
        error_message=_optional_str(spec, "error_message", where),
        delay_s=delay_s,
    )


def _compile_tool_calls(value: object, where: str) -> list[dict[str, Any]]:
    """``[{name, arguments, id?}]`` as OpenAI ``tool_calls`` (arguments a JSON string)."""
    if not isinstance(value, list) or not value:
        raise ScriptError(f"{where} must be a non-empty list of {{name, arguments, id}} objects")
    calls: list[dict[str, Any]] = []
    for n, item in enumerate(value, start=1):
        at = f"{where}[{n - 1}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str) or not item["name"]:
            raise ScriptError(f"{at} must be an object with a non-empty string 'name'")
        unknown = sorted(set(item) - {"name", "arguments", "id"})
        if unknown:
            raise ScriptError(f"{at}: unknown key(s) {unknown}; allowed: ['arguments', 'id', 'name']")
        arguments = item.get("arguments", {})
        call_id = item.get("id", f"call_{n}")
        if not isinstance(call_id, str):
            raise ScriptError(f"{at}.id must be a string")
        try:
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        except (TypeError, ValueError) as exc:
            raise ScriptError(f"{at}.arguments cannot be serialised: {exc}") from None
        calls.append(
            {"id": call_id, "type": "function", "function": {"name": item["name"], "arguments": text}}
        )
    return calls


def _has_each(data: Mapping[str, Any]) -> bool:
    return any(isinstance(v, Mapping) and set(v) == {"each"} for v in data.values())


def _request_schema(body: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON schema a request asks its answer to follow (``{}`` when it names none)."""
    response_format = body.get("response_format")
    if not isinstance(response_format, Mapping):
        return {}
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else response_format.get("schema")
    return dict(schema) if isinstance(schema, Mapping) else {}


def compile_script(script: Mapping[str, Any]) -> _Script:
    """Check a script and precompile it; raises :class:`ScriptError` if it is invalid."""
    if not isinstance(script, Mapping):
        raise ScriptError(f"a script must be a JSON object, not {type(script).__name__}")
    unknown = sorted(set(script) - _SCRIPT_KEYS)
    if unknown:
        raise ScriptError(f"script: unknown key(s) {unknown}; allowed: {sorted(_SCRIPT_KEYS)}")
    specs = script.get("rules") or []
    if not isinstance(specs, list):
        raise ScriptError("script.rules must be a list")
    rules: list[_Rule] = []
    for index, spec in enumerate(specs):
        where = f"rules[{index}]"
        if not isinstance(spec, Mapping):
            raise ScriptError(f"{where} must be an object")
        pattern = _optional_str(spec, "pattern", where)
        try:
            regex = re.compile(pattern, re.IGNORECASE) if pattern is not None else None
        except re.error as exc:
            raise ScriptError(f"{where}.pattern is not a valid regex: {exc}") from None
        times = spec.get("times")
        if times is not None and (isinstance(times, bool) or not isinstance(times, int)):
            raise ScriptError(f"{where}.times must be an integer, not {times!r}")
        if times is not None and times < 1:
            raise ScriptError(f"{where}.times must be at least 1")
        action = _compile_action(spec, where, _RULE_KEYS)
        response_format = _optional_str(spec, "response_format", where)
        rules.append(_Rule(regex, _optional_str(spec, "model", where), times, action, response_format))
    default: _Action | None = None
    if script.get("default") is not None:
        if not isinstance(script["default"], Mapping):
            raise ScriptError("script.default must be an object")
        default = _compile_action(script["default"], "default", _DEFAULT_KEYS)
    delay_s = None
    if script.get("delay_s") is not None:
        delay_s = _number(script["delay_s"], "script.delay_s")
    return _Script(tuple(rules), default, delay_s)


# --------------------------------------------------------------------------- app


def _prompt_text(body: Mapping[str, Any]) -> str:
    """The ``content`` of all messages, joined by newlines (text parts of lists too)."""
    parts: list[str] = []
    messages = body.get("messages")
    if isinstance(messages, list):
        for message in messages:
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(
                    part["text"]
                    for part in content
                    if isinstance(part, dict) and isinstance(part.get("text"), str)
                )
    return "\n".join(parts)


def _format_type(body: Mapping[str, Any]) -> str:
    """The request's ``response_format.type``; ``text`` when it asks for no format."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") is not None:
        return str(response_format["type"])
    return "text"


def _error(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    kind, code = _ERROR_KINDS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    body = {"error": {"message": message, "type": kind, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


class _ServerState:
    """Everything the app keeps between requests. Only touched from the event loop."""

    def __init__(self, script: _Script, base_delay_s: float) -> None:
        self.script = script
        self.base_delay_s = base_delay_s
        self.log: list[dict[str, Any]] = []
        self.chat_requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.ids = itertools.count(1)

    def reset(self) -> None:
        self.script = _Script()
        self.log = []
        self.chat_requests = 0
        self.max_in_flight = self.in_flight

    def choose(self, prompt: str, model: str, response_format: str = "text") -> _Action:
        for rule in self.script.rules:
            if rule.times is not None and rule.used >= rule.times:
                continue
            if rule.model is not None and rule.model != model:
                continue
            if rule.response_format is not None and rule.response_format != response_format:
                continue
            if rule.regex is not None and rule.regex.search(prompt) is None:
                continue
            rule.used += 1
            return rule.action
        return self.script.default or _NO_SCRIPTED_ANSWER

    @property
    def delay_s(self) -> float:
        delay = self.script.delay_s
        return self.base_delay_s if delay is None else delay


async def _cut(request: Request, data: bytes) -> Response:
    """Write ``data`` straight to the connection and close it: a reset (no ``data``) or a body
    cut short. Uses uvicorn's transport (its ``receive`` is a method of the request cycle)."""
    cycle: Any = getattr(request.receive, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is None or not hasattr(cycle, "disconnected"):
        return _error(500, "truncated_body and reset need the uvicorn server")
    if data:
        transport.write(data)
        transport.close()  # sends what was written, then closes
    else:
        sock = transport.get_extra_info("socket")
        with contextlib.suppress(OSError, AttributeError, TypeError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST
        transport.abort()
    for _ in range(1000):  # until uvicorn has seen the connection go: it then sends nothing more
        if cycle.disconnected:
            break
        await asyncio.sleep(0.001)
    return Response(b"", status_code=200)


def create_app(script: Mapping[str, Any] | None = None, *, delay_s: float = 0.0) -> Starlette:
    """The ASGI app; ``delay_s`` is the base delay used when the script sets none."""
    state = _ServerState(compile_script(script or {}), delay_s)

    async def chat_completions(request: Request) -> Response:
        state.chat_requests += 1
        state.in_flight += 1
        if state.in_flight > state.max_in_flight:
            state.max_in_flight = state.in_flight
        try:
            return await _answer(request)
        finally:
            state.in_flight -= 1

    async def _answer(request: Request) -> Response:
        auth = "api-key" if "api-key" in request.headers else None
        if request.headers.get("authorization", "").lower().startswith("bearer "):
            auth = auth or "bearer"
        entry: dict[str, Any] = {
            "path": request.scope["path"],
            "query": dict(request.query_params),
            "auth": auth,
            "body": None,
        }
        entry["timestamp"] = time.time()
        state.log.append(entry)
        if "deployment" in request.path_params and not request.query_params.get("api-version"):
            return _error(404, "Resource not found (the Azure OpenAI route needs ?api-version=...)")
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(400, "the request body is not valid JSON")
        entry["body"] = body
        if not isinstance(body, dict):
            return _error(400, "the request body must be a JSON object")
        if body.get("stream"):
            return _error(400, "streaming is not supported by the scripted server")
        model = body.get("model") or request.path_params.get("deployment") or DEFAULT_MODEL
        prompt = _prompt_text(body)
        action = state.choose(prompt, str(model), _format_type(body))
        delay = state.delay_s + action.delay_s
        if delay > 0:
            await asyncio.sleep(delay)
        if action.status is not None:
            headers = {"retry-after": action.retry_after} if action.retry_after else None
            message = action.error_message or f"scripted error (HTTP {action.status})"
            return _error(action.status, message, headers)
        if action.malformed_body:
            return Response(_MALFORMED_BODY, media_type="application/json")
        if action.reset:
            return await _cut(request, b"")
        content = action.content or ""
        if isinstance(action.data, dict) and _has_each(action.data):
            try:
                content = json.dumps(expand_each(action.data, _request_schema(body)))
            except JudgeError as exc:
                return _error(400, str(exc))
        answer: dict[str, Any] = {"role": "assistant", "content": content}
        if action.tool_calls is not None:
            answer = {"role": "assistant", "content": None, "tool_calls": action.tool_calls}
        counted = content if action.tool_calls is None else json.dumps(action.tool_calls)
        prompt_tokens = len(prompt.split())
        completion_tokens = len(counted.split())
        completion = {
            "id": f"chatcmpl-scripted-{next(state.ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": answer,
                    "finish_reason": "tool_calls" if action.tool_calls is not None else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        if action.truncated_body:
            body_bytes = json.dumps(completion).encode()
            head = (
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body_bytes)}\r\n\r\n"
            ).encode()
            return await _cut(request, head + body_bytes[: len(body_bytes) // 2])
        return JSONResponse(completion)

    async def models(request: Request) -> Response:
        ids = [DEFAULT_MODEL, *(m for m in state.script.models if m != DEFAULT_MODEL)]
        data = [{"id": i, "object": "model", "created": 0, "owned_by": "clineval"} for i in ids]
        return JSONResponse({"object": "list", "data": data})

    async def admin_script(request: Request) -> Response:
        try:
            spec = json.loads(await request.body())
            state.script = compile_script(spec)
        except ValueError as exc:  # ScriptError and json.JSONDecodeError
            return _error(400, f"invalid script: {exc}")
        return JSONResponse({"ok": True, "rules": len(state.script.rules)})

    async def admin_reset(request: Request) -> Response:
        state.reset()
        return JSONResponse({"ok": True})

    async def admin_requests(request: Request) -> Response:
        return JSONResponse(state.log)

    async def admin_stats(request: Request) -> Response:
        return JSONResponse(
            {
                "chat_requests": state.chat_requests,
                "in_flight": state.in_flight,
                "max_in_flight": state.max_in_flight,
            }
        )

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        return _error(status, f"{request.method} {request.url.path}: {exc}")

    post = ["POST"]
    routes = [
        Route("/v1/chat/completions", chat_completions, methods=post),
        Route("/chat/completions", chat_completions, methods=post),
        Route("/openai/deployments/{deployment}/chat/completions", chat_completions, methods=post),
        Route("/v1/models", models, methods=["GET"]),
        Route("/models", models, methods=["GET"]),
        Route("/_admin/script", admin_script, methods=post),
        Route("/_admin/reset", admin_reset, methods=post),
        Route("/_admin/requests", admin_requests, methods=["GET"]),
        Route("/_admin/stats", admin_stats, methods=["GET"]),
    ]
    return Starlette(routes=routes, exception_handlers={404: http_error, 405: http_error})


# --------------------------------------------------------------------------- process


class _ReadyServer(uvicorn.Server):
    """Prints ``READY <port>`` once the socket is listening."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and not self.should_exit:
            port = self.servers[0].sockets[0].getsockname()[1]
            print(f"READY {port}", flush=True)


def _exit_on_stdin_eof(server: uvicorn.Server) -> None:
    sys.stdin.buffer.read()  # returns at end of file: the parent closed the pipe or died
    server.should_exit = True


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m clineval.testing.server",
        description="Scripted OpenAI-compatible chat completions server, for tests.",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds added to every answer (base delay)")
    parser.add_argument("--script", type=Path, help="JSON file with the initial script")
    parser.add_argument(
        "--watch-stdin",
        action="store_true",
        help="exit when standard input closes (ScriptedServer uses it so that a server "
        "never outlives its test process)",
    )
    args = parser.parse_args(argv)
    script: dict[str, Any] = {}
    if args.script is not None:
        script = json.loads(args.script.read_text(encoding="utf-8"))
    try:
        app = create_app(script, delay_s=args.delay)
    except ScriptError as exc:
        parser.error(f"{args.script}: {exc}")
    config = uvicorn.Config(
        app,
        host=HOST,
        port=args.port,
        # The C parser and loop when installed (the `test` extra has them): the server's own
        # cost per request then stays far below the client's under test.
        loop="uvloop" if _installed("uvloop") else "asyncio",
        http="httptools" if _installed("httptools") else "h11",
        lifespan="off",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    server = _ReadyServer(config)
    if args.watch_stdin:
        threading.Thread(target=_exit_on_stdin_eof, args=(server,), daemon=True).start()
    server.run()


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# --------------------------------------------------------------------------- client side


class ScriptedServer(ChildServer):
    """Runs the scripted server in a child process and talks to its admin endpoints.

    ``script`` is set once the server is up; ``delay_s`` is the base delay, kept by
    :meth:`reset` and used whenever the current script has no ``delay_s`` of its own.
    """

    label = "the scripted server"

    def __init__(
        self, script: Mapping[str, Any] | None = None, *, port: int = 0, delay_s: float = 0.0
    ) -> None:
        super().__init__()
        if script is not None:
            compile_script(script)  # fail here, not in the child
        self._script = dict(script) if script is not None else None
        self._requested_port = port
        self._delay_s = delay_s

    # ---- lifecycle

    def start(self, timeout_s: float = 20.0) -> ScriptedServer:
        """Start the child process and wait (at most ``timeout_s``) until it listens."""
        command = [
            sys.executable,
            "-m",
            "clineval.testing.server",
            "--port",
            str(self._requested_port),
            "--delay",
            repr(self._delay_s),
            "--watch-stdin",
        ]
        # stdout (a pipe) reports READY; stderr goes to a file (ChildServer.output_tail).
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        process = self._spawn(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        lines: queue.Queue[bytes] = queue.Queue()
        assert process.stdout is not None
        stdout = process.stdout
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=timeout_s)
        except queue.Empty:
            self._fail(f"did not report READY within {timeout_s:g} s")
        words = line.decode(errors="replace").split()
        if len(words) != 2 or words[0] != "READY" or not words[1].isdigit():
            self._fail(f"did not start (first line of output: {line!r})")
        self.port = int(words[1])
        if self._script is not None:
            self.set_script(self._script)
        return self

    def _fail(self, reason: str) -> NoReturn:
        stderr = self.output_tail(wait_s=1.0)  # let a failing child finish its traceback
        self.stop()
        raise RuntimeError(f"{self.label} {reason}; its stderr:\n{stderr}")

    # ---- addresses

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:PORT``, e.g. the ``azure_endpoint`` for Azure clients."""
        if self.port is None:
            raise RuntimeError("the scripted server is not running; call start() first")
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, the ``base_url`` for OpenAI clients."""
        return f"{self.root_url}/v1"

    # ---- admin

    def _admin(self, method: str, path: str, payload: object = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(
            self.root_url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with OPENER.open(request, timeout=10.0) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")
            with contextlib.suppress(ValueError, KeyError, TypeError):
                detail = json.loads(detail)["error"]["message"]
            if exc.code == 400:
                raise ScriptError(detail) from None
            raise RuntimeError(f"{method} {path}: HTTP {exc.code}: {detail}") from None

    def set_script(self, script: Mapping[str, Any]) -> None:
        """Replace the script (rules, default, delay); raises ScriptError if invalid."""
        self._admin("POST", "/_admin/script", dict(script))

    def reset(self) -> None:
        """Clear the script, the request log and the counters (the base delay stays)."""
        self._admin("POST", "/_admin/reset", {})

    def requests(self) -> list[dict[str, Any]]:
        """The chat requests received so far: ``{"path", "query", "auth", "body", "timestamp"}`` each."""
        result: list[dict[str, Any]] = self._admin("GET", "/_admin/requests")
        return result

    def stats(self) -> dict[str, int]:
        """``{"chat_requests", "in_flight", "max_in_flight"}``."""
        result: dict[str, int] = self._admin("GET", "/_admin/stats")
        return result


if __name__ == "__main__":
    main()
