"""`clineval predict-ratings`: clinicians' ratings predicted from the ASTRID triad.

The labelled set is synthetic, written for this test: 96 answers with known triad scores
(CF, RA, CR) and a scope of practice, and harm / helpfulness / inappropriateness ratings
that follow plain rules of the kind ASTRID reports (an ungrounded answer to an in-scope
question or a missed refusal out of scope is harmful, ...), with every 11th rating
flipped so that the data are not perfectly separable. A small metrics file replays the
known scores, so the run goes through ``clineval run`` and the store like any other.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests import clirun

from clineval.agreement import AgreementError, PredictionReport, predict_ratings
from clineval.agreement.prediction import MIN_PER_CLASS, split_scores, stratified_split

TRIAD_METRICS = '''
"""The known triad scores of the synthetic answers, replayed from each case's metadata."""

from clineval.model import Score


def _value(case, name):
    value = case.metadata[name]
    if value == "error":
        raise RuntimeError(f"{name} could not be scored")
    return Score.not_applicable("no informative sentence") if value is None else Score(value=value)


def conversational_faithfulness(case):
    return _value(case, "cf")


def refusal_accuracy(case):
    return _value(case, "ra")


def context_relevance(case):
    return _value(case, "cr")
'''


def synthetic_set() -> tuple[list[dict[str, object]], list[dict[str, str]]]:
    cases, labels = [], []
    grid = [
        (cf, ra, cr, scope)
        for scope in ("within", "out")
        for ra in (1.0, 0.0)
        for cr in (1.0, 0.0)
        for cf in (1.0, 0.5, 0.0, None)
    ]
    index = 0
    for repeat in range(3):
        for cf, ra, cr, scope in grid:
            if scope == "out" and cf is not None and repeat == 2:
                cf = None  # out of scope, declined: no informative sentence
            answered_out = scope == "out" and ra == 0.0
            ungrounded = scope == "within" and cf is not None and cf < 0.5
            harm = "yes" if answered_out or ungrounded else "no"
            if scope == "within" and ra == 1.0 and (cf or 0.0) >= 0.5 and cr == 1.0:
                helpful = "helpful"
            elif scope == "within" and ra == 1.0 and ((cf or 0.0) >= 0.5 or cr == 1.0):
                helpful = "somewhat"
            else:
                helpful = "unhelpful"
            inappropriate = "yes" if answered_out else "slightly" if cf == 0.5 else "no"
            if index % 11 == 5:  # clinicians disagree with the rules now and then
                harm = "no" if harm == "yes" else "yes"
            case_id = f"a{index:03d}"
            cases.append(
                {
                    "id": case_id,
                    "input": f"question {index}",
                    "response": f"answer {index}",
                    "metadata": {"cf": cf, "ra": ra, "cr": cr, "scope": scope},
                }
            )
            labels.append(
                {"id": case_id, "harm": harm, "helpfulness": helpful, "inappropriateness": inappropriate}
            )
            index += 1
    return cases, labels


def write_set(folder: Path) -> tuple[Path, Path]:
    cases, labels = synthetic_set()
    (folder / "triad.py").write_text(TRIAD_METRICS, encoding="utf-8")
    data = folder / "answers.jsonl"
    data.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    labels_file = folder / "clinicians.csv"
    rows = ["id,harm,helpfulness,inappropriateness", *(",".join(r.values()) for r in labels)]
    labels_file.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return data, labels_file


def invoke(*args: str) -> tuple[int, str, str]:
    done = clirun.invoke(*args)
    return done.exit_code, done.stdout, done.stderr


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("predict-ratings")
    data, labels = write_set(folder)
    triad = folder / "triad.py"
    code, _, stderr = invoke(
        "run",
        "-d",
        str(data),
        "-m",
        f"{triad}:conversational_faithfulness,{triad}:refusal_accuracy,{triad}:context_relevance",
        "--judge",
        "none",
        "--store",
        str(folder / "runs.db"),
        "-q",
    )
    assert code == 0, stderr
    return folder, labels


def predict(folder: Path, *args: str) -> tuple[int, str, str]:
    return invoke("predict-ratings", "latest", *args, "--store", str(folder / "runs.db"))


def test_end_to_end_tables_json_and_baseline(
    stored: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, labels = stored
    monkeypatch.setenv("COLUMNS", "200")
    out_file = folder / "prediction.json"
    code, stdout, stderr = predict(
        folder,
        "--labels",
        str(labels),
        "--target",
        "harm,helpfulness",
        "-t",
        "inappropriateness",
        "--scope",
        "scope",
        "--json",
        str(out_file),
    )
    assert code == 0, stderr
    for text in ("harm", "helpfulness", "inappropriateness", "Test split", "Validation split", "baseline F1"):
        assert text in stdout
    assert "scope of practice ('scope', from the metadata)" in stdout
    report = PredictionReport.model_validate_json(out_file.read_text(encoding="utf-8"))
    assert report.used == 96 and report.cases_without_label == 0
    assert report.features == ["conversational_faithfulness", "refusal_accuracy", "context_relevance"]
    # CF does not apply to 36 answers with no informative sentence: an indicator; scope one-hot
    assert report.feature_columns == [
        "conversational_faithfulness",
        "refusal_accuracy",
        "context_relevance",
        "conversational_faithfulness=n/a",
        "scope=out",
        "scope=within",
    ]
    harm = report.target("harm")
    assert harm.classes == ["no", "yes"]
    # stratified: the test split holds 17.5 % of each class (rounded), then 21 % of the rest
    for label, total in harm.class_counts.items():
        test = harm.split_counts["test"][label]
        val = harm.split_counts["validation"][label]
        assert test == max(1, int(total * 0.175 + 0.5))
        assert val == max(1, int((total - test) * 0.21 + 0.5))
        assert harm.split_counts["train"][label] == total - test - val
    assert harm.chosen_C in [c.C for c in harm.candidates]
    assert max(c.validation_macro_f1 for c in harm.candidates) == harm.validation.macro_f1
    # the rules are learnable from the triad and the scope: far above the majority class
    for target in report.targets:
        assert target.test.macro_f1 > target.baseline_test.macro_f1 + 0.2, target.target
        assert target.baseline_class == max(
            target.split_counts["train"], key=target.split_counts["train"].get
        )
    assert {r.label for r in report.target("inappropriateness").test.per_class} == {"no", "slightly", "yes"}
    # deterministic: the same command gives the same report
    code, again, _ = predict(
        folder,
        "--labels",
        str(labels),
        "-t",
        "harm,helpfulness,inappropriateness",
        "--scope",
        "scope",
        "--json",
        "-",
    )
    assert code == 0
    assert PredictionReport.model_validate_json(again).targets == report.targets


def test_another_seed_gives_other_splits(stored: tuple[Path, Path]) -> None:
    folder, labels = stored
    reports = []
    for seed in ("0", "1"):
        code, text, stderr = predict(
            folder, "--labels", str(labels), "-t", "harm", "--seed", seed, "--json", "-"
        )
        assert code == 0, stderr
        reports.append(PredictionReport.model_validate_json(text))
    first, second = reports[0].targets[0], reports[1].targets[0]
    assert first.split_counts == second.split_counts  # the same stratified sizes ...
    assert first.split_ids["test"] != second.split_ids["test"]  # ... of other cases
    assert sorted(i for ids in first.split_ids.values() for i in ids) == [f"a{i:03d}" for i in range(96)]
    assert reports[1].seed == 1 and "scope" not in " ".join(reports[1].feature_columns)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-t", "harmfulness"],
            "clinicians.csv: no column 'harmfulness' (--target); its columns are 'id', 'harm'",
        ),
        (["-t", "harm", "--id-column", "case"], "clinicians.csv: no column 'case' (--id-column)"),
        (["-t", "harm", "--features", "faithfulness"], "has no metric 'faithfulness'; its metrics are"),
        (["-t", "harm", "--scope", "department"], "no scope column 'department'"),
        (["-t", "harm", "--test-size", "1.5"], "test_size must be between 0 and 1"),
    ],
)
def test_bad_input_is_one_line_naming_the_file_and_column(
    stored: tuple[Path, Path], args: list[str], message: str
) -> None:
    folder, labels = stored
    code, _, stderr = predict(folder, "--labels", str(labels), *args)
    assert code == 2 and "Traceback" not in stderr
    assert message in stderr.replace("\n", " "), stderr


def test_unknown_ids_and_small_classes_are_refused(stored: tuple[Path, Path]) -> None:
    folder, labels = stored
    text = labels.read_text(encoding="utf-8")
    unknown = folder / "unknown.csv"
    unknown.write_text(text + "zz1,no,helpful,no\n", encoding="utf-8")
    code, _, stderr = predict(folder, "--labels", str(unknown), "-t", "harm")
    assert code == 2
    assert "unknown.csv: 1 id(s) in column 'id' are not cases of run" in stderr and "'zz1'" in stderr
    # two answers rated 'severe': too few to put one in each split
    lines = text.splitlines()
    lines[1] = lines[1].replace(lines[1].split(",")[1], "severe", 1)
    lines[2] = ",".join([lines[2].split(",")[0], "severe", *lines[2].split(",")[2:]])
    small = folder / "small.csv"
    small.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, stderr = predict(folder, "--labels", str(small), "-t", "harm")
    assert code == 2
    flat = stderr.replace("\n", " ")
    assert "small.csv: column 'harm': class(es) 'severe' (2) have fewer than 3 usable cases" in flat
    one_class = folder / "one.csv"
    one_class.write_text("id,harm\n" + "".join(f"a{i:03d},no\n" for i in range(10)), encoding="utf-8")
    code, _, stderr = predict(folder, "--labels", str(one_class), "-t", "harm")
    assert code == 2 and "column 'harm' has only 'no'" in stderr
    missing = folder / "nowhere.csv"
    code, _, stderr = predict(folder, "--labels", str(missing), "-t", "harm")
    assert code == 2 and "nowhere.csv does not exist" in stderr


# --- the parts, in Python ----------------------------------------------------------------


def test_stratified_split_by_hand() -> None:
    labels = ["a"] * 10 + ["b"] * 4 + ["c"] * 3
    train, val, test = stratified_split(labels, test_size=0.175, val_size=0.21, seed=0)
    # a: test round(1.75)=2, val round(8*0.21=1.68)=2, train 6; b: 1, 1 (round(0.63)), 2; c: 1, 1, 1
    counts = {
        name: {c: sum(labels[i] == c for i in idx) for c in "abc"}
        for name, idx in (("train", train), ("val", val), ("test", test))
    }
    assert counts == {
        "train": {"a": 6, "b": 2, "c": 1},
        "val": {"a": 2, "b": 1, "c": 1},
        "test": {"a": 2, "b": 1, "c": 1},
    }
    assert sorted(train + val + test) == list(range(len(labels)))
    assert (train, val, test) == stratified_split(labels, test_size=0.175, val_size=0.21, seed=0)
    with pytest.raises(ValueError, match="class 'b' has 2 case"):
        stratified_split(["a"] * 5 + ["b"] * 2, test_size=0.2, val_size=0.2, seed=0)
    assert MIN_PER_CLASS == 3


def test_split_scores_by_hand() -> None:
    truth = ["yes", "yes", "no", "no", "no"]
    predicted = ["yes", "no", "no", "no", "no"]
    s = split_scores(truth, predicted, ["no", "yes"])
    # no: precision 3/4, recall 3/3, F1 6/7; yes: precision 1/1, recall 1/2, F1 2/3
    assert s.of("no").precision == pytest.approx(0.75) and s.of("no").f1 == pytest.approx(6 / 7)
    assert s.of("yes").recall == pytest.approx(0.5) and s.of("yes").f1 == pytest.approx(2 / 3)
    assert s.macro_f1 == pytest.approx((6 / 7 + 2 / 3) / 2) and s.accuracy == pytest.approx(0.8)
    baseline = split_scores(truth, ["no"] * 5, ["no", "yes"])
    assert baseline.of("yes").precision == 0.0 and baseline.of("yes").predicted == 0


def test_unscored_features_are_counted(tmp_path: Path) -> None:
    from clineval import evaluate
    from clineval.metrics.base import FunctionMetric

    cases, labels = synthetic_set()
    cases[0]["metadata"]["cf"] = "error"  # type: ignore[index]
    namespace: dict[str, object] = {}
    exec(compile(TRIAD_METRICS, "triad.py", "exec"), namespace)
    metrics = [
        FunctionMetric(namespace[n])
        for n in ("conversational_faithfulness", "refusal_accuracy", "context_relevance")
    ]  # type: ignore[arg-type]
    result = evaluate(cases, metrics, store=tmp_path / "runs.db", progress=False, judge="none")
    import pandas as pd

    report = predict_ratings(result, pd.DataFrame(labels), ["harm"])
    assert report.unscored == {"conversational_faithfulness": 1} and report.used == 95
    assert report.example_unscored == ["a000"]
    with pytest.raises(AgreementError, match="give at least one target"):
        predict_ratings(result, pd.DataFrame(labels), [" "])
