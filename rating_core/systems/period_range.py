"""The shared front of the range replays (issue 10): checking a range of periods and the rows
in it, and reporting each period rated."""

from __future__ import annotations

import polars as pl

from rating_core.progress import Progress, report


def check_periods(periods: list[str]) -> None:
    """Raise ValueError unless `periods` is strictly ascending (each period once)."""
    if any(a >= b for a, b in zip(periods, periods[1:], strict=False)):
        raise ValueError(f"periods must be ascending and distinct, not {', '.join(periods)}")


def check_within(period: pl.Series, periods: list[str], what: str) -> None:
    """Raise ValueError when a value of `period` (a row's period) is null or not in `periods`."""
    outside = period.filter(period.is_null() | ~period.is_in(pl.Series(periods).implode()))
    if outside.len():
        shown = ", ".join(str(p) for p in outside.unique(maintain_order=True).head(3))
        raise ValueError(
            f"{what} of a period outside {periods[0]}..{periods[-1]} cannot be replayed "
            f"with that range: {shown}"
        )


def report_period(
    system: str, done: int, periods: list[str], games: int, counts: str = "games"
) -> None:
    """Report (`rating_core.progress`) that `done` of the range's `periods` are rated, `games`
    games (or what `counts` names: `matches`) handled so far: once per period (and, in a
    streamed replay, between two batches of a period), never per game, so a listener costs
    nothing."""
    report(Progress("rating", system, done, len(periods), "periods", games, counts=counts))
