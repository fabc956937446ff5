"""Site rating rules (RULES §1 weights, §2) as data: every constant in one frozen object, the
numbers a human carries, why a game is kept unrated or refused (with the reasons the tables
show), and the schemas of what a site replay reads and writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import polars as pl

from rating_core.schemas import CATEGORIES, TableSchema, empty
from rating_core.timecontrol import TIME_CONTROL_RULES

SITE_ELO = "site-elo"
SITE_NUMBERS: list[str] = [SITE_ELO] + [f"site-{c}" for c in CATEGORIES]
"""Every number a human carries: index 0 is the site Elo, index 1 + i the category CATEGORIES[i]."""


@dataclass(frozen=True)
class SiteRules:
    """Every constant of the site rating system (RULES §1 weights, §2), kept in one place."""

    start: float = 1500.0
    floor: float = 100.0
    k_new: float = 32.0
    k_established: float = 20.0
    k_threshold: int = 30  # K is k_new while fewer than this many rated games before the game
    provisional_below: int = 10
    min_plies: int = 2  # fewer plies: aborted before both sides moved
    bot_no_move_min_plies: int = 18  # from this many plies on a missing bot move is a human loss
    weights: tuple[tuple[str, float], ...] = TIME_CONTROL_RULES.weights  # RULES §1 table

    @property
    def bot_no_move_from_move(self) -> int:
        """The move from which a missing bot move is a human loss (after that many plies)."""
        return self.bot_no_move_min_plies // 2 + 1

    def weight(self, category: str) -> float:
        """The category's weight in the site Elo (RULES §1 table)."""
        return dict(self.weights)[category]

    def k(self, games_before: int) -> float:
        """K for a number with `games_before` rated games before this game."""
        return self.k_new if games_before < self.k_threshold else self.k_established


SITE_RULES = SiteRules()

SITE_STATE_SCHEMA: TableSchema = {
    "player_id": pl.String,
    "number": pl.String,  # one of SITE_NUMBERS
    "rating": pl.Float64,  # unrounded
    "games": pl.Int64,  # rated games in this number so far (career)
    "last_period": pl.String,  # period of the last rated game in this number
}

SITE_HISTORY_SCHEMA: TableSchema = {
    "game_id": pl.String,
    "played_at": pl.Datetime("us", "UTC"),
    "period": pl.String,
    "player_id": pl.String,
    "number": pl.String,
    "opponent_id": pl.String,
    "opponent_is_bot": pl.Boolean,
    "rating_before": pl.Float64,
    "opponent_rating": pl.Float64,
    "expected": pl.Float64,
    "k": pl.Float64,
    "weight": pl.Float64,
    "score": pl.Float64,
    "raw_change": pl.Float64,  # K x weight x (S - E), before the floor
    "change": pl.Float64,  # applied: rating_after - rating_before
    "rating_after": pl.Float64,
    "games_before": pl.Int64,
}

SITE_EXCLUDED_SCHEMA: TableSchema = {
    "game_id": pl.String,
    "period": pl.String,
    "reason": pl.String,
}

SITE_REJECTED_SCHEMA: TableSchema = {
    "game_id": pl.String,
    "period": pl.String,
    "source_file": pl.String,
    "source_line": pl.Int64,
    "value": pl.String,
    "reason": pl.String,
}

SITE_LIST_SCHEMA: TableSchema = {
    "list": pl.String,
    "period": pl.String,
    "player_id": pl.String,
    "rating": pl.Int64,
    "rating_exact": pl.Float64,
    "games": pl.Int64,
    "total_games": pl.Int64,
    "provisional": pl.Boolean,
    "display": pl.String,
    "change": pl.Float64,
}


class Exclusion(Enum):
    """Why a platform game is kept but not rated: its code in the classification kernel (0 is
    rated) and its reason, whose numbers come from the rules (`text`)."""

    MODERATION = 1, "annulled by moderation"
    CASUAL = 2, "casual game"
    ABORTED = 3, "aborted"
    STATUS_ANNULLED = 4, "annulled"
    FORFEIT = 5, "forfeit, not rated"
    BYE = 6, "bye, not rated"
    ABORT_TERMINATION = 7, "aborted (termination abort)"
    FEW_PLIES = 8, "aborted before both sides moved (fewer than {rules.min_plies} plies)"
    OTB = 9, "over-the-board game not confirmed by both players"
    BOTH_BOTS = 10, "both sides are bots"
    BOT_NO_MOVE = 11, "bot move missing before move {rules.bot_no_move_from_move}: annulled"
    BOT_RATING = 12, "bot without a fixed rating"
    UNRATED = 13, "kept unrated by its reader"  # placeholder: each game shows its unrated_reason

    def __init__(self, code: int, template: str) -> None:
        self.code = code
        self.template = template

    def text(self, rules: SiteRules = SITE_RULES) -> str:
        """The reason as the excluded table shows it under `rules`."""
        return self.template.format(rules=rules)


class Rejection(Enum):
    """Why a platform game is a contradictory record for the quarantine: its code in the
    classification kernel (0 is none) and its reason."""

    BOT_LOST = 1, "contradictory record: a bot never loses on time or by abandonment"
    MISSING = 2, "missing player id, time or period"
    SELF = 3, "a player cannot play themselves"
    NO_BOT = 4, "termination bot_no_move in a game without a bot"
    NO_PLIES = 5, "termination bot_no_move without a ply count"
    NO_RESULT = 6, "rated game without a result"
    NO_CATEGORY = 7, "rated game without a site category"

    def __init__(self, code: int, text: str) -> None:
        self.code = code
        self._text = text

    def text(self) -> str:
        """The reason as the quarantine shows it."""
        return self._text


# The reasons under the default rules (tests and the run summary match on them).
R_MODERATION = Exclusion.MODERATION.text()
R_CASUAL = Exclusion.CASUAL.text()
R_ABORTED = Exclusion.ABORTED.text()
R_STATUS_ANNULLED = Exclusion.STATUS_ANNULLED.text()
R_FORFEIT = Exclusion.FORFEIT.text()
R_BYE = Exclusion.BYE.text()
R_ABORT_TERMINATION = Exclusion.ABORT_TERMINATION.text()
R_FEW_PLIES = Exclusion.FEW_PLIES.text()
R_OTB = Exclusion.OTB.text()
R_BOTH_BOTS = Exclusion.BOTH_BOTS.text()
R_BOT_NO_MOVE = Exclusion.BOT_NO_MOVE.text()
R_BOT_RATING = Exclusion.BOT_RATING.text()
R_UNRATED = Exclusion.UNRATED.text()
REJ_BOT_LOST = Rejection.BOT_LOST.text()
REJ_NO_BOT = Rejection.NO_BOT.text()
REJ_NO_PLIES = Rejection.NO_PLIES.text()
REJ_NO_RESULT = Rejection.NO_RESULT.text()
REJ_NO_CATEGORY = Rejection.NO_CATEGORY.text()
REJ_SELF = Rejection.SELF.text()
REJ_MISSING = Rejection.MISSING.text()


def empty_site_state() -> pl.DataFrame:
    """The state before any game: nobody has a number yet."""
    return empty(SITE_STATE_SCHEMA)
