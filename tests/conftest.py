"""Shared pytest fixtures."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from clineval.testing import ScriptedServer


def pytest_configure(config: pytest.Config) -> None:
    """A suite started in the background of a non-interactive shell ("./.ci/run &", nohup)
    inherits SIGINT ignored, and so would every command the tests start: the tests of Ctrl-C
    would then wait for an interrupt that never comes. Take SIGINT back (commands started
    from here get the default disposition)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # the developer's CLINEVAL_* / OPENAI_* / AZURE_* variables, gone before any fixture of a
    # module or the session is made (_clean_environment does it again for every test)
    for name in _developer_variables():
        del os.environ[name]
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # pytest-xdist gives its workers COLUMNS=80 and LINES=24; without them clineval prints
        # as wide as it does with no terminal (CI), which is what the tests read
        for name in ("COLUMNS", "LINES"):
            os.environ.pop(name, None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The default run is on two pytest-xdist workers (``-n 2 --dist loadgroup`` in
    pyproject.toml; ``-n 0`` for one process). A test file's tests stay on one worker, so a
    module's fixture (a local Ray instance, a viewer, a store) is made once; every browser
    test runs on the same worker, since they share one store and one viewer per session."""
    for item in items:
        path = Path(str(item.fspath))
        item.add_marker(pytest.mark.xdist_group("browser" if "browser" in path.parts else str(path)))


# Variables that steer the test run itself (opt-in suites, the browser), not clineval.
_TEST_SWITCHES = frozenset(
    {
        "CLINEVAL_LLM_TESTS",
        "CLINEVAL_LLM_VENV",
        "CLINEVAL_SKIP_BROWSER",
        "CLINEVAL_CHROMIUM",
        "CLINEVAL_UPDATE_SCREENSHOTS",
        "CLINEVAL_BROWSER_STORE_DIR",
    }
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts without the developer's CLINEVAL_* / OPENAI_* / AZURE_* variables
    (a CLINEVAL_JUDGE or OPENAI_API_KEY in the shell would change what commands do); the
    switches of the test run itself stay. Commands the tests start inherit the cleaned
    environment."""
    for name in _developer_variables():
        monkeypatch.delenv(name)


def _developer_variables() -> list[str]:
    return [
        name
        for name in os.environ
        if name.startswith(("CLINEVAL_", "OPENAI_", "AZURE_")) and name not in _TEST_SWITCHES
    ]


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


# --- the quickstart, run once (tests/cli, tests/viewer, tests/browser) -------------------

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class QuickstartRun:
    """`clineval run examples/quickstart/quickstart.yaml`, as a user runs it: the installed
    command, offline (proxies that go nowhere), the default judge. ``store`` is shared: read
    it, or copy it with ``copy_into`` before writing."""

    done: subprocess.CompletedProcess[str]
    store: Path
    run_id: str

    def copy_into(self, target: Path) -> None:
        """A store at ``target`` holding this run (SQLite's online backup: WAL included)."""
        with sqlite3.connect(self.store) as source, sqlite3.connect(target) as copy:
            source.backup(copy)


@pytest.fixture(scope="session")
def quickstart_run(tmp_path_factory: pytest.TempPathFactory) -> QuickstartRun:
    """The quickstart's run, once per session (about 10 s of CPU each time it is run)."""
    command = shutil.which("clineval")
    assert command is not None, "the console script 'clineval' is not installed"
    folder = tmp_path_factory.mktemp("quickstart")
    store = folder / "q.db"
    done = subprocess.run(
        [command, "run", str(REPO / "examples/quickstart/quickstart.yaml"), "--store", str(store), "-q"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "CLINEVAL_JUDGE": "",
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
        },
    )
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(store) as conn:
        ((run_id,),) = conn.execute("SELECT id FROM runs").fetchall()
    return QuickstartRun(done=done, store=store, run_id=run_id)
