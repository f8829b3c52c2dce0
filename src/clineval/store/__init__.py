"""The run store: runs, cases, agent outputs and results in SQLite."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: Where runs are kept unless ``--store``, ``CLINEVAL_STORE`` or ``store=`` says otherwise.
#: Defined here rather than in clineval.store.sqlite so that the commands' ``--store``
#: option does not import the store, its data model and pydantic (start-up of ``--help``).
DEFAULT_STORE = ".clineval/clineval.db"

if TYPE_CHECKING:
    from clineval.store.sqlite import RunStore


def __getattr__(name: str) -> Any:
    if name == "RunStore":
        from clineval.store.sqlite import RunStore

        return RunStore
    raise AttributeError(f"module 'clineval.store' has no attribute {name!r}")


__all__ = ["DEFAULT_STORE", "RunStore"]
