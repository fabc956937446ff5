"""The one-player UKD calculator (RULES §7): one tournament, every step shown."""

from __future__ import annotations

from fractions import Fraction

import polars as pl

from rating_core.rounding import round_half_away
from rating_core.systems.ukd.rules import UKD_RULES, UkdRules
from rating_core.systems.ukd.steps import ukd_k_expr, ukd_tournament_rows


def ukd_calculator(
    rating: int, games: list[tuple[int | None, float]], rules: UkdRules = UKD_RULES
) -> dict:
    """The seed's UKD calculator for one tournament: capped opponents, D, PD, We, W, k, change.

    An opponent of None has no UKD (+-0.1k per win/loss); the new UKD is rounded and floored.
    """
    rows = pl.LazyFrame(
        {
            "player_id": ["p"] * len(games),
            "event_id": ["t"] * len(games),
            "own_rating": [rating] * len(games),
            "opponent_rating": [o for o, _ in games],
            "score": [float(s) for _, s in games],
        },
        schema={
            "player_id": pl.String,
            "event_id": pl.String,
            "own_rating": pl.Int32,
            "opponent_rating": pl.Int32,
            "score": pl.Float64,
        },
    )
    cap = rules.opponent_cap
    per_game = rows.select(
        pl.col("opponent_rating").alias("opponent"),
        pl.col("opponent_rating")
        .clip(pl.col("own_rating") - cap, pl.col("own_rating") + cap)
        .alias("counted_as"),
        "score",
    ).collect()
    k = int(pl.select(ukd_k_expr(pl.lit(rating), rules)).item())
    if games:
        t = ukd_tournament_rows(rows, rules).collect().row(0, named=True)
    else:
        t = {"m": 0, "d": None, "pd_h": None, "we_h": 0, "w2": 0, "delta_h": 0}
        t |= {"unrated_wins": 0, "unrated_losses": 0, "sum_capped": 0}
    delta_h = int(t["delta_h"])
    unfloored = round_half_away(Fraction(rating * 100 + delta_h, 100))
    return {
        "rating": rating,
        "k": k,
        "games": per_game.to_dicts(),
        "m": int(t["m"]),
        "average": round_half_away(Fraction(int(t["sum_capped"]), int(t["m"])), 2)
        if t["m"]
        else None,
        "D": t["d"],
        "PD": None if t["pd_h"] is None else t["pd_h"] / 100,
        "We": int(t["we_h"]) / 100,
        "W": int(t["w2"]) / 2,
        "unrated_wins": int(t["unrated_wins"]),
        "unrated_losses": int(t["unrated_losses"]),
        "change": delta_h / 100,
        "new_rating": max(int(unfloored), rules.floor),
    }
