"""Bounded memory at any number of cases: streamed JSONL, the runner without kept results,
and show/export read from the store a chunk at a time (issue 14, item 2)."""

from __future__ import annotations

import gc
import io
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from clineval import evaluate
from clineval.api import load_run
from clineval.datasets import load_dataset
from clineval.datasets.loaders import StreamedDataset, stream_dataset
from clineval.errors import DatasetError
from clineval.model import Case
from clineval.results.aggregate import bootstrap_ci
from clineval.results.export import export_run
from clineval.results.render import print_result
from clineval.results.stored import StoredResult
from clineval.store.sqlite import RunStore


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"c{i}",
            "input": f"q {i}",
            "reference": "a b c" if i % 2 else "x y",
            "metadata": {"ward": f"w{i % 3}"},
        }
        for i in range(n)
    ]


async def echo_agent(text: str) -> str:
    return "a b c"


# --------------------------------------------------------------------------- streamed JSONL


def test_streamed_jsonl_reports_every_bad_line_with_file_and_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "d.jsonl",
        [{"id": "a", "input": "x"}, "{not json", "", {"id": "a"}, {"id": "b", "trajectory": 3}],
    )
    with pytest.raises(DatasetError) as streamed:
        stream_dataset(path)
    # a line that is not JSON is reported first, alone, as load_dataset does
    expected = "not valid JSON (Expecting property name enclosed in double quotes at column 2)"
    assert str(streamed.value) == f"1 bad row(s):\n{path}:2: {expected}"
    with pytest.raises(DatasetError) as loaded:
        load_dataset(path)
    assert str(streamed.value) == str(loaded.value)

    _write(path, [{"id": "a", "input": "x"}, {"id": "b"}, {"id": "a"}, {"id": "c", "trajectory": 3}])
    with pytest.raises(DatasetError) as streamed:
        stream_dataset(path)
    message = str(streamed.value)
    assert message.startswith("2 bad row(s):\n")
    assert f"{path}:3: field 'id': case id 'a' is already used at line 1" in message
    assert f"{path}:4: " in message and "trajectory" in message
    with pytest.raises(DatasetError) as loaded:
        load_dataset(path)
    assert message == str(loaded.value)


def test_streamed_jsonl_bad_byte_and_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "b", "input": "caf\xe9"}\n')
    with pytest.raises(DatasetError) as streamed:
        stream_dataset(path)
    assert str(streamed.value).startswith(f"{path}:2:26: not valid UTF-8 (byte 0xe9)")
    with pytest.raises(DatasetError) as loaded:
        load_dataset(path)
    assert str(streamed.value) == str(loaded.value)
    path.write_text("\n\n")
    with pytest.raises(DatasetError, match="the dataset has no cases"):
        stream_dataset(path)


def test_streamed_dataset_matches_loaded_and_notices_a_changed_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.jsonl", [*_rows(3), {"id": "z", "input": "q", "extra_col": 1}])
    streamed = stream_dataset(path)
    loaded = load_dataset(path)
    assert isinstance(streamed, StreamedDataset)
    assert len(streamed) == 4
    assert streamed.fingerprint() == loaded.fingerprint()
    assert streamed.metadata_columns == loaded.metadata_columns == ["extra_col"]
    assert [c.model_dump() for c in streamed] == [c.model_dump() for c in loaded.cases]
    _write(path, _rows(2))
    with pytest.raises(DatasetError, match="changed while it was read"):
        list(streamed)


def test_a_bad_dataset_leaves_no_store(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.jsonl", ["[1, 2]"])
    store = tmp_path / "s.db"
    with pytest.raises(DatasetError, match=r"d.jsonl:1: expected an object"):
        evaluate(path, ["exact_match"], store=store, progress=False, keep_results=False)
    assert not store.exists()


# --------------------------------------------------------------------------- the runner


def _live_cases() -> int:
    return sum(1 for obj in gc.get_objects() if type(obj) is Case)


class _CountingAgent:
    """An agent that counts the Case objects alive every ``every`` calls (the peak is kept)."""

    def __init__(self, every: int = 500):
        self.every = every
        self.calls = 0
        self.peak = 0

    async def __call__(self, text: str) -> str:
        self.calls += 1
        if self.calls % self.every == 0:
            self.peak = max(self.peak, _live_cases())
        return "a b c"


def test_a_run_without_kept_results_does_not_hold_its_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 4000
    monkeypatch.setattr(RunStore, "stream_chunk", 100)
    path = _write(tmp_path / "d.jsonl", _rows(n))
    streamed_agent = _CountingAgent()
    result = evaluate(
        path,
        ["exact_match"],
        agent=streamed_agent,
        store=tmp_path / "s.db",
        progress=False,
        keep_results=False,
    )
    assert isinstance(result, StoredResult)
    assert streamed_agent.calls == n
    # a chunk being fed, the bounded queues and the cases being scored: a few hundred at most
    assert streamed_agent.peak < 1000, streamed_agent.peak
    [exact] = [a for a in result.aggregate() if a.metric == "exact_match"]
    assert (exact.scored, exact.mean) == (n, 0.5)
    assert result.case_count() == n

    kept_agent = _CountingAgent()  # the same run keeping its results holds every case by its end
    kept = evaluate(path, ["exact_match"], agent=kept_agent, store=tmp_path / "s.db", progress=False)
    assert kept_agent.peak > n // 2
    assert len(kept.cases) == n


def test_a_streamed_run_gives_the_results_of_a_kept_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RunStore, "stream_chunk", 7)
    path = _write(tmp_path / "d.jsonl", _rows(40))
    store = tmp_path / "s.db"
    metrics = ["exact_match", "token_f1", "rouge"]
    kept = evaluate(path, metrics, store=store, progress=False)
    streamed = evaluate(path, metrics, store=store, progress=False, keep_results=False)
    assert [a.model_dump() for a in streamed.aggregate()] == [a.model_dump() for a in kept.aggregate()]
    assert [a.model_dump() for a in streamed.aggregate("ward")] == [
        a.model_dump() for a in kept.aggregate("ward")
    ]
    assert [r.model_dump(exclude={"run_id", "duration_s", "created_at"}) for r in streamed.results] == [
        r.model_dump(exclude={"run_id", "duration_s", "created_at"}) for r in kept.results
    ]
    assert streamed.run.dataset == kept.run.dataset


def test_resume_of_a_streamed_run_calls_the_agent_for_the_missing_cases_only(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.jsonl", _rows(30))
    store = tmp_path / "s.db"
    calls: list[str] = []

    async def agent(text: str) -> str:
        calls.append(text)
        return "a b c"

    first = evaluate(path, ["exact_match"], agent=agent, store=store, progress=False, keep_results=False)
    # as a run killed part-way leaves it: the last 10 cases without output or results, marked running
    with sqlite3.connect(store) as db:
        missing = [f"c{i}" for i in range(20, 30)]
        marks = ",".join("?" * len(missing))
        db.execute(f"DELETE FROM outputs WHERE run_id = ? AND case_id IN ({marks})", (first.run_id, *missing))
        db.execute(f"DELETE FROM results WHERE run_id = ? AND case_id IN ({marks})", (first.run_id, *missing))
        db.execute("UPDATE runs SET status = 'running' WHERE id = ?", (first.run_id,))
    calls.clear()
    resumed = evaluate(resume=first.run_id, agent=agent, store=store, progress=False, keep_results=False)
    assert sorted(calls) == sorted(f"q {i}" for i in range(20, 30))
    assert resumed.run.status == "completed"
    by_metric = {a.metric: a for a in resumed.aggregate()}
    assert by_metric["exact_match"].scored == 30 and by_metric["failure"].scored == 30
    assert by_metric["exact_match"].mean == 0.5


# --------------------------------------------------------------------------- show and export


def _varied_rows(n: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        metadata: dict[str, Any] = {"mixed": i if i % 3 else "s", "whole": i, "fl": 0.5 * i if i % 4 else 2}
        if i % 5:
            metadata["age"] = 60 + i  # whole numbers with gaps: a float column in a whole table
        if i % 7:
            metadata["flag"] = bool(i % 2)
        if i > n - 5:
            metadata["late"] = 1.5  # a column only the last chunk has
        rows.append(
            {"id": f"c{i}", "input": f"q {i}", "reference": "a b c" if i % 2 else "x y", "metadata": metadata}
        )
    return rows


def _agent(text: str) -> dict[str, str]:
    n = int(text.split()[1])
    if n % 13 == 0:
        raise RuntimeError("boom sk-abcdefghijklmnopqrstuvwx")
    return {"response": "a b c" if n % 2 else "token sk-proj-abcdefghijklmnopqrstuvwxyz12"}


def _graded(response: str, case: Case) -> dict[str, Any]:
    n = int(case.id[1:])
    if n % 17 == 0:
        raise ValueError("bad case")
    return {"value": None if n % 19 == 0 else (n % 3) / 2, "label": "ok" if n % 2 else None}


@pytest.fixture
def varied_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    monkeypatch.setattr(RunStore, "stream_chunk", 11)
    monkeypatch.setattr("clineval.results.export._CSV_CHUNK", 9)
    path = _write(tmp_path / "d.jsonl", _varied_rows(60))
    store = tmp_path / "s.db"
    result = evaluate(
        path, ["exact_match", "rouge", _graded], agent=_agent, store=store, progress=False, keep_results=False
    )
    return store, result.run_id


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "long-csv"])
def test_export_read_from_the_store_is_the_export_of_the_whole_result(
    varied_run: tuple[Path, str], fmt: str
) -> None:
    store, run_id = varied_run
    whole, streamed = io.StringIO(), io.StringIO()
    export_run(load_run(run_id, store=store), fmt, whole)
    lazy = load_run(run_id, store=store, lazy=True)
    export_run(lazy, fmt, streamed)
    assert isinstance(lazy, StoredResult) and lazy._results is None  # written without loading the results
    assert streamed.getvalue() == whole.getvalue()
    assert "sk-abcdefghij" not in streamed.getvalue()  # masked as before


def test_show_read_from_the_store_prints_what_the_whole_result_prints(varied_run: tuple[Path, str]) -> None:
    store, run_id = varied_run

    def printed(lazy: bool) -> str:
        console = Console(file=io.StringIO(), width=160, color_system=None)
        result = load_run(run_id, store=store, lazy=lazy)
        print_result(result, console, by="mixed")
        return console.file.getvalue()  # type: ignore[attr-defined]

    text = printed(lazy=True)
    assert text == printed(lazy=False)
    assert "unscored" in text and "bad case" in text


def test_stored_result_answers_as_the_whole_result(varied_run: tuple[Path, str]) -> None:
    store, run_id = varied_run
    whole, lazy = load_run(run_id, store=store), load_run(run_id, store=store, lazy=True)
    assert lazy.unscored() == whole.unscored()
    assert lazy.unscored_reasons() == whole.unscored_reasons()
    assert lazy.seen_metrics() == whole.seen_metrics()
    assert lazy.summary_metrics == whole.summary_metrics
    assert repr(lazy) == repr(whole)
    # cases and results, when asked for, are the lists load_run gives
    assert [c.model_dump() for c in lazy.cases] == [c.model_dump() for c in whole.cases]
    assert lazy.results == whole.results


# --------------------------------------------------------------------------- the bootstrap


def test_bootstrap_interval_is_the_same_when_resamples_are_drawn_in_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = [((i * 37) % 101) / 100 for i in range(3001)]
    whole = bootstrap_ci(values)
    monkeypatch.setattr(
        sys.modules["clineval.results.aggregate"], "RESAMPLE_BATCH_VALUES", 3001 * 7
    )  # 7 resamples at a time
    assert bootstrap_ci(values) == whole
    assert whole is not None and whole[0] < sum(values) / len(values) < whole[1]


def test_masker_gives_what_redact_data_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    from clineval.redaction import Masker, redact_data

    monkeypatch.setenv("MY_SERVICE_TOKEN", 'abc"def\\ghi-123')  # a secret whose JSON spelling differs
    values: list[Any] = [
        {"a": "plain text", "b": [1, 2.5, None, True], "c": {"d": "nothing to hide here"}},
        {"note": 'the value abc"def\\ghi-123 leaked', "n": 3},
        {"nested": [{"auth": "Bearer abcdefghijk"}], "key": "x"},
        {"k\u212aey": "api_key=abcdefgh"},  # a Kelvin sign lower-cases to a plain k
    ]
    masker = Masker()
    for _ in range(2):  # the second time, short strings come from its memory
        for value in values:
            assert masker.dumps(value) == json.dumps(redact_data(value), ensure_ascii=False)
            assert masker.data(value) == redact_data(value)
    assert masker.nothing_to_mask(json.dumps(values[0]))
    assert not masker.nothing_to_mask(json.dumps(values[1], ensure_ascii=False))
    assert "abc" not in masker.dumps(values[1])
