"""UKD rules (RULES §4, TK-PRS-05 as the seed describes it) as data: every constant in one frozen
object, and the schemas of what a UKD period reads and writes.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from rating_core.schemas import TableSchema


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

UKD_STATE_SCHEMA: TableSchema = {"player_id": pl.String, "rating": pl.Int32}

UKD_POOL_SCHEMA: TableSchema = {
    "player_id": pl.String,  # the player without UKD
    "game_id": pl.String,
    "period": pl.String,
    "opponent_id": pl.String,
    "opponent_rating": pl.Int32,  # opponent's UKD at the start of `period`
    "score": pl.Float64,
}

UKD_LIST_SCHEMA: TableSchema = {
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

UKD_GAME_EXPLANATION_SCHEMA: TableSchema = {
    "game_id": pl.String,
    "event_id": pl.String,
    "player_id": pl.String,
    "opponent_id": pl.String,
    "own_rating": pl.Int32,
    "opponent_rating": pl.Int32,  # null: opponent without UKD
    "opponent_capped": pl.Int32,  # what the opponent counts as (null: without UKD)
    "score": pl.Float64,
}

UKD_TOURNAMENT_EXPLANATION_SCHEMA: TableSchema = {
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

UKD_PLAYER_EXPLANATION_SCHEMA: TableSchema = {
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

UKD_NEWCOMER_SCHEMA: TableSchema = {
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
