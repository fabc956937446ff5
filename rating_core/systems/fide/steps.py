"""FIDE steps 1-4 (RULES §3), shared by the FIDE, UKD and club engines so no rule is written twice.

Steps 1-3 (D = opponent - own rating, capped at 400 unless the real difference applies; PD from
the table; ΔR = S - PD, all in integer hundredths) exist in three versions, side by side here:

- `rate_rows`: Polars, on long rows (one per player per game); the club engine and the calculator.
- `rate_sides`: numpy, on both sides of every game coded against the period-start list (the
  per-game explanations of the FIDE list), with the 600-point rule of rapid and blitz.
- `counted_sums` (`_counted_sums_kernel`, per side `_side_steps`): numba, one compiled pass
  adding each counted side's game and ΔR to its player (the FIDE list itself).

The rules are those of one era (`FideRules`, RULES §3.3): where it limits the 400-point cap to
one game per tournament (2022-01 to 2024-02), `one_game_uncapped` marks the sides using the real
difference for the numpy and numba versions, and `rate_rows` finds them over `event_keys`.
`tests/rating_core/systems/fide/test_steps.py` checks that the three agree side by side, under every era. Step 4 (K and its cap)
is `k_base_exprs` and `k_capped_expr`; `select_rated_games` and `two_sided` pick the games a
period rates and lay them out one row per player per game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl
from numba import njit

from rating_core.kernels.arrays import readonly
from rating_core.kernels.codes import positions_in
from rating_core.kernels.intrinsics import aligned_empty, prefetch
from rating_core.systems.fide.rules import FideRules
from rating_core.systems.fide.tables import PD_HIGH_BY_ABS_D, PD_MAX_INDEX, pd_hundredths_expr

# --- the games a period rates --------------------------------------------------------------------


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


def with_ratings(games: pl.LazyFrame, ratings: pl.LazyFrame) -> pl.LazyFrame:
    """`two_sided` rows of `games` with `own_rating` and `opponent_rating`: each side's `rating`
    in `ratings` (player_id, rating), null for a player it does not hold (the club and UKD
    engines rate from such a period-start table)."""
    ratings = ratings.select("player_id", "rating")
    both = games.join(
        ratings.rename({"player_id": "white_id", "rating": "white_rating"}),
        on="white_id",
        how="left",
    ).join(
        ratings.rename({"player_id": "black_id", "rating": "black_rating"}),
        on="black_id",
        how="left",
    )
    return two_sided(
        both,
        {"own_rating": "white_rating", "opponent_rating": "black_rating"},
        {"own_rating": "black_rating", "opponent_rating": "white_rating"},
    )


# --- steps 1-3, Polars ---------------------------------------------------------------------------


def real_difference_expr(rules: FideRules, standard: bool | pl.Expr = True) -> pl.Expr:
    """Rows whose player uses the real difference by rating (from 2650 on the standard list,
    where the era has that rule): the `real_difference` of `rate_rows`."""
    if rules.real_difference_from is None:
        return pl.lit(False)
    flag = standard if isinstance(standard, pl.Expr) else pl.lit(standard)
    return flag & (pl.col("own_rating") >= rules.real_difference_from)


def rate_rows(
    rows: pl.LazyFrame,
    rules: FideRules,
    real_difference: bool | pl.Expr,
    event_keys: Sequence[str] = (),
) -> pl.LazyFrame:
    """Steps 1-3 per row: d_raw, d_used (400 cap unless `real_difference`), pd_h, delta_h.

    Needs own_rating, opponent_rating and score; pd_h and delta_h are integer hundredths.
    `real_difference` is a boolean expression (or constant) saying which rows skip the cap.
    Where the era caps the higher-rated side in one game per tournament only
    (`cap_one_game_per_event`), the rows of one player in one tournament share `event_keys`
    (none: every row is that player's tournament): their first row with the greatest |D| above
    the cap keeps it, the others use the real difference. The rows are counted games.
    """
    cap = rules.difference_cap
    d_raw = (pl.col("opponent_rating").cast(pl.Int64) - pl.col("own_rating").cast(pl.Int64)).alias(
        "d_raw"
    )
    real = real_difference if isinstance(real_difference, pl.Expr) else pl.lit(real_difference)
    if rules.cap_one_game_per_event:
        higher = pl.col("d_raw") < -cap  # the player is the higher side, beyond the cap
        greatest = pl.when(higher).then(-pl.col("d_raw")).otherwise(-1).arg_max()
        keeps_cap = pl.int_range(pl.len()) == greatest
        if event_keys:
            keeps_cap = keeps_cap.over(list(event_keys))
        real = real | (higher & ~keeps_cap)
    d_used = pl.when(real).then(pl.col("d_raw")).otherwise(pl.col("d_raw").clip(-cap, cap))
    return (
        rows.with_columns(d_raw)
        .with_columns(d_used.alias("d_used"))
        .with_columns(pd_hundredths_expr(pl.col("d_used")).alias("pd_h"))
        .with_columns(
            ((pl.col("score") * 100).round(0).cast(pl.Int64) - pl.col("pd_h")).alias("delta_h")
        )
    )


# --- steps 1-3, numpy ----------------------------------------------------------------------------


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
    largest = rating.abs().max()  # None when every rating is missing
    small = not isinstance(largest, int) or largest < 2**30
    r = rating.cast(pl.Int32 if small else pl.Int64)
    valid = np.append(r.is_not_null().to_numpy(), False)  # code -1 reads the last entry
    values = np.append(r.fill_null(0).to_numpy(), 0)
    return values[code], valid[code]


# PD in hundredths by D = opponent - own rating, at index D + PD_MAX_INDEX (|D| clipped to
# PD_MAX_INDEX, "> 735"): the higher-rated side (D <= 0) reads H, the lower side L = 1 - H.
_PD_BY_D = np.concatenate((PD_HIGH_BY_ABS_D[::-1], 100 - PD_HIGH_BY_ABS_D[1:]))
_PD_BY_D_I64 = _PD_BY_D.astype(np.int64)


@dataclass(frozen=True)
class CodedSides:
    """Both sides of every game matched to the list in force at period start (side-major
    layout, see `side_codes`): what the newcomer pool needs, before steps 1-3."""

    n_games: int
    own_code: np.ndarray  # row of `start`, -1 unknown
    own_rating: np.ndarray  # int32 (int64 for huge ratings), 0 where own_ok is False
    own_ok: np.ndarray  # the player is rated on this list at period start
    white_score: np.ndarray  # float64, per game (a side's score: `score_at`)


@dataclass(frozen=True)
class RatedSides(CodedSides):
    """Steps 1-3 for both sides of every game (side-major layout, see `side_codes`).

    Flags that are the same for both sides of a game (both players rated, the 600-point rule,
    counted) are kept once per game; a side's opponent is the other half (`opponent_index`).
    """

    excluded: np.ndarray  # per game: the 600-point rule (rapid/blitz)
    counted: np.ndarray  # per game: both players rated and not excluded
    d_raw: np.ndarray  # the dtype of own_rating, as are the next three
    d_used: np.ndarray  # meaningful where counted
    pd_h: np.ndarray  # hundredths
    delta_h: np.ndarray  # hundredths


def opponent_index(idx: np.ndarray, n_games: int) -> np.ndarray:
    """Side-major index of the opponent of each side-major index `idx`."""
    return np.where(idx < n_games, idx + n_games, idx - n_games)


def _side_scores(white_score: np.ndarray, side: np.ndarray | int) -> np.ndarray:
    """Score S of the white (side 0) or black (side 1) player of games scored `white_score`."""
    return np.where(side == 0, white_score, 1.0 - white_score)


def score_at(c: CodedSides, idx: np.ndarray) -> np.ndarray:
    """Score S of the sides `idx` (side-major), from the games' white scores."""
    game = idx % c.n_games if c.n_games else idx
    return _side_scores(c.white_score[game], (idx >= c.n_games).astype(np.int8))


def code_sides(g: pl.DataFrame, start: pl.DataFrame) -> CodedSides:
    """Each side of each game of `g` as a row of `start` (`side_codes`), with its rating."""
    code = side_codes(g, start["player_id"])
    rating, ok = side_ratings(code, start["rating"])
    return CodedSides(
        n_games=g.height,
        own_code=code,
        own_rating=rating,
        own_ok=ok,
        white_score=g["white_score"].to_numpy(),
    )


def _fast_excluded(
    white: np.ndarray, black: np.ndarray, rated: np.ndarray, standard: bool, rules: FideRules
) -> np.ndarray:
    """Per game: not rated by the 600-point rule (rapid and blitz, in the eras that have it)."""
    if standard or rules.fast_excluded_gap is None:
        return np.zeros(white.shape[0], dtype=bool)
    gap = np.abs(white - black)
    hi = np.maximum(white, black)
    return rated & (gap >= rules.fast_excluded_gap) & (hi > rules.fast_excluded_above)


def one_game_uncapped(
    g: pl.DataFrame, c: CodedSides, standard: bool, rules: FideRules
) -> np.ndarray | None:
    """Side-major mask of the sides that use the real difference under the one-game limit of the
    400-point rule (2022-01 to 2024-02), or None when the era has no such limit or no side is
    affected: a player higher-rated by more than the cap in several counted games of one
    tournament (`event_id`) keeps the cap in the one with the greatest |D| (the first such game
    in input order on a tie, which changes no total); the lower side always keeps it."""
    if not rules.cap_one_game_per_event or not c.n_games:
        return None
    n_games = c.n_games
    rating = c.own_rating.astype(np.int64)
    white, black = rating[:n_games], rating[n_games:]
    rated = c.own_ok[:n_games] & c.own_ok[n_games:]
    counted = rated & ~_fast_excluded(white, black, rated, standard, rules)
    d_white = black - white  # opponent minus own, for white
    cap = rules.difference_cap
    higher = np.concatenate((counted & (d_white < -cap), counted & (d_white > cap)))
    idx = np.flatnonzero(higher)
    # only a player higher beyond the cap in two games or more can lose the cap in one
    repeated = np.bincount(c.own_code[idx]) >= 2 if idx.size else np.zeros(0, dtype=bool)
    idx = idx[repeated[c.own_code[idx]]] if idx.size else idx
    if not idx.size:
        return None
    # and only in one tournament: the sides whose (player, tournament hash) is there twice or
    # more (a hash collision only adds sides to group exactly below, it never removes one);
    # in a large period almost every such pair is there once, and grouping them by the
    # tournament's name was most of this function's time
    game = idx % n_games
    events = g["event_id"].gather(game)
    pairs = pl.DataFrame({"player": c.own_code[idx], "event": events}).hash_rows()
    twice = pairs.is_duplicated().to_numpy()
    if not twice.any():
        return None
    idx, game, events = idx[twice], game[twice], events.filter(pl.Series(twice))
    higher[:] = False
    higher[idx] = True
    in_game_order = np.argsort(game, kind="stable")  # white before black within a game
    idx, game = idx[in_game_order], game[in_game_order]
    keeps_cap = (
        pl.DataFrame(
            {
                "idx": idx,
                "player": c.own_code[idx],
                "event": events.gather(in_game_order),
                "gap": np.abs(d_white[game]),
            }
        )
        .lazy()
        .group_by("player", "event")
        .agg(pl.col("idx").get(pl.col("gap").arg_max()))
        .collect()["idx"]
        .to_numpy()
    )
    higher[keeps_cap] = False
    return higher if higher.any() else None


def rate_sides(
    c: CodedSides, standard: bool, rules: FideRules, uncapped: np.ndarray | None = None
) -> RatedSides:
    """The numpy twin of `rate_rows` on both sides of every game (integers throughout).

    `uncapped` (side-major, `one_game_uncapped`) marks sides using the real difference under
    the one-game limit. In place where possible: every fresh array of this size costs page
    faults, so the opponents' ratings are never materialized (D of black is minus D of white).
    """
    n_games, rating = c.n_games, c.own_rating
    white, black = rating[:n_games], rating[n_games:]
    rated = c.own_ok[:n_games] & c.own_ok[n_games:]
    excluded = _fast_excluded(white, black, rated, standard, rules)
    d_raw = np.empty_like(rating)
    np.subtract(black, white, out=d_raw[:n_games])
    np.negative(d_raw[:n_games], out=d_raw[n_games:])
    cap = rules.difference_cap
    d_used = np.clip(d_raw, -cap, cap)
    if standard and rules.real_difference_from is not None:
        np.copyto(d_used, d_raw, where=rating >= rules.real_difference_from)
    if uncapped is not None:
        np.copyto(d_used, d_raw, where=uncapped)
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
    return RatedSides(
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


# --- steps 1-3, numba ----------------------------------------------------------------------------


_SUMS_AHEAD = 16  # games between prefetching a player's totals and adding to them


@njit(cache=True, nogil=True, inline="always")
def _side_steps(
    d_raw: int | np.integer,
    score: float | np.floating,
    real_difference: bool | np.bool_,
    cap: int,
    pd_by_d: np.ndarray,
) -> tuple[int | np.integer, int | np.integer, int | np.integer]:
    """Steps 1-3 for one side of one game: (D used, PD, ΔR), PD and ΔR in hundredths.

    `d_raw` is the opponent's rating minus the player's, `real_difference` skips the 400 cap;
    `pd_by_d` is `_PD_BY_D_I64`. Inlined into `_counted_sums_kernel` (numba IR), so the kernel
    pays no call; tests call it from Python to set the compiled steps beside the other two.
    """
    d = d_raw if real_difference else min(max(d_raw, -cap), cap)
    pd_max = (pd_by_d.shape[0] - 1) // 2
    pd_h = pd_by_d[min(max(d, -pd_max), pd_max) + pd_max]
    return d, pd_h, np.int64(np.rint(score * 100.0)) - pd_h


class CountedSides(NamedTuple):
    """The kernel's sides, side-major (white's rows, then black's; see `side_codes`)."""

    code: np.ndarray  # int32 row of the period-start list (-1: not on it)
    rating: np.ndarray  # the side's period-start rating
    ok: np.ndarray  # bool: the side may be counted
    white_score: np.ndarray  # float64, one per game
    uncapped: np.ndarray  # bool `one_game_uncapped` mask, or empty when no side is uncapped


class StepRules(NamedTuple):
    """The era's steps 1-3 as numbers (`FideRules`; `_NEVER` for a rule the era lacks)."""

    standard: (
        bool  # the standard list (the real difference above `real_from`), not the 600-point rule
    )
    cap: int  # the 400-point cap of D
    real_from: int  # from this rating the real difference is used (standard)
    gap_min: int  # the 600-point rule's difference (rapid and blitz)
    above: int  # ... when the higher rating is above this
    pd_by_d: np.ndarray  # `_PD_BY_D_I64`


@njit(cache=True, nogil=True)
def _counted_sums_kernel(sides: CountedSides, rules: StepRules, totals: np.ndarray) -> None:
    """Steps 1-3 of `rate_sides` game by game, adding each counted side's game and ΔR
    (hundredths) to its player's row of `totals` (n, sum), under the era's `rules`.
    Both totals of a player share a cache line, prefetched `_SUMS_AHEAD` games early."""
    code, rating, ok, white_score, uncapped = sides
    standard, cap, real_from, gap_min, above, pd_by_d = rules
    n_games = white_score.shape[0]
    any_uncapped = uncapped.shape[0] > 0
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
            real = (standard and own >= real_from) or (
                any_uncapped and uncapped[i if side == 0 else j]
            )
            delta_h = _side_steps(d, score, real, cap, pd_by_d)[2]
            c = code[i] if side == 0 else code[j]
            totals[c, 0] += 1
            totals[c, 1] += delta_h


_NEVER = np.iinfo(np.int64).max
"""A rating difference or rating no game reaches: a rule the era does not have, in the kernel."""


def counted_sums(
    c: CodedSides,
    standard: bool,
    size: int,
    rules: FideRules,
    uncapped: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Games counted (n, int32) and ΣΔR in hundredths (int64) per row 0..size-1 of the
    period-start list: steps 1-3 of `rate_sides` and the per-player sums in one compiled
    pass, without the per-side arrays (the list does not need them; the explanations do)."""
    totals = aligned_empty((size, 2), np.int64, align=16)
    totals.fill(0)
    real_from = rules.real_difference_from
    gap_min = rules.fast_excluded_gap
    sides = CountedSides(
        c.own_code,
        c.own_rating,
        c.own_ok,
        readonly(c.white_score.astype(np.float64, copy=False)),
        np.zeros(0, dtype=bool) if uncapped is None else uncapped,
    )
    step_rules = StepRules(
        standard,
        rules.difference_cap,
        _NEVER if real_from is None else real_from,
        _NEVER if gap_min is None else gap_min,
        rules.fast_excluded_above,
        _PD_BY_D_I64,
    )
    _counted_sums_kernel(sides, step_rules, totals)
    return totals[:, 0].astype(np.int32), totals[:, 1].copy()


# --- step 4 --------------------------------------------------------------------------------------


def k_base_exprs(rules: FideRules, year: int) -> tuple[pl.Expr, pl.Expr]:
    """Step 4's K and its reason, first matching rule wins, from period-start columns.

    Needs rating, rated_games (null = unknown, treated as completed), peak_rating and
    birth_year (null = not a junior); `year` is the calendar year of the period. Junior: until
    the end of the year of the 18th birthday (`junior_until_year_end`), else until the 18th
    birthday itself, which with the birth year alone is taken as the start of that year (a
    player is junior while birth_year + 18 is after `year`). An era with one K for everyone
    (`k_flat`) or without a junior rule (`k_junior` None) skips those rules.
    """
    if rules.k_flat is not None:  # rapid and blitz before 2022-10: one K for everyone
        return pl.lit(rules.k_flat, dtype=pl.Int32), pl.lit(f"K {rules.k_flat} for everyone")
    peak = pl.coalesce(pl.col("peak_rating"), pl.col("rating"))
    top = peak >= rules.top_peak
    if rules.k_junior is None:  # no junior rule in this era
        junior = pl.lit(False)
        k_junior = rules.k_default
    else:
        last_junior_year = pl.col("birth_year") + rules.junior_age
        if not rules.junior_until_year_end:
            last_junior_year = last_junior_year - 1
        junior = (last_junior_year >= year).fill_null(False) & (
            pl.col("rating") < rules.junior_below
        )
        k_junior = rules.k_junior
    new = (pl.col("rated_games") < rules.new_games).fill_null(False)
    k = (
        pl.when(top)
        .then(rules.k_established_top)
        .when(junior)
        .then(k_junior)
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
    """K lowered to the largest integer with K x n <= 700 when K x n exceeds it (K itself in
    an era without that cap)."""
    limit = rules.k_times_n_max
    if limit is None:
        return k.cast(pl.Int32)
    return pl.when((k * n > limit) & (n > 0)).then(pl.lit(limit) // n).otherwise(k).cast(pl.Int32)


def hundredths_to_float(expr: pl.Expr) -> pl.Expr:
    """Integer hundredths as a float with two decimals (display only; exact values stay ints)."""
    return (expr.cast(pl.Float64) / 100).round(2)
