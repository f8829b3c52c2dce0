"""Fixtures of the browser tests: the store and viewer (once per session), the browser, a tab.

See tests/browser/helpers.py for what they hold and how to run them.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
from tests.browser.helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LOCAL_HOSTS,
    Fixture,
    Watch,
    build_store,
    skip_or_fail,
    start_viewer,
)

if TYPE_CHECKING:
    from tests.conftest import QuickstartRun


@pytest.fixture(scope="session")
def viewer(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Fixture]:
    """The session's store with every kind of run, served by `clineval view`."""
    reuse = os.environ.get("CLINEVAL_BROWSER_STORE_DIR")  # development: keep the store between sessions
    if reuse and (Path(reuse) / "runs.json").exists():
        fx = Fixture(store=Path(reuse) / "store.db", workdir=Path(reuse))
        fx.runs = json.loads((Path(reuse) / "runs.json").read_text(encoding="utf-8"))
    else:
        workdir = Path(reuse) if reuse else tmp_path_factory.mktemp("viewer-store")
        workdir.mkdir(parents=True, exist_ok=True)
        quickstart: QuickstartRun = request.getfixturevalue("quickstart_run")  # only when building
        fx = build_store(workdir, quickstart)
        (workdir / "runs.json").write_text(json.dumps(fx.runs), encoding="utf-8")
    proc = start_viewer(fx)
    try:
        yield fx
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- the browser ------------------------------------------------------------------------


# Package scope, not session: Playwright's sync API keeps its event loop set as running on the
# main thread while it is open, and every later test that starts an event loop would fail.
@pytest.fixture(scope="package")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium (the system's) with a fresh user-data dir, for the browser tests."""
    if not CHROMIUM.exists():
        skip_or_fail(f"{CHROMIUM} not found")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError as exc:
        skip_or_fail(f"Playwright for Python is not installed ({exc})")
        raise  # unreachable
    expect.set_options(timeout=15_000)
    user_data = tempfile.mkdtemp(prefix="clineval-chromium-", dir=tmp_path_factory.getbasetemp())
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            user_data,
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(15_000)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
def page(browser_context: Any, watch: Watch) -> Iterator[Any]:
    """A fresh tab. Any request to a host other than 127.0.0.1 is aborted and recorded;
    any dialog (alert, confirm) is recorded and dismissed."""

    def route(route: Any) -> None:
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about", "file") or parts.hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            watch.foreign.append(url)
            route.abort()

    tab = browser_context.new_page()
    tab.route("**/*", route)
    tab.on("dialog", lambda dialog: (watch.dialogs.append(dialog.message), dialog.dismiss()))
    tab.on("pageerror", lambda exc: watch.errors.append(str(exc)))
    try:
        yield tab
    finally:
        tab.close()
    assert not watch.foreign, f"the page requested hosts other than 127.0.0.1: {watch.foreign}"
    assert not watch.dialogs, f"a dialog opened: {watch.dialogs}"
