"""Errors that reach users.

Every error a user can cause by mistake (a bad data row, an unknown metric name, a
config field of the wrong type) derives from :class:`ClinevalError`. The CLI prints
these as one clear message and exits with status 2, without a traceback. Anything
else is a bug in clineval and keeps its traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class ClinevalError(Exception):
    """A mistake in user input: printed without a traceback."""


class DatasetError(ClinevalError):
    """A dataset file, row or field that cannot become a case."""


class ColumnMappingError(DatasetError):
    """A column mapping names a column that no row of the dataset has."""


class ConfigError(ClinevalError):
    """A run configuration, CLI option or import path that is not usable."""


class MetricNotFoundError(ConfigError):
    """A metric name that is neither registered nor importable."""


class StoreError(ClinevalError):
    """A run id or store path that does not resolve, or a store that cannot be used."""


class StoreAccessError(StoreError):
    """The store (or the folder for it) cannot be read or written: permission denied, read-only."""


class StoreFullError(StoreError):
    """SQLite reported a full disk (or a full store) while writing."""


class StoreDamagedError(StoreError):
    """The store file is corrupt (damaged pages) or not an SQLite database."""


class StoreVersionError(StoreError):
    """The store was made by a newer clineval (a newer schema version)."""


class RunLockedError(StoreError):
    """The run is being run by another live process, which holds the run's lock."""


class IncompleteRunError(ClinevalError):
    """A gate (or ``compare --fail-on-regression``) was asked to judge a run that is not complete."""


class JudgeConfigurationError(ClinevalError):
    """The judge endpoint refused the credentials, the model or the request shape.

    Retrying does not help, so the run stops early (keeping everything already
    scored) and can be resumed once the setting is fixed.
    """


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C; everything finished before is in the store."""

    def __init__(self, run_id: str, resume_hint: str):
        super().__init__(run_id)
        self.run_id = run_id
        self.resume_hint = resume_hint


_warned: set[str] = set()


def warn_once(message: str) -> None:
    """Print ``warning: message`` on standard error, once per process for each message.

    For things a user should know that do not stop the work (a judge cache that cannot be
    written, a key that is not sent to an endpoint); Python's ``warnings`` would print
    the source line of the call, which means nothing to a user."""
    if message in _warned:
        return
    _warned.add(message)
    import sys

    print(f"warning: {message}", file=sys.stderr, flush=True)


def field_errors(exc: ValidationError, *, unknown: str = "unknown field") -> list[str]:
    """One ``field 'a.b': problem`` line per problem of a pydantic validation error."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()))
        msg = unknown if err.get("type") == "extra_forbidden" else str(err.get("msg", "invalid"))
        msg = msg.removeprefix("Value error, ")
        lines.append(f"field '{loc}': {msg}")
    return lines
