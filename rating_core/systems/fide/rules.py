"""FIDE rules (RULES §3, §3.3) as data: every constant of an era in one frozen object, the eras
by date, and the schemas of what a FIDE period reads and writes.

- `FIDE_ERAS_BY_LIST` (`FideRules` rows per list kind: standard, rapid, blitz): the rules of
  each era, by first period; `FIDE_ERAS` the standard list's. `rules_for_period`, `rules_on`
  pick one; `compression_for_list` the one-time compression due on a period's list,
  `fast_raise_for_list` the one-time raise of rapid and blitz to standard - 100 (2022-09).
- `FIDE_RULES`: the rules of the standard list in force today (the last era).
- `FIDE_STATE_SCHEMA`: what a published list holds and the next period starts from
  (player_id, rating, rated_games, peak_rating, last_played_period, listed_since).
- `FIDE_POOL_SCHEMA`: games of unrated players against rated opponents (newcomer pool).
- `FIDE_LIST_SCHEMA`, `FIDE_GAME_EXPLANATION_SCHEMA`, `FIDE_PLAYER_EXPLANATION_SCHEMA`,
  `FIDE_NEWCOMER_SCHEMA`, `FIDE_DROPPED_SCHEMA`: the tables of `fide_period`'s result.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Any

import polars as pl

from rating_core.periods import next_period, period_index, period_of_date
from rating_core.schemas import UTC_TIME, TableSchema


@dataclass(frozen=True)
class ListCompression:
    """A one-time raise of a published list (RULES §3.3): every rating below `below` gains
    `numerator / denominator` x (below - R), rounded half away from zero."""

    below: int = 2000
    numerator: int = 2  # 0.4 = 2 / 5, kept exact
    denominator: int = 5


@dataclass(frozen=True)
class FastListRaise:
    """The one-time raise of a rapid or blitz list (RULES §3.3, the era of 2022-10): a rating
    more than `gap` below the same player's standard rating on the same period's standard list
    is raised to that standard rating - `gap`."""

    gap: int = 100


@dataclass(frozen=True)
class FideRules:
    """Every number and switch of one FIDE era (RULES §3, §3.3), in one place.

    The defaults are the rules in force today (the era of 2025-10); `FIDE_ERAS` lists every era
    by its first period, and `rules_for_period` / `rules_on` pick the one in force. `None` turns
    a rule off: no real difference from 2650, no 600-point rule, no K x n cap, no upper limit of
    a first rating, no +20 bonus of the old first-rating formula.
    """

    starts: str = "2025-10"  # first period (YYYY-MM) these rules apply to
    rating_list: str = "standard"  # the list kind these rules rate: standard, rapid or blitz
    changes: str = "a player rated 2650 or above uses the real difference"
    difference_cap: int = 400  # step 1: |D| > 400 counts as 400
    real_difference_from: int | None = 2650  # standard list: a player >= this uses the real D
    cap_one_game_per_event: bool = False  # 2022-01..2024-02: the higher side's cap in one game
    fast_excluded_gap: int | None = None  # rapid/blitz (600 from 2024-12): no rating of a game
    # this far apart ...
    fast_excluded_above: int = 2600  # ... when either player is rated above this
    k_established_top: int = 10  # step 4: once peak_rating >= top_peak
    top_peak: int = 2400
    k_flat: int | None = None  # rapid/blitz before 2022-10: this K for everyone (no step 4)
    k_junior: int | None = 40  # junior (see junior_until_year_end), rating < junior_below
    junior_age: int = 18
    junior_until_year_end: bool = True  # False: until the 18th birthday itself
    junior_below: int = 2300
    k_new: int = 40  # until `new_games` rated games are completed
    new_games: int = 30
    k_default: int = 20
    k_times_n_max: int | None = 700  # K x n <= 700 per period
    floor: int = 1400  # step 6: below this the player leaves the list
    inactive_periods: int = 12  # step 8
    newcomer_min_games: int = 5  # §8.2: first rating after >= 5 pooled games
    newcomer_window_periods: int = 26  # rolling pool window
    newcomer_hypothetical_rating: int = 1800  # two hypothetical drawn games vs 1800
    newcomer_hypothetical_games: int = 2
    newcomer_max: int | None = 2200
    newcomer_bonus_per_half_point: int | None = None  # before 2024-03: Ra + 20 per half point
    compression: ListCompression | None = None  # raise of the list of the period before `starts`
    fast_raise: FastListRaise | None = None  # rapid/blitz: raise of the list before `starts`

    @property
    def name(self) -> str:
        """How lists, manifests and the calculator name the era: `FIDE 2025-10`."""
        return f"FIDE {self.starts}"

    @property
    def k_values(self) -> tuple[int, ...]:
        """The base K values of step 4 in this era, in ascending order."""
        if self.k_flat is not None:
            return (self.k_flat,)
        ks = {self.k_established_top, self.k_new, self.k_default}
        return tuple(sorted(ks | ({self.k_junior} if self.k_junior is not None else set())))


_ONE_TIME = {"compression": None, "fast_raise": None}  # a one-time raise: its own row only

_FAST = ("rapid", "blitz")


def _eras(
    first: dict[str, FideRules], *changes: tuple[str, dict[str, tuple[str, dict[str, Any]]]]
) -> dict[str, tuple[FideRules, ...]]:
    """The eras of each list kind in order: each row is (first period, per list kind: what
    changed and the fields it changes) on top of the era before it on that list; a list kind
    a row does not name keeps its rules ("unchanged"). A one-time raise belongs to its own
    row only."""
    eras = {kind: [rules] for kind, rules in first.items()}
    for starts, per_kind in changes:
        for kind, rows in eras.items():
            what, fields = per_kind.get(kind, ("unchanged on this list", {}))
            rows.append(replace(rows[-1], **{**_ONE_TIME, **fields}, starts=starts, changes=what))
    return {kind: tuple(rows) for kind, rows in eras.items()}


_EARLIEST = FideRules(
    starts="2012-07",
    changes=(
        "K 30 new (until 30 games), 15 under 2400, 10 from a 2400 peak, no junior rule; floor "
        "1000; 400-point rule for everyone; first rating Ra + 20 per half point above 50 % (else "
        "Ra + dp), no hypothetical games"
    ),
    real_difference_from=None,
    fast_excluded_gap=None,
    k_junior=None,
    junior_until_year_end=False,
    k_new=30,
    k_default=15,
    k_times_n_max=None,
    floor=1000,
    newcomer_hypothetical_games=0,
    newcomer_max=None,
    newcomer_bonus_per_half_point=20,
)
_EARLIEST_FAST = replace(
    _EARLIEST,
    changes=(
        "K 20 for everyone, K x n <= 700; a first rating is the standard rating; floor 1000; "
        "400-point rule for everyone; first rating otherwise as the standard list's"
    ),
    k_flat=20,
    k_times_n_max=700,
)
_BOTH = "rapid and blitz: "
_ONE_GAME = (
    "the higher-rated player's 400-point cap in one game per tournament (the greatest difference)"
)
_2024_03 = (
    "floor 1400; the 400-point cap in every game again; first rating with two hypothetical "
    "1800 draws, at most 2200; the list of 2024-02 compressed (below 2000: + 0.4 x (2000 - R))",
    {
        "floor": 1400,
        "cap_one_game_per_event": False,
        "newcomer_hypothetical_games": 2,
        "newcomer_max": 2200,
        "newcomer_bonus_per_half_point": None,
        "compression": ListCompression(),
    },
)
_2022_10_FAST = (
    "K as the standard list's (40 new and junior until the end of the year of the 18th "
    "birthday, 20, 10 from a 2400 peak) on this list's own rating, games and peak; the list "
    "of 2022-09 raised to standard - 100 where more than 100 below it",
    {
        "k_flat": None,
        "k_junior": 40,
        "k_new": 40,
        "k_default": 20,
        "junior_until_year_end": True,
        "fast_raise": FastListRaise(),
    },
)
_2024_12_FAST = (
    "no rating of a game 600 or more apart when either is above 2600",
    {"fast_excluded_gap": 600},
)

FIDE_ERAS_BY_LIST: dict[str, tuple[FideRules, ...]] = _eras(
    {
        "standard": _EARLIEST,
        **{kind: replace(_EARLIEST_FAST, rating_list=kind) for kind in _FAST},
    },
    (
        "2014-07",
        {
            "standard": (
                "K 40 new and junior (until the 18th birthday, under 2300), 20 established, "
                "10 from a 2400 peak; K x n <= 700",
                {"k_junior": 40, "k_new": 40, "k_default": 20, "k_times_n_max": 700},
            )
        },
    ),
    (
        "2022-01",
        {
            "standard": (
                "junior K until the end of the year of the 18th birthday; " + _ONE_GAME,
                {"junior_until_year_end": True, "cap_one_game_per_event": True},
            ),
            **{
                kind: (
                    _ONE_GAME + "; K 20 for everyone (unchanged)",
                    {
                        "junior_until_year_end": True,
                        "cap_one_game_per_event": True,
                    },
                )
                for kind in _FAST
            },
        },
    ),
    ("2022-10", dict.fromkeys(_FAST, _2022_10_FAST)),
    ("2024-03", dict.fromkeys(("standard", *_FAST), _2024_03)),
    ("2024-12", dict.fromkeys(_FAST, _2024_12_FAST)),
    (
        "2025-10",
        {
            "standard": (
                "a player rated 2650 or above uses the real difference",
                {"real_difference_from": 2650},
            )
        },
    ),
)
"""Every FIDE era (RULES §3.3) per list kind, oldest first, all kinds on the same dates (a row
that changes nothing on a list says so); a newly announced change is one new row."""

FIDE_ERAS: tuple[FideRules, ...] = FIDE_ERAS_BY_LIST["standard"]
"""The standard list's eras."""

FIDE_RULES = FIDE_ERAS[-1]
"""The standard list's rules in force today (also the club engine's formula, which has one era)."""


def eras_of(rating_list: str) -> tuple[FideRules, ...]:
    """The eras of one list kind (standard, rapid or blitz); ValueError for another name."""
    try:
        return FIDE_ERAS_BY_LIST[rating_list]
    except KeyError:
        kinds = ", ".join(FIDE_ERAS_BY_LIST)
        raise ValueError(f"rating_list must be one of {kinds}, got {rating_list!r}") from None


def rules_for_period(period: str, rating_list: str = "standard") -> FideRules:
    """The rules of `rating_list` in force on the first day of `period` (YYYY-MM); before the
    earliest era, the earliest era's rules."""
    period_index(period)  # a malformed period raises ValueError
    eras = eras_of(rating_list)
    chosen = eras[0]
    for era in eras:
        if era.starts <= period:
            chosen = era
    return chosen


def rules_on(day: date, rating_list: str = "standard") -> FideRules:
    """The rules of `rating_list` in force on `day` (the era of its period: eras start on a
    month's first day)."""
    return rules_for_period(period_of_date(day), rating_list)


def _due_on_list(period: str, rating_list: str) -> FideRules | None:
    """The era starting with the period after `period`, whose one-time raises are due on the
    list of `period`; None when no era starts then."""
    following = next_period(period)
    era = rules_for_period(following, rating_list)
    return era if era.starts == following else None


def compression_for_list(period: str, rating_list: str = "standard") -> ListCompression | None:
    """The one-time compression due on the list of `period`: that of the era starting with the
    next period (the 2024-03 era compresses the list of 2024-02), else None."""
    era = _due_on_list(period, rating_list)
    return era.compression if era is not None else None


def fast_raise_for_list(period: str, rating_list: str) -> FastListRaise | None:
    """The one-time raise of a rapid or blitz list to standard - 100 due on the list of
    `period`: that of the era starting with the next period (the 2022-10 era raises the lists
    of 2022-09), else None (always None on the standard list)."""
    era = _due_on_list(period, rating_list)
    return era.fast_raise if era is not None else None


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
    "compression": pl.Int32,  # points a one-time raise added: the compression of the lists of
    # 2024-02, the raise of rapid and blitz to standard - 100 on the lists of 2022-09
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
