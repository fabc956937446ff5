"""`ratings run --timings`: where a run spent its time, step by step, measured on the whole
command rather than on a kernel (wall seconds, this process's CPU seconds, page faults).

The CPU column counts every thread of the process (the PGN read ahead, Polars' threads, the
table writers) and the child processes that ended in the step (a first run's warm-up processes
compiling kernels, the step processes of `--executor multiprocess`), so a step that kept both
cores busy shows more CPU than wall time.
"""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table


@dataclass(frozen=True)
class StepTime:
    """One step of a run: its name, wall and CPU seconds (user, system) and minor page faults."""

    name: str
    wall: float
    user: float
    system: float
    faults: int

    @property
    def cpu(self) -> float:
        """User plus system CPU seconds."""
        return self.user + self.system


def _reading() -> tuple[float, float, float, int]:
    """Now: the wall clock, then the user and system CPU seconds and minor page faults of this
    process and of its children that have ended."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (
        time.perf_counter(),
        own.ru_utime + ended.ru_utime,
        own.ru_stime + ended.ru_stime,
        own.ru_minflt + ended.ru_minflt,
    )


@dataclass
class StepClock:
    """Times consecutive steps: each `lap(name)` closes the step that began at the previous lap
    (or when the clock was made)."""

    steps: list[StepTime] = field(default_factory=list)
    _last: tuple[float, float, float, int] = field(default_factory=_reading)

    def lap(self, name: str) -> None:
        """End the current step, naming it `name`, and start the next."""
        now = _reading()
        wall, user, system, faults = (b - a for a, b in zip(self._last, now, strict=True))
        self.steps.append(StepTime(name, wall, user, system, int(faults)))
        self._last = now

    def total(self) -> StepTime:
        """Every step so far as one."""
        return StepTime(
            "total",
            sum(s.wall for s in self.steps),
            sum(s.user for s in self.steps),
            sum(s.system for s in self.steps),
            sum(s.faults for s in self.steps),
        )


def print_timings(clock: StepClock, console: Console) -> None:
    """The steps as a table of at most 80 columns, the total last."""
    table = Table(
        title="Timings (seconds; CPU of this process and its child processes)", title_justify="left"
    )
    table.add_column("step")
    for name in ("wall", "CPU", "of it system", "page faults"):
        table.add_column(name, justify="right")
    for step in [*clock.steps, clock.total()]:
        table.add_row(
            step.name,
            f"{step.wall:.2f}",
            f"{step.cpu:.2f}",
            f"{step.system:.2f}",
            f"{step.faults:,}",
            style="bold" if step.name == "total" else None,
        )
    console.print(table)
