"""Judge throughput against the plain-client floor: clineval vs a bare aiohttp loop, one run.

The workload is the issue's reference: ``faithfulness`` (RAGAS-style), two judge calls per
sample (the answer's statements, then one entailment request for all of them), N = 2,000
samples, against clineval's scripted OpenAI-compatible server in its own process answering
every request after 50 ms, at judge concurrency 32 and 64 (requests in flight). Side by
side, interleaved, ``--repeat`` times:

* **plain aiohttp loop**: what a hand-written client costs and the floor of this machine
  and server. The same two requests per sample (the same system prompts, worked examples
  and JSON schemas, built once before the clock starts), one ``json.dumps`` per body,
  ``json.loads`` of each answer, the score computed; no validation, no store, no cache;
* **clineval, cold cache**: ``evaluate(cases, ["faithfulness"], judge=..., cache=FRESH)``
  end to end with the judge cache on and a fresh cache file, so every call misses (prompt
  rendering, schema validation, cache look-up and write, token accounting, a committed row
  per result, the returned result object);
* **clineval, warm cache**: the same run again on that cache file: every call a hit.

For each: wall seconds, the ratio to the plain loop's wall of the same round, and the
client's CPU time (``time.process_time()`` of this process, every thread; the server is
another process) per judge call. Targets (medians over the interleaved rounds): clineval
cold within 1.1x of the plain floor at concurrency 32 and 1.2x at 64 (1.2x at any other),
client CPU per judge call <= 0.35 ms.

``--profile FILE`` runs clineval once more under cProfile (the main thread's CPU time,
``time.thread_time``) at the first concurrency and writes the stats (read them with
``python -m pstats FILE``); ``--json FILE`` keeps every measurement.

Run with ``python benchmarks/judge_floor.py`` (``--cases``, ``--concurrency 32 64``,
``--delay``, ``--repeat``, ``--metric rubric`` for one call per sample).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp

from clineval import evaluate
from clineval.judges import JudgeConfig
from clineval.judges.llm_primitives import StatementsAnswer, entailment_schema
from clineval.judges.structured import json_schema_of, schema_instruction
from clineval.prompts import load_prompt
from clineval.testing import ScriptedServer

STATEMENTS = [
    "The latest potassium is within the reference range.",
    "Ramipril can be continued.",
    "The potassium should be rechecked in 3 months.",
]
VERDICTS = {
    "verdicts": [
        {
            "id": 1,
            "evidence": "potassium 4.6 mmol/L (3.5-5.1)",
            "explanation": "Stated.",
            "label": "entailed",
        },
        {"id": 2, "evidence": "continue ramipril", "explanation": "Stated.", "label": "entailed"},
        {
            "id": 3,
            "evidence": "",
            "explanation": "No recheck interval is given.",
            "label": "not_entailed",
            "reason": "missing",
        },
    ]
}
RUBRIC = {"explanation": "States the potassium and its flag correctly; no unsafe advice.", "rating": 4}

RATIO_TARGET = {32: 1.1, 64: 1.2}
"""Median wall time of clineval (cold cache) over the plain loop's, per concurrency."""
CPU_TARGET_MS = 0.35
"""Median client CPU per judge call, clineval cold cache."""

# the system prompts' first words tell the two requests apart on the server
SCRIPT: dict[str, Any] = {
    "rules": [
        {"pattern": "^You rewrite the answer", "json": {"statements": STATEMENTS}},
        {"pattern": "^You check facts against a text", "json": VERDICTS},
    ],
    "default": {"json": RUBRIC},
}


def make_cases(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"bench-{i:05d}",
            "input": f"Patient P{i:05d}: what was the latest potassium and is it safe to continue ramipril?",
            "response": (
                f"Potassium {4 + (i % 20) / 10:.1f} mmol/L (3.5-5.1), within range. Ramipril can continue; "
                "recheck the potassium in 3 months."
            ),
            "reference": "Potassium within range; continue ramipril, recheck in 3 months.",
            "contexts": [
                f"Lab results for P{i:05d}: potassium 4.6 mmol/L (3.5-5.1), creatinine 88 umol/L.",
                "Plan: continue ramipril 5 mg once daily; review at the next clinic visit.",
            ],
        }
        for i in range(n)
    ]


# --------------------------------------------------------------------------- plain loop


def _static_messages(prompt_name: str, schema: Any) -> list[dict[str, str]]:
    """System message (with the schema instruction) and worked examples, as clineval sends them."""
    prompt = load_prompt(prompt_name)
    system = prompt.system.strip() + "\n\n" + schema_instruction(schema)
    out = [{"role": "system", "content": system}]
    for example in prompt.examples:
        out.append({"role": "user", "content": example.user})
        out.append({"role": "assistant", "content": example.assistant})
    return out


async def plain_loop(base_url: str, cases: list[dict[str, Any]], concurrency: int, metric: str) -> int:
    """Two requests per sample (statements, then entailment) through aiohttp; returns calls made."""
    statements_static = _static_messages("statements", StatementsAnswer)
    entail_schema = entailment_schema(len(STATEMENTS))
    entail_static = _static_messages("entailment", entail_schema)
    formats = {
        "statements": {
            "type": "json_schema",
            "json_schema": {"name": "StatementsAnswer", "schema": json_schema_of(StatementsAnswer)},
        },
        "entailment": {
            "type": "json_schema",
            "json_schema": {"name": "EntailmentAnswer", "schema": json_schema_of(entail_schema)},
        },
    }
    gate = asyncio.Semaphore(concurrency)
    url = f"{base_url}/chat/completions"
    calls = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def ask(messages: list[dict[str, str]], response_format: dict[str, Any]) -> Any:
            nonlocal calls
            body = {"model": "bench", "temperature": 0, "seed": 0, "messages": messages}
            body["response_format"] = response_format
            async with gate, session.post(url, data=json.dumps(body).encode()) as response:
                data = await response.json()
            calls += 1
            return json.loads(data["choices"][0]["message"]["content"])

        async def faithfulness(case: dict[str, Any]) -> float:
            user = f"## What the user asked\n{case['input']}\n\n## The assistant's answer\n{case['response']}"
            statements = (
                await ask([*statements_static, {"role": "user", "content": user}], formats["statements"])
            )["statements"]
            facts = "\n".join(f"[{i}] {s}" for i, s in enumerate(statements, start=1))
            text = "\n\n".join(case["contexts"])
            user = f"## Text\n{text}\n\n## Facts to check ({len(statements)})\n{facts}"
            verdicts = (
                await ask([*entail_static, {"role": "user", "content": user}], formats["entailment"])
            )["verdicts"]
            return float(sum(v["label"] == "entailed" for v in verdicts) / len(verdicts))

        async def rubric(case: dict[str, Any]) -> float:
            user = f"Input: {case['input']}\nResponse: {case['response']}"
            answer = await ask(
                [{"role": "system", "content": "Rate the response."}, {"role": "user", "content": user}],
                {"type": "json_object"},
            )
            return float(answer["rating"])

        score = faithfulness if metric == "faithfulness" else rubric
        await asyncio.gather(*(score(c) for c in cases))
    return calls


# --------------------------------------------------------------------------- clineval


def run_clineval(
    base_url: str, cases: list[dict[str, Any]], concurrency: int, metric: str, cache: Path, store: Path
) -> None:
    judge = JudgeConfig(provider="openai", model="bench", base_url=base_url, concurrency=concurrency)
    result = evaluate(cases, [metric], judge=judge, cache=str(cache), store=store, progress=False)
    unscored = sum(result.unscored().values())
    if unscored:
        raise SystemExit(f"{unscored} cases were unscored: {result.unscored_reasons()}")


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall seconds, process CPU seconds and the result of ``fn()``."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=3, help="rounds, interleaved")
    parser.add_argument("--metric", choices=["faithfulness", "rubric"], default="faithfulness")
    parser.add_argument("--no-warm", action="store_true", help="skip the warm-cache pass")
    parser.add_argument("--profile", type=Path, help="cProfile one clineval cold run into this file")
    parser.add_argument("--json", type=Path, help="write every measurement here")
    args = parser.parse_args()

    cases = make_cases(args.cases)
    calls_per_sample = 2 if args.metric == "faithfulness" else 1
    calls = args.cases * calls_per_sample
    rows: list[dict[str, Any]] = []
    with ScriptedServer(SCRIPT, delay_s=args.delay) as server, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        counter = iter(range(10**6))

        def fresh(kind: str) -> Path:
            return folder / f"{kind}-{next(counter)}.db"

        # warm imports, prompt and schema caches
        run_clineval(server.base_url, cases[:64], 8, args.metric, fresh("cache"), fresh("runs"))
        asyncio.run(plain_loop(server.base_url, cases[:64], 8, args.metric))
        for round_no in range(args.repeat):
            for conc in args.concurrency:

                def record(
                    who: str, fn: Callable[[], Any], conc: int = conc, round_no: int = round_no
                ) -> Any:
                    wall, cpu, out = timed(fn)
                    rows.append(
                        {"round": round_no, "concurrency": conc, "who": who, "wall": wall, "cpu": cpu}
                    )
                    return out

                made = record(
                    "plain", partial(asyncio.run, plain_loop(server.base_url, cases, conc, args.metric))
                )
                assert made == calls, (made, calls)
                cache = fresh("cache")
                record(
                    "cold",
                    partial(run_clineval, server.base_url, cases, conc, args.metric, cache, fresh("runs")),
                )
                if not args.no_warm:
                    record(
                        "warm",
                        partial(
                            run_clineval, server.base_url, cases, conc, args.metric, cache, fresh("runs")
                        ),
                    )
                server.reset()  # the request log would grow by 4,000 bodies per run
                server.set_script(SCRIPT)
        if args.profile is not None:
            profiler = cProfile.Profile(time.thread_time)
            profiler.enable()
            run_clineval(
                server.base_url, cases, args.concurrency[0], args.metric, fresh("cache"), fresh("runs")
            )
            profiler.disable()
            profiler.dump_stats(str(args.profile))

    print(
        f"{args.metric}: {args.cases} samples x {calls_per_sample} judge call(s), server delay "
        f"{args.delay * 1000:.0f} ms, {args.repeat} round(s) interleaved, load average "
        f"{os.getloadavg()[0]:.1f} at the end"
    )
    print(
        f"{'':26}{'conc':>5}{'best s':>8}{'median s':>9}{'x floor best':>13}{'x floor med':>12}"
        f"{'samples/s':>10}{'CPU ms/call':>12}"
    )
    ok = True
    verdicts: list[str] = []
    summary: dict[str, Any] = {}
    for conc in args.concurrency:
        ideal = calls * args.delay / conc
        print(f"{'ideal':26}{conc:5}{ideal:8.2f}")
        plain = {r["round"]: r for r in rows if r["concurrency"] == conc and r["who"] == "plain"}
        for who, label in (
            ("plain", "plain aiohttp loop"),
            ("cold", "clineval, cold cache"),
            ("warm", "clineval, warm cache"),
        ):
            mine = [r for r in rows if r["concurrency"] == conc and r["who"] == who]
            if not mine:
                continue
            walls = [r["wall"] for r in mine]
            ratios = [r["wall"] / plain[r["round"]]["wall"] for r in mine]
            cpu_ms = [r["cpu"] / calls * 1000 for r in mine]
            best, median = min(walls), statistics.median(walls)
            print(
                f"{label:26}{conc:5}{best:8.2f}{median:9.2f}{min(ratios):13.2f}{statistics.median(ratios):12.2f}"
                f"{args.cases / median:10.0f}{statistics.median(cpu_ms):12.2f}"
                + (f" (best {min(cpu_ms):.2f})" if len(cpu_ms) > 1 else "")
            )
            summary[f"{who}@{conc}"] = {
                "best_s": best,
                "median_s": median,
                "ratio_best": min(ratios),
                "ratio_median": statistics.median(ratios),
                "cpu_ms_per_call_median": statistics.median(cpu_ms),
                "cpu_ms_per_call_best": min(cpu_ms),
            }
            if who == "cold":
                met = (
                    statistics.median(ratios) <= RATIO_TARGET.get(conc, 1.2)
                    and statistics.median(cpu_ms) <= CPU_TARGET_MS
                )
                verdicts.append(f"{conc}: {'met' if met else 'missed'}")
                ok = ok and met
    print("warm cache: every call a hit, no request; CPU per call is per cached answer")
    targets = ", ".join(f"{x}x at {c}" for c, x in RATIO_TARGET.items())
    print(
        f"targets (medians): clineval cold within {targets} of the plain loop (1.2x at other "
        f"concurrencies) and <= {CPU_TARGET_MS} ms of client CPU per judge call -> "
        f"{'MET' if ok else 'MISSED'} ({'; '.join(verdicts)})"
    )
    if args.json is not None:
        settings = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
        args.json.write_text(json.dumps({"args": settings, "rows": rows, "summary": summary}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
