"""Bounded retries and adaptive concurrency for calls to remote services.

Used by the judge backends and by the runner when it calls the agent under test.

* :class:`AdaptiveLimiter` caps the number of calls in flight. When a server answers
  "429 Too Many Requests" it halves the cap (once per burst: calls that started before
  the last cut do not cut again) and, if the server sent ``Retry-After``, holds every
  new call until that time. After a run of successes it raises the cap by one again,
  up to the configured maximum (additive increase, multiplicative decrease).
* :func:`call_with_retries` makes at most ``max_attempts`` attempts with a timeout each,
  sleeping between attempts with exponential backoff and full jitter, or for the time the
  server asked for in ``Retry-After`` / ``retry-after-ms``. A server asking for more than
  ``max_retry_after_s`` gets no retry (the call fails at once) and pauses nobody, so a
  ``Retry-After: 3600`` cannot stall a run. It never loops forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

R = TypeVar("R")
Failure = Literal["rate_limit", "transient", "fatal"]


class RetryPolicy(BaseModel):
    """How hard to try one remote call."""

    model_config = ConfigDict(extra="forbid")

    max_attempts: int = Field(default=4, ge=1, le=20)
    timeout_s: float = Field(default=60.0, gt=0)
    initial_backoff_s: float = Field(default=0.5, ge=0)
    max_backoff_s: float = Field(default=30.0, ge=0)
    max_retry_after_s: float | None = Field(default=None, ge=0)
    """The longest wait a server may ask for (``Retry-After``); ``None``: ``max_backoff_s``.
    A call whose server asks for a longer wait is not retried (see :func:`gives_up`)."""

    @property
    def retry_after_cap_s(self) -> float:
        return self.max_backoff_s if self.max_retry_after_s is None else self.max_retry_after_s


def retry_after_seconds(exc: BaseException) -> float | None:
    """The delay a server asked for in ``retry-after-ms`` or ``Retry-After``, if any."""
    headers = getattr(exc, "headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def asks_too_long(policy: RetryPolicy, exc: BaseException) -> float | None:
    """The wait the server asked for, when it is longer than the policy allows; else ``None``.

    Waiting longer would stall the whole run (a ``Retry-After: 3600`` is an hour), and
    retrying sooner than asked is pointless, so such a call is not retried."""
    asked = retry_after_seconds(exc)
    if asked is not None and asked > policy.retry_after_cap_s:
        return asked
    return None


def classify_failure(exc: BaseException) -> Failure:
    """Default classification: timeouts and connection errors, 408, 409, 429 and 5xx are worth a retry."""
    if isinstance(exc, TimeoutError | ConnectionError):
        return "transient"
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        if status == 429:
            return "rate_limit"
        if status in (408, 409) or status >= 500:
            return "transient"
    return "fatal"


@dataclass
class Slot:
    """A permit to make one call; tell it when the server rate-limited the call."""

    limiter: AdaptiveLimiter
    epoch: int

    def rate_limited(self, retry_after: float | None) -> None:
        self.limiter._on_rate_limit(self.epoch, retry_after)

    def succeeded(self) -> None:
        self.limiter._on_success()


class AdaptiveLimiter:
    """A concurrency cap that backs off when the server rate-limits, and recovers."""

    def __init__(self, max_concurrency: int, *, min_concurrency: int = 1):
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.max_concurrency = max_concurrency
        self.min_concurrency = max(1, min(min_concurrency, max_concurrency))
        self.limit = max_concurrency
        self.in_flight = 0
        self.rate_limited_count = 0
        self.lowest_limit = max_concurrency
        self._epoch = 0
        self._successes = 0
        self._paused_until = 0.0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def _acquire(self) -> None:
        while True:
            if self._paused_until:  # 0.0 until the first Retry-After: no clock read per call
                pause = self._paused_until - time.monotonic()
                if pause > 0:
                    await asyncio.sleep(pause)
                    continue
            if self.in_flight < self.limit and not self._waiters:
                self.in_flight += 1
                return
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter  # a release hands over its place (in_flight already counts us)
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._release()
                else:
                    with contextlib.suppress(ValueError):
                        self._waiters.remove(waiter)
                raise
            if self._paused_until > time.monotonic():
                self._release()  # a pause began while we waited: give the place back and wait
                continue
            return

    def _release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        await self._acquire()
        try:
            yield Slot(self, self._epoch)
        finally:
            self._release()

    def _on_success(self) -> None:
        self._successes += 1
        if self.limit < self.max_concurrency and self._successes >= self.limit:
            self.limit += 1
            self._successes = 0
            self._wake()

    def _on_rate_limit(self, epoch: int, retry_after: float | None) -> None:
        self.rate_limited_count += 1
        if retry_after:
            self._paused_until = max(self._paused_until, time.monotonic() + retry_after)
        if epoch == self._epoch:
            self.limit = max(self.min_concurrency, self.limit // 2)
            self.lowest_limit = min(self.lowest_limit, self.limit)
            self._epoch += 1
            self._successes = 0


def backoff_s(policy: RetryPolicy, failures: int, exc: BaseException | None) -> float:
    """Seconds to wait after the ``failures``-th failed attempt.

    The server's ``Retry-After`` when it sent one (capped at ``max_retry_after_s``), otherwise
    exponential backoff with full jitter: uniform in [0, initial x 2^(failures-1)], capped.
    """
    asked = retry_after_seconds(exc) if exc is not None else None
    if asked is not None:
        return min(asked, policy.retry_after_cap_s)
    ceiling = min(policy.max_backoff_s, policy.initial_backoff_s * 2 ** (failures - 1))
    return random.uniform(0, ceiling)


class CallTimedOut(TimeoutError):
    """An attempt took longer than the policy's ``timeout_s`` (not a timeout raised by the call)."""

    def __init__(self, timeout_s: float):
        super().__init__(f"no answer within {timeout_s:g} s")
        self.timeout_s = timeout_s


async def _timed(call: Callable[[], Awaitable[R]], timeout_s: float) -> R:
    deadline = asyncio.timeout(timeout_s)
    try:
        async with deadline:
            return await call()
    except TimeoutError:
        if deadline.expired():
            raise CallTimedOut(timeout_s) from None
        raise


async def _attempt(
    call: Callable[[], Awaitable[R]],
    policy: RetryPolicy,
    limiter: AdaptiveLimiter | None,
    classify: Callable[[BaseException], Failure],
    pace: Callable[[], Awaitable[None]] | None = None,
) -> R:
    if limiter is None:
        if pace is not None:
            await pace()
        return await _timed(call, policy.timeout_s)
    # limiter.slot() spelled out: no context-manager generator and Slot object per call
    await limiter._acquire()
    epoch = limiter._epoch
    try:
        if pace is not None:
            await pace()  # inside the slot (the request starts when paced), outside the timeout
        try:
            result = await _timed(call, policy.timeout_s)
        except Exception as exc:
            if classify(exc) == "rate_limit":
                # Pause new calls for the time asked, unless it is beyond the cap: then this
                # call gives up (it is not retried) and no pause holds the others.
                asked = retry_after_seconds(exc)
                limiter._on_rate_limit(
                    epoch, asked if asked is not None and asked <= policy.retry_after_cap_s else None
                )
            raise
        limiter._on_success()
        return result
    finally:
        limiter._release()


async def call_with_retries(
    call: Callable[[], Awaitable[R]],
    *,
    policy: RetryPolicy,
    limiter: AdaptiveLimiter | None = None,
    classify: Callable[[BaseException], Failure] = classify_failure,
    on_retry: Callable[[BaseException, int], Any] | None = None,
    pace: Callable[[], Awaitable[None]] | None = None,
) -> R:
    """Run ``call`` with a timeout per attempt and bounded retries; re-raise the last error.

    ``pace``, when given, is awaited before every attempt (retries included), once the
    attempt holds its concurrency slot and before its timeout starts: a rate budget
    (:mod:`clineval.judges.budget`) waits there without eating into ``timeout_s``.

    The first attempt runs directly; only after a retryable failure does the retry
    machinery (tenacity) take over, since it costs more CPU per call than the rest of a
    judge call's bookkeeping and most calls succeed at once. A failure is retryable when
    ``classify`` does not call it fatal and the server did not ask for a wait beyond
    the policy's ``max_retry_after_s``.
    """

    def retryable(exc: BaseException) -> bool:
        return classify(exc) != "fatal" and asks_too_long(policy, exc) is None

    try:
        return await _attempt(call, policy, limiter, classify, pace)
    except Exception as exc:
        if policy.max_attempts <= 1 or not retryable(exc):
            raise
        first = exc
    if on_retry is not None:
        on_retry(first, 1)
    await asyncio.sleep(backoff_s(policy, 1, first))

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        return backoff_s(policy, state.attempt_number + 1, exc)

    def before_sleep(state: RetryCallState) -> None:
        if on_retry is not None and state.outcome is not None:
            exc = state.outcome.exception()
            if exc is not None:
                on_retry(exc, state.attempt_number + 1)

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts - 1),
        wait=wait,
        retry=retry_if_exception(retryable),
        reraise=True,
        before_sleep=before_sleep,
    )
    async for attempt in retrying:
        with attempt:
            return await _attempt(call, policy, limiter, classify, pace)
    raise AssertionError("unreachable: tenacity re-raises the last error")  # pragma: no cover
