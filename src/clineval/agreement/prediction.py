"""Predicting clinicians' ratings from a run's ASTRID triad (Chowdhury et al., section 4.2.2).

ASTRID shows that Conversational Faithfulness, Refusal Accuracy and Context Relevance,
with the scope of practice (within scope / out of scope), predict how clinicians rate an
answer's harm, helpfulness and inappropriateness. :func:`predict_ratings` does the same
with a stored run and a file of clinician labels:

* **features**, per case: the value of each triad metric (default
  ``conversational_faithfulness``, ``refusal_accuracy``, ``context_relevance``); a metric
  that does not apply to a case (CF on an answer without informative sentence) gives 0
  plus a ``<metric>=n/a`` indicator; a case a metric could not score is left out and
  counted. With ``scope``, one indicator per scope value, read from that labels column
  or, failing that, the case metadata field of that name;
* **splits**, per target column, stratified by its classes and seeded: the test split is
  reserved first (``test_size`` of each class, default 17.5 %), then the rest is split
  into validation (``val_size`` of it, default 21 %) and training (the remaining 79 %).
  Every split gets at least one case of every class, so each class needs 3 cases;
* **model**: multinomial logistic regression (scikit-learn, ``class_weight="balanced"``,
  L2). Its regularisation ``C`` is chosen among :data:`C_GRID` by macro F1 on the
  validation split (ties: the smaller ``C``); the chosen model, fitted on the training
  split only, is evaluated once on the test split;
* **baseline**: the majority class of the training split, predicted for every case;
* **report**: per class precision, recall, F1 and support, macro F1 and accuracy, on the
  test split and (for the choice of ``C``) the validation split, model and baseline side
  by side. Precision of a class never predicted is reported as 0 (scikit-learn's
  ``zero_division=0``), with a note.

Mistakes are :class:`~clineval.agreement.report.AgreementError` naming the file, column or
case: a missing column, label ids that are not cases of the run, a repeated id, a target
with one class, or a class with fewer than 3 cases.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from clineval.agreement.join import read_labels
from clineval.agreement.report import AgreementError, is_missing

if TYPE_CHECKING:
    import pandas as pd

    from clineval.results.result import EvalResult

DEFAULT_FEATURES: tuple[str, ...] = ("conversational_faithfulness", "refusal_accuracy", "context_relevance")
DEFAULT_TEST_SIZE = 0.175
DEFAULT_VAL_SIZE = 0.21
C_GRID: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0, 100.0)
MIN_PER_CLASS = 3
MODEL_DESCRIPTION = (
    "logistic regression (scikit-learn, L2, class_weight=balanced), C chosen on validation macro F1"
)
_EXAMPLES = 10


class ClassScores(BaseModel):
    """Precision, recall and F1 of one class on one split."""

    model_config = ConfigDict(extra="forbid")

    label: str
    precision: float
    recall: float
    f1: float
    support: int
    """Cases of this class in the split."""
    predicted: int
    """Cases predicted as this class."""


class SplitScores(BaseModel):
    """How one classifier did on one split."""

    model_config = ConfigDict(extra="forbid")

    n: int
    accuracy: float
    macro_f1: float
    per_class: list[ClassScores]

    def of(self, label: str) -> ClassScores:
        for row in self.per_class:
            if row.label == label:
                return row
        raise KeyError(f"no class {label!r}; classes: {', '.join(r.label for r in self.per_class)}")


class Candidate(BaseModel):
    """One setting of the model and its validation figures."""

    model_config = ConfigDict(extra="forbid")

    C: float
    validation_macro_f1: float


class Coefficient(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    """The class the weight pushes towards (for two classes: the second, in sorted order)."""
    feature: str
    weight: float


class TargetReport(BaseModel):
    """The prediction of one label column."""

    model_config = ConfigDict(extra="forbid")

    target: str
    classes: list[str]
    class_counts: dict[str, int]
    split_counts: dict[str, dict[str, int]]
    """``train``, ``validation``, ``test`` -> class -> cases."""
    split_ids: dict[str, list[str]]
    """``train``, ``validation``, ``test`` -> the case ids in that split."""
    empty_labels: int = 0
    """Cases left out of this target because its cell is empty."""
    candidates: list[Candidate]
    chosen_C: float
    validation: SplitScores
    test: SplitScores
    baseline_class: str
    baseline_validation: SplitScores
    baseline_test: SplitScores
    coefficients: list[Coefficient]
    notes: list[str] = Field(default_factory=list)


class PredictionReport(BaseModel):
    """Clinician ratings predicted from a run's triad scores (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    labels_source: str
    id_column: str
    features: list[str]
    """The metrics used as features."""
    feature_columns: list[str]
    """The model's input columns: metric values, n/a indicators, scope indicators."""
    scope: str | None = None
    scope_source: str | None = None
    """``labels`` or ``metadata``: where the scope values came from."""
    model: str = MODEL_DESCRIPTION
    test_size: float
    val_size: float
    seed: int
    run_cases: int
    label_rows: int
    used: int
    """Labelled cases with every feature."""
    cases_without_label: int
    example_cases_without_label: list[str] = Field(default_factory=list)
    unscored: dict[str, int] = Field(default_factory=dict)
    """Labelled cases left out because a feature metric could not score them, by metric."""
    without_scope: int = 0
    example_unscored: list[str] = Field(default_factory=list)
    targets: list[TargetReport]

    def target(self, name: str) -> TargetReport:
        for report in self.targets:
            if report.target == name:
                return report
        raise KeyError(f"no target {name!r}; targets: {', '.join(t.target for t in self.targets)}")


# --------------------------------------------------------------------------- helpers


def _text(value: Any) -> str:
    """A label or id as text: ``1.0`` -> ``"1"``, surrounding spaces removed."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _half_up(x: float) -> int:
    return math.floor(x + 0.5)


def stratified_split(
    labels: Sequence[str], *, test_size: float, val_size: float, seed: int
) -> tuple[list[int], list[int], list[int]]:
    """Positions of the training, validation and test cases: per class (in sorted order),
    the positions are shuffled with ``numpy.random.default_rng(seed)``, ``test_size`` of them
    (rounded, at least 1) go to test, ``val_size`` of the rest (rounded, at least 1) to
    validation and the others to training. Each class needs :data:`MIN_PER_CLASS` cases."""
    rng = np.random.default_rng(seed)
    train: list[int] = []
    val: list[int] = []
    test: list[int] = []
    for label in sorted(set(labels)):
        positions = [i for i, value in enumerate(labels) if value == label]
        if len(positions) < MIN_PER_CLASS:
            raise ValueError(f"class {label!r} has {len(positions)} case(s)")
        order = [positions[i] for i in rng.permutation(len(positions))]
        n_test = max(1, _half_up(len(order) * test_size))
        n_val = max(1, _half_up((len(order) - n_test) * val_size))
        n_test = min(n_test, len(order) - 2)
        n_val = min(n_val, len(order) - n_test - 1)
        test += order[:n_test]
        val += order[n_test : n_test + n_val]
        train += order[n_test + n_val :]
    return sorted(train), sorted(val), sorted(test)


def split_scores(truth: Sequence[str], predicted: Sequence[str], classes: Sequence[str]) -> SplitScores:
    """Per-class precision, recall and F1 (``zero_division=0``), macro F1 and accuracy."""
    from sklearn.metrics import precision_recall_fscore_support

    precision, recall, f1, support = precision_recall_fscore_support(
        list(truth), list(predicted), labels=list(classes), zero_division=0
    )
    counts = Counter(predicted)
    rows = [
        ClassScores(
            label=label,
            precision=float(precision[i]),
            recall=float(recall[i]),
            f1=float(f1[i]),
            support=int(support[i]),
            predicted=counts.get(label, 0),
        )
        for i, label in enumerate(classes)
    ]
    accuracy = sum(t == p for t, p in zip(truth, predicted, strict=True)) / len(truth) if truth else 0.0
    return SplitScores(
        n=len(truth), accuracy=accuracy, macro_f1=float(np.mean([r.f1 for r in rows])), per_class=rows
    )


def _never_predicted(scores: SplitScores, who: str, split: str) -> str | None:
    missing = [r.label for r in scores.per_class if r.predicted == 0 and r.support > 0]
    if not missing:
        return None
    return (
        f"{who} never predicts {', '.join(map(repr, missing))} on the {split} split: "
        "its precision is reported as 0"
    )


def _pick(y: Sequence[str], positions: Sequence[int]) -> list[str]:
    return [y[i] for i in positions]


def _fit(x: np.ndarray[Any, Any], y: Sequence[str], train: Sequence[int], c: float) -> Any:
    """Logistic regression with regularisation ``c``, fitted on the training positions."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000)
    model.fit(x[list(train)], _pick(y, train))
    return model


def _predict(model: Any, x: np.ndarray[Any, Any], positions: Sequence[int]) -> list[str]:
    return [str(p) for p in model.predict(x[list(positions)])]


# --------------------------------------------------------------------------- the analysis


def _labels_frame(labels: pd.DataFrame | str | Path, id_column: str) -> tuple[pd.DataFrame, str]:
    import pandas as pd

    if isinstance(labels, pd.DataFrame):
        return labels, "DataFrame"
    return read_labels(labels, id_column=id_column), str(labels)


def _check_fractions(test_size: float, val_size: float) -> None:
    for name, value in (("test_size", test_size), ("val_size", val_size)):
        if not 0.0 < value < 1.0:
            raise AgreementError(f"{name} must be between 0 and 1 (exclusive), not {value}")


def predict_ratings(
    result: EvalResult,
    labels: pd.DataFrame | str | Path,
    targets: Sequence[str],
    *,
    features: Sequence[str] = DEFAULT_FEATURES,
    scope: str | None = None,
    id_column: str = "id",
    test_size: float = DEFAULT_TEST_SIZE,
    val_size: float = DEFAULT_VAL_SIZE,
    seed: int = 0,
) -> PredictionReport:
    """Predict each ``targets`` column of ``labels`` from the run's ``features`` metrics
    (and ``scope``), with the splits, model and baseline of the module docstring."""
    _check_fractions(test_size, val_size)
    targets = list(dict.fromkeys(t.strip() for t in targets if t.strip()))
    if not targets:
        raise AgreementError("give at least one target column to predict (e.g. harm)")
    features = list(dict.fromkeys(f.strip() for f in features if f.strip()))
    if not features:
        raise AgreementError("give at least one feature metric (e.g. conversational_faithfulness)")
    run_metrics = list(dict.fromkeys([*result.metrics, *(r.metric for r in result.results)]))
    absent = [f for f in features if f not in run_metrics]
    if absent:
        raise AgreementError(
            f"run {result.run_id} has no metric {', '.join(map(repr, absent))}; "
            f"its metrics are {', '.join(map(repr, run_metrics))}"
        )
    frame, source = _labels_frame(labels, id_column)
    columns = [str(c) for c in frame.columns]
    needed = [(id_column, "--id-column"), *((t, "--target") for t in targets)]
    for column, option in needed:
        if column not in frame.columns:
            raise AgreementError(
                f"{source}: no column {column!r} ({option}); its columns are "
                f"{', '.join(map(repr, columns)) or 'none'}"
            )
    case_ids = [c.id for c in result.cases]
    in_run = set(case_ids)
    rows: dict[str, dict[str, Any]] = {}
    for number, record in enumerate(frame.to_dict(orient="records"), start=1):
        raw_id = record[id_column]
        if is_missing(raw_id):
            raise AgreementError(f"{source}: row {number} has no {id_column!r}")
        case_id = _text(raw_id)
        if case_id in rows:
            raise AgreementError(f"{source}: case id {case_id!r} appears more than once in {id_column!r}")
        rows[case_id] = {str(k): v for k, v in record.items()}
    unknown = [cid for cid in rows if cid not in in_run]
    if unknown:
        shown = ", ".join(map(repr, unknown[:5])) + (", …" if len(unknown) > 5 else "")
        raise AgreementError(
            f"{source}: {len(unknown)} id(s) in column {id_column!r} are not cases of run {result.run_id} "
            f"({shown}); the run's ids look like {', '.join(map(repr, case_ids[:3]))}"
        )

    # scope of practice: a labels column, else a metadata field of the cases
    scope_by_case: dict[str, str | None] = {}
    scope_source: str | None = None
    if scope is not None:
        if scope in frame.columns:
            scope_source = "labels"
            scope_by_case = {
                cid: None if is_missing(r[scope]) else _text(r[scope]) for cid, r in rows.items()
            }
        else:
            scope_source = "metadata"
            meta = {c.id: c.metadata.get(scope) for c in result.cases}
            if not any(not is_missing(v) for cid, v in meta.items() if cid in rows):
                raise AgreementError(
                    f"no scope column {scope!r} in {source} (its columns are "
                    f"{', '.join(map(repr, columns))}) and no case of the run has metadata {scope!r}"
                )
            scope_by_case = {cid: None if is_missing(meta[cid]) else _text(meta[cid]) for cid in rows}

    # features per labelled case
    by_metric = {f: {r.case_id: r.score for r in result.results if r.metric == f} for f in features}
    unscored: Counter[str] = Counter()
    example_unscored: list[str] = []
    without_scope = 0
    usable: list[str] = []
    for cid in case_ids:
        if cid not in rows:
            continue
        bad = []
        for f in features:
            found = by_metric[f].get(cid)
            # no score, an error, or a score with sub-scores only: no value to use
            if found is None or found.status == "error" or (found.status == "scored" and found.value is None):
                bad.append(f)
        if bad:
            unscored.update(bad)
            if len(example_unscored) < _EXAMPLES:
                example_unscored.append(cid)
            continue
        if scope is not None and scope_by_case.get(cid) is None:
            without_scope += 1
            continue
        usable.append(cid)
    na_features = [f for f in features if any(by_metric[f][cid].status == "not_applicable" for cid in usable)]
    scope_values = sorted({v for cid in usable if (v := scope_by_case.get(cid)) is not None})
    feature_columns = [
        *features,
        *(f"{f}=n/a" for f in na_features),
        *(f"{scope}={v}" for v in scope_values),
    ]

    def vector(cid: str) -> list[float]:
        values = []
        for f in features:
            score = by_metric[f][cid]
            values.append(float(score.value) if score.status == "scored" and score.value is not None else 0.0)
        values += [1.0 if by_metric[f][cid].status == "not_applicable" else 0.0 for f in na_features]
        values += [1.0 if scope_by_case.get(cid) == v else 0.0 for v in scope_values]
        return values

    matrix = {cid: vector(cid) for cid in usable}
    reports: list[TargetReport] = []
    for target in targets:
        labelled = [(cid, _text(rows[cid][target])) for cid in usable if not is_missing(rows[cid][target])]
        empty = len(usable) - len(labelled)
        classes = sorted({label for _, label in labelled})
        counts = Counter(label for _, label in labelled)
        if len(classes) < 2:
            only = f"only {classes[0]!r}" if classes else "no label"
            raise AgreementError(
                f"{source}: column {target!r} has {only} among the {len(labelled)} usable case(s); "
                "a prediction needs at least two classes"
            )
        small = [c for c in classes if counts[c] < MIN_PER_CLASS]
        if small:
            listed = ", ".join(f"{c!r} ({counts[c]})" for c in small)
            raise AgreementError(
                f"{source}: column {target!r}: class(es) {listed} have fewer than {MIN_PER_CLASS} usable "
                "cases, too few to put one in each of the training, validation and test splits; "
                "label more cases or merge the class with another"
            )
        y = [label for _, label in labelled]
        x = np.asarray([matrix[cid] for cid, _ in labelled], dtype=np.float64)
        train, val, test = stratified_split(y, test_size=test_size, val_size=val_size, seed=seed)
        candidates: list[Candidate] = []
        best: tuple[float, float, Any] | None = None
        for c in C_GRID:
            fitted = _fit(x, y, train, c)
            score = split_scores(_pick(y, val), _predict(fitted, x, val), classes).macro_f1
            candidates.append(Candidate(C=c, validation_macro_f1=score))
            if best is None or score > best[0] + 1e-12:
                best = (score, c, fitted)
        assert best is not None
        _, chosen_c, model = best
        validation = split_scores(_pick(y, val), _predict(model, x, val), classes)
        tested = split_scores(_pick(y, test), _predict(model, x, test), classes)
        train_counts = Counter(_pick(y, train))
        majority = sorted(classes, key=lambda c: (-train_counts[c], c))[0]
        baseline_validation = split_scores(_pick(y, val), [majority] * len(val), classes)
        baseline_test = split_scores(_pick(y, test), [majority] * len(test), classes)
        weights = np.atleast_2d(model.coef_)
        weight_classes = (
            [str(model.classes_[1])] if weights.shape[0] == 1 else [str(c) for c in model.classes_]
        )
        coefficients = [
            Coefficient(label=label, feature=feature, weight=float(weights[k, j]))
            for k, label in enumerate(weight_classes)
            for j, feature in enumerate(feature_columns)
        ]
        notes = [
            note
            for note in (
                _never_predicted(tested, "the model", "test"),
                _never_predicted(baseline_test, "the baseline", "test"),
            )
            if note
        ]
        if len(test) < 10:
            notes.append(f"the test split has {len(test)} case(s): the figures are rough; label more cases")
        reports.append(
            TargetReport(
                target=target,
                classes=classes,
                class_counts={c: counts[c] for c in classes},
                split_counts={
                    name: {c: Counter(_pick(y, idx))[c] for c in classes}
                    for name, idx in (("train", train), ("validation", val), ("test", test))
                },
                split_ids={
                    name: [labelled[i][0] for i in idx]
                    for name, idx in (("train", train), ("validation", val), ("test", test))
                },
                empty_labels=empty,
                candidates=candidates,
                chosen_C=chosen_c,
                validation=validation,
                test=tested,
                baseline_class=majority,
                baseline_validation=baseline_validation,
                baseline_test=baseline_test,
                coefficients=coefficients,
                notes=notes,
            )
        )
    without_label = [cid for cid in case_ids if cid not in rows]
    return PredictionReport(
        run_id=result.run_id,
        labels_source=source,
        id_column=id_column,
        features=features,
        feature_columns=feature_columns,
        scope=scope,
        scope_source=scope_source,
        test_size=test_size,
        val_size=val_size,
        seed=seed,
        run_cases=len(case_ids),
        label_rows=len(frame),
        used=len(usable),
        cases_without_label=len(without_label),
        example_cases_without_label=without_label[:_EXAMPLES],
        unscored=dict(unscored),
        without_scope=without_scope,
        example_unscored=example_unscored,
        targets=reports,
    )
