"""Plain Elo (seed elo-calculator): expected score, change and the one-game calculator.

The numba functions here are the single implementation of the formula: the site replay kernel
calls them per game and the calculators call them directly, so the two can never disagree.
"""

from __future__ import annotations

from numba import njit

from rating_core.rounding import round_half_away
from rating_core.schemas import SCORE_BY_RESULT_WORD


@njit(cache=True)
def expected_score(rating: float, opponent: float) -> float:
    """Expected score E = 1 / (1 + 10^((R_opp − R) / 400)) of `rating` against `opponent`."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))


@njit(cache=True)
def elo_update(
    rating: float, opponent: float, score: float, k: float, weight: float, floor: float
) -> tuple[float, float, float, float]:
    """One Elo step: returns (expected, raw change K·w·(S−E), applied change, new rating).

    The applied change differs from the raw one only when the floor stops the fall; it is
    computed so that `rating + applied == new rating` holds exactly.
    """
    e = expected_score(rating, opponent)
    raw = k * weight * (score - e)
    after = rating + raw
    applied = raw
    if after < floor:
        after = floor
        applied = floor - rating
    return e, raw, applied, after


def score_of(result: str | float) -> float:
    """The score S (1, 0.5, 0) of a result given as a number or a word ("win", "draw", "1-0"…)."""
    if isinstance(result, str):
        key = result.strip().lower()
        if key not in SCORE_BY_RESULT_WORD:
            raise ValueError(f"unknown result {result!r}: use win, draw or loss (1, 0.5, 0)")
        return SCORE_BY_RESULT_WORD[key]
    score = float(result)
    if score not in (0.0, 0.5, 1.0):
        raise ValueError(f"a score is 1, 0.5 or 0, not {result!r}")
    return score


def elo_calculator(
    rating: float, opponent: float, result: str | float, k: float
) -> dict[str, float]:
    """The seed's calculator: expected score, change and new rating for one game, no floor.

    Rounded values (expected to 4 decimals, change and new rating to 2, half away from zero)
    are what a person reads; the `*_exact` keys keep the unrounded floats.
    """
    score = score_of(result)
    e, raw, applied, after = elo_update(
        float(rating), float(opponent), score, float(k), 1.0, -1e300
    )
    return {
        "rating": float(rating),
        "opponent": float(opponent),
        "score": score,
        "k": float(k),
        "expected": round_half_away(e, 4),
        "change": round_half_away(applied, 2),
        "new_rating": round_half_away(after, 2),
        "expected_exact": e,
        "change_exact": applied,
        "new_rating_exact": after,
    }
