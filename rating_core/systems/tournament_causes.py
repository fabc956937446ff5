"""The causes a federation list's diff names: the tournaments of a period that are new, changed
or gone since the list's last publication (issue 11 item 2: "late result: tournament T").

After publishing a period, the federation assets record who played in which tournament of it,
with a digest of each tournament's games (`applied/<system>-tournaments`). The next publication
compares the period's tournaments with that record: a player of a tournament that was not there
is moved by a late result, one of a tournament whose games differ by changed results, one of a
tournament no longer there by its withdrawal. A player moved only because an earlier period
changed keeps the version's reason as cause.
"""

from __future__ import annotations

import hashlib

import polars as pl

from rating_core.schemas import TableSchema

APPLIED_TOURNAMENTS_SCHEMA: TableSchema = {
    "tournament_id": pl.String,
    "rating_list": pl.String,
    "player_id": pl.String,
    "digest": pl.String,
}
"""One row per player per tournament of a period, with the digest of the tournament's games."""

CAUSES_SCHEMA: TableSchema = {"player_id": pl.String, "cause": pl.String}

DIGESTED_COLUMNS = (
    "game_id",
    "round",
    "played_at",
    "white_id",
    "black_id",
    "result",
    "rating_list",
    "rated",
    "status",
)
"""The game columns whose change makes a tournament's results changed."""


def tournament_players(games: pl.DataFrame) -> pl.DataFrame:
    """Who played in which tournament of `games` (one period's), with each tournament's rating
    lists and the digest of its games (`APPLIED_TOURNAMENTS_SCHEMA`)."""
    games = games.filter(pl.col("tournament_id").is_not_null())
    if not games.height:
        return pl.DataFrame(schema=APPLIED_TOURNAMENTS_SCHEMA)
    fields = [pl.col(c).cast(pl.String).fill_null("") for c in DIGESTED_COLUMNS]
    per_tournament = (
        games.with_columns(pl.concat_str(fields, separator="\x1f").alias("_game"))
        .group_by("tournament_id")
        .agg(
            pl.col("_game").sort().str.join("\x1e").alias("_games"),
            pl.col("rating_list").cast(pl.String).drop_nulls().unique().sort().str.join("/"),
        )
    )
    digests = [  # one hash per tournament, not per game
        hashlib.sha256(text.encode("utf-8")).hexdigest()
        for text in per_tournament.get_column("_games")
    ]
    per_tournament = per_tournament.drop("_games").with_columns(
        pl.Series("digest", digests, dtype=pl.String)
    )
    players = pl.concat(
        [
            games.select("tournament_id", pl.col("white_id").alias("player_id")),
            games.select("tournament_id", pl.col("black_id").alias("player_id")),
        ]
    ).drop_nulls()
    return (
        players.unique()
        .join(per_tournament, on="tournament_id")
        .select(list(APPLIED_TOURNAMENTS_SCHEMA))
        .sort("tournament_id", "player_id")
    )


def tournament_causes(current: pl.DataFrame, applied: pl.DataFrame | None) -> pl.DataFrame | None:
    """Per player, the tournaments of the period new, changed or gone since the `applied`
    record (`late result: tournament T (standard)`, `changed results: ...`, `withdrawn: ...`,
    joined with `; `); None without a record (then every diff row gives the version's reason)."""
    if applied is None:
        return None
    now = current.select("tournament_id", "rating_list", "digest").unique()
    before = applied.select("tournament_id", "rating_list", "digest").unique()
    new = now.join(before, on="tournament_id", how="anti")
    changed = now.join(before.select("tournament_id", old="digest"), on="tournament_id").filter(
        pl.col("digest") != pl.col("old")
    )
    gone = before.join(now, on="tournament_id", how="anti")

    def label(frame: pl.DataFrame, players: pl.DataFrame, what: str) -> pl.DataFrame:
        text = pl.format("{}: tournament {} ({})", pl.lit(what), "tournament_id", "rating_list")
        return (
            frame.select("tournament_id", text.alias("cause"))
            .join(players.select("tournament_id", "player_id"), on="tournament_id")
            .select("player_id", "cause")
        )

    causes = pl.concat(
        [
            label(new, current, "late result"),
            label(changed, current, "changed results"),
            label(gone, applied, "withdrawn"),
        ]
    )
    if not causes.height:
        return pl.DataFrame(schema=CAUSES_SCHEMA)
    return (
        causes.unique()
        .group_by("player_id")
        .agg(pl.col("cause").sort().str.join("; "))
        .sort("player_id")
    )
