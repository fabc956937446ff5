"""FIDE rules (RULES §3) as data: every constant in one frozen object, and the schemas of what a
FIDE period reads and writes.

- `FIDE_RULES` (`FideRules`): the numbers of the FIDE Rating Regulations the engine applies.
- `FIDE_STATE_SCHEMA`: what a published list holds and the next period starts from
  (player_id, rating, rated_games, peak_rating, last_played_period, listed_since).
- `FIDE_POOL_SCHEMA`: games of unrated players against rated opponents (newcomer pool).
- `FIDE_LIST_SCHEMA`, `FIDE_GAME_EXPLANATION_SCHEMA`, `FIDE_PLAYER_EXPLANATION_SCHEMA`,
  `FIDE_NEWCOMER_SCHEMA`, `FIDE_DROPPED_SCHEMA`: the tables of `fide_period`'s result.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from rating_core.schemas import UTC_TIME, TableSchema


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

FIDE_STATE_SCHEMA: TableSchema = {
    "player_id": pl.String,
    "rating": pl.Int32,
    "rated_games": pl.Int32,  # career count on this list; null = unknown (treated as >= 30)
    "peak_rating": pl.Int32,  # highest rating ever published on this list
    "last_played_period": pl.String,  # last period with a rated game; null = unknown
    "listed_since": pl.String,  # first period this state knows the player (inactivity reference)
}

FIDE_POOL_SCHEMA: TableSchema = {
    "player_id": pl.String,  # the unrated player
    "game_id": pl.String,
    "event_id": pl.String,  # tournament_id, or the game id for a game outside a tournament
    "event_end": UTC_TIME,  # last game of the event in its period
    "period": pl.String,
    "opponent_id": pl.String,
    "opponent_rating": pl.Int32,  # opponent's rating at the start of `period`
    "score": pl.Float64,
}

FIDE_LIST_SCHEMA: TableSchema = {
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

FIDE_GAME_EXPLANATION_SCHEMA: TableSchema = {
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

FIDE_PLAYER_EXPLANATION_SCHEMA: TableSchema = {
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

FIDE_NEWCOMER_SCHEMA: TableSchema = {
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

FIDE_DROPPED_SCHEMA: TableSchema = {
    "player_id": pl.String,
    "last_rating": pl.Int32,  # rating on the previous list
    "new_rating": pl.Int32,  # computed rating, below the floor
    "reason": pl.String,
}
