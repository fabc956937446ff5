"""FIDE rating lists for one period (RULES §3) and the one-player FIDE calculator (RULES §7).

Public API (pure Polars, no Dagster):

- `FIDE_RULES` (`FideRules`): every FIDE constant in one frozen object.
- `FIDE_STATE_SCHEMA`: what a published list holds and the next period starts from
  (player_id, rating, rated_games, peak_rating, last_played_period, listed_since).
- `FIDE_POOL_SCHEMA`: games of unrated players against rated opponents (newcomer pool).
- `fide_state_from_starting_list(frame)`: a STARTING_LIST_SCHEMA frame -> FIDE state.
- `fide_period(games, state, players, period, rating_list, standard_state=None, pool=None,
  explain=True)` -> `FidePeriodResult` (state, list_rows, game_explanations, player_explanations,
  newcomers, pool, dropped), every frame sorted and typed by the schema constants below;
  `explain=False` computes the list without the per-game table (game_explanations empty, same
  schema) and changes nothing else. Each side of each game is matched to its row of the state
  (`side_codes`, `rating_core.kernels.codes.positions_in`: exact, no string join); the list's rating
  steps and per-player sums are one compiled pass over the games (`counted_sums`), and the
  explanations' steps run in numpy on the same codes (`_rate_sides`), so no string join or sort
  touches the one-row-per-player-per-game data.
- `fide_game_explanations(games, state, period, rating_list, standard_state=None)`: the
  per-game explanation table alone (one row per player per game: opponent, ratings used, D,
  PD, ΔR), from the same inputs and the same steps as `fide_period` (`_period_games`,
  `_period_start`, `_code_sides`, `_rate_sides`, `_game_explanations`), so every published
  change can be traced to its games.
- `fide_calculator(rating, k, games)`: the seed calculator for one tournament, every step.

Shared building blocks, also used by `ukd` and `club` so that no rule is implemented twice:
`select_rated_games`, `rate_rows`, `k_base_exprs`, `k_capped_expr`, `div_round_half_away_expr`,
`period_index_expr`. All arithmetic that rounds sums of table values is done in integer
hundredths (PD x 100, score x 100) and rounded once, half away from zero.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import polars as pl
from numba import njit

from rating_core.kernels.codes import positions_in
from rating_core.kernels.intrinsics import aligned_empty, prefetch
from rating_core.rounding import (
    round_half_away,
    round_half_away_expr,
    round_hundredths_half_away_expr,
)
from rating_core.schemas import RATING_LISTS, UTC_TIME
from rating_core.systems.fide.tables import (
    PD_HIGH_BY_ABS_D,
    PD_MAX_INDEX,
    dp_expr,
    pd_hundredths_expr,
)


@dataclass(frozen=True)
class FideRules:
    """Every number of RULES §3 (FIDE Rating Regulations 2024, amended 2025), in one place."""

    difference_cap: int = 400  # step 1: |D| > 400 counts as 400
    real_difference_from: int = 2650  # standard list: a player >= this uses the real D
    fast_excluded_gap: int = 600  # rapid/blitz: no rating of a game >= 600 apart ...
    fast_excluded_above: int = 2600  # ... when either player is rated above this
    k_established_top: int = 10  # step 4: once peak_rating >= top_peak
    top_peak: int = 2400
    k_junior: int = 40  # until the end of the year of the 18th birthday, rating < junior_below
    junior_age: int = 18
    junior_below: int = 2300
    k_new: int = 40  # until `new_games` rated games are completed
    new_games: int = 30
    k_default: int = 20
    k_times_n_max: int = 700  # K x n <= 700 per period
    floor: int = 1400  # step 6: below this the player leaves the list
    inactive_periods: int = 12  # step 8
    newcomer_min_games: int = 5  # §8.2: first rating after >= 5 pooled games
    newcomer_window_periods: int = 26  # rolling pool window
    newcomer_hypothetical_rating: int = 1800  # two hypothetical drawn games vs 1800
    newcomer_hypothetical_games: int = 2
    newcomer_max: int = 2200


FIDE_RULES = FideRules()

# --- schemas ------------------------------------------------------------------------------------

FIDE_STATE_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "rating": pl.Int32,
    "rated_games": pl.Int32,  # career count on this list; null = unknown (treated as >= 30)
    "peak_rating": pl.Int32,  # highest rating ever published on this list
    "last_played_period": pl.String,  # last period with a rated game; null = unknown
    "listed_since": pl.String,  # first period this state knows the player (inactivity reference)
}

FIDE_POOL_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,  # the unrated player
    "game_id": pl.String,
    "event_id": pl.String,  # tournament_id, or the game id for a game outside a tournament
    "event_end": UTC_TIME,  # last game of the event in its period
    "period": pl.String,
    "opponent_id": pl.String,
    "opponent_rating": pl.Int32,  # opponent's rating at the start of `period`
    "score": pl.Float64,
}

FIDE_LIST_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "rating": pl.Int32,
    "rating_exact": pl.Float64,  # rating before + unrounded K x sum(dR)
    "games": pl.Int32,  # rated games in the period on this list
    "k": pl.Int32,
    "k_reason": pl.String,
    "change": pl.Int32,
    "change_exact": pl.Float64,
    "flag": pl.String,  # "i" inactive, else null
    "provisional": pl.Boolean,  # always null for FIDE
    "rated_games": pl.Int32,
    "peak_rating": pl.Int32,
    "newcomer": pl.Boolean,
}

FIDE_GAME_EXPLANATION_SCHEMA: dict[str, pl.DataType] = {
    "game_id": pl.String,
    "player_id": pl.String,
    "opponent_id": pl.String,
    "own_rating": pl.Int32,
    "opponent_rating": pl.Int32,  # null: opponent unrated on this list
    "counted": pl.Boolean,
    "not_counted_reason": pl.String,
    "d_raw": pl.Int64,
    "d_used": pl.Int64,
    "pd": pl.Float64,  # two decimals
    "score": pl.Float64,
    "delta_r": pl.Float64,  # two decimals
}

FIDE_PLAYER_EXPLANATION_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "rating_before": pl.Int32,
    "k_base": pl.Int32,
    "k_reason": pl.String,
    "n": pl.Int32,
    "k_used": pl.Int32,
    "sum_delta_r": pl.Float64,
    "change_exact": pl.Float64,
    "change": pl.Int32,
    "rating_after": pl.Int32,
    "dropped": pl.Boolean,
    "newcomer": pl.Boolean,
    "seeded_from_standard": pl.Boolean,
}

FIDE_NEWCOMER_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "n": pl.Int32,  # pooled games used
    "points": pl.Float64,
    "opponents_sum": pl.Int64,
    "first_event_disregarded": pl.String,  # event id of a zero-score first event, else null
    "ra": pl.Float64,  # two decimals
    "p": pl.Float64,  # two decimals
    "dp": pl.Int32,
    "ru": pl.Int32,  # after the 2200 cap
    "published": pl.Boolean,
}

FIDE_DROPPED_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "last_rating": pl.Int32,  # rating on the previous list
    "new_rating": pl.Int32,  # computed rating, below the floor
    "reason": pl.String,
}


@dataclass(frozen=True)
class FidePeriodResult:
    """Everything one FIDE period produces; `state` and `pool` feed the next period."""

    period: str
    rating_list: str
    state: pl.DataFrame  # FIDE_STATE_SCHEMA: every player rated after the period
    list_rows: pl.DataFrame  # FIDE_LIST_SCHEMA: the publishable list
    game_explanations: pl.DataFrame  # FIDE_GAME_EXPLANATION_SCHEMA
    player_explanations: pl.DataFrame  # FIDE_PLAYER_EXPLANATION_SCHEMA
    newcomers: pl.DataFrame  # FIDE_NEWCOMER_SCHEMA: every pooled player evaluated
    pool: pl.DataFrame  # FIDE_POOL_SCHEMA: to pass to the next period
    dropped: pl.DataFrame  # FIDE_DROPPED_SCHEMA


# --- shared building blocks ----------------------------------------------------------------------


def div_round_half_away_expr(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """Exact integer num / den (den > 0) rounded half away from zero, with no float involved."""
    n = num.cast(pl.Int64)
    d = den.cast(pl.Int64)
    return ((2 * n.abs() + d) // (2 * d)) * n.sign()


def period_index_expr(period: pl.Expr) -> pl.Expr:
    """Month number of a `YYYY-MM` period (year x 12 + month - 1), for window arithmetic."""
    return period.str.slice(0, 4).cast(pl.Int32) * 12 + period.str.slice(5, 2).cast(pl.Int32) - 1


def _period_index(period: str) -> int:
    """Scalar `period_index_expr`, validating the `YYYY-MM` form."""
    if len(period) != 7 or period[4] != "-" or not (period[:4] + period[5:]).isdigit():
        raise ValueError(f"period must be YYYY-MM, got {period!r}")
    month = int(period[5:])
    if not 1 <= month <= 12:
        raise ValueError(f"period must be YYYY-MM, got {period!r}")
    return int(period[:4]) * 12 + month - 1


def select_rated_games(
    games: pl.DataFrame | pl.LazyFrame, period: str | None, rating_list: str | None
) -> pl.LazyFrame:
    """Finished, rated, two-player games of one period and list (forfeits and byes excluded).

    Returns game_id, event_id (tournament or game), played_at, white_id, black_id, white_score.
    """
    lf = games.lazy()
    conds = [
        pl.col("status") == "finished",
        pl.col("rated").fill_null(False),
        pl.col("white_id").is_not_null(),
        pl.col("black_id").is_not_null(),
        pl.col("white_id") != pl.col("black_id"),
        pl.col("white_score").is_not_null(),
    ]
    if period is not None:
        conds.append(pl.col("period") == period)
    if rating_list is not None:
        conds.append(pl.col("rating_list") == rating_list)
    return lf.filter(*conds).select(
        pl.col("game_id").cast(pl.String),
        pl.coalesce(pl.col("tournament_id"), pl.col("game_id")).cast(pl.String).alias("event_id"),
        pl.col("played_at"),
        pl.col("white_id").cast(pl.String),
        pl.col("black_id").cast(pl.String),
        pl.col("white_score").cast(pl.Float64),
    )


def two_sided(
    games: pl.LazyFrame, white_cols: dict[str, str], black_cols: dict[str, str]
) -> pl.LazyFrame:
    """One row per player per game: player_id, opponent_id, score, plus per-side columns.

    `white_cols` maps output names to the white player's columns, `black_cols` to black's
    (e.g. {"own_rating": "white_rating", "opponent_rating": "black_rating"}).
    """
    names = games.collect_schema().names()
    keep = [c for c in ("_gi", "game_id", "event_id", "played_at") if c in names]
    white = games.select(
        *keep,
        pl.col("white_id").alias("player_id"),
        pl.col("black_id").alias("opponent_id"),
        pl.col("white_score").alias("score"),
        pl.lit(0, dtype=pl.Int8).alias("_side"),
        *[pl.col(src).alias(dst) for dst, src in white_cols.items()],
    )
    black = games.select(
        *keep,
        pl.col("black_id").alias("player_id"),
        pl.col("white_id").alias("opponent_id"),
        (1.0 - pl.col("white_score")).alias("score"),
        pl.lit(1, dtype=pl.Int8).alias("_side"),
        *[pl.col(src).alias(dst) for dst, src in black_cols.items()],
    )
    return pl.concat([white, black])


def rate_rows(
    rows: pl.LazyFrame, rules: FideRules, real_difference: bool | pl.Expr
) -> pl.LazyFrame:
    """Steps 1-3 per row: d_raw, d_used (400 cap unless `real_difference`), pd_h, delta_h.

    Needs own_rating, opponent_rating and score; pd_h and delta_h are integer hundredths.
    `real_difference` is a boolean expression (or constant) saying which rows skip the cap.
    """
    cap = rules.difference_cap
    d_raw = (pl.col("opponent_rating").cast(pl.Int64) - pl.col("own_rating").cast(pl.Int64)).alias(
        "d_raw"
    )
    real = real_difference if isinstance(real_difference, pl.Expr) else pl.lit(real_difference)
    d_used = pl.when(real).then(pl.col("d_raw")).otherwise(pl.col("d_raw").clip(-cap, cap))
    return (
        rows.with_columns(d_raw)
        .with_columns(d_used.alias("d_used"))
        .with_columns(pd_hundredths_expr(pl.col("d_used")).alias("pd_h"))
        .with_columns(
            ((pl.col("score") * 100).round(0).cast(pl.Int64) - pl.col("pd_h")).alias("delta_h")
        )
    )


def k_base_exprs(rules: FideRules, year: int) -> tuple[pl.Expr, pl.Expr]:
    """Step 4's K and its reason, first matching rule wins, from period-start columns.

    Needs rating, rated_games (null = unknown, treated as completed), peak_rating and
    birth_year (null = not a junior); `year` is the calendar year of the period.
    """
    peak = pl.coalesce(pl.col("peak_rating"), pl.col("rating"))
    top = peak >= rules.top_peak
    junior = (pl.col("birth_year") + rules.junior_age >= year).fill_null(False) & (
        pl.col("rating") < rules.junior_below
    )
    new = (pl.col("rated_games") < rules.new_games).fill_null(False)
    k = (
        pl.when(top)
        .then(rules.k_established_top)
        .when(junior)
        .then(rules.k_junior)
        .when(new)
        .then(rules.k_new)
        .otherwise(rules.k_default)
        .cast(pl.Int32)
    )
    reason = (
        pl.when(top)
        .then(pl.lit(f"peak>={rules.top_peak}"))
        .when(junior)
        .then(pl.lit("junior"))
        .when(new)
        .then(pl.lit(f"under {rules.new_games} games"))
        .otherwise(pl.lit("established"))
    )
    return k, reason


def k_capped_expr(k: pl.Expr, n: pl.Expr, rules: FideRules) -> pl.Expr:
    """K lowered to the largest integer with K x n <= 700 when K x n exceeds it."""
    limit = rules.k_times_n_max
    return pl.when((k * n > limit) & (n > 0)).then(pl.lit(limit) // n).otherwise(k).cast(pl.Int32)


def _hundredths_to_float(expr: pl.Expr) -> pl.Expr:
    """Integer hundredths as a float with two decimals (display only; exact values stay ints)."""
    return (expr.cast(pl.Float64) / 100).round(2)


# --- starting list -------------------------------------------------------------------------------


def fide_state_from_starting_list(frame: pl.DataFrame) -> pl.DataFrame:
    """A STARTING_LIST_SCHEMA frame (one FIDE list) as FIDE_STATE_SCHEMA.

    A missing peak is the current rating; `listed_since` is the list's period, the reference for
    the inactivity flag while the player's last game is unknown.
    """
    return (
        frame.lazy()
        .select(
            pl.col("player_id").cast(pl.String),
            pl.col("rating").cast(pl.Int32),
            pl.col("rated_games").cast(pl.Int32),
            pl.max_horizontal(pl.col("peak_rating"), pl.col("rating"))
            .cast(pl.Int32)
            .alias("peak_rating"),
            pl.lit(None, dtype=pl.String).alias("last_played_period"),
            pl.col("period").cast(pl.String).alias("listed_since"),
        )
        .sort("player_id")
        .collect()
    )


# --- the period engine ---------------------------------------------------------------------------


def _empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def side_codes(g: pl.DataFrame, keys: pl.Series) -> np.ndarray:
    """Position in `keys` (unique player ids) of each side of each game of `g`, -1 when the
    player is absent from `keys` or null.

    Side-major layout: entries 0..G-1 are the white players of `g`, G..2G-1 the black players.
    The keys are coded once and every side looked up in them (`positions_in`: exact, no string
    join, both columns' chunks on all cores). Duplicate keys raise ValueError.
    """
    return positions_in(keys, pl.concat([g["white_id"], g["black_id"]], rechunk=False))


def side_ids(g: pl.DataFrame) -> pl.Series:
    """Player id of each side of each game in the side-major layout of `side_codes`, as one
    contiguous chunk (gathers from a chunked series are several times slower)."""
    return pl.concat([g["white_id"], g["black_id"]], rechunk=True)


def side_ratings(code: np.ndarray, rating: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Rating (0 where missing) and a has-rating mask for each code of `side_codes`.

    int32 when every difference of two ratings fits (always, for real ratings), else int64.
    """
    small = rating.len() == rating.null_count() or int(rating.abs().max()) < 2**30
    r = rating.cast(pl.Int32 if small else pl.Int64)
    valid = np.append(r.is_not_null().to_numpy(), False)  # code -1 reads the last entry
    values = np.append(r.fill_null(0).to_numpy(), 0)
    return values[code], valid[code]


# PD in hundredths by D = opponent - own rating, at index D + PD_MAX_INDEX (|D| clipped to
# PD_MAX_INDEX, "> 735"): the higher-rated side (D <= 0) reads H, the lower side L = 1 - H.
_PD_BY_D = np.concatenate((PD_HIGH_BY_ABS_D[::-1], 100 - PD_HIGH_BY_ABS_D[1:]))
_PD_BY_D_I64 = _PD_BY_D.astype(np.int64)


@dataclass(frozen=True)
class _Coded:
    """Both sides of every game matched to the list in force at period start (side-major
    layout, see `side_codes`): what the newcomer pool needs, before steps 1-3."""

    n_games: int
    own_code: np.ndarray  # row of `start`, -1 unknown
    own_rating: np.ndarray  # int32 (int64 for huge ratings), 0 where own_ok is False
    own_ok: np.ndarray  # the player is rated on this list at period start
    white_score: np.ndarray  # float64, per game (a side's score: `_score_at`)


@dataclass(frozen=True)
class _Sides(_Coded):
    """Steps 1-3 for both sides of every game (side-major layout, see `side_codes`).

    Flags that are the same for both sides of a game (both players rated, the 600-point rule,
    counted) are kept once per game; a side's opponent is the other half (`_opponent_index`).
    """

    excluded: np.ndarray  # per game: the 600-point rule (rapid/blitz)
    counted: np.ndarray  # per game: both players rated and not excluded
    d_raw: np.ndarray  # the dtype of own_rating, as are the next three
    d_used: np.ndarray  # meaningful where counted
    pd_h: np.ndarray  # hundredths
    delta_h: np.ndarray  # hundredths


def _opponent_index(idx: np.ndarray, n_games: int) -> np.ndarray:
    """Side-major index of the opponent of each side-major index `idx`."""
    return np.where(idx < n_games, idx + n_games, idx - n_games)


def _side_scores(white_score: np.ndarray, side: np.ndarray | int) -> np.ndarray:
    """Score S of the white (side 0) or black (side 1) player of games scored `white_score`."""
    return np.where(side == 0, white_score, 1.0 - white_score)


def _score_at(c: _Coded, idx: np.ndarray) -> np.ndarray:
    """Score S of the sides `idx` (side-major), from the games' white scores."""
    game = idx % c.n_games if c.n_games else idx
    return _side_scores(c.white_score[game], (idx >= c.n_games).astype(np.int8))


def _code_sides(g: pl.DataFrame, start: pl.DataFrame) -> _Coded:
    """Each side of each game of `g` as a row of `start` (`side_codes`), with its rating."""
    code = side_codes(g, start["player_id"])
    rating, ok = side_ratings(code, start["rating"])
    return _Coded(
        n_games=g.height,
        own_code=code,
        own_rating=rating,
        own_ok=ok,
        white_score=g["white_score"].to_numpy(),
    )


def _rate_sides(c: _Coded, standard: bool, rules: FideRules) -> _Sides:
    """The numpy twin of `rate_rows` on both sides of every game (integers throughout).

    In place where possible: every fresh array of this size costs page faults, so the
    opponents' ratings are never materialized (D of black is minus D of white).
    """
    n_games, rating = c.n_games, c.own_rating
    white, black = rating[:n_games], rating[n_games:]
    rated = c.own_ok[:n_games] & c.own_ok[n_games:]
    if standard:
        excluded = np.zeros(n_games, dtype=bool)
    else:
        gap = np.abs(white - black)
        hi = np.maximum(white, black)
        excluded = rated & (gap >= rules.fast_excluded_gap) & (hi > rules.fast_excluded_above)
    d_raw = np.empty_like(rating)
    np.subtract(black, white, out=d_raw[:n_games])
    np.negative(d_raw[:n_games], out=d_raw[n_games:])
    cap = rules.difference_cap
    d_used = np.clip(d_raw, -cap, cap)
    if standard:
        np.copyto(d_used, d_raw, where=rating >= rules.real_difference_from)
    work = np.clip(d_used, -PD_MAX_INDEX, PD_MAX_INDEX)
    work += PD_MAX_INDEX
    pd_h = _PD_BY_D.astype(rating.dtype)[work]
    delta_h = work  # reused: rint(S x 100) - pd_h
    hundredths = np.multiply(c.white_score, 100)
    np.rint(hundredths, out=hundredths)
    delta_h[:n_games] = hundredths
    np.subtract(1.0, c.white_score, out=hundredths)  # the black side's score
    hundredths *= 100
    np.rint(hundredths, out=hundredths)
    delta_h[n_games:] = hundredths
    delta_h -= pd_h
    return _Sides(
        n_games=n_games,
        own_code=c.own_code,
        own_rating=rating,
        own_ok=c.own_ok,
        white_score=c.white_score,
        excluded=excluded,
        counted=rated & ~excluded,
        d_raw=d_raw,
        d_used=d_used,
        pd_h=pd_h,
        delta_h=delta_h,
    )


_SUMS_AHEAD = 16  # games between prefetching a player's totals and adding to them


@njit(cache=True, nogil=True)
def _counted_sums_kernel(
    code: np.ndarray,
    rating: np.ndarray,
    ok: np.ndarray,
    white_score: np.ndarray,
    standard: bool,
    cap: int,
    real_from: int,
    gap_min: int,
    above: int,
    pd_by_d: np.ndarray,
    totals: np.ndarray,
) -> None:
    """Steps 1-3 of `_rate_sides` game by game, adding each counted side's game and ΔR
    (hundredths) to its player's row of `totals` (n, sum): side-major inputs, see `side_codes`.
    Both totals of a player share a cache line, prefetched `_SUMS_AHEAD` games early."""
    n_games = white_score.shape[0]
    pd_max = (pd_by_d.shape[0] - 1) // 2
    flat = totals.reshape(-1)
    for i in range(n_games):
        j = i + n_games
        a = i + _SUMS_AHEAD
        if a < n_games:
            if code[a] >= 0:
                prefetch(flat, 2 * code[a])
            if code[a + n_games] >= 0:
                prefetch(flat, 2 * code[a + n_games])
        if not (ok[i] and ok[j]):
            continue
        rw = np.int64(rating[i])
        rb = np.int64(rating[j])
        if not standard and abs(rw - rb) >= gap_min and max(rw, rb) > above:
            continue  # the 600-point rule
        sw = white_score[i]
        for side in range(2):
            own, d, score = (rw, rb - rw, sw) if side == 0 else (rb, rw - rb, 1.0 - sw)
            if not (standard and own >= real_from):
                d = min(max(d, -cap), cap)
            at = min(max(d, -pd_max), pd_max) + pd_max
            c = code[i] if side == 0 else code[j]
            totals[c, 0] += 1
            totals[c, 1] += np.int64(np.rint(score * 100.0)) - pd_by_d[at]


def counted_sums(
    c: _Coded, standard: bool, size: int, rules: FideRules
) -> tuple[np.ndarray, np.ndarray]:
    """Games counted (n, int32) and ΣΔR in hundredths (int64) per row 0..size-1 of the
    period-start list: steps 1-3 of `_rate_sides` and the per-player sums in one compiled
    pass, without the per-side arrays (the list does not need them; the explanations do)."""
    totals = aligned_empty((size, 2), np.int64, align=16)
    totals.fill(0)
    _counted_sums_kernel(
        c.own_code,
        c.own_rating,
        c.own_ok,
        c.white_score.astype(np.float64, copy=False),
        standard,
        rules.difference_cap,
        rules.real_difference_from,
        rules.fast_excluded_gap,
        rules.fast_excluded_above,
        _PD_BY_D_I64,
        totals,
    )
    return totals[:, 0].astype(np.int32), totals[:, 1].copy()


def _newcomer_rows(g: pl.DataFrame, s: _Coded) -> pl.DataFrame:
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
    opp_idx = _opponent_index(idx, n)
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
        pl.Series("score", _score_at(s, idx), dtype=pl.Float64),
    )


def _event_ends(g: pl.DataFrame) -> pl.LazyFrame:
    """event_id, event_end: the last game (played_at) in `g` of each event.

    One hash group-by over every game is cheaper than first singling out the events of the
    pooled games (that takes a join of every game's event id as well).
    """
    return g.lazy().group_by("event_id").agg(pl.col("played_at").max().alias("event_end"))


def _game_explanations(g: pl.DataFrame, s: _Sides, rules: FideRules) -> pl.DataFrame:
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
            "score": _score_at(s, idx),
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
        _hundredths_to_float(pl.when(counted_col).then(pl.col("pd_h"))).alias("pd"),
        "score",
        _hundredths_to_float(pl.when(counted_col).then(pl.col("delta_h"))).alias("delta_r"),
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


def _newcomer_pool(
    g: pl.DataFrame,
    sides: _Coded,
    start: pl.DataFrame,
    pool: pl.DataFrame | None,
    event_ends: Future[pl.DataFrame],
    period: str,
    rules: FideRules,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The newcomer pool (§8.2) after the period: (newcomers evaluated, published, pool out).

    This period's games of players absent from `start` against rated opponents join the pool
    carried from the previous period, the rolling window is applied and every pooled player
    is evaluated (`_evaluate_newcomers`); `event_ends` yields `_event_ends(g)`.
    """
    p_idx = _period_index(period)
    new_df = _newcomer_rows(g, sides)
    pool_in = pool if pool is not None else _empty(FIDE_POOL_SCHEMA)
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
            .join(event_ends.result().lazy(), on="event_id", how="left")
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
    _period_index(period)
    return select_rated_games(games, period, rating_list).collect()


def fide_game_explanations(
    games: pl.DataFrame | pl.LazyFrame,
    state: pl.DataFrame,
    period: str,
    rating_list: str,
    standard_state: pl.DataFrame | None = None,
    rules: FideRules = FIDE_RULES,
) -> pl.DataFrame:
    """The per-game explanations of one period of one FIDE list (FIDE_GAME_EXPLANATION_SCHEMA).

    One row per player rated at period start per rated game of the period, in game order
    (white before black): opponent, ratings used, D, PD, ΔR, and why a game did not count.
    Computed from the same inputs as `fide_period` (`games`, the period-start `state`,
    `standard_state` for rapid/blitz) with the same steps, without computing the list: the
    counted ΔR of a player sum to the `sum_delta_r` of their per-period explanation.
    """
    standard = rating_list == "standard"
    g = _period_games(games, period, rating_list)
    start = _period_start(g, state, period, standard, standard_state)
    sides = _rate_sides(_code_sides(g, start), standard, rules)
    return _game_explanations(g, sides, rules).cast(FIDE_GAME_EXPLANATION_SCHEMA)


def fide_period(
    games: pl.DataFrame | pl.LazyFrame,
    state: pl.DataFrame,
    players: pl.DataFrame | None,
    period: str,
    rating_list: str,
    standard_state: pl.DataFrame | None = None,
    pool: pl.DataFrame | None = None,
    rules: FideRules = FIDE_RULES,
    explain: bool = True,
) -> FidePeriodResult:
    """Rate one period of one FIDE list (RULES §3), vectorized, from the period-start `state`.

    `games`: GAMES_SCHEMA columns (at least game_id, tournament_id, played_at, period, white_id,
    black_id, white_score, rating_list, status, rated); the engine filters `period` and
    `rating_list`. `players`: player_id, birth_year (junior K), or None. `standard_state`: the
    standard list in force at period start (seeds rapid/blitz, step 7). `pool`: the newcomer
    pool returned by the previous period. `explain=False` computes the list without the
    per-game explanation table (`fide_game_explanations` builds the same table on its own);
    `explain=True` builds it from the same rated sides, as the pipeline does.
    """
    standard = rating_list == "standard"
    g = _period_games(games, period, rating_list)
    p_idx = _period_index(period)
    # The steps of `fide_game_explanations`, plus two jobs on a worker thread (Polars releases
    # the GIL), in order: the events' end dates, which need only the games, beside the id
    # coding; then the newcomer pool, which needs only the coded sides, beside steps 1-4.
    with ThreadPoolExecutor(max_workers=1) as worker:
        ends_job = worker.submit(_event_ends(g).collect)
        start = _period_start(g, state, period, standard, standard_state)
        coded = _code_sides(g, start)
        pool_job = worker.submit(_newcomer_pool, g, coded, start, pool, ends_job, period, rules)
        n_arr, sum_arr = counted_sums(coded, standard, start.height, rules)
        per = _per_player(start, n_arr, sum_arr, players, period, rules).collect()
        game_expl = (
            _game_explanations(g, _rate_sides(coded, standard, rules), rules)
            if explain
            else _empty(FIDE_GAME_EXPLANATION_SCHEMA)
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
    everyone = pl.concat([per, published_rows.cast(per.schema)]).sort("player_id")
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
        _hundredths_to_float(pl.col("sum_delta_h")).alias("sum_delta_r"),
        (pl.col("change_h").cast(pl.Float64) / 100).alias("change_exact"),
        "change",
        "rating_after",
        "dropped",
        "newcomer",
        pl.col("seeded").alias("seeded_from_standard"),
    ).cast(FIDE_PLAYER_EXPLANATION_SCHEMA)

    dropped = (
        everyone.filter(pl.col("dropped"))
        .select(
            "player_id",
            pl.col("rating_before").alias("last_rating"),
            pl.col("rating_after").alias("new_rating"),
            pl.format(
                "new rating {} is below the floor " + str(rules.floor), pl.col("rating_after")
            ).alias("reason"),
        )
        .cast(FIDE_DROPPED_SCHEMA)
    )

    return FidePeriodResult(
        period=period,
        rating_list=rating_list,
        state=new_state,
        list_rows=list_rows,
        game_explanations=game_expl.cast(FIDE_GAME_EXPLANATION_SCHEMA),
        player_explanations=player_expl,
        newcomers=newcomers,
        pool=pool_out,
        dropped=dropped,
    )


def _evaluate_newcomers(pool: pl.DataFrame, rules: FideRules) -> pl.DataFrame:
    """Initial ratings (§8.2) for every pooled player; zero-score first events disregarded.

    The first event is the earliest event (end date, then id) among the player's pooled games.
    `pool`: FIDE_POOL_SCHEMA plus `_new` (this period's game). Returns FIDE_NEWCOMER_SCHEMA
    plus `_games_new` (the player's games of this period), sorted by player_id.
    One group-by per event and one per player: the disregarded event's totals are subtracted
    from the player's, instead of marking the pooled games and aggregating them again.
    """
    if pool.height == 0:
        return _empty({**FIDE_NEWCOMER_SCHEMA, "_games_new": pl.Int32})
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
    # p = (points + hyp_n/2) / (n + hyp_n): the hypothetical games are draws.
    p_h = div_round_half_away_expr(100 * (pl.col("points2") + hyp_n), 2 * den)
    out = (
        agg.with_columns(p_h.alias("p_h"))
        .with_columns(dp_expr(pl.col("p_h")).alias("dp"))
        .with_columns(
            pl.min_horizontal(
                div_round_half_away_expr(
                    pl.col("opponents_sum") + hyp_sum + pl.col("dp") * den, den
                ),
                pl.lit(rules.newcomer_max),
            ).alias("ru")
        )
        .with_columns(
            ((pl.col("n") >= rules.newcomer_min_games) & (pl.col("ru") >= rules.floor)).alias(
                "published"
            ),
            round_half_away_expr(
                (pl.col("opponents_sum") + hyp_sum).cast(pl.Float64) / den, 2
            ).alias("ra"),
            (pl.col("p_h").cast(pl.Float64) / 100).alias("p"),
        )
    )
    return (
        out.select(*FIDE_NEWCOMER_SCHEMA, "_games_new")
        .cast({**FIDE_NEWCOMER_SCHEMA, "_games_new": pl.Int32})
        .sort("player_id")
        .collect()
    )


# --- calculator (RULES §7) --------------------------------------------------------------------


def fide_calculator(
    rating: int, k: int, games: list[tuple[int, float]], rules: FideRules = FIDE_RULES
) -> dict:
    """The seed's FIDE calculator for one tournament: per-game D, PD, dR; K x n cap; rounding.

    As the seed, the 400 cap applies below 2650 and the change is rounded once per tournament.
    """
    rows = pl.LazyFrame(
        {
            "own_rating": [rating] * len(games),
            "opponent_rating": [int(o) for o, _ in games],
            "score": [float(s) for _, s in games],
        },
        schema={"own_rating": pl.Int64, "opponent_rating": pl.Int64, "score": pl.Float64},
    )
    rated = rate_rows(rows, rules, pl.col("own_rating") >= rules.real_difference_from).collect()
    n = rated.height
    k_used = pl.select(k_capped_expr(pl.lit(k), pl.lit(n), rules)).item()
    sum_h = int(rated["delta_h"].sum()) if n else 0
    change_h = k_used * sum_h
    change = round_half_away(Fraction(change_h, 100))
    return {
        "rating": rating,
        "games": [
            {
                "opponent": int(r["opponent_rating"]),
                "score": float(r["score"]),
                "D_raw": int(r["d_raw"]),
                "D": int(r["d_used"]),
                "PD": r["pd_h"] / 100,
                "delta_r": r["delta_h"] / 100,
            }
            for r in rated.iter_rows(named=True)
        ],
        "k_requested": k,
        "k": int(k_used),
        "sum_delta_r": sum_h / 100,
        "change_exact": change_h / 100,
        "change": int(change),
        "new_rating": rating + int(change),
    }
