"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from clineval.testing import ScriptedServer

# --- scripted OpenAI-compatible server (clineval.testing.server) -------------------


@pytest.fixture(scope="session")
def openai_server() -> Iterator[ScriptedServer]:
    """One scripted server process for the whole session."""
    server = ScriptedServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def llm_server(openai_server: ScriptedServer) -> Iterator[ScriptedServer]:
    """The session's server with no rules, an empty request log and zeroed counters."""
    openai_server.reset()
    yield openai_server
