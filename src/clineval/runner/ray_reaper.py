"""Ending a local Ray instance's processes when the clineval process that started it dies.

A driver that starts a local Ray instance (``--executor ray`` without ``--ray-address``)
stops it at exit (``ray.shutdown``). Killed with SIGKILL, it cannot: Ray's GCS server and
raylet notice and end, but two of the raylet's agents (``ray::DashboardAgent`` and
``ray::RuntimeEnvAgent``, Ray 2.60) are left running, re-parented to init. So right after
starting the instance, clineval starts a small watcher (:func:`watch`) in a session of
its own, holding the read end of a pipe whose write end only the driver has: when the
driver ends, however it ends, the pipe closes and the watcher ends every process that
still has a file of the instance's session folder open or names it on its command line
(SIGTERM, then SIGKILL after two seconds). Linux only (it reads ``/proc``); elsewhere
``ray stop`` ends the processes (see docs/ray.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

_GRACE_S = 2.0
_WATCHER = "from clineval.runner.ray_reaper import watch; watch({folder!r})"


def start_watcher(session_dir: str) -> subprocess.Popen[bytes] | None:
    """Start the watcher of a local Ray instance's session (None where ``/proc`` is missing).

    The pipe's write end stays open in this process only (it is not inheritable, and the
    Ray processes were started before it), so the watcher sees its end when this process ends.
    """
    if not Path("/proc/self/fd").is_dir():
        return None
    return subprocess.Popen(
        [sys.executable, "-c", _WATCHER.format(folder=session_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a kill of the driver's process group does not reach it
    )


def watch(session_dir: str) -> None:
    """Wait for the end of standard input (the driver's end), then end the session's processes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        while sys.stdin.buffer.read(4096):
            pass
    end_session(session_dir)


def end_session(session_dir: str, grace_s: float = _GRACE_S) -> list[int]:
    """End every process that uses ``session_dir`` (SIGTERM, then SIGKILL); their PIDs."""
    found = session_processes(session_dir)
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    left = found
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [pid for pid in left if _alive(pid)]
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return found


def session_processes(session_dir: str) -> list[int]:
    """The processes (not this one) with a file of ``session_dir`` open or its path in their command line."""
    folder = session_dir.rstrip("/")
    mine = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == mine:
            continue
        try:
            if folder.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
                continue
            for fd in (entry / "fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target == folder or target.startswith(folder + "/"):
                        found.append(int(entry.name))
                        break
        except OSError:
            continue  # gone, or not ours to look at
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie (ended, not yet reaped by its parent) counts as gone
        return (Path("/proc") / str(pid) / "stat").read_text().split(") ")[-1][:1] != "Z"
    except OSError:
        return False
