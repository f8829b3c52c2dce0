"""``EvalTask``: the entry point of Vertex AI's Gen AI evaluation service, on :func:`clineval.evaluate`.

A script written for the Vertex AI SDK's agent evaluation runs with its import changed::

    from clineval import EvalTask, TrajectorySingleToolUse   # was: from vertexai.preview.evaluation ...

    task = EvalTask(dataset=frame, metrics=["trajectory_exact_match",
                    TrajectorySingleToolUse(tool_name="order_ct")], experiment="triage-agent")
    result = task.evaluate(runnable=agent, experiment_run_name="run-1")
    result.summary_metrics   # {"row_count": 3, "trajectory_exact_match/mean": ..., ...}
    result.metrics_table     # one row per case: the dataset's columns, response, predicted_trajectory,
                             # latency_in_seconds, failure, <metric>/score, <metric>/explanation

Everything runs through :func:`clineval.evaluate`: the run is saved in the run store
(``store=`` as for ``evaluate``) under the name ``experiment_run_name`` with the tags
``experiment`` and ``experiment_run``, so ``clineval show``, ``clineval view`` and the
reports find it; ``result.result`` is clineval's own :class:`~clineval.results.EvalResult`.

Rules decided here (docs/vertex.md lists what differs from the Vertex AI SDK):

* ``metrics_table`` starts from the dataset as given (a DataFrame's or a list's columns
  and values; a file's records as read), in its row order with a fresh index. When an
  agent ran, ``response``, ``predicted_trajectory`` (calls as ``{"tool_name",
  "tool_input"}``), ``latency_in_seconds`` (``None`` when the call failed, as Vertex) and
  ``failure`` (0 or 1) are set from the run, and ``failure/explanation`` holds the error
  of each failed call. Then per metric ``<metric>/score`` (``None`` when the case could
  not be scored) and ``<metric>/explanation`` when any case has one (the reason it could
  not be scored, otherwise the metric's explanation).
* ``summary_metrics`` is ``row_count`` and, per metric, ``<metric>/mean`` and
  ``<metric>/std`` (sample standard deviation; ``None`` below two scored cases), clineval's
  ``latency`` named ``latency_in_seconds`` as Vertex names it.
* ``latency_in_seconds`` and ``failure`` are added whenever an agent ran, and also when
  the dataset itself brings them (columns ``latency_in_seconds`` / ``failure``).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clineval.api import MetricLike, evaluate
from clineval.datasets import Dataset, load_dataset
from clineval.datasets.loaders import read_records
from clineval.errors import ConfigError
from clineval.metrics import Metric, MetricSpec
from clineval.metrics.registry import resolve_metrics
from clineval.metrics.trajectory import TrajectorySingleToolUse, _TrajectoryMetric
from clineval.model import Case, ToolCall

if TYPE_CHECKING:
    import pandas as pd

    from clineval.results import EvalResult

__all__ = ["VERTEX_METRIC_NAMES", "EvalTask", "EvalTaskResult"]

#: clineval metric name -> the name Vertex AI gives its column and summary keys.
VERTEX_METRIC_NAMES: dict[str, str] = {"latency": "latency_in_seconds", "failure": "failure"}
_AGENT_METRICS = ("latency", "failure")
#: Vertex AI's input names in ``metric_column_mapping`` -> clineval case fields.
_VERTEX_FIELDS: dict[str, str] = {
    "prompt": "input",
    "response": "response",
    "reference": "reference",
    "predicted_trajectory": "trajectory",
    "reference_trajectory": "reference_trajectory",
    "context": "contexts",
}
#: ``{variable}`` in a prompt template (Vertex AI: a name without spaces or braces).
_VARIABLE = re.compile(r"\{([^{}\s]+)\}")
#: ``evaluate()`` keywords of clineval that EvalTask sets itself.
_OWN_KEYWORDS = ("data", "metrics", "agent", "name", "tags", "mapping", "resume", "keep_results")


@dataclass
class EvalTaskResult:
    """What :meth:`EvalTask.evaluate` returns: Vertex AI's ``EvalResult`` fields and clineval's result."""

    summary_metrics: dict[str, float | int | None]
    metrics_table: pd.DataFrame
    metadata: dict[str, str | None] = field(default_factory=dict)
    #: clineval's result of the run (``to_pandas()``, ``aggregate()``, ``run_id``, ...).
    result: EvalResult | None = field(default=None, repr=False)

    @property
    def run_id(self) -> str | None:
        """The run's id in the run store (``clineval show RUN_ID``)."""
        return self.result.run_id if self.result is not None else None


class EvalTask:
    """A dataset and metrics, evaluated with :meth:`evaluate` as Vertex AI's ``EvalTask`` is.

    ``dataset``: a pandas DataFrame, a dict of columns, a list of dicts, or a ``.jsonl``,
    ``.json`` or ``.csv`` path (Vertex AI column names are read as clineval fields:
    ``prompt``, ``predicted_trajectory``, ``latency_in_seconds``, ``failure``, ...).
    ``metrics``: metric names (``"trajectory_exact_match"``, ``"rouge_l_sum"``, any
    ``clineval metrics`` name or spec) or metric objects (``TrajectorySingleToolUse(tool_name=...)``).
    ``experiment``: kept as the run's ``experiment`` tag.
    ``metric_column_mapping``: ``{"response": "my_column", ...}``: which dataset column gives
    each of ``prompt``, ``response``, ``reference``, ``predicted_trajectory``,
    ``reference_trajectory`` and ``context``.
    The dataset and the metrics are checked here: a bad row or an unknown metric raises
    :class:`~clineval.errors.ConfigError` (or ``DatasetError``) before anything runs.
    """

    def __init__(
        self,
        dataset: Any = None,
        metrics: Sequence[MetricLike] = (),
        experiment: str | None = None,
        *,
        metric_column_mapping: Mapping[str, str] | None = None,
        output_uri_prefix: str | None = "",
        autorater_config: Any = None,
    ) -> None:
        if dataset is None:
            raise ConfigError("EvalTask: no dataset: give a DataFrame, a list of dicts or a file path")
        if output_uri_prefix:
            raise ConfigError(
                "EvalTask: output_uri_prefix (a Cloud Storage upload) is not supported; "
                "runs are saved in the run store, and result.metrics_table.to_csv(...) writes the table"
            )
        if autorater_config is not None:
            raise ConfigError("EvalTask: autorater_config is not supported; give judge=... to evaluate()")
        if not metrics:
            raise ConfigError("EvalTask: no metrics: name at least one (see 'clineval metrics')")
        self._experiment = experiment
        self._source, self._rows, self._frame = _read(dataset)
        self._columns = _columns(self._rows, self._frame)
        self._mapping = _mapping(metric_column_mapping or {}, self._columns)
        self._metrics = list(metrics)
        self._built = resolve_metrics([_spec_of(m) for m in self._metrics])  # every bad one at once
        self._data = self._load(self._mapping)

    @property
    def dataset(self) -> pd.DataFrame:
        """The evaluation dataset as a DataFrame, as given."""
        return self._base_table()

    @property
    def metrics(self) -> list[MetricLike]:
        """The metrics as given."""
        return list(self._metrics)

    @property
    def experiment(self) -> str | None:
        """The experiment name (the runs' ``experiment`` tag)."""
        return self._experiment

    def evaluate(
        self,
        runnable: Any = None,
        *,
        model: Any = None,
        prompt_template: str | None = None,
        experiment_run_name: str | None = None,
        response_column_name: str | None = None,
        baseline_model_response_column_name: str | None = None,
        evaluation_service_qps: float | None = None,
        retry_timeout: float = 120.0,
        output_file_name: str | None = "",
        **options: Any,
    ) -> EvalTaskResult:
        """Run the agent (if any) over the dataset, score every case, and return the result.

        ``runnable``: a function taking the prompt and returning a dict with ``response``
        and ``predicted_trajectory`` (or a string), or an object with ``query(input=...)``
        returning ``output`` and LangChain ``intermediate_steps``. ``model``: a function
        from prompt to response, run as the agent is. Without either, the dataset's own
        ``response`` / ``predicted_trajectory`` columns are scored. ``prompt_template``:
        ``"... {column} ..."``, filled from each row's columns to give the prompt.
        ``experiment_run_name``: the run's name in the run store. ``options``: any other
        keyword of :func:`clineval.evaluate` (``judge``, ``store``, ``progress``,
        ``agent_concurrency``, ``agent_timeout_s``, ...). ``evaluation_service_qps`` and
        ``retry_timeout`` concern Vertex AI's service and have no effect here.
        """
        del evaluation_service_qps, retry_timeout  # no evaluation service is called
        clash = sorted(set(options) & set(_OWN_KEYWORDS))
        if clash:
            raise ConfigError(f"EvalTask.evaluate: {', '.join(clash)} cannot be given here; EvalTask sets it")
        if baseline_model_response_column_name:
            raise ConfigError(
                "EvalTask.evaluate: pairwise metrics (baseline_model_response_column_name) are not supported"
            )
        if output_file_name:
            raise ConfigError(
                "EvalTask.evaluate: output_file_name (a Cloud Storage upload) is not supported; "
                "use result.metrics_table.to_csv(...)"
            )
        agent = _agent_from(runnable, model)
        data = self._data
        if response_column_name:
            if response_column_name not in self._columns:
                raise ConfigError(
                    f"EvalTask.evaluate: response_column_name {response_column_name!r} is not a dataset "
                    f"column (columns: {', '.join(self._columns)})"
                )
            mapping = {k: v for k, v in self._mapping.items() if v != "response"}
            data = self._load({**mapping, response_column_name: "response"})
        cases = list(data.cases)
        prompts: list[str] | None = None
        if prompt_template is not None:
            prompts = _assemble(prompt_template, self._base_table())
            cases = [c.model_copy(update={"input": p}) for c, p in zip(cases, prompts, strict=True)]
        if agent is not None:
            missing = [c.id for c in cases if c.input is None or c.input == ""]
            if missing:
                raise ConfigError(
                    f"EvalTask.evaluate: case {missing[0]} has no prompt: the dataset needs a 'prompt' "
                    "column to run the agent on (or give prompt_template=...)"
                )
        metrics: list[Metric] = list(self._built)
        names = {m.name for m in metrics}
        if agent is None and any(c.agent_run is not None for c in cases):
            metrics += resolve_metrics([n for n in _AGENT_METRICS if n not in names])  # the dataset's own
        tags = {
            k: v for k, v in (("experiment", self._experiment), ("experiment_run", experiment_run_name)) if v
        }
        result = evaluate(
            Dataset(cases=cases, source=data.source, metadata_columns=data.metadata_columns),
            metrics,
            agent=agent,
            name=experiment_run_name,
            tags=tags,
            **options,
        )
        table = self._metrics_table(result, [c.id for c in cases], prompts, ran_agent=agent is not None)
        return EvalTaskResult(
            summary_metrics=_summary(result),
            metrics_table=table,
            metadata={"experiment": self._experiment, "experiment_run": experiment_run_name},
            result=result,
        )

    # -- internals ---------------------------------------------------------------------

    def _load(self, mapping: Mapping[str, str]) -> Dataset:
        source: Any = self._frame if self._frame is not None else self._rows
        if source is None or _is_path(self._source):
            source = self._source  # a file is loaded from itself (errors name its lines)
        return load_dataset(source, mapping=mapping)

    def _base_table(self) -> pd.DataFrame:
        import pandas as pd

        if self._frame is not None:
            return self._frame.reset_index(drop=True).copy()
        return pd.DataFrame(self._rows or [])

    def _metrics_table(
        self, result: EvalResult, ids: list[str], prompts: list[str] | None, *, ran_agent: bool
    ) -> pd.DataFrame:
        table = self._base_table()
        if len(table) != len(ids):  # a folder of conversations: no rows as given
            table = _rows_of(result.cases)
        by_id = {c.id: c for c in result.cases}
        cases = [by_id[i] for i in ids]
        if prompts is not None:
            table["prompt"] = prompts
        if ran_agent:
            table["response"] = [c.response for c in cases]
            if any(c.trajectory is not None for c in cases):
                calls: list[Any] = [_vertex_calls(c.trajectory) for c in cases]
                table["predicted_trajectory"] = calls
        runs = [c.agent_run for c in cases]
        if ran_agent or "latency" in result.run.metrics:
            table["latency_in_seconds"] = [None if r is None or r.failed else r.latency_s for r in runs]
            table["failure"] = [None if r is None else int(r.failed) for r in runs]
            errors = [r.error if r is not None and r.failed else None for r in runs]
            if any(errors):
                table["failure/explanation"] = errors
        scores: dict[tuple[str, str], Any] = {(r.case_id, r.metric): r.score for r in result.results}
        for metric in result.run.metrics:
            if metric in _AGENT_METRICS:
                continue
            found = [scores.get((i, metric)) for i in ids]
            table[f"{metric}/score"] = [s.value if s is not None else None for s in found]
            notes = [(s.error or s.explanation) if s is not None else None for s in found]
            if any(notes):
                table[f"{metric}/explanation"] = notes
        return table


def _read(dataset: Any) -> tuple[str, list[dict[str, Any]] | None, pd.DataFrame | None]:
    """(source, rows as given, the DataFrame as given)."""
    if isinstance(dataset, str | Path):
        path = Path(dataset)
        if path.is_dir():
            return str(path), None, None
        if not path.exists():
            raise ConfigError(f"EvalTask: dataset file not found: {path}")
        if path.suffix.lower() not in (".jsonl", ".json", ".csv"):
            raise ConfigError(f"EvalTask: {path}: expected a .jsonl, .json or .csv file")
        rows = [record if isinstance(record, dict) else {"value": record} for _, record in read_records(path)]
        return str(path), rows, None
    if type(dataset).__name__ == "DataFrame":
        return "DataFrame", None, dataset
    if isinstance(dataset, Mapping):  # a dict of columns, as Vertex AI accepts
        import pandas as pd

        try:
            return "DataFrame", None, pd.DataFrame(dict(dataset))
        except ValueError as exc:
            raise ConfigError(f"EvalTask: the dataset dict is not a table of columns: {exc}") from None
    if isinstance(dataset, Sequence) and not isinstance(dataset, bytes):
        rows = list(dataset)
        bad = next((i for i, row in enumerate(rows) if not isinstance(row, Mapping)), None)
        if bad is not None:
            raise ConfigError(f"EvalTask: dataset item {bad + 1} is a {type(rows[bad]).__name__}, not a dict")
        return "list", [dict(row) for row in rows], None
    raise ConfigError(
        f"EvalTask: the dataset is a {type(dataset).__name__}; give a DataFrame, a dict of columns, "
        "a list of dicts or a .jsonl/.json/.csv path"
    )


def _is_path(source: str) -> bool:
    return source not in ("DataFrame", "list")


def _columns(rows: list[dict[str, Any]] | None, frame: pd.DataFrame | None) -> list[str]:
    if frame is not None:
        return [str(c) for c in frame.columns]
    return list(dict.fromkeys(str(k) for row in rows or [] for k in row))


def _mapping(given: Mapping[str, str], columns: Sequence[str]) -> dict[str, str]:
    """Vertex AI's ``{input name: column}`` as clineval's ``{column: case field}``."""
    mapping: dict[str, str] = {}
    for name, column in given.items():
        if name not in _VERTEX_FIELDS:
            raise ConfigError(
                f"EvalTask: metric_column_mapping key {name!r} is not one of {', '.join(_VERTEX_FIELDS)}"
            )
        if name in columns:
            warnings.warn(
                f"EvalTask: metric_column_mapping {name!r} -> {column!r} is ignored: the dataset has a "
                f"{name!r} column (as in Vertex AI)",
                stacklevel=3,
            )
            continue
        if column not in columns:
            raise ConfigError(
                f"EvalTask: metric_column_mapping {name!r} -> {column!r}: no column {column!r} "
                f"(columns: {', '.join(columns)})"
            )
        mapping[column] = _VERTEX_FIELDS[name]
    return mapping


def _spec_of(item: MetricLike) -> MetricLike:
    """A trajectory metric made directly (``TrajectorySingleToolUse(tool_name=...)``) as the spec that
    rebuilds it, so that the run store records its settings, not only its class."""
    if getattr(item, "spec", None) is not None:
        return item
    settings = getattr(item, "settings", None)
    if isinstance(item, _TrajectoryMetric | TrajectorySingleToolUse) and callable(settings):
        return MetricSpec(name=item.name, args=settings())
    return item


def _agent_from(runnable: Any, model: Any) -> Callable[..., Any] | None:
    if runnable is not None and model is not None:
        raise ConfigError("EvalTask.evaluate: give a runnable or a model, not both")
    given = runnable if runnable is not None else model
    if given is None:
        return None
    what = "runnable" if runnable is not None else "model"
    if callable(given):
        return given  # type: ignore[no-any-return]
    if what == "runnable" and callable(getattr(given, "query", None)):
        return _QueryableAgent(given)
    raise ConfigError(
        f"EvalTask.evaluate: the {what} is a {type(given).__name__}; give a function that takes the "
        "prompt and returns the response (a string) or a dict with 'response' and 'predicted_trajectory'"
        + (", or an object with query(input=...)" if what == "runnable" else "")
    )


class _QueryableAgent:
    """An object with ``query(input=prompt)`` (a LangChain agent of Vertex AI Agent Engine) as an agent."""

    def __init__(self, queryable: Any) -> None:
        self.queryable = queryable

    def __call__(self, prompt: Any) -> dict[str, Any]:
        answer = self.queryable.query(input=prompt)
        if not isinstance(answer, Mapping) or "output" not in answer:
            raise ValueError(f"query() returned {type(answer).__name__} without 'output'")
        out: dict[str, Any] = {"response": answer["output"]}
        steps = answer.get("intermediate_steps")
        if steps is not None:
            out["predicted_trajectory"] = _steps_to_calls(steps)
        return out


def _steps_to_calls(steps: Any) -> list[dict[str, Any]]:
    """LangChain ``intermediate_steps`` (``[[{"kwargs": {"tool", "tool_input"}}, observation], ...]``)."""
    calls = []
    for step in steps:
        action = step[0] if isinstance(step, list | tuple) and step else step
        kwargs = action.get("kwargs", action) if isinstance(action, Mapping) else {}
        if "tool" not in kwargs:
            raise ValueError(f"an intermediate step has no tool: {step!r}"[:300])
        tool_input = kwargs.get("tool_input")
        calls.append(
            {"tool_name": kwargs["tool"], "tool_input": tool_input if isinstance(tool_input, dict) else {}}
        )
    return calls


def _assemble(template: str, table: pd.DataFrame) -> list[str]:
    """Each row's prompt: ``{column}`` replaced by the row's value."""
    if not template:
        raise ConfigError("EvalTask.evaluate: prompt_template is empty")
    variables = list(dict.fromkeys(_VARIABLE.findall(template)))
    unknown = [v for v in variables if v not in table.columns]
    if unknown:
        raise ConfigError(
            f"EvalTask.evaluate: prompt_template variable {unknown[0]!r} is not a dataset column "
            f"(columns: {', '.join(map(str, table.columns))})"
        )
    return [_fill(template, row) for row in table.to_dict(orient="records")]


def _fill(template: str, row: Mapping[Any, Any]) -> str:
    return _VARIABLE.sub(lambda m: str(row[m.group(1)]) if m.group(1) in row else m.group(0), template)


def _vertex_calls(calls: Sequence[ToolCall] | None) -> list[dict[str, Any]] | None:
    if calls is None:
        return None
    return [{"tool_name": c.name, "tool_input": dict(c.arguments)} for c in calls]


def _rows_of(cases: Sequence[Case]) -> pd.DataFrame:
    """A table of cases under Vertex AI's column names (for data that has no rows of its own)."""
    import pandas as pd

    rows = []
    for case in cases:
        row: dict[str, Any] = {"prompt": case.input_text() if case.input is not None else None}
        row["reference"] = case.reference
        row["response"] = case.response
        row["predicted_trajectory"] = _vertex_calls(case.trajectory)
        row["reference_trajectory"] = _vertex_calls(case.reference_trajectory)
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.loc[:, [c for c in frame.columns if frame[c].notna().any()]]


def _summary(result: EvalResult) -> dict[str, float | int | None]:
    out: dict[str, float | int | None] = {"row_count": result.case_count()}
    for agg in result.aggregate():
        name = VERTEX_METRIC_NAMES.get(agg.metric, agg.metric)
        out[f"{name}/mean"] = agg.mean
        out[f"{name}/std"] = agg.std
    return out
