"""Speed of the offline judge on a real note pair (ACI-Bench, shared data; opt-in: -m slow)."""

from __future__ import annotations

import asyncio
import csv
import time
from pathlib import Path

import pytest

from clineval.judges.offline import OfflinePrimitives

ACI = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "aci-bench"


def _notes(name: str) -> list[str]:
    csv.field_size_limit(10**8)
    with (ACI / name).open(encoding="utf-8", newline="") as handle:
        return [row["note"] for row in csv.DictReader(handle)]


@pytest.mark.slow
@pytest.mark.skipif(not ACI.is_dir(), reason="ACI-Bench data not available")
def test_an_aci_bench_pair_scores_in_under_two_seconds(primitives: OfflinePrimitives) -> None:
    references = _notes("clinicalnlp_taskB_test1.csv")
    systems = _notes("pred_BART_large_clinicalnlp_taskB_test1_full.csv")
    primitives.encoder.encode(["warm"])  # the model load is not part of the budget

    async def score(a: str, b: str) -> int:
        fa, fb = await asyncio.gather(primitives.extract_facts(a), primitives.extract_facts(b))
        va, vb = await asyncio.gather(
            primitives.check_facts([f.text for f in fa], b), primitives.check_facts([f.text for f in fb], a)
        )
        assert len(va) == len(fa) and len(vb) == len(fb)
        return len(fa) + len(fb)

    times = []
    for index in (5, 17, 33):
        started = time.perf_counter()
        assert asyncio.run(score(references[index], systems[index])) > 20
        times.append(time.perf_counter() - started)
    assert max(times) < 2.0, times
