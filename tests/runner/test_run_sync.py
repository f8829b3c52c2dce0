"""clineval.interrupts.run_sync: the one sync/async bridge of every synchronous entry point."""

from __future__ import annotations

import asyncio
import threading

import pytest

from clineval import evaluate
from clineval.interrupts import run_sync


async def _where(value: int) -> tuple[int, str]:
    await asyncio.sleep(0)
    return value * 2, threading.current_thread().name


async def _fails() -> None:
    await asyncio.sleep(0)
    raise LookupError("no such case")


def test_without_a_running_loop_it_runs_on_this_thread() -> None:
    assert run_sync(_where(21)) == (42, threading.current_thread().name)


def test_an_exception_comes_back_as_raised() -> None:
    with pytest.raises(LookupError, match="no such case"):
        run_sync(_fails())


async def test_inside_a_running_loop_it_runs_on_a_helper_thread() -> None:
    """As in a notebook: the caller's loop is running, so a new one runs in a thread."""
    assert run_sync(_where(21)) == (42, "clineval-evaluate")
    with pytest.raises(LookupError, match="no such case"):
        run_sync(_fails())


async def test_evaluate_inside_a_running_loop() -> None:
    result = evaluate(
        [
            {"id": "a", "input": "q", "response": "x", "reference": "x"},
            {"id": "b", "response": "y", "reference": "x"},
        ],
        ["exact_match"],
        store=None,
        progress=False,
    )
    assert [r.score.value for r in result.results] == [1.0, 0.0]
