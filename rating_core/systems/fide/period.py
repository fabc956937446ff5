"""FIDE rating lists for one period (RULES §3): `fide_period` and the per-game explanations.

- `fide_state_from_starting_list(frame)`: a STARTING_LIST_SCHEMA frame -> FIDE state.
- `fide_period(games, state, players, period, rating_list, standard_state=None, pool=None,
  explain=True)` -> `FidePeriodResult` (state, list_rows, game_explanations, player_explanations,
  newcomers, pool, dropped), every frame sorted and typed by the schemas of `fide.rules`;
  `explain=False` computes the list without the per-game table (game_explanations empty, same
  schema) and changes nothing else. Each side of each game is matched to its row of the state
  (`side_codes`: exact, no string join); the list's rating steps and per-player sums are one
  compiled pass over the games (`counted_sums`), and the explanations' steps run in numpy on
  the same codes (`rate_sides`), so no string join or sort touches the one-row-per-player-per-game
  data.
- `fide_game_explanations(games, state, period, rating_list, standard_state=None)`: the
  per-game explanation table alone (one row per player per game: opponent, ratings used, D,
  PD, ΔR), from the same inputs and the same steps as `fide_period` (`_period_games`,
  `_period_start`, `code_sides`, `rate_sides`, `_game_explanations`), so every published
  change can be traced to its games.

All arithmetic that rounds sums of table values is done in integer hundredths (PD x 100,
score x 100) and rounded once, half away from zero.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import polars as pl

from rating_core.periods import period_index, period_index_expr
from rating_core.rounding import div_round_half_away_expr, round_hundredths_half_away_expr
from rating_core.schemas import RATING_LISTS, empty
from rating_core.systems.fide.newcomers import event_ends, newcomer_pool
from rating_core.systems.fide.rules import (
    FIDE_DROPPED_SCHEMA,
    FIDE_GAME_EXPLANATION_SCHEMA,
    FIDE_LIST_SCHEMA,
    FIDE_PLAYER_EXPLANATION_SCHEMA,
    FIDE_RULES,
    FIDE_STATE_SCHEMA,
    FastListRaise,
    FideRules,
    ListCompression,
    compression_for_list,
    fast_raise_for_list,
    rules_for_period,
)
from rating_core.systems.fide.steps import (
    RatedSides,
    code_sides,
    counted_sums,
    hundredths_to_float,
    k_base_exprs,
    k_capped_expr,
    one_game_uncapped,
    rate_sides,
    score_at,
    select_rated_games,
    side_ids,
)
from rating_core.text import format_text


@dataclass(frozen=True)
class FidePeriodResult:
    """Everything one FIDE period produces; `state` and `pool` feed the next period."""

    period: str
    rating_list: str
    rules: str  # the era rated by (`FideRules.name`, e.g. "FIDE 2025-10")
    state: pl.DataFrame  # FIDE_STATE_SCHEMA: every player rated after the period
    list_rows: pl.DataFrame  # FIDE_LIST_SCHEMA: the publishable list
    game_explanations: pl.DataFrame  # FIDE_GAME_EXPLANATION_SCHEMA
    player_explanations: pl.DataFrame  # FIDE_PLAYER_EXPLANATION_SCHEMA
    newcomers: pl.DataFrame  # FIDE_NEWCOMER_SCHEMA: every pooled player evaluated
    pool: pl.DataFrame  # FIDE_POOL_SCHEMA: to pass to the next period
    dropped: pl.DataFrame  # FIDE_DROPPED_SCHEMA


def fide_state_from_starting_list(frame: pl.DataFrame) -> pl.DataFrame:
    """A STARTING_LIST_SCHEMA frame (one FIDE list) as FIDE_STATE_SCHEMA.

    A missing peak is the current rating; `listed_since` is the list's period, the reference for
    the inactivity flag while the player's last game is unknown. A player the list flags
    inactive (`i`, `wi`) had no rated game in the year before it: their last game is taken to be
    `inactive_periods - 1` periods before the list's, so they stay flagged on the next list
    until a rated game clears the flag (RULES §3 step 8).
    """
    flag = pl.col("flag") if "flag" in frame.columns else pl.lit(None, dtype=pl.String)
    listed = (pl.col("period").cast(pl.String) + "-01").str.to_date("%Y-%m-%d")
    back = f"-{FIDE_RULES.inactive_periods - 1}mo"
    last = pl.when(flag.cast(pl.String).str.contains("i").fill_null(False)).then(
        listed.dt.offset_by(back).dt.strftime("%Y-%m")
    )
    return (
        frame.lazy()
        .select(
            pl.col("player_id").cast(pl.String),
            pl.col("rating").cast(pl.Int32),
            pl.col("rated_games").cast(pl.Int32),
            pl.max_horizontal(pl.col("peak_rating"), pl.col("rating"))
            .cast(pl.Int32)
            .alias("peak_rating"),
            last.cast(pl.String).alias("last_played_period"),
            pl.col("period").cast(pl.String).alias("listed_since"),
        )
        .sort("player_id")
        .collect()
    )


def _game_explanations(g: pl.DataFrame, s: RatedSides, rules: FideRules) -> pl.DataFrame:
    """One row per rated player per game, in game order (white before black).

    Built from the arrays of `s` gathered once in numpy (index arrays computed in place: every
    fresh array of this size costs page faults), ids gathered from single-chunk series, the
    reason gathered from a three-entry series instead of a string when/then.
    """
    n_games = s.n_games
    # Game order, white before black: position 2 x game + side of the interleaved sides.
    pos = np.flatnonzero(s.own_ok.reshape(2, n_games).T.ravel())
    game_idx = pos >> 1
    side = pos & 1  # 1 for black
    del pos
    idx = side * n_games
    idx += game_idx
    opp_idx = side  # reused: 1 - side is the opponent's side
    np.subtract(1, side, out=opp_idx)
    opp_idx *= n_games
    opp_idx += game_idx
    opp_ok = s.own_ok[opp_idx]
    excluded = s.excluded[game_idx]
    counted = s.counted[game_idx]
    # 0: opponent unrated, 1: excluded (implies a rated opponent), 2: counted.
    reason_code = excluded.astype(np.uint32)
    np.subtract(2, reason_code, out=reason_code)
    reason_code *= opp_ok
    reasons = pl.Series(
        [
            "opponent unrated on this list",
            f"{rules.fast_excluded_gap}-point rule",
            None,
        ],
        dtype=pl.String,
    )
    ids = side_ids(g)
    raw = pl.DataFrame(
        {
            "game_id": g["game_id"].rechunk().gather(game_idx),
            "player_id": ids.gather(idx),
            "opponent_id": ids.gather(opp_idx),
            "own_rating": s.own_rating[idx],
            "opponent_rating": s.own_rating[opp_idx],
            "_opp_ok": opp_ok,
            "counted": counted,
            "not_counted_reason": reasons.gather(reason_code),
            "d_raw": s.d_raw[idx],
            "d_used": s.d_used[idx],
            "pd_h": s.pd_h[idx],
            "score": score_at(s, idx),
            "delta_h": s.delta_h[idx],
        }
    )
    counted_col = pl.col("counted")
    opp_ok_col = pl.col("_opp_ok")
    return raw.select(
        "game_id",
        "player_id",
        "opponent_id",
        pl.col("own_rating").cast(pl.Int32),
        pl.when(opp_ok_col).then(pl.col("opponent_rating")).cast(pl.Int32).alias("opponent_rating"),
        "counted",
        "not_counted_reason",
        pl.when(opp_ok_col).then(pl.col("d_raw")).cast(pl.Int64).alias("d_raw"),
        pl.when(counted_col).then(pl.col("d_used")).cast(pl.Int64).alias("d_used"),
        hundredths_to_float(pl.when(counted_col).then(pl.col("pd_h"))).alias("pd"),
        "score",
        hundredths_to_float(pl.when(counted_col).then(pl.col("delta_h"))).alias("delta_r"),
    )


def _per_player(
    start: pl.DataFrame,
    n_arr: np.ndarray,
    sum_arr: np.ndarray,
    players: pl.DataFrame | None,
    period: str,
    rules: FideRules,
) -> pl.LazyFrame:
    """Step 4 and the period change of every player of `start` (seeded players only if they
    played): K and why, the K x n cap, K x sum(dR) in hundredths, rounded once, the new rating,
    and what the state, the list and the explanations take from it."""
    year = int(period[:4])
    per = start.with_columns(
        pl.Series("n", n_arr, dtype=pl.Int32), pl.Series("sum_delta_h", sum_arr, dtype=pl.Int64)
    ).lazy()
    if players is None:
        per = per.with_columns(pl.lit(None, dtype=pl.Int32).alias("birth_year"))
    else:
        birth = players.lazy().select(
            pl.col("player_id").cast(pl.String), pl.col("birth_year").cast(pl.Int32)
        )
        per = per.join(birth.unique("player_id"), on="player_id", how="left", maintain_order="left")
    k_base, k_reason = k_base_exprs(rules, year)
    return (
        per.with_columns(k_base.alias("k_base"), k_reason.alias("k_reason"))
        .with_columns(k_capped_expr(pl.col("k_base"), pl.col("n"), rules).alias("k_used"))
        .with_columns((pl.col("k_used").cast(pl.Int64) * pl.col("sum_delta_h")).alias("change_h"))
        .with_columns(
            round_hundredths_half_away_expr(pl.col("change_h")).cast(pl.Int32).alias("change")
        )
        .with_columns((pl.col("rating") + pl.col("change")).cast(pl.Int32).alias("rating_after"))
        .filter(~pl.col("seeded") | (pl.col("n") > 0))
        .select(
            "player_id",
            pl.col("rating").alias("rating_before"),
            "k_base",
            "k_reason",
            "n",
            pl.col("n").alias("games"),
            "k_used",
            "sum_delta_h",
            "change_h",
            "change",
            "rating_after",
            (pl.col("rating").cast(pl.Float64) + pl.col("change_h").cast(pl.Float64) / 100).alias(
                "rating_exact"
            ),
            (pl.col("rated_games") + pl.col("n")).alias("rated_games_after"),
            pl.max_horizontal(pl.coalesce("peak_rating", "rating"), "rating_after").alias(
                "peak_after"
            ),
            pl.when(pl.col("n") > 0)
            .then(pl.lit(period))
            .otherwise(pl.col("last_played_period"))
            .alias("last_after"),
            "listed_since",
            (pl.col("rating_after") < rules.floor).alias("dropped"),
            pl.lit(False).alias("newcomer"),
            "seeded",
        )
    )


def _period_start(
    g: pl.DataFrame,
    state: pl.DataFrame,
    period: str,
    standard: bool,
    standard_state: pl.DataFrame | None,
) -> pl.DataFrame:
    """The list in force at period start (FIDE_STATE_SCHEMA plus `seeded`): `state`, and on
    rapid/blitz the players of `g` it lacks who are on `standard_state` (step 7)."""
    st = state.select([pl.col(c).cast(t) for c, t in FIDE_STATE_SCHEMA.items()]).with_columns(
        pl.lit(False).alias("seeded")
    )
    if not standard and standard_state is not None:
        ids = pl.concat(
            [
                g.lazy().select(pl.col("white_id").alias("player_id")),
                g.lazy().select(pl.col("black_id").alias("player_id")),
            ]
        ).unique()
        seeded = (
            ids.join(st.lazy().select("player_id"), on="player_id", how="anti")
            .join(standard_state.lazy().select("player_id", "rating"), on="player_id", how="inner")
            .select(
                pl.col("player_id"),
                pl.col("rating").cast(pl.Int32),
                pl.lit(0, dtype=pl.Int32).alias("rated_games"),
                pl.col("rating").cast(pl.Int32).alias("peak_rating"),
                pl.lit(None, dtype=pl.String).alias("last_played_period"),
                pl.lit(period).alias("listed_since"),
                pl.lit(True).alias("seeded"),
            )
        )
        st = pl.concat([st, seeded.collect()])
    return st


def _period_games(
    games: pl.DataFrame | pl.LazyFrame, period: str, rating_list: str
) -> pl.DataFrame:
    """The rated games of one period and list (`select_rated_games`, in input order), after
    checking the list name and the period. Materialized once: the engine reads them twice
    (ratings, then event ends)."""
    if rating_list not in RATING_LISTS:
        raise ValueError(f"rating_list must be one of {RATING_LISTS}, got {rating_list!r}")
    period_index(period)
    return select_rated_games(games, period, rating_list).collect()


def fide_game_explanations(
    games: pl.DataFrame | pl.LazyFrame,
    state: pl.DataFrame,
    period: str,
    rating_list: str,
    standard_state: pl.DataFrame | None = None,
    rules: FideRules | None = None,
) -> pl.DataFrame:
    """The per-game explanations of one period of one FIDE list (FIDE_GAME_EXPLANATION_SCHEMA).

    One row per player rated at period start per rated game of the period, in game order
    (white before black): opponent, ratings used, D, PD, ΔR, and why a game did not count.
    Computed from the same inputs as `fide_period` (`games`, the period-start `state`,
    `standard_state` for rapid/blitz) with the same steps, without computing the list: the
    counted ΔR of a player sum to the `sum_delta_r` of their per-period explanation. `rules`:
    None is the era in force on the period's first day (`rules_for_period`).
    """
    standard = rating_list == "standard"
    g = _period_games(games, period, rating_list)
    era = rules if rules is not None else rules_for_period(period, rating_list)
    start = _period_start(g, state, period, standard, standard_state)
    coded = code_sides(g, start)
    sides = rate_sides(coded, standard, era, one_game_uncapped(g, coded, standard, era))
    return _game_explanations(g, sides, era).cast(FIDE_GAME_EXPLANATION_SCHEMA)


def _compress(everyone: pl.DataFrame, compression: ListCompression | None) -> pl.DataFrame:
    """The one-time compression (RULES §3.3) of everyone on the list (not the dropped): the
    points added in `compression` (null for the dropped and outside a compressed list), added
    to the rating after the period, its exact value and the peak."""
    if compression is None:
        return everyone.with_columns(pl.lit(None, dtype=pl.Int32).alias("compression"))
    below = compression.below
    gain = pl.when(pl.col("rating_after") < below).then(
        div_round_half_away_expr(
            (below - pl.col("rating_after").cast(pl.Int64)) * compression.numerator,
            pl.lit(compression.denominator),
        )
    )
    added = pl.when(~pl.col("dropped")).then(gain.fill_null(0)).cast(pl.Int32)
    return (
        everyone.with_columns(added.alias("compression"))
        .with_columns(
            (pl.col("rating_after") + pl.col("compression").fill_null(0))
            .cast(pl.Int32)
            .alias("rating_after"),
            pl.col("rating_exact") + pl.col("compression").fill_null(0),
        )
        .with_columns(
            pl.max_horizontal("peak_after", "rating_after").cast(pl.Int32).alias("peak_after")
        )
    )


def _raise_fast(
    everyone: pl.DataFrame, fast_raise: FastListRaise | None, standard_after: pl.DataFrame | None
) -> pl.DataFrame:
    """The one-time raise of a rapid or blitz list (RULES §3.3, the lists of 2022-09): a rating
    more than `gap` below the player's rating on `standard_after` (the same period's standard
    list) becomes that rating - `gap`; the points added go to `compression` (the column of the
    one-time raises), and to the exact rating and the peak. Nobody else changes."""
    if fast_raise is None or standard_after is None:
        return everyone
    standard = standard_after.lazy().select(
        pl.col("player_id").cast(pl.String), pl.col("rating").cast(pl.Int64).alias("_standard")
    )
    target = pl.col("_standard") - fast_raise.gap
    gain = (
        pl.when(~pl.col("dropped") & (pl.col("rating_after").cast(pl.Int64) < target))
        .then(target - pl.col("rating_after").cast(pl.Int64))
        .otherwise(0)
    )
    return (
        everyone.lazy()
        .join(standard, on="player_id", how="left", maintain_order="left")
        .with_columns(gain.cast(pl.Int32).alias("_raised"))
        .with_columns(
            (pl.col("rating_after") + pl.col("_raised")).cast(pl.Int32).alias("rating_after"),
            pl.col("rating_exact") + pl.col("_raised"),
            pl.when(~pl.col("dropped"))
            .then(pl.col("compression").fill_null(0) + pl.col("_raised"))
            .cast(pl.Int32)
            .alias("compression"),
        )
        .with_columns(
            pl.max_horizontal("peak_after", "rating_after").cast(pl.Int32).alias("peak_after")
        )
        .drop("_standard", "_raised")
        .collect()
    )


def fide_period(
    games: pl.DataFrame | pl.LazyFrame,
    state: pl.DataFrame,
    players: pl.DataFrame | None,
    period: str,
    rating_list: str,
    standard_state: pl.DataFrame | None = None,
    pool: pl.DataFrame | None = None,
    rules: FideRules | None = None,
    explain: bool = True,
    compression: ListCompression | None = None,
    fast_raise: FastListRaise | None = None,
    standard_after: pl.DataFrame | None = None,
) -> FidePeriodResult:
    """Rate one period of one FIDE list (RULES §3), vectorized, from the period-start `state`.

    `games`: GAMES_SCHEMA columns (at least game_id, tournament_id, played_at, period, white_id,
    black_id, white_score, rating_list, status, rated); the engine filters `period` and
    `rating_list`. `players`: player_id, birth_year (junior K), or None. `standard_state`: the
    standard list in force at period start (seeds rapid/blitz, step 7). `pool`: the newcomer
    pool returned by the previous period. `explain=False` computes the list without the
    per-game explanation table (`fide_game_explanations` builds the same table on its own);
    `explain=True` builds it from the same rated sides, as the pipeline does.
    `rules`: None rates by the era of `rating_list` in force on the period's first day
    (`rules_for_period`) and applies the one-time raises due on the period's list: the
    compression (`compression_for_list`, the lists of 2024-02) and, on rapid and blitz, the
    raise to standard - 100 (`fast_raise_for_list`, the lists of 2022-09) from `standard_after`,
    the same period's standard list (FIDE_STATE_SCHEMA or list rows: player_id, rating); given
    rules are applied as they are, with `compression` and `fast_raise` only when given.
    """
    standard = rating_list == "standard"
    g = _period_games(games, period, rating_list)
    p_idx = period_index(period)
    if rules is None:
        rules = rules_for_period(period, rating_list)
        compression = (
            compression_for_list(period, rating_list) if compression is None else compression
        )
        fast_raise = fast_raise_for_list(period, rating_list) if fast_raise is None else fast_raise
    # The steps of `fide_game_explanations`, plus two jobs on a worker thread (Polars releases
    # the GIL), in order: the events' end dates, which need only the games, beside the id
    # coding; then the newcomer pool, which needs only the coded sides, beside steps 1-4.
    with ThreadPoolExecutor(max_workers=1) as worker:
        ends_job = worker.submit(event_ends(g).collect)
        start = _period_start(g, state, period, standard, standard_state)
        coded = code_sides(g, start)
        pool_job = worker.submit(newcomer_pool, g, coded, start, pool, ends_job, period, rules)
        uncapped = one_game_uncapped(g, coded, standard, rules)
        n_arr, sum_arr = counted_sums(coded, standard, start.height, rules, uncapped)
        per = _per_player(start, n_arr, sum_arr, players, period, rules).collect()
        game_expl = (
            _game_explanations(g, rate_sides(coded, standard, rules, uncapped), rules)
            if explain
            else empty(FIDE_GAME_EXPLANATION_SCHEMA)
        )
        newcomers, published, pool_out = pool_job.result()

    published_rows = published.select(
        "player_id",
        pl.lit(None, dtype=pl.Int32).alias("rating_before"),
        pl.lit(None, dtype=pl.Int32).alias("k_base"),
        pl.lit("newcomer").alias("k_reason"),
        "n",  # the pooled games the initial rating is computed from
        pl.col("_games_new").alias("games"),  # of which played this period
        pl.lit(None, dtype=pl.Int32).alias("k_used"),
        pl.lit(None, dtype=pl.Int64).alias("sum_delta_h"),
        pl.lit(None, dtype=pl.Int64).alias("change_h"),
        pl.lit(None, dtype=pl.Int32).alias("change"),
        pl.col("ru").alias("rating_after"),
        pl.col("ru").cast(pl.Float64).alias("rating_exact"),
        pl.col("n").alias("rated_games_after"),
        pl.col("ru").alias("peak_after"),
        pl.lit(period).alias("last_after"),
        pl.lit(period).alias("listed_since"),
        pl.lit(False).alias("dropped"),
        pl.lit(True).alias("newcomer"),
        pl.lit(False).alias("seeded"),
    )

    # One row per player after the period (rated at its start, or published newcomer), in
    # player order: the state, the list, the explanations and the dropped are selections of it.
    everyone = _raise_fast(
        _compress(pl.concat([per, published_rows.cast(per.schema)]).sort("player_id"), compression),
        fast_raise,
        standard_after,
    )
    kept = everyone.filter(~pl.col("dropped"))
    new_state = kept.select(
        "player_id",
        pl.col("rating_after").alias("rating"),
        pl.col("rated_games_after").alias("rated_games"),
        pl.col("peak_after").alias("peak_rating"),
        pl.col("last_after").alias("last_played_period"),
        "listed_since",
    ).cast(FIDE_STATE_SCHEMA)

    ref = pl.coalesce("last_after", "listed_since")
    inactive = (pl.lit(p_idx) - period_index_expr(ref)) >= rules.inactive_periods
    list_rows = kept.select(
        "player_id",
        pl.col("rating_after").alias("rating"),
        "rating_exact",
        "games",
        pl.col("k_used").alias("k"),
        "k_reason",
        "change",
        (pl.col("change_h").cast(pl.Float64) / 100).alias("change_exact"),
        pl.when(inactive.fill_null(False)).then(pl.lit("i")).otherwise(None).alias("flag"),
        pl.lit(None, dtype=pl.Boolean).alias("provisional"),
        pl.col("rated_games_after").alias("rated_games"),
        pl.col("peak_after").alias("peak_rating"),
        "newcomer",
    ).cast(FIDE_LIST_SCHEMA)

    player_expl = everyone.select(
        "player_id",
        "rating_before",
        "k_base",
        "k_reason",
        "n",
        "k_used",
        hundredths_to_float(pl.col("sum_delta_h")).alias("sum_delta_r"),
        (pl.col("change_h").cast(pl.Float64) / 100).alias("change_exact"),
        "change",
        "rating_after",
        "dropped",
        "newcomer",
        pl.col("seeded").alias("seeded_from_standard"),
        "compression",
    ).cast(FIDE_PLAYER_EXPLANATION_SCHEMA)

    dropped = (
        everyone.filter(pl.col("dropped"))
        .select(
            "player_id",
            pl.col("rating_before").alias("last_rating"),
            pl.col("rating_after").alias("new_rating"),
            format_text(
                "new rating {} is below the floor " + str(rules.floor), pl.col("rating_after")
            ).alias("reason"),
        )
        .cast(FIDE_DROPPED_SCHEMA)
    )

    return FidePeriodResult(
        period=period,
        rating_list=rating_list,
        rules=rules.name,
        state=new_state,
        list_rows=list_rows,
        game_explanations=game_expl.cast(FIDE_GAME_EXPLANATION_SCHEMA),
        player_explanations=player_expl,
        newcomers=newcomers,
        pool=pool_out,
        dropped=dropped,
    )
