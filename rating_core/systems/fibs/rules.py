"""FIBS rating rules (RULES §5) as data: every constant in one frozen object, why a match
changes nothing or is refused (with the reasons the tables show), and the schemas of what a
FIBS replay reads and writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import polars as pl

from rating_core.schemas import UTC_TIME, TableSchema, empty


@dataclass(frozen=True)
class FibsRules:
    """Every constant of the FIBS rating (RULES §5), kept in one place."""

    start: float = 1500.0
    scale: float = 2000.0  # P = 1 - 1 / (10^((A - B) * sqrt(N) / scale) + 1)
    value_factor: float = 4.0  # V = value_factor * sqrt(N)
    multiplier_max: float = 5.0  # m = max(multiplier_min, multiplier_max - (E + N) / divisor)
    multiplier_min: float = 1.0
    experience_divisor: float = 100.0
    provisional_below: int = 50  # experience
    leaderboard_min_experience: int = 20
    fair_play_max: int = 3  # rating-changing matches per pair within the window
    fair_play_window_us: int = 24 * 3600 * 1_000_000  # 24 hours, in microseconds

    @property
    def fair_play_window_hours(self) -> float:
        """The fair-play window in hours."""
        return self.fair_play_window_us / 3_600_000_000

    def fair_play_reason(self) -> str:
        """Why a match kept both ratings unchanged (the history's reason)."""
        return (
            f"fair play: {self.fair_play_max} rating-changing matches between these players "
            f"in the last {self.fair_play_window_hours:g} hours"
        )


FIBS_RULES = FibsRules()

FIBS_STATE_SCHEMA: TableSchema = {
    "player_id": pl.String,
    "rating": pl.Float64,  # unrounded
    "experience": pl.Int64,  # sum of the lengths of all ranked matches
    "matches": pl.Int64,  # ranked matches so far (rating-changing or not)
}

FIBS_PAIR_STATE_SCHEMA: TableSchema = {
    "player_a": pl.String,  # the smaller id of the pair
    "player_b": pl.String,
    "ended_at": UTC_TIME,  # a recent rating-changing match of the pair
}

FIBS_HISTORY_SCHEMA: TableSchema = {
    "match_id": pl.String,
    "ended_at": UTC_TIME,
    "period": pl.String,
    "player_id": pl.String,
    "opponent_id": pl.String,
    "won": pl.Boolean,
    "length": pl.Int32,
    "rating_before": pl.Float64,
    "opponent_rating": pl.Float64,
    "p": pl.Float64,  # own chance to win the match
    "v": pl.Float64,
    "m": pl.Float64,
    "experience_before": pl.Int64,
    "counted": pl.Boolean,  # False: the fair-play rule kept ratings unchanged
    "reason": pl.String,
    "change": pl.Float64,
    "rating_after": pl.Float64,
}

FIBS_EXCLUDED_SCHEMA: TableSchema = {
    "match_id": pl.String,
    "period": pl.String,
    "reason": pl.String,
}

FIBS_LIST_SCHEMA: TableSchema = {
    "list": pl.String,
    "period": pl.String,
    "player_id": pl.String,
    "rating": pl.Float64,  # one decimal, half away from zero
    "rating_exact": pl.Float64,
    "experience": pl.Int64,
    "provisional": pl.Boolean,
    "leaderboard_eligible": pl.Boolean,
    "games": pl.Int64,  # ranked matches in the period
    "total_matches": pl.Int64,
    "change": pl.Float64,
}


class Exclusion(Enum):
    """Why a match changes nothing: its code in the classification kernel (0 is ranked) and
    its reason."""

    NOT_RANKED = 1, "not a ranked match"
    AI = 2, "match against the AI"

    def __init__(self, code: int, text: str) -> None:
        self.code = code
        self._text = text

    def text(self) -> str:
        """The reason as the excluded table shows it."""
        return self._text


R_UNRANKED = Exclusion.NOT_RANKED.text()
R_AI = Exclusion.AI.text()
R_FAIR_PLAY = FIBS_RULES.fair_play_reason()  # under the default rules
REJ_INVALID = "missing player, time, period or length, or a player against themselves"


def empty_fibs_state() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The (player state, pair state) before any match."""
    return empty(FIBS_STATE_SCHEMA), empty(FIBS_PAIR_STATE_SCHEMA)
