"""A line that shows a command is alive while slow work runs with nothing else to say: off a
terminal (CI, cron, Dagster's logs, `make run 2>&1 | cat`), `Heartbeat` prints a plain
timestamped line naming the work whenever nothing has been printed for a few seconds. On a terminal a spinner or a live bar says it instead.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from types import TracebackType

from rich.console import Console
from rich.text import Text

EVERY_S = 3.0
"""Seconds of silence before a heartbeat's line."""

EVERY_ENV = "RATINGS_HEARTBEAT_SECONDS"
"""Environment variable overriding a command's heartbeat interval (`0`: no heartbeat; the test
suite's default, so that a command's stderr is exactly its own lines however busy the machine)."""

HEARTBEAT_POLL_S = 0.25
"""How often the heartbeat's thread looks whether a line is due (a line is at most this late)."""


def utc_stamp() -> str:
    """Now, UTC, to the second: `2026-12-05T09:12:03Z`."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


Work = str | Callable[[], str]
"""What is being done, as the heartbeat names it: a text, or a function giving it at each line
(for real progress: `preparing the kernels: 9 of 16 ready`)."""


class Heartbeat:
    """While some work is named (`doing`), a line `2026-12-05T09:12:03Z ingesting the inbox: 7 s
    so far` whenever nothing has been printed for `every` seconds. Other lines count when their
    printer says so (`said`), so the heartbeat only fills silences: quick work prints nothing.

    `say` prints one line; `clock` and `stamp` are the monotonic clock and the UTC timestamp
    (tests fake them and call `due` themselves). Entered, a helper thread prints the lines due,
    unless `active` is false (on a terminal, where a spinner shows the work instead): then
    `doing` and `said` cost nothing and nothing is printed.
    """

    def __init__(
        self,
        say: Callable[[str], None],
        every: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic,
        stamp: Callable[[], str] = utc_stamp,
        active: bool = True,
    ) -> None:
        self.say = say
        self.every = every
        self.active = active
        self.clock = clock
        self.stamp = stamp
        self._lock = threading.Lock()
        self._work: list[tuple[Work, float]] = []
        self._last = clock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def doing(self, work: Work) -> Iterator[None]:
        """Name `work` for the block (the innermost block's work is the one named); its seconds
        count from the block's start."""
        entry = (work, self.clock())
        with self._lock:
            self._work.append(entry)
        try:
            yield
        finally:
            with self._lock:
                self._work.remove(entry)

    def said(self) -> None:
        """Another line was printed just now: the next heartbeat waits `every` seconds from it."""
        with self._lock:
            self._last = self.clock()

    def due(self, now: float) -> str | None:
        """The line due at `now`, if any: some work is named and nothing was printed for `every`
        seconds (the line counts as printed)."""
        with self._lock:
            if not self._work or now - self._last < self.every:
                return None
            work, started = self._work[-1]
            self._last = now
        text = work() if callable(work) else work
        return f"{self.stamp()} {text}: {now - started:.0f} s so far"

    def __enter__(self) -> Heartbeat:
        """Start the thread that prints the lines due (when active)."""
        if self.active and self.every > 0 and self._thread is None:
            self._done.clear()
            self._thread = threading.Thread(
                target=self._beat, name="ratings-heartbeat", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop the thread: no line after the block."""
        self.stop()

    def stop(self) -> None:
        """Stop the thread now (the work left prints its own lines: a summary); no line after."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._done.set()
            thread.join()

    def _beat(self) -> None:
        while not self._done.wait(min(HEARTBEAT_POLL_S, self.every)):
            line = self.due(self.clock())
            if line is not None:
                self.say(line)


def seconds_setting(
    variable: str, default: float, environ: Mapping[str, str] | None = None
) -> float:
    """An interval from the environment: `variable` when it is a number of seconds (0 or more),
    else `default` (the heartbeat's and the progress lines' settings)."""
    value = (os.environ if environ is None else environ).get(variable, "")
    try:
        seconds = float(value)
    except ValueError:
        return default
    return seconds if seconds >= 0 else default


def heartbeat_seconds(environ: Mapping[str, str] | None = None) -> float:
    """The heartbeat's interval: `RATINGS_HEARTBEAT_SECONDS` (0: none), else `EVERY_S`."""
    return seconds_setting(EVERY_ENV, EVERY_S, environ)


def plain_heartbeat(console: Console, every: float | None = None) -> Heartbeat:
    """A heartbeat printing plain lines on `console` (as written: no markup, no highlighting, no
    wrapping) every `every` seconds of silence (default `heartbeat_seconds()`), active only when
    `console` is not a terminal and the interval is not 0."""
    every = heartbeat_seconds() if every is None else every

    def say(line: str) -> None:
        console.print(Text(line), highlight=False, soft_wrap=True)

    return Heartbeat(say, every=every, active=not console.is_terminal and every > 0)
