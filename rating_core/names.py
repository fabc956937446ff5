"""Display names for list rows: the registry's name first, else the name a game file gave."""

from __future__ import annotations

import polars as pl

from rating_core.schemas import TableSchema

NAMES_SCHEMA: TableSchema = {"player_id": pl.String, "name": pl.String}


def player_names(registry: pl.DataFrame, games: pl.DataFrame) -> pl.DataFrame:
    """One name per player id: registry name, else the first name seen in the games (by
    played_at then game_id, a white game before any black one), in that order."""
    frames = []
    if registry.height:
        frames.append(registry.select("player_id", "name").drop_nulls("name"))
    if games.height:
        frames.extend(_first_names(games, side) for side in ("white", "black"))
    if not frames:
        return pl.DataFrame(schema=NAMES_SCHEMA)
    return (
        pl.concat([f.cast(NAMES_SCHEMA) for f in frames])
        .drop_nulls()
        .unique("player_id", keep="first", maintain_order=True)
    )


def _first_names(games: pl.DataFrame, side: str) -> pl.DataFrame:
    """(player_id, name) of one side's games sorted by played_at then game_id: only each id's
    games at its earliest time when no time or id is null (the first of them is all that counts,
    and a sort of 1M games by a string is most of the cost), else every game."""
    rows = games.select(
        pl.col(f"{side}_id").alias("player_id"),
        pl.col(f"{side}_name").alias("name"),
        "played_at",
        "game_id",
    )
    if not rows.select(pl.col("played_at", "game_id").null_count()).sum_horizontal().item():
        rows = rows.drop_nulls(["player_id", "name"])
        rows = rows.filter(pl.col("played_at") == pl.col("played_at").min().over("player_id"))
    return rows.sort(["played_at", "game_id"]).select("player_id", "name")


def attach_names(rows: pl.DataFrame, names: pl.DataFrame) -> pl.DataFrame:
    """Add (or refresh) the `name` column right after `player_id`."""
    rows = rows.drop("name", strict=False)
    joined = rows.join(names, on="player_id", how="left")
    order = ["player_id", "name", *[c for c in rows.columns if c != "player_id"]]
    if "list" in rows.columns:
        order = ["list", *[c for c in order if c != "list"]]
    return joined.select(order)


def name_only_ids(games: pl.DataFrame, registry_ids: pl.Series) -> pl.Series:
    """Distinct ids a game file gave only as a name (id equal to the name) and that the registry
    does not hold: a registered player is identified by the registry, whatever the file gave."""
    sides = [
        games.filter(pl.col(f"{side}_id") == pl.col(f"{side}_name")).get_column(f"{side}_id")
        for side in ("white", "black")
    ]
    ids = pl.concat(sides).drop_nulls().unique().sort()
    return ids.filter(~ids.is_in(registry_ids.cast(pl.String).implode()))
