"""Club rules (RULES §6) as data: start rating, floor and the FIDE formula constants they reuse,
and the schemas of what a club period reads and writes.

Differences from the FIDE list: the tournament is the unit, everyone is rated (new players
start at 1500 with 0 games), the 400 cap applies below 2650 on every list (the seed
calculator's rule; no 600-point rule), the floor is 100 and nobody is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from rating_core.schemas import TableSchema
from rating_core.systems.fide.rules import FIDE_RULES, FideRules


@dataclass(frozen=True)
class ClubRules:
    """Every number of RULES §6; the K rules and table come from the FIDE rules it embeds."""

    start_rating: int = 1500
    start_games: int = 0
    floor: int = 100
    formula: FideRules = field(default=FIDE_RULES)


CLUB_RULES = ClubRules()


CLUB_STATE_SCHEMA: TableSchema = {
    "player_id": pl.String,
    "rating": pl.Int32,
    "rated_games": pl.Int32,  # club games rated so far
    "peak_rating": pl.Int32,
}

CLUB_TOURNAMENT_PLAYER_SCHEMA: TableSchema = {
    "tournament_id": pl.String,
    "player_id": pl.String,
    "new_player": pl.Boolean,
    "rating_before": pl.Int32,
    "k_base": pl.Int32,
    "k_reason": pl.String,
    "n": pl.Int32,
    "k_used": pl.Int32,
    "sum_delta_r": pl.Float64,
    "change_exact": pl.Float64,
    "change": pl.Int32,
    "rating_after": pl.Int32,  # after the floor
}

CLUB_GAME_EXPLANATION_SCHEMA: TableSchema = {
    "tournament_id": pl.String,
    "game_id": pl.String,
    "player_id": pl.String,
    "opponent_id": pl.String,
    "own_rating": pl.Int32,
    "opponent_rating": pl.Int32,
    "d_raw": pl.Int64,
    "d_used": pl.Int64,
    "pd": pl.Float64,
    "score": pl.Float64,
    "delta_r": pl.Float64,
}

CLUB_LIST_SCHEMA: TableSchema = {
    "player_id": pl.String,
    "rating": pl.Int32,
    "games": pl.Int32,  # club games rated in the period
    "change": pl.Int32,  # sum of the period's rounded tournament changes
    "rated_games": pl.Int32,
    "peak_rating": pl.Int32,
    "provisional": pl.Boolean,  # always null
    "flag": pl.String,  # always null
}
