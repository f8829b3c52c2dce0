"""The Ray executor on a local Ray instance: the same results as a local run, resume, a worker
killed mid-shard, the radiology benchmark, resource requests, and the clear errors.

Agents and metrics here are defined in this test module, which the workers cannot import
by name: they reach the workers pickled by value (as a user's own ``agent.py`` would).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import clineval

from clineval import evaluate
from clineval.errors import ConfigError
from clineval.model import Case, ResultRecord

METRICS = ["rouge", "token_f1", "trajectory_precision"]


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    """One local Ray instance (2 CPUs) for this module, shut down after (starting one takes seconds)."""
    ray = pytest.importorskip("ray", reason="the Ray executor's tests need clineval[ray]")
    if ray.is_initialized():  # pragma: no cover - a test elsewhere left one running
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def make_cases(n: int, marker: Path | None = None) -> list[dict[str, Any]]:
    """``n`` cases with a reference text and a reference trajectory (two tools, every third case one)."""
    cases = []
    for i in range(n):
        tools = [{"name": "get_labs", "arguments": {"id": i}}]
        if i % 3:
            tools.append({"name": "get_notes", "arguments": {"id": i}})
        case: dict[str, Any] = {
            "id": f"c-{i:04d}",
            "input": f"patient {i} potassium {i % 7}",
            "reference": f"patient {i} has potassium {i % 7} mmol/L",
            "reference_trajectory": tools,
        }
        if marker is not None:
            case["metadata"] = {"marker": str(marker)}
        cases.append(case)
    return cases


def echo_agent(query: str) -> dict[str, Any]:
    """Deterministic: the query words back, and one tool call (so precision is 1, recall varies)."""
    number = int(query.split()[1])
    return {"response": query, "trajectory": [{"name": "get_labs", "arguments": {"id": number}}]}


def dying_agent(query: str, case: Case) -> dict[str, Any]:
    """Kills its own Ray worker process the first time it sees case c-0007 (a marker file says so)."""
    marker = Path(str(case.metadata["marker"]))
    if case.id == "c-0007" and not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(1)  # the worker process dies mid-shard, as on an out-of-memory kill
    return echo_agent(query)


def resources_agent(query: str) -> dict[str, Any]:
    import ray

    assigned = ray.get_runtime_context().get_assigned_resources()
    return {**echo_agent(query), "resources": assigned, "pid": os.getpid()}


class PidAgent:
    """An agent class, as one that loads a model in ``__init__``: says which process created it."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.built_in = os.getpid()

    def __call__(self, query: str) -> dict[str, Any]:
        return {**echo_agent(query), "built_in": self.built_in, "pid": os.getpid(), "prefix": self.prefix}


def words(case: Case) -> float:
    """A metric of this module: the response's word count (deterministic)."""
    return float(len((case.response or "").split()))


def scores(results: list[ResultRecord]) -> dict[tuple[str, str], Any]:
    return {(r.case_id, r.metric): (r.score.value, r.score.error) for r in results if r.metric != "latency"}


def aggregates(result: Any) -> dict[str, tuple[int, float | None, float | None]]:
    """Per metric (latency left out: it is a wall time): scored count, mean and std."""
    return {
        a.metric: (a.scored, a.mean, a.std) for a in result.aggregate() if not a.metric.startswith("latency")
    }


class Counting:
    """A progress reporter that keeps what the driver counted (agent calls and scores shipped)."""

    def __init__(self) -> None:
        self.started: tuple[int, int] | None = None
        self.agents = 0
        self.scores = 0

    def start(self, agent_total: int, score_total: int) -> None:
        self.started = (agent_total, score_total)

    def agent_done(self, failed: bool) -> None:
        self.agents += 1

    def scored(self, error: bool) -> None:
        self.scores += 1

    def stop(self) -> None:
        return None


def test_same_results_as_the_local_executor(ray_local: Any, tmp_path: Path) -> None:
    cases = make_cases(200)
    metrics: list[Any] = [*METRICS, words]
    common: dict[str, Any] = {"agent": echo_agent, "judge": "none", "progress": False}
    local = evaluate(cases, metrics, store=str(tmp_path / "local.db"), **common)
    progress = Counting()
    on_ray = evaluate(
        cases, metrics, store=str(tmp_path / "ray.db"), executor="ray", **{**common, "progress": progress}
    )
    assert on_ray.run.config["executor"] == "ray"
    assert scores(on_ray.results) == scores(local.results)
    assert aggregates(on_ray) == aggregates(local)
    # hand-worked: the agent calls one tool of the reference's one or two -> precision 1 on every case
    assert aggregates(on_ray)["trajectory_precision"] == (200, 1.0, 0.0)
    assert aggregates(on_ray)["failure"] == (200, 0.0, 0.0)
    assert progress.started == (200, 200 * 6) and progress.agents == 200 and progress.scores == 200 * 6
    assert [c.id for c in on_ray.cases] == [c["id"] for c in cases]
    assert all(c.response == c.input for c in on_ray.cases)


def test_a_resumed_run_ships_only_the_missing_work(ray_local: Any, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cases = make_cases(40)
    full = evaluate(cases, METRICS, agent=echo_agent, judge="none", store=str(store), progress=False)
    run_id = full.run.id
    with sqlite3.connect(store) as db:  # as if the run had stopped: 5 agent calls and 7 scores missing
        gone = [f"c-{i:04d}" for i in range(5)]
        db.executemany("DELETE FROM results WHERE run_id = ? AND case_id = ?", [(run_id, c) for c in gone])
        db.executemany("DELETE FROM outputs WHERE run_id = ? AND case_id = ?", [(run_id, c) for c in gone])
        db.execute(
            "DELETE FROM results WHERE run_id = ? AND case_id = 'c-0010' AND metric = 'rouge'", (run_id,)
        )
        db.execute(
            "DELETE FROM results WHERE run_id = ? AND case_id IN ('c-0011', 'c-0012', 'c-0013') "
            "AND metric IN ('token_f1', 'trajectory_precision')",
            (run_id,),
        )
        db.execute("UPDATE runs SET status = 'interrupted' WHERE id = ?", (run_id,))
    progress = Counting()
    resumed = evaluate(
        resume=run_id, agent=echo_agent, store=str(store), executor="ray", progress=progress, judge="none"
    )
    assert progress.started == (5, 5 * 5 + 1 + 3 * 2)  # 5 metrics a case with the agent's latency and failure
    assert progress.agents == 5 and progress.scores == 32
    assert resumed.run.status == "completed"
    assert scores(resumed.results) == scores(full.results)
    with sqlite3.connect(store) as db:
        (count,) = db.execute("SELECT COUNT(*) FROM results WHERE run_id = ?", (run_id,)).fetchone()
    assert count == 40 * 5


def test_a_worker_killed_mid_shard_is_retried_without_lost_or_duplicated_results(
    ray_local: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "killed.pid"
    store = tmp_path / "runs.db"
    cases = make_cases(60, marker=marker)
    result = evaluate(
        cases, METRICS, agent=dying_agent, judge="none", store=str(store), executor="ray", progress=False
    )
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker process died
    assert result.run.status == "completed"
    assert len(result.results) == 60 * 5
    assert len({(r.case_id, r.metric) for r in result.results}) == 60 * 5
    assert not any(c.agent_run.failed for c in result.cases if c.agent_run is not None)
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT case_id, metric FROM results WHERE run_id = ?", (result.run.id,)).fetchall()
        outputs = db.execute("SELECT COUNT(*) FROM outputs WHERE run_id = ?", (result.run.id,)).fetchone()[0]
    assert len(rows) == len(set(rows)) == 60 * 5 and outputs == 60
    reference = evaluate(cases[:20], METRICS, agent=echo_agent, judge="none", store=None, progress=False)
    assert {k: v for k, v in scores(result.results).items() if k[0] < "c-0020"} == scores(reference.results)


def test_resources_go_to_ray_and_an_agent_class_is_built_there(ray_local: Any, tmp_path: Path) -> None:
    result = evaluate(
        make_cases(6),
        ["rouge"],
        agent=resources_agent,
        judge="none",
        store=None,
        executor="ray",
        agent_num_cpus=2,
        progress=False,
    )
    extras = [c.metadata["agent_output"] for c in result.cases]
    assert all(e["resources"] == {"CPU": 2.0} for e in extras)
    assert len({e["pid"] for e in extras}) == 1  # two CPUs each: one worker fits the cluster
    # an agent class named in the settings is created on each worker (its model would load there)
    from clineval.config import AgentConfig

    named = AgentConfig(target=f"{Path(__file__)}:PidAgent", args={"prefix": "p"})
    built = evaluate(make_cases(6), ["rouge"], agent=named, judge="none", store=None, executor="ray")
    outputs = [c.metadata["agent_output"] for c in built.cases]
    assert all(o["built_in"] == o["pid"] != os.getpid() and o["prefix"] == "p" for o in outputs)
    with pytest.raises(ConfigError, match=r"num_gpus=1 per Ray worker; the Ray cluster has 0 GPU"):
        evaluate(
            make_cases(2),
            ["rouge"],
            agent=echo_agent,
            judge="none",
            store=None,
            executor="ray",
            agent_num_gpus=1,
        )


def test_the_radiology_benchmark_runs_on_ray_with_the_same_results(ray_local: Any, tmp_path: Path) -> None:
    from clineval.environments.radbench.runner import BenchSettings, run_bench

    settings = BenchSettings(
        core="random", n_records=2, seed=3, tasks=["012", "013"], conditions=["baseline", "insufficient_1"]
    )
    local = run_bench(settings, store=str(tmp_path / "local.db"), progress=False)
    on_ray = run_bench(settings, store=str(tmp_path / "ray.db"), progress=False, executor="ray")
    assert on_ray.run.config["executor"] == "ray"
    assert len(on_ray.results) == len(local.results) == 2 * 2 * 2 * 3
    radbench = {k: v for k, v in scores(on_ray.results).items() if k[1] == "radbench"}
    assert radbench == {k: v for k, v in scores(local.results).items() if k[1] == "radbench"}
    subs = {(r.case_id, r.metric): r.score.sub_scores for r in on_ray.results if r.metric == "radbench"}
    assert subs == {
        (r.case_id, r.metric): r.score.sub_scores for r in local.results if r.metric == "radbench"
    }


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1"])
def test_a_bad_ray_address_is_one_clear_line(tmp_path: Path, address: str) -> None:
    pytest.importorskip("ray", reason="the Ray executor's tests need clineval[ray]")
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": "x", "reference": "x", "response": "x"}\n')
    done = clineval(
        "run",
        "--data",
        "cases.jsonl",
        "-m",
        "rouge",
        "--executor",
        "ray",
        "--ray-address",
        address,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"--ray-address '{address}': no Ray cluster answers there" in lines[0]
    assert not (tmp_path / ".clineval" / "clineval.db").exists()  # nothing was stored


def test_ray_not_installed_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails, as when it is not installed
    with pytest.raises(ConfigError) as raised:
        evaluate(
            [{"id": "a", "input": "x", "reference": "x", "response": "x"}],
            ["rouge"],
            store=None,
            executor="ray",
        )
    assert (
        str(raised.value) == "--executor ray needs Ray, which is not installed: pip install 'clineval[ray]'"
    )


def test_an_llm_judge_runs_on_the_workers_within_the_run_s_concurrency_and_caches_per_node(
    ray_local: Any, llm_server: Any, tmp_path: Path
) -> None:
    from tests.metrics.test_factuality_rag_http import CASE, SCRIPT

    script = {**SCRIPT, "delay_s": 0.1}  # answers take 0.1 s: requests overlap
    cases = [{**CASE, "id": f"q{i:02d}", "response": f"{CASE['response']} ({i})"} for i in range(16)]
    judge = f"openai:judge@{llm_server.base_url}"
    common: dict[str, Any] = {"judge": judge, "judge_concurrency": 4, "progress": False}
    llm_server.set_script(script)
    local = evaluate(cases, ["faithfulness"], store=str(tmp_path / "local.db"), cache=None, **common)
    local_requests = llm_server.stats()["chat_requests"]
    assert local_requests == 16 * 2  # faithfulness: claims, then verdicts

    llm_server.reset()
    llm_server.set_script(script)
    on_ray = evaluate(
        cases, ["faithfulness"], store=str(tmp_path / "ray.db"), cache=None, executor="ray", **common
    )
    stats = llm_server.stats()
    assert scores(on_ray.results) == scores(local.results)
    assert stats["chat_requests"] == local_requests
    assert stats["max_in_flight"] <= 4  # two workers, two requests each: the run's 4, not 4 per worker

    # 1,200 judge requests a minute for the whole run (20 at once, then 20 a second): the 96
    # requests of 48 cases span 3.8 s at least; with a budget per worker they would span 1.4 s
    # (plus the few tenths of a second between the two workers' start)
    from clineval.judges import JudgeConfig

    llm_server.reset()
    llm_server.set_script(script)
    paced = JudgeConfig(provider="openai", model="judge", base_url=llm_server.base_url, rpm=1200)
    more = [{**CASE, "id": f"r{i:02d}", "response": f"{CASE['response']} [{i}]"} for i in range(48)]
    evaluate(more, ["faithfulness"], judge=paced, store=None, cache=None, executor="ray", progress=False)
    stamps = sorted(float(r["timestamp"]) for r in llm_server.requests())
    assert len(stamps) == 96 and stamps[-1] - stamps[0] >= 3.5

    cache = tmp_path / "node" / "judge_cache.db"  # a folder the workers make on their node
    for expected_requests in (None, 0):
        llm_server.reset()
        llm_server.set_script(script)
        cached = evaluate(
            cases[:4],
            ["faithfulness"],
            store=str(tmp_path / "c.db"),
            cache=str(cache),
            executor="ray",
            **common,
        )
        assert cache.exists() and scores(cached.results) == scores(local.results[:4])
        if expected_requests is not None:  # the second time, every answer comes from the node's cache
            assert llm_server.stats()["chat_requests"] == expected_requests


@pytest.mark.slow
def test_two_thousand_cases_same_aggregates_as_local(ray_local: Any, tmp_path: Path) -> None:
    """The issue's check at full size (benchmarks/ray_executor.py runs it on the quickstart's agent)."""
    cases = make_cases(2000)
    common: dict[str, Any] = {"agent": echo_agent, "judge": "none", "progress": False}
    local = evaluate(cases, [*METRICS, words], store=str(tmp_path / "local.db"), **common)
    on_ray = evaluate(cases, [*METRICS, words], store=str(tmp_path / "ray.db"), executor="ray", **common)
    assert aggregates(on_ray) == aggregates(local)
    assert scores(on_ray.results) == scores(local.results)


def test_a_conversation_simulation_runs_on_ray_with_the_same_scores(ray_local: Any, tmp_path: Path) -> None:
    from tests.conversations.test_simulation import _project

    from clineval.conversations.simulate import load_simulation_config, simulate_and_score

    results = []
    for where in ("local", "ray"):
        folder = tmp_path / where
        folder.mkdir()
        config = load_simulation_config(_project(folder))
        run_on = {"executor": "ray"} if where == "ray" else {}
        results.append(simulate_and_score(config, store=folder / "runs.db", progress=False, **run_on))
    local, on_ray = results
    assert on_ray.run.config["executor"] == "ray" and on_ray.run.status == "completed"
    assert scores(on_ray.results) == scores(local.results) and len(on_ray.results) == len(local.results)
    assert (tmp_path / "ray" / "saved" / "s1__trial1.jsonl").exists()  # written by a worker on this node


def test_traffic_from_traces_scores_on_ray_as_locally(ray_local: Any, tmp_path: Path) -> None:
    """clineval traces score --executor ray: the assembled conversations' cases, the same scores."""
    import shutil
    import time

    from tests.traces.test_bounded_selection import S, traffic_store

    from clineval.traces.score import score_traffic, select_traffic

    db = traffic_store(tmp_path)
    shutil.copyfile(db, tmp_path / "ray.db")
    since = int((time.time() - 7200) * S)
    metrics = ["conversational_faithfulness", "latency"]
    results = []
    for path, run_on in ((db, {}), (tmp_path / "ray.db", {"executor": "ray"})):
        selection = select_traffic(path, since_ns=since, idle_seconds=0, batch_spans=1)
        results.append(score_traffic(selection, metrics, store=path, progress=False, settings=run_on))
    local, on_ray = results
    assert on_ray.run.config["executor"] == "ray" and on_ray.run.tags["source"] == "traces"
    assert len(on_ray.results) == len(local.results) == 10
    assert scores(on_ray.results) == scores(local.results)


def test_an_unpicklable_agent_stops_the_run_with_the_reason(ray_local: Any, tmp_path: Path) -> None:
    import threading

    lock = threading.Lock()

    def locked_agent(query: str) -> str:
        with lock:
            return query

    store = tmp_path / "runs.db"
    with pytest.raises(ConfigError) as raised:
        evaluate(make_cases(3), ["rouge"], agent=locked_agent, judge="none", store=str(store), executor="ray")
    message = str(raised.value)
    assert message.startswith("the agent, a metric or the judge cannot be sent to Ray workers (TypeError:")
    assert "build what cannot be pickled inside the agent" in message
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT status FROM runs").fetchall() == [("failed",)]


def test_ray_is_imported_only_by_a_run_on_ray() -> None:
    import subprocess

    code = (
        "import sys, clineval, clineval.api, clineval.cli.main, clineval.runner.engine, clineval.config; "
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith(('ray.', 'clineval.runner.ray'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
