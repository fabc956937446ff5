"""Progress of long work (ingesting a large file, rating a range of periods), reported to whoever
listens: the command line's live bar or its timestamped lines. No listener: nothing happens.

The core only reports facts (what, how much done, of how much); how they are shown is the
caller's concern. One listener per process at a time, set with `listening`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """One report: `stage` (`ingest` or `rating`), what is being worked on (`label`: a file
    name, a list), `done` of `total` (None: unknown) in `unit` (`bytes`, `periods`), and the
    games handled so far in this piece of work, or what `counts` names instead (`matches` for
    backgammon)."""

    stage: str
    label: str
    done: int
    total: int | None
    unit: str
    games: int = 0
    finished: bool = False
    counts: str = "games"


Listener = Callable[[Progress], None]

_lock = threading.Lock()
_listener: Listener | None = None


def report(progress: Progress) -> None:
    """Hand `progress` to the listener, if any (a listener's failure never stops the work)."""
    listener = _listener
    if listener is not None:
        with contextlib.suppress(Exception):
            listener(progress)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send every report made inside the block (from any thread) to `listener`."""
    global _listener
    with _lock:
        previous, _listener = _listener, listener
    try:
        yield
    finally:
        with _lock:
            _listener = previous
