"""Moderation (RULES §2): which players an annulment moved, and why, for the lists' diffs."""

from __future__ import annotations

import polars as pl

CAUSES_SCHEMA: dict[str, pl.DataType] = {"player_id": pl.String, "cause": pl.String}


def annulled_games_until(decisions: pl.DataFrame, games: pl.DataFrame, period: str) -> pl.DataFrame:
    """Annulled games of periods up to `period`, with their decision (one row per game)."""
    if not decisions.height or not games.height:
        return pl.DataFrame(
            schema={
                "game_id": pl.String,
                "white_id": pl.String,
                "black_id": pl.String,
                "label": pl.String,
            }
        )
    label = (
        pl.lit("moderation decision of ")
        + pl.col("decided_at").dt.strftime("%Y-%m-%d")
        + pl.lit(" (")
        + pl.col("reason").fill_null("no reason given")
        + pl.lit(", ")
        + pl.col("source_file")
        + pl.lit(" line ")
        + pl.col("source_line").cast(pl.String)
        + pl.lit(")")
    )
    return (
        decisions.select("game_id", label.alias("label"))
        .join(
            games.filter(pl.col("period") <= period).select("game_id", "white_id", "black_id"),
            on="game_id",
        )
        .sort("game_id")
    )


def annulment_causes(decisions: pl.DataFrame, games: pl.DataFrame, period: str) -> pl.DataFrame:
    """Per player: the decisions and annulled games that moved them (the diff's `cause`)."""
    annulled = annulled_games_until(decisions, games, period)
    if not annulled.height:
        return pl.DataFrame(schema=CAUSES_SCHEMA)
    per_side = pl.concat(
        [
            annulled.select(pl.col("white_id").alias("player_id"), "game_id", "label"),
            annulled.select(pl.col("black_id").alias("player_id"), "game_id", "label"),
        ]
    )
    return (
        per_side.group_by("player_id", "label")
        .agg(pl.col("game_id").sort().str.join(", "))
        .select(
            "player_id",
            (pl.col("label") + pl.lit(": annulled ") + pl.col("game_id")).alias("cause"),
        )
        .group_by("player_id")
        .agg(pl.col("cause").sort().str.join("; "))
        .sort("player_id")
    )


def annulment_reason(decisions: pl.DataFrame, games: pl.DataFrame, period: str) -> str:
    """The manifest reason of a list version of `period`."""
    annulled = annulled_games_until(decisions, games, period)
    if not annulled.height:
        return "computed from the inbox"
    ids = ", ".join(annulled.get_column("game_id").to_list())
    return f"computed from the inbox; moderation annulled games {ids}"
