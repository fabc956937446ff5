"""The ingest's cheap paths against the plain Polars they replace."""

from __future__ import annotations

import datetime as dt
import random

import polars as pl

from rating_core.ingest.canonical import _with_period
from rating_core.ingest.common import repeats
from rating_core.schemas import UTC_TIME


def test_repeats_is_none_exactly_when_every_value_is_first() -> None:
    rnd = random.Random(3)
    for _ in range(300):
        values = pl.Series(
            [rnd.choice(["a", "b", "c", "d", None]) for _ in range(rnd.randint(0, 5))],
            dtype=pl.String,
        )
        first = values.is_first_distinct()
        found = repeats(values)
        if first.all():
            assert found is None
        else:
            assert found is not None and found.equals(first)


def test_period_is_the_month_of_the_utc_time() -> None:
    rnd = random.Random(4)
    stamps = [
        None
        if rnd.random() < 0.1
        else dt.datetime(1850, 1, 1, tzinfo=dt.UTC)
        + dt.timedelta(microseconds=rnd.randint(0, 180 * 365 * 86_400 * 10**6))
        for _ in range(2000)
    ]
    stamps += [
        dt.datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=dt.UTC),
        dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 30, 23, 59, 59, tzinfo=dt.UTC),
    ]
    games = pl.DataFrame({"played_at": stamps}, schema={"played_at": UTC_TIME})
    got = _with_period(games, pl.col("played_at")).get_column("period")
    assert got.equals(games.get_column("played_at").dt.strftime("%Y-%m").alias("period"))
    empty = _with_period(games.clear(), pl.col("played_at"))
    assert empty.height == 0 and empty.schema["period"] == pl.String
