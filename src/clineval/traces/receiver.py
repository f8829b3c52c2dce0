"""The OTLP/HTTP trace receiver behind ``clineval collect``: ``POST /v1/traces``.

Any OpenTelemetry exporter that speaks OTLP/HTTP can point at it (the SDKs' default,
protobuf, and OTLP JSON). A request is handled in this order:

1. with a token set, ``Authorization: Bearer TOKEN`` is required (else **401**);
2. ``Content-Type`` must be ``application/x-protobuf`` or ``application/json`` (else
   **415**), ``Content-Encoding`` ``gzip`` or none (else **415**);
3. the body, read as it arrives, may hold at most ``max_bytes`` bytes, and so may its
   gzip-decompressed content (else **413**);
4. it is decoded by :mod:`clineval.traces.otlp` (a malformed body: **400**, with the
   one-line reason as a ``google.rpc.Status`` in the request's encoding, as OTLP/HTTP
   asks);
5. with a redactor (:mod:`clineval.traces.redact`), every span is redacted; a redaction hook
   that fails is **500** with its one-line reason, and nothing of the request is stored;
6. its spans are stored (:class:`~clineval.store.traces.TraceStore`), committed before the
   answer: an ``ExportTraceServiceResponse`` in the request's encoding. A bad request stores
   nothing and changes nothing already stored.

Decoding and writing run on worker threads, so the event loop keeps accepting requests.
"""

from __future__ import annotations

import hmac
import json
import threading
import zlib
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from clineval.errors import ClinevalError
from clineval.store.traces import AddResult, TraceStore
from clineval.traces.otlp import JSON, PROTOBUF, decode_json, decode_protobuf, encode_response
from clineval.traces.redact import RedactionError, SpanRedactor

__all__ = ["DEFAULT_MAX_BYTES", "TRACES_PATH", "Counters", "create_receiver"]

TRACES_PATH = "/v1/traces"
#: Largest request body accepted, before and after gzip (the OpenTelemetry Collector's
#: OTLP/HTTP receiver also defaults to 20 MiB).
DEFAULT_MAX_BYTES = 20 * 1024 * 1024

# google.rpc.Code values OTLP/HTTP error bodies use
_INVALID_ARGUMENT = 3
_UNAUTHENTICATED = 16
_RESOURCE_EXHAUSTED = 8
_UNAVAILABLE = 14
_INTERNAL = 13


@dataclass
class Totals:
    requests: int = 0
    received: int = 0
    stored: int = 0
    rejected: int = 0
    """Requests refused (401, 413, 415, 400)."""
    last_error: str = ""

    @property
    def duplicates(self) -> int:
        return self.received - self.stored

    def describe(self) -> str:
        text = (
            f"{self.requests:,} requests · {self.received:,} spans received · {self.stored:,} stored · "
            f"{self.duplicates:,} duplicates"
        )
        if self.rejected:
            text += f" · {self.rejected:,} requests refused (last: {self.last_error})"
        return text


class Counters:
    """What the receiver has done so far; read from another thread (the progress line)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals = Totals()

    def added(self, result: AddResult) -> None:
        with self._lock:
            self._totals.requests += 1
            self._totals.received += result.received
            self._totals.stored += result.stored

    def refused(self, reason: str) -> None:
        with self._lock:
            self._totals.requests += 1
            self._totals.rejected += 1
            self._totals.last_error = reason

    def snapshot(self) -> Totals:
        with self._lock:
            t = self._totals
            return Totals(t.requests, t.received, t.stored, t.rejected, t.last_error)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _status_body(code: int, message: str, as_json: bool) -> tuple[bytes, str]:
    """A ``google.rpc.Status`` (code, message): the body OTLP/HTTP gives 4xx answers. Its two
    fields are encoded here (``code``: field 1, varint; ``message``: field 2, bytes) rather than
    adding googleapis-common-protos for one message."""
    if as_json:
        return json.dumps({"code": code, "message": message}).encode("utf-8"), JSON
    text = message.encode("utf-8")
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text, PROTOBUF


class _Refusal(Exception):
    def __init__(self, status: int, code: int, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


async def _read_body(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise _Refusal(413, _RESOURCE_EXHAUSTED, f"payload of {int(declared):,} bytes exceeds {max_bytes:,}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise _Refusal(413, _RESOURCE_EXHAUSTED, f"payload exceeds {max_bytes:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _gunzip(body: bytes, max_bytes: int) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, max_bytes + 1)
    except zlib.error as exc:
        raise _Refusal(400, _INVALID_ARGUMENT, f"Content-Encoding gzip: not gzip data ({exc})") from None
    if len(data) > max_bytes or inflater.unconsumed_tail:
        raise _Refusal(413, _RESOURCE_EXHAUSTED, f"payload exceeds {max_bytes:,} bytes once decompressed")
    if not inflater.eof:
        raise _Refusal(400, _INVALID_ARGUMENT, "Content-Encoding gzip: the gzip data is truncated")
    return data


def create_receiver(
    traces: TraceStore,
    *,
    token: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    counters: Counters | None = None,
    redactor: SpanRedactor | None = None,
) -> Starlette:
    """The receiver app, storing into ``traces`` (each span through ``redactor`` first, when
    given); ``counters`` (made if not given) is ``app.state.counters``."""
    tally = counters or Counters()
    expected = f"Bearer {token}".encode() if token else None

    def refuse(refusal: _Refusal, as_json: bool) -> Response:
        tally.refused(f"{refusal.status} {refusal.message}")
        body, media_type = _status_body(refusal.code, refusal.message, as_json)
        headers = {"WWW-Authenticate": "Bearer"} if refusal.status == 401 else None
        return Response(body, status_code=refusal.status, media_type=media_type, headers=headers)

    async def export(request: Request) -> Response:
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        as_json = media_type == JSON
        try:
            if expected is not None:
                given = request.headers.get("authorization", "").encode("utf-8", "replace")
                if not hmac.compare_digest(given, expected):
                    raise _Refusal(401, _UNAUTHENTICATED, "a valid 'Authorization: Bearer TOKEN' is required")
            if media_type not in (JSON, PROTOBUF):
                tally.refused(f"415 Content-Type {media_type or 'missing'}")
                return Response(
                    f"Content-Type must be {PROTOBUF} or {JSON}, not {media_type or 'missing'}\n",
                    status_code=415,
                    media_type="text/plain",
                )
            encoding = request.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("gzip", "identity", ""):
                tally.refused(f"415 Content-Encoding {encoding}")
                return Response(
                    f"Content-Encoding must be gzip or none, not {encoding}\n",
                    status_code=415,
                    media_type="text/plain",
                )
            try:
                body = await _read_body(request, max_bytes)
            except ClientDisconnect:
                return Response(status_code=400)
            if encoding == "gzip":
                body = await run_in_threadpool(_gunzip, body, max_bytes)
            decode = decode_json if as_json else decode_protobuf
            try:
                spans = await run_in_threadpool(decode, body, source="otlp-http")
            except ClinevalError as exc:
                raise _Refusal(400, _INVALID_ARGUMENT, str(exc)) from None
            if redactor is not None:
                try:
                    spans = await run_in_threadpool(redactor.spans, spans)
                except RedactionError as exc:  # never store a span the redactor has not seen through
                    raise _Refusal(500, _INTERNAL, str(exc)) from None
        except _Refusal as refusal:
            return refuse(refusal, as_json)
        try:
            result = await run_in_threadpool(traces.add, spans)
        except ClinevalError as exc:  # the store cannot be written (disk full, ...): the exporter retries
            return refuse(_Refusal(503, _UNAVAILABLE, str(exc)), as_json)
        tally.added(result)
        return Response(encode_response(as_json=as_json), media_type=JSON if as_json else PROTOBUF)

    app = Starlette(routes=[Route(TRACES_PATH, export, methods=["POST"])])
    app.state.counters = tally
    return app
