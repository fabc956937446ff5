"""Display names: `player_names` against the plain definition (sort every game, keep firsts)."""

from __future__ import annotations

import datetime as dt
import random

import polars as pl

from rating_core import names
from rating_core.names import (
    FIRST_NAMES_SCHEMA,
    NAMES_SCHEMA,
    first_names,
    merge_first_names,
    player_names,
    reduce_first_names,
)
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


def reference_first_names(rows: pl.DataFrame) -> pl.DataFrame:
    """Every (side, player) row sorted by side, played_at, game_id (stable), the first kept."""
    return (
        rows.drop_nulls(["player_id", "name"])
        .sort(["side", "played_at", "game_id"], maintain_order=True)
        .unique(["side", "player_id"], keep="first", maintain_order=True)
    )


def side_rows(games: pl.DataFrame) -> pl.DataFrame:
    """Each game's white and black sides as FIRST_NAMES_SCHEMA rows, in reading order."""
    return pl.concat(
        games.select(
            pl.lit(side).alias("side"),
            pl.col(f"{side}_id").alias("player_id"),
            pl.col(f"{side}_name").alias("name"),
            "played_at",
            "game_id",
        )
        for side in ("white", "black")
    ).cast(FIRST_NAMES_SCHEMA)


def test_first_names_match_the_plain_definition() -> None:
    rnd = random.Random(7)
    for trial in range(300):
        games = random_games(rnd, with_null_times=trial % 3 == 0)
        assert first_names(games).equals(reference_first_names(side_rows(games))), games


def test_reduced_pieces_match_the_first_names_of_all_of_them() -> None:
    """Pieces reduced on their own, then together in reading order, give the first names of
    all their games: ties (the same time and id in two pieces) go to the earlier piece."""
    rnd = random.Random(11)
    for trial in range(200):
        pieces = [random_games(rnd, with_null_times=trial % 4 == 0) for _ in range(3)]
        together = pl.concat([first_names(piece) for piece in pieces])
        expected = reference_first_names(pl.concat([side_rows(piece) for piece in pieces]))
        assert reduce_first_names(together).equals(expected), pieces


def test_reduce_first_names_keeps_rows_of_another_side_name_in_order() -> None:
    rows = pl.DataFrame(
        {
            "side": ["white", "blitz", "black", "blitz"],
            "player_id": ["p", "p", "p", "p"],
            "name": ["W", "Later", "B", "Earlier"],
            "played_at": [dt.datetime(2026, 1, d, tzinfo=dt.UTC) for d in (1, 3, 1, 2)],
            "game_id": ["g1", "g3", "g1", "g2"],
        },
        schema=FIRST_NAMES_SCHEMA,
    )
    assert reduce_first_names(rows).equals(reference_first_names(rows))
    assert reduce_first_names(rows).get_column("name").to_list() == ["B", "Earlier", "W"]


def test_merged_pieces_match_the_first_names_of_all_of_them() -> None:
    """Pieces merged as a streamed file's windows are (every few windows, the merged rows
    first), with times out of order, tied and missing, give the first names of all the games."""
    rnd = random.Random(13)
    for trial in range(150):
        pieces = [random_games(rnd, with_null_times=trial % 3 == 0) for _ in range(7)]
        merged: list[pl.DataFrame] = []
        for piece in pieces:
            merged.append(first_names(piece))
            if len(merged) >= 3:
                merged = [merge_first_names(merged)]
        expected = reference_first_names(pl.concat([side_rows(piece) for piece in pieces]))
        assert merge_first_names(merged).equals(expected), pieces


def test_merging_keeps_the_early_rows_of_the_first_piece_in_place() -> None:
    """Rows of the first piece before the others' earliest time, and a later tie that the
    first piece wins (same time, same id: the earlier reading)."""
    day = [dt.datetime(2026, 1, d, tzinfo=dt.UTC) for d in (1, 2, 3)]
    first = pl.DataFrame(
        {
            "side": ["black", "white", "white"],
            "player_id": ["p", "p", "q"],
            "name": ["P1", "P1", "Q1"],
            "played_at": [day[0], day[0], day[2]],
            "game_id": ["g1", "g1", "g3"],
        },
        schema=FIRST_NAMES_SCHEMA,
    )
    later = pl.DataFrame(
        {
            "side": ["white", "white", "black"],
            "player_id": ["q", "r", "p"],
            "name": ["Q2", "R2", "P2"],
            "played_at": [day[2], day[1], day[1]],
            "game_id": ["g3", "g2", "g2"],
        },
        schema=FIRST_NAMES_SCHEMA,
    )
    merged = merge_first_names([first, later])
    assert merged.rows() == [
        ("black", "p", "P1", day[0], "g1"),
        ("white", "p", "P1", day[0], "g1"),
        ("white", "r", "R2", day[1], "g2"),
        ("white", "q", "Q1", day[2], "g3"),
    ]
    assert merged.equals(reference_first_names(pl.concat([first, later])))
    assert merge_first_names([]).height == 0
    assert merge_first_names([later]).equals(reference_first_names(later))


def test_merged_side_rows_match_the_first_names_of_all_of_them() -> None:
    """A streamed group's way: the first window's first names, then each window's side rows
    as they are, merged every few windows (the merged rows first)."""
    rnd = random.Random(17)
    for trial in range(150):
        pieces = [random_games(rnd, with_null_times=trial % 3 == 0) for _ in range(7)]
        merged: list[pl.DataFrame] = []
        for piece in pieces:
            merged.append(first_names(piece) if not merged else names.side_rows(piece))
            if len(merged) >= 3:
                merged = [merge_first_names(merged)]
        expected = reference_first_names(pl.concat([side_rows(piece) for piece in pieces]))
        assert merge_first_names(merged).equals(expected), pieces
