"""``clineval agreement``: how well a stored run's metric agrees with human labels, or
two annotators with each other.

Meta-evaluation: a metric is only as good as its agreement with clinicians, and
clinicians' agreement with one another is the ceiling it can be expected to reach. This
command joins a run's scores of one metric to a file of human labels by case id (or a
second annotator's labels to the first's, with ``--second-labels`` / ``--second-column``)
and prints the statistics that fit the kind of label (see docs/agreement.md), each with a
95 % bootstrap interval. The statistics themselves live in :mod:`clineval.agreement`
(imported when the command runs, so that ``clineval --help`` stays fast).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import click

from clineval.cli.common import _require_store, friendly, out, store_option, write_text_file
from clineval.errors import ConfigError

if TYPE_CHECKING:
    from clineval.agreement import Kind

KIND_CHOICES = ("binary", "ordinal", "nominal", "continuous")


def _order(value: str | None) -> list[str] | None:
    if value is None:
        return None
    labels = [part.strip() for part in value.split(",") if part.strip()]
    if len(labels) < 2:
        raise ConfigError(f"--order {value!r}: give at least two labels, lowest first, e.g. low,medium,high")
    return labels


@click.command(name="agreement")
@click.argument("run_ref", required=False)
@click.option(
    "--metric",
    "-m",
    "metric_opts",
    multiple=True,
    help="The run's metric to compare with the labels (with --reviews: repeatable; default: each "
    "review scale's own metrics).",
)
@click.option(
    "--labels",
    "-l",
    "labels_path",
    type=click.Path(dir_okay=True),
    help="Human labels: .csv, .tsv, .jsonl or .json, one row per case.",
)
@click.option(
    "--reviews",
    is_flag=True,
    help="Use the reviews stored with the run (clineval view --review, clineval review import): "
    "case- and fact-level agreement, the reviewers' own, baselines and the disagreements.",
)
@click.option("--reviewer", help="With --reviews: only this reviewer's verdicts.")
@click.option(
    "--disagreements",
    "n_disagreements",
    type=click.IntRange(0, 100_000),
    default=20,
    show_default=True,
    help="With --reviews: how many disagreements to list (the most serious first).",
)
@click.option("--id-column", default="id", show_default=True, help="Labels column holding the case id.")
@click.option("--label-column", default="label", show_default=True, help="Labels column holding the label.")
@click.option(
    "--second-labels",
    "second_path",
    type=click.Path(dir_okay=True),
    help="A second annotator's labels of the same cases: compare the two annotators (no run).",
)
@click.option(
    "--second-column",
    help="The second annotator's column (in --second-labels, default --label-column; "
    "without it, another column of --labels).",
)
@click.option(
    "--second-id-column",
    help="The case id column of --second-labels (default --id-column).",
)
@click.option(
    "--score",
    default="value",
    show_default=True,
    help="What of the metric to compare: value, a sub-score name, or label.",
)
@click.option(
    "--kind",
    type=click.Choice(KIND_CHOICES),
    help="Kind of the human labels (default: inferred from them).",
)
@click.option(
    "--threshold",
    type=float,
    help="Binary: a metric score at or above this predicts the positive class (default 0.5 for [0, 1]).",
)
@click.option("--order", help="Label order, lowest first, comma-separated: low,medium,high.")
@click.option(
    "--positive", help="Binary: the positive label (default 1, true, yes, ... or the last of --order)."
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    help="Also write the report as JSON to this file ('-': JSON on standard output only).",
)
@store_option
@friendly
def agreement_command(
    run_ref: str | None,
    metric_opts: tuple[str, ...],
    labels_path: str | None,
    reviews: bool,
    reviewer: str | None,
    n_disagreements: int,
    id_column: str,
    label_column: str,
    second_path: str | None,
    second_column: str | None,
    second_id_column: str | None,
    score: str,
    kind: str | None,
    threshold: float | None,
    order: str | None,
    positive: str | None,
    json_path: str | None,
    store_path: str,
) -> None:
    """Agreement of a run's METRIC with human labels, or of two annotators (kappa, accuracy
    within one level, AUC, correlations, with 95% CIs).

    RUN_REF: a run id, a unique prefix, 'latest' or 'latest~N' (with --metric). To compare
    two annotators instead, give --second-labels FILE or --second-column NAME and no run.
    With --reviews, the run's stored reviews: every metric against the reviewers, by case and
    by fact, beside ROUGE-L and content-word share, with the disagreements.
    """
    if reviews:
        _reviews_agreement(
            run_ref,
            metric_opts,
            reviewer=reviewer,
            threshold=threshold,
            n_disagreements=n_disagreements,
            json_path=json_path,
            store_path=store_path,
            others={
                "--labels": labels_path,
                "--second-labels": second_path,
                "--second-column": second_column,
                "--second-id-column": second_id_column,
                "--kind": kind,
                "--order": order,
                "--positive": positive,
            },
        )
        return
    if reviewer is not None:
        raise ConfigError("--reviewer goes with --reviews (the run's stored reviews)")
    if labels_path is None:
        raise ConfigError(
            "missing --labels FILE: give a labels file (clineval agreement RUN_REF --metric NAME "
            "--labels FILE), or --reviews to use the reviews stored with the run"
        )
    if len(metric_opts) > 1:
        raise ConfigError(
            f"--metric given {len(metric_opts)} times: a labels file is compared with one metric "
            "(several go with --reviews)"
        )
    metric = metric_opts[0] if metric_opts else None
    from clineval.agreement import report_renderable

    kind_choice = cast("Kind | None", kind)  # click.Choice(KIND_CHOICES)
    if second_path is not None or second_column is not None or second_id_column is not None:
        from clineval.agreement import rater_agreement_for_labels

        given = [name for name, value in (("RUN_REF", run_ref), ("--metric", metric)) if value]
        if given:
            raise ConfigError(
                f"{' and '.join(given)} compare a run's metric with labels; --second-labels / "
                "--second-column compare two annotators: give one or the other"
            )
        if threshold is not None or score != "value":
            option = "--threshold" if threshold is not None else "--score"
            raise ConfigError(f"{option} applies to a run's metric, not to two annotators' labels")
        if second_id_column is not None and second_path is None:
            raise ConfigError("--second-id-column applies to a second labels file (--second-labels)")
        report = rater_agreement_for_labels(
            labels_path,
            second_path,
            id_column=id_column,
            label_column=label_column,
            second_column=second_column,
            second_id_column=second_id_column,
            kind=kind_choice,
            label_order=_order(order),
            positive=positive,
        )
    else:
        from clineval import api
        from clineval.agreement import agreement_for_run

        if run_ref is None or metric is None:
            missing = " and ".join(
                name for name, value in (("RUN_REF", run_ref), ("--metric", metric)) if value is None
            )
            raise ConfigError(
                f"missing {missing}: give a run and its metric to compare with the labels "
                "(clineval agreement RUN_REF --metric NAME --labels FILE), or a second annotator's "
                "labels to compare two annotators (--second-labels FILE or --second-column NAME)"
            )
        _require_store(store_path)
        result = api.load_run(run_ref, store=store_path)
        report = agreement_for_run(
            result,
            metric,
            labels_path,
            id_column=id_column,
            label_column=label_column,
            score=score,
            kind=kind_choice,
            threshold=threshold,
            label_order=_order(order),
            positive=positive,
        )
    text = report.model_dump_json(indent=2)
    if json_path == "-":
        click.echo(text)
        return
    out.print(report_renderable(report))
    if json_path:
        write_text_file(json_path, text, "--json")


def _reviews_agreement(
    run_ref: str | None,
    metrics: tuple[str, ...],
    *,
    reviewer: str | None,
    threshold: float | None,
    n_disagreements: int,
    json_path: str | None,
    store_path: str,
    others: dict[str, str | None],
) -> None:
    """``clineval agreement RUN --reviews``: the run's metrics against its stored reviews."""
    given = [option for option, value in others.items() if value is not None]
    if given:
        raise ConfigError(
            f"{', '.join(given)}: --reviews reads the reviews stored with the run; "
            "labels files are compared without --reviews"
        )
    if run_ref is None:
        raise ConfigError("--reviews needs the run: clineval agreement RUN_REF --reviews (e.g. latest)")
    _require_store(store_path)
    from clineval.review.agreement import agreement_from_store
    from clineval.review.render import report_renderable
    from clineval.store.sqlite import RunStore

    with RunStore(store_path, readonly=True) as store:
        record = store.get_run(run_ref)
        report = agreement_from_store(
            store,
            record,
            metrics=_names(metrics) or None,
            reviewer=reviewer,
            threshold=0.5 if threshold is None else threshold,
        )
    text = report.model_dump_json(indent=2)
    if json_path == "-":
        click.echo(text)
        return
    out.print(report_renderable(report, disagreements=n_disagreements))
    if json_path:
        write_text_file(json_path, text, "--json")


def _names(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@click.command(name="predict-ratings")
@click.argument("run_ref")
@click.option(
    "--labels",
    "-l",
    "labels_path",
    required=True,
    type=click.Path(dir_okay=True),
    help="Clinician labels: .csv, .tsv, .jsonl or .json, one row per case.",
)
@click.option(
    "--target",
    "-t",
    "targets",
    multiple=True,
    required=True,
    help="Labels column to predict, e.g. harm (repeatable or comma-separated).",
)
@click.option(
    "--features",
    "-f",
    "features",
    multiple=True,
    help="The run's metrics to predict from (default: conversational_faithfulness, "
    "refusal_accuracy, context_relevance).",
)
@click.option(
    "--scope",
    help="Labels column, or else case metadata field, holding the scope of practice (e.g. within/out).",
)
@click.option("--id-column", default="id", show_default=True, help="Labels column holding the case id.")
@click.option(
    "--test-size",
    type=float,
    default=0.175,
    show_default=True,
    help="Share of each class reserved for the test split first.",
)
@click.option(
    "--val-size",
    type=float,
    default=0.21,
    show_default=True,
    help="Share of the rest used as the validation split (the others train).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the splits.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    help="Also write the report as JSON to this file ('-': JSON on standard output only).",
)
@store_option
@friendly
def predict_ratings_command(
    run_ref: str,
    labels_path: str,
    targets: tuple[str, ...],
    features: tuple[str, ...],
    scope: str | None,
    id_column: str,
    test_size: float,
    val_size: float,
    seed: int,
    json_path: str | None,
    store_path: str,
) -> None:
    """Predict clinicians' ratings (harm, helpfulness, ...) from a run's ASTRID triad.

    A logistic regression on the triad scores (and the scope of practice), with seeded,
    stratified train/validation/test splits; per-class precision, recall and F1 on the
    test split beside a majority-class baseline. RUN_REF: a run id, a unique prefix,
    'latest' or 'latest~N'.
    """
    from clineval import api
    from clineval.agreement import predict_ratings, prediction_renderable
    from clineval.agreement.prediction import DEFAULT_FEATURES

    _require_store(store_path)
    result = api.load_run(run_ref, store=store_path)
    report = predict_ratings(
        result,
        labels_path,
        _names(targets),
        features=_names(features) or DEFAULT_FEATURES,
        scope=scope,
        id_column=id_column,
        test_size=test_size,
        val_size=val_size,
        seed=seed,
    )
    text = report.model_dump_json(indent=2)
    if json_path == "-":
        click.echo(text)
        return
    out.print(prediction_renderable(report))
    if json_path:
        write_text_file(json_path, text, "--json")
