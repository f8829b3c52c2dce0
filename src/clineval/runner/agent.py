"""Calling the agent under test on one case.

An agent is a plain Python callable, sync or async. It receives the case's input (a
string, or a list of ``{"role", "content"}`` messages); if it has a parameter named
``case`` it receives the whole :class:`~clineval.model.Case` as well. It returns the
response as a string, or a dict with ``response`` and, optionally, ``trajectory`` (or
``predicted_trajectory``, as a list of tool calls or a JSON string of one) and
``contexts``; other keys are kept with the output.

Latency is the wall time of the attempt that returned; an exception, a timeout or an
output that is not one of the above makes the case a failure (``failure`` = 1), with the
reason kept; so does an agent that calls ``sys.exit()`` or raises ``KeyboardInterrupt``.
Sync agents run in daemon threads so that several cases run at once, and so that an agent
that never returns cannot keep the run (or the process) from ending once its call timed
out (see :mod:`clineval.runner.threads`).
"""

from __future__ import annotations

import inspect
import json
import signal
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clineval.model import AgentOutput, AgentRun, Case, ToolCall
from clineval.model.case import trajectory_from_text
from clineval.resilience import AdaptiveLimiter, CallTimedOut, RetryPolicy, call_with_retries
from clineval.runner.threads import AgentAborted, aborted, call_in_thread

if TYPE_CHECKING:
    from clineval.runner.isolation import AgentPool, WorkerLease

AgentFn = Callable[..., Any]


class AgentSettings(BaseModel):
    """How the runner calls the agent."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int = Field(default=8, ge=1, le=1024)
    timeout_s: float = Field(default=300.0, gt=0)
    max_attempts: int = Field(
        default=1,
        ge=1,
        le=10,
        description="attempts per case; only rate limits (429), timeouts, connection errors and "
        "408/409/5xx statuses are retried, never other exceptions",
    )


class InvalidAgentOutput(Exception):
    pass


def _output_from(result: Any) -> tuple[str | None, list[ToolCall] | None, list[str] | None, dict[str, Any]]:
    if isinstance(result, str):
        return result, None, None, {}
    if isinstance(result, Mapping):
        data = dict(result)
        response = data.pop("response", None)
        if response is None and "output" in data:
            response = data.pop("output")
        trajectory = data.pop("trajectory", None)
        if trajectory is None and "predicted_trajectory" in data:
            trajectory = data.pop("predicted_trajectory")
        contexts = data.pop("contexts", None)
        if response is not None and not isinstance(response, str):
            raise InvalidAgentOutput(f"'response' must be a string, got {type(response).__name__}")
        try:
            items = None if trajectory is None else trajectory_from_text(trajectory)
            calls = None if items is None else [ToolCall.model_validate(t) for t in items]
        except (ValidationError, TypeError, ValueError) as exc:
            raise InvalidAgentOutput(f"the trajectory is not a list of tool calls: {exc}") from None
        if isinstance(contexts, str):
            contexts = [contexts]
        if contexts is not None and not all(isinstance(c, str) for c in contexts):
            raise InvalidAgentOutput("'contexts' must be a list of strings")
        extra: dict[str, Any] = {}
        dropped = []
        for key, value in data.items():
            if _jsonable(value):
                extra[str(key)] = value
            else:
                dropped.append(str(key))
        if dropped:
            extra["_not_stored"] = dropped  # keys whose values are not JSON (kept out of the store)
        return response, calls, contexts, extra
    if isinstance(result, BaseModel):
        return _output_from(result.model_dump())
    raise InvalidAgentOutput(
        f"the agent returned a {type(result).__name__}; return a string or a dict with 'response'"
    )


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


class AgentCaller:
    """Calls one agent with bounded concurrency, a timeout and bounded retries."""

    def __init__(self, agent: AgentFn, settings: AgentSettings, pool: AgentPool | None = None):
        """``pool``: call the agent in worker processes (:mod:`clineval.runner.isolation`)."""
        if not callable(agent):
            raise TypeError("the agent must be callable")
        self.agent = agent
        self.settings = settings
        self.pool = pool
        self.limiter = AdaptiveLimiter(settings.concurrency)
        self._policy = RetryPolicy(max_attempts=settings.max_attempts, timeout_s=settings.timeout_s)
        target = agent if inspect.isroutine(agent) else getattr(agent, "__call__", agent)  # noqa: B004
        try:
            params = inspect.signature(target).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        self._wants_case = "case" in params
        self._is_async = inspect.iscoroutinefunction(target)

    def _agent_input(self, case: Case) -> Any:
        if isinstance(case.input, list):
            return [t.model_dump(mode="json", exclude_none=True) for t in case.input]
        return case.input

    async def _invoke(self, case: Case, lease: WorkerLease | None) -> Any:
        args: tuple[Any, ...] = (self._agent_input(case),)
        kwargs: dict[str, Any] = {"case": case} if self._wants_case else {}
        try:
            if lease is not None:
                return await lease.call(args[0], case)
            if self._is_async:
                return await self.agent(*args, **kwargs)
            result = await call_in_thread(self.agent, *args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result
        except (KeyboardInterrupt, SystemExit) as exc:
            if _from_signal(exc):
                raise  # a real Ctrl-C that reached the event loop: the run stops
            raise aborted(exc) from None

    async def run(self, case: Case) -> AgentOutput:
        attempts = 0
        last_latency = 0.0
        lease = self.pool.lease() if self.pool is not None else None

        async def attempt() -> Any:
            nonlocal attempts, last_latency
            attempts += 1
            start = time.perf_counter()
            try:
                return await self._invoke(case, lease)
            finally:
                last_latency = time.perf_counter() - start

        try:
            pace = lease.ready if lease is not None else None  # a worker process, before the timeout
            try:
                policy, limiter = self._policy, self.limiter
                result = await call_with_retries(attempt, policy=policy, limiter=limiter, pace=pace)
            finally:
                if lease is not None:
                    lease.release()
            response, trajectory, contexts, extra = _output_from(result)
            return AgentOutput(
                response=response,
                trajectory=trajectory,
                contexts=contexts,
                extra=extra,
                agent_run=AgentRun(latency_s=last_latency, failed=False, attempts=max(attempts, 1)),
            )
        except CallTimedOut:
            return self._failed(f"timed out after {self.settings.timeout_s:g} s", last_latency, attempts)
        except InvalidAgentOutput as exc:
            return self._failed(f"invalid output: {exc}", last_latency, attempts)
        except AgentAborted as exc:
            return self._failed(str(exc), last_latency, attempts)
        except ValidationError as exc:
            return self._failed(f"invalid output: {exc}", last_latency, attempts)
        except Exception as exc:
            return self._failed(f"{type(exc).__name__}: {exc}", last_latency, attempts)

    @staticmethod
    def _failed(error: str, latency: float, attempts: int) -> AgentOutput:
        return AgentOutput(
            agent_run=AgentRun(latency_s=latency, failed=True, error=error[:2000], attempts=max(attempts, 1))
        )

    def close(self) -> None:
        """End the worker processes, if any; calls still running in-process (timed out)
        finish in their daemon threads."""
        if self.pool is not None:
            self.pool.close()


def _from_signal(exc: BaseException) -> bool:
    """Whether a ``KeyboardInterrupt`` came from a signal handler (a user's Ctrl-C), not agent code.

    Python raises it from the handler's frame (``asyncio``'s, or clineval's own), so the
    innermost frame of the traceback is that handler; ``raise KeyboardInterrupt`` in agent
    code ends in the agent's frame. ``asyncio.run`` and clineval's runs replace Python's
    default handler, which raises from C and leaves no frame: with that one in place, every
    ``KeyboardInterrupt`` on the main thread counts as a Ctrl-C.
    """
    if not isinstance(exc, KeyboardInterrupt):
        return False
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        return True  # Python's own handler (in C) leaves no frame: a Ctrl-C cannot be told apart
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_name in _SIGNAL_HANDLERS


_SIGNAL_HANDLERS = frozenset({"_on_sigint", "_on_signal", "_on_sigterm"})
