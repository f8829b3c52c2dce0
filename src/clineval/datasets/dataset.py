"""A dataset: validated cases plus where they came from, and the cases' fingerprint.

Its own module so that the file loaders (:mod:`clineval.datasets.loaders`) and the folder
formats (:mod:`clineval.datasets.formats`) both name it without importing each other.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from clineval.model import Case

__all__ = ["Dataset", "fingerprint_cases"]


@dataclass
class Dataset:
    """Validated cases plus where they came from."""

    cases: list[Case]
    source: str
    metadata_columns: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def fingerprint(self) -> str:
        return fingerprint_cases(self.cases)


def fingerprint_cases(cases: Iterable[Case]) -> str:
    """A SHA-256 (first 16 hex digits) of the cases' canonical JSON: same data, same print."""
    digest = hashlib.sha256()
    for case in cases:
        _fingerprint_update(digest, case)
    return digest.hexdigest()[:16]


def _fingerprint_update(digest: Any, case: Case) -> None:
    digest.update(json.dumps(case.model_dump(mode="json"), sort_keys=True).encode("utf-8"))
    digest.update(b"\n")
