"""Ctrl-C and SIGTERM during a run: stop cleanly, save what finished, never a traceback.

:func:`run_main` runs the top-level coroutine of ``evaluate()`` (and of every command)
on the main thread with its own handler for SIGINT and SIGTERM in place of
``asyncio.run``'s:

* the first signal cancels the run's task: the runner commits what finished, marks the
  run ``interrupted`` and raises :class:`~clineval.errors.RunInterrupted` with the
  resume hint (SIGTERM, what CI systems and ``docker stop`` send, is treated exactly like
  Ctrl-C);
* a second one while that is being saved only says so (it does not break the save, as a
  second ``KeyboardInterrupt`` would);
* a third one quits at once (``os._exit``): what was committed stays, the run may still
  show as ``running``, and ``--resume`` continues it as usual.

:func:`exit_code` gives the exit status for the command line: 130 after SIGINT, 143
(128 + 15) after SIGTERM.

:func:`run_sync` is the one bridge from synchronous code to a coroutine (``evaluate``,
``rescore``, suites, simulations, the benchmark, calibration): :func:`run_main` when no
event loop is running, a new loop in a helper thread inside one (e.g. a notebook).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

if TYPE_CHECKING:  # asyncio is imported when a run starts: the CLI's start-up stays light
    import asyncio

R = TypeVar("R")

_received: list[int] = []
"""The signals received by this process (SIGINT or SIGTERM), in order."""


def exit_code() -> int:
    """130 when the process was interrupted by SIGINT (or not by a signal), 143 after SIGTERM."""
    return 143 if _received and _received[0] == signal.SIGTERM else 130


def signal_name() -> str:
    """``SIGTERM`` or ``Ctrl-C``: what stopped the process, for messages."""
    return "SIGTERM" if _received and _received[0] == signal.SIGTERM else "Ctrl-C"


def interrupted_by() -> str:
    """`` (SIGTERM)`` after SIGTERM, else nothing: to follow the word "interrupted"."""
    return " (SIGTERM)" if _received and _received[0] == signal.SIGTERM else ""


def _say(text: str) -> None:
    """Write to standard error from a signal handler (no Python-level stream lock to re-enter)."""
    with suppress(OSError):
        os.write(2, text.encode("utf-8", "replace"))


class CommandInterrupted(BaseException):
    """The ``clineval`` command was stopped by SIGINT or SIGTERM outside a run.

    Raised by the command's handler (:func:`quiet_startup_interrupts`) and reported by
    :func:`run_command` as ``interrupted``, exit 130 (143). Deliberately not a
    ``KeyboardInterrupt``: click catches that around every command and turns it into
    ``Aborted!``, exit 1. ``except Exception`` does not catch it, ``finally`` blocks run.
    """


_command_line: list[bool] = []
"""Set by :func:`quiet_startup_interrupts`: this process is the ``clineval`` command."""

_rearm: list[int] = []
_in_hook: list[bool] = []
"""Set while :func:`_on_unraisable` re-arms a swallowed interrupt."""
"""A signal whose :class:`CommandInterrupted` was swallowed (raised inside a ``__del__``)."""


def _on_command_signal(signum: int, frame: FrameType | None) -> None:
    """The command's SIGINT and SIGTERM handler outside a run.

    The first signal raises :class:`CommandInterrupted` where the main thread is; later
    ones are ignored while it unwinds (the command only has its line to print), except
    a third, which quits at once in case the command is stuck in code that swallowed it.
    """
    if _rearm:  # the first one was lost in a finalizer: raise it again, here
        if _in_hook:  # still inside the hook that re-arms it: raising here would be lost again
            _interrupt_main_later(_rearm[0])
            return
        _rearm.clear()
        raise CommandInterrupted(signum)
    _received.append(signum)
    if len(_received) == 1:
        raise CommandInterrupted(signum)
    if len(_received) >= 3:
        _say(f"interrupted{interrupted_by()}: stopped at once\n")
        os._exit(exit_code())


def _on_unraisable(unraisable: Any) -> None:
    """An interrupt raised inside a finalizer (``__del__``, a weakref callback) is not lost
    (nor printed as "Exception ignored"): it is raised again once the finalizer is left."""
    if isinstance(unraisable.exc_value, CommandInterrupted) and _received:
        _rearm.append(_received[0])
        _in_hook.append(True)
        try:
            _interrupt_main_later(_received[0])
        finally:
            _in_hook.clear()
        return
    sys.__unraisablehook__(unraisable)


def _interrupt_main_later(signum: int) -> None:
    """Have the main thread's handler run again, from another thread: the main thread
    sees it once it has left the hook (run from the main thread, the handler would run
    inside the hook at once, and what it raised would be swallowed there again)."""
    import _thread

    threading.Thread(
        target=_thread.interrupt_main, args=(signal.Signals(signum),), name="clineval-rearm", daemon=True
    ).start()


def _say_interrupted() -> int:
    """Print the one line of a command stopped outside a run; its exit status."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)  # nothing left to stop: the line is printed whole
    with suppress(OSError, ValueError):
        sys.stdout.flush()
    _say(f"interrupted{interrupted_by()}\n")
    return exit_code()


def quiet_startup_interrupts() -> None:
    """Install the ``clineval`` command's SIGINT and SIGTERM handling (main thread only).

    Called first thing when the command starts (``clineval/cli/__init__.py``, before
    click, rich or pydantic are imported): from then on a signal at any moment ends the
    command with one line, ``interrupted`` (``interrupted (SIGTERM)``), and exit 130
    (143), or, during a run, as :func:`run_main` describes. Uncaught while the command
    still imports its modules, the interrupt is reported by ``sys.excepthook``.
    """
    if threading.current_thread() is not threading.main_thread() or _command_line:
        return
    _command_line.append(True)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_command_signal)
    previous = sys.excepthook

    def hook(exc_type: type[BaseException], exc: BaseException, tb: Any) -> None:
        if issubclass(exc_type, CommandInterrupted | KeyboardInterrupt):
            os._exit(_say_interrupted())
        previous(exc_type, exc, tb)

    sys.excepthook = hook
    sys.unraisablehook = _on_unraisable
    # Registered first, so it runs after every other exit handler: from there to the end of
    # the process (where Python resets its handlers to the default) signals are ignored.
    atexit.register(_ignore_signals)


def _ignore_signals() -> None:
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)


def run_command(command: Callable[[], object]) -> NoReturn:
    """Run the ``clineval`` command (click's entry point) and end the process.

    An interrupt outside a run (:class:`CommandInterrupted`, or a ``KeyboardInterrupt``
    that reached this far) prints ``interrupted`` and exits 130 (143 after SIGTERM),
    whatever click was doing; every ending goes through :func:`finish`.
    """
    quiet_startup_interrupts()
    try:
        try:
            command()
            code: Any = 0
        except SystemExit as exc:
            code = exc.code
    except (CommandInterrupted, KeyboardInterrupt):
        code = _say_interrupted()
    finish(code)


@contextmanager
def _cancel_on_signal(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> Iterator[list[int]]:
    """While running ``task``: SIGINT/SIGTERM cancel it (see the module docstring)."""
    seen: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)
        _received.append(signum)
        if len(seen) == 1:
            if not task.done():
                task.cancel()
                loop.call_soon_threadsafe(lambda: None)
            return
        if len(seen) == 2:
            _say(
                f"\n{signal_name()} again: saving what finished; press Ctrl-C once more to quit at once "
                "(the run can still be resumed)\n"
            )
            return
        _say("stopped at once: what was committed is kept; continue with 'clineval run --resume RUN_ID'\n")
        os._exit(exit_code())

    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        current = signal.getsignal(signum)
        # Only handlers nobody chose (Python's defaults, or the CLI's SIGTERM) are replaced.
        if current in (signal.default_int_handler, signal.SIG_DFL, _on_command_signal):
            previous[signum] = current
            signal.signal(signum, _on_signal)
    try:
        yield seen
    finally:
        for restored, handler in previous.items():
            if signal.getsignal(restored) is _on_signal:
                # The command, interrupted, only has its message left to print before it
                # exits (finish()): a signal meanwhile is ignored rather than cutting it short.
                late = signal.SIG_IGN if seen and _command_line else handler
                signal.signal(restored, late)


def run_main(coro: Coroutine[Any, Any, R]) -> R:
    """``asyncio.run(coro)``, with the signal handling above (on the main thread)."""
    import asyncio

    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        task = loop.create_task(coro)
        with _cancel_on_signal(loop, task) as seen:
            try:
                try:
                    result = loop.run_until_complete(task)
                except asyncio.CancelledError:
                    if seen:  # cancelled by the signal before the runner could say more
                        raise KeyboardInterrupt from None
                    raise
            finally:
                runner.close()  # cancels what is left, still under the handler above
            if seen:  # the signal came as the work ended (it is all saved): still, stop
                raise KeyboardInterrupt
            return result


def run_sync(coro: Coroutine[Any, Any, R]) -> R:
    """Run a coroutine to completion from synchronous code: the one sync/async bridge.

    Every synchronous entry point (``evaluate``, ``rescore``, ``run_suite``, the benchmark,
    simulation and calibration runners, the commands) goes through here. Without a running
    event loop the coroutine runs under :func:`run_main` (Ctrl-C and SIGTERM handled);
    inside one (e.g. a notebook) it runs to completion on a new loop in a helper thread,
    and its result or exception is handed back.
    """
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_main(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="clineval-evaluate")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def finish(code: Any) -> NoReturn:
    """End the command with ``code`` (a ``SystemExit`` code), even if agent calls are stuck.

    Sync agents run in daemon threads (:mod:`clineval.runner.threads`); one that never
    returns is abandoned when its call times out. When any are still running, the
    results are already printed and saved: say how many, flush the output and leave with
    ``os._exit``, which neither waits for them nor lets a stuck thread disturb the
    interpreter's shutdown. Signals from here on are ignored: the command only prints and
    exits, with its own status. Only while Python shuts down (exit handlers, threads an
    agent left running) does a third signal quit at once, with that status; from the
    last exit handler on they are ignored again (a Python handler would be reset to the
    default there, and the process would die by the signal).
    """
    status = 0 if code is None else code if isinstance(code, int) else 1
    on_main = threading.current_thread() is threading.main_thread()
    if on_main:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
    threads = sys.modules.get("clineval.runner.threads")
    stuck = threads.abandoned_calls() if threads is not None else 0
    if not stuck:
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        if on_main:
            late: list[int] = []

            def _late(signum: int, frame: FrameType | None) -> None:
                late.append(signum)
                if len(late) >= 3:
                    os._exit(status)

            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, _late)
        raise SystemExit(code)
    if not isinstance(code, int | None):
        print(code, file=sys.stderr)
    print(
        f"note: {stuck} agent call(s) were still running (timed out, or stopped by an interrupt) "
        "and were abandoned",
        file=sys.stderr,
    )
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
