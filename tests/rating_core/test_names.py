"""Display names: `player_names` against the plain definition (sort every game, keep firsts)."""

from __future__ import annotations

import datetime as dt
import random

import polars as pl

from rating_core.names import NAMES_SCHEMA, player_names
from rating_core.schemas import TableSchema

GAME_COLUMNS: TableSchema = {
    "played_at": pl.Datetime("us", "UTC"),
    "game_id": pl.String,
    "white_id": pl.String,
    "white_name": pl.String,
    "black_id": pl.String,
    "black_name": pl.String,
}


def reference_names(registry: pl.DataFrame, games: pl.DataFrame) -> pl.DataFrame:
    """Registry names, then every game's white and black sides sorted by (played_at, game_id):
    the first name of each id."""
    frames = []
    if registry.height:
        frames.append(registry.select("player_id", "name").drop_nulls("name"))
    ordered = games.sort(["played_at", "game_id"])
    for side in ("white", "black"):
        frames.append(
            ordered.select(
                pl.col(f"{side}_id").alias("player_id"), pl.col(f"{side}_name").alias("name")
            )
        )
    return (
        pl.concat([f.cast(NAMES_SCHEMA) for f in frames])
        .drop_nulls()
        .unique("player_id", keep="first", maintain_order=True)
    )


def random_games(rnd: random.Random, with_null_times: bool) -> pl.DataFrame:
    """Up to 30 games with unique ids, few players and names, times that tie, null ids and
    names (and null times when asked)."""
    n = rnd.randint(0, 30)
    ids, names = ["a", "b", "c", "d", None], ["x", "y", "z", None]
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def when() -> dt.datetime | None:
        if with_null_times and rnd.random() < 0.2:
            return None
        return start + dt.timedelta(seconds=rnd.randint(0, 3))

    return pl.DataFrame(
        {
            "played_at": [when() for _ in range(n)],
            "game_id": rnd.sample([f"g{k}" for k in range(40)], n),
            "white_id": [rnd.choice(ids) for _ in range(n)],
            "white_name": [rnd.choice(names) for _ in range(n)],
            "black_id": [rnd.choice(ids) for _ in range(n)],
            "black_name": [rnd.choice(names) for _ in range(n)],
        },
        schema=GAME_COLUMNS,
    )


def test_player_names_match_the_plain_definition() -> None:
    rnd = random.Random(5)
    registry = pl.DataFrame({"player_id": ["c", "e"], "name": ["Registered", None]})
    for trial in range(400):
        games = random_games(rnd, with_null_times=trial % 3 == 0)
        reg = registry if trial % 2 else pl.DataFrame()
        assert player_names(reg, games).equals(reference_names(reg, games)), games


def test_a_white_game_names_a_player_before_an_earlier_black_one() -> None:
    games = pl.DataFrame(
        {
            "played_at": [
                dt.datetime(2026, 1, 2, tzinfo=dt.UTC),
                dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
            ],
            "game_id": ["g2", "g1"],
            "white_id": ["p", "q"],
            "white_name": ["Later as white", "Q"],
            "black_id": ["q", "p"],
            "black_name": ["Q", "Earlier as black"],
        },
        schema=GAME_COLUMNS,
    )
    names = player_names(pl.DataFrame(), games)
    assert names.rows() == [("q", "Q"), ("p", "Later as white")]
