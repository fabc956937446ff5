"""Site ratings over a range of periods in memory: every period's result, each exactly what
`site_replay` gives for that period's games from the period before's state (the frame-based
entry, for frames already in memory; a run streams the lake through `SiteReplay`)."""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from rating_core.systems.period_range import check_periods
from rating_core.systems.site.replay import SiteReplayResult, replay_range
from rating_core.systems.site.rules import SITE_RULES, SiteRules


def site_replay_periods(
    games: pl.DataFrame,
    registry: pl.DataFrame | None,
    annulled_ids: Iterable[str] | pl.Series | None,
    previous: pl.DataFrame | None,
    periods: list[str],
    rules: SiteRules = SITE_RULES,
    history: bool = True,
) -> dict[str, SiteReplayResult]:
    """Replay the platform games of `periods` (ascending months; the `period` column says
    which) from `previous` (the state before the first), one result per period.

    The ids are coded once and each period's games fed to one `SiteReplay` as a batch, the
    state read out at each period's end, so the cost is per game, not per period. A period
    without games carries the state on with an empty history. Raises ValueError when a game's
    period is not one of `periods`.
    """
    check_periods(periods)
    if not periods:
        return {}
    results = replay_range(games, registry, annulled_ids, previous, periods, rules, history)
    return dict(zip(periods, results, strict=True))
