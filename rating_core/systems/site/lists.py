"""The site lists (RULES §2): every number's list of a period (site Elo and each category),
ranked, with the period's games and change read from the states before and after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
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

    def numbered(
        frames: Iterable[pl.DataFrame], *columns: pl.Expr | str, ordered: bool = False
    ) -> pl.DataFrame:
        return pl.concat(
            [
                f.select(
                    pl.lit(k, pl.Int32).alias(_PERIOD_INDEX),
                    "player_id",
                    "number",
                    *columns,
                    *([_player_order(f)] if ordered else []),
                )
                for k, f in enumerate(frames)
            ],
            how="vertical_relaxed",  # a given state's integer widths may differ from the replay's
        )

    now = numbered(states, "rating", "games", ordered=True)
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
            _PLAYER_ORDER,
        )
    )
    lists = _ranked(lists).cast(SITE_LIST_SCHEMA)
    parts = lists.partition_by(_PERIOD_INDEX, as_dict=True, include_key=False, maintain_order=True)
    empty = lists.clear().drop(_PERIOD_INDEX)
    return [parts.get((k,), empty) for k in range(len(periods))]


_PLAYER_ORDER = "_player_order"


def _player_order(state: pl.DataFrame) -> pl.Expr:
    """A number per row of `state` ordered as its player_ids are (equal for equal ids within a
    number's rows): the row number of a state in player_id order (a replay's is), else the
    ids' dense rank."""
    ids = state.get_column("player_id")
    if not ids.null_count() and ids.is_sorted():
        return pl.int_range(pl.len(), dtype=pl.Int64).alias(_PLAYER_ORDER)
    return pl.col("player_id").rank("dense").cast(pl.Int64).fill_null(-1).alias(_PLAYER_ORDER)


def _ranked(lists: pl.DataFrame) -> pl.DataFrame:
    """`lists` in list order: period, list, rating (the published whole number) descending,
    player_id (whose order `_PLAYER_ORDER` gives), that column dropped: the order publishing
    gives each list, so that it finds the rows in order and sorts nothing. Sorted as numbers by
    numpy's lexsort: Polars' sort on these columns, the player_id last, took 3 s of CPU on the
    2.5M rows of 1M players' lists; (period, list, player) is a key, so the order is the same."""
    exact, names = lists.get_column("rating_exact"), lists.get_column("list")
    if lists.height < 2 or exact.null_count() or names.null_count() or exact.is_nan().any():
        return lists.sort(
            [_PERIOD_INDEX, "list", "rating", "player_id"],
            descending=[False, False, True, False],
            nulls_last=True,
        ).drop(_PLAYER_ORDER)
    names = names.unique().sort()
    order = np.lexsort(
        (
            lists.get_column(_PLAYER_ORDER).to_numpy(),
            -lists.get_column("rating").to_numpy(),
            lists.get_column("list").cast(pl.Enum(names)).to_physical().to_numpy(),
            lists.get_column(_PERIOD_INDEX).to_numpy(),
        )
    )
    return lists.drop(_PLAYER_ORDER)[order]
