"""FIBS replay of a range of periods (issue 10 item 1).

This is the simple version: one `fibs_replay` per period, each from the previous period's end
state and fair-play pairs. The one-kernel-pass version (the whole range replayed at once, each
period's snapshot emitted) replaces it with the same signature and results.
"""

from __future__ import annotations

import polars as pl

from rating_core.systems.fibs.replay import FibsReplayResult, fibs_replay


def fibs_replay_periods(
    matches: pl.DataFrame,
    previous_state: pl.DataFrame | None,
    previous_pairs: pl.DataFrame | None,
    periods: list[str],
) -> dict[str, FibsReplayResult]:
    """Replay every period of `periods` (contiguous, ascending) in order from the state and
    pairs before the first; `matches` holds the rows of all of them (their `period` says which).

    Each period's result is what `fibs_replay` returns for its rows started from the previous
    period's state and pairs.
    """
    by_period = (
        matches.partition_by("period", as_dict=True, maintain_order=True) if matches.height else {}
    )
    results: dict[str, FibsReplayResult] = {}
    state, pairs = previous_state, previous_pairs
    for period in periods:
        result = fibs_replay(by_period.get((period,), matches.clear()), state, pairs)
        results[period] = result
        state, pairs = result.state, result.pairs
    return results
