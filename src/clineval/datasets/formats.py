"""Dataset formats contributed by plugins: what a folder given as a dataset is read as.

Files (``.jsonl``, ``.json``, ``.csv``) are read by :mod:`clineval.datasets.loaders`
itself. A folder is read by a format that a feature package registers (see
:mod:`clineval.plugins`), e.g. the multi-agent conversations package registers
``conversations``: a folder of saved conversations, one case per conversation. The loader
is named by import path and imported only when such a folder is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clineval.datasets.dataset import Dataset
from clineval.errors import ConfigError, DatasetError


@dataclass(frozen=True)
class FolderFormat:
    """A way to read a folder as a dataset."""

    name: str
    #: ``module:function``; the function takes the folder's path and returns a Dataset.
    loader: str
    #: One line for error messages and listings, e.g. "a folder of saved conversations".
    description: str


_FOLDER_FORMATS: dict[str, FolderFormat] = {}


def register_folder_format(name: str, loader: str, description: str) -> None:
    """Register a folder format (again with the same loader is a no-op)."""
    existing = _FOLDER_FORMATS.get(name)
    if existing is not None and existing.loader != loader:
        raise ConfigError(f"a dataset folder format named {name!r} is already registered ({existing.loader})")
    _FOLDER_FORMATS[name] = FolderFormat(name, loader, description)


def folder_formats() -> list[FolderFormat]:
    """Every registered folder format (plugins loaded first), sorted by name."""
    from clineval.plugins import load_plugins

    load_plugins()
    return [_FOLDER_FORMATS[k] for k in sorted(_FOLDER_FORMATS)]


def load_folder(path: Path, format: str | None = None) -> Dataset:
    """The dataset in folder ``path``, read by the format ``format`` names.

    Without ``format`` the one registered folder format reads it; when several are
    registered, ``format`` must say which.
    """
    from clineval.importing import import_object

    formats = {f.name: f for f in folder_formats()}
    listed = ", ".join(f"{f.name} ({f.description})" for f in formats.values()) or "none registered"
    if format:
        chosen = formats.get(format)
        if chosen is None:
            raise DatasetError(f"{path}: a folder cannot be read as {format!r}; folder formats: {listed}")
    elif len(formats) == 1:
        chosen = next(iter(formats.values()))
    else:
        raise DatasetError(f"{path}: is a folder; say which format reads it (format=...): {listed}")
    load = import_object(chosen.loader, what=f"dataset folder format {chosen.name!r}")
    dataset: Dataset = load(path)
    return dataset
