"""UKD, the Turkish national rating, for one period (RULES §4).

- `ukd_state_from_starting_list(frame)`: a STARTING_LIST_SCHEMA frame -> UKD state.
- `ukd_period(games, state, period, rating_list, pool=None)` -> `UkdPeriodResult` (state,
  list_rows, game_explanations, tournament_explanations, player_explanations, newcomers, pool).

Every tournament of a period is computed from the period-start UKD (`ukd_tournament_rows`); the
period's new UKD is the start plus the sum of the tournaments' changes (exact integer
hundredths), rounded half away from zero once, never below 1000.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from rating_core.rounding import round_half_away_expr, round_hundredths_half_away_expr
from rating_core.schemas import RATING_LISTS
from rating_core.systems.fide.steps import select_rated_games, with_ratings
from rating_core.systems.ukd.newcomers import newcomer_pool
from rating_core.systems.ukd.rules import (
    UKD_GAME_EXPLANATION_SCHEMA,
    UKD_LIST_SCHEMA,
    UKD_PLAYER_EXPLANATION_SCHEMA,
    UKD_RULES,
    UKD_STATE_SCHEMA,
    UKD_TOURNAMENT_EXPLANATION_SCHEMA,
    UkdRules,
)
from rating_core.systems.ukd.steps import ukd_k_expr, ukd_tournament_rows


@dataclass(frozen=True)
class UkdPeriodResult:
    """Everything one UKD period produces; `state` and `pool` feed the next period."""

    period: str
    rating_list: str
    state: pl.DataFrame  # UKD_STATE_SCHEMA
    list_rows: pl.DataFrame  # UKD_LIST_SCHEMA
    game_explanations: pl.DataFrame  # UKD_GAME_EXPLANATION_SCHEMA
    tournament_explanations: pl.DataFrame  # UKD_TOURNAMENT_EXPLANATION_SCHEMA
    player_explanations: pl.DataFrame  # UKD_PLAYER_EXPLANATION_SCHEMA
    newcomers: pl.DataFrame  # UKD_NEWCOMER_SCHEMA
    pool: pl.DataFrame  # UKD_POOL_SCHEMA


def ukd_state_from_starting_list(frame: pl.DataFrame) -> pl.DataFrame:
    """A STARTING_LIST_SCHEMA frame (one UKD list) as UKD_STATE_SCHEMA."""
    return frame.select(pl.col("player_id").cast(pl.String), pl.col("rating").cast(pl.Int32)).sort(
        "player_id"
    )


def _tournament_explanation(t: pl.DataFrame) -> pl.DataFrame:
    """Per-tournament rows in UKD_TOURNAMENT_EXPLANATION_SCHEMA (two-decimal display values)."""
    return (
        t.select(
            "player_id",
            "event_id",
            "rating_before",
            "k",
            "m",
            pl.when(pl.col("m") > 0)
            .then(round_half_away_expr(pl.col("sum_capped").cast(pl.Float64) / pl.col("m"), 2))
            .alias("average_capped"),
            "d",
            (pl.col("pd_h").cast(pl.Float64) / 100).alias("pd"),
            (pl.col("we_h").cast(pl.Float64) / 100).alias("we"),
            (pl.col("w2").cast(pl.Float64) / 2).alias("w"),
            "unrated_wins",
            "unrated_losses",
            (pl.col("delta_h").cast(pl.Float64) / 100).alias("delta_d"),
        )
        .cast(UKD_TOURNAMENT_EXPLANATION_SCHEMA)
        .sort("player_id", "event_id")
    )


def ukd_period(
    games: pl.DataFrame | pl.LazyFrame,
    state: pl.DataFrame,
    period: str,
    rating_list: str,
    pool: pl.DataFrame | None = None,
    rules: UkdRules = UKD_RULES,
) -> UkdPeriodResult:
    """Rate one period of one UKD list (RULES §4) from the period-start `state`, vectorized.

    `games` has GAMES_SCHEMA columns (the engine filters `period` and `rating_list`, finished
    and rated games only); `pool` is the new-player pool returned by the previous period.
    """
    if rating_list not in RATING_LISTS:
        raise ValueError(f"rating_list must be one of {RATING_LISTS}, got {rating_list!r}")
    g = select_rated_games(games, period, rating_list)
    start = state.select([pl.col(c).cast(t) for c, t in UKD_STATE_SCHEMA.items()])
    long = with_ratings(g, start.lazy())
    rated = long.filter(pl.col("own_rating").is_not_null())
    cap = rules.opponent_cap
    game_expl_lf = rated.select(
        "game_id",
        "event_id",
        "player_id",
        "opponent_id",
        "own_rating",
        "opponent_rating",
        pl.col("opponent_rating")
        .clip(pl.col("own_rating") - cap, pl.col("own_rating") + cap)
        .alias("opponent_capped"),
        "score",
    )
    tour_lf = ukd_tournament_rows(rated, rules)
    new_rows_lf = long.filter(
        pl.col("own_rating").is_null() & pl.col("opponent_rating").is_not_null()
    ).select(
        "player_id",
        "game_id",
        pl.lit(period).alias("period"),
        "opponent_id",
        pl.col("opponent_rating").cast(pl.Int32),
        "score",
    )
    game_expl, tour, new_rows = pl.collect_all(
        [game_expl_lf.sort("game_id", "player_id"), tour_lf, new_rows_lf]
    )

    per = (
        start.join(
            tour.group_by("player_id").agg(
                pl.len().cast(pl.Int32).alias("tournaments"),
                pl.col("delta_h").sum().alias("sum_delta_h"),
            ),
            on="player_id",
            how="left",
        )
        .join(
            game_expl.group_by("player_id").agg(pl.len().cast(pl.Int32).alias("games")),
            on="player_id",
            how="left",
        )
        .with_columns(
            pl.col("tournaments").fill_null(0),
            pl.col("games").fill_null(0),
            pl.col("sum_delta_h").fill_null(0),
        )
        .with_columns(
            # the seed rounds the new rating (not the change): 1380 - 24.5 = 1355.5 -> 1356
            round_hundredths_half_away_expr(
                pl.col("rating").cast(pl.Int64) * 100 + pl.col("sum_delta_h")
            )
            .cast(pl.Int32)
            .alias("rating_unfloored")
        )
        .with_columns(
            pl.max_horizontal("rating_unfloored", pl.lit(rules.floor))
            .cast(pl.Int32)
            .alias("rating_after")
        )
    )

    newcomers, newcomer_rows, pool_out = newcomer_pool(pool, new_rows, start, rules)

    new_state = (
        pl.concat(
            [
                per.select("player_id", pl.col("rating_after").alias("rating")),
                newcomer_rows.select("player_id", pl.col("ru").alias("rating")),
            ]
        )
        .cast(UKD_STATE_SCHEMA)
        .sort("player_id")
    )
    k_start = ukd_k_expr(pl.col("rating"), rules)
    list_rows = pl.concat(
        [
            per.select(
                "player_id",
                pl.col("rating_after").alias("rating"),
                (pl.col("rating") + pl.col("sum_delta_h").cast(pl.Float64) / 100).alias(
                    "rating_exact"
                ),
                "games",
                k_start.alias("k"),
                (pl.col("rating_after") - pl.col("rating")).alias("change"),
                (pl.col("sum_delta_h").cast(pl.Float64) / 100).alias("change_exact"),
                pl.lit(None, dtype=pl.String).alias("flag"),
                pl.lit(None, dtype=pl.Boolean).alias("provisional"),
                pl.lit(False).alias("newcomer"),
            ).cast(UKD_LIST_SCHEMA),
            newcomer_rows.select(
                "player_id",
                pl.col("ru").alias("rating"),
                pl.col("ru").cast(pl.Float64).alias("rating_exact"),
                "games",
                pl.lit(None, dtype=pl.Int32).alias("k"),
                pl.lit(None, dtype=pl.Int32).alias("change"),
                pl.lit(None, dtype=pl.Float64).alias("change_exact"),
                pl.lit(None, dtype=pl.String).alias("flag"),
                pl.lit(None, dtype=pl.Boolean).alias("provisional"),
                pl.lit(True).alias("newcomer"),
            ).cast(UKD_LIST_SCHEMA),
        ]
    ).sort("player_id")
    player_expl = pl.concat(
        [
            per.select(
                "player_id",
                pl.col("rating").alias("rating_before"),
                "tournaments",
                "games",
                (pl.col("sum_delta_h").cast(pl.Float64) / 100).alias("sum_delta_d"),
                "rating_unfloored",
                "rating_after",
                (pl.col("rating_unfloored") < rules.floor).alias("floored"),
                pl.lit(False).alias("newcomer"),
            ).cast(UKD_PLAYER_EXPLANATION_SCHEMA),
            newcomer_rows.select(
                "player_id",
                pl.lit(None, dtype=pl.Int32).alias("rating_before"),
                pl.lit(0, dtype=pl.Int32).alias("tournaments"),
                "games",
                pl.lit(None, dtype=pl.Float64).alias("sum_delta_d"),
                pl.col("ru").alias("rating_unfloored"),
                pl.col("ru").alias("rating_after"),
                pl.lit(False).alias("floored"),
                pl.lit(True).alias("newcomer"),
            ).cast(UKD_PLAYER_EXPLANATION_SCHEMA),
        ]
    ).sort("player_id")
    return UkdPeriodResult(
        period=period,
        rating_list=rating_list,
        state=new_state,
        list_rows=list_rows,
        game_explanations=game_expl.cast(UKD_GAME_EXPLANATION_SCHEMA),
        tournament_explanations=_tournament_explanation(tour),
        player_explanations=player_expl,
        newcomers=newcomers,
        pool=pool_out,
    )
