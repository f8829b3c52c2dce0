"""Two versions of one 40-case dataset whose cases carry their own responses.

Version B, against version A:

* 12 cases (c00–c11) flip from correct to wrong on ``exact_match`` ("twice daily" becomes
  "once daily"), which also drops their ``token_f1`` from 1 to 0.8;
* the agent is 0.5 s faster on every case (``latency``, lower is better: an improvement);
* ``failure`` is 0 everywhere in both (no change);
* c39 has no response in B (scored in A, an error in B) and c38 has none in A (an error
  in A, scored in B).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

N_CASES = 40
FLIPPED = [f"c{i:02d}" for i in range(12)]
METRICS = ["exact_match", "token_f1", "latency", "failure"]


def _case(i: int, version: str) -> dict[str, Any]:
    answer = f"metformin {i * 10 + 250} mg twice daily"
    response: str | None = answer
    if version == "b" and i < 12:
        response = answer.replace("twice", "once")
    if (version == "a" and i == 38) or (version == "b" and i == 39):
        response = None
    latency = 2.0 + (i % 5) * 0.1 - (0.5 if version == "b" else 0.0)
    case: dict[str, Any] = {
        "id": f"c{i:02d}",
        "input": f"What is patient {i}'s metformin dose?",
        "reference": answer,
        "expected": answer,
        "agent_run": {"latency_s": round(latency, 3), "failed": False},
    }
    if response is not None:
        case["response"] = response
    return case


def cases(version: str) -> list[dict[str, Any]]:
    """The 40 cases of version ``"a"`` or ``"b"``."""
    return [_case(i, version) for i in range(N_CASES)]


def write(folder: Path, version: str) -> Path:
    path = folder / f"{version}.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in cases(version)) + "\n", encoding="utf-8")
    return path
