"""FIBS ratings over a range of periods in one replay (issue 10): every period's result, each
exactly what `fibs_replay` gives for that period's matches from the period before's states."""

from __future__ import annotations

import polars as pl

from rating_core.systems.fibs.replay import FibsReplayResult, replay_range
from rating_core.systems.fibs.rules import FIBS_RULES, FibsRules
from rating_core.systems.period_range import check_periods


def fibs_replay_periods(
    matches: pl.DataFrame,
    previous_state: pl.DataFrame | None,
    previous_pairs: pl.DataFrame | None,
    periods: list[str],
    rules: FibsRules = FIBS_RULES,
    history: bool = True,
) -> dict[str, FibsReplayResult]:
    """Replay the matches of `periods` (ascending months; the `period` column says which) from
    the player and pair states before the first, one result per period.

    Each period's matches are one batch of one `FibsReplay`, on one set of records and one
    pair table (the 24-hour window runs across period boundaries as it does when each period
    starts from the saved pair state), so the cost is per match, not per period. A period
    without matches carries both states on with an empty history. Raises ValueError when a
    match's period is not one of `periods`.
    """
    check_periods(periods)
    if not periods:
        return {}
    results = replay_range(matches, previous_state, previous_pairs, periods, rules, history)
    return dict(zip(periods, results, strict=True))
