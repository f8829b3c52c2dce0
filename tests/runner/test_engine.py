"""The runner through the Python API: agents, failures, concurrency, resume, re-scoring."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from clineval import Case, ScriptedJudge, evaluate, load_run, rescore
from clineval.errors import ClinevalError, ConfigError
from clineval.judges import JudgeConfig
from clineval.model import ResultRecord, Score
from clineval.store import RunStore
from clineval.testing import ScriptedServer

CASES = [
    {
        "id": f"k{i}",
        "input": f"Latest potassium for patient P{i}?",
        "reference": f"Potassium for P{i} is {4 + i / 10:.1f} mmol/L.",
        "reference_trajectory": [
            {"name": "get_labs", "arguments": {"patient_id": f"P{i}", "test": "potassium"}}
        ],
        "metadata": {"ward": "renal" if i % 2 else "cardio"},
    }
    for i in range(6)
]


def lab_agent(query: str) -> dict[str, Any]:
    patient = query.split()[-1].rstrip("?")
    number = int(patient[1:])
    if number == 5:
        raise LookupError(f"patient {patient} not found")
    test = "potassium" if number != 3 else "sodium"  # a wrong argument on one case
    return {
        "response": f"Potassium for {patient} is {4 + number / 10:.1f} mmol/L.",
        "trajectory": [{"name": "get_labs", "arguments": {"patient_id": patient, "test": test}}],
    }


def test_agent_run_scores_and_records_latency_and_failure(tmp_path: Path) -> None:
    result = evaluate(
        CASES,
        ["token_f1", "trajectory_exact_match"],
        agent=lab_agent,
        store=tmp_path / "s.db",
        progress=False,
    )
    assert result.run.status == "completed"
    assert result.metrics == ["token_f1", "trajectory_exact_match", "latency", "failure"]
    frame = result.to_pandas().set_index("case_id")
    assert list(frame["failure"]) == [0, 0, 0, 0, 0, 1]
    assert frame.loc["k5", "agent_error"] == "LookupError: patient P5 not found"
    assert frame.loc["k0", "token_f1"] == 1.0
    assert frame.loc["k3", "trajectory_exact_match"] == 0.0
    assert frame.loc["k4", "trajectory_exact_match"] == 1.0
    assert (
        frame.loc["k5", "token_f1/error"]
        == "the agent failed on this case: LookupError: patient P5 not found"
    )
    summary = {a.metric: a for a in result.aggregate()}
    assert summary["failure"].mean == pytest.approx(1 / 6)
    assert summary["trajectory_exact_match"].mean == pytest.approx(4 / 5)
    assert summary["trajectory_exact_match"].errors == 1
    assert summary["latency"].scored == 5 and summary["latency"].not_applicable == 1
    assert result.unscored() == {"token_f1": 1, "trajectory_exact_match": 1}
    # everything is in the store, once
    with RunStore(tmp_path / "s.db") as store:
        assert store.count_results(result.run_id) == 6 * 4
        assert len(store.load_outputs(result.run_id)) == 6


def test_sync_agents_run_concurrently_and_timeouts_fail(tmp_path: Path) -> None:
    active, peak = 0, 0
    lock = threading.Lock()
    overlapping = threading.Event()  # set once four calls run at the same time
    released = threading.Event()  # k0's call waits for it: past its timeout however fast the machine is

    def slow_agent(query: str) -> str:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
            if active >= 4:
                overlapping.set()
        if query.endswith("P0?"):
            released.wait(60)
        else:
            overlapping.wait(0.3)  # back as soon as four calls overlap; at most 0.3 s, under the timeout
        with lock:
            active -= 1
        return "ok"

    try:
        result = evaluate(
            CASES,
            ["exact_match"],
            agent=slow_agent,
            agent_concurrency=6,
            agent_timeout_s=0.5,
            store=tmp_path / "s.db",
            progress=False,
        )
    finally:
        released.set()
    assert peak >= 4  # the sync agent ran in several threads at once
    frame = result.to_pandas().set_index("case_id")
    assert frame.loc["k0", "failure"] == 1 and "timed out after 0.5 s" in frame.loc["k0", "agent_error"]
    assert frame.loc["k1", "failure"] == 0


async def _async_agent(query: str, case: Case) -> dict[str, Any]:
    await asyncio.sleep(0.01)
    return {"response": case.id, "trajectory": [], "contexts": "ctx", "model": "demo-1"}


def test_async_agent_with_case_and_extra_output(tmp_path: Path) -> None:
    result = evaluate(CASES[:2], ["exact_match"], agent=_async_agent, store=tmp_path / "s.db", progress=False)
    assert [c.response for c in result.cases] == ["k0", "k1"]
    assert result.cases[0].contexts == ["ctx"]
    assert result.cases[0].metadata["agent_output"] == {"model": "demo-1"}


def test_invalid_agent_output_is_a_failure(tmp_path: Path) -> None:
    result = evaluate(CASES[:1], ["exact_match"], agent=lambda q: 42, store=tmp_path / "s.db", progress=False)
    assert "invalid output: the agent returned a int" in (result.cases[0].agent_run.error or "")  # type: ignore[union-attr]


def test_rate_limited_agent_is_retried_when_allowed(tmp_path: Path) -> None:
    class RateLimited(Exception):
        status_code = 429

    calls: dict[str, int] = {}

    def flaky(query: str) -> str:
        calls[query] = calls.get(query, 0) + 1
        if calls[query] == 1:
            raise RateLimited("slow down")
        return "ok"

    result = evaluate(
        CASES[:3], ["exact_match"], agent=flaky, agent_max_attempts=3, store=tmp_path / "s.db", progress=False
    )
    assert all(
        c.agent_run is not None and not c.agent_run.failed and c.agent_run.attempts == 2 for c in result.cases
    )


def test_unknown_metric_fails_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Did you mean 'token_f1'"):
        evaluate(CASES, ["token_f"], store=tmp_path / "s.db", progress=False)
    assert RunStore(tmp_path / "s.db").list_runs() == []


def test_duplicate_metric_names_need_an_alias(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="give one an alias"):
        evaluate(CASES, ["rouge", "rouge(rouge_type=rouge1)"], store=tmp_path / "s.db", progress=False)


def test_resume_skips_finished_work(tmp_path: Path) -> None:
    counted: list[str] = []

    def counting(response: str, case: Case) -> float:
        counted.append(case.id)
        return 1.0

    data = [{**c, "response": "r"} for c in CASES]
    first = evaluate(data, [counting], store=tmp_path / "s.db", progress=False)
    assert sorted(counted) == [c["id"] for c in CASES]
    # pretend the run was killed after three results
    with RunStore(tmp_path / "s.db") as store:
        store._conn.execute(
            "DELETE FROM results WHERE run_id = ? AND case_id IN ('k3', 'k4', 'k5')", (first.run_id,)
        )
        store.set_status(first.run_id, "interrupted")
    counted.clear()
    resumed = evaluate(metrics=[counting], resume=first.run_id, store=tmp_path / "s.db", progress=False)
    assert sorted(counted) == ["k3", "k4", "k5"]
    assert resumed.run.status == "completed" and len(resumed.results) == 6


def test_resume_with_other_metrics_is_refused(tmp_path: Path) -> None:
    first = evaluate(
        [{**c, "response": "r"} for c in CASES], ["exact_match"], store=tmp_path / "s.db", progress=False
    )
    with pytest.raises(ConfigError, match="resume with the same ones"):
        evaluate(metrics=["rouge"], resume=first.run_id, store=tmp_path / "s.db", progress=False)


def test_rescore_does_not_call_the_agent(tmp_path: Path) -> None:
    calls = 0

    def agent(query: str) -> str:
        nonlocal calls
        calls += 1
        return "Potassium is normal."

    first = evaluate(CASES, ["exact_match"], agent=agent, store=tmp_path / "s.db", progress=False)
    assert calls == 6
    second = rescore(first.run_id, ["token_f1", "latency"], store=tmp_path / "s.db", progress=False)
    assert calls == 6
    assert second.run.source_run_id == first.run_id
    assert second.metrics == ["token_f1", "latency"]
    assert all(r.score.status == "scored" for r in second.results)
    assert load_run("latest", store=tmp_path / "s.db").run_id == second.run_id


def test_judge_metrics_with_scripted_judge_and_usage(tmp_path: Path) -> None:
    judge = ScriptedJudge(
        rules={"P3": {"explanation": "wrong lab", "rating": 2}}, default={"explanation": "fine", "rating": 5}
    )
    data = [{**c, "response": "r"} for c in CASES]
    result = evaluate(data, ["rubric"], judge=judge, store=tmp_path / "s.db", progress=False)
    values = {r.case_id: r.score.value for r in result.results}
    assert values["k3"] == 2.0 and values["k0"] == 5.0
    assert result.run.usage.calls == 6
    assert result.run.judge is not None and result.run.judge["name"] == "scripted"


def test_judge_configuration_error_stops_and_keeps_work(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script(
        {
            "rules": [{"pattern": "P[0-2]\\b", "json": {"explanation": "ok", "rating": 4}}],
            "default": {"status": 401, "error_message": "invalid api key"},
        }
    )
    config = JudgeConfig(provider="openai", model="m", base_url=llm_server.base_url, concurrency=1)
    data = [{**c, "response": "r"} for c in CASES]
    with pytest.raises(ClinevalError, match="refused the credentials") as info:
        evaluate(
            data,
            ["rubric"],
            judge=config,
            store=tmp_path / "s.db",
            cache=None,
            progress=False,
            scoring_concurrency=1,
        )
    assert "--resume" in str(info.value)
    with RunStore(tmp_path / "s.db") as store:
        (run,) = store.list_runs()
        assert run.status == "failed" and "credentials" in (run.error or "")
        assert store.count_results(run.id) == 3  # the three scored before the 401 are kept
    # once the key is fixed, resuming scores the rest
    llm_server.set_script({"default": {"json": {"explanation": "ok", "rating": 4}}})
    resumed = evaluate(resume=run.id, store=tmp_path / "s.db", progress=False)
    assert resumed.run.status == "completed" and len(resumed.results) == 6


def test_group_by_and_summary_metrics(tmp_path: Path) -> None:
    data = [{**c, "response": c["reference"]} for c in CASES]
    result = evaluate(data, ["token_f1"], store=tmp_path / "s.db", progress=False)
    groups = {a.group: a.scored for a in result.aggregate(by="ward")}
    assert groups == {"cardio": 3, "renal": 3}
    assert result.summary_metrics["token_f1/mean"] == 1.0
    assert result.summary_metrics["row_count"] == 6
    long = result.to_pandas(long=True)
    assert list(long.columns[:4]) == ["case_id", "metric", "status", "value"] and len(long) == 6


def test_results_are_written_as_they_finish(tmp_path: Path) -> None:
    seen: list[int] = []
    path = tmp_path / "s.db"

    async def watcher(response: str, case: Case) -> float:
        # the results of the cases scored before this one (one at a time), once the store's
        # writer has committed them; a bounded wait, so results held back until the end fail
        before = len(seen)
        deadline = time.monotonic() + 10
        while True:
            with RunStore(path) as store:
                count = store.count_results(store.list_runs()[0].id)
            if count >= before or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.01)
        seen.append(count)
        return 1.0

    evaluate(
        [{**c, "response": "r"} for c in CASES], [watcher], store=path, progress=False, scoring_concurrency=1
    )
    # each case sees the results of the cases before it already committed, not all at the end
    assert seen == [0, 1, 2, 3, 4, 5]


def test_error_result_types() -> None:
    record = ResultRecord(run_id="r", case_id="c", metric="m", score=Score.failed("x"))
    assert record.score.status == "error"


def test_returned_result_equals_what_the_store_holds(tmp_path: Path) -> None:
    result = evaluate(
        CASES, ["token_f1", "trajectory_recall"], agent=lab_agent, store=tmp_path / "s.db", progress=False
    )
    stored = load_run(result.run_id, store=tmp_path / "s.db")
    assert [c.model_dump() for c in result.cases] == [c.model_dump() for c in stored.cases]
    key = lambda r: (r.case_id, r.metric)  # noqa: E731
    assert [(key(r), r.score) for r in result.results] == [(key(r), r.score) for r in stored.results]
    assert result.run == stored.run


def test_agent_output_that_is_not_json_is_kept_out_not_fatal(tmp_path: Path) -> None:
    def agent(query: str) -> dict[str, Any]:
        return {"response": "K 4.1", "debug": [object()], "model": "demo"}

    result = evaluate(CASES[:2], ["exact_match"], agent=agent, store=tmp_path / "s.db", progress=False)
    assert all(not c.agent_run.failed for c in result.cases)  # type: ignore[union-attr]
    assert result.cases[0].metadata["agent_output"] == {"model": "demo", "_not_stored": ["debug"]}
    frame = result.to_pandas()
    assert list(frame["agent_failed"]) == [False, False]


def test_second_run_is_served_from_the_judge_cache(llm_server: ScriptedServer, tmp_path: Path) -> None:
    llm_server.set_script({"default": {"json": {"explanation": "accurate", "rating": 5}}})
    config = JudgeConfig(provider="openai", model="m", base_url=llm_server.base_url)
    data = [{**c, "response": "r"} for c in CASES]
    cache = str(tmp_path / "cache.db")
    first = evaluate(data, ["rubric"], judge=config, store=tmp_path / "s.db", cache=cache, progress=False)
    assert llm_server.stats()["chat_requests"] == 6 and first.run.usage.calls == 6
    second = evaluate(data, ["rubric"], judge=config, store=tmp_path / "s.db", cache=cache, progress=False)
    assert llm_server.stats()["chat_requests"] == 6  # no HTTP call the second time
    assert second.run.usage.calls == 0 and second.run.usage.cached == 6
    assert [r.score.value for r in second.results] == [r.score.value for r in first.results]


def test_progress_display_shows_counts(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from clineval.runner.progress import RichProgress

    stream = io.StringIO()
    progress = RichProgress(Console(file=stream, force_terminal=True, width=120))
    evaluate(CASES, ["exact_match"], agent=lab_agent, store=tmp_path / "s.db", progress=progress)
    text = stream.getvalue()
    assert "agent" in text and "scoring" in text and "18/18" in text and "6/6" in text
    assert "1 failed" in text and "/s" in text


def test_keywords_override_a_run_config(tmp_path: Path) -> None:
    from clineval.config import RunConfig

    config = RunConfig(
        name="from-file", tags={"team": "renal"}, metrics=["exact_match"], store=str(tmp_path / "a.db")
    )
    data = [{**c, "response": "r"} for c in CASES]
    result = evaluate(
        data,
        config=config,
        name="override",
        tags={"change": "prompt-v2"},
        store=tmp_path / "b.db",
        progress=False,
    )
    assert result.run.name == "override" and result.run.tags == {"team": "renal", "change": "prompt-v2"}
    assert (tmp_path / "b.db").exists() and not (tmp_path / "a.db").exists()
    with pytest.raises(ConfigError, match="need an agent"):
        evaluate(data, ["exact_match"], agent_concurrency=4, store=tmp_path / "c.db", progress=False)


def test_a_bad_dataset_leaves_no_store_behind(tmp_path: Path) -> None:
    from clineval.errors import DatasetError

    with pytest.raises(DatasetError):
        evaluate([{"id": "a", "contexts": 3}], ["exact_match"], store=tmp_path / "s.db", progress=False)
    assert not (tmp_path / "s.db").exists()


def test_store_none_keeps_the_run_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clineval import evaluate

    monkeypatch.chdir(tmp_path)
    result = evaluate(
        [{"id": "a", "input": "q", "response": "x", "reference": "x"}],
        ["exact_match"],
        store=None,
        progress=False,
    )
    assert [r.score.value for r in result.results] == [1.0]
    assert list(tmp_path.iterdir()) == []  # no file named "None", no default store
