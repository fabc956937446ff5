"""Site replay of a range of periods (issue 10 item 1).

This is the simple version: one `site_replay` per period, each from the previous period's end
state. The one-kernel-pass version (the whole range replayed at once, each period's snapshot
emitted) replaces it with the same signature and results.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from rating_core.systems.site.replay import SiteReplayResult, site_replay


def site_replay_periods(
    games: pl.DataFrame,
    registry: pl.DataFrame | None,
    annulled_ids: Iterable[str] | pl.Series | None,
    previous: pl.DataFrame | None,
    periods: list[str],
) -> dict[str, SiteReplayResult]:
    """Replay every period of `periods` (contiguous, ascending) in order from `previous`, the
    state before the first; `games` holds the rows of all of them (their `period` says which).

    Each period's result is what `site_replay` returns for its rows started from the previous
    period's state (an empty period: the carried state and an empty history).
    """
    by_period = (
        games.partition_by("period", as_dict=True, maintain_order=True) if games.height else {}
    )
    results: dict[str, SiteReplayResult] = {}
    state = previous
    for period in periods:
        result = site_replay(by_period.get((period,), games.clear()), registry, annulled_ids, state)
        results[period] = result
        state = result.state
    return results
