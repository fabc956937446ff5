"""The player data of federation lists (FIDE §7.1.2 publishes them): federation, titles, sex and
birth year on every FIDE, UKD and club list row, the flag FIDE prints (`w`, `i`, `wi`), and the
rank.

Precedence, field by field: the registry (`players.csv`, the federation's own record), then the
latest starting list in force (the newest official list before the period, TXT, XML or CSV),
then the tournament files (TRF `001` records). A value a lower source gives differently is not
used; `conflict_note` counts such differences for the run summary, so none is overwritten
silently. PGN files give no federation (no standard tag holds one) and their `WhiteTitle` is
the title at the game, so they are not a source.
"""

from __future__ import annotations

import polars as pl

from rating_core.schemas import TableSchema

PLAYER_DATA_SCHEMA: TableSchema = {
    "player_id": pl.String,
    "federation": pl.String,
    "title": pl.String,
    "w_title": pl.String,
    "o_title": pl.String,
    "foa_title": pl.String,
    "sex": pl.String,
    "birth_year": pl.Int32,
}
"""One row per player: the data a federation list shows beside the rating."""

DATA_COLUMNS = tuple(c for c in PLAYER_DATA_SCHEMA if c != "player_id")
WOMEN_TITLES = ("WGM", "WIM", "WFM", "WCM")
NOT_TITLES = ("BOT",)
"""Registry titles that are no federation title (a bot's declaration)."""

SOURCES = ("registry", "starting list", "tournament file")
CONFLICTS_NAMED = 3
"""Differences a note names one by one (the others are counted)."""


def _clean(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame`'s data columns typed, stripped, upper-cased where FIDE writes capitals, empty
    strings and zero birth years as null; a missing column is null."""
    exprs = []
    for column in DATA_COLUMNS:
        dtype = PLAYER_DATA_SCHEMA[column]
        if column not in frame.columns:
            exprs.append(pl.lit(None, dtype=dtype).alias(column))
        elif column == "birth_year":
            year = pl.col(column).cast(pl.Int32, strict=False)
            exprs.append(pl.when(year > 0).then(year).alias(column))
        else:
            text = pl.col(column).cast(pl.String).str.strip_chars().str.to_uppercase()
            if column == "sex":  # TRF and some registries write W for a woman, FIDE F
                text = text.replace({"W": "F"})
            exprs.append(pl.when(text != "").then(text).alias(column))
    return frame.select(pl.col("player_id").cast(pl.String), *exprs)


def registry_data(players: pl.DataFrame | None) -> pl.DataFrame:
    """The registry's player data (PLAYER_DATA_SCHEMA): `title` as given (a bot's `BOT` is
    none), `w_title` the title when it is a women's title (FIDE prints it in both columns),
    sex `W` (as TRF writes a woman) read as FIDE's `F`."""
    if players is None or not players.height:
        return pl.DataFrame(schema=PLAYER_DATA_SCHEMA)
    data = _clean(players)
    title = pl.col("title")
    return data.with_columns(
        pl.when(title.is_in(NOT_TITLES)).then(None).otherwise(title).alias("title"),
        pl.coalesce("w_title", pl.when(title.is_in(WOMEN_TITLES)).then(title)).alias("w_title"),
    ).select(list(PLAYER_DATA_SCHEMA))


def starting_list_data(starting_lists: pl.DataFrame, period: str | None = None) -> pl.DataFrame:
    """Each player's data on the latest starting list official before `period` (every list
    when None): the newest list's values field by field, an older list filling what it leaves
    empty."""
    if not starting_lists.height:
        return pl.DataFrame(schema=PLAYER_DATA_SCHEMA)
    lists = starting_lists
    if period is not None:
        lists = lists.filter(pl.col("period") < period)
    newest_first = lists.sort(["period", "list"], descending=[True, False])
    data = _clean(newest_first)
    return (
        data.group_by("player_id", maintain_order=True)
        .agg(pl.col(c).drop_nulls().first() for c in DATA_COLUMNS)
        .select(list(PLAYER_DATA_SCHEMA))
        .cast(PLAYER_DATA_SCHEMA)
    )


def starting_list_names(starting_lists: pl.DataFrame, period: str) -> pl.DataFrame:
    """player_id, name as the newest starting list official before `period` writes it (an
    official FIDE list names every player on it): the name a list row keeps when neither the
    registry nor a game file names the player (`rating_core.names.attach_names`)."""
    if "name" not in starting_lists.columns or not starting_lists.height:
        return pl.DataFrame(schema={"player_id": pl.String, "name": pl.String})
    return (
        starting_lists.filter((pl.col("period") < period) & pl.col("name").is_not_null())
        .sort(["period", "list"], descending=[True, False])
        .unique("player_id", keep="first", maintain_order=True)
        .select(pl.col("player_id").cast(pl.String), pl.col("name").cast(pl.String))
    )


def tournament_data(trf_players: pl.DataFrame | None) -> pl.DataFrame:
    """The TRF `001` records' player data (TRF_PLAYERS_SCHEMA rows), each player's first record
    giving a value field by field."""
    if trf_players is None or not trf_players.height:
        return pl.DataFrame(schema=PLAYER_DATA_SCHEMA)
    data = _clean(trf_players)
    title = pl.col("title")
    data = data.with_columns(
        pl.coalesce("w_title", pl.when(title.is_in(WOMEN_TITLES)).then(title)).alias("w_title"),
    )
    return (
        data.group_by("player_id", maintain_order=True)
        .agg(pl.col(c).drop_nulls().first() for c in DATA_COLUMNS)
        .select(list(PLAYER_DATA_SCHEMA))
        .cast(PLAYER_DATA_SCHEMA)
    )


def _stacked(sources: list[pl.DataFrame]) -> pl.DataFrame:
    """Every source's rows, tagged with their precedence (`_rank`, 0 first)."""
    return pl.concat(
        [
            frame.cast(PLAYER_DATA_SCHEMA).with_columns(pl.lit(i, pl.Int8).alias("_rank"))
            for i, frame in enumerate(sources)
        ]
    )


def merged_data(sources: list[pl.DataFrame]) -> pl.DataFrame:
    """One row per player: each field from the first source (in precedence order) giving it."""
    stacked = _stacked(sources)
    return (
        stacked.sort("_rank", maintain_order=True)
        .group_by("player_id", maintain_order=True)
        .agg(pl.col(c).drop_nulls().first() for c in DATA_COLUMNS)
        .select(list(PLAYER_DATA_SCHEMA))
        .cast(PLAYER_DATA_SCHEMA)
    )


def conflicts(sources: list[pl.DataFrame], names: tuple[str, ...] = SOURCES) -> pl.DataFrame:
    """One row per player and field where a lower source gives a value other than the one kept:
    player_id, field, kept, kept_from, other, other_from."""
    stacked = _stacked(sources)
    long = (
        stacked.with_columns(pl.col("birth_year").cast(pl.String))
        .unpivot(index=["player_id", "_rank"], on=list(DATA_COLUMNS), variable_name="field")
        .drop_nulls("value")
        .sort("_rank", maintain_order=True)
    )
    kept = long.group_by("player_id", "field", maintain_order=True).first()
    joined = long.join(kept, on=["player_id", "field"], suffix="_kept").filter(
        (pl.col("_rank") > pl.col("_rank_kept")) & (pl.col("value") != pl.col("value_kept"))
    )
    label = pl.Series(list(names), dtype=pl.String)
    return joined.select(
        "player_id",
        "field",
        pl.col("value_kept").alias("kept"),
        pl.col("_rank_kept")
        .cast(pl.Int64)
        .map_batches(lambda s: label.gather(s))
        .alias("kept_from"),
        pl.col("value").alias("other"),
        pl.col("_rank").cast(pl.Int64).map_batches(lambda s: label.gather(s)).alias("other_from"),
    ).sort("player_id", "field")


def conflict_note(found: pl.DataFrame) -> tuple[str, ...]:
    """The run summary's note on the differences between sources (none: no note)."""
    if not found.height:
        return ()
    named = [
        f"{p} {f} {k} ({kf}) over {o} ({of})"
        for p, f, k, kf, o, of in found.head(CONFLICTS_NAMED).iter_rows()
    ]
    more = found.height - CONFLICTS_NAMED
    shown = ", ".join(named) + (f" and {more} more" if more > 0 else "")
    noun = "value differs" if found.height == 1 else "values differ"
    return (
        f"player data: {found.height} {noun} between sources; the registry's is kept, then the "
        f"latest starting list's, then the tournament file's ({shown})",
    )


def with_player_data(rows: pl.DataFrame, data: pl.DataFrame, *, fide: bool) -> pl.DataFrame:
    """A federation list's rows with the player data columns (replacing any), the flag FIDE
    prints on a FIDE list (`w` for a woman before the list's own `i`: `w`, `i`, `wi`) and the
    rank.

    Decision: the rank is competition ranking (equal ratings share a rank, the next rank is
    skipped: 1, 2, 2, 4) by rating, highest first; on a FIDE list inactive players (flag `i`)
    have no rank, as FIDE's top lists leave them out. UKD and club lists have no inactivity rule
    (RULES §4, §6) and rank everyone; their flag stays the engine's.
    """
    base = rows.drop([*DATA_COLUMNS, "rank"], strict=False)
    joined = base.join(_clean(data), on="player_id", how="left")
    if fide:
        own = pl.col("flag").cast(pl.String).fill_null("").str.replace_all("w", "")
        woman = pl.when(pl.col("sex") == "F").then(pl.lit("w")).otherwise(pl.lit(""))
        flag = pl.concat_str([woman, own])
        joined = joined.with_columns(pl.when(flag != "").then(flag).alias("flag"))
    active = (
        ~pl.col("flag").cast(pl.String).fill_null("").str.contains("i") if fide else pl.lit(True)
    )
    rating = pl.col("rating").cast(pl.Float64)
    rank = pl.when(active).then(rating).rank("min", descending=True)
    ranked = joined.with_columns(pl.when(active).then(rank).cast(pl.Int32).alias("rank"))
    return ranked
