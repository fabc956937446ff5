"""The one-game site calculator (RULES §7, `ratings calc site`): a game's effect on a category
rating and the site Elo, every step shown, with the replay kernel's own Elo step (`elo`).
"""

from __future__ import annotations

from rating_core.rounding import round_half_away
from rating_core.schemas import CATEGORIES
from rating_core.systems.site.elo import elo_update, score_of
from rating_core.systems.site.rules import SITE_RULES, SiteRules


def site_calculator(
    category: str,
    rating: float,
    opponent: float,
    games: int,
    site_elo: float,
    opponent_site_elo: float,
    site_games: int,
    result: str | float,
    rules: SiteRules = SITE_RULES,
) -> dict[str, object]:
    """One game's effect on a player's category rating and site Elo, every step shown.

    Uses the kernel's own `elo_update` (same formula, K rule, weight and floor as the replay).
    `games`/`site_games` are the rated games before this one in the category / overall.
    """
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}: one of {', '.join(CATEGORIES)}")
    score = score_of(result)
    weight = rules.weight(category)
    k_cat, k_site = rules.k(games), rules.k(site_games)
    e_c, raw_c, ch_c, new_c = elo_update(
        float(rating), float(opponent), score, k_cat, 1.0, rules.floor
    )
    e_s, raw_s, ch_s, new_s = elo_update(
        float(site_elo), float(opponent_site_elo), score, k_site, weight, rules.floor
    )
    return {
        "category": category,
        "score": score,
        "category_expected": round_half_away(e_c, 4),
        "category_k": k_cat,
        "category_raw_change": raw_c,
        "category_change": round_half_away(ch_c, 2),
        "category_change_exact": ch_c,
        "new_category_rating": round_half_away(new_c, 2),
        "new_category_rating_exact": new_c,
        "category_floored": float(rating) + raw_c < rules.floor,
        "weight": weight,
        "site_expected": round_half_away(e_s, 4),
        "site_k": k_site,
        "site_raw_change": raw_s,
        "site_elo_change": round_half_away(ch_s, 2),
        "site_elo_change_exact": ch_s,
        "new_site_elo": round_half_away(new_s, 2),
        "new_site_elo_exact": new_s,
        "site_floored": float(site_elo) + raw_s < rules.floor,
        "category_expected_exact": e_c,
        "site_expected_exact": e_s,
    }
