"""Export a run: JSONL (one case per line with its output and every score), one JSON
document (``{"run", "aggregates", "cases"}``: the run record, the aggregate rows and the
JSONL's case rows), or CSV tables.

A :class:`~clineval.results.stored.StoredResult` (``clineval export``) is written as it is
read from the store, a chunk of cases at a time, in bounded memory; the file is the same
as the one written from a result held in memory. For the CSV tables, a first pass finds
the columns and what pandas would make of each (a column of whole numbers with a gap
is written as floats, as a whole table would have it), a second writes the chunks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from clineval.model import Case, ResultRecord
from clineval.redaction import Masker, redact, redact_data
from clineval.results.frames import LONG_COLUMNS, long_rows, wide_rows
from clineval.results.result import EvalResult
from clineval.results.stored import StoredResult

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
    return [_jsonl_record(result.run.id, case, by_case.get(case.id, {})) for case in result.cases]


def _scores(results: list[ResultRecord]) -> dict[str, Any]:
    return {
        record.metric: {
            **record.score.model_dump(mode="json"),
            "usage": record.usage.model_dump(),
            "duration_s": record.duration_s,
        }
        for record in results
    }


def _jsonl_record(run_id: str, case: Case, scores: dict[str, Any]) -> dict[str, Any]:
    return redact_data(_jsonl_row(run_id, case, scores))  # type: ignore[no-any-return]


def _jsonl_row(run_id: str, case: Case, scores: dict[str, Any]) -> dict[str, Any]:
    return {"run_id": run_id, "case": case.model_dump(mode="json", exclude_none=True), "scores": scores}


def _write_json(result: EvalResult, rows: Iterator[dict[str, Any]], handle: IO[str]) -> None:
    """One JSON document, written a case at a time: ``{"run": ..., "aggregates": [...],
    "cases": [...]}`` (secrets masked, as everywhere)."""
    masker = Masker()
    handle.write('{"run": ' + masker.dumps(result.run.model_dump(mode="json")))
    aggregates = [row.model_dump(mode="json") for row in result.aggregate()]
    handle.write(',\n"aggregates": ' + masker.dumps(aggregates) + ',\n"cases": [')
    for i, row in enumerate(rows):
        handle.write(("," if i else "") + "\n" + masker.dumps(row))
    handle.write("\n]}\n")


def export_run(result: EvalResult, fmt: str, target: Path | IO[str]) -> None:
    """Write ``fmt`` (``jsonl``, ``json``, ``csv``, ``long-csv`` or, for a run with repeats, ``trials-csv``)
    to a path or an open text stream.

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
    if fmt == "trials-csv":
        _write_trials(result, handle)
        return
    if isinstance(result, StoredResult) and result._results is None:
        _write_streamed(result, fmt, handle)
        return
    if fmt == "jsonl":
        for row in jsonl_records(result):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    elif fmt == "json":
        _write_json(result, iter(jsonl_records(result)), handle)
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


#: Cases (or results, for long-csv) per chunk written by pandas.
_CSV_CHUNK = 2000


def _write_streamed(result: StoredResult, fmt: str, handle: IO[str]) -> None:
    if fmt == "jsonl":
        masker = Masker()
        for case, results in result.iter_cases():
            handle.write(masker.dumps(_jsonl_row(result.run.id, case, _scores(results))) + "\n")
        return
    if fmt == "json":
        rows = (_jsonl_row(result.run.id, case, _scores(found)) for case, found in result.iter_cases())
        _write_json(result, rows, handle)
        return
    if fmt == "csv":
        with result._store() as store:
            seen = (str(row[0]) for row in store.iter_result_rows(result.run.id, "metric"))
            order = list(dict.fromkeys([*result.run.metrics, *seen]))

        def wide() -> Iterator[list[dict[str, Any]]]:
            cases: list[Case] = []
            results: list[ResultRecord] = []
            for case, found in result.iter_cases():
                cases.append(case)
                results += found
                if len(cases) >= _CSV_CHUNK:
                    yield wide_rows(cases, results, order)
                    cases, results = [], []
            if cases:
                yield wide_rows(cases, results, order)

        _write_csv(wide, handle, drop_empty_annotations=True)
    elif fmt == "long-csv":

        def long() -> Iterator[list[dict[str, Any]]]:
            with result._store() as store:
                chunk: list[ResultRecord] = []
                for record in store.iter_results(result.run.id):
                    chunk.append(record)
                    if len(chunk) >= _CSV_CHUNK:
                        yield long_rows(chunk)
                        chunk = []
                if chunk:
                    yield long_rows(chunk)

        _write_csv(long, handle, columns=LONG_COLUMNS)
    else:
        raise ValueError(f"unknown export format {fmt!r}")


def _write_trials(result: EvalResult, handle: IO[str]) -> None:
    """``trials-csv``: one row per (case, trial, metric) of a run with repeats (from its store)."""
    from clineval.store.sqlite import RunStore
    from clineval.store.trials import TRIAL_COLUMNS, iter_trial_rows

    if result.store_path is None or result.store_path == ":memory:":
        raise ValueError("trials-csv reads the trials from the run store; this run was kept in memory only")

    def rows() -> Iterator[list[dict[str, Any]]]:
        with RunStore(result.store_path or "", readonly=True) as store:
            chunk: list[dict[str, Any]] = []
            for row in iter_trial_rows(store, result.run.id):
                chunk.append(row)
                if len(chunk) >= _CSV_CHUNK:
                    yield chunk
                    chunk = []
            if chunk:
                yield chunk

    _write_csv(rows, handle, columns=list(TRIAL_COLUMNS))


class _Column:
    """What a pass over a column's values saw: enough to write it as a whole table would."""

    __slots__ = ("filled", "floats", "gaps", "ints", "others")

    def __init__(self) -> None:
        self.floats = self.gaps = self.ints = self.others = self.filled = False

    def see(self, value: Any) -> None:
        if value is None:
            self.gaps = True
            return
        self.filled = True
        if isinstance(value, bool):
            self.others = True
        elif isinstance(value, int):
            self.ints = True
        elif isinstance(value, float):
            self.floats = True
        else:
            self.others = True

    @property
    def as_float(self) -> bool:
        """pandas makes a column of numbers with a gap, or of ints and floats, a float column."""
        return self.ints and not self.others and (self.gaps or self.floats)


def _write_csv(
    chunks: Callable[[], Iterator[list[dict[str, Any]]]],
    handle: IO[str],
    *,
    columns: list[str] | None = None,
    drop_empty_annotations: bool = False,
) -> None:
    """Write the rows of ``chunks()`` (called twice) as one CSV table, as pandas writes the
    whole table (``DataFrame(rows).to_csv``), with secrets masked as in :func:`_masked`."""
    import pandas as pd

    seen: dict[str, _Column] = {name: _Column() for name in columns or []}
    n_rows = 0
    for rows in chunks():
        for row in rows:
            n_rows += 1
            for name in seen.keys() - row.keys():
                seen[name].gaps = True
            for name, value in row.items():
                column = seen.get(name)
                if column is None:
                    column = seen[name] = _Column()
                    if n_rows > 1:
                        column.gaps = True  # absent from the rows before
                column.see(value)
    names = [n for n, c in seen.items() if not (drop_empty_annotations and "/" in n and not c.filled)]
    as_float = [n for n in names if seen[n].as_float]
    header = [redact(n) for n in names]
    if n_rows == 0:
        pd.DataFrame(columns=header).to_csv(handle, index=False)
        return
    first = True
    masker = Masker()
    for rows in chunks():
        for row in rows:
            for name in as_float:
                value = row.get(name)
                if isinstance(value, int):
                    row[name] = float(value)
            if not masker.nothing_to_mask(json.dumps(row, ensure_ascii=False)):
                for name, value in row.items():
                    if isinstance(value, str):
                        row[name] = masker.text(value)
        frame = pd.DataFrame(rows, columns=names, dtype=object)
        frame.columns = header
        frame.to_csv(handle, index=False, header=first)
        first = False
