"""The run store: runs, cases, agent outputs and results in SQLite."""

from clineval.store.sqlite import DEFAULT_STORE, RunStore

__all__ = ["DEFAULT_STORE", "RunStore"]
