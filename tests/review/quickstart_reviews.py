"""The quickstart run with two reviewers' verdicts on six cases, for the tests of
`clineval agreement --reviews` and `clineval calibrate --reviews`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from clineval.model import ReviewRecord
from clineval.review.data import items_of, review_schema
from clineval.store.reviews import ReviewStore
from clineval.store.sqlite import RunStore

if TYPE_CHECKING:
    from tests.conftest import QuickstartRun

CASES = ["sum-001", "sum-002", "sum-003", "tool-001", "tool-002", "tool-003"]


def reviewed_store(quickstart_run: QuickstartRun, folder: Path) -> tuple[Path, str]:
    """The quickstart run with two reviewers' verdicts on six cases: the case's factuality, and
    every fact (ann agrees with the judge except on every third fact; bob on every fourth)."""
    store_path = folder / "q.db"
    quickstart_run.copy_into(store_path)
    with RunStore(store_path) as store:
        record = store.get_run(quickstart_run.run_id)
        schema = review_schema(record)
        rows: list[ReviewRecord] = []
        for n, case_id in enumerate(CASES):
            _, results, items = items_of(store, record, case_id, schema)
            tbfact = next(r for r in results if r.metric == "tbfact")
            for who, every in (("ann", 3), ("bob", 4)):
                good = (tbfact.score.value or 0) >= 0.45
                verdict = "correct" if good else ("partly" if n % 2 else "incorrect")
                if who == "bob" and n == 0:
                    verdict = "partly"
                rows.append(
                    ReviewRecord(
                        run_id=record.id, case_id=case_id, scale="factuality", reviewer=who, verdict=verdict
                    )
                )
                for i, item in enumerate(i for i in items.items if i.kind == "fact"):
                    assert item.judge is not None
                    said = item.judge.verdict
                    flipped = {"entailed": "not", "partly": "entailed", "not": "partly"}[said]
                    rows.append(
                        ReviewRecord(
                            run_id=record.id,
                            case_id=case_id,
                            item=item.id,
                            scale="verdict",
                            reviewer=who,
                            verdict=flipped if i % every == 0 else said,
                        )
                    )
        ReviewStore(store).add_many(rows)
    return store_path, quickstart_run.run_id
