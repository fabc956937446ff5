"""Display names for list rows: the registry's name first, else the name a game file gave."""

from __future__ import annotations

import polars as pl

from rating_core.schemas import UTC_TIME, TableSchema, empty

NAMES_SCHEMA: TableSchema = {"player_id": pl.String, "name": pl.String}


FIRST_NAMES_SCHEMA: TableSchema = {
    "side": pl.String,
    "player_id": pl.String,
    "name": pl.String,
    "played_at": UTC_TIME,
    "game_id": pl.String,
}
"""Each player's first named game on each side (`first_names`): what `player_names` needs of
the games, kept per inbox file group so that the names never need the whole games table."""

_ORDER = ["played_at", "game_id"]


def player_names(registry: pl.DataFrame, games: pl.DataFrame) -> pl.DataFrame:
    """One name per player id: registry name, else the first name seen in the games (by
    played_at then game_id, a white game before any black one), in that order."""
    return names_from(registry, first_names(games))


def first_names(games: pl.DataFrame) -> pl.DataFrame:
    """Each player's first named game on each side of `games` (FIRST_NAMES_SCHEMA): the row
    `player_names` takes a game name from, whatever other games are added to these. The games
    are put in order once for both sides (a numeric key first: the ids are compared only
    between games played at the same time), then each side keeps its players' first rows."""
    order = games.select(
        *(pl.col(f"{side}_{what}") for side in _SIDES for what in ("id", "name")),
        *_ORDER,
    ).cast({"played_at": UTC_TIME, "game_id": pl.String})
    order = order.sort(_ORDER, maintain_order=True)
    sides = [
        _first_rows(
            order.select(
                pl.col(f"{side}_id").cast(pl.String).alias("player_id"),
                pl.col(f"{side}_name").cast(pl.String).alias("name"),
                *_ORDER,
            )
        ).select(pl.lit(side).alias("side"), pl.all())
        for side in _SIDES
    ]
    return pl.concat(sides).cast(FIRST_NAMES_SCHEMA)


_SIDES = ("black", "white")
"""The sides in the order of their names (the order of the rows `reduce_first_names` gives)."""


def _first_rows(ordered: pl.DataFrame) -> pl.DataFrame:
    """The first row of each player of one side's rows, already in order (nulls dropped)."""
    named = ordered.drop_nulls(["player_id", "name"])
    return named.filter(pl.col("player_id").is_first_distinct())


def reduce_first_names(rows: pl.DataFrame) -> pl.DataFrame:
    """The first row of each (side, player) by played_at then game_id (nulls first, ties in
    the order given): first names of several pieces of games, concatenated in reading order,
    reduced to those of all of them. Each side is put in order on its own, by a numeric key
    first (a sort led by the side's name compared strings for every pair of rows)."""
    rows = rows.select(list(FIRST_NAMES_SCHEMA))
    parts = [rows.filter(pl.col("side") == side) for side in _SIDES]
    if sum(part.height for part in parts) != rows.height:  # another side's name: sort them all
        return (
            rows.drop_nulls(["player_id", "name"])
            .sort(["side", *_ORDER], maintain_order=True)
            .unique(["side", "player_id"], keep="first", maintain_order=True)
        )
    return pl.concat([_first_rows(part.sort(_ORDER, maintain_order=True)) for part in parts])


def side_rows(games: pl.DataFrame) -> pl.DataFrame:
    """Both sides of every game as FIRST_NAMES_SCHEMA rows with a player and a name, in
    reading order, white first: what `first_names` reduces, left for `merge_first_names` to
    reduce with other pieces (a window of a month meets most of its players once: reducing it
    on its own sorted it for little)."""
    sides = [
        games.select(
            pl.lit(side).alias("side"),
            pl.col(f"{side}_id").cast(pl.String).alias("player_id"),
            pl.col(f"{side}_name").cast(pl.String).alias("name"),
            *_ORDER,
        ).drop_nulls(["player_id", "name"])
        for side in ("white", "black")
    ]
    return pl.concat(sides).cast(FIRST_NAMES_SCHEMA)


def merge_first_names(pieces: list[pl.DataFrame]) -> pl.DataFrame:
    """`reduce_first_names` of the concatenated `pieces` (FIRST_NAMES_SCHEMA rows in reading
    order), for a first piece that is first names (`first_names` or `reduce_first_names` rows:
    each side in order, one row per player); the others may be any rows (`side_rows`). The
    first piece's rows that come before every other piece's earliest time keep their place
    unsorted: a month read nearly in time order sorts about the new pieces only, not every
    player met so far (1.6M rows per reduction at a million players)."""
    pieces = [piece.select(list(FIRST_NAMES_SCHEMA)) for piece in pieces]
    if len(pieces) < 2:
        return reduce_first_names(pl.concat(pieces)) if pieces else empty(FIRST_NAMES_SCHEMA)
    head, rest = pieces[0], pl.concat(pieces[1:])
    heads = [head.filter(pl.col("side") == side) for side in _SIDES]
    rests = [rest.filter(pl.col("side") == side) for side in _SIDES]
    if sum(part.height for part in heads + rests) != head.height + rest.height:
        return reduce_first_names(pl.concat(pieces))  # another side's name
    parts = []
    for first, later in zip(heads, rests, strict=True):
        times = later.get_column("played_at")
        if not later.height:
            before = first.height
        elif times.null_count():  # a game without a time comes before any other: sort them all
            before = 0
        else:  # `first` is in order, nulls first: its rows before `later`'s earliest time
            mine = first.get_column("played_at").to_physical()
            before = mine.null_count() + int((mine < times.to_physical().min()).sum())
        ordered = pl.concat([first.slice(before), later]).sort(_ORDER, maintain_order=True)
        parts.append(_first_rows(pl.concat([first.slice(0, before), ordered])))
    return pl.concat(parts)


def names_from(registry: pl.DataFrame, first: pl.DataFrame) -> pl.DataFrame:
    """`player_names` of the registry and the games' first names (FIRST_NAMES_SCHEMA)."""
    frames = []
    if registry.height:
        frames.append(registry.select("player_id", "name").drop_nulls("name"))
    for side in ("white", "black"):
        mine = first.filter(pl.col("side") == side).sort(_ORDER, maintain_order=True)
        frames.append(mine.select("player_id", "name"))
    return (
        pl.concat([f.cast(NAMES_SCHEMA) for f in frames])
        .drop_nulls()
        .unique("player_id", keep="first", maintain_order=True)
    )


def attach_names(rows: pl.DataFrame, names: pl.DataFrame) -> pl.DataFrame:
    """Add (or refresh) the `name` column right after `player_id`: the registry's or the games'
    name (`names`), else the name the rows already give (an official starting list's, for a
    player nothing else names)."""
    given = "name" in rows.columns
    if given:
        rows = rows.rename({"name": "_given_name"})
    joined = rows.join(names, on="player_id", how="left")
    if given:
        joined = joined.with_columns(
            pl.coalesce("name", pl.col("_given_name").cast(pl.String)).alias("name")
        ).drop("_given_name")
        rows = rows.drop("_given_name")
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
