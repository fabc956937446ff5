"""A monotonic clock a test moves by hand, and the UTC timestamp that goes with it (for the
progress lines and the heartbeat, tested without waiting)."""

from __future__ import annotations


class FakeClock:
    """A monotonic clock the test moves (`now`), and the UTC timestamp that goes with it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def stamp(self) -> str:
        minutes, seconds = divmod(int(self.now), 60)
        return f"2026-12-05T09:{12 + minutes:02d}:{seconds:02d}Z"
