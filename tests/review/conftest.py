"""A small run store for the review tests, built once per module with :func:`clineval.evaluate`.

Twelve cases: ten the agent answered with hand-made scores of two metrics (``alpha`` and
``beta``, read from the case's metadata), one the agent failed on (``c11``) and one that
``alpha`` and ``beta`` cannot score (``c12``, no metadata). TBFact with the offline judge
gives the cases facts. A second run (``other``) scores ``alpha`` again on the same cases
with other values, as a second judge would.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import clineval
from clineval.model import Case

#: alpha, beta by case (c11: the agent fails; c12: neither metric scores it).
SCORES: dict[str, tuple[float, float]] = {
    "c01": (0.0, 0.0),
    "c02": (0.0, 0.1),
    "c03": (0.0, 0.2),
    "c04": (0.1, 0.3),
    "c05": (0.2, 0.4),
    "c06": (0.5, 0.5),
    "c07": (0.5, 0.6),
    "c08": (0.8, 0.7),
    "c09": (0.9, 0.8),
    "c10": (1.0, 0.05),
    "c11": (0.3, 0.3),
}
#: alpha in the other run, where it differs from the first.
OTHER_ALPHA = {"c02": 0.9, "c04": 0.5, "c09": 0.7}
RESPONSES = [
    ("Metformin 500 mg twice daily. HbA1c is 8.1%.", "Metformin 500 mg twice daily. HbA1c is 7.2%."),
    ("Start aspirin 81 mg daily.", "Start aspirin 81 mg daily."),
    ("The patient has pneumonia. Give amoxicillin.", "The patient has bronchitis. No antibiotics."),
    ("Blood pressure is 150/90. Start lisinopril.", "Blood pressure is 150/90. Start lisinopril 10 mg."),
]


def alpha(case: Case) -> float:
    """A hand-made score (the case's metadata ``a``)."""
    return float(case.metadata["a"])


def beta(case: Case) -> float:
    """A second hand-made score (the case's metadata ``b``)."""
    return float(case.metadata["b"])


def agent(text: str) -> str:
    if text.startswith("FAIL"):
        raise RuntimeError("the agent could not answer")
    return text


def rows(alphas: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(1, 13):
        case_id = f"c{i:02d}"
        response, reference = RESPONSES[i % len(RESPONSES)]
        row: dict[str, Any] = {
            "id": case_id,
            "input": ("FAIL " if case_id == "c11" else "") + response,
            "reference": reference,
        }
        if case_id in SCORES:
            a, b = SCORES[case_id]
            row["metadata"] = {"a": (alphas or {}).get(case_id, a), "b": b}
        out.append(row)
    return out


@dataclass(frozen=True)
class ReviewStoreData:
    """The store and its two runs."""

    path: Path
    run_id: str
    other_id: str

    def copy(self, target: Path) -> Path:
        """A copy of the store at ``target`` (SQLite's online backup), to write to."""
        with sqlite3.connect(self.path) as source, sqlite3.connect(target) as copy:
            source.backup(copy)
        return target


def build_store(folder: Path) -> ReviewStoreData:
    path = folder / "reviews.db"
    first = clineval.evaluate(
        rows(), [alpha, beta, "tbfact"], agent=agent, store=str(path), progress=False, name="first"
    )
    other = clineval.evaluate(
        rows(OTHER_ALPHA), [alpha], agent=agent, store=str(path), progress=False, name="second judge"
    )
    return ReviewStoreData(path=path, run_id=first.run_id, other_id=other.run_id)


@pytest.fixture(scope="module")
def review_store(tmp_path_factory: pytest.TempPathFactory) -> ReviewStoreData:
    return build_store(tmp_path_factory.mktemp("review-store"))
