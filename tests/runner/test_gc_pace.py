"""The collector's young-generation threshold is raised during a run and restored after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from clineval.runner.gc_pace import YOUNG_THRESHOLD, paced_collection


@pytest.fixture
def default_thresholds() -> Iterator[None]:
    saved, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(700, 10, 10)
    gc.enable()
    yield
    gc.set_threshold(*saved)
    if not enabled:
        gc.disable()


def test_raised_inside_nested_runs_and_restored_after_the_outermost(default_thresholds: None) -> None:
    with paced_collection():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        with paced_collection():  # a run inside a run (a suite's evaluations)
            assert gc.get_threshold() == (10_000, 10, 10)
        assert gc.get_threshold() == (10_000, 10, 10)  # the outer run is still going
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_when_the_run_fails(default_thresholds: None) -> None:
    with pytest.raises(RuntimeError), paced_collection():
        raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_or_a_disabled_collector_is_left_alone(default_thresholds: None) -> None:
    gc.set_threshold(50_000, 5, 5)
    with paced_collection():
        assert gc.get_threshold() == (50_000, 5, 5)
    gc.set_threshold(700, 10, 10)
    gc.disable()
    with paced_collection():
        assert gc.get_threshold() == (700, 10, 10)
    assert not gc.isenabled()
