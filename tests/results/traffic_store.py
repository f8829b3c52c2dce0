"""A tiny store of scored traffic for the trends tests: two days, two agents.

Six conversations scored with exact_match (1 when the answer equals the reference):

=========  ===================  =========  ===========
case       started (UTC)        agent      exact_match
=========  ===================  =========  ===========
d1-a       2026-11-27 08:10     Labs       1
d1-b       2026-11-27 08:40     Labs       0
d1-c       2026-11-27 14:05     Pharmacy   1
d2-a       2026-11-28 09:00     Labs       1
d2-b       2026-11-28 09:30     Pharmacy   0
d2-c       2026-11-28 10:15     Pharmacy   0
=========  ===================  =========  ===========

So day 1: mean 2/3 over 3 conversations (Labs 1/2, Pharmacy 1); day 2: mean 1/3 (Labs 1,
Pharmacy 0). A second run, not from traces, must be left out.
"""

from __future__ import annotations

from pathlib import Path

import clineval

ROWS = [
    ("d1-a", "2026-11-27T08:10:00+00:00", "Labs", True),
    ("d1-b", "2026-11-27T08:40:00+00:00", "Labs", False),
    ("d1-c", "2026-11-27T14:05:00+00:00", "Pharmacy", True),
    ("d2-a", "2026-11-28T09:00:00+00:00", "Labs", True),
    ("d2-b", "2026-11-28T09:30:00+00:00", "Pharmacy", False),
    ("d2-c", "2026-11-28T10:15:00+00:00", "Pharmacy", False),
]


def build_traffic_store(path: Path) -> dict[str, str]:
    """The traces run ('traffic') and a curated run ('curated') in the store at PATH."""
    cases = [
        {
            "id": case_id,
            "input": f"Question {case_id}",
            "reference": "Potassium 5.9 mmol/L.",
            "response": "Potassium 5.9 mmol/L." if right else "Sodium 140 mmol/L.",
            "metadata": {"started": started, "agent": agent, "conversation_id": f"conv-{case_id}"},
        }
        for case_id, started, agent, right in ROWS
    ]
    traffic = clineval.evaluate(cases, ["exact_match"], store=path, name="traffic", tags={"source": "traces"})
    curated = clineval.evaluate(
        [{"id": "x", "input": "q", "reference": "a", "response": "b"}],
        ["exact_match"],
        store=path,
        name="curated",
    )
    return {"traffic": traffic.run_id, "curated": curated.run_id}
