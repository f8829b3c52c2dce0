"""Export a run: JSONL (one case per line with its output and every score), or CSV tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from clineval.redaction import redact, redact_data
from clineval.results.result import EvalResult

if TYPE_CHECKING:
    import pandas as pd


def jsonl_records(result: EvalResult) -> list[dict[str, Any]]:
    """One dict per case: the case (with the agent's output) and ``scores`` by metric.

    Secrets are masked (:mod:`clineval.redaction`), as in everything exported."""
    by_case: dict[str, dict[str, Any]] = {}
    for record in result.results:
        by_case.setdefault(record.case_id, {})[record.metric] = {
            **record.score.model_dump(mode="json"),
            "usage": record.usage.model_dump(),
            "duration_s": record.duration_s,
        }
    rows = []
    for case in result.cases:
        rows.append(
            {
                "run_id": result.run.id,
                "case": case.model_dump(mode="json", exclude_none=True),
                "scores": by_case.get(case.id, {}),
            }
        )
    return [redact_data(row) for row in rows]


def export_run(result: EvalResult, fmt: str, target: Path | IO[str]) -> None:
    """Write ``fmt`` (``jsonl``, ``csv`` or ``long-csv``) to a path or an open text stream.

    A path that cannot be written raises :class:`OSError` (the CLI turns it into one line);
    a file left half-written (a full disk) is removed.
    """
    if isinstance(target, Path):
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = target.open("w", encoding="utf-8", newline="")
        try:
            with handle:
                _write(result, fmt, handle)
        except OSError:  # e.g. a full disk: leave no truncated export behind
            target.unlink(missing_ok=True)
            raise
    else:
        _write(result, fmt, target)


def _write(result: EvalResult, fmt: str, handle: IO[str]) -> None:
    if fmt == "jsonl":
        for row in jsonl_records(result):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        _masked(result.to_pandas()).to_csv(handle, index=False)
    elif fmt == "long-csv":
        _masked(result.to_pandas(long=True)).to_csv(handle, index=False)
    else:
        raise ValueError(f"unknown export format {fmt!r}")


def _masked(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with secrets masked in every text cell and column name."""
    masked = frame.map(lambda value: redact(value) if isinstance(value, str) else value)
    masked.columns = [redact(c) if isinstance(c, str) else c for c in masked.columns]
    return masked
