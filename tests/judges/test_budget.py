"""Judge rate limits: the budget's timing by a fake clock, the limits against the real local
server, and the settings reaching the judge from the CLI, run files and evaluate()."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError
from tests.clirun import invoke

from clineval import evaluate
from clineval.config import load_run_config
from clineval.errors import ConfigError
from clineval.judges import JudgeConfig, StructuredJudge, build_judge
from clineval.judges.budget import RateBudget, RequestBudget
from clineval.judges.openai_compat import OpenAIBackend
from clineval.store import RunStore
from clineval.testing import ScriptedServer


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Verdict(BaseModel):
    explanation: str
    rating: int


GOOD = {"explanation": "States the potassium correctly.", "rating": 5}
MESSAGES = [{"role": "system", "content": "You grade answers."}, {"role": "user", "content": "K 5.9"}]


# --------------------------------------------------------------------------- timing, by a fake clock


def test_rpm_allows_one_seconds_share_at_once_then_spaces_requests_evenly() -> None:
    clock = FakeClock()
    budget = RateBudget(rpm=120, clock=clock)  # 2 a second: a burst of 2, then one every 0.5 s
    assert budget.burst == 2
    assert budget.wait_s() == 0.0
    budget.take()
    assert budget.wait_s() == 0.0
    budget.take()
    assert budget.wait_s() == pytest.approx(0.5)
    clock.now += 0.2
    assert budget.wait_s() == pytest.approx(0.3)
    clock.now += 0.3
    assert budget.wait_s() == 0.0
    budget.take()
    clock.now += 3600  # an idle hour refills the bucket only up to the burst
    budget.take()
    budget.take()
    assert budget.wait_s() == pytest.approx(0.5)


def test_rpm_over_one_minute_starts_rpm_plus_the_first_seconds_share_at_most() -> None:
    clock = FakeClock()
    budget = RateBudget(rpm=120, clock=clock)
    start, started = clock.now, 0
    while clock.now < start + 60:
        wait = budget.wait_s()
        assert wait is not None
        if wait == 0.0:
            budget.take()
            started += 1
        else:
            clock.now += wait
    # two at 0 s, then one every 0.5 s from 0.5 s to 59.5 s (119): 121 in the first minute
    assert started == 121


def test_a_low_rpm_spaces_single_requests() -> None:
    clock = FakeClock()
    budget = RateBudget(rpm=30, clock=clock)  # burst max(1, 0.5) = 1, one every 2 s
    assert budget.burst == 1
    budget.take()
    assert budget.wait_s() == pytest.approx(2.0)


def test_tpm_counts_reported_tokens_and_requests_in_flight_at_the_mean() -> None:
    clock = FakeClock()
    budget = RateBudget(tpm=1000, clock=clock)
    budget.take()
    assert budget.wait_s() == 0.0  # nothing reported yet: not held
    budget.take()
    clock.now += 1
    budget.spent(600)  # at t=1
    # 600 reported + 1 in flight at the mean of 600 = 1200 >= 1000: wait for the t=1 report to
    # leave the window, 60 s later
    assert budget.wait_s() == pytest.approx(60.0)
    clock.now += 1
    budget.spent(300)  # at t=2: 900 reported, mean 450, none in flight
    assert budget.in_flight == 0
    assert budget.tokens_in_window() == 900
    assert budget.wait_s() == 0.0
    budget.take()  # 900 + 450 >= 1000
    assert budget.wait_s() == pytest.approx(59.0)  # the t=1 report leaves at t=61
    clock.now += 59
    assert budget.tokens_in_window() == 300
    assert budget.wait_s() == 0.0  # 300 + 450 < 1000


def test_tpm_waits_for_responses_when_only_requests_in_flight_hold_it() -> None:
    clock = FakeClock()
    budget = RateBudget(tpm=100, clock=clock)
    budget.take()
    budget.spent(150)  # larger than tpm alone: it was not held (nothing counted before it)
    clock.now += 61
    assert budget.tokens_in_window() == 0
    budget.take()
    assert budget.wait_s() is None  # 1 in flight at the mean of 150: only its response can free it
    budget.spent(0)  # it failed and reported nothing
    assert budget.wait_s() == 0.0


def test_rpm_and_tpm_together_wait_for_the_later_of_the_two() -> None:
    clock = FakeClock()
    budget = RateBudget(rpm=60, tpm=100, clock=clock)
    budget.take()
    budget.spent(100)
    assert budget.wait_s() == pytest.approx(60.0)  # tokens: the report leaves in 60 s; rpm: 1 s


@pytest.mark.parametrize("value", [0, -1, -0.5, math.inf, math.nan, "120", True, [60]])
def test_bad_limits_are_clear_errors(value: object) -> None:
    with pytest.raises(ValueError, match=r"rpm must be a number above 0 \(or not set\), not "):
        RateBudget(rpm=value)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"tpm must be a number above 0"):
        RateBudget(tpm=value)  # type: ignore[arg-type]


def test_the_local_budget_satisfies_the_protocol() -> None:
    assert isinstance(RateBudget(rpm=10), RequestBudget)


# --------------------------------------------------------------------- acquire (real time, short minute)


async def test_acquire_paces_requests_and_serves_them_in_arrival_order() -> None:
    budget = RateBudget(rpm=5, period_s=0.5, burst=1)  # 5 per 0.5 s: one every 0.1 s
    order: list[int] = []

    async def one(i: int) -> float:
        await budget.acquire()
        order.append(i)
        budget.spent(0)
        return time.perf_counter()

    started = time.perf_counter()
    times = await asyncio.gather(*(one(i) for i in range(5)))
    assert order == [0, 1, 2, 3, 4]
    assert times[-1] - started >= 0.4 - 0.02  # starts at 0, 0.1, 0.2, 0.3, 0.4
    assert budget.in_flight == 0


async def test_a_response_reporting_tokens_wakes_a_waiter_at_once() -> None:
    budget = RateBudget(tpm=100, period_s=30)
    await budget.acquire()
    budget.spent(80)  # mean 80
    await budget.acquire()  # 80 + 0 in flight < 100
    waiter = asyncio.create_task(budget.acquire())  # 80 + 1 x 80 >= 100: waits
    await asyncio.sleep(0.05)
    assert not waiter.done()
    budget.spent(0)  # the request in flight failed: 80 + 0 < 100
    await asyncio.wait_for(waiter, timeout=1)


# --------------------------------------------------------------------------- against the real local server


def http_judge(server: ScriptedServer, **settings: object) -> StructuredJudge:
    config = JudgeConfig.model_validate(
        {"provider": "openai", "model": "judge-model", "base_url": server.base_url, **settings}
    )
    judge = build_judge(config)
    assert isinstance(judge, StructuredJudge)
    return judge


def arrivals(server: ScriptedServer) -> list[float]:
    return sorted(r["timestamp"] for r in server.requests())


async def test_rpm_limits_requests_sent_to_the_server(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"json": GOOD}})
    judge = http_judge(llm_server, concurrency=8)
    assert isinstance(judge.backend, OpenAIBackend)
    granted: list[float] = []

    class Recorded(RateBudget):
        async def acquire(self) -> None:
            await super().acquire()
            granted.append(time.monotonic())  # the moment a request may be sent

    judge.backend.budget = Recorded(rpm=10, period_s=1.0, burst=1)  # one every 0.1 s
    await asyncio.gather(
        *(judge.ask([*MESSAGES[:1], {"role": "user", "content": f"K {i}"}], Verdict) for i in range(6))
    )
    await judge.aclose()
    # the budget's decisions: 6 sends, each at least 0.1 s after the one before
    assert len(granted) == 6
    assert min(b - a for a, b in itertools.pairwise(granted)) >= 0.1 - 0.005
    # what the server saw: 6 requests spread over the 0.5 s (on a loaded machine two arrivals
    # may come closer than they were sent, so the spread is checked, not each gap)
    times = arrivals(llm_server)
    assert len(times) == 6
    assert times[-1] - times[0] >= 0.5 - 0.1


async def test_tpm_limits_by_the_tokens_the_server_reports(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"json": GOOD}})
    judge = http_judge(llm_server, concurrency=1)
    assert isinstance(judge.backend, OpenAIBackend)
    budget = RateBudget(tpm=5, period_s=0.4)  # every answer reports more than 5 tokens
    judge.backend.budget = budget
    for i in range(3):
        answer = await judge.ask([*MESSAGES[:1], {"role": "user", "content": f"K {i}"}], Verdict)
        assert answer.usage.total_tokens > 5
    await judge.aclose()
    times = arrivals(llm_server)
    # each request waits for the previous answer's tokens to leave the 0.4 s window
    assert all(b - a >= 0.4 - 0.03 for a, b in itertools.pairwise(times))
    assert budget.in_flight == 0


class RecordingBudget:
    """A budget of one's own (as the Ray executor plugs in): records what it is asked."""

    def __init__(self) -> None:
        self.acquired = 0
        self.spent_tokens: list[int] = []

    async def acquire(self) -> None:
        self.acquired += 1

    def spent(self, tokens: int) -> None:
        self.spent_tokens.append(tokens)


async def test_every_attempt_asks_the_budget_and_reports_its_tokens(llm_server: ScriptedServer) -> None:
    llm_server.set_script(
        {"rules": [{"times": 1, "status": 429, "retry_after": 0.05}], "default": {"json": GOOD}}
    )
    judge = http_judge(llm_server, max_attempts=3)
    assert isinstance(judge.backend, OpenAIBackend)
    budget = RecordingBudget()
    judge.backend.budget = budget
    answer = await judge.ask(MESSAGES, Verdict)
    await judge.aclose()
    assert budget.acquired == 2  # the rate-limited attempt and its retry
    assert budget.spent_tokens[0] == 0 and budget.spent_tokens[1] == answer.usage.total_tokens > 0


async def test_a_long_budget_wait_does_not_time_the_request_out(llm_server: ScriptedServer) -> None:
    llm_server.set_script({"default": {"json": GOOD}})
    judge = http_judge(llm_server, timeout_s=0.2, max_attempts=1)
    assert isinstance(judge.backend, OpenAIBackend)
    judge.backend.budget = RateBudget(rpm=2, period_s=0.6, burst=1)  # the second waits 0.3 s
    await judge.ask(MESSAGES, Verdict)
    answer = await judge.ask([*MESSAGES[:1], {"role": "user", "content": "K 4.0"}], Verdict)
    await judge.aclose()
    assert answer.output.rating == 5


# --------------------------------------------------------------------------- settings reach the judge


def test_judge_config_builds_the_budget_and_refuses_bad_limits() -> None:
    judge = build_judge(
        JudgeConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1", rpm=500, tpm=2e5)
    )
    assert isinstance(judge, StructuredJudge) and isinstance(judge.backend, OpenAIBackend)
    assert isinstance(judge.backend.budget, RateBudget)
    assert (judge.backend.budget.rpm, judge.backend.budget.tpm) == (500, 200_000)
    plain = build_judge(JudgeConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1"))
    assert isinstance(plain, StructuredJudge) and plain.backend.budget is None  # type: ignore[attr-defined]
    for bad in (0, -3, "fast", float("inf")):
        with pytest.raises(ValidationError, match="rpm"):
            JudgeConfig(provider="openai", model="m", rpm=bad)


def test_run_file_limits_reach_the_judge(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(json.dumps({"id": "a", "input": "K?", "response": "K 4.1"}) + "\n")
    run = tmp_path / "run.yaml"
    run.write_text(
        "data: cases.jsonl\nmetrics: [rubric]\n"
        "judge: {provider: openai, model: m, base_url: 'http://127.0.0.1:9/v1', rpm: 450, tpm: 150000}\n",
        encoding="utf-8",
    )
    config = load_run_config(run)
    assert (config.judge.rpm, config.judge.tpm) == (450, 150_000)
    run.write_text(
        "data: cases.jsonl\nmetrics: [rubric]\njudge: {provider: openai, model: m, rpm: 0}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"run.yaml.*rpm.*greater than 0"):
        load_run_config(run)


def test_cli_and_evaluate_limits_reach_the_stored_run(
    llm_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_server.set_script({"default": {"json": GOOD}})
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLINEVAL_JUDGE", raising=False)
    Path("cases.jsonl").write_text(json.dumps({"id": "a", "input": "K?", "response": "K 4.1"}) + "\n")
    judge = f"openai:judge-model@{llm_server.base_url}"

    def stored_judge() -> dict[str, object]:
        with RunStore("s.db") as store:
            return dict(store.get_run("latest").config["judge"])

    result = invoke(
        "run",
        "--data",
        "cases.jsonl",
        "-m",
        "rubric",
        "--judge",
        judge,
        "--judge-rpm",
        "600",
        "--judge-tpm",
        "90000",
        "--store",
        "s.db",
        "-q",
    )
    assert result.exit_code == 0, result.output
    assert (stored_judge()["rpm"], stored_judge()["tpm"]) == (600, 90_000)

    result = invoke("run", "--resume", "latest", "--judge-rpm", "300", "--store", "s.db", "-q")
    assert result.exit_code == 0, result.output
    assert (stored_judge()["rpm"], stored_judge()["tpm"], stored_judge()["model"]) == (
        300,
        90_000,
        "judge-model",
    )

    result = invoke(
        "score", "latest", "-m", "rubric", "--judge", judge, "--judge-tpm", "1000", "--store", "s.db", "-q"
    )
    assert result.exit_code == 0, result.output
    assert (stored_judge()["rpm"], stored_judge()["tpm"]) == (None, 1000)

    result = invoke("run", "--data", "cases.jsonl", "-m", "rubric", "--judge-rpm", "0")
    assert result.exit_code == 2 and "--judge-rpm': expected a number above 0, got '0'" in result.output

    evaluate(
        "cases.jsonl",
        ["rubric"],
        judge=JudgeConfig(provider="openai", model="judge-model", base_url=llm_server.base_url, rpm=1000),
        store="s.db",
        progress=False,
    )
    assert stored_judge()["rpm"] == 1000
