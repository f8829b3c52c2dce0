"""Where a run came from: code version of the evaluated project, packages, platform."""

from __future__ import annotations

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
    versions: dict[str, str] = {}
    for name in (*TRACKED_PACKAGES, *extra):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def python_version() -> str:
    return sys.version.split()[0]


def platform_name() -> str:
    return platform.platform(terse=True)


def git_info(folder: str | Path | None = None) -> GitInfo | None:
    """The commit checked out in ``folder`` (default: the working directory), if it is a git checkout."""
    cwd = str(folder or Path.cwd())

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    status = git("status", "--porcelain", "--untracked-files=no")
    branch = git("rev-parse", "--abbrev-ref", "HEAD")
    return GitInfo(commit=commit, dirty=bool(status), branch=branch if branch != "HEAD" else None)


def new_run_id(now: float | None = None) -> str:
    """``YYYYMMDD-HHMMSS-xxxx``: sortable by time, unique with a random suffix."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now or time.time()))
    return f"{stamp}-{secrets.token_hex(2)}"
