"""A test server in a child process on 127.0.0.1: what the scripted server and the local LLM share.

:class:`ChildServer` starts the child with its output in a temporary file (not a pipe that
nobody drains), stops it by PID (SIGTERM, then SIGKILL after 5 s) and is a context manager
that never lets the server outlive the block. :data:`OPENER` sends the helpers' own HTTP
requests straight to 127.0.0.1, never through a proxy from the environment.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import IO, Any, Self

HOST = "127.0.0.1"

#: urllib without proxies: requests to the local servers never leave the machine.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class ChildServer:
    """Lifecycle of a server process; subclasses define :meth:`start` and their addresses."""

    #: How the server is called in error messages, e.g. "the scripted server".
    label = "the server"

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._output: IO[bytes] | None = None
        self.port: int | None = None

    def start(self) -> Self:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def _spawn(
        self,
        command: Sequence[str],
        *,
        stdin: int | None = subprocess.DEVNULL,
        stdout: int | None = None,
        env: Mapping[str, str] | None = None,
        preexec_fn: Callable[[], Any] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start ``command``; its stderr (and its stdout unless ``stdout`` is given) go to a file."""
        if self._process is not None:
            raise RuntimeError(f"{self.label} is already running")
        self._output = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        self._process = subprocess.Popen(
            list(command),
            stdin=stdin,
            stdout=self._output if stdout is None else stdout,
            stderr=self._output if stdout is not None else subprocess.STDOUT,
            env=None if env is None else dict(env),
            preexec_fn=preexec_fn,
        )
        return self._process

    def output_tail(self, limit: int = 8000, *, wait_s: float = 0.0) -> str:
        """The end of the server's output; ``wait_s`` lets a failing child finish writing first."""
        if self._output is None:
            return ""
        if wait_s and self._process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=wait_s)
        self._output.seek(0)
        return self._output.read().decode(errors="replace")[-limit:]

    def stop(self) -> None:
        """Terminate the server by PID; kill it if it has not exited after 5 s."""
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10.0)
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()
        if self._output is not None:
            self._output.close()
            self._output = None
        self.port = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def __enter__(self) -> Self:
        if self._process is None:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
