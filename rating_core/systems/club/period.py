"""Club ratings (RULES §6): the FIDE formula applied per closed club tournament.

- `club_tournament(games, state, players=None)` -> `ClubTournamentResult`: one tournament,
  K x sum(dR) per player rounded once, K x n <= 700 per tournament, new players at 1500.
- `club_period(games, state, players=None, rating_list=None)` -> `ClubPeriodResult`: every
  tournament in `games`, in end-date order then id, each from the previous one's state.

The rules and schemas are in `club.rules`, the folder and list names in `club.folders`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

from rating_core.rounding import round_hundredths_half_away_expr
from rating_core.systems.club.rules import (
    CLUB_GAME_EXPLANATION_SCHEMA,
    CLUB_LIST_SCHEMA,
    CLUB_RULES,
    CLUB_STATE_SCHEMA,
    CLUB_TOURNAMENT_PLAYER_SCHEMA,
    ClubRules,
)
from rating_core.systems.fide.steps import (
    k_base_exprs,
    k_capped_expr,
    rate_rows,
    real_difference_expr,
    select_rated_games,
    with_ratings,
)


@dataclass(frozen=True)
class ClubTournamentResult:
    """One tournament: the state after it and the explanation of every number."""

    tournament_id: str
    state: pl.DataFrame  # CLUB_STATE_SCHEMA
    player_explanations: pl.DataFrame  # CLUB_TOURNAMENT_PLAYER_SCHEMA
    game_explanations: pl.DataFrame  # CLUB_GAME_EXPLANATION_SCHEMA


@dataclass(frozen=True)
class ClubPeriodResult:
    """Every tournament of a period applied in order; `state` feeds the next period."""

    state: pl.DataFrame  # CLUB_STATE_SCHEMA
    list_rows: pl.DataFrame  # CLUB_LIST_SCHEMA
    player_explanations: pl.DataFrame  # CLUB_TOURNAMENT_PLAYER_SCHEMA, tournaments in order
    game_explanations: pl.DataFrame  # CLUB_GAME_EXPLANATION_SCHEMA
    tournament_order: list[str]


def _birth_years(players: pl.DataFrame | None) -> pl.DataFrame:
    if players is None:
        return pl.DataFrame(schema={"player_id": pl.String, "birth_year": pl.Int32})
    return players.select(
        pl.col("player_id").cast(pl.String), pl.col("birth_year").cast(pl.Int32)
    ).unique("player_id")


def club_tournament(
    games: pl.DataFrame | pl.LazyFrame,
    state: pl.DataFrame,
    players: pl.DataFrame | None = None,
    rules: ClubRules = CLUB_RULES,
) -> ClubTournamentResult:
    """Rate one closed club tournament (all of `games`, finished and rated ones) from `state`.

    The junior K uses the calendar year of the tournament's last game.
    """
    fr = rules.formula
    g = select_rated_games(games, None, None).collect()
    tid = g["event_id"][0] if g.height else ""
    start = state.select([pl.col(c).cast(t) for c, t in CLUB_STATE_SCHEMA.items()])
    ids = pl.concat(
        [
            g.select(pl.col("white_id").alias("player_id")),
            g.select(pl.col("black_id").alias("player_id")),
        ]
    ).unique()
    newcomers = ids.join(start, on="player_id", how="anti").select(
        "player_id",
        pl.lit(rules.start_rating, dtype=pl.Int32).alias("rating"),
        pl.lit(rules.start_games, dtype=pl.Int32).alias("rated_games"),
        pl.lit(rules.start_rating, dtype=pl.Int32).alias("peak_rating"),
    )
    full = pl.concat([start, newcomers])
    long = with_ratings(g.lazy(), full.lazy())
    rated = rate_rows(long, fr, real_difference_expr(fr)).collect()
    last_played = g["played_at"].max()  # None when the tournament has no rated game
    year = last_played.year if isinstance(last_played, datetime) else 1900
    k_base, k_reason = k_base_exprs(fr, year)
    per = (
        full.join(
            rated.group_by("player_id").agg(
                pl.len().cast(pl.Int32).alias("n"), pl.col("delta_h").sum().alias("sum_delta_h")
            ),
            on="player_id",
            how="inner",
        )
        .join(_birth_years(players), on="player_id", how="left")
        .with_columns(k_base.alias("k_base"), k_reason.alias("k_reason"))
        .with_columns(k_capped_expr(pl.col("k_base"), pl.col("n"), fr).alias("k_used"))
        .with_columns((pl.col("k_used").cast(pl.Int64) * pl.col("sum_delta_h")).alias("change_h"))
        .with_columns(round_hundredths_half_away_expr(pl.col("change_h")).alias("change"))
        .with_columns(
            pl.max_horizontal(pl.col("rating") + pl.col("change"), pl.lit(rules.floor))
            .cast(pl.Int32)
            .alias("rating_after"),
            pl.col("player_id").is_in(newcomers["player_id"].implode()).alias("new_player"),
        )
    )
    after = (
        full.join(per.select("player_id", "n", "rating_after"), on="player_id", how="left")
        .select(
            "player_id",
            pl.coalesce("rating_after", "rating").alias("rating"),
            (pl.col("rated_games") + pl.col("n").fill_null(0)).alias("rated_games"),
            pl.max_horizontal("peak_rating", "rating_after").alias("peak_rating"),
        )
        .cast(CLUB_STATE_SCHEMA)
        .sort("player_id")
    )
    player_expl = (
        per.select(
            pl.lit(tid).alias("tournament_id"),
            "player_id",
            "new_player",
            pl.col("rating").alias("rating_before"),
            "k_base",
            "k_reason",
            "n",
            "k_used",
            (pl.col("sum_delta_h").cast(pl.Float64) / 100).alias("sum_delta_r"),
            (pl.col("change_h").cast(pl.Float64) / 100).alias("change_exact"),
            "change",
            "rating_after",
        )
        .cast(CLUB_TOURNAMENT_PLAYER_SCHEMA)
        .sort("player_id")
    )
    game_expl = (
        rated.select(
            pl.lit(tid).alias("tournament_id"),
            "game_id",
            "player_id",
            "opponent_id",
            "own_rating",
            "opponent_rating",
            "d_raw",
            "d_used",
            (pl.col("pd_h").cast(pl.Float64) / 100).alias("pd"),
            "score",
            (pl.col("delta_h").cast(pl.Float64) / 100).alias("delta_r"),
        )
        .cast(CLUB_GAME_EXPLANATION_SCHEMA)
        .sort("game_id", "player_id")
    )
    return ClubTournamentResult(tid, after, player_expl, game_expl)


def club_period(
    games: pl.DataFrame | pl.LazyFrame,
    state: pl.DataFrame,
    players: pl.DataFrame | None = None,
    rating_list: str | None = None,
    rules: ClubRules = CLUB_RULES,
) -> ClubPeriodResult:
    """Apply every tournament of `games` (one club, optionally one list) in end-date, id order.

    The loop is over tournaments, not games: each tournament starts from the previous state.
    """
    g = select_rated_games(games, None, rating_list).collect()
    order = (
        g.group_by("event_id")
        .agg(pl.col("played_at").max().alias("end"))
        .sort("end", "event_id")["event_id"]
        .to_list()
    )
    cur = state.select([pl.col(c).cast(t) for c, t in CLUB_STATE_SCHEMA.items()])
    before = cur
    pexpl, gexpl = [], []
    for tid in order:
        # select_rated_games output already has the needed columns; rebuild the input shape.
        tg = g.filter(pl.col("event_id") == tid).with_columns(
            pl.col("event_id").alias("tournament_id"),
            pl.lit("finished").alias("status"),
            pl.lit(True).alias("rated"),
        )
        res = club_tournament(tg, cur, players, rules)
        cur = res.state
        pexpl.append(res.player_explanations)
        gexpl.append(res.game_explanations)
    p_all = pl.concat(pexpl) if pexpl else pl.DataFrame(schema=CLUB_TOURNAMENT_PLAYER_SCHEMA)
    g_all = pl.concat(gexpl) if gexpl else pl.DataFrame(schema=CLUB_GAME_EXPLANATION_SCHEMA)
    per = p_all.group_by("player_id").agg(pl.col("n").sum().alias("games"))
    list_rows = (
        cur.join(per, on="player_id", how="left")
        .join(
            before.select("player_id", pl.col("rating").alias("_before")),
            on="player_id",
            how="left",
        )
        .select(
            "player_id",
            "rating",
            pl.col("games").fill_null(0),
            (pl.col("rating") - pl.coalesce("_before", pl.lit(rules.start_rating))).alias("change"),
            "rated_games",
            "peak_rating",
            pl.lit(None, dtype=pl.Boolean).alias("provisional"),
            pl.lit(None, dtype=pl.String).alias("flag"),
        )
        .cast(CLUB_LIST_SCHEMA)
        .sort("player_id")
    )
    return ClubPeriodResult(cur, list_rows, p_all, g_all, order)
