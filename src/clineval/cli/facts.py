"""``clineval facts``: export the reference facts a run's TBFact scores used, to curate them."""

from __future__ import annotations

import click

from clineval import api
from clineval.cli.common import _require_store, cannot_write, friendly, out, store_option
from clineval.errors import ConfigError
from clineval.metrics.factuality import reference_facts_of_run, write_reference_facts


@click.command(name="facts")
@click.argument("run_ref", default="latest")
@click.option("--metric", "metric_name", default="tbfact", show_default=True, help="TBFact name in the run.")
@click.option("--out", "-o", "out_path", required=True, type=click.Path(dir_okay=False), help="JSONL file.")
@store_option
@friendly
def facts_command(run_ref: str, metric_name: str, out_path: str, store_path: str) -> None:
    """Export the reference facts of a run's TBFact scores (RUN_REF: id, prefix, 'latest').

    Edit the file (fix a fact, its category or importance; drop or add facts) and score
    again with curated facts: -m 'tbfact(reference_facts=FILE)'.
    """
    _require_store(store_path)
    result = api.load_run(run_ref, store=store_path)
    if metric_name not in result.metrics:
        raise ConfigError(
            f"run {result.run_id} has no metric {metric_name!r}; its metrics are: {', '.join(result.metrics)}"
        )
    rows = reference_facts_of_run(result.results, metric_name)
    if not rows:
        raise ConfigError(f"run {result.run_id}: {metric_name!r} scored no case, so there are no facts")
    try:
        path = write_reference_facts(rows, out_path)
    except OSError as exc:
        raise ConfigError(cannot_write("--out", out_path, exc)) from None
    n_facts = sum(len(r["gold_facts"]) for r in rows)
    out.print(
        f"Wrote {n_facts} reference fact(s) of {len(rows)} case(s) to {path}. "
        f"Curate them, then score with -m 'tbfact(reference_facts={path})'."
    )
