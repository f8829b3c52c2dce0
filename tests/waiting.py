"""Bounded waits for tests that synchronise with another process (a gate file, a line of
output, a row in a store) instead of sleeping for a time that assumes how fast it runs."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO


def wait_for(
    condition: Callable[[], object],
    what: str,
    timeout: float = 60.0,
    *,
    process: subprocess.Popen[str] | None = None,
    interval: float = 0.02,
) -> None:
    """Return as soon as ``condition()`` is true; fail the test naming ``what`` after
    ``timeout`` seconds. With ``process`` (a command the test started): fail at once, with
    its exit code and the end of its standard error, if it ends before the condition holds,
    and kill it if the wait times out."""
    deadline = time.monotonic() + timeout
    while not condition():
        if process is not None and process.poll() is not None:
            if condition():
                return
            _, stderr = process.communicate()
            raise AssertionError(
                f"the command ended (exit {process.returncode}) before {what}:\n{stderr[-2000:]}"
            )
        if time.monotonic() >= deadline:
            if process is not None:
                process.kill()
                process.communicate()
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


class PipeText:
    """What a command writes to one of its pipes, read by a thread as it comes, so that a
    test can wait for a line (``wait_for(lambda: "ready" in text.text, ...)``) and still
    read the whole output once the command has ended (``text.finish()``)."""

    def __init__(self, pipe: IO[str]) -> None:
        self._lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in iter(pipe.readline, ""):
            self._lines.append(line)

    @property
    def text(self) -> str:
        return "".join(self._lines)

    def finish(self, timeout: float = 30.0) -> str:
        """All of it, once the pipe is closed (the command has ended)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"the pipe was still open after {timeout:g} s"
        return self.text
