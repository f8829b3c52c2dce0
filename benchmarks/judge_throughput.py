"""Judge throughput: 2,000 cases scored with `rubric` at concurrency 32 against a 50 ms server.

The server is clineval's scripted OpenAI-compatible server in its own process, answering
every request after a fixed delay. Four figures are printed side by side:

* ideal: n x delay / concurrency, the wall time with zero overhead;
* peer, openai SDK: the bare ``openai`` SDK making the same n requests under an asyncio
  semaphore (no prompt, no validation, no store): what a hand-written loop costs;
* peer, raw aiohttp: the same requests straight through aiohttp, clineval's transport:
  the floor of this machine and server, with no framework at all;
* clineval: ``evaluate(cases, ["rubric"], judge=...)`` end to end (dataset validation,
  run record, prompt rendering, schema validation, token accounting, a committed row per
  result, and the returned result object).

Each is run ``--repeat`` times, interleaved; the best and the median are printed (the best
is the least disturbed by other load on the machine). Target: clineval within 15 % of
ideal. Run with ``python benchmarks/judge_throughput.py`` (options: ``--cases``,
``--concurrency``, ``--delay``, ``--repeat``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import openai

from clineval import evaluate
from clineval.judges import JudgeConfig
from clineval.testing import ScriptedServer

ANSWER = {"explanation": "States the potassium and its flag correctly; no unsafe advice.", "rating": 4}


def make_cases(n: int) -> list[dict[str, str]]:
    return [
        {
            "id": f"bench-{i:05d}",
            "input": f"Patient P{i:05d}: what was the latest potassium and is it safe to continue ramipril?",
            "response": f"Potassium {4 + (i % 20) / 10:.1f} mmol/L (3.5-5.1); ramipril can continue.",
            "reference": "Potassium within range; continue ramipril, recheck in 3 months.",
        }
        for i in range(n)
    ]


async def peer(base_url: str, cases: list[dict[str, str]], concurrency: int) -> float:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    gate = asyncio.Semaphore(concurrency)

    async def one(case: dict[str, str]) -> None:
        async with gate:
            response = await client.chat.completions.create(
                model="bench",
                messages=[{"role": "user", "content": case["input"] + "\n" + case["response"]}],
                temperature=0,
            )
            json.loads(response.choices[0].message.content or "{}")

    started = time.perf_counter()
    await asyncio.gather(*(one(c) for c in cases))
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed


async def raw_aiohttp(base_url: str, cases: list[dict[str, str]], concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def one(case: dict[str, str]) -> None:
            body = {
                "model": "bench",
                "temperature": 0,
                "messages": [{"role": "user", "content": case["input"] + "\n" + case["response"]}],
            }
            async with gate, session.post(f"{base_url}/chat/completions", json=body) as response:
                data = await response.json()
                json.loads(data["choices"][0]["message"]["content"])

        started = time.perf_counter()
        await asyncio.gather(*(one(c) for c in cases))
        return time.perf_counter() - started


def run_clineval(base_url: str, cases: list[dict[str, str]], concurrency: int, folder: Path) -> float:
    judge = JudgeConfig(provider="openai", model="bench", base_url=base_url, concurrency=concurrency)
    started = time.perf_counter()
    result = evaluate(
        cases, ["rubric"], judge=judge, cache=None, store=folder / f"runs-{time.time_ns()}.db", progress=False
    )
    elapsed = time.perf_counter() - started
    unscored = sum(result.unscored().values())
    if unscored:
        raise SystemExit(f"{unscored} cases were unscored: {result.unscored_reasons()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each, interleaved")
    args = parser.parse_args()

    cases = make_cases(args.cases)
    ideal = args.cases * args.delay / args.concurrency
    runs: dict[str, list[float]] = {
        "peer, openai SDK": [],
        "peer, raw aiohttp": [],
        "clineval evaluate()": [],
    }
    with (
        ScriptedServer({"default": {"json": ANSWER}}, delay_s=args.delay) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        run_clineval(server.base_url, cases[:64], args.concurrency, Path(tmp))  # warm imports and caches
        for _ in range(args.repeat):
            runs["peer, openai SDK"].append(asyncio.run(peer(server.base_url, cases, args.concurrency)))
            runs["peer, raw aiohttp"].append(
                asyncio.run(raw_aiohttp(server.base_url, cases, args.concurrency))
            )
            runs["clineval evaluate()"].append(
                run_clineval(server.base_url, cases, args.concurrency, Path(tmp))
            )

    def per_call_ms(wall: float) -> float:
        # time each call spent beyond the server's delay, as seen by one of the `concurrency` lanes
        return (wall - ideal) * args.concurrency / args.cases * 1000

    print(
        f"cases {args.cases}, concurrency {args.concurrency}, server delay {args.delay * 1000:.0f} ms, "
        f"{args.repeat} run(s) each"
    )
    print(f"{'':22}{'best s':>8}{'vs ideal':>10}{'median s':>10}{'vs ideal':>10}{'overhead/call ms':>18}")
    print(f"{'ideal':22}{ideal:8.3f}")
    for name, walls in runs.items():
        best, median = min(walls), statistics.median(walls)
        print(
            f"{name:22}{best:8.3f}{best / ideal - 1:+10.1%}{median:10.3f}{median / ideal - 1:+10.1%}"
            f"{per_call_ms(median):18.2f}"
        )
    ours, floor = runs["clineval evaluate()"], runs["peer, raw aiohttp"]
    print("all runs: " + "; ".join(f"{k}: {', '.join(f'{w:.2f}' for w in v)}" for k, v in runs.items()))
    framework_ms = (statistics.median(ours) - statistics.median(floor)) * args.concurrency / args.cases * 1000
    print(f"clineval's own overhead per call (median vs raw aiohttp): {framework_ms:.2f} ms")
    ok = min(ours) <= ideal * 1.15
    print(
        f"target: within 15% of ideal -> {'MET' if ok else 'MISSED'} (best run {min(ours) / ideal - 1:+.1%}, "
        f"median {statistics.median(ours) / ideal - 1:+.1%})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
