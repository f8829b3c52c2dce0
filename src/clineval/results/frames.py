"""Tables of results: a wide table (one row per case) and a long one (one row per score).

Wide columns: ``case_id``, ``input``, ``response``, ``reference``, ``predicted_trajectory``
and ``reference_trajectory`` (JSON lists of ``{"name", "arguments"}``, without tool
outputs; named as in Vertex AI agent evaluation's instance table, and read back by the
dataset loader), then, when an agent ran, ``agent_latency_s``, ``agent_failed`` and
``agent_error``; then per metric ``<metric>`` (the value), ``<metric>.<sub>`` (its
sub-scores), ``<metric>/label``, ``<metric>/explanation`` and ``<metric>/error``
(annotation columns that are empty for every case are left out); and finally
``metadata.<key>`` for every metadata key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from clineval.model import Case, ResultRecord, ToolCall

if TYPE_CHECKING:
    import pandas as pd


def _trajectory_text(calls: Sequence[ToolCall] | None) -> str | None:
    if calls is None:
        return None
    return json.dumps([c.model_dump(exclude_none=True, exclude={"output"}) for c in calls])


def wide_rows(
    cases: Sequence[Case], results: Sequence[ResultRecord], metrics: Sequence[str]
) -> list[dict[str, Any]]:
    by_case: dict[str, dict[str, ResultRecord]] = {}
    for result in results:
        by_case.setdefault(result.case_id, {})[result.metric] = result
    order = list(dict.fromkeys([*metrics, *(r.metric for r in results)]))
    rows: list[dict[str, Any]] = []
    for case in cases:
        row: dict[str, Any] = {
            "case_id": case.id,
            "input": case.input_text() if case.input is not None else None,
            "response": case.response,
            "reference": case.reference,
            "predicted_trajectory": _trajectory_text(case.trajectory),
            "reference_trajectory": _trajectory_text(case.reference_trajectory),
        }
        if case.agent_run is not None:
            row["agent_latency_s"] = case.agent_run.latency_s
            row["agent_failed"] = case.agent_run.failed
            row["agent_error"] = case.agent_run.error
        for metric in order:
            found = by_case.get(case.id, {}).get(metric)
            if found is None:
                row[metric] = None
                continue
            score = found.score
            row[metric] = score.value
            for sub, value in score.sub_scores.items():
                row[f"{metric}.{sub}"] = value
            row[f"{metric}/label"] = score.label
            row[f"{metric}/explanation"] = score.explanation
            row[f"{metric}/error"] = score.error
        for key, meta in case.metadata.items():
            row[f"metadata.{key}"] = meta if not isinstance(meta, dict | list) else json.dumps(meta)
        rows.append(row)
    return rows


def long_rows(results: Sequence[ResultRecord]) -> list[dict[str, Any]]:
    rows = []
    for result in results:
        score = result.score
        rows.append(
            {
                "case_id": result.case_id,
                "metric": result.metric,
                "status": score.status,
                "value": score.value,
                "label": score.label,
                "explanation": score.explanation,
                "error": score.error,
                "sub_scores": json.dumps(score.sub_scores) if score.sub_scores else None,
                "prompt_tokens": result.usage.prompt_tokens,
                "completion_tokens": result.usage.completion_tokens,
                "judge_calls": result.usage.calls,
                "cached_calls": result.usage.cached,
                "duration_s": result.duration_s,
            }
        )
    return rows


def wide_frame(
    cases: Sequence[Case], results: Sequence[ResultRecord], metrics: Sequence[str]
) -> pd.DataFrame:
    import pandas as pd

    rows = wide_rows(cases, results, metrics)
    frame = pd.DataFrame(rows)
    # Drop annotation columns that are empty everywhere, keep value columns.
    empty = [c for c in frame.columns if "/" in c and frame[c].isna().all()]
    return frame.drop(columns=empty)


#: The columns of the long table, in order.
LONG_COLUMNS = [
    "case_id",
    "metric",
    "status",
    "value",
    "label",
    "explanation",
    "error",
    "sub_scores",
    "prompt_tokens",
    "completion_tokens",
    "judge_calls",
    "cached_calls",
    "duration_s",
]


def long_frame(results: Sequence[ResultRecord]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(long_rows(results), columns=LONG_COLUMNS)
