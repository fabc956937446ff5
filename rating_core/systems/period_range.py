"""The shared front of the range replays (issue 10): checking a range of periods and cutting
one pass's outputs back into one piece per period."""

from __future__ import annotations

import numpy as np
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


def segment_ends(row_codes: np.ndarray, labels: pl.Series, periods: list[str]) -> np.ndarray:
    """int64 end (exclusive) in the replay order of each period's rows.

    `row_codes` are the period codes of the replayed rows (non-decreasing, code c the period
    `labels[c]`, labels sorted): period k's rows end after every row whose period is at most
    periods[k].
    """
    codes_up_to = labels.search_sorted(pl.Series(periods, dtype=pl.String), side="right")
    return np.searchsorted(row_codes, codes_up_to.to_numpy(), side="left").astype(np.int64)


def split_by_period(frame: pl.DataFrame, periods: list[str]) -> list[pl.DataFrame]:
    """The rows of each period (column `period`) in their order in `frame`, one frame per
    period (an empty frame of the same schema for a period without rows)."""
    parts = frame.partition_by("period", as_dict=True, maintain_order=True)
    empty = frame.clear()
    return [parts.get((period,), empty) for period in periods]


def report_period(system: str, done: int, periods: list[str], games: int) -> None:
    """Report (`rating_core.progress`) that `done` of the range's `periods` are rated, `games`
    games or matches in them: once per period, never per game, so a listener costs nothing."""
    report(Progress("rating", system, done, len(periods), "periods", games))


def rows_per_period(frame: pl.DataFrame, periods: list[str]) -> list[int]:
    """Rows of `frame` (column `period`) in each of `periods`, counted in one Polars pass: the
    games of each period of a one-pass replay, for its progress reports."""
    if not frame.height:
        return [0] * len(periods)
    counts = dict(frame.group_by("period").len().iter_rows())
    return [int(counts.get(period, 0)) for period in periods]
