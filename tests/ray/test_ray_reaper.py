"""A driver killed with SIGKILL leaves no process of the local Ray instance it started.

The fast test plays the driver's part without Ray: a driver process starts a "Ray
process" that keeps a file of a session folder open (as Ray's agents do), then the
watcher; the driver is killed with SIGKILL and the orphaned process must end, while a
process outside the session is left alone. The slow test does it with a real local Ray
instance started by clineval (``connect(None)``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from clineval.runner.ray_reaper import _alive, session_processes

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="the watcher reads /proc (Linux)")

HOLDER = "import sys, time; handle = open(sys.argv[1], 'w'); print('ready', flush=True); time.sleep(600)"


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_processes_of_a_killed_drivers_session_end(tmp_path: Path) -> None:
    session = tmp_path / "session_test"
    (session / "logs").mkdir(parents=True)
    driver_code = textwrap.dedent(
        f"""
        import subprocess, sys, time
        from clineval.runner.ray_reaper import start_watcher
        holder = subprocess.Popen([sys.executable, "-c", {HOLDER!r}, {str(session / "logs" / "agent.out")!r}],
                                  stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline() == "ready\\n"
        watcher = start_watcher({str(session)!r})
        print(holder.pid, watcher.pid, flush=True)
        time.sleep(600)
        """
    )
    outsider = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    driver = subprocess.Popen([sys.executable, "-c", driver_code], stdout=subprocess.PIPE, text=True)
    try:
        assert driver.stdout is not None
        holder, watcher = (int(x) for x in driver.stdout.readline().split())
        assert holder in session_processes(
            str(session)
        )  # (the driver's and watcher's command lines name it too)
        driver.kill()  # SIGKILL: no exit handler of the driver runs
        driver.wait(10)
        assert _wait_gone(holder, 10), "the session's process outlived its driver"
        assert _wait_gone(watcher, 10), "the watcher did not end"
        assert outsider.poll() is None  # a process outside the session is left alone
        assert session_processes(str(session)) == []
    finally:
        for pid in (driver.pid,):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        outsider.kill()
        outsider.wait(10)


@pytest.mark.slow
def test_sigkill_of_a_ray_driver_leaves_no_ray_process(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    driver_code = textwrap.dedent(
        """
        import time
        from clineval.runner.ray_executor import connect
        ray = connect(None)
        print(ray._private.worker.global_worker.node.get_session_dir_path(), flush=True)
        time.sleep(600)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    driver = subprocess.Popen([sys.executable, "-c", driver_code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert driver.stdout is not None
        session = driver.stdout.readline().strip()
        assert session and len(session_processes(session)) >= 4  # GCS, raylet, agents, workers
        driver.kill()
        driver.wait(10)
        deadline = time.monotonic() + 30
        while session_processes(session) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [p for p in session_processes(session) if _alive(p)] == []
    finally:
        if driver.poll() is None:
            driver.kill()
