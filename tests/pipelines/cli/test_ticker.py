"""`Heartbeat`: off a terminal, a timestamped line naming the work whenever it is silent for a few
seconds (issue 31 item 7, issue 33 item 8)."""

from __future__ import annotations

import io
import re
import time

import pytest
from rich.console import Console

from pipelines.cli.ticker import EVERY_S, Heartbeat, heartbeat_seconds, plain_heartbeat
from tests.support.clock import FakeClock


def beating(every: float = 3.0) -> tuple[Heartbeat, FakeClock, list[str]]:
    """A heartbeat on a fake clock whose lines the test takes with `due` (no thread)."""
    clock = FakeClock()
    said: list[str] = []
    return Heartbeat(said.append, every=every, clock=clock, stamp=clock.stamp), clock, said


def test_a_heartbeat_fills_each_silence_of_the_named_work_and_no_more() -> None:
    heartbeat, clock, _ = beating(every=3)
    assert heartbeat.due(10.0) is None  # nothing named: nothing to say, however long
    clock.now = 10.0
    with heartbeat.doing("opening the lake"):  # silent since 0 s: a line at once
        assert heartbeat.due(10.0) == "2026-12-05T09:12:10Z opening the lake: 0 s so far"
    with heartbeat.doing("ingesting the inbox"):
        assert heartbeat.due(12.9) is None  # silent for less than 3 s
        assert heartbeat.due(13.0) == "2026-12-05T09:12:10Z ingesting the inbox: 3 s so far"
        assert heartbeat.due(15.0) is None  # its own line counts: the next 3 s after it
        clock.now = 15.5
        heartbeat.said()  # another line (a progress line) was printed at 15.5 s
        assert heartbeat.due(18.4) is None
        assert heartbeat.due(18.6) is not None
    assert heartbeat.due(30.0) is None  # the work ended: silence is fine


def test_the_innermost_work_is_named_with_its_own_seconds_then_the_outer_again() -> None:
    heartbeat, clock, _ = beating(every=3)
    with heartbeat.doing("running"):
        clock.now = 5.0
        with heartbeat.doing("rating and publishing 2026-01"):
            line = heartbeat.due(9.0)
        assert line is not None and line.endswith(" rating and publishing 2026-01: 4 s so far")
        line = heartbeat.due(12.0)
        assert line is not None and line.endswith(" running: 12 s so far")


def test_work_named_by_a_function_is_asked_at_each_line() -> None:
    heartbeat, _, _ = beating(every=1)
    ready = iter(["0 of 2 ready", "1 of 2 ready"])
    with heartbeat.doing(lambda: f"preparing the kernels ({next(ready)})"):
        first, second = heartbeat.due(1.0), heartbeat.due(2.0)
    assert first is not None and first.endswith("(0 of 2 ready): 1 s so far")
    assert second is not None and second.endswith("(1 of 2 ready): 2 s so far")


def test_an_entered_heartbeat_prints_from_its_thread_until_stopped() -> None:
    said: list[str] = []
    heartbeat = Heartbeat(said.append, every=0.01)
    with heartbeat, heartbeat.doing("loading"):
        deadline = time.monotonic() + 10  # a generous bound on a loaded machine, not a timing
        while len(said) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    count = len(said)
    assert count >= 2 and all(re.fullmatch(r"\S+Z loading: \d+ s so far", line) for line in said)
    time.sleep(0.05)
    assert len(said) == count  # none after the block: the thread ended


def test_an_inactive_heartbeat_starts_no_thread_and_prints_nothing() -> None:
    import threading

    said: list[str] = []
    heartbeat = Heartbeat(said.append, every=0.001, active=False)
    before = threading.active_count()
    with heartbeat, heartbeat.doing("loading"):
        assert threading.active_count() == before
        time.sleep(0.01)
    assert said == []


def test_a_console_heartbeat_is_active_off_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RATINGS_HEARTBEAT_SECONDS")  # the suite turns it off: the default here
    written = io.StringIO()
    pipe = Console(file=written, force_terminal=False)
    terminal = Console(file=io.StringIO(), force_terminal=True)
    assert plain_heartbeat(pipe).active and not plain_heartbeat(terminal).active
    heartbeat = plain_heartbeat(pipe)
    heartbeat.say("2026-12-05T09:12:03Z [bold]x[/]: 3 s so far")
    assert written.getvalue() == "2026-12-05T09:12:03Z [bold]x[/]: 3 s so far\n"  # as written
    monkeypatch.setenv("RATINGS_HEARTBEAT_SECONDS", "0")
    assert not plain_heartbeat(pipe).active  # turned off


@pytest.mark.parametrize(
    ("value", "seconds"), [("", EVERY_S), ("0", 0.0), ("1.5", 1.5), ("-1", EVERY_S), ("x", EVERY_S)]
)
def test_the_heartbeat_interval_comes_from_the_environment(value: str, seconds: float) -> None:
    assert heartbeat_seconds({"RATINGS_HEARTBEAT_SECONDS": value}) == seconds
