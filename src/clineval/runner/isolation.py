"""Agent calls in worker processes (``--isolate-agent``, ``agent: {isolate: true}``).

In-process (the default) an agent shares the interpreter with the run: ``os._exit()``
or a crash in native code ends ``clineval`` itself, and an async agent that blocks the
event loop stops every other case and Ctrl-C with it. Isolated, each call runs in a
worker process of a pool (one call at a time per worker, as many workers as the agent's
``concurrency``); the agent is imported there by its import path (``module:function``,
``file.py:function``; a class is created in the worker with the run's ``args``), as a
Ray worker does. Then:

* a worker that dies during a call (``os._exit``, a segfault, the OOM killer) fails that
  case with the reason, e.g. "the agent's worker process died (exit code 3)" or "(killed
  by SIGSEGV)"; the next call starts a new worker;
* a call that outlives ``timeout_s`` (an agent stuck in a loop, or blocking its event
  loop) is failed as "timed out after N s" and its worker is killed;
* exceptions, ``sys.exit()`` and ``KeyboardInterrupt`` raised by the agent fail the case
  as they do in-process, with the same reasons.

Workers are plain ``python -c`` processes (the spawn model: nothing of the parent is
inherited but the working directory, the environment and, sent at start, ``sys.path``),
talking over a socket pair with :class:`multiprocessing.connection.Connection`. They
ignore SIGINT (Ctrl-C in a terminal reaches the whole process group: the run, not its
workers, decides what to save) and end when the run closes the pool, when their socket
closes, or within half a second of their parent's death (even a SIGKILL).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from clineval.errors import ConfigError
from clineval.runner.threads import AgentAborted, aborted

_WORKER = (
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "from clineval.runner.isolation import worker_main; worker_main({fd})"
)
_WATCH_PARENT_S = 0.5


@dataclass
class AgentRecipe:
    """How a worker gets the agent: by import path (``args`` for a class), or pickled."""

    target: str | None
    args: dict[str, Any] = field(default_factory=dict)
    base_dir: str | None = None
    pickled: bytes | None = None

    @classmethod
    def of(cls, target: str, args: Mapping[str, Any], base_dir: Path | None, agent: Any) -> AgentRecipe:
        """The recipe of a run's agent; an agent given as a Python object (``python:NAME``)
        travels pickled, so it must be a function or class instance Python can pickle."""
        if not target.startswith("python:"):
            return cls(target, dict(args), str(base_dir.resolve()) if base_dir is not None else None)
        try:
            if getattr(agent, "__module__", None) == "__main__":
                raise pickle.PicklingError("it is defined in the __main__ script")
            return cls(None, pickled=pickle.dumps(agent))
        except Exception as exc:
            raise ConfigError(
                f"isolate: the agent {target[7:]!r} cannot be sent to a worker process ({exc}); give it "
                "by import path (module:function or file.py:function) or define it in an importable module"
            ) from None


class _Worker:
    """One worker process and the parent's end of its socket."""

    def __init__(self, recipe: AgentRecipe):
        parent, child = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _WORKER.format(fd=child.fileno())],
                pass_fds=[child.fileno()],
                stdin=subprocess.DEVNULL,
            )
        finally:
            child.close()
        self.conn = Connection(parent.detach())
        self.wants_case = False
        self.conn.send((list(sys.path), recipe))

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        self.conn.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(1)

    def death(self) -> str:
        """Why the worker's socket closed (waits up to 2 s for the process to end)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(2)
        code = self.process.returncode
        if code is None:
            return "the agent's worker process closed its connection"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"the agent's worker process died (killed by {signal.Signals(-code).name})"
            return f"the agent's worker process died (killed by signal {-code})"
        return f"the agent's worker process died (exit code {code})"


class AgentPool:
    """Worker processes that call one agent; a worker is started when no idle one is left."""

    def __init__(self, recipe: AgentRecipe, size: int):
        self.recipe = recipe
        self.size = size
        """The callers' concurrency: at most this many workers are busy at once."""
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self._broken: str | None = None
        """Why the agent cannot be created in a worker (every call then fails at once with it)."""

    def lease(self) -> WorkerLease:
        """A worker for one case's attempts (:meth:`WorkerLease.ready` before the timeout starts)."""
        return WorkerLease(self)

    async def _acquire(self) -> _Worker:
        if self._broken is not None:
            raise AgentAborted(self._broken)
        if self._idle:
            return self._idle.pop()
        worker = _Worker(self.recipe)
        self._all.add(worker)
        try:
            kind, value = await self._receive(worker)
        except (EOFError, OSError):
            self._drop(worker)
            raise AgentAborted(worker.death() + " while creating the agent") from None
        except BaseException:
            self._drop(worker)
            raise
        if kind != "ready":
            self._drop(worker)
            self._broken = str(value)
            raise AgentAborted(self._broken)
        worker.wants_case = bool(value)
        return worker

    async def _call(self, worker: _Worker, agent_input: Any, case: Any) -> Any:
        done = False
        try:
            worker.conn.send((agent_input, case if worker.wants_case else None))
            kind, value = await self._receive(worker)
            done = True
        except (EOFError, OSError):
            self._drop(worker)
            raise AgentAborted(worker.death()) from None
        finally:
            if not done and worker in self._all:
                self._drop(worker)  # cancelled (a timeout, Ctrl-C): the call may still be running
        if kind == "ok":
            return value
        if kind == "exc" and isinstance(value, BaseException):
            raise value
        raise AgentAborted(str(value))

    def _release(self, worker: _Worker) -> None:
        if worker in self._all:
            self._idle.append(worker)

    @staticmethod
    async def _receive(worker: _Worker) -> tuple[str, Any]:
        """The worker's next message, awaited without blocking the event loop."""
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        fd = worker.conn.fileno()

        def readable() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(fd, readable)
        try:
            await ready
        finally:
            loop.remove_reader(fd)
        message = worker.conn.recv()
        assert isinstance(message, tuple) and len(message) == 2
        return message[0], message[1]

    def _drop(self, worker: _Worker) -> None:
        """Kill a worker that died, timed out or was cancelled mid-call (the next call starts another)."""
        self._all.discard(worker)
        with contextlib.suppress(ValueError):
            self._idle.remove(worker)
        worker.kill()

    def close(self) -> None:
        """End every worker: idle ones are told to stop (and killed after a second), busy ones killed."""
        workers = list(self._all)
        self._all.clear()
        self._idle.clear()
        for worker in workers:
            with contextlib.suppress(OSError):
                worker.conn.close()  # an idle worker reads the end of its input and exits
        deadline = time.monotonic() + 1.0
        for worker in workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.process.wait(max(0.0, deadline - time.monotonic()))
            if worker.process.returncode is None:
                worker.kill()


class WorkerLease:
    """The worker one case's attempts use: :meth:`ready` (a worker started or taken from the
    idle ones) runs before the attempt's timeout starts, so a worker's start-up is neither
    timed out nor counted in the agent's latency; a retry after a worker died starts another."""

    def __init__(self, pool: AgentPool):
        self.pool = pool
        self.worker: _Worker | None = None

    async def ready(self) -> None:
        if self.worker is None or self.worker not in self.pool._all:
            self.worker = await self.pool._acquire()

    async def call(self, agent_input: Any, case: Any) -> Any:
        await self.ready()
        assert self.worker is not None
        return await self.pool._call(self.worker, agent_input, case)

    def release(self) -> None:
        if self.worker is not None:
            self.pool._release(self.worker)
            self.worker = None


# ---------------------------------------------------------------------------- the worker process


def worker_main(fd: int) -> None:
    """A worker: build the agent, then answer calls until the socket closes."""
    conn = Connection(fd)
    _watch_parent(os.getppid())
    try:
        path, recipe = conn.recv()
    except (EOFError, OSError):
        return
    sys.path[:] = path
    try:
        agent = _build(recipe)
    except BaseException as exc:  # any failure to create the agent is reported
        message = str(exc) if isinstance(exc, ConfigError) else f"{type(exc).__name__}: {exc}"
        conn.send(("error", f"the agent cannot be created in its worker process: {message}"))
        return
    wants_case = _wants_case(agent)
    if wants_case:
        import clineval.model  # noqa: F401 - what unpickling a case needs, loaded before the first call
    conn.send(("ready", wants_case))
    loop: asyncio.AbstractEventLoop | None = None
    while True:
        try:
            agent_input, case = conn.recv()
        except (EOFError, OSError):
            return
        try:
            result = agent(agent_input, case=case) if wants_case else agent(agent_input)
            if hasattr(result, "__await__"):
                loop = loop or asyncio.new_event_loop()
                result = loop.run_until_complete(result)
            reply: tuple[str, Any] = ("ok", _sendable(result))
        except Exception as exc:
            reply = ("exc", exc) if _round_trips(exc) else ("aborted", f"{type(exc).__name__}: {exc}")
        except BaseException as exc:  # sys.exit(), KeyboardInterrupt raised by the agent
            reply = ("aborted", str(aborted(exc)))
        try:
            conn.send(reply)
        except Exception as exc:  # an exception or output that cannot be pickled
            if reply[0] == "exc":
                conn.send(("aborted", f"{type(reply[1]).__name__}: {reply[1]}"))
            else:
                conn.send(("aborted", f"invalid output: it cannot be sent from the worker process: {exc}"))


def _build(recipe: AgentRecipe) -> Any:
    if recipe.pickled is not None:
        return pickle.loads(recipe.pickled)
    from clineval.importing import build_object

    assert recipe.target is not None
    base = Path(recipe.base_dir) if recipe.base_dir else None
    agent = build_object(recipe.target, recipe.args, base_dir=base, what="agent")
    if not callable(agent):
        raise ConfigError(f"agent {recipe.target!r} is not callable")
    return agent


def _wants_case(agent: Any) -> bool:
    import inspect

    target = agent if inspect.isroutine(agent) else getattr(agent, "__call__", agent)  # noqa: B004
    try:
        return "case" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False


def _round_trips(exc: BaseException) -> bool:
    """Whether the parent can unpickle ``exc`` (an exception whose ``__init__`` takes other
    arguments than its ``args`` cannot be)."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return False
    return True


def _sendable(result: Any) -> Any:
    """A pydantic model as its dict (the parent reads the dict as it reads the model)."""
    dump = getattr(result, "model_dump", None)
    return dump() if callable(dump) else result


def _watch_parent(parent: int) -> None:
    """End this worker soon after its parent dies, even while the agent is stuck in a call."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_WATCH_PARENT_S)
        os._exit(1)

    threading.Thread(target=watch, name="clineval-parent-watch", daemon=True).start()
