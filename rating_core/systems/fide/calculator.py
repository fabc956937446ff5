"""The one-player FIDE calculator (RULES §7): one tournament, every step shown, by the rules of
one era (RULES §3.3; `ratings calc fide --date` picks it with `rules_on`)."""

from __future__ import annotations

from fractions import Fraction

import polars as pl

from rating_core.rounding import round_half_away
from rating_core.systems.fide.rules import FIDE_RULES, FideRules
from rating_core.systems.fide.steps import k_capped_expr, rate_rows, real_difference_expr


def fide_calculator(
    rating: int, k: int, games: list[tuple[int, float]], rules: FideRules = FIDE_RULES
) -> dict:
    """The seed's FIDE calculator for one tournament: per-game D, PD, dR; K x n cap; rounding.

    As the seed, the change is rounded once per tournament; the 400 cap, the real difference
    from 2650, the one-game limit of the cap and the K x n cap are those of `rules` (the
    payload's `rules` names the era).
    """
    rows = pl.LazyFrame(
        {
            "own_rating": [rating] * len(games),
            "opponent_rating": [int(o) for o, _ in games],
            "score": [float(s) for _, s in games],
        },
        schema={"own_rating": pl.Int64, "opponent_rating": pl.Int64, "score": pl.Float64},
    )
    rated = rate_rows(rows, rules, real_difference_expr(rules)).collect()
    n = rated.height
    k_used = pl.select(k_capped_expr(pl.lit(k), pl.lit(n), rules)).item()
    sum_h = int(rated["delta_h"].sum()) if n else 0
    change_h = k_used * sum_h
    change = round_half_away(Fraction(change_h, 100))
    return {
        "rules": rules.name,
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
