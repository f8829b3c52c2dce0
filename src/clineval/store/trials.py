"""Repeated trials in the run store: each trial's agent output and results (see
:mod:`clineval.results.trials` for what they mean).

The ``trial_outputs`` and ``trial_results`` tables (created with the store's schema) are
written by the runner through the store's background writer
(:class:`~clineval.store.sqlite.TrialOutput`, :class:`~clineval.store.sqlite.TrialResult`),
in the same transactions as the case-level outputs and results. A store written before
them has no such tables when opened read-only: every reader here then finds no trials.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from clineval.model import AgentOutput, ResultRecord
from clineval.redaction import redact_json
from clineval.store.sqlite import _MAX_PARAMS, RunStore, _chunked, _result_record

_RESULT_COLUMNS = "case_id, metric, score, usage, duration_s, created_at"


def _has_trials(store: RunStore) -> bool:
    return store.has_table("trial_results")


def trial_outputs_for(
    store: RunStore, run_id: str, case_ids: Sequence[str]
) -> dict[tuple[str, int], AgentOutput]:
    """The stored trial outputs of these cases, by (case id, trial)."""
    out: dict[tuple[str, int], AgentOutput] = {}
    if not _has_trials(store):
        return out
    for part in _chunked(list(case_ids), _MAX_PARAMS):
        marks = ",".join("?" * len(part))
        rows = store.query(
            f"SELECT case_id, trial, data FROM trial_outputs WHERE run_id = ? AND case_id IN ({marks})",
            (run_id, *part),
        )
        out.update(((r[0], int(r[1])), AgentOutput.model_validate_json(redact_json(r[2]))) for r in rows)
    return out


def trial_results_for(
    store: RunStore, run_id: str, case_ids: Sequence[str]
) -> dict[tuple[str, str], dict[int, ResultRecord]]:
    """The stored trial results of these cases, by (case id, metric) and trial."""
    out: dict[tuple[str, str], dict[int, ResultRecord]] = {}
    if not _has_trials(store):
        return out
    for part in _chunked(list(case_ids), _MAX_PARAMS):
        marks = ",".join("?" * len(part))
        rows = store.query(
            f"SELECT trial, {_RESULT_COLUMNS} FROM trial_results WHERE run_id = ? AND case_id IN ({marks})",
            (run_id, *part),
        )
        for row in rows:
            record = _result_record(run_id, row[1:])
            out.setdefault((record.case_id, record.metric), {})[int(row[0])] = record
    return out


def count_trials(store: RunStore, run_id: str) -> tuple[int, int]:
    """How many trial outputs and trial results the run has."""
    if not _has_trials(store):
        return 0, 0
    outputs = store.query("SELECT COUNT(*) FROM trial_outputs WHERE run_id = ?", (run_id,))[0][0]
    results = store.query("SELECT COUNT(*) FROM trial_results WHERE run_id = ?", (run_id,))[0][0]
    return int(outputs), int(results)


#: Columns of one trial-level row (``clineval export --format trials-csv``).
TRIAL_COLUMNS = (
    "case_id",
    "trial",
    "metric",
    "status",
    "value",
    "label",
    "error",
    "agent_latency_s",
    "agent_failed",
    "agent_error",
    "response",
)


def iter_trial_rows(store: RunStore, run_id: str) -> Iterator[dict[str, Any]]:
    """One dict per (case, trial, metric) in dataset order, then trial, then metric: the
    trial's score and the agent's output of that trial (a chunk of cases at a time)."""
    if not _has_trials(store):
        return
    for rows in store.iter_case_rows(run_id):
        ids = [case_id for case_id, _ in rows]
        outputs = trial_outputs_for(store, run_id, ids)
        results = trial_results_for(store, run_id, ids)
        by_case: dict[str, list[tuple[int, ResultRecord]]] = {}
        for (case_id, _metric), trials in results.items():
            by_case.setdefault(case_id, []).extend(trials.items())
        for case_id in ids:
            for trial, record in sorted(by_case.get(case_id, []), key=lambda item: (item[0], item[1].metric)):
                output = outputs.get((case_id, trial))
                run = output.agent_run if output is not None else None
                yield {
                    "case_id": case_id,
                    "trial": trial,
                    "metric": record.metric,
                    "status": record.score.status,
                    "value": record.score.value,
                    "label": record.score.label,
                    "error": record.score.error,
                    "agent_latency_s": run.latency_s if run else None,
                    "agent_failed": run.failed if run else None,
                    "agent_error": run.error if run else None,
                    "response": output.response if output is not None else None,
                }
