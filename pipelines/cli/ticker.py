"""A line every few seconds while slow work runs with nothing else to say (a first run off a
terminal, where no spinner shows that the command is alive)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

EVERY_S = 3.0
"""Seconds between two lines."""


@contextlib.contextmanager
def ticking(say: Callable[[float], None] | None, every: float = EVERY_S) -> Iterator[None]:
    """Call `say(seconds so far)` every `every` seconds from a helper thread while the block runs
    (nothing when `say` is None)."""
    if say is None:
        yield
        return
    done = threading.Event()
    started = time.monotonic()

    def loop() -> None:
        while not done.wait(every):
            say(time.monotonic() - started)

    thread = threading.Thread(target=loop, name="ratings-ticker", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
