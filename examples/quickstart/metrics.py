"""A metric of our own, in a few lines: does the agent's recommendation match the expected label?

The example agent ends tool answers with ``Recommendation: <label>.``. This function
reads that label and compares it with the case's ``expected`` label. Cases without an
expected label (the summaries) are "not applicable", not wrong.
"""

from __future__ import annotations

import re

from clineval import Score

LABEL = re.compile(r"Recommendation:\s*([a-z_]+)", re.IGNORECASE)


def recommendation_matches(response: str, expected: str | None = None) -> Score:
    """1 when the response's 'Recommendation:' label equals the expected label."""
    if expected is None:
        return Score.not_applicable("the case has no expected label")
    found = LABEL.search(response)
    said = found.group(1).lower() if found else None
    return Score(
        value=float(said == expected.lower()),
        label=said or "none",
        explanation=f"expected {expected!r}, the response says {said!r}",
    )
