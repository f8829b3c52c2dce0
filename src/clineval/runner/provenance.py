"""Where a run came from: code version of the evaluated project, packages, platform."""

from __future__ import annotations

import functools
import importlib.metadata
import platform
import secrets
import subprocess
import sys
import time
from pathlib import Path

from clineval.model import GitInfo

#: Packages whose versions shape results; recorded with every run when installed.
TRACKED_PACKAGES = ("clineval", "pydantic", "openai", "rouge-score", "sacrebleu", "numpy", "scipy", "pandas")


def clineval_version() -> str:
    try:
        return importlib.metadata.version("clineval")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def package_versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """The installed versions of :data:`TRACKED_PACKAGES` and ``extra`` (those installed)."""
    return dict(_versions((*TRACKED_PACKAGES, *extra)))


@functools.cache
def _versions(names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    # Read once per process: looking a distribution up scans sys.path (about 60 ms for the
    # tracked packages, per run), and the modules a process has imported keep their version
    # even if a newer one is installed meanwhile.
    found: list[tuple[str, str]] = []
    for name in names:
        try:
            found.append((name, importlib.metadata.version(name)))
        except importlib.metadata.PackageNotFoundError:
            continue
    return tuple(found)


def python_version() -> str:
    return sys.version.split()[0]


def platform_name() -> str:
    return platform.platform(terse=True)


def git_info(folder: str | Path | None = None) -> GitInfo | None:
    """The commit checked out in ``folder`` (default: the working directory), if it is a git checkout."""
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain=v2", "--branch", "--untracked-files=no"],
            cwd=str(folder or Path.cwd()),
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    commit, branch, dirty = None, None, False
    for line in done.stdout.splitlines():
        if line.startswith("# branch.oid "):
            commit = line.removeprefix("# branch.oid ").strip()
        elif line.startswith("# branch.head "):
            branch = line.removeprefix("# branch.head ").strip()
        elif not line.startswith("#"):
            dirty = True
    if not commit or commit == "(initial)":
        return None
    return GitInfo(commit=commit, dirty=dirty, branch=None if branch == "(detached)" else branch)


def new_run_id(now: float | None = None) -> str:
    """``YYYYMMDD-HHMMSS-xxxx``: sortable by time, unique with a random suffix."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now or time.time()))
    return f"{stamp}-{secrets.token_hex(2)}"
