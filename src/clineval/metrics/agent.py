"""Agent performance metrics recorded for every case the agent ran.

Source: the agent evaluation of Vertex AI's Gen AI evaluation service.

``latency`` is the wall time of the agent call in seconds; ``failure`` is 1 when the
call raised or timed out and 0 when it returned a valid response. Both are added to a
run automatically whenever clineval runs an agent. They read ``case.agent_run``, which
a dataset may also supply for outputs produced elsewhere.
"""

from __future__ import annotations

from clineval.metrics.base import BaseMetric, ScoreContext
from clineval.metrics.registration import metric
from clineval.model import Case, Score

#: Where both metrics come from, as the metric catalogue names it.
AGENT_SOURCE = "Vertex AI Gen AI evaluation (agent performance metrics)"


@metric("latency", source=AGENT_SOURCE)
class Latency(BaseMetric):
    """Seconds the agent took to return its response (not applicable when the call failed)."""

    requires = ("agent_run",)
    higher_is_better = False

    def score(self, case: Case, ctx: ScoreContext) -> Score:
        assert case.agent_run is not None
        run = case.agent_run
        if run.latency_s is None:
            return Score.failed("no latency was recorded for this case")
        if run.failed:
            return Score.not_applicable(
                f"the agent failed after {run.latency_s:.3f} s: {run.error or 'unknown error'}",
                latency_s=run.latency_s,
            )
        return Score(value=run.latency_s, details={"attempts": run.attempts})


@metric("failure", source=AGENT_SOURCE)
class Failure(BaseMetric):
    """1 when the agent call raised, timed out or returned an invalid output; 0 otherwise."""

    requires = ("agent_run",)
    higher_is_better = False

    def score(self, case: Case, ctx: ScoreContext) -> Score:
        assert case.agent_run is not None
        run = case.agent_run
        if run.failed:
            return Score(value=1.0, label="failed", explanation=run.error)
        return Score(value=0.0, label="ok")
