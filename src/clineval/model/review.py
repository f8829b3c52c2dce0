"""Records of human review: a reviewer's verdict on a case or one of its items, and a queue
of cases planned for review. Stored in the run store beside the run; they never change a score."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Strategy = Literal["random", "stratified", "disagreement", "given"]
_REVIEWER = re.compile(r"^[^\x00-\x1f\x7f]{1,80}$")


def reviewer_problem(name: str) -> str | None:
    """Why ``name`` cannot name a reviewer (it is 1 to 80 printable characters, without
    spaces around it), or ``None`` when it can."""
    if not name.strip() or not _REVIEWER.match(name) or name != name.strip():
        return f"{name!r} cannot name a reviewer: 1 to 80 printable characters, without spaces around it"
    return None


class ReviewRecord(BaseModel):
    """One verdict (or comment) given by one reviewer on one item of one case.

    ``item`` is ``case`` or an item id (``fact/tbfact/precision/3``, ``sentence/faithfulness/2``,
    ``turn/1``); ``scale`` is the question answered (``factuality``, ``harm``, ``comment``, a
    fact's ``verdict`` or ``importance`` ...). ``shown`` records what the reviewer saw when
    answering: whether the scores were hidden (blind), the item's text, the queue."""

    model_config = ConfigDict(extra="forbid")

    seq: int | None = None
    run_id: str
    case_id: str
    item: str = "case"
    scale: str
    reviewer: str
    verdict: str | None = None
    comment: str | None = None
    created_at: float = 0.0
    shown: dict[str, Any] = Field(default_factory=dict)
    source: str = "viewer"
    """``viewer``, ``import:FILE`` or ``api``."""
    queue_id: str | None = None
    retracted: bool = False
    """A verdict taken back (an emptied comment, a cleared answer): the item has no answer."""


class ReviewQueue(BaseModel):
    """The cases of a run picked for review, in the order reviewers take them."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str
    run_id: str
    created_at: float
    strategy: Strategy
    seed: int | None = None
    per_case: int = Field(default=1, ge=1, le=20)
    """Reviewers per case: each case is given to at most this many reviewers."""
    metrics: list[str] = Field(default_factory=list)
    """What the strategy looked at (stratified: the score; disagreement: the two scores)."""
    compare_run: str | None = None
    """Disagreement between two judges: the other run of the same cases."""
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    """The review schema of this queue (``None``: the run's own, or the defaults)."""
    case_ids: list[str] = Field(default_factory=list)
    notes: dict[str, str] = Field(default_factory=dict)
    """Why a case was picked (its stratum, or the two scores), by case id."""
