"""Export and import of reviews (clineval.review.transfer): the columns, CSV quoting, the
long and wide layouts, every validation error with its FILE:LINE, dry runs, re-imports, and
export -> import into a fresh copy of the store giving the same current verdicts."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.review.conftest import ReviewStoreData

from clineval.errors import ConfigError, RunLockedError
from clineval.model import ReviewQueue, ReviewRecord
from clineval.review.transfer import (
    EXPORT_COLUMNS,
    HISTORY_COLUMNS,
    ReviewImportError,
    export_rows,
    import_reviews,
    iso_time,
    write_rows,
)
from clineval.store.reviews import ReviewStore
from clineval.store.sqlite import RunStore

COMMENT = 'She said "stop", then left;\nsecond line, with a comma\r\nand a tab\there.'
FACT = "fact/tbfact/precision/1"
MAYBE = "'maybe' is not an option of factuality (expected correct, partly, incorrect)"


@pytest.fixture
def store(review_store: ReviewStoreData, tmp_path: Path) -> Iterator[RunStore]:
    opened = RunStore(review_store.copy(tmp_path / "copy.db"))
    yield opened
    opened.close()


@pytest.fixture
def fresh(review_store: ReviewStoreData, tmp_path: Path) -> Iterator[RunStore]:
    """Another copy of the store without reviews: where an export is imported."""
    opened = RunStore(review_store.copy(tmp_path / "fresh.db"))
    yield opened
    opened.close()


def _current(store: RunStore, run_id: str) -> list[tuple[str, str, str, str, str | None, str | None]]:
    return sorted(
        (r.case_id, r.item, r.scale, r.reviewer, r.verdict, r.comment)
        for r in ReviewStore(store).current(run_id)
    )


def _give(store: RunStore, run_id: str) -> None:
    """Verdicts of two reviewers, one undone, one with a comment that needs quoting."""
    reviews = ReviewStore(store)
    shown = {"blind": True, "text": "Start aspirin 81 mg daily."}
    reviews.add(
        ReviewRecord(run_id=run_id, case_id="c01", scale="factuality", reviewer="ann", verdict="partly")
    )
    reviews.add(
        ReviewRecord(
            run_id=run_id,
            case_id="c01",
            scale="factuality",
            reviewer="ann",
            verdict="correct",
            created_at=86400.5,
            shown={"blind": False},
        )
    )
    reviews.add(ReviewRecord(run_id=run_id, case_id="c01", scale="harm", reviewer="ann", verdict="major"))
    reviews.undo(run_id, "c01", "ann")  # harm major: undone
    reviews.add(ReviewRecord(run_id=run_id, case_id="c01", scale="comment", reviewer="ann", comment=COMMENT))
    reviews.add(
        ReviewRecord(
            run_id=run_id,
            case_id="c01",
            item=FACT,
            scale="verdict",
            reviewer="bob",
            verdict="not",
            shown=shown,
        )
    )
    reviews.add(ReviewRecord(run_id=run_id, case_id="c02", scale="harm", reviewer="bob", verdict="none"))


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- export ---------------------------------------------------------------------------


def test_export_columns_and_values(store: RunStore, review_store: ReviewStoreData) -> None:
    run = review_store.run_id
    _give(store, run)
    rows = export_rows(store, store.get_run(run))
    assert [list(r) for r in rows] == [list(EXPORT_COLUMNS)] * 4
    first = rows[0]  # ann's factuality: correct (the newest), at a time of our choosing
    assert first == {
        "run_id": run,
        "case_id": "c01",
        "item": "case",
        "scale": "factuality",
        "reviewer": "ann",
        "verdict": "correct",
        "comment": None,
        "created_at": "1970-01-02T00:00:00.500Z",
        "blind": False,
        "item_text": None,
        "source": "viewer",
        "queue_id": None,
    }
    assert [(r["scale"], r["verdict"], r["comment"]) for r in rows[1:]] == [
        ("comment", None, COMMENT),
        ("verdict", "not", None),
        ("harm", "none", None),
    ]
    assert rows[2]["blind"] is True and rows[2]["item_text"] == "Start aspirin 81 mg daily."
    assert iso_time(0) == "1970-01-01T00:00:00.000Z"


def test_history_export_marks_undone_rows(store: RunStore, review_store: ReviewStoreData) -> None:
    run = review_store.run_id
    _give(store, run)
    rows = export_rows(store, store.get_run(run), history=True)
    assert [list(r) for r in rows] == [list(HISTORY_COLUMNS)] * 6
    assert [(r["scale"], r["verdict"], r["undone_at"] is not None) for r in rows] == [
        ("factuality", "partly", False),
        ("factuality", "correct", False),
        ("harm", "major", True),
        ("comment", None, False),
        ("verdict", "not", False),
        ("harm", "none", False),
    ]
    assert [r["seq"] for r in rows] == sorted(r["seq"] for r in rows)
    assert str(rows[2]["undone_at"]).endswith("Z")


def test_csv_quotes_what_needs_quoting_and_reads_back(store: RunStore, review_store: ReviewStoreData) -> None:
    run = review_store.run_id
    _give(store, run)
    buffer = io.StringIO()
    write_rows(export_rows(store, store.get_run(run)), buffer, "csv")
    text = buffer.getvalue()
    assert text.splitlines()[0] == ",".join(EXPORT_COLUMNS)
    assert '"She said ""stop"", then left;\nsecond line, with a comma\r\nand a tab\there."' in text
    read = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [r["comment"] for r in read] == ["", COMMENT, "", ""]
    assert read[0]["blind"] == "false" and read[2]["blind"] == "true" and read[3]["blind"] == ""
    lines = write_rows_jsonl(store, run)
    assert [json.loads(line)["comment"] for line in lines] == [None, COMMENT, None, None]


def write_rows_jsonl(store: RunStore, run: str) -> list[str]:
    buffer = io.StringIO()
    write_rows(export_rows(store, store.get_run(run)), buffer, "jsonl")
    return buffer.getvalue().splitlines()


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_then_import_into_a_fresh_copy_gives_the_same_current_verdicts(
    store: RunStore, fresh: RunStore, review_store: ReviewStoreData, tmp_path: Path, fmt: str
) -> None:
    run = review_store.run_id
    _give(store, run)
    # a verdict of a queue with its own schema (a case scale the run's schema does not have)
    queue = ReviewQueue(
        id="q-own",
        run_id=run,
        created_at=1.0,
        strategy="random",
        case_ids=["c03"],
        schema={"scales": [{"name": "decision_correct", "options": ["yes", "no"]}], "items": []},
    )
    for target in (store, fresh):
        ReviewStore(target).create_queue(queue)
    ReviewStore(store).add(
        ReviewRecord(
            run_id=run, case_id="c03", scale="decision_correct", reviewer="cy", verdict="no", queue_id="q-own"
        )
    )
    path = tmp_path / f"reviews.{fmt}"
    with path.open("w", encoding="utf-8", newline="") as handle:
        write_rows(export_rows(store, store.get_run(run)), handle, fmt)  # type: ignore[arg-type]
    plan = import_reviews(fresh, path)
    assert plan.written and plan.layout == "long" and len(plan.records) == 5
    assert _current(fresh, run) == _current(store, run)
    imported = ReviewStore(fresh).current(run)
    assert {r.source for r in imported} == {f"import:reviews.{fmt}"}
    assert all(r.shown["imported"] is True for r in imported)
    by_scale = {r.scale: r for r in imported}
    assert by_scale["factuality"].created_at == 86400.5  # the time it was given, kept
    assert by_scale["verdict"].shown == {
        "imported": True,
        "blind": True,
        "text": "Start aspirin 81 mg daily.",
    }
    assert by_scale["decision_correct"].queue_id == "q-own"
    # a second import of the same file adds nothing
    again = import_reviews(fresh, path)
    assert again.records == [] and again.unchanged == 5 and not again.written
    assert len(list(ReviewStore(fresh).history(run))) == 5


# --- import: the layouts ----------------------------------------------------------------


def test_import_long_layout_with_defaults_numbers_and_case(
    store: RunStore, review_store: ReviewStoreData, tmp_path: Path
) -> None:
    run = review_store.run_id
    path = _write(
        tmp_path / "long.csv",
        "case_id,item,scale,verdict,comment\n"
        "c01,,factuality,CORRECT,\n"  # no item: the case; an option ignoring case
        f"c01,{FACT},verdict,3,\n"  # the third option of a fact's verdict: not
        f"c01,{FACT},importance,high,a key fact\n"
        "c02,case,comment,,Needs a dose.\n",
    )
    plan = import_reviews(store, path, run="latest~1", reviewer="dr.lee")  # the first of the two runs
    assert plan.layout == "long" and plan.rows == 4 and plan.reviewers == ["dr.lee"]
    assert plan.cases == [(run, "c01"), (run, "c02")]
    assert _current(store, run) == [
        ("c01", "case", "factuality", "dr.lee", "correct", None),
        ("c01", FACT, "importance", "dr.lee", "high", "a key fact"),
        ("c01", FACT, "verdict", "dr.lee", "not", None),
        ("c02", "case", "comment", "dr.lee", None, "Needs a dose."),
    ]


def test_import_wide_layout_as_a_spreadsheet_is_made(
    store: RunStore, review_store: ReviewStoreData, tmp_path: Path
) -> None:
    run = review_store.run_id
    path = _write(
        tmp_path / "sheet.tsv",
        "Case ID\tReviewer\tFactuality\tHarm\tComment\tResponse\n"
        "c01\tann\tcorrect\tnone\tfine\tStart aspirin\n"
        "c02\tann\tpartly\t\t\t\n"  # harm and comment not reviewed: empty cells
        "c03\tbob\t3\tMajor\t\t\n",
    )
    plan = import_reviews(store, path, run=run)
    assert plan.layout == "wide" and plan.empty == 3 and plan.ignored_columns == ["response"]
    assert plan.reviewers == ["ann", "bob"]
    assert _current(store, run) == [
        ("c01", "case", "comment", "ann", None, "fine"),
        ("c01", "case", "factuality", "ann", "correct", None),
        ("c01", "case", "harm", "ann", "none", None),
        ("c02", "case", "factuality", "ann", "partly", None),
        ("c03", "case", "factuality", "bob", "incorrect", None),
        ("c03", "case", "harm", "bob", "major", None),
    ]


def test_import_jsonl_wide_with_reviewer_option(
    store: RunStore, review_store: ReviewStoreData, tmp_path: Path
) -> None:
    run = review_store.run_id
    path = _write(
        tmp_path / "rows.ndjson",
        json.dumps({"id": "c04", "run_id": run, "factuality": "correct", "harm": None})
        + "\n\n"
        + json.dumps({"id": "c05", "run_id": run, "factuality": 2})
        + "\n",
    )
    plan = import_reviews(store, path, reviewer="cy")
    assert plan.layout == "wide" and plan.empty == 2  # harm: null on c04, missing on c05
    assert _current(store, run) == [
        ("c04", "case", "factuality", "cy", "correct", None),
        ("c05", "case", "factuality", "cy", "partly", None),
    ]


def test_dry_run_writes_nothing_and_reimport_skips_equal_rows(
    store: RunStore, review_store: ReviewStoreData, tmp_path: Path
) -> None:
    run = review_store.run_id
    path = _write(tmp_path / "w.csv", "case_id,reviewer,factuality\nc01,ann,correct\nc02,ann,incorrect\n")
    dry = import_reviews(store, path, run=run, dry_run=True)
    assert len(dry.records) == 2 and not dry.written
    assert list(ReviewStore(store).history(run)) == []
    assert len(import_reviews(store, path, run=run).records) == 2
    # ann changes her mind on c02 in the sheet: only that row is new
    _write(path, "case_id,reviewer,factuality\nc01,ann,correct\nc02,ann,partly\n")
    plan = import_reviews(store, path, run=run)
    assert [(r.case_id, r.verdict) for r in plan.records] == [("c02", "partly")] and plan.unchanged == 1
    assert len(list(ReviewStore(store).history(run))) == 3


# --- import: every problem, with its line ---------------------------------------------------


def _problems(store: RunStore, path: Path, **kwargs: str) -> list[str]:
    with pytest.raises(ReviewImportError) as info:
        import_reviews(store, path, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in info.value.problems]


def test_every_row_problem_is_reported_with_file_line_and_field(
    store: RunStore, review_store: ReviewStoreData, tmp_path: Path
) -> None:
    run = review_store.run_id
    path = _write(
        tmp_path / "bad.csv",
        "case_id,item,scale,verdict,reviewer,created_at,run_id\n"
        "c01,,factuality,maybe,ann,,\n"  # 2
        "c99,,factuality,correct,ann,,\n"  # 3
        "c01,fact/tbfact/precision/9,verdict,not,ann,,\n"  # 4
        f"c01,{FACT},factuality,correct,ann,,\n"  # 5: a case scale on a fact
        "c01,,harmm,none,ann,,\n"  # 6
        "c01,,harm,none,,,\n"  # 7: no reviewer
        '"c02",,harm,"",ann,,\n'  # 8: no verdict
        "c02,,harm,none,ann,yesterday,\n"  # 9
        "c02,,harm,none,ann,,nope\n"  # 10
        "c03,,harm,none,ann,,\n"  # 11
        "c03,,harm,minor,ann,,\n"  # 12: the same question again
        '"c04\n",,harm,none,' + "x" * 81 + ",,\n",  # 13-14: a case id over two lines, a name too long
    )
    problems = _problems(store, path, run=run)
    file = str(path)
    assert problems == [
        f"{file}:2: field 'verdict': {MAYBE}",
        f"{file}:3: field 'case_id': 'c99' is not a case of run {run}",
        f"{file}:4: field 'item': 'fact/tbfact/precision/9' is not an item of case c01 (its items: case, "
        "fact/tbfact/precision/1, fact/tbfact/recall/1)",
        f"{file}:5: field 'scale': 'factuality' is not a scale of a fact (expected verdict, importance)",
        f"{file}:6: field 'scale': 'harmm' is not a scale of the case (expected factuality, harm, comment); "
        "did you mean 'harm'?",
        f"{file}:7: field 'reviewer': no reviewer: give a reviewer column or --reviewer NAME",
        f"{file}:8: field 'verdict': empty; harm needs one of none, minor, major",
        f"{file}:9: field 'created_at': 'yesterday' is not an ISO 8601 time (e.g. 2026-11-28T21:15:15Z)",
        f"{file}:10: field 'run_id': no run 'nope' in {store.path} (see 'clineval runs')",
        f"{file}:12: field 'scale': ann's harm of case c03 is given twice (first on line 11)",
        f"{file}:13: field 'reviewer': '{'x' * 81}' cannot name a reviewer: 1 to 80 printable characters, "
        "without spaces around it",
    ]
    assert list(ReviewStore(store).history(run)) == []  # nothing imported


def test_wide_layout_problems_name_the_scale_column(
    store: RunStore, review_store: ReviewStoreData, tmp_path: Path
) -> None:
    path = _write(tmp_path / "w.csv", "case_id,reviewer,factuality,harm\nc01,ann,maybe,\nc02,ann,,severe\n")
    assert _problems(store, path, run=review_store.run_id) == [
        f"{path}:2: field 'factuality': {MAYBE}",
        f"{path}:3: field 'harm': 'severe' is not an option of harm (expected none, minor, major)",
    ]


def test_more_than_twenty_problems_are_counted(
    store: RunStore, review_store: ReviewStoreData, tmp_path: Path
) -> None:
    path = _write(tmp_path / "many.csv", "case_id,reviewer,factuality\n" + "c01,ann,maybe\n" * 25)
    with pytest.raises(ReviewImportError) as info:
        import_reviews(store, path, run=review_store.run_id)
    lines = str(info.value).splitlines()
    assert lines[0] == f"{path}: 25 problems, nothing imported:"
    assert lines[1] == f"  {path}:2: field 'factuality': {MAYBE}"
    assert len(lines) == 22 and lines[-1] == "  ... and 5 more problem(s)"
    # one problem: one line
    _write(path, "case_id,reviewer,factuality\nc01,ann,maybe\n")
    with pytest.raises(ReviewImportError) as one:
        import_reviews(store, path, run=review_store.run_id)
    assert str(one.value) == f"{path}:2: field 'factuality': {MAYBE} (nothing imported)"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("x.xlsx", "case_id\n", "unknown format '.xlsx'; use one of .csv, .tsv, .jsonl, .ndjson"),
        ("x.csv", "", "empty file (expected a header row"),
        (
            "x.csv",
            "reviewer,factuality\nann,correct\n",
            ":1: no case_id column (its columns: reviewer, factuality)",
        ),
        (
            "x.csv",
            "case_id,scale,reviewer\nc01,harm,ann\n",
            ":1: a row per verdict (a 'scale' column) needs a 'verdict'",
        ),
        (
            "x.csv",
            "case_id,reviewer,harmful\nc01,ann,yes\n",
            ":1: no column names a case scale of the run's review schema",
        ),
        (
            "x.csv",
            "case_id,factuality\nc01,correct,extra\n",
            ":2: 3 cells, but the header (line 1) names 2 columns",
        ),
        ("x.csv", "case_id,case_id\nc01,c01\n", ":1: column(s) case_id named twice in the header"),
        # an unclosed quote would swallow every row after it: refused, with the row it starts on
        (
            "x.csv",
            'case_id,factuality\nc01,"correct\nc02,partly\n',
            ":2: not valid CSV (unexpected end of data)",
        ),
        ("x.jsonl", '{"case_id": "c01"}\n[1]\n{oops\n', ":2: expected a JSON object per line"),
        ("h.csv", "case_id,scale,verdict,undone_at\n", "a --history export (every row ever written"),
    ],
)
def test_file_problems(
    store: RunStore, review_store: ReviewStoreData, tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = _write(tmp_path / name, text)
    with pytest.raises(ConfigError) as info:
        import_reviews(store, path, run=review_store.run_id, reviewer="ann")
    assert message in str(info.value) and str(path) in str(info.value)


def test_a_file_without_a_run_needs_run(store: RunStore, tmp_path: Path) -> None:
    path = _write(tmp_path / "x.csv", "case_id,reviewer,factuality\nc01,ann,correct\n")
    with pytest.raises(ConfigError, match=r"which run\? give --run RUN \(the file has no run_id column\)"):
        import_reviews(store, path)


def test_the_run_lock_refuses_an_import_and_nothing_is_written(
    store: RunStore, review_store: ReviewStoreData, tmp_path: Path
) -> None:
    run = review_store.run_id
    path = _write(tmp_path / "x.csv", "case_id,reviewer,factuality\nc01,ann,correct\n")
    lease = store.acquire_lease(run)
    try:
        with pytest.raises(RunLockedError, match="is being run by"):
            import_reviews(store, path, run=run)
    finally:
        lease.release()
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM reviews").fetchone() == (0,)
