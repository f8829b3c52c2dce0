"""Sync agent calls in daemon threads, so that a hung agent never keeps the process alive.

``asyncio``'s executors (``run_in_executor``, ``asyncio.to_thread``) use worker threads
that are joined when the event loop closes and again at interpreter exit: an agent stuck
in ``time.sleep(10**6)`` would keep ``evaluate()`` from returning and ``clineval run``
from exiting long after its timeout made the case a failure. Here each call gets its own
daemon thread instead: when the caller stops waiting (a timeout, an interrupt) the
thread is abandoned, keeps running until the agent returns, and never blocks the exit.
:func:`abandoned_calls` counts the calls still running.

A ``SystemExit`` or ``KeyboardInterrupt`` raised by agent code in its thread is not a
user's Ctrl-C (signals reach the main thread only): it becomes :class:`AgentAborted`,
an ordinary exception, so the case fails with the reason and the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import threading
from collections.abc import Callable
from typing import Any

_live: set[threading.Thread] = set()
_lock = threading.Lock()
_numbers = itertools.count(1)


class AgentAborted(Exception):
    """Agent code raised ``SystemExit``, ``KeyboardInterrupt`` or another ``BaseException``."""


def aborted(exc: BaseException) -> AgentAborted:
    """``exc`` (not an ``Exception``) as the error of a failed call, with a readable reason."""
    if isinstance(exc, SystemExit):
        return AgentAborted(f"the agent called sys.exit({exc.code!r})")
    detail = str(exc)
    return AgentAborted(f"the agent raised {type(exc).__name__}" + (f": {detail}" if detail else ""))


async def call_in_thread(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a new daemon thread (with the caller's context variables)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(ok: bool, value: Any) -> None:
        if future.done():  # the caller stopped waiting (timed out or cancelled)
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def target() -> None:
        ok, value = True, None
        try:
            value = context.run(fn, *args, **kwargs)
        except Exception as exc:
            ok, value = False, exc
        except BaseException as exc:
            ok, value = False, aborted(exc)
        finally:
            with _lock:
                _live.discard(threading.current_thread())
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for this call any more
            loop.call_soon_threadsafe(deliver, ok, value)

    thread = threading.Thread(target=target, name=f"clineval-agent-{next(_numbers)}", daemon=True)
    with _lock:
        _live.add(thread)
    thread.start()
    return await future


def abandoned_calls() -> int:
    """Agent calls still running in their threads (after a run: the ones nobody waits for)."""
    with _lock:
        return sum(1 for thread in _live if thread.is_alive())
