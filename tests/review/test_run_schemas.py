"""Review schemas brought by run files and suites (``review:``): checked when the file is
read, every problem with its file and line; stored inline with the run, where
clineval.review.data.review_schema finds it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests import clirun

import clineval
from clineval.config import load_run_config
from clineval.errors import ConfigError
from clineval.review.data import review_schema
from clineval.store.sqlite import RunStore
from clineval.suites.loader import load_suite
from clineval.suites.runner import run_suite
from clineval.suites.source import SuiteError

ROOT = Path(__file__).resolve().parents[2]
SUITE_DATA = ROOT / "tests" / "suites" / "data" / "prior_auth_example.yaml"
SCHEMA = """\
scales:
  - name: factuality
    options: [correct, incorrect]
    compare_with: [token_f1]
  - name: urgent
    title: Is the answer urgent?
    options: [yes, no]
  - name: comment
    kind: text
items: [facts]
max_facts: 3
"""


def _run_file(folder: Path, review: str) -> Path:
    (folder / "cases.jsonl").write_text('{"id": "1", "input": "q", "response": "a b", "reference": "a b"}\n')
    path = folder / "run.yaml"
    path.write_text(
        f"name: r\ndata: cases.jsonl\nmetrics: [token_f1]\njudge: none\n{review}", encoding="utf-8"
    )
    return path


def test_a_run_file_review_file_is_read_and_stored_inline(tmp_path: Path) -> None:
    (tmp_path / "review.yaml").write_text(SCHEMA, encoding="utf-8")
    config = load_run_config(_run_file(tmp_path, "review: review.yaml\n"))
    assert config.review is not None
    assert [s.name for s in config.review.scales] == ["factuality", "urgent", "comment"]
    assert config.review.scale("case", "urgent").values == ["yes", "no"]  # YAML's yes/no booleans
    stored = config.stored()
    assert stored["review"]["max_facts"] == 3 and stored["review"]["items"] == ["fact"]
    result = clineval.evaluate(config=config, store=str(tmp_path / "s.db"), progress=False)
    store = RunStore(tmp_path / "s.db", readonly=True)
    try:
        record = store.get_run(result.run_id)
        assert record.config["review"] == stored["review"]
        schema = review_schema(record)
        assert [s.name for s in schema.scales] == ["factuality", "urgent", "comment"]
        assert schema.items == ("fact",) and schema.max_facts == 3
    finally:
        store.close()


def test_a_run_file_without_review_keeps_no_review_setting(tmp_path: Path) -> None:
    config = load_run_config(_run_file(tmp_path, ""))
    assert config.review is None and "review" not in config.stored()


def test_an_inline_run_file_review_is_checked_with_its_line(tmp_path: Path) -> None:
    inline = (
        "review:\n  scales:\n    - name: factuality\n      options: [correct, incorrect]\n"
        "    - name: harm\n      options: [none]\n"
    )
    path = _run_file(tmp_path, inline)
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    assert (
        str(info.value) == f"{path}:9: review.scales[1]: scale 'harm' needs at least two options, best first"
    )
    good = inline.replace("options: [none]", "options: [none, major]")
    assert load_run_config(_run_file(tmp_path, good)).review is not None


@pytest.mark.parametrize(
    ("review", "schema_text", "expected"),
    [
        (
            "review: missing.yaml\n",
            None,
            "{run}:5: review: review schema file not found: {folder}/missing.yaml",
        ),
        (
            "review: review.yaml\n",
            "scales:\n  - name: Harm\n    options: [a, b]\n",
            "{run}:5: review: {folder}/review.yaml:2: scales[0].name: 'Harm' is not a scale name",
        ),
        (
            "review: review.yaml\n",
            "items: [facts, tables]\n",
            "{run}:5: review: {folder}/review.yaml:1: items: unknown item kind 'tables'",
        ),
        ("review: ''\n", None, "{run}:5: review: expected a review schema (a mapping) or the name of a YAML"),
        ("review: [1, 2]\n", None, "{run}:5: review: "),
    ],
)
def test_a_bad_review_names_the_run_file_and_the_schema_file(
    tmp_path: Path, review: str, schema_text: str | None, expected: str
) -> None:
    if schema_text is not None:
        (tmp_path / "review.yaml").write_text(schema_text, encoding="utf-8")
    path = _run_file(tmp_path, review)
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    assert str(info.value).startswith(expected.format(run=path, folder=tmp_path))


def test_validate_reports_a_wrong_review_with_its_line(tmp_path: Path) -> None:
    path = _run_file(
        tmp_path, "review:\n  scales:\n    - name: harm\n      options: [none]\n      colour: red\n"
    )
    done = clirun.clineval("validate", str(path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{path}:9: review.scales[0].colour: unknown field" in done.stderr


# --- suites -----------------------------------------------------------------------------


def _suite(folder: Path, review: str) -> Path:
    text = SUITE_DATA.read_text(encoding="utf-8")
    marker = "# --- Case-Specific Configuration ---"
    path = folder / "suite.yaml"
    path.write_text(text.replace(marker, review + marker), encoding="utf-8")
    return path


REVIEW = """\
  review:
    scales:
      - name: decision_correct
        title: Is the decision right?
        options: [yes, no]
        compare_with: [EvaluatorUniqueName]
      - name: comment
        kind: text
    items: []
"""


def test_a_suite_review_is_stored_with_its_runs_and_found(tmp_path: Path) -> None:
    path = _suite(tmp_path, REVIEW)
    suite = load_suite(path, instantiate=False)
    assert suite.review is not None and [s.name for s in suite.review.scales] == [
        "decision_correct",
        "comment",
    ]
    outcome = run_suite(path, store=str(tmp_path / "s.db"), cache=None, progress=False)
    store = RunStore(tmp_path / "s.db", readonly=True)
    try:
        record = store.get_run(outcome.result.run_id)
        assert record.config["kind"] == "suite"
        schema = review_schema(record)
        assert [s.name for s in schema.scales] == ["decision_correct", "comment"] and schema.items == ()
        assert schema.scale("case", "decision_correct").compare_with == ("EvaluatorUniqueName",)
    finally:
        store.close()


def test_a_suite_without_review_gets_the_suite_defaults(tmp_path: Path) -> None:
    path = _suite(tmp_path, "")
    outcome = run_suite(path, store=str(tmp_path / "s.db"), cache=None, progress=False)
    store = RunStore(tmp_path / "s.db", readonly=True)
    try:
        record = store.get_run(outcome.result.run_id)
        assert "review" not in record.config
        assert [s.name for s in review_schema(record).scales] == [
            "factuality",
            "harm",
            "decision_correct",
            "comment",
        ]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("review", "line", "message"),
    [
        (
            REVIEW.replace("[EvaluatorUniqueName]", "[EvaluatorUniqeName]"),
            24,
            "evaluation_id.review.scales[0].compare_with[0]: scale 'decision_correct' is compared with "
            "'EvaluatorUniqeName', which is not an evaluator of this suite; "
            "did you mean 'EvaluatorUniqueName'? (its evaluators: EvaluatorUniqueName)",
        ),
        (
            REVIEW.replace("options: [yes, no]", "options: [yes]"),
            21,
            "evaluation_id.review.scales[0]: scale 'decision_correct' needs at least two options, best first",
        ),
        ("  review: nothere.yaml\n", 19, "evaluation_id.review: review schema file not found: "),
        ("  review: 3\n", 19, "evaluation_id.review: expected a review schema (a mapping) or the name"),
    ],
)
def test_a_bad_suite_review_is_reported_with_its_line(
    tmp_path: Path, review: str, line: int, message: str
) -> None:
    path = _suite(tmp_path, review)
    with pytest.raises(SuiteError) as info:
        load_suite(path, instantiate=False)
    assert str(info.value).startswith(f"{path}:{line}: {message}")


def test_the_prior_auth_example_reviews_its_decision_against_the_decision_evaluator(tmp_path: Path) -> None:
    folder = tmp_path / "prior_auth"
    shutil.copytree(ROOT / "examples" / "prior_auth", folder)
    suite = load_suite(folder / "suite.yaml", instantiate=False)
    assert suite.review is not None
    assert [s.name for s in suite.review.scales] == ["factuality", "harm", "decision_correct", "comment"]
    decision = suite.review.scale("case", "decision_correct")
    assert decision.values == ["yes", "no"] and decision.compare_with == ("Decision",)
    assert suite.evaluators["Decision"].spec.class_ == "clineval.suites.evaluators:LabelMatch"
    factuality = suite.review.scale("case", "factuality")
    assert set(factuality.compare_with) == {"RationaleFactuality", "RationaleFaithfulness"}
    assert {suite.evaluators[m].spec.metric for m in factuality.compare_with} == {"tbfact", "faithfulness"}
    # the regressed variant includes it
    regressed = load_suite(folder / "suite_regressed.yaml", instantiate=False)
    assert regressed.review == suite.review
