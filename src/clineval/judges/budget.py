"""Request budgets: how many judge requests and tokens may go to an endpoint per minute.

A budget is asked before every request an OpenAI-compatible backend sends (retries
included) and told afterwards how many tokens the response reported. The backend's own
concurrency cap (:class:`clineval.resilience.AdaptiveLimiter`) bounds requests in flight;
a budget bounds their rate. Two implementations satisfy :class:`RequestBudget`:

- a local one for one process (``--judge-rpm`` / ``--judge-tpm``): :class:`RateBudget`;
- a cluster-wide one for runs on Ray, shared by every worker so that N workers do not
  multiply the load on one endpoint (in the Ray executor).

How :class:`RateBudget` counts
------------------------------
``rpm``, requests per minute, is a token bucket: it refills at ``rpm / 60`` requests per
second and holds at most one second's share (``rpm / 60``, at least 1), full at the start.
Requests therefore go out evenly spaced, ``60 / rpm`` seconds apart once the first
second's share is spent, never in a burst of a whole minute's worth (providers enforce
their limits over shorter windows too). Over any 60 seconds at most ``rpm`` plus one
second's share start; set the limit a little under the provider's to keep that margin.

``tpm``, tokens per minute, counts the tokens responses report (``usage.prompt_tokens +
completion_tokens``; nothing is estimated from the text). A request waits while the tokens
reported in the last 60 seconds, plus the requests in flight at the mean tokens per
response seen so far, reach ``tpm``; it goes when old responses leave the window or
responses come back. Before the first response reports tokens nothing is known, so the
first requests (up to the judge concurrency) are not held; one request is never held
when nothing was reported in the last minute and nothing is in flight, even if it alone
is larger than ``tpm``.

Waiting requests start in arrival order (first come, first served).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol, runtime_checkable


@runtime_checkable
class RequestBudget(Protocol):
    """Paces requests to one endpoint: asked before each request, told each response's tokens."""

    async def acquire(self) -> None:
        """Wait until one more request may be sent now (requests per minute, tokens per minute)."""
        ...

    def spent(self, tokens: int) -> None:
        """Record the tokens one response reported (prompt + completion); 0 when it reported none."""
        ...


def check_limit(value: object, name: str) -> float | None:
    """``value`` as a positive, finite limit, or ``None``; a clear :class:`ValueError` otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number above 0 (or not set), not {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a number above 0 (or not set), not {value!r}")
    return float(value)


class RateBudget:
    """Requests per minute and tokens per minute for one process (see the module docstring).

    ``burst`` (default one second's share of ``rpm``, at least 1) is how many requests may
    start at once; ``clock`` (monotonic seconds) and ``period_s`` (the minute) are for tests.
    """

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        burst: float | None = None,
        period_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rpm = check_limit(rpm, "rpm")
        self.tpm = check_limit(tpm, "tpm")
        self.period_s = period_s
        self._clock = clock
        # requests: a token bucket refilled at rpm per period, holding at most `burst`
        self._rate = (self.rpm or 0.0) / period_s
        self.burst = check_limit(burst, "burst") or max(1.0, (self.rpm or 0.0) / 60.0)
        self._level = self.burst
        self._stamp = clock()
        # tokens: (time, tokens) reported in the last period and their sum
        self._reported: deque[tuple[float, int]] = deque()
        self._window_tokens = 0
        self._responses = 0
        self._tokens_seen = 0
        self.in_flight = 0
        """Requests acquired and not yet told :meth:`spent`."""
        self._lock = asyncio.Lock()
        self._changed = asyncio.Event()

    def __repr__(self) -> str:
        return f"RateBudget(rpm={self.rpm}, tpm={self.tpm})"

    # ---- the timing logic, by the clock

    def _advance(self, now: float) -> None:
        if self.rpm is not None:
            self._level = min(self.burst, self._level + (now - self._stamp) * self._rate)
        self._stamp = now
        cutoff = now - self.period_s
        while self._reported and self._reported[0][0] <= cutoff:
            self._window_tokens -= self._reported.popleft()[1]

    def tokens_in_window(self) -> int:
        """Tokens reported in the last period (a minute)."""
        self._advance(self._clock())
        return self._window_tokens

    def wait_s(self) -> float | None:
        """Seconds until one more request may start: ``0.0`` now; ``None`` when only a
        response coming back can let it start (the tokens expected of requests in flight)."""
        now = self._clock()
        self._advance(now)
        wait = 0.0
        if self.rpm is not None and self._level < 1.0:
            wait = (1.0 - self._level) / self._rate
        if self.tpm is not None and (self._window_tokens > 0 or self.in_flight > 0):
            mean = self._tokens_seen / self._responses if self._responses else 0.0
            if self._window_tokens + self.in_flight * mean >= self.tpm:
                if not self._reported:
                    return None
                # the oldest report leaving the window may make room (responses may too)
                wait = max(wait, self._reported[0][0] + self.period_s - now)
        return wait

    def take(self) -> None:
        """Count one request as started (what :meth:`acquire` does once :meth:`wait_s` is 0)."""
        self._advance(self._clock())
        if self.rpm is not None:
            self._level -= 1.0
        self.in_flight += 1

    # ---- RequestBudget

    async def acquire(self) -> None:
        async with self._lock:  # one waiter at a time: requests start in arrival order
            while True:
                wait = self.wait_s()
                if wait == 0.0:
                    self.take()
                    return
                self._changed.clear()
                # until the time computed, or sooner when a response reports its tokens
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout=wait)

    def spent(self, tokens: int) -> None:
        self.in_flight = max(0, self.in_flight - 1)
        if tokens > 0:
            now = self._clock()
            self._advance(now)
            self._reported.append((now, tokens))
            self._window_tokens += tokens
            self._responses += 1
            self._tokens_seen += tokens
        self._changed.set()
