"""A custom evaluator of the prior-authorization suite: were the right criteria unmet?

A denial for the wrong reason is still a wrong answer: the suite checks, besides the
decision, which policy criteria the pipeline assessed as not met.
"""

from __future__ import annotations

import json
from typing import Any


class UnmetCriteria:
    """1 when the criteria assessed as not met are exactly the expected ones, else 0.

    ``response`` is the pipeline's ``criteria`` list (as JSON text), each with a
    ``criterion`` kind and an ``assessment``; ``ground_truth`` is the list of kinds that
    should be unmet (empty for an approval).
    """

    def __call__(self, *, response: str, ground_truth: str) -> dict[str, Any]:
        criteria = json.loads(response) if response.strip() else []
        found = {str(c.get("criterion")) for c in criteria if c.get("assessment") == "not met"}
        expected = {str(kind) for kind in json.loads(ground_truth)}
        missed, extra = sorted(expected - found), sorted(found - expected)
        problems = [f"not found unmet: {', '.join(missed)}"] * bool(missed) + [
            f"wrongly unmet: {', '.join(extra)}"
        ] * bool(extra)
        return {"score": 0.0 if problems else 1.0, "reason": "; ".join(problems) or None}
