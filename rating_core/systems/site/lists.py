"""The site lists (RULES §2): every number's list of a period (site Elo and each category),
ranked, with the period's games and change read from the states before and after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from rating_core.rounding import round_half_away_expr
from rating_core.systems.site.rules import (
    SITE_LIST_SCHEMA,
    SITE_RULES,
    SiteRules,
    empty_site_state,
)


def site_lists(
    state: pl.DataFrame,
    period: str,
    previous_state: pl.DataFrame | None = None,
    rules: SiteRules = SITE_RULES,
) -> pl.DataFrame:
    """All site lists of `period` in one frame with a `list` column (site-elo, site-blitz, …).

    `state` is the state after the period, `previous_state` the one before it (None at the
    start): games and change in the period are the differences between the two.
    """
    return site_period_lists([state], [period], previous_state, rules)[0]


_PERIOD_INDEX = "_period_index"


def site_period_lists(
    states: Sequence[pl.DataFrame],
    periods: Sequence[str],
    previous_state: pl.DataFrame | None = None,
    rules: SiteRules = SITE_RULES,
) -> list[pl.DataFrame]:
    """`site_lists` of consecutive periods, `states[k]` being the state after `periods[k]` and
    `previous_state` the one before the first: one join and one sort for the whole range
    instead of one per period."""
    if len(states) != len(periods):
        raise ValueError(f"{len(states)} states for {len(periods)} periods")
    if not periods:
        return []
    first = previous_state if previous_state is not None else empty_site_state()
    index = pl.col(_PERIOD_INDEX)

    def numbered(frames: Iterable[pl.DataFrame], *columns: pl.Expr | str) -> pl.DataFrame:
        return pl.concat(
            [
                f.select(pl.lit(k, pl.Int32).alias(_PERIOD_INDEX), "player_id", "number", *columns)
                for k, f in enumerate(frames)
            ],
            how="vertical_relaxed",  # a given state's integer widths may differ from the replay's
        )

    now = numbered(states, "rating", "games")
    prev = numbered(
        [first, *states[:-1]],
        pl.col("rating").alias("_prev_rating"),
        pl.col("games").alias("_prev_games"),
    )
    total = pl.col("games")
    rating_int = round_half_away_expr(pl.col("rating"))
    provisional = total < rules.provisional_below
    lists = (
        now.filter(total >= 1)
        .join(prev, on=[_PERIOD_INDEX, "player_id", "number"], how="left")
        .select(
            index,
            pl.col("number").alias("list"),
            index.replace_strict(range(len(periods)), periods, return_dtype=pl.String).alias(
                "period"
            ),
            "player_id",
            rating_int.alias("rating"),
            pl.col("rating").alias("rating_exact"),
            (total - pl.col("_prev_games").fill_null(0)).alias("games"),
            total.alias("total_games"),
            provisional.alias("provisional"),
            pl.when(provisional)
            .then(rating_int.cast(pl.String) + "?")
            .otherwise(rating_int.cast(pl.String))
            .alias("display"),
            (pl.col("rating") - pl.col("_prev_rating").fill_null(rules.start)).alias("change"),
        )
        .sort(
            [_PERIOD_INDEX, "list", "rating_exact", "player_id"],
            descending=[False, False, True, False],
        )
        .cast(SITE_LIST_SCHEMA)
    )
    parts = lists.partition_by(_PERIOD_INDEX, as_dict=True, include_key=False, maintain_order=True)
    empty = lists.clear().drop(_PERIOD_INDEX)
    return [parts.get((k,), empty) for k in range(len(periods))]
