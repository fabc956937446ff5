"""The one-match FIBS calculator (RULES §7, `ratings calc fibs`): win chance, multiplier and the
change if you win or lose, with the replay kernel's own formula (`formula`).
"""

from __future__ import annotations

from rating_core.rounding import round_half_away
from rating_core.systems.fibs.formula import fibs_multiplier, fibs_value, fibs_win_probability
from rating_core.systems.fibs.rules import FIBS_RULES, FibsRules


def fibs_calculator(
    rating: float,
    opponent: float,
    length: int,
    experience: int,
    rules: FibsRules = FIBS_RULES,
) -> dict[str, float]:
    """The seed's calculator for one match: win chance, multiplier and the change if you win/lose.

    Rounded values (p to 3 decimals, percent and win/loss to 1, m to 2) are for display; the
    `*_exact` keys keep the floats. Uses the same numba functions as the replay.
    """
    if length < 1:
        raise ValueError(f"a match is at least 1 point long, not {length}")
    n = float(length)
    p = fibs_win_probability(float(rating), float(opponent), n, rules.scale)
    v = fibs_value(n, rules.value_factor)
    m = fibs_multiplier(
        float(experience), n, rules.multiplier_max, rules.multiplier_min, rules.experience_divisor
    )
    win = v * (1.0 - p) * m
    loss = -v * p * m
    return {
        "p_win": round_half_away(p, 3),
        "p_win_percent": round_half_away(p * 100.0, 1),
        "value": round_half_away(v, 4),
        "multiplier": round_half_away(m, 2),
        "win": round_half_away(win, 1),
        "loss": round_half_away(loss, 1),
        "p_win_exact": p,
        "value_exact": v,
        "multiplier_exact": m,
        "win_exact": win,
        "loss_exact": loss,
    }
