"""A small lake written by hand for the query and as-of tests: list versions published at known
moments (`created_at`), a correction, a diff, and a few table partitions.

fide-standard (player a, b):
  2026-01 v1  published 2026-02-03 09:00 UTC   a 1500, b 1600
  2026-02 v1  published 2026-03-02 09:00 UTC   a 1510, b 1590
  2026-02 v2  published 2026-03-20 12:00 UTC   a 1512, b 1590   (a correction: diff a 1510 -> 1512)
  2026-03 v1  published 2026-04-05 09:00 UTC   a 1520           (b left the list)
  2026-05 v1  published 2026-04-10 00:00 UTC   a 1530           (a later period, published early)
site-elo (player a, c):
  2026-02 v1  published 2026-03-01 00:00 UTC   a 1400, c 1300
Tables: games 2026-01 (two games) and 2026-02 (a file with no column, as an empty period may be
written), quarantine source=games (one record), fide-standard and fide-rapid per-game
explanations of 2026-01.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TypedDict

import polars as pl
import pytest

from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.storage import table_file, write_partitioned

VERSIONS = [
    ("fide-standard", "2026-01", datetime(2026, 2, 3, 9, 0, tzinfo=UTC), {"a": 1500, "b": 1600}),
    ("fide-standard", "2026-02", datetime(2026, 3, 2, 9, 0, tzinfo=UTC), {"a": 1510, "b": 1590}),
    ("fide-standard", "2026-02", datetime(2026, 3, 20, 12, 0, tzinfo=UTC), {"a": 1512, "b": 1590}),
    ("fide-standard", "2026-03", datetime(2026, 4, 5, 9, 0, tzinfo=UTC), {"a": 1520}),
    ("fide-standard", "2026-05", datetime(2026, 4, 10, 0, 0, tzinfo=UTC), {"a": 1530}),
    ("site-elo", "2026-02", datetime(2026, 3, 1, 0, 0, tzinfo=UTC), {"a": 1400, "c": 1300}),
]
"""(list, period, published at, ratings) of every version, in publication order per period."""


class PublishMeta(TypedDict):
    """Keyword arguments of `publish_list` that a test passes alike to every list it publishes
    (`**meta`), typed so that mypy checks them against the signature."""

    reason: str
    code_version: str


class _Clock(datetime):
    """`datetime` whose `now()` is the moment a test publishes at."""

    moment = datetime(2026, 1, 1, tzinfo=UTC)

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> datetime:  # type: ignore[override]  # the moment: a datetime, not a _Clock
        return cls.moment


def list_rows(ratings: dict[str, int]) -> pl.DataFrame:
    """A list: one row per player with a rating and one game."""
    return pl.DataFrame(
        {
            "player_id": list(ratings),
            "name": [f"Player {p}" for p in ratings],
            "rating": list(ratings.values()),
            "games": [1] * len(ratings),
        },
        schema_overrides={"rating": pl.Int32, "games": pl.Int32},
    )


def publish_versions(lake: Path) -> None:
    """Publish VERSIONS with their `created_at` (publishing's clock set to each moment)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(publish, "datetime", _Clock)
        for name, period, moment, ratings in VERSIONS:
            _Clock.moment = moment
            outcome = publish.publish_list(
                lake,
                name,
                period,
                list_rows(ratings),
                reason="test list",
                input_digest=f"{name}-{period}-{moment:%d}",
                code_version="test",
            )
            assert outcome.status == "published"


def write_tables(lake: Path) -> None:
    """The table partitions of the module docstring."""
    games = pl.DataFrame(
        {
            "game_id": ["g1", "g2"],
            "white_id": ["a", "b"],
            "black_id": ["b", "a"],
            "result": ["1-0", "1/2-1/2"],
            "period": ["2026-01", "2026-01"],
        }
    )
    write_partitioned(lake, tables.GAMES, games)
    empty = table_file(lake, tables.GAMES, "2026-02")
    empty.parent.mkdir(parents=True)
    pl.DataFrame().write_parquet(empty)
    quarantine = pl.DataFrame(
        {
            "source_file": ["platform/x.csv"],
            "line": [7],
            "record": ["g9,..."],
            "value": ["2-0"],
            "reason": ["result '2-0' is not one of 1-0, 0-1, 1/2-1/2"],
            "source": ["games"],
        }
    )
    write_partitioned(lake, tables.QUARANTINE, quarantine)
    for kind, player, delta in (("standard", "a", 0.36), ("rapid", "b", -0.5)):
        explanations = pl.DataFrame(
            {"game_id": ["g1"], "player_id": [player], "delta_r": [delta], "period": ["2026-01"]}
        )
        write_partitioned(lake, tables.history(f"fide-{kind}", "game_explanations"), explanations)


def build(lake: Path) -> Path:
    """The whole lake of the module docstring at `lake`."""
    publish_versions(lake)
    write_tables(lake)
    return lake
