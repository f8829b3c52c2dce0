"""Cases read one at a time, never all in memory: what ``keep_results=False`` runs take.

A :class:`CaseStream` knows, before it is read, how many cases it gives, a fingerprint of
them, where they come from and which metadata columns they carry (the run record needs all
four before the first case is stored); iterating it reads the cases again, one at a time.
:class:`~clineval.datasets.loaders.StreamedDataset` is a JSONL file read this way;
:class:`GeneratedCases` is any function that yields cases (a trace store's conversations,
assembled a batch at a time, for one).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from clineval.errors import DatasetError
from clineval.model import Case

__all__ = ["CaseStream", "GeneratedCases"]


class CaseStream(ABC):
    """Cases counted and fingerprinted up front, read again on each iteration."""

    source: str
    n_cases: int
    fingerprint_value: str
    metadata_columns: list[str]

    def __len__(self) -> int:
        return self.n_cases

    def fingerprint(self) -> str:
        return self.fingerprint_value

    @abstractmethod
    def __iter__(self) -> Iterator[Case]: ...


@dataclass
class GeneratedCases(CaseStream):
    """The cases ``read()`` yields; reading them must give ``n_cases`` cases each time, or
    the iteration ends with a :class:`~clineval.errors.DatasetError` (the source changed
    while the run started)."""

    read: Callable[[], Iterable[Case]]
    source: str
    n_cases: int
    fingerprint_value: str
    metadata_columns: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[Case]:
        n = 0
        for case in self.read():
            n += 1
            if n > self.n_cases:
                break
            yield case
        if n != self.n_cases:
            raise DatasetError(
                f"{self.source}: gave {n if n <= self.n_cases else 'more than ' + str(self.n_cases)} "
                f"case(s) where {self.n_cases} were counted; the source changed while it was read, run again"
            )
