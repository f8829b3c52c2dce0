"""Fewer cyclic garbage collections while a run's event loop is busy.

CPython's collector starts a young-generation pass every 700 net allocations. A judge
call allocates a few hundred objects (the HTTP exchange, the answer, its validation), and
with dozens of calls in flight every pass walks all of their live objects again: on the
judge benchmark (``benchmarks/judge_floor.py``) the collector took about an eighth of the
client's CPU. While a run executes, :func:`paced_collection` raises the young-generation
threshold to :data:`YOUNG_THRESHOLD` (the older generations keep their settings), so a pass
comes every few dozen calls instead of every one or two; garbage in reference cycles is
collected a little later, memory is not held longer in any way that grows with the run.
The previous thresholds come back when the outermost run ends. A collector that is
disabled, or a threshold already higher, is left as it is.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 10_000
"""Net allocations between two young-generation collections during a run (CPython's default: 700)."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] | None = None


@contextmanager
def paced_collection() -> Iterator[None]:
    """Raise the collector's young-generation threshold for the duration of the block."""
    global _depth, _saved
    with _lock:
        _depth += 1
        if _depth == 1:
            current = gc.get_threshold()
            if gc.isenabled() and 0 < current[0] < YOUNG_THRESHOLD:
                _saved = current
                gc.set_threshold(YOUNG_THRESHOLD, *current[1:])
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
