"""Helpers of the browser tests (tests/browser): the store, the viewer process, screenshots.

End-to-end tests of `clineval view` and `clineval report` in a real headless Chromium.

The browser is Debian's `chromium` package (`apt-get install -y chromium`; `.ci/run` installs
it when it is missing), driven by Playwright for Python with the system browser: nothing is
downloaded (never `playwright install`). When the browser or Playwright is missing the tests
FAIL with the reason; set CLINEVAL_SKIP_BROWSER=1 to skip them instead.

One store is built per session, as a user builds one: the quickstart, the ASTRID patient
questions, a prior-authorization suite run and its regressed variant, a tumor-board
simulation, a radiology-benchmark run, and two runs whose case input is markup. Then the
viewer is started as a user starts it (`clineval view --store STORE --port 0 --no-open`) in a
subprocess, and every test opens pages in a fresh tab of one browser.

Screenshots of every page go to tests/browser/screenshots/ (git-ignored); with
CLINEVAL_UPDATE_SCREENSHOTS=1 the chosen ones are also copied to docs/images/. While working
on the viewer, CLINEVAL_BROWSER_STORE_DIR=DIR builds the store in DIR once and reuses it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.conftest import QuickstartRun

try:
    from playwright.sync_api import expect
except ImportError:  # the browser_context fixture says why the tests cannot run
    expect = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CHROMIUM = Path(os.environ.get("CLINEVAL_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
DOC_IMAGES = ROOT / "docs" / "images"
MAX_SHOT_HEIGHT = 4000
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCRIPT_XSS = "<script>alert(1)</script>"
IMG_XSS = '"><img src=x onerror=alert(1)>'
#: Hosts a page may load from: the viewer itself.
LOCAL_HOSTS = {"127.0.0.1"}


def skip_or_fail(reason: str) -> None:
    if os.environ.get("CLINEVAL_SKIP_BROWSER") == "1":
        pytest.skip(f"browser tests skipped (CLINEVAL_SKIP_BROWSER=1): {reason}")
    pytest.fail(
        f"browser tests cannot run: {reason}. Install Debian's chromium (`apt-get install -y chromium`, "
        "as .ci/run does) and the test extra (`pip install -c constraints.txt -e '.[test]'`), "
        "or set CLINEVAL_SKIP_BROWSER=1 to skip them.",
        pytrace=False,
    )


# --- the store -------------------------------------------------------------------------


@dataclass
class Fixture:
    """The session's store, its runs by role, and the running viewer."""

    store: Path
    workdir: Path
    runs: dict[str, str] = field(default_factory=dict)
    url: str = ""
    log: list[str] = field(default_factory=list)
    """What the viewer printed (its URL, then any traceback)."""

    def log_tail(self, n: int = 40) -> str:
        return "".join(self.log[-n:])


_SAVED = re.compile(r"Saved as run (\S+?)\.?\s")


def clineval_bin() -> str:
    exe = Path(sys.executable).with_name("clineval")
    return str(exe) if exe.exists() else "clineval"


def _write_markup_data(workdir: Path) -> tuple[Path, Path]:
    """Two one-case datasets whose input (and response and reference) is markup."""
    paths = []
    for name, text in (("script", SCRIPT_XSS), ("img", IMG_XSS)):
        path = workdir / f"xss_{name}.jsonl"
        case = {
            "id": f"xss-{name}",
            "input": text,
            "response": f"The answer repeats the input: {text}",
            "reference": f"Reference with markup {text} and a dose of 5 mg.",
        }
        path.write_text(json.dumps(case) + "\n", encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def _run_chain(commands: list[tuple[str, list[str]]], workdir: Path, env: dict[str, str]) -> dict[str, str]:
    """Run commands one after another; the run id each one saved, by role."""
    ids: dict[str, str] = {}
    for role, cmd in commands:
        proc = subprocess.run(
            cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        output = proc.stdout + proc.stderr
        match = _SAVED.search(output.replace("\n", " "))
        if proc.returncode != 0 or not match:
            raise RuntimeError(
                f"fixture command failed ({role}, exit {proc.returncode}): {cmd}\n{output[-3000:]}"
            )
        ids[role] = match.group(1)
    return ids


def build_store(workdir: Path, quickstart: QuickstartRun) -> Fixture:
    """Fill a fresh store as a user would, in two parallel chains of CLI commands (2 cores),
    on a copy of the session's quickstart run (tests/conftest.py)."""
    store = workdir / "store.db"
    fx = Fixture(store=store, workdir=workdir)
    quickstart.copy_into(store)
    fx.runs["quickstart"] = quickstart.run_id
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("CLINEVAL_STORE", None)
    env.pop("CLINEVAL_JUDGE", None)
    tumor_board = workdir / "tumor_board"
    shutil.copytree(EXAMPLES / "tumor_board", tumor_board, ignore=shutil.ignore_patterns("saved"))
    script_data, img_data = _write_markup_data(workdir)
    s = ["--store", str(store), "-q"]
    # Two chains of about equal length (measured alone: the tumor board 14 s, each prior-auth
    # suite 9-10 s, patient_qa 5 s, radbench 4 s, the markup runs 1-2 s each).
    chain_a = [
        ("patient_qa", [clineval_bin(), "run", str(EXAMPLES / "quickstart" / "patient_qa.yaml"), *s]),
        (
            "xss_script",
            [clineval_bin(), "run", "-d", str(script_data), "-m", "token_f1,exact_match",
             "--name", f"markup {SCRIPT_XSS}", "--tag", f"note={SCRIPT_XSS}", *s],
        ),
        (
            "xss_img",
            [clineval_bin(), "run", "-d", str(img_data), "-m", "token_f1,exact_match",
             "--name", f"markup {IMG_XSS}", *s],
        ),
        (
            "tumor_board",
            [clineval_bin(), "conversations", "simulate", str(tumor_board / "simulate.yaml"),
             "--trials", "1", *s],
        ),
    ]  # fmt: skip
    chain_b = [
        (
            "radbench",
            [clineval_bin(), "radbench", "run", "--core", "greedy", "-n", "2",
             "--condition", "baseline", "--condition", "insufficient_1", "--concurrency", "2", *s],
        ),
        ("prior_auth", [clineval_bin(), "run", str(EXAMPLES / "prior_auth" / "suite.yaml"), *s]),
        (
            "prior_auth_regressed",  # after prior_auth: the runs list shows it first
            [clineval_bin(), "run", str(EXAMPLES / "prior_auth" / "suite_regressed.yaml"), *s],
        ),
    ]  # fmt: skip
    results: dict[str, dict[str, str]] = {}
    errors: list[BaseException] = []

    def run(name: str, chain: list[tuple[str, list[str]]]) -> None:
        try:
            results[name] = _run_chain(chain, workdir, env)
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n, c)) for n, c in (("a", chain_a), ("b", chain_b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    for ids in results.values():
        fx.runs.update(ids)
    return fx


# --- the viewer -------------------------------------------------------------------------

_URL = re.compile(r"https?://127\.0\.0\.1:(\d+)\S*")


def view_command(fx: Fixture) -> list[str]:
    return [clineval_bin(), "view", "--store", str(fx.store), "--port", "0", "--no-open"]


def start_viewer(fx: Fixture) -> subprocess.Popen[str]:
    """`clineval view --store STORE --port 0 --no-open`; waits for the URL it prints."""
    proc = subprocess.Popen(
        view_command(fx),
        cwd=fx.workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    lines = fx.log
    found: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            match = _URL.search(line)
            if match and not found:
                found.append(f"http://127.0.0.1:{match.group(1)}")

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + 60
    while not found and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    if not found:
        proc.kill()
        raise RuntimeError("clineval view printed no URL:\n" + "".join(lines)[-3000:])
    fx.url = found[0]
    return proc


@dataclass
class Watch:
    """What a page did that a test checks: dialogs opened, requests that left 127.0.0.1."""

    dialogs: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def open_page(page: Any, viewer: Fixture, path: str) -> Any:
    """Go to PATH on the viewer; it must answer 200 (else the viewer's log is shown)."""
    response = page.goto(viewer.url.rstrip("/") + path)
    status = response.status if response is not None else None
    assert status == 200, f"{path}: HTTP {status}; the viewer printed:\n{viewer.log_tail()}"
    return response


def shot(
    page: Any, name: str, *, doc: str | None = None, element: Any = None, full_page: bool = True
) -> Path:
    """Save a screenshot as tests/browser/screenshots/NAME.png: the whole page (or the window,
    or one element, a Playwright locator). With CLINEVAL_UPDATE_SCREENSHOTS=1 and `doc`, also
    docs/images/DOC: the element, or the window at the top of the page (a readable size)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    if element is not None:
        element.screenshot(path=str(path))
    elif full_page:
        # the top MAX_SHOT_HEIGHT px of the page: tall pages (all sub-scores, long transcripts)
        # would cost seconds each and be unreadable anyway
        height = min(MAX_SHOT_HEIGHT, int(page.evaluate("document.documentElement.scrollHeight")))
        width = int(page.evaluate("document.documentElement.scrollWidth"))
        page.screenshot(
            path=str(path), full_page=True, clip={"x": 0, "y": 0, "width": width, "height": height}
        )
    else:
        page.screenshot(path=str(path))
    if doc and os.environ.get("CLINEVAL_UPDATE_SCREENSHOTS") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        if element is None and full_page:
            page.screenshot(path=str(DOC_IMAGES / doc))
        else:
            shutil.copyfile(path, DOC_IMAGES / doc)
    return path
