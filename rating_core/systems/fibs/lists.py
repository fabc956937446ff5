"""The `fibs` list (RULES §5): every person with a ranked match so far, ranked, with the
period's matches and change and whether the leaderboard may show them.
"""

from __future__ import annotations

import polars as pl

from rating_core.rounding import round_half_away_expr
from rating_core.schemas import PLAYERS_SCHEMA, empty
from rating_core.systems.fibs.rules import (
    FIBS_LIST_SCHEMA,
    FIBS_RULES,
    FIBS_STATE_SCHEMA,
    FibsRules,
)


def fibs_list(
    state: pl.DataFrame,
    period: str,
    players: pl.DataFrame | None = None,
    previous_state: pl.DataFrame | None = None,
    rules: FibsRules = FIBS_RULES,
) -> pl.DataFrame:
    """The `fibs` list of `period`: every person with a ranked match so far.

    `players` supplies email_verified and display_name for leaderboard eligibility;
    `previous_state` (the state before the period) gives the period's matches and change.
    """
    players = players if players is not None else empty(PLAYERS_SCHEMA)
    reg = players.select(
        pl.col("player_id").cast(pl.String),
        pl.col("email_verified").cast(pl.Boolean).fill_null(False).alias("_verified"),
        pl.col("display_name").cast(pl.String).alias("_name"),
    ).unique("player_id", keep="first", maintain_order=True)
    prev = (previous_state if previous_state is not None else empty(FIBS_STATE_SCHEMA)).select(
        "player_id", pl.col("rating").alias("_prev_rating"), pl.col("matches").alias("_prev")
    )
    named = pl.col("_name").str.strip_chars().fill_null("").str.len_chars() > 0
    return (
        state.filter(pl.col("matches") >= 1)
        .join(reg, on="player_id", how="left")
        .join(prev, on="player_id", how="left")
        .select(
            pl.lit("fibs").alias("list"),
            pl.lit(period, dtype=pl.String).alias("period"),
            "player_id",
            round_half_away_expr(pl.col("rating"), 1).alias("rating"),
            pl.col("rating").alias("rating_exact"),
            "experience",
            (pl.col("experience") < rules.provisional_below).alias("provisional"),
            (
                pl.col("_verified").fill_null(False)
                & named
                & (pl.col("experience") >= rules.leaderboard_min_experience)
            ).alias("leaderboard_eligible"),
            (pl.col("matches") - pl.col("_prev").fill_null(0)).alias("games"),
            pl.col("matches").alias("total_matches"),
            (pl.col("rating") - pl.col("_prev_rating").fill_null(rules.start)).alias("change"),
        )
        .sort(["rating_exact", "player_id"], descending=[True, False])
        .cast(FIBS_LIST_SCHEMA)
    )
