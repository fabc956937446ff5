"""The one-player FIDE calculator (RULES §7): one tournament, every step shown, by the rules of
one era of one list (RULES §3.3; `ratings calc fide --list L --date D` picks them with
`rules_on`, the same rows as the lists)."""

from __future__ import annotations

from fractions import Fraction

import polars as pl

from rating_core.rounding import round_half_away
from rating_core.systems.fide.rules import FIDE_RULES, FideRules
from rating_core.systems.fide.steps import k_capped_expr, rate_rows, real_difference_expr


def _not_rated(rating: int, opponent: int, rules: FideRules) -> bool:
    """The 600-point rule of rapid and blitz (RULES §3 step 1, from 2024-12): a game between
    players this far apart, either rated above 2600, is not rated."""
    gap = rules.fast_excluded_gap
    if rules.rating_list == "standard" or gap is None:
        return False
    return abs(opponent - rating) >= gap and max(rating, opponent) > rules.fast_excluded_above


def fide_calculator(
    rating: int, k: int, games: list[tuple[int, float]], rules: FideRules = FIDE_RULES
) -> dict:
    """The seed's FIDE calculator for one tournament: per-game D, PD, dR; K x n cap; rounding.

    As the seed, the change is rounded once per tournament; the 400 cap, the real difference
    from 2650 (standard list only), the one-game limit of the cap, the 600-point rule (rapid
    and blitz) and the K x n cap are those of `rules` (the payload's `rules` names the era and
    `list` the list kind). A game the 600-point rule does not rate is listed under `not_rated`.
    """
    not_rated = [(o, s) for o, s in games if _not_rated(rating, int(o), rules)]
    games = [(o, s) for o, s in games if not _not_rated(rating, int(o), rules)]
    standard = rules.rating_list == "standard"
    rows = pl.LazyFrame(
        {
            "own_rating": [rating] * len(games),
            "opponent_rating": [int(o) for o, _ in games],
            "score": [float(s) for _, s in games],
        },
        schema={"own_rating": pl.Int64, "opponent_rating": pl.Int64, "score": pl.Float64},
    )
    rated = rate_rows(rows, rules, real_difference_expr(rules, standard)).collect()
    n = rated.height
    k_used = pl.select(k_capped_expr(pl.lit(k), pl.lit(n), rules)).item()
    sum_h = int(rated["delta_h"].sum()) if n else 0
    change_h = k_used * sum_h
    change = round_half_away(Fraction(change_h, 100))
    return {
        "rules": rules.name,
        "list": rules.rating_list,
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
        "not_rated": [
            {
                "opponent": int(o),
                "score": float(s),
                "reason": f"{rules.fast_excluded_gap}-point rule",
            }
            for o, s in not_rated
        ],
        "k_requested": k,
        "k": int(k_used),
        "sum_delta_r": sum_h / 100,
        "change_exact": change_h / 100,
        "change": int(change),
        "new_rating": rating + int(change),
    }
