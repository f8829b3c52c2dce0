"""Human–human agreement: two annotators' labels compared (κ, weighted κ, strict and
within-one accuracy), from Python and from `clineval agreement` (hand-worked values)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tests.clirun import invoke

from clineval.agreement import (
    AgreementError,
    AgreementReport,
    rater_agreement,
    rater_agreement_for_labels,
)

FAST = 200
ORDER = ["low", "medium", "high"]
# Importance of ten facts by two annotators:
#   agree on 1, 3, 5, 7, 9; one level apart on 2, 4, 6, 8; two levels apart on 10.
FIRST = ["low", "low", "medium", "medium", "high", "high", "high", "medium", "low", "high"]
SECOND = ["low", "medium", "medium", "high", "high", "medium", "high", "low", "low", "low"]
# Hand-worked:
#   strict accuracy 5/10; within one level 9/10.
#   marginals: first L 3, M 3, H 4; second L 4, M 3, H 3.
#   κ: p_o = 0.5, p_e = (3·4 + 3·3 + 4·3) / 100 = 0.33 -> κ = 0.17 / 0.67.
#   quadratic weights (i − j)² / 4: one level 0.25, two levels 1.
#   observed disagreement (4 · 0.25 + 1 · 1) / 10 = 0.2;
#   expected: L·M .3·.3·.25 + L·H .3·.3·1 + M·L .3·.4·.25 + M·H .3·.3·.25
#             + H·L .4·.4·1 + H·M .4·.3·.25 = 0.355 -> weighted κ = 1 − 0.2 / 0.355.
KAPPA = 0.17 / 0.67
WEIGHTED = 1 - 0.2 / 0.355


def test_ordinal_importance_hand_worked() -> None:
    report = rater_agreement(FIRST, SECOND, label_order=ORDER, n_resamples=FAST)
    assert report.kind == "ordinal" and report.raters == ["first annotator", "second annotator"]
    assert report.value("accuracy") == pytest.approx(0.5)
    assert report.value("within_one_accuracy") == pytest.approx(0.9)
    assert report.value("cohen_kappa") == pytest.approx(KAPPA)
    assert report.value("weighted_kappa") == pytest.approx(WEIGHTED)
    assert report.names[:4] == ["cohen_kappa", "weighted_kappa", "accuracy", "within_one_accuracy"]
    # κ, accuracies and correlations do not depend on which annotator comes first
    swapped = rater_agreement(SECOND, FIRST, label_order=ORDER, n_resamples=FAST)
    for name in report.names:
        assert swapped.value(name) == pytest.approx(report.value(name))


def test_whole_number_levels_need_no_order() -> None:
    codes = {"low": 1, "medium": 2, "high": 3}
    report = rater_agreement([codes[v] for v in FIRST], [codes[v] for v in SECOND], n_resamples=FAST)
    assert report.kind == "ordinal" and report.kind_inferred
    assert report.value("weighted_kappa") == pytest.approx(WEIGHTED)
    assert report.value("within_one_accuracy") == pytest.approx(0.9)


def test_binary_labels_have_no_auc() -> None:
    # agree on 1, 3, 4, 5 -> accuracy 4/6; each says yes 3 times -> p_e 0.5, κ = (2/3 − 1/2) / (1/2) = 1/3;
    # TP 2 (1, 5), FN 1 (2), FP 1 (6) -> F1 = 4/6.
    first = ["yes", "yes", "no", "no", "yes", "no"]
    second = ["yes", "no", "no", "no", "yes", "yes"]
    report = rater_agreement(first, second, n_resamples=FAST)
    assert report.kind == "binary" and report.positive == "yes"
    assert report.names == ["cohen_kappa", "accuracy", "f1"]
    assert report.value("cohen_kappa") == pytest.approx(1 / 3)
    assert report.value("accuracy") == pytest.approx(4 / 6)
    assert report.value("f1") == pytest.approx(4 / 6)


def test_kind_is_inferred_from_both_annotators() -> None:
    # The first annotator says only "yes"; with the second's "no" it is still a yes/no pair.
    report = rater_agreement(["yes", "yes"], ["yes", "no"], n_resamples=FAST)
    assert report.kind == "binary" and report.kind_inferred
    assert any("inferred" in note for note in report.notes)


def test_rater_problems_are_clear() -> None:
    with pytest.raises(AgreementError, match="must be levels of the scale"):
        rater_agreement([1, 2, 3], [1.5, 2, 3], kind="ordinal")
    with pytest.raises(AgreementError, match="give their order"):
        rater_agreement(FIRST, SECOND, kind="ordinal")
    with pytest.raises(AgreementError, match="first annotator has 2 labels, second annotator 3"):
        rater_agreement([1, 2], [1, 2, 3])
    with pytest.raises(AgreementError, match="two different names"):
        rater_agreement([1], [1], names=("a", "a"))


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = [f"f{i}" for i in range(1, 11)]
    return pd.DataFrame({"id": ids, "importance": FIRST}), pd.DataFrame({"id": ids, "importance": SECOND})


def test_two_tables_matched_by_id_in_any_order() -> None:
    first, second = _frames()
    shuffled = second.iloc[::-1].reset_index(drop=True)  # rows in another order: matched by id
    extra = pd.concat([shuffled, pd.DataFrame({"id": ["f99"], "importance": ["high"]})], ignore_index=True)
    report = rater_agreement_for_labels(
        first, extra, label_column="importance", label_order=ORDER, n_resamples=FAST
    )
    assert report.value("cohen_kappa") == pytest.approx(KAPPA)
    join = report.rater_join
    assert join is not None
    assert (join.matched, join.used, join.only_first, join.only_second) == (10, 10, 0, 1)
    assert join.example_only_second == ["f99"]


def test_two_columns_of_one_table_and_empty_labels() -> None:
    both = pd.DataFrame({"id": ["a", "b", "c", "d"], "r1": [1, 2, 3, None], "r2": [1, 3, 3, 2]})
    report = rater_agreement_for_labels(both, label_column="r1", second_column="r2", n_resamples=FAST)
    assert report.raters == ["r1", "r2"]
    assert report.n == 3 and report.value("accuracy") == pytest.approx(2 / 3)
    assert report.rater_join is not None and report.rater_join.empty_first == 1


def test_mismatched_ids_and_columns_are_clear_errors() -> None:
    first, _ = _frames()
    other = pd.DataFrame({"id": ["x1", "x2"], "importance": ["low", "high"]})
    with pytest.raises(
        AgreementError, match=r"no id of DataFrame .*'f1'.* is an id of second DataFrame .*'x1'"
    ):
        rater_agreement_for_labels(first, other, label_column="importance", label_order=ORDER)
    twice = pd.DataFrame({"id": ["f1", "f1"], "importance": ["low", "high"]})
    with pytest.raises(AgreementError, match=r"appear more than once.*'f1' \(2×\)"):
        rater_agreement_for_labels(first, twice, label_column="importance", label_order=ORDER)
    with pytest.raises(AgreementError, match=r"no label column 'rater2'.*--second-column"):
        rater_agreement_for_labels(first, first, label_column="importance", second_column="rater2")
    with pytest.raises(AgreementError, match="give the second annotator's labels"):
        rater_agreement_for_labels(first, label_column="importance")
    with pytest.raises(AgreementError, match="both 'importance'"):
        rater_agreement_for_labels(first, label_column="importance", second_column="importance")


# -- command line ---------------------------------------------------------------------------


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    first = "id,importance\n" + "".join(f"f{i},{v}\n" for i, v in enumerate(FIRST, start=1))
    second = "id,importance\n" + "".join(f"f{i},{v}\n" for i, v in enumerate(SECOND, start=1)) + "f11,low\n"
    (tmp_path / "anna.csv").write_text(first, encoding="utf-8")
    (tmp_path / "ben.csv").write_text(second, encoding="utf-8")
    both = "id,anna,ben\n" + "".join(
        f"f{i},{a},{b}\n" for i, (a, b) in enumerate(zip(FIRST, SECOND, strict=True), 1)
    )
    (tmp_path / "both.csv").write_text(both, encoding="utf-8")
    (tmp_path / "other.csv").write_text("id,importance\nz1,low\nz2,high\n", encoding="utf-8")
    return tmp_path


def _run(*args: str) -> tuple[int, str, str]:
    done = invoke("agreement", *args, env={"COLUMNS": "160"})
    return done.exit_code, done.stdout, done.stderr


def test_cli_two_files_prints_kappa_and_within_one(files: Path) -> None:
    code, stdout, stderr = _run(
        "--labels",
        str(files / "anna.csv"),
        "--second-labels",
        str(files / "ben.csv"),
        "--label-column",
        "importance",
        "--order",
        "low,medium,high",
    )
    assert code == 0, stderr
    assert "agreement between annotators anna.csv and ben.csv · ordinal" in stdout
    assert "1 id(s) labelled by ben.csv only, left out (f11)" in stdout
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip() for line in stdout.splitlines() if "│" in line
    }
    assert rows["Cohen's κ"] == f"{KAPPA:.3f}" == "0.254"
    assert rows["quadratic-weighted κ"] == f"{WEIGHTED:.3f}" == "0.437"
    assert rows["accuracy"] == "0.500"
    assert rows["accuracy within one level"] == "0.900"


def test_cli_two_columns_as_json(files: Path) -> None:
    code, stdout, stderr = _run(
        "--labels",
        str(files / "both.csv"),
        "--label-column",
        "anna",
        "--second-column",
        "ben",
        "--order",
        "low,medium,high",
        "--json",
        "-",
    )
    assert code == 0, stderr
    report = AgreementReport.model_validate(json.loads(stdout))
    assert report.raters == ["anna", "ben"] and report.join is None
    assert report.rater_join is not None and report.rater_join.first_column == "anna"
    assert report.value("within_one_accuracy") == pytest.approx(0.9)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--labels", "anna.csv", "--second-labels", "other.csv", "--label-column", "importance"],
            "no id of",
        ),
        (["--labels", "anna.csv"], "missing RUN_REF and --metric"),
        (["latest", "--labels", "anna.csv", "--second-labels", "ben.csv"], "give one or the other"),
        (
            [
                "--labels",
                "anna.csv",
                "--second-labels",
                "ben.csv",
                "--label-column",
                "importance",
                "--threshold",
                "0.5",
            ],
            "--threshold applies to a run's metric",
        ),
        (
            ["--labels", "both.csv", "--second-column", "carl", "--label-column", "anna"],
            "no label column 'carl'",
        ),
        (["--labels", "anna.csv", "--second-id-column", "key"], "--second-id-column applies"),
    ],
)
def test_cli_mistakes_are_one_line(files: Path, args: list[str], message: str) -> None:
    resolved = [str(files / a) if a.endswith(".csv") else a for a in args]
    code, _, stderr = _run(*resolved)
    assert code == 2
    assert message in stderr and "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1
