"""Trends of traffic: each metric's mean per day (or hour) of the scored conversations.

The runs of ``clineval traces score`` and ``clineval monitor`` (tagged ``source=traces``)
hold one case per conversation (or per turn) whose metadata gives when it started
(``started``, ISO 8601) and which agent answered (``agent``). :func:`compute_trends` groups
their results by the UTC day (or hour) of that time, overall and by agent, with the means
and 95 % bootstrap intervals of :func:`clineval.results.aggregate.aggregate` (the same as
``clineval show``), the number of conversations, and for each period the conversations with
the lowest score of the main metric. ``clineval show --by day`` prints it; the viewer's
Traffic page draws it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, NamedTuple, cast

from pydantic import BaseModel, ConfigDict, Field

from clineval.errors import ConfigError
from clineval.model import ResultRecord, RunRecord
from clineval.results.aggregate import aggregate
from clineval.results.stored import ResultNumbers
from clineval.store.sqlite import RunStore

__all__ = ["PERIODS", "Period", "TrendPoint", "Trends", "WorstCase", "compute_trends", "traffic_runs"]

Period = Literal["day", "hour"]
PERIODS: tuple[Period, ...] = ("day", "hour")
TRACES_TAG = ("source", "traces")
_SEP = "\x1f"


class TrendPoint(BaseModel):
    """One metric in one period, over all agents (``agent`` None) or one agent."""

    model_config = ConfigDict(extra="forbid")

    period: str
    agent: str | None = None
    metric: str
    conversations: int
    scored: int
    errors: int
    mean: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None


class WorstCase(BaseModel):
    """A conversation among the lowest-scoring of its period on the main metric."""

    model_config = ConfigDict(extra="forbid")

    period: str
    run_id: str
    case_id: str
    conversation_id: str
    agent: str | None = None
    value: float


class Trends(BaseModel):
    """What :func:`compute_trends` found (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    by: Period
    runs: list[str] = Field(default_factory=list)
    metrics: list[str] = Field(default_factory=list)
    main_metric: str | None = None
    periods: list[str] = Field(default_factory=list)
    agents: list[str] = Field(default_factory=list)
    conversations: dict[str, int] = Field(default_factory=dict)
    """Period -> conversations."""
    points: list[TrendPoint] = Field(default_factory=list)
    worst: list[WorstCase] = Field(default_factory=list)
    cases_without_time: int = 0

    def point(self, period: str, metric: str, agent: str | None = None) -> TrendPoint | None:
        return next(
            (p for p in self.points if (p.period, p.metric, p.agent) == (period, metric, agent)), None
        )


class _CaseInfo(NamedTuple):
    period: str
    agent: str | None
    conversation: str


def period_of(started: object, by: Period) -> str | None:
    """The UTC day (``2026-11-28``) or hour (``2026-11-28 08:00``) of an ISO time, else None."""
    if not isinstance(started, str) or not started.strip():
        return None
    try:
        when = datetime.fromisoformat(started.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return when.strftime("%Y-%m-%d") if by == "day" else when.strftime("%Y-%m-%d %H:00")


def traffic_runs(store: RunStore) -> list[RunRecord]:
    """The store's runs tagged ``source=traces``, oldest first."""
    key, value = TRACES_TAG
    return [r for r in reversed(store.list_runs()) if r.tags.get(key) == value]


def compute_trends(
    store_path: str | Path,
    *,
    run_ref: str | None = None,
    by: Period = "day",
    worst: int = 3,
    metric: str | None = None,
) -> Trends:
    """Trends of one run (``run_ref``) or of every ``source=traces`` run of the store."""
    if by not in PERIODS:
        raise ConfigError(f"--by {by!r}: expected one of {', '.join(PERIODS)}")
    with RunStore(store_path, readonly=True) as store:
        runs = [store.get_run(run_ref)] if run_ref else traffic_runs(store)
        trends = Trends(by=by, runs=[r.id for r in runs])
        infos: dict[str, _CaseInfo] = {}
        numbers: list[ResultNumbers] = []
        for run in runs:
            for chunk in store.iter_cases(run.id):
                for case in chunk:
                    period = period_of(case.metadata.get("started"), by)
                    if period is None:
                        trends.cases_without_time += 1
                        continue
                    agent = case.metadata.get("agent")
                    conversation = case.metadata.get("conversation_id") or case.id
                    infos[f"{run.id}{_SEP}{case.id}"] = _CaseInfo(
                        period, agent if isinstance(agent, str) and agent else None, str(conversation)
                    )
            for case_id, name, status, value in store.iter_result_rows(
                run.id, "case_id, metric, status, value"
            ):
                key = f"{run.id}{_SEP}{case_id}"
                if key in infos:
                    numbers.append(ResultNumbers(key, str(name), str(status), value, {}))
        order = list(dict.fromkeys(m for r in runs for m in r.metrics))
    _fill(trends, infos, numbers, order, worst, metric)
    return trends


def _fill(
    trends: Trends,
    infos: dict[str, _CaseInfo],
    numbers: Sequence[ResultNumbers],
    order: list[str],
    worst: int,
    metric: str | None,
) -> None:
    seen = list(dict.fromkeys([*order, *(n.metric for n in numbers)]))
    trends.metrics = [m for m in seen if any(n.metric == m for n in numbers)]
    if metric is not None and metric not in trends.metrics:
        known = ", ".join(trends.metrics) or "none"
        raise ConfigError(f"--metric {metric!r}: not scored in these runs (scored: {known})")
    trends.main_metric = metric or (trends.metrics[0] if trends.metrics else None)
    trends.periods = sorted({i.period for i in infos.values()})
    trends.agents = sorted({i.agent for i in infos.values() if i.agent})
    conversations: dict[tuple[str, str | None], set[str]] = defaultdict(set)
    for key, info in infos.items():
        run_id = key.split(_SEP, 1)[0]
        for agent in (None, info.agent):
            conversations[(info.period, agent)].add(f"{run_id}{_SEP}{info.conversation}")
    trends.conversations = {p: len(conversations[(p, None)]) for p in trends.periods}
    records = cast("Sequence[ResultRecord]", numbers)
    overall = aggregate(
        records, by="period", metric_order=trends.metrics, group_of={k: i.period for k, i in infos.items()}
    )
    by_agent = aggregate(
        records,
        by="agent",
        metric_order=trends.metrics,
        group_of={k: f"{i.period}{_SEP}{i.agent}" for k, i in infos.items() if i.agent},
    )
    for agg, split in ((overall, False), (by_agent, True)):
        for row in agg:
            if row.group is None:
                continue
            period, _, agent_name = row.group.partition(_SEP) if split else (row.group, "", "")
            agent = agent_name if split else None
            if split and not agent:
                continue  # cases without an agent: counted in the period's overall row only
            trends.points.append(
                TrendPoint(
                    period=period,
                    agent=agent,
                    metric=row.metric,
                    conversations=len(conversations[(period, agent)]),
                    scored=row.scored,
                    errors=row.errors,
                    mean=row.mean,
                    ci_low=row.ci_low,
                    ci_high=row.ci_high,
                )
            )
    trends.points.sort(key=lambda p: (p.period, p.agent is not None, p.agent or "", seen.index(p.metric)))
    trends.worst = list(_worst(infos, numbers, trends.main_metric, worst))


def _worst(
    infos: dict[str, _CaseInfo], numbers: Sequence[ResultNumbers], metric: str | None, k: int
) -> Iterator[WorstCase]:
    per_period: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for n in numbers:
        if n.metric == metric and n.status not in ("error", "not_applicable") and n.value is not None:
            per_period[infos[n.case_id].period].append((float(n.value), n.case_id))
    for period in sorted(per_period):
        for value, key in sorted(per_period[period])[:k]:
            run_id, case_id = key.split(_SEP, 1)
            info = infos[key]
            yield WorstCase(
                period=period,
                run_id=run_id,
                case_id=case_id,
                conversation_id=info.conversation,
                agent=info.agent,
                value=value,
            )
