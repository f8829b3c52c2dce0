"""ChildServer: the child-process lifecycle the scripted server and the local LLM server share."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from clineval.testing.local_llm import LocalLLMError, LocalLLMServer
from clineval.testing.process import ChildServer


class Sleeper(ChildServer):
    label = "the sleeper"

    def start(self) -> Sleeper:
        self._spawn([sys.executable, "-c", "print('up', flush=True); import time; time.sleep(60)"])
        self.port = 1
        return self


def test_context_manager_starts_and_stops_the_child() -> None:
    with Sleeper() as server:
        process = server._process
        assert process is not None and server.is_running() and server.pid == process.pid
        with pytest.raises(RuntimeError, match="the sleeper is already running"):
            server.start()
    assert process.poll() is not None  # terminated by PID when the block ended
    state: tuple[object, ...] = (server.is_running(), server.pid, server.port, server.output_tail())
    assert state == (False, None, None, "")
    server.stop()  # stopping a stopped server is a no-op


def test_output_tail_reads_what_the_child_wrote() -> None:
    server = Sleeper().start()
    try:
        deadline = time.monotonic() + 30
        while not server.output_tail() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.output_tail() == "up\n"
        assert server.output_tail(limit=2) == "p\n"
    finally:
        server.stop()


def test_local_llm_server_that_cannot_start_reports_its_output(tmp_path: Path) -> None:
    """A venv without llama-cpp-python: the child exits, its output is in the error, nothing is left."""
    (tmp_path / "bin").mkdir()
    os.symlink(sys.executable, tmp_path / "bin" / "python")
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    server = LocalLLMServer(tmp_path, model=model, startup_timeout_s=30)
    with pytest.raises(LocalLLMError) as error:
        server.start()
    message = str(error.value)
    assert message.startswith(
        "the local LLM server did not start (the server exited with code 1); its output:"
    )
    assert message.endswith("(ModuleNotFoundError: No module named 'llama_cpp')\n")
    assert (server.is_running(), server.pid, server.port) == (False, None, None)
