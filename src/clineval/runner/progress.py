"""Progress display: a bar per stage with counts, rate and time left."""

from __future__ import annotations

import sys
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class ProgressReporter(Protocol):
    def start(self, agent_total: int, score_total: int) -> None: ...
    def agent_done(self, failed: bool) -> None: ...
    def scored(self, error: bool) -> None: ...
    def stop(self) -> None: ...


class NullProgress:
    """Shows nothing (tests, ``--quiet``, library use without a terminal)."""

    def start(self, agent_total: int, score_total: int) -> None:
        return None

    def agent_done(self, failed: bool) -> None:
        return None

    def scored(self, error: bool) -> None:
        return None

    def stop(self) -> None:
        return None


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text("-- /s", style="progress.data.speed")
        return Text(f"{speed:,.1f}/s", style="progress.data.speed")


class RichProgress:
    """Two bars on standard error: agent calls (when an agent runs) and scores."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description:<8}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TextColumn("{task.fields[note]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self._agent: TaskID | None = None
        self._score: TaskID | None = None
        self._agent_failed = 0
        self._score_errors = 0

    def start(self, agent_total: int, score_total: int) -> None:
        if agent_total:
            self._agent = self._progress.add_task("agent", total=agent_total, note="")
        self._score = self._progress.add_task("scoring", total=score_total, note="")
        self._progress.start()

    def agent_done(self, failed: bool) -> None:
        if self._agent is None:
            return
        self._agent_failed += int(failed)
        note = f"[red]{self._agent_failed} failed[/]" if self._agent_failed else ""
        self._progress.update(self._agent, advance=1, note=note)

    def scored(self, error: bool) -> None:
        if self._score is None:
            return
        self._score_errors += int(error)
        note = f"[yellow]{self._score_errors} unscored[/]" if self._score_errors else ""
        self._progress.update(self._score, advance=1, note=note)

    def stop(self) -> None:
        self._progress.stop()


def default_progress(enabled: bool | None = None) -> ProgressReporter:
    """A rich progress display when standard error is a terminal (or when asked), else none."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    return RichProgress() if enabled else NullProgress()
