"""Moderation (RULES §2): which players an annulment moved, and why, for the lists' diffs.

A list version names only what changed since the version before it: each publication records the
annulments it applied (`APPLIED_ANNULMENTS_SCHEMA`, kept per period in the lake), and the next one names the
annulments that are new since then, and those withdrawn since then, never the old ones again.
"""

from __future__ import annotations

import polars as pl

from rating_core.schemas import APPLIED_ANNULMENTS_SCHEMA, TableSchema

CAUSES_SCHEMA: TableSchema = {"player_id": pl.String, "cause": pl.String}


def annulled_games_until(decisions: pl.DataFrame, games: pl.DataFrame, period: str) -> pl.DataFrame:
    """Annulled games of periods up to `period`, with their decision (one row per game)."""
    if not decisions.height or not games.height:
        return pl.DataFrame(schema=APPLIED_ANNULMENTS_SCHEMA)
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


def annulment_changes(
    decisions: pl.DataFrame,
    games: pl.DataFrame,
    period: str,
    applied: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(new, withdrawn): annulments in force for `period` that the last publication had not
    applied, and those it applied that are no longer in force (both APPLIED_ANNULMENTS_SCHEMA rows)."""
    current = annulled_games_until(decisions, games, period)
    if applied is None or not applied.height:
        return current, pl.DataFrame(schema=APPLIED_ANNULMENTS_SCHEMA)
    applied = applied.select(pl.col(c).cast(t) for c, t in APPLIED_ANNULMENTS_SCHEMA.items())
    new = current.join(applied.select("game_id"), on="game_id", how="anti")
    withdrawn = applied.join(current.select("game_id"), on="game_id", how="anti").sort("game_id")
    return new, withdrawn


def _causes_per_player(annulled: pl.DataFrame, verb: str) -> pl.DataFrame:
    """`<label>: <verb> g1, g2` per player of the annulled games (one row per player, label)."""
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
            (pl.col("label") + pl.lit(f": {verb} ") + pl.col("game_id")).alias("cause"),
        )
    )


def annulment_causes(
    decisions: pl.DataFrame,
    games: pl.DataFrame,
    period: str,
    applied: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Per player: the decisions new (or withdrawn) since the `applied` publication that moved
    them (the diff's `cause`); without `applied`, every decision in force."""
    new, withdrawn = annulment_changes(decisions, games, period, applied)
    if not new.height and not withdrawn.height:
        return pl.DataFrame(schema=CAUSES_SCHEMA)
    return (
        pl.concat(
            [
                _causes_per_player(new, "annulled"),
                _causes_per_player(withdrawn, "withdrawn, rated again"),
            ]
        )
        .group_by("player_id")
        .agg(pl.col("cause").sort().str.join("; "))
        .sort("player_id")
    )


def annulment_reason(
    decisions: pl.DataFrame,
    games: pl.DataFrame,
    period: str,
    applied: pl.DataFrame | None = None,
) -> str:
    """The manifest reason of a list version of `period`: the annulments new (or withdrawn)
    since the `applied` publication; without `applied`, every annulment in force."""
    new, withdrawn = annulment_changes(decisions, games, period, applied)
    reason = "computed from the inbox"
    if new.height:
        reason += f"; moderation annulled games {', '.join(new.get_column('game_id'))}"
    if withdrawn.height:
        ids = ", ".join(withdrawn.get_column("game_id"))
        reason += f"; moderation decisions withdrawn, games rated again: {ids}"
    return reason
