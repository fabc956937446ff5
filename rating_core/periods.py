"""Periods are calendar months written `YYYY-MM` (RULES §0)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import polars as pl

from rating_core.text import format_text


def _parts(period: str) -> tuple[int, int]:
    year, month = period.split("-")
    return int(year), int(month)


def next_period(period: str) -> str:
    """The month after `period`."""
    year, month = _parts(period)
    return f"{year + month // 12:04d}-{month % 12 + 1:02d}"


def previous_period(period: str) -> str:
    """The month before `period`."""
    year, month = _parts(period)
    return f"{year - 1:04d}-12" if month == 1 else f"{year:04d}-{month - 1:02d}"


def period_range(first: str, last: str) -> list[str]:
    """Every period from `first` to `last`, both included."""
    out = []
    current = first
    while current <= last:
        out.append(current)
        current = next_period(current)
    return out


FIRST_YEAR = 1850
"""No game or match before this year is rated: an earlier date is a typo or a placeholder."""

FIRST_PERIOD = f"{FIRST_YEAR:04d}-01"
"""The earliest period a list can be computed for."""

TOURNAMENT_SPREAD_DAYS = 366
"""A tournament game dated further than this from its tournament's median game date is a typo."""

PERIOD_SHAPE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
"""A well-formed period `YYYY-MM`."""


def utc_today() -> date:
    """Today's date in UTC (the default "today" of every date rule; tests pass their own)."""
    return datetime.now(UTC).date()


def period_of_date(day: date) -> str:
    """`2026-03-14` → `2026-03`."""
    return f"{day.year:04d}-{day.month:02d}"


def is_rated_period(period: str, today: date | None = None) -> bool:
    """True for a well-formed period from `FIRST_PERIOD` up to the month of `today`."""
    last = period_of_date(today or utc_today())
    return bool(PERIOD_SHAPE.match(period)) and FIRST_PERIOD <= period <= last


AFTER_TODAY = ", after today"
"""How a reason for a date that has not come yet ends (a record that may be good on a later day)."""


def date_range_reason(played: pl.Expr, today: date | None = None) -> pl.Expr:
    """Why a game or match date (a Date or Datetime expression) cannot be rated, else null.

    A date after `today` has not happened yet; a date before `FIRST_YEAR` is no real game date.
    """
    day = played.cast(pl.Date)
    text = day.dt.strftime("%Y-%m-%d")
    return (
        pl.when(day > pl.lit(today or utc_today()))
        .then(format_text("dated {}" + AFTER_TODAY, text))
        .when(day < pl.lit(date(FIRST_YEAR, 1, 1)))
        .then(format_text("dated {}, before {}: not a real game date?", text, pl.lit(FIRST_YEAR)))
        .otherwise(pl.lit(None, dtype=pl.String))
    )


def period_index(period: str) -> int:
    """Month number of a `YYYY-MM` period (year x 12 + month - 1), for window arithmetic.

    Raises ValueError for anything but a well-formed period, so engines refuse a bad name early.
    """
    if not PERIOD_SHAPE.fullmatch(period):
        raise ValueError(f"period must be YYYY-MM, got {period!r}")
    return int(period[:4]) * 12 + int(period[5:]) - 1


def period_index_expr(period: pl.Expr) -> pl.Expr:
    """`period_index` of a column of `YYYY-MM` periods (no validation: the data is conformed)."""
    return period.str.slice(0, 4).cast(pl.Int32) * 12 + period.str.slice(5, 2).cast(pl.Int32) - 1
