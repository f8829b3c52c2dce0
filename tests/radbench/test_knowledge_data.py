"""The knowledge base as data files: the default records stay exactly what they were
before the move out of Python (snapshots taken from the Python knowledge base)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from clineval.environments.radbench.model import Record
from clineval.environments.radbench.records import generate_records

DATA = Path(__file__).parent / "data"


def _dump(records: list[Record]) -> list[dict[str, object]]:
    return [dict(r.model_dump(mode="json", by_alias=True), ID=r.id) for r in records]


def test_default_66_records_are_unchanged() -> None:
    lines = (DATA / "default_records_66_seed0.jsonl").read_text("utf-8").splitlines()
    expected = [json.loads(line) for line in lines]
    assert _dump(generate_records(66, seed=0)) == expected


def test_default_record_sets_are_unchanged() -> None:
    digests = json.loads((DATA / "default_records_digests.json").read_text("utf-8"))
    for key, digest in digests.items():
        n, seed = (int(x) for x in key.split("/"))
        text = json.dumps(_dump(generate_records(n, seed=seed)), ensure_ascii=False, sort_keys=True)
        assert hashlib.sha256(text.encode()).hexdigest() == digest, key
