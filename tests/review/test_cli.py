"""`clineval review` end to end on a small store: plan prints the queue and the next step,
status follows the reviewers, export | import gives the same verdicts in a fresh copy of the
store, and every user mistake is one line on standard error with status 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.clirun import clineval, invoke
from tests.review.conftest import ReviewStoreData

from clineval.store.reviews import ReviewStore
from clineval.store.sqlite import RunStore


def _current(path: Path, run_id: str) -> list[tuple[str, str, str, str, str | None, str | None]]:
    with RunStore(path, readonly=True) as store:
        return sorted(
            (r.case_id, r.item, r.scale, r.reviewer, r.verdict, r.comment)
            for r in ReviewStore(store).current(run_id)
        )


def test_plan_status_export_import(review_store: ReviewStoreData, tmp_path: Path) -> None:
    run = review_store.run_id
    store = review_store.copy(tmp_path / "team.db")
    planned = clineval(
        "review", "plan", run, "--n", "4", "--strategy", "stratified", "--metric", "alpha", "--items", "case",
        "--store", str(store), cwd=tmp_path,
    )  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    with RunStore(store, readonly=True) as opened:
        queue = ReviewStore(opened).get_queue("latest")
    text = planned.stdout
    assert text.startswith(
        f"queue {queue.id} · run {run} (first) · 4 case(s) · 1 reviewer(s) per case · seed 0\n"
    )
    assert "stratified by alpha: 4 strata of about equal count over the 10 case(s) it scored" in text
    assert "schema of this queue: case scales factuality, harm, comment; items none" in text
    for position, case_id in enumerate(queue.case_ids, start=1):  # in queue order, with why
        assert f"│ {position} │ {case_id}" in text and queue.notes[case_id] in text
    assert "Strata of alpha" in text and "lowest–highest" in text
    left_out = "Left out:\n  1 case(s): the agent failed on the case (nothing to review)\n"
    assert left_out + "  1 case(s): not scored by alpha\n" in text
    assert f"Next: clineval view --review --reviewer NAME --queue {queue.id} --store {store}" in text

    status = clineval("review", "status", run, "--store", str(store), cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    assert f"queue {queue.id} · run {run} (first) · stratified by alpha · 4 case(s)" in status.stdout
    assert "0 of 4 case(s) fully reviewed · 0 verdict(s) given" in status.stdout
    assert "no reviewer has started yet" in status.stdout

    # ann reviews two of the queue's cases in a spreadsheet; bob one question of a third
    first, second, third = queue.case_ids[:3]
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(
        "case_id,reviewer,factuality,harm,comment\n"
        f'{first},ann,correct,none,"Fine, ""mostly"".\nSee the dose."\n'
        f"{second},ann,3,major,\n"
        f"{third},bob,partly,,\n",
        encoding="utf-8",
    )
    imported = clineval("review", "import", str(sheet), "--run", run, "--store", str(store), cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.splitlines() == [
        "imported 6 verdict(s) from 3 row(s) of sheet.csv (a row per case, a column per scale) into run "
        f"{run}: 2 reviewer(s) (ann, bob), 3 case(s)",
        "skipped: 3 empty cell(s) (not reviewed)",
    ]
    status = clineval("review", "status", "--store", str(store), "--queue", queue.id[:12], cwd=tmp_path)
    assert "2 of 4 case(s) fully reviewed · 6 verdict(s) given" in status.stdout
    rows = [line.split("│")[1:5] for line in status.stdout.splitlines() if line.startswith("│")]
    # per case 1 reviewer: ann finished two, bob's started case is his; the fourth is open to both
    assert [[cell.strip() for cell in row] for row in rows] == [
        ["ann", "2", "1", "5"],
        ["bob", "0", "2", "1"],
    ]

    exported = clineval("review", "export", run, "--store", str(store), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.startswith(
        "run_id,case_id,item,scale,reviewer,verdict,comment,created_at,blind,item_text,source,queue_id\n"
    )
    assert '"Fine, ""mostly"".\nSee the dose."' in exported.stdout
    export_file = tmp_path / "reviews.csv"
    export_file.write_text(exported.stdout, encoding="utf-8")
    fresh = review_store.copy(tmp_path / "fresh.db")
    again = clineval("review", "import", str(export_file), "--store", str(fresh), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(
        f"imported 6 verdict(s) from 6 row(s) of reviews.csv (a row per verdict) into run {run}"
    )
    assert _current(fresh, run) == _current(store, run)
    assert ("ann", "comment") in {(r[3], r[2]) for r in _current(fresh, run)}
    twice = clineval("review", "import", str(export_file), "--store", str(fresh), "--dry-run", cwd=tmp_path)
    assert twice.stdout.splitlines() == [
        "nothing new to import from 6 row(s) of reviews.csv (a row per verdict)",
        "skipped: 6 equal to the reviewer's current verdict",
        "dry run: nothing written",
    ]


def test_status_without_queues_says_how_to_plan(review_store: ReviewStoreData) -> None:
    done = invoke("review", "status", "--store", str(review_store.path))
    assert done.exit_code == 0, done.stderr
    assert done.stdout.strip() == (
        f"No review queue yet; plan one: clineval review plan RUN --n 20 --store {review_store.path}"
    )


def test_export_jsonl_to_a_file(review_store: ReviewStoreData, tmp_path: Path) -> None:
    out = tmp_path / "none.jsonl"
    done = invoke(
        "review", "export", "latest", "--format", "jsonl", "-o", str(out), "--store", str(review_store.path)
    )
    assert done.exit_code == 0, done.stderr
    assert out.read_text(encoding="utf-8") == ""  # no reviews yet
    assert done.stderr.strip() == f"wrote 0 review row(s) of run {review_store.other_id} to {out}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plan", "nope"], "error: no run 'nope' in {store} (see 'clineval runs')"),
        (["plan", "{run}", "--n", "0"], "error: --n 0: plan at least one case"),
        (
            ["plan", "{run}", "--strategy", "stratified", "-m", "gamma"],
            "error: --metric gamma: run {run} has no scored result of this metric (its metrics: alpha, beta, "
            "tbfact, latency, failure)",
        ),
        (
            ["plan", "{run}", "--strategy", "disagreement", "-m", "alpha"],
            "error: a disagreement plan compares two scores: --metric A --metric B (two metrics of the run), "
            "or --metric NAME --vs RUN (one metric scored by two judges)",
        ),
        (
            ["plan", "{run}", "--strategy", "disagreement", "-m", "beta", "--vs", "{other}"],
            "error: --vs {other}: that run has no scored result of beta",
        ),
        (
            ["plan", "{run}", "--schema", "{schema}"],
            "error: {schema}:2: scales[0]: scale 'harm' needs at least two options, best first",
        ),
        (
            ["plan", "{run}", "--items", "facts,tables"],
            "error: --items facts,tables: unknown item kind 'tables'; expected case, facts, sentences, turns",
        ),
        (["status", "--queue", "q-none"], "error: no review queue of run"),
        (["export", "nope"], "error: no run 'nope' in {store} (see 'clineval runs')"),
        (
            ["import", "{sheet}", "--run", "{run}"],
            "error: {sheet}:2: field 'harm': 'severe' is not an option of harm (expected none, minor, major) "
            "(nothing imported)",
        ),
        (["import", "{sheet}"], "error: {sheet}: which run? give --run RUN (the file has no run_id column)"),
    ],
)
def test_user_errors_are_one_line_with_status_2(
    review_store: ReviewStoreData, tmp_path: Path, args: list[str], message: str
) -> None:
    schema = tmp_path / "schema.yaml"
    schema.write_text("scales:\n  - name: harm\n    options: [none]\n", encoding="utf-8")
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("case_id,reviewer,harm\nc01,ann,severe\n", encoding="utf-8")
    values = {
        "store": str(review_store.path),
        "run": review_store.run_id,
        "other": review_store.other_id,
        "schema": str(schema),
        "sheet": str(sheet),
    }
    given = [a.format(**values) for a in args]
    if given[0] == "status":
        given.insert(1, review_store.run_id)
    done = invoke("review", *given, "--store", str(review_store.path))
    assert done.exit_code == 2, done.output
    assert isinstance(done.exception, SystemExit)  # not a traceback
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(message.format(**values)), done.stderr
    assert done.stdout == ""
    with RunStore(review_store.path, readonly=True) as store:  # nothing was written
        assert ReviewStore(store).queues() == [] and ReviewStore(store).current(review_store.run_id) == []


def test_a_missing_store_is_one_line(tmp_path: Path) -> None:
    done = invoke("review", "status", "--store", str(tmp_path / "none.db"))
    assert done.exit_code == 2
    assert (
        done.stderr.strip()
        == f"error: no run store at {tmp_path / 'none.db'}; run 'clineval run' first or pass --store"
    )


def test_plan_given_cases_in_their_order(review_store: ReviewStoreData, tmp_path: Path) -> None:
    """`--cases` names the cases (or @FILE, one id a line): in that order, the failed one left out."""
    store = review_store.copy(tmp_path / "given.db")
    ids = tmp_path / "ids.txt"
    ids.write_text("c03\n# the complaint's cases\nc01\nc11\n", encoding="utf-8")
    done = invoke("review", "plan", review_store.run_id, "--cases", f"@{ids}", "--store", str(store))
    assert done.exit_code == 0, done.stderr
    assert "given: the 2 case(s) named with --cases, in that order" in done.stdout
    assert (
        "1 case(s): the agent failed on the case" in done.stdout and "seed" not in done.stdout.splitlines()[0]
    )
    with RunStore(store, readonly=True) as runs:
        queue = ReviewStore(runs).get_queue("latest")
    assert queue.strategy == "given" and queue.case_ids == ["c03", "c01"]
    wrong = invoke("review", "plan", review_store.run_id, "--cases", "c01,zz", "--store", str(store))
    assert wrong.exit_code == 2 and "--cases: run" in wrong.stderr and "has no case 'zz'" in wrong.stderr
