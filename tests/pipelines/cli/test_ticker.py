"""`ticking`: a line every few seconds while slow work runs, and none after it ends."""

from __future__ import annotations

import time

from pipelines.cli.ticker import ticking


def test_ticks_while_the_block_runs_and_stops_after() -> None:
    said: list[float] = []
    with ticking(said.append, every=0.02):
        time.sleep(0.15)
    count = len(said)
    assert count >= 3 and said == sorted(said) and said[0] >= 0.02
    time.sleep(0.06)
    assert len(said) == count  # the thread ended with the block


def test_nothing_to_say_starts_no_thread() -> None:
    import threading

    before = threading.active_count()
    with ticking(None):
        assert threading.active_count() == before
