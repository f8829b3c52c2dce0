"""Matching a run's scores (or a second annotator's labels) to human labels by case id,
and reporting their agreement.

Nothing is dropped silently: the report's :class:`~clineval.agreement.report.JoinSummary`
counts run cases without a label, labels without a case, empty labels, and matched cases
left out because the metric could not score them (``unscored``), did not apply
(``not_applicable``) or gave no value for the chosen score (``no_value``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from clineval.agreement.report import (
    AgreementError,
    AgreementReport,
    JoinSummary,
    Kind,
    RaterJoinSummary,
    agreement,
    is_missing,
    rater_agreement,
)
from clineval.model import Score

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from clineval.results.result import EvalResult

LABEL_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".json")
_EXAMPLES = 10


def _id_text(value: Any) -> str:
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _some(ids: list[str]) -> str:
    return ", ".join(map(repr, ids[:3])) or "none"


def read_labels(path: str | Path, *, id_column: str = "id") -> pd.DataFrame:
    """A labels file as a table: CSV, TSV, JSON Lines (``.jsonl``) or a JSON list of objects.

    The id column is read as text, so ``007`` stays ``007``.
    """
    import pandas as pd

    file = Path(path)
    if not file.exists():
        raise AgreementError(f"labels file {file} does not exist")
    if file.is_dir():
        raise AgreementError(f"labels file {file} is a folder, not a file")
    suffix = file.suffix.lower()
    if suffix not in LABEL_SUFFIXES:
        raise AgreementError(
            f"labels file {file}: unknown format {suffix or '(no suffix)'!r}; "
            f"use one of {', '.join(LABEL_SUFFIXES)}"
        )
    try:
        if suffix in (".csv", ".tsv"):
            return pd.read_csv(file, sep="\t" if suffix == ".tsv" else ",", dtype={id_column: str})
        frame = pd.read_json(file, lines=suffix != ".json", dtype=False)
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise AgreementError(f"labels file {file} cannot be read as {suffix[1:]}: {reason}") from None
    if not isinstance(frame, pd.DataFrame):
        raise AgreementError(f"labels file {file}: expected a list of objects, one per case")
    return frame


def _label_table(
    labels: pd.DataFrame | str | Path,
    id_column: str,
    label_column: str,
    *,
    options: tuple[str, str] = ("id_column= / --id-column", "label_column= / --label-column"),
    source: str | None = None,
) -> tuple[dict[str, Any], int, str]:
    """``{case id: label}``, the number of rows, and where the labels came from.

    ``options`` are how the user chooses the id and the label column (for messages)."""
    import pandas as pd

    if isinstance(labels, pd.DataFrame):
        frame, source = labels, source or "DataFrame"
    else:
        frame, source = read_labels(labels, id_column=id_column), str(labels)
    columns = [str(c) for c in frame.columns]
    for what, column, option in (("id", id_column, options[0]), ("label", label_column, options[1])):
        if column not in frame.columns:
            raise AgreementError(
                f"{source}: no {what} column {column!r}; its columns are "
                f"{', '.join(map(repr, columns)) or 'none'} (choose one with {option})"
            )
    table: dict[str, Any] = {}
    duplicates: dict[str, int] = {}
    for row, (raw_id, label) in enumerate(zip(frame[id_column], frame[label_column], strict=True), start=1):
        if is_missing(raw_id):
            raise AgreementError(f"{source}: row {row} has no {id_column!r}")
        case_id = _id_text(raw_id)
        if case_id in table:
            duplicates[case_id] = duplicates.get(case_id, 1) + 1
        table[case_id] = label
    if duplicates:
        shown = ", ".join(f"{k!r} ({n}×)" for k, n in list(duplicates.items())[:5])
        raise AgreementError(
            f"{source}: {len(duplicates)} id(s) appear more than once in {id_column!r}: {shown}; "
            "give one label per case (for several raters per case, see fleiss_kappa)"
        )
    return table, len(frame), source


def _score_reader(result: EvalResult, metric: str, score: str) -> tuple[str, Any]:
    """What to read from each score: ``value``, ``label`` or a sub-score (its name)."""
    if score in ("value", "label"):
        return score, score
    sub = score.removeprefix(f"{metric}.")
    available = dict.fromkeys(k for r in result.results if r.metric == metric for k in r.score.sub_scores)
    if sub not in available:
        has = f"its sub-scores are {', '.join(map(repr, available))}" if available else "it has no sub-scores"
        raise AgreementError(
            f"metric {metric!r} has no sub-score {sub!r} ({has}); --score takes value, label or a sub-score"
        )
    return "sub", sub


def _read(score: Score, how: str, sub: str) -> Any:
    if how == "value":
        return score.value
    if how == "label":
        return score.label
    return score.sub_scores.get(sub)


def agreement_for_run(
    result: EvalResult,
    metric: str,
    labels: pd.DataFrame | str | Path,
    *,
    id_column: str = "id",
    label_column: str = "label",
    score: str = "value",
    kind: Kind | None = None,
    threshold: float | None = None,
    label_order: Sequence[Any] | None = None,
    positive: Any = None,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> AgreementReport:
    """Agreement of one metric of a run with human labels, matched by case id.

    ``labels``: a DataFrame or a CSV/TSV/JSONL/JSON file with an id column (``id_column``,
    matched to the run's case ids) and a label column (``label_column``). ``score``:
    ``"value"`` (the metric's value), the name of one of its sub-scores, or ``"label"``
    (the metric's label). The other keywords are those of :func:`agreement`.
    """
    if metric not in result.metrics and not any(r.metric == metric for r in result.results):
        raise AgreementError(
            f"run {result.run_id} has no metric {metric!r}; "
            f"its metrics are {', '.join(map(repr, result.metrics))}"
        )
    how, sub = _score_reader(result, metric, score)
    table, rows, source = _label_table(labels, id_column, label_column)
    by_case = {r.case_id: r.score for r in result.results if r.metric == metric}
    case_ids = [c.id for c in result.cases]
    in_run = set(case_ids)
    matched = [cid for cid in case_ids if cid in table]
    if not matched:
        raise AgreementError(
            f"no id in {source} (column {id_column!r}, e.g. {_some(list(table))}) "
            f"matches a case of run {result.run_id} (e.g. {_some(case_ids)})"
        )
    counts = {"empty": 0, "unscored": 0, "na": 0, "no_value": 0}
    metric_values: list[Any] = []
    human_labels: list[Any] = []
    for cid in matched:
        label = table[cid]
        found = by_case.get(cid)
        if is_missing(label):
            counts["empty"] += 1
        elif found is None or found.status == "error":
            counts["unscored"] += 1
        elif found.status == "not_applicable":
            counts["na"] += 1
        elif is_missing(value := _read(found, how, sub)):
            counts["no_value"] += 1
        else:
            metric_values.append(value)
            human_labels.append(label)
    without_label = [cid for cid in case_ids if cid not in table]
    without_case = [cid for cid in table if cid not in in_run]
    report = agreement(
        metric_values,
        human_labels,
        kind=kind,
        threshold=threshold,
        label_order=label_order,
        positive=positive,
        n_resamples=n_resamples,
        seed=seed,
        level=level,
    )
    summary = JoinSummary(
        run_id=result.run_id,
        metric=metric,
        score=score if how != "sub" else sub,
        labels_source=source,
        id_column=id_column,
        label_column=label_column,
        run_cases=len(case_ids),
        label_rows=rows,
        matched=len(matched),
        used=len(metric_values),
        cases_without_label=len(without_label),
        labels_without_case=len(without_case),
        empty_labels=counts["empty"],
        unscored=counts["unscored"],
        not_applicable=counts["na"],
        no_value=counts["no_value"],
        example_cases_without_label=without_label[:_EXAMPLES],
        example_labels_without_case=without_case[:_EXAMPLES],
    )
    return report.model_copy(update={"join": summary})


def _rater_name(source: str, column: str, other_source: str, other_column: str) -> str:
    """How an annotator is called: the file, the column, or both, whatever tells the two apart."""
    if source == other_source:
        return column
    name = Path(source).name if source != "DataFrame" else source
    other = Path(other_source).name if other_source != "DataFrame" else other_source
    if column == other_column and name != other:
        return name
    return f"{name}:{column}"


def rater_agreement_for_labels(
    labels: pd.DataFrame | str | Path,
    second: pd.DataFrame | str | Path | None = None,
    *,
    id_column: str = "id",
    label_column: str = "label",
    second_column: str | None = None,
    second_id_column: str | None = None,
    kind: Kind | None = None,
    label_order: Sequence[Any] | None = None,
    positive: Any = None,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> AgreementReport:
    """Agreement between two annotators (human–human), matched by case id.

    Either two label tables (``labels`` and ``second``: files or DataFrames; the second
    annotator's column is ``second_column``, default ``label_column``, and its id column
    ``second_id_column``, default ``id_column``), or one table with both annotators'
    columns (``label_column`` and ``second_column``). The first annotator is the
    reference for F1; the statistics are those of
    :func:`~clineval.agreement.report.rater_agreement`.

    Ids are matched as text. Ids in one table only are counted and listed, not used; no
    id in common, a repeated id or a missing column is an :class:`AgreementError`.
    """
    if second is None:
        if second_column is None:
            raise AgreementError(
                "give the second annotator's labels: another file (second= / --second-labels) "
                "or another column of the same file (second_column= / --second-column)"
            )
        if second_column == label_column:
            raise AgreementError(
                f"the two annotators' columns are both {label_column!r}; "
                "give the second annotator's column (second_column= / --second-column)"
            )
        if second_id_column not in (None, id_column):
            raise AgreementError("second_id_column applies to a second labels file only (--second-labels)")
    second_column = second_column or label_column
    second_id_column = second_id_column or id_column
    first_table, first_rows, first_source = _label_table(labels, id_column, label_column)
    second_table, second_rows, second_source = _label_table(
        labels if second is None else second,
        second_id_column,
        second_column,
        options=(
            "second_id_column= / --second-id-column" if second is not None else "id_column= / --id-column",
            "second_column= / --second-column",
        ),
        source="second DataFrame" if second is not None and not isinstance(second, str | Path) else None,
    )
    matched = [cid for cid in first_table if cid in second_table]
    only_first = [cid for cid in first_table if cid not in second_table]
    only_second = [cid for cid in second_table if cid not in first_table]
    if not matched:
        raise AgreementError(
            f"no id of {first_source} (column {id_column!r}, e.g. {_some(list(first_table))}) is an id of "
            f"{second_source} (column {second_id_column!r}, e.g. {_some(list(second_table))}); "
            "the two annotators must label the same cases, with the same ids"
        )
    first_values = [first_table[cid] for cid in matched]
    second_values = [second_table[cid] for cid in matched]
    empty_first = sum(is_missing(v) for v in first_values)
    empty_second = sum(is_missing(v) for v in second_values)
    names = (
        _rater_name(first_source, label_column, second_source, second_column),
        _rater_name(second_source, second_column, first_source, label_column),
    )
    if names[0] == names[1]:
        names = (f"{names[0]} (first)", f"{names[1]} (second)")
    report = rater_agreement(
        first_values,
        second_values,
        names=names,
        kind=kind,
        label_order=label_order,
        positive=positive,
        n_resamples=n_resamples,
        seed=seed,
        level=level,
    )
    summary = RaterJoinSummary(
        first_source=first_source,
        second_source=second_source,
        first_column=label_column,
        second_column=second_column,
        first_rows=first_rows,
        second_rows=second_rows,
        matched=len(matched),
        used=report.n,
        only_first=len(only_first),
        only_second=len(only_second),
        empty_first=empty_first,
        empty_second=empty_second,
        example_only_first=only_first[:_EXAMPLES],
        example_only_second=only_second[:_EXAMPLES],
    )
    return report.model_copy(update={"rater_join": summary})
