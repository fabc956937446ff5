"""UKD, the Turkish national rating, for one period (RULES §4) and the UKD calculator (RULES §7).

Public API (pure Polars, no Dagster):

- `UKD_RULES` (`UkdRules`): every UKD constant in one frozen object.
- `UKD_STATE_SCHEMA` (player_id, rating) and `UKD_POOL_SCHEMA` (new players' pooled games).
- `ukd_state_from_starting_list(frame)`: a STARTING_LIST_SCHEMA frame -> UKD state.
- `ukd_period(games, state, period, rating_list, pool=None)` -> `UkdPeriodResult` (state,
  list_rows, game_explanations, tournament_explanations, player_explanations, newcomers, pool).
- `ukd_tournament_rows(rows, rules)`: the per-tournament computation on long rows, shared by
  the engine and `ukd_calculator(rating, games)`.

Every tournament of a period is computed from the period-start UKD; the period's new UKD is the
start plus the sum of the tournaments' changes (exact integer hundredths), rounded half away
from zero once, never below 1000. The conversion tables are those of `fide_tables`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import polars as pl

from rating_core.rounding import (
    div_round_half_away_expr,
    round_half_away,
    round_half_away_expr,
    round_hundredths_half_away_expr,
)
from rating_core.schemas import RATING_LISTS
from rating_core.systems.fide.steps import select_rated_games, two_sided
from rating_core.systems.fide.tables import dp_expr, pd_hundredths_expr


@dataclass(frozen=True)
class UkdRules:
    """Every number of RULES §4 (TK-PRS-05 as the seed describes it), in one place."""

    opponent_cap: int = 350  # an opponent counts at most this far from the player
    # k bands: (lowest UKD of the band, k), highest band first; the first band reached wins.
    k_bands: tuple[tuple[int, int], ...] = ((2400, 10), (2000, 15), (1600, 20), (1300, 25))
    k_lowest: int = 30  # up to 1299
    unrated_win_tenths: int = 1  # +0.1 k per win against an opponent without UKD
    floor: int = 1000
    newcomer_min_games: int = 5
    newcomer_published_above: int = 1000  # a first UKD is published only if above this


UKD_RULES = UkdRules()

UKD_STATE_SCHEMA: dict[str, pl.DataType] = {"player_id": pl.String, "rating": pl.Int32}

UKD_POOL_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,  # the player without UKD
    "game_id": pl.String,
    "period": pl.String,
    "opponent_id": pl.String,
    "opponent_rating": pl.Int32,  # opponent's UKD at the start of `period`
    "score": pl.Float64,
}

UKD_LIST_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "rating": pl.Int32,
    "rating_exact": pl.Float64,  # start + sum of the tournaments' unrounded changes
    "games": pl.Int32,  # over-the-board games in the period on this list
    "k": pl.Int32,
    "change": pl.Int32,
    "change_exact": pl.Float64,
    "flag": pl.String,  # always null for UKD
    "provisional": pl.Boolean,  # always null for UKD
    "newcomer": pl.Boolean,
}

UKD_GAME_EXPLANATION_SCHEMA: dict[str, pl.DataType] = {
    "game_id": pl.String,
    "event_id": pl.String,
    "player_id": pl.String,
    "opponent_id": pl.String,
    "own_rating": pl.Int32,
    "opponent_rating": pl.Int32,  # null: opponent without UKD
    "opponent_capped": pl.Int32,  # what the opponent counts as (null: without UKD)
    "score": pl.Float64,
}

UKD_TOURNAMENT_EXPLANATION_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "event_id": pl.String,
    "rating_before": pl.Int32,
    "k": pl.Int32,
    "m": pl.Int32,  # games against opponents with UKD
    "average_capped": pl.Float64,  # two decimals
    "d": pl.Int32,
    "pd": pl.Float64,
    "we": pl.Float64,
    "w": pl.Float64,
    "unrated_wins": pl.Int32,
    "unrated_losses": pl.Int32,
    "delta_d": pl.Float64,  # two decimals, exact
}

UKD_PLAYER_EXPLANATION_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "rating_before": pl.Int32,
    "tournaments": pl.Int32,
    "games": pl.Int32,
    "sum_delta_d": pl.Float64,
    "rating_unfloored": pl.Int32,
    "rating_after": pl.Int32,
    "floored": pl.Boolean,
    "newcomer": pl.Boolean,
}

UKD_NEWCOMER_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "n": pl.Int32,
    "points": pl.Float64,
    "opponents_sum": pl.Int64,
    "ra": pl.Float64,  # two decimals
    "p": pl.Float64,
    "dp": pl.Int32,
    "ru": pl.Int32,
    "published": pl.Boolean,
}


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


def ukd_k_expr(rating: pl.Expr, rules: UkdRules = UKD_RULES) -> pl.Expr:
    """k by the player's UKD band (30 up to 1299 ... 10 from 2400)."""
    expr = None
    for low, k in rules.k_bands:
        expr = (pl.when(rating >= low) if expr is None else expr.when(rating >= low)).then(k)
    return expr.otherwise(rules.k_lowest).cast(pl.Int32)


def ukd_state_from_starting_list(frame: pl.DataFrame) -> pl.DataFrame:
    """A STARTING_LIST_SCHEMA frame (one UKD list) as UKD_STATE_SCHEMA."""
    return frame.select(pl.col("player_id").cast(pl.String), pl.col("rating").cast(pl.Int32)).sort(
        "player_id"
    )


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
    ratings = start.lazy()
    gr = g.join(
        ratings.rename({"player_id": "white_id", "rating": "white_rating"}),
        on="white_id",
        how="left",
    ).join(
        ratings.rename({"player_id": "black_id", "rating": "black_rating"}),
        on="black_id",
        how="left",
    )
    long = two_sided(
        gr,
        {"own_rating": "white_rating", "opponent_rating": "black_rating"},
        {"own_rating": "black_rating", "opponent_rating": "white_rating"},
    )
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


def ukd_calculator(
    rating: int, games: list[tuple[int | None, float]], rules: UkdRules = UKD_RULES
) -> dict:
    """The seed's UKD calculator for one tournament: capped opponents, D, PD, We, W, k, change.

    An opponent of None has no UKD (+-0.1k per win/loss); the new UKD is rounded and floored.
    """
    rows = pl.LazyFrame(
        {
            "player_id": ["p"] * len(games),
            "event_id": ["t"] * len(games),
            "own_rating": [rating] * len(games),
            "opponent_rating": [o for o, _ in games],
            "score": [float(s) for _, s in games],
        },
        schema={
            "player_id": pl.String,
            "event_id": pl.String,
            "own_rating": pl.Int32,
            "opponent_rating": pl.Int32,
            "score": pl.Float64,
        },
    )
    cap = rules.opponent_cap
    per_game = rows.select(
        pl.col("opponent_rating").alias("opponent"),
        pl.col("opponent_rating")
        .clip(pl.col("own_rating") - cap, pl.col("own_rating") + cap)
        .alias("counted_as"),
        "score",
    ).collect()
    k = int(pl.select(ukd_k_expr(pl.lit(rating), rules)).item())
    if games:
        t = ukd_tournament_rows(rows, rules).collect().row(0, named=True)
    else:
        t = {"m": 0, "d": None, "pd_h": None, "we_h": 0, "w2": 0, "delta_h": 0}
        t |= {"unrated_wins": 0, "unrated_losses": 0, "sum_capped": 0}
    delta_h = int(t["delta_h"])
    unfloored = round_half_away(Fraction(rating * 100 + delta_h, 100))
    return {
        "rating": rating,
        "k": k,
        "games": per_game.to_dicts(),
        "m": int(t["m"]),
        "average": round_half_away(Fraction(int(t["sum_capped"]), int(t["m"])), 2)
        if t["m"]
        else None,
        "D": t["d"],
        "PD": None if t["pd_h"] is None else t["pd_h"] / 100,
        "We": int(t["we_h"]) / 100,
        "W": int(t["w2"]) / 2,
        "unrated_wins": int(t["unrated_wins"]),
        "unrated_losses": int(t["unrated_losses"]),
        "change": delta_h / 100,
        "new_rating": max(int(unfloored), rules.floor),
    }
