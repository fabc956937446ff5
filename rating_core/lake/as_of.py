"""Which published version of each list was in force on a date, and a player's ratings then.

In force on day D (a calendar date, UTC): of the versions published (manifest `created_at`) by
the end of D, those of the latest period on or before D's month; of these the newest version, or
with `original` the first published (the period's lowest version). A version published after D
is never in force on D, even for an earlier period: on D nobody could have read it. So on
2026-05-03 the April list is in force if it was published by then (else March's, if that was),
and a correction of April published on 2026-05-20 is in force from 2026-05-20.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import polars as pl

from rating_core.lake import publishing as publish
from rating_core.lake.versions import published_versions
from rating_core.schemas import TableSchema

DATE_SHAPE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
"""`--as-of` takes a calendar date, `YYYY-MM-DD`."""

RATING_COLUMNS = ("rating", "rating_exact", "games", "provisional", "flag")
"""What `ratings_as_of` gives of each list row, after the version that holds it."""


def parse_date(text: str) -> date:
    """`YYYY-MM-DD` as a date; ValueError with a sentence for anything else."""
    if not isinstance(text, str) or not DATE_SHAPE.match(text):
        raise ValueError(f"an as-of date is YYYY-MM-DD, not {text!r}")
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a date of the calendar") from None


def as_day(day: date | str) -> date:
    """`day` as a date (a notebook may give `"2026-04-15"`)."""
    return day if isinstance(day, date) else parse_date(day)


def end_of_day(day: date) -> datetime:
    """The first instant after `day` (UTC): a version published before it was in force on `day`.
    The calendar's last day, 9999-12-31, has no next day: its last representable instant."""
    if day == date.max:
        return datetime.max.replace(tzinfo=UTC)
    return datetime.combine(day + timedelta(days=1), time(), UTC)


def versions_in_force(
    versions: pl.DataFrame, day: date | str, *, original: bool = False
) -> pl.DataFrame:
    """The version of each list in force on `day` (rows of `published_versions`, one per list
    that had one; see the module docstring), sorted by list."""
    day = as_day(day)
    published = versions.filter(
        (pl.col("created_at") < end_of_day(day)) & (pl.col("period") <= day.strftime("%Y-%m"))
    )
    latest = published.filter(pl.col("period") == pl.col("period").max().over("list"))
    chosen = pl.col("version").min() if original else pl.col("version").max()
    return latest.filter(pl.col("version") == chosen.over("list")).sort("list")


@dataclass(frozen=True)
class InForce:
    """The version of one list in force on a date."""

    list: str
    period: str
    version: int
    created_at: datetime


def list_in_force(
    lake: Path | str, list_name: str, day: date | str, *, original: bool = False
) -> InForce | None:
    """The version of `list_name` in force on `day`, None if none was (see `why_none_in_force`)."""
    versions = published_versions(lake, [list_name])
    chosen = versions_in_force(versions, day, original=original)
    if chosen.is_empty():
        return None
    row = chosen.row(0, named=True)
    return InForce(row["list"], row["period"], row["version"], row["created_at"])


def why_none_in_force(lake: Path | str, list_name: str, day: date | str) -> str:
    """Why no version of `list_name` was in force on `day`, as the end of a sentence."""
    day = as_day(day)
    versions = published_versions(lake, [list_name])
    if versions.is_empty():
        return "it has no published version"
    month = day.strftime("%Y-%m")
    early = versions.filter(pl.col("period") <= month)
    if early.is_empty():
        first_period: str = versions["period"].min()  # type: ignore[assignment]
        return f"its first period is {first_period}"
    first = early.sort("created_at").row(0, named=True)
    return (
        f"its first version of a period on or before {month} ({first['period']} "
        f"v{first['version']}) was published on {first['created_at']:%Y-%m-%d}"
    )


def ratings_as_of(
    lake: Path | str, player_id: str, day: date | str, *, original: bool = False
) -> pl.DataFrame:
    """`player_id`'s row on every list in force on `day`: list, period, version, created_at,
    then RATING_COLUMNS (null where the list has no such column). A list in force that does
    not hold the player (not rated on it) has no row. Sorted by list."""
    chosen = versions_in_force(published_versions(lake), day, original=original)
    schema: TableSchema = {
        "list": pl.String,
        "period": pl.String,
        "version": pl.Int32,
        "created_at": chosen.schema["created_at"],
        **{c: publish.LIST_SCHEMA[c] for c in RATING_COLUMNS},
    }
    if chosen.is_empty():
        return pl.DataFrame(schema=schema)
    files = [str(Path(folder) / publish.LIST_FILE) for folder in chosen["folder"]]
    rows = (
        pl.scan_parquet(files, hive_partitioning=False)
        .filter(pl.col("player_id") == player_id)
        .select("list", "period", "version", *RATING_COLUMNS)
        .collect()
    )
    dated = rows.join(
        chosen.select("list", "period", "version", "created_at"),
        on=["list", "period", "version"],
        how="inner",
    )
    return dated.select(list(schema)).sort("list")
