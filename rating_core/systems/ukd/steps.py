"""UKD steps (RULES §4): k by rating band, and the per-tournament change from long rows (capped
opponents, D, PD, We, W, the +-0.1k for games against opponents without UKD), shared by the
period engine and the calculator. The conversion tables are FIDE's (`fide.tables`).
"""

from __future__ import annotations

import polars as pl

from rating_core.rounding import div_round_half_away_expr
from rating_core.systems.fide.tables import pd_hundredths_expr
from rating_core.systems.ukd.rules import UKD_RULES, UkdRules


def ukd_k_expr(rating: pl.Expr, rules: UkdRules = UKD_RULES) -> pl.Expr:
    """k by the player's UKD band (30 up to 1299 ... 10 from 2400)."""
    # The bands run highest first: the first band reached is the first non-null of the row.
    bands = [pl.when(rating >= low).then(pl.lit(k)) for low, k in rules.k_bands]
    return pl.coalesce(*bands, pl.lit(rules.k_lowest)).cast(pl.Int32)


def ukd_tournament_rows(rows: pl.LazyFrame, rules: UkdRules = UKD_RULES) -> pl.LazyFrame:
    """Steps 1-4 per player per tournament from long rows (one per player per game).

    `rows` needs player_id, event_id, own_rating (not null), opponent_rating (null = no UKD)
    and score; the result has one row per (player_id, event_id) with delta_h, the tournament's
    change in exact integer hundredths, and every intermediate value.
    """
    cap = rules.opponent_cap
    own = pl.col("own_rating").cast(pl.Int64)
    has = pl.col("opponent_rating").is_not_null()
    capped = pl.col("opponent_rating").cast(pl.Int64).clip(own - cap, own + cap)
    tenth = rules.unrated_win_tenths
    return (
        rows.with_columns(capped.alias("opponent_capped"))
        .group_by("player_id", "event_id")
        .agg(
            pl.col("own_rating").first().cast(pl.Int32).alias("rating_before"),
            has.sum().cast(pl.Int32).alias("m"),
            pl.col("opponent_capped").sum().cast(pl.Int64).alias("sum_capped"),
            (pl.col("score") * 2).round(0).cast(pl.Int64).filter(has).sum().alias("w2"),
            ((pl.col("score") == 1.0) & ~has).sum().cast(pl.Int32).alias("unrated_wins"),
            ((pl.col("score") == 0.0) & ~has).sum().cast(pl.Int32).alias("unrated_losses"),
        )
        .with_columns(
            ukd_k_expr(pl.col("rating_before"), rules).alias("k"),
            pl.when(pl.col("m") > 0)
            .then(
                div_round_half_away_expr(
                    pl.col("sum_capped") - pl.col("m").cast(pl.Int64) * pl.col("rating_before"),
                    pl.col("m"),
                )
            )
            .otherwise(None)
            .cast(pl.Int32)
            .alias("d"),
        )
        .with_columns(
            pd_hundredths_expr(pl.col("d")).alias("pd_h"),
        )
        .with_columns(
            (pl.col("pd_h") * pl.col("m")).fill_null(0).alias("we_h"),
        )
        .with_columns(
            (
                pl.col("k").cast(pl.Int64) * (50 * pl.col("w2") - pl.col("we_h"))
                + pl.col("k").cast(pl.Int64)
                * 10
                * tenth
                * (pl.col("unrated_wins") - pl.col("unrated_losses")).cast(pl.Int64)
            ).alias("delta_h")
        )
    )
