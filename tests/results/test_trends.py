"""Trends of scored traffic (clineval.results.trends): hand-worked means, counts, worst cases."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.clirun import invoke
from tests.results.traffic_store import build_traffic_store

from clineval.errors import ConfigError
from clineval.results.trends import compute_trends, period_of


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("traffic") / "store.db"
    return path, build_traffic_store(path)


def test_means_counts_and_worst_by_day(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    trends = compute_trends(path)
    assert trends.runs == [ids["traffic"]]  # the curated run is not traffic
    assert trends.periods == ["2026-11-27", "2026-11-28"]
    assert trends.agents == ["Labs", "Pharmacy"]
    assert trends.conversations == {"2026-11-27": 3, "2026-11-28": 3}
    assert trends.main_metric == "exact_match" and trends.cases_without_time == 0
    day1 = trends.point("2026-11-27", "exact_match")
    day2 = trends.point("2026-11-28", "exact_match")
    assert day1 is not None and day1.mean == pytest.approx(2 / 3) and day1.scored == 3
    assert day2 is not None and day2.mean == pytest.approx(1 / 3) and day2.conversations == 3
    # a bootstrap interval of three 0/1 values lies within [0, 1] and around the mean
    assert day1.ci_low is not None and day1.ci_high is not None and day1.mean is not None
    assert 0 <= day1.ci_low <= day1.mean <= day1.ci_high <= 1
    labs1 = trends.point("2026-11-27", "exact_match", "Labs")
    pharmacy1 = trends.point("2026-11-27", "exact_match", "Pharmacy")
    pharmacy2 = trends.point("2026-11-28", "exact_match", "Pharmacy")
    assert labs1 is not None and (labs1.mean, labs1.conversations) == (0.5, 2)
    assert pharmacy1 is not None and (pharmacy1.mean, pharmacy1.conversations, pharmacy1.ci_low) == (
        1.0,
        1,
        None,
    )
    assert pharmacy2 is not None and (pharmacy2.mean, pharmacy2.conversations) == (0.0, 2)
    # the lowest exact_match of each day, ties by case id
    assert [(w.period, w.case_id, w.value) for w in compute_trends(path, worst=2).worst] == [
        ("2026-11-27", "d1-b", 0.0),
        ("2026-11-27", "d1-a", 1.0),
        ("2026-11-28", "d2-b", 0.0),
        ("2026-11-28", "d2-c", 0.0),
    ]
    assert trends.worst[0].conversation_id == "conv-d1-b" and trends.worst[0].agent == "Labs"


def test_by_hour_and_one_run(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    trends = compute_trends(path, run_ref=ids["traffic"], by="hour")
    assert trends.periods == [
        "2026-11-27 08:00",
        "2026-11-27 14:00",
        "2026-11-28 09:00",
        "2026-11-28 10:00",
    ]
    first = trends.point("2026-11-27 08:00", "exact_match")
    assert first is not None and (first.mean, first.conversations) == (0.5, 2)
    curated = compute_trends(path, run_ref=ids["curated"])
    assert curated.periods == [] and curated.cases_without_time == 1
    with pytest.raises(ConfigError, match="--metric 'tbfact'"):
        compute_trends(path, metric="tbfact")
    with pytest.raises(ConfigError, match="--by 'week'"):
        compute_trends(path, by="week")  # type: ignore[arg-type]


def test_period_of() -> None:
    assert period_of("2026-11-27T23:30:00-02:00", "day") == "2026-11-28"  # UTC
    assert period_of("2026-11-27T08:10:00Z", "hour") == "2026-11-27 08:00"
    assert period_of("not a time", "day") is None and period_of(None, "day") is None


def test_show_by_day_through_the_cli(store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    result = invoke("show", "--by", "day", "--store", str(path), terminal_width=200)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "2026-11-27" in out and "2026-11-28" in out
    assert "0.667" in out and "0.333" in out  # the days' means
    assert "Pharmacy" in out and "Labs" in out
    assert "d1-b" in out and "d2-b" in out  # the worst conversations
    hourly = invoke("show", ids["traffic"], "--by", "hour", "--store", str(path), terminal_width=200)
    assert hourly.exit_code == 0 and "2026-11-27 14:00" in hourly.output
    curated = invoke("show", ids["curated"], "--by", "day", "--store", str(path), terminal_width=200)
    assert curated.exit_code == 0
    assert "no conversation start time" in curated.output and len(curated.output.strip().splitlines()) == 1
