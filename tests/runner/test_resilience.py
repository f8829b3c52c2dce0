"""Retries, Retry-After and the adaptive concurrency limiter, without a network."""

from __future__ import annotations

import asyncio
import email.utils
import time
from typing import Any

import pytest

from clineval.resilience import (
    AdaptiveLimiter,
    CallTimedOut,
    RetryPolicy,
    backoff_s,
    call_with_retries,
    classify_failure,
    retry_after_seconds,
)


class StatusError(Exception):
    def __init__(self, status_code: int, headers: dict[str, str] | None = None):
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code
        self.headers = headers or {}


def test_retry_after_forms() -> None:
    assert retry_after_seconds(StatusError(429, {"retry-after": "2"})) == 2.0
    assert retry_after_seconds(StatusError(429, {"retry-after-ms": "250"})) == 0.25
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28 <= (retry_after_seconds(StatusError(503, {"retry-after": future})) or 0) <= 30
    assert retry_after_seconds(StatusError(429, {"retry-after": "soon"})) is None
    assert retry_after_seconds(ValueError("no headers")) is None


def test_classification() -> None:
    assert classify_failure(StatusError(429)) == "rate_limit"
    assert {classify_failure(StatusError(s)) for s in (408, 409, 500, 503)} == {"transient"}
    assert {classify_failure(StatusError(s)) for s in (400, 401, 404, 422)} == {"fatal"}
    assert classify_failure(TimeoutError()) == "transient"
    assert classify_failure(ValueError()) == "fatal"


def test_backoff_is_bounded_and_honours_the_server() -> None:
    policy = RetryPolicy(initial_backoff_s=0.5, max_backoff_s=4)
    assert backoff_s(policy, 1, StatusError(429, {"retry-after": "3"})) == 3
    assert backoff_s(policy, 1, StatusError(429, {"retry-after": "60"})) == 4  # capped
    for failures in range(1, 10):
        assert 0 <= backoff_s(policy, failures, None) <= min(4, 0.5 * 2 ** (failures - 1))


async def test_retries_stop_after_max_attempts() -> None:
    calls = 0

    async def always_503() -> None:
        nonlocal calls
        calls += 1
        raise StatusError(503)

    policy = RetryPolicy(max_attempts=3, initial_backoff_s=0.001, max_backoff_s=0.01)
    with pytest.raises(StatusError):
        await call_with_retries(always_503, policy=policy)
    assert calls == 3


async def test_fatal_errors_are_not_retried_and_retries_are_reported() -> None:
    calls, reported = 0, []

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise StatusError(500)
        if calls == 2:
            raise StatusError(400)
        return "ok"

    policy = RetryPolicy(max_attempts=5, initial_backoff_s=0.001)
    with pytest.raises(StatusError, match="400"):
        await call_with_retries(flaky, policy=policy, on_retry=lambda exc, n: reported.append(n))
    assert calls == 2 and reported == [1]


async def test_own_timeout_is_distinguished_from_the_call_raising_timeout() -> None:
    async def slow() -> None:
        await asyncio.sleep(1)

    async def raises_timeout() -> None:
        raise TimeoutError("upstream")

    policy = RetryPolicy(max_attempts=1, timeout_s=0.05)
    with pytest.raises(CallTimedOut):
        await call_with_retries(slow, policy=policy)
    with pytest.raises(TimeoutError, match="upstream") as info:
        await call_with_retries(raises_timeout, policy=policy)
    assert not isinstance(info.value, CallTimedOut)


async def test_limiter_caps_concurrency() -> None:
    limiter = AdaptiveLimiter(3)
    active = peak = 0

    async def work() -> None:
        nonlocal active, peak
        async with limiter.slot():
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1

    await asyncio.gather(*(work() for _ in range(20)))
    assert peak == 3 and limiter.in_flight == 0


async def test_limiter_halves_once_per_burst_then_recovers() -> None:
    limiter = AdaptiveLimiter(8)
    slots: list[Any] = []
    for _ in range(8):
        cm = limiter.slot()
        slots.append((cm, await cm.__aenter__()))
    for _, slot in slots:  # eight 429s from requests sent before the first cut: one cut
        slot.rate_limited(None)
    assert limiter.limit == 4 and limiter.rate_limited_count == 8
    for cm, _ in slots:
        await cm.__aexit__(None, None, None)
    async with limiter.slot() as later:  # a request sent after the cut may cut again
        later.rate_limited(None)
    assert limiter.limit == 2 and limiter.lowest_limit == 2
    for _ in range(2 + 3):  # additive increase: +1 after `limit` successes
        async with limiter.slot() as slot:
            slot.succeeded()
    assert limiter.limit == 4


async def test_retry_after_pauses_new_calls() -> None:
    limiter = AdaptiveLimiter(4)
    async with limiter.slot() as slot:
        slot.rate_limited(0.2)
    started = time.perf_counter()
    async with limiter.slot():
        pass
    assert time.perf_counter() - started >= 0.18


async def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    limiter = AdaptiveLimiter(1)
    async with limiter.slot():
        waiter = asyncio.create_task(limiter._acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
    assert limiter.in_flight == 0
    async with limiter.slot():
        assert limiter.in_flight == 1
