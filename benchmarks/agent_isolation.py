"""Per-call cost of ``--isolate-agent``: a trivial agent called in-process and in worker processes.

    python benchmarks/agent_isolation.py [--calls 2000] [--concurrency 1 8]

The agent returns a short string at once, so what is measured is clineval's own cost per
call (the agent caller, and for isolation the round trip to a worker process: pickling the
input, a socket, the worker's answer); a real agent's seconds come on top. Also printed:
the time to start one worker (paid once per worker, before the first call's timeout).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from clineval.config import AgentConfig
from clineval.model import Case
from clineval.runner.agent import AgentCaller
from clineval.runner.isolation import AgentPool, AgentRecipe

AGENT = (
    "def answer(question):\n    return 'ok ' + question\n\n\n"
    "async def answer_async(question):\n    return 'ok ' + question\n"
)


async def _calls(caller: AgentCaller, cases: list[Case]) -> float:
    started = time.perf_counter()
    outputs = await asyncio.gather(*(caller.run(case) for case in cases))
    elapsed = time.perf_counter() - started
    assert not any(o.agent_run.failed for o in outputs), outputs[0]
    return elapsed


async def _measure(
    folder: Path, calls: int, concurrency: int, isolate: bool, name: str
) -> tuple[float, float]:
    """(microseconds per call, seconds to warm the pool: 0 in-process)."""
    config = AgentConfig(target=f"agent.py:{name}", concurrency=concurrency, isolate=isolate)
    from clineval.config import build_agent

    agent = build_agent(config, folder)
    pool = AgentPool(AgentRecipe.of(config.target, {}, folder, agent), concurrency) if isolate else None
    caller = AgentCaller(agent, config, pool)
    cases = [Case(id=f"c{i}", input=f"q{i}") for i in range(calls)]
    try:
        warm = await _calls(caller, cases[:concurrency])  # starts the workers
        elapsed = await _calls(caller, cases)
    finally:
        caller.close()
    return elapsed / calls * 1e6, warm if isolate else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "agent.py").write_text(AGENT)
        header = ("agent", "concurrency", "in-process", "isolated", "difference")
        print("{:>6} {:>11}  {:>12}  {:>12}  {:>12}  start-up".format(*header))
        for name, kind in (("answer", "def"), ("answer_async", "async")):
            for concurrency in options.concurrency:
                plain, _ = asyncio.run(_measure(folder, options.calls, concurrency, False, name))
                isolated, warm = asyncio.run(_measure(folder, options.calls, concurrency, True, name))
                print(
                    f"{kind:>6} {concurrency:>11}  {plain:>9.0f} us  {isolated:>9.0f} us  "
                    f"{isolated - plain:>9.0f} us  {warm:.2f} s for {concurrency} worker(s)"
                )


if __name__ == "__main__":
    main()
