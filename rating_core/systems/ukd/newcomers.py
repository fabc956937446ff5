"""UKD newcomers (RULES §4): the pool of games of players without UKD against opponents with one,
and their first UKD (Ra + dp(p)) once they have enough games, published only above 1000.
"""

from __future__ import annotations

import polars as pl

from rating_core.rounding import div_round_half_away_expr, round_half_away_expr
from rating_core.systems.fide.tables import dp_expr
from rating_core.systems.ukd.rules import UKD_NEWCOMER_SCHEMA, UKD_POOL_SCHEMA, UkdRules


def newcomer_pool(
    pool: pl.DataFrame | None, new_rows: pl.DataFrame, start: pl.DataFrame, rules: UkdRules
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The new-player pool after a period: (newcomers evaluated, published rows, pool out).

    `new_rows` (UKD_POOL_SCHEMA columns) are this period's games of players without UKD against
    opponents with one; they join the pool carried from the previous period, players given a
    UKD since leave it, and every pooled player is evaluated. The published rows carry `games`,
    the newcomer's games of this period.
    """
    pool_in = pool if pool is not None else pl.DataFrame(schema=UKD_POOL_SCHEMA)
    pool_all = pl.concat(
        [
            pool_in.select(list(UKD_POOL_SCHEMA)).cast(UKD_POOL_SCHEMA),
            new_rows.cast(UKD_POOL_SCHEMA),
        ]
    ).join(start.select("player_id"), on="player_id", how="anti")
    newcomers = _evaluate_newcomers(pool_all, rules)
    published = newcomers.filter(pl.col("published"))
    pool_out = pool_all.join(published.select("player_id"), on="player_id", how="anti").sort(
        "player_id", "period", "game_id"
    )
    new_games = new_rows.group_by("player_id").agg(pl.len().cast(pl.Int32).alias("games"))
    newcomer_rows = published.join(new_games, on="player_id", how="left").with_columns(
        pl.col("games").fill_null(0)
    )
    return newcomers, newcomer_rows, pool_out


def _evaluate_newcomers(pool: pl.DataFrame, rules: UkdRules) -> pl.DataFrame:
    """First UKD for pooled players: Ra + dp(p), rounded, published if above 1000 (RULES §4)."""
    if pool.height == 0:
        return pl.DataFrame(schema=UKD_NEWCOMER_SCHEMA)
    agg = pool.group_by("player_id").agg(
        pl.len().cast(pl.Int32).alias("n"),
        pl.col("score").sum().alias("points"),
        pl.col("opponent_rating").cast(pl.Int64).sum().alias("opponents_sum"),
        (pl.col("score") * 2).round(0).cast(pl.Int64).sum().alias("points2"),
    )
    n = pl.col("n").cast(pl.Int64)
    return (
        agg.with_columns(div_round_half_away_expr(100 * pl.col("points2"), 2 * n).alias("p_h"))
        .with_columns(dp_expr(pl.col("p_h")).alias("dp"))
        .with_columns(
            div_round_half_away_expr(pl.col("opponents_sum") + pl.col("dp") * n, n).alias("ru"),
            round_half_away_expr(pl.col("opponents_sum").cast(pl.Float64) / n, 2).alias("ra"),
            (pl.col("p_h").cast(pl.Float64) / 100).alias("p"),
        )
        .with_columns(
            (
                (pl.col("n") >= rules.newcomer_min_games)
                & (pl.col("ru") > rules.newcomer_published_above)
            ).alias("published")
        )
        .select(list(UKD_NEWCOMER_SCHEMA))
        .cast(UKD_NEWCOMER_SCHEMA)
        .sort("player_id")
    )
