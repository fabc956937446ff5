"""`ratings run --timings` (pipelines.cli.timings): steps timed one after another, printed in 80
columns."""

from __future__ import annotations

import io
import time

from rich.console import Console

from pipelines.cli.timings import StepClock, print_timings


def test_laps_time_consecutive_steps_and_the_total_adds_them_up() -> None:
    clock = StepClock()
    time.sleep(0.05)
    clock.lap("waiting")
    spin_until = time.process_time() + 0.05
    while time.process_time() < spin_until:
        pass
    clock.lap("working")
    waiting, working = clock.steps
    assert [waiting.name, working.name] == ["waiting", "working"]
    assert waiting.wall >= 0.05 and waiting.cpu < waiting.wall  # asleep: no CPU to speak of
    assert working.cpu >= 0.04  # busy: the process's CPU time grew with it
    total = clock.total()
    assert abs(total.wall - (waiting.wall + working.wall)) < 1e-9
    assert abs(total.cpu - (waiting.cpu + working.cpu)) < 1e-9
    assert total.faults == waiting.faults + working.faults >= 0


def test_the_table_fits_80_columns_with_every_step_and_the_total() -> None:
    clock = StepClock()
    for name in ("imports, PGN files read beside", "ingest run", "rating and publishing run"):
        clock.lap(name)
    out = io.StringIO()
    print_timings(clock, Console(file=out, width=80, color_system=None))
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    rows = [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")]
    assert rows == [
        "imports, PGN files read beside",
        "ingest run",
        "rating and publishing run",
        "total",
    ]
