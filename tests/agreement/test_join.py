"""agreement_for_run: matching a run's scores to human labels by case id, with every gap counted."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from clineval import Case, EvalResult, Score, evaluate
from clineval.agreement import AgreementError, agreement_for_run, read_labels

# Case i gets value i/10, label "high" or "low", a sub-score "grade" = i % 3 + 1;
# case e1 is an error, case na1 not applicable.
VALUES = {f"c{i}": i / 10 for i in range(8)}


def graded(case: Case) -> Score:
    if case.id == "e1":
        return Score.failed("judge timed out")
    if case.id == "na1":
        return Score.not_applicable("no informative sentence")
    i = int(case.id[1:])
    return Score(value=VALUES[case.id], label="high" if i >= 4 else "low", sub_scores={"grade": i % 3 + 1})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> EvalResult:
    folder = tmp_path_factory.mktemp("agreement-join")
    cases = [{"id": cid, "response": "r", "reference": "r"} for cid in [*VALUES, "e1", "na1", "unlabelled"]]
    return evaluate(cases, [graded], store=folder / "s.db", progress=False, judge="none")


def _labels() -> pd.DataFrame:
    rows = [{"id": cid, "label": "yes" if v >= 0.4 else "no"} for cid, v in VALUES.items()]
    rows += [{"id": "e1", "label": "yes"}, {"id": "na1", "label": "no"}]
    rows += [{"id": "ghost1", "label": "no"}, {"id": "ghost2", "label": "yes"}]
    return pd.DataFrame(rows)


def test_join_counts_every_gap(run: EvalResult) -> None:
    report = agreement_for_run(run, "graded", _labels(), n_resamples=200)
    join = report.join
    assert join is not None
    assert join.run_cases == 11 and join.label_rows == 12
    assert join.matched == 10 and join.used == 8
    assert join.cases_without_label == 1 and join.example_cases_without_label == ["unlabelled"]
    assert join.labels_without_case == 2 and join.example_labels_without_case == ["ghost1", "ghost2"]
    assert (join.unscored, join.not_applicable, join.no_value, join.empty_labels) == (1, 1, 0, 0)
    assert report.n == 8 and report.kind == "binary" and report.kind_inferred
    # Scores 0.0 … 0.7, and the human says yes from 0.4 on: every yes scores above every no
    # (AUC 1), but at the default threshold 0.5 the case at 0.4 is predicted no (accuracy 7/8);
    # at threshold 0.4 all eight agree.
    assert report.value("roc_auc") == pytest.approx(1.0)
    assert report.value("accuracy") == pytest.approx(7 / 8)
    assert agreement_for_run(run, "graded", _labels(), threshold=0.4, n_resamples=50).value(
        "accuracy"
    ) == pytest.approx(1.0)


def test_score_choices(run: EvalResult) -> None:
    labels = pd.DataFrame({"id": list(VALUES), "grade": [i % 3 + 1 for i in range(8)]})
    sub = agreement_for_run(run, "graded", labels, label_column="grade", score="grade", n_resamples=50)
    assert sub.kind == "ordinal" and sub.value("weighted_kappa") == pytest.approx(1.0)
    assert sub.join is not None and sub.join.score == "grade"
    assert agreement_for_run(
        run, "graded", labels, label_column="grade", score="graded.grade", n_resamples=50
    ).value("accuracy") == pytest.approx(1.0)
    named = pd.DataFrame({"id": list(VALUES), "label": ["low"] * 4 + ["high"] * 4})
    by_label = agreement_for_run(run, "graded", named, score="label", kind="nominal", n_resamples=50)
    assert by_label.value("accuracy") == pytest.approx(1.0)


def test_empty_labels_and_missing_sub_scores_are_counted(run: EvalResult) -> None:
    labels = pd.DataFrame({"id": ["c0", "c1", "c2", "c3"], "label": [1, None, 0, 1]})
    report = agreement_for_run(run, "graded", labels, n_resamples=50)
    assert report.join is not None and report.join.empty_labels == 1 and report.join.used == 3


def test_mistakes_name_what_is_wrong(run: EvalResult, tmp_path: Path) -> None:
    with pytest.raises(AgreementError, match=r"no metric 'factuality'; its metrics are 'graded'"):
        agreement_for_run(run, "factuality", _labels())
    with pytest.raises(AgreementError, match=r"no label column 'rating'; its columns are 'id', 'label'"):
        agreement_for_run(run, "graded", _labels(), label_column="rating")
    with pytest.raises(AgreementError, match=r"no id column 'case_id'"):
        agreement_for_run(run, "graded", _labels(), id_column="case_id")
    with pytest.raises(AgreementError, match=r"no sub-score 'recall' \(its sub-scores are 'grade'\)"):
        agreement_for_run(run, "graded", _labels(), score="recall")
    with pytest.raises(AgreementError, match="matches a case of run"):
        agreement_for_run(run, "graded", pd.DataFrame({"id": ["x1", "x2"], "label": [0, 1]}))
    with pytest.raises(AgreementError, match=r"'c1' \(2×\)"):
        agreement_for_run(run, "graded", pd.DataFrame({"id": ["c1", "c1"], "label": [0, 1]}))
    missing = tmp_path / "nope.csv"
    with pytest.raises(AgreementError, match=f"{missing} does not exist"):
        agreement_for_run(run, "graded", missing)


def test_label_files(tmp_path: Path) -> None:
    csv = tmp_path / "labels.csv"
    csv.write_text("id,label\n007,yes\n8,no\n", encoding="utf-8")
    frame = read_labels(csv)
    assert list(frame["id"]) == ["007", "8"]  # ids stay text: 007 is not 7
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text(
        "\n".join(json.dumps(r) for r in [{"id": 7, "label": "yes"}, {"id": "c2", "label": None}]) + "\n",
        encoding="utf-8",
    )
    assert len(read_labels(jsonl)) == 2
    tsv = tmp_path / "labels.tsv"
    tsv.write_text("id\tlabel\na\t1\n", encoding="utf-8")
    assert list(read_labels(tsv).columns) == ["id", "label"]
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a", "label": \n', encoding="utf-8")
    with pytest.raises(AgreementError, match=r"broken.jsonl cannot be read as jsonl"):
        read_labels(broken)
    other = tmp_path / "labels.xlsx"
    other.write_text("", encoding="utf-8")
    with pytest.raises(AgreementError, match=r"unknown format '\.xlsx'"):
        read_labels(other)
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(AgreementError, match="cannot be read"):
        read_labels(empty)


def test_labels_from_a_file_match_the_run(run: EvalResult, tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        "\n".join(json.dumps(r) for r in _labels().to_dict(orient="records")) + "\n", encoding="utf-8"
    )
    report = agreement_for_run(run, "graded", path, n_resamples=50)
    assert report.join is not None and report.join.labels_source == str(path) and report.join.used == 8
