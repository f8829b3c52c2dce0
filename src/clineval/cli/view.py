"""``clineval view``: the local web viewer over a run store (read-only), and its review mode
(``--review``: clinicians' verdicts, written to the store's review tables)."""

from __future__ import annotations

import contextlib
import errno
import socket
import sys
import webbrowser
from pathlib import Path

import click

from clineval.cli.common import _require_store, err, friendly, out, store_option
from clineval.errors import ConfigError

LOCALHOST = "127.0.0.1"
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
#: Where review mode may listen: this machine, by a name the Host check accepts.
_REVIEW_HOSTS = ("127.0.0.1", "localhost")


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free port), or a clear error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"port {port} on {host} is already in use; choose another with --port N "
                "(or --port 0 for a free one)"
            ) from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise ConfigError(
                f"cannot listen on {host}:{port} (permission denied); use a port above 1023"
            ) from None
        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _url(host: str, port: int) -> str:
    shown = LOCALHOST if host in ("0.0.0.0", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


@click.command(name="view")
@click.argument("run_ref", required=False)
@store_option
@click.option(
    "--port",
    "-p",
    default=8765,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0: a free port).",
)
@click.option(
    "--host",
    default=LOCALHOST,
    show_default=True,
    help="Address to listen on; anything but localhost shares the runs with the network.",
)
@click.option("--no-open", is_flag=True, help="Do not open a browser.")
@click.option(
    "--review",
    is_flag=True,
    help="Review mode: give verdicts on cases and their facts (saved in the store); blind by default.",
)
@click.option(
    "--reviewer",
    default=None,
    help="Your name as a reviewer (default: env CLINEVAL_REVIEWER, else your login name).",
)
@click.option(
    "--unblind", is_flag=True, help="Review mode: show the scores and the judge's verdicts from the start."
)
@click.option(
    "--queue", "queue_ref", default=None, help="Review mode: open this review queue (id or unique prefix)."
)
@friendly
def view_command(
    run_ref: str | None,
    store_path: str,
    port: int,
    host: str,
    no_open: bool,
    review: bool,
    reviewer: str | None,
    unblind: bool,
    queue_ref: str | None,
) -> None:
    """Browse the run store in a local web viewer (read-only): runs, cases, evidence, comparisons.
    With --review, review cases in it (see docs/reviewing.md). RUN (an id, 'latest', a name
    or an id prefix): open that run's page."""
    if not review:
        given = [
            name
            for name, value in (("--reviewer", reviewer), ("--unblind", unblind), ("--queue", queue_ref))
            if value
        ]
        if given:
            raise ConfigError(f"{', '.join(given)}: only with --review (clineval view --review ...)")
    elif run_ref:
        raise ConfigError(f"{run_ref}: a run is opened without --review (review one with --queue)")
    elif host not in _REVIEW_HOSTS:
        raise ConfigError(
            f"--host {host}: review mode listens on 127.0.0.1 only (it writes to the store, with no "
            "login); reviewers on other machines run their own viewer on a copy or a shared store"
        )
    _require_store(store_path)
    import uvicorn

    from clineval.viewer.app import create_app

    settings = None
    start = f"runs/{_run_id(store_path, run_ref)}" if run_ref else ""
    if review:
        from clineval.viewer.review import ReviewSettings, reviewer_name

        queue_id = _queue_id(store_path, queue_ref) if queue_ref else None
        settings = ReviewSettings(reviewer=reviewer_name(reviewer), blind=not unblind, queue=queue_id)
        start = f"review/{queue_id}/next" if queue_id else "review"
    # On this machine only, answer only requests addressed to it by a local name (see create_app).
    allowed = ["127.0.0.1", "localhost"] if host in ("127.0.0.1", "localhost") else None
    # a damaged store (or, to review, one that cannot be written) fails here
    app = create_app(Path(store_path), warm=3, allowed_hosts=allowed, review=settings)
    sock = _bind(host, port)
    url = _url(host, sock.getsockname()[1])
    if host not in _LOCAL_HOSTS:
        err.print(
            f"[yellow]warning[/]: listening on {host}: anyone who can reach this machine on the network "
            "can read every run in this store (inputs, responses, scores); use the default "
            f"--host {LOCALHOST} to keep it to this machine",
            highlight=False,
            soft_wrap=True,
        )
    if settings is not None:
        mode = "blind: scores shown once you have answered a case" if settings.blind else "scores shown"
        out.print(
            f"clineval view --review: reviewing as {settings.reviewer} ({mode}) at {url}review"
            + (f", queue {settings.queue}: {url}{start}" if settings.queue else "")
            + f" · store {store_path} (Ctrl-C stops)",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        url += start
    else:
        url += start
        out.print(
            f"clineval view: {store_path} at {url} (read-only; Ctrl-C stops)", highlight=False, soft_wrap=True
        )
    sys.stdout.flush()
    if not no_open:
        with contextlib.suppress(Exception):  # no browser here: the URL is printed
            webbrowser.open(url)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def _run_id(store_path: str, ref: str) -> str:
    """The id of the run ``ref`` names, found as every command finds it (a clear error if none)."""
    from urllib.parse import quote

    from clineval.store.sqlite import RunStore

    store = RunStore(Path(store_path), readonly=True)
    try:
        return quote(store.get_run(ref).id, safe="")
    finally:
        store.close()


def _queue_id(store_path: str, ref: str) -> str:
    """The id of the review queue ``ref`` names (an id, a unique prefix or ``latest``)."""
    from clineval.store.reviews import ReviewStore
    from clineval.store.sqlite import RunStore

    store = RunStore(Path(store_path), readonly=True)
    try:
        return ReviewStore(store).get_queue(ref).id
    finally:
        store.close()
