"""FIDE newcomers (RULES §3, §8.2): the rolling pool of unrated players' games against rated
opponents, and their first rating once they have enough pooled games.

`newcomer_pool(...)` -> (newcomers evaluated, published, pool out), run by `fide_period` on a
worker thread beside steps 1-4; `event_ends(g)` gives the event end dates the pool keeps.
"""

from __future__ import annotations

from concurrent.futures import Future

import numpy as np
import polars as pl

from rating_core.periods import period_index, period_index_expr
from rating_core.rounding import div_round_half_away_expr, round_half_away_expr
from rating_core.schemas import UTC_TIME, empty
from rating_core.systems.fide.rules import FIDE_NEWCOMER_SCHEMA, FIDE_POOL_SCHEMA, FideRules
from rating_core.systems.fide.steps import CodedSides, opponent_index, score_at
from rating_core.systems.fide.tables import dp_expr


def _newcomer_rows(g: pl.DataFrame, s: CodedSides) -> pl.DataFrame:
    """Sides of players absent from the period-start state against rated opponents, for the
    pool (game_id, event_id, player_id, opponent_id, opponent_rating, score). Players listed
    with a null rating are left out: they are in the state, so the pool would drop them.

    White sides first, then black sides, each in game order (the order of `np.flatnonzero`
    over the side-major arrays); filtered rather than gathered from the chunked columns.
    """
    n = s.n_games
    opp_ok = np.concatenate((s.own_ok[n:], s.own_ok[:n]))
    pooled = (s.own_code < 0) & opp_ok
    idx = np.flatnonzero(pooled)
    opp_idx = opponent_index(idx, n)
    sides = [
        g.filter(pl.Series(pooled[side * n : (side + 1) * n])).select(
            "game_id",
            "event_id",
            pl.col(own).alias("player_id"),
            pl.col(opponent).alias("opponent_id"),
        )
        for side, (own, opponent) in enumerate((("white_id", "black_id"), ("black_id", "white_id")))
    ]
    return pl.concat(sides).with_columns(
        pl.Series("opponent_rating", s.own_rating[opp_idx], dtype=pl.Int64),
        pl.Series("score", score_at(s, idx), dtype=pl.Float64),
    )


def event_ends(g: pl.DataFrame) -> pl.LazyFrame:
    """event_id, event_end: the last game (played_at) in `g` of each event.

    One hash group-by over every game is cheaper than first singling out the events of the
    pooled games (that takes a join of every game's event id as well).
    """
    return g.lazy().group_by("event_id").agg(pl.col("played_at").max().alias("event_end"))


def newcomer_pool(
    g: pl.DataFrame,
    sides: CodedSides,
    start: pl.DataFrame,
    pool: pl.DataFrame | None,
    ends_job: Future[pl.DataFrame],
    period: str,
    rules: FideRules,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The newcomer pool (§8.2) after the period: (newcomers evaluated, published, pool out).

    This period's games of players absent from `start` against rated opponents join the pool
    carried from the previous period, the rolling window is applied and every pooled player
    is evaluated (`_evaluate_newcomers`); `ends_job` yields `event_ends(g)` collected.
    """
    p_idx = period_index(period)
    new_df = _newcomer_rows(g, sides)
    pool_in = pool if pool is not None else empty(FIDE_POOL_SCHEMA)
    window_start = p_idx - rules.newcomer_window_periods + 1
    in_window = period_index_expr(pl.col("period")).is_between(window_start, p_idx)
    # `_new` marks this period's games (their count is the published newcomer's `games`).
    parts = [
        pool_in.lazy()
        .select(list(FIDE_POOL_SCHEMA))
        .cast(FIDE_POOL_SCHEMA)
        .filter(in_window)
        .with_columns(pl.lit(False).alias("_new"))
    ]
    if pool_in.height:  # players rated since they were pooled leave the pool
        parts[0] = parts[0].join(start.lazy().select("player_id"), on="player_id", how="anti")
    if new_df.height and window_start <= p_idx:
        # This period's pooled sides: their players are not in `start` (see `_newcomer_rows`).
        parts.append(
            new_df.lazy()
            .join(ends_job.result().lazy(), on="event_id", how="left")
            .select(
                pl.col("player_id"),
                pl.col("game_id"),
                pl.col("event_id"),
                pl.col("event_end").cast(UTC_TIME),
                pl.lit(period).alias("period"),
                pl.col("opponent_id"),
                pl.col("opponent_rating").cast(pl.Int32),
                pl.col("score"),
                pl.lit(True).alias("_new"),
            )
        )
    pool_all = pl.concat(parts).collect()
    evaluated = _evaluate_newcomers(pool_all, rules)
    newcomers = evaluated.select(list(FIDE_NEWCOMER_SCHEMA))
    published = evaluated.filter(pl.col("published"))
    pool_out = (
        pool_all.drop("_new")
        .join(published.select("player_id"), on="player_id", how="anti")
        .sort("player_id", "period", "game_id")
    )
    return newcomers, published, pool_out


def _evaluate_newcomers(pool: pl.DataFrame, rules: FideRules) -> pl.DataFrame:
    """Initial ratings (§8.2) for every pooled player; zero-score first events disregarded.

    The first event is the earliest event (end date, then id) among the player's pooled games.
    The formula is the era's (RULES §3.3): from 2024-03 with two hypothetical 1800 draws and at
    most 2200; before, Ra + 20 per half point above 50 % (else Ra + dp), `dp` holding what was
    added to Ra. `pool`: FIDE_POOL_SCHEMA plus `_new` (this period's game). Returns FIDE_NEWCOMER_SCHEMA
    plus `_games_new` (the player's games of this period), sorted by player_id.
    One group-by per event and one per player: the disregarded event's totals are subtracted
    from the player's, instead of marking the pooled games and aggregating them again.
    """
    if pool.height == 0:
        return empty({**FIDE_NEWCOMER_SCHEMA, "_games_new": pl.Int32})
    events = (
        pool.lazy()
        .group_by("player_id", "event_id")
        .agg(
            pl.col("event_end").max(),
            pl.col("score").sum().alias("event_points"),
            pl.len().alias("e_n"),
            pl.col("opponent_rating").cast(pl.Int64).sum().alias("e_opp"),
            (pl.col("score") * 2).round(0).cast(pl.Int64).sum().alias("e_points2"),
            pl.col("_new").sum().alias("e_new"),
        )
        .sort("player_id", "event_end", "event_id")
    )
    # A null event id never matches a pooled game, so it is never disregarded.
    drop = (pl.col("event_points").first() == 0) & pl.col("event_id").first().is_not_null()
    agg = events.group_by("player_id", maintain_order=True).agg(
        pl.when(drop).then(pl.col("event_id").first()).alias("first_event_disregarded"),
        *[
            (pl.col(c).sum() - pl.when(drop).then(pl.col(c).first()).otherwise(0)).alias(out)
            for c, out in (
                ("e_n", "n"),
                ("event_points", "points"),
                ("e_opp", "opponents_sum"),
                ("e_points2", "points2"),
            )
        ],
        pl.col("e_new").sum().alias("_games_new"),
    )
    hyp_n = rules.newcomer_hypothetical_games
    hyp_sum = rules.newcomer_hypothetical_rating * hyp_n
    den = pl.col("n").cast(pl.Int64) + hyp_n
    # p = (points + hyp_n/2) / (n + hyp_n): the hypothetical games are draws (without them,
    # a player whose every pooled game was disregarded has nothing to divide: no rating).
    p_h = pl.when(den > 0).then(
        div_round_half_away_expr(100 * (pl.col("points2") + hyp_n), 2 * den)
    )
    # dp: table 8.1.1, or before 2024-03 above 50 % the bonus per half point above 50 % (the
    # hypothetical draws add as many half points as half of the games, so they change nothing).
    offset = dp_expr(pl.col("p_h"))
    bonus = rules.newcomer_bonus_per_half_point
    if bonus is not None:
        above_half = pl.col("points2") - pl.col("n").cast(pl.Int64)
        offset = pl.when(above_half > 0).then(above_half * bonus).otherwise(offset)
    ru: pl.Expr = pl.when(den > 0).then(
        div_round_half_away_expr(pl.col("opponents_sum") + hyp_sum + pl.col("dp") * den, den)
    )
    if rules.newcomer_max is not None:
        ru = ru.clip(upper_bound=rules.newcomer_max)
    out = (
        agg.with_columns(p_h.alias("p_h"))
        .with_columns(offset.cast(pl.Int64).alias("dp"))
        .with_columns(ru.alias("ru"))
        .with_columns(
            ((pl.col("n") >= rules.newcomer_min_games) & (pl.col("ru") >= rules.floor))
            .fill_null(False)
            .alias("published"),
            pl.when(den > 0)
            .then(
                round_half_away_expr((pl.col("opponents_sum") + hyp_sum).cast(pl.Float64) / den, 2)
            )
            .alias("ra"),
            (pl.col("p_h").cast(pl.Float64) / 100).alias("p"),
        )
    )
    return (
        out.select(*FIDE_NEWCOMER_SCHEMA, "_games_new")
        .cast({**FIDE_NEWCOMER_SCHEMA, "_games_new": pl.Int32})
        .sort("player_id")
        .collect()
    )
