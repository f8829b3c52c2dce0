"""Request budgets: how many judge requests and tokens may go to an endpoint per minute.

A budget is asked before every request an OpenAI-compatible backend sends (retries
included) and told afterwards how many tokens the response reported. The backend's own
concurrency cap (:class:`clineval.resilience.AdaptiveLimiter`) bounds requests in flight;
a budget bounds their rate. Two implementations satisfy :class:`RequestBudget`:

- a local one for one process (``--judge-rpm`` / ``--judge-tpm``), in this module;
- a cluster-wide one for runs on Ray, shared by every worker so that N workers do not
  multiply the load on one endpoint (in the Ray executor).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class RequestBudget(Protocol):
    """Paces requests to one endpoint: asked before each request, told each response's tokens."""

    async def acquire(self) -> None:
        """Wait until one more request may be sent now (requests per minute, tokens per minute)."""
        ...

    def spent(self, tokens: int) -> None:
        """Record the tokens one response reported (prompt + completion); 0 when it reported none."""
        ...
