"""Platform periods (site ratings, FIBS backgammon) in the engine contract: each period of a range
as a `PeriodOutput` as it completes, from the streamed site replay (`site/replay.py`) and the
FIBS range replay (`fibs/periods.py`).

Pure functions over frames; the Dagster assets only read and write around them.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from rating_core.schemas import empty
from rating_core.systems.contract import (
    FrameSource,
    GameSource,
    PeriodOutput,
    RangeOutputs,
    RowSink,
    present,
)
from rating_core.systems.fibs.lists import fibs_list
from rating_core.systems.fibs.periods import fibs_replay_periods
from rating_core.systems.period_range import check_periods, report_period, rows_per_period
from rating_core.systems.site.lists import site_period_lists
from rating_core.systems.site.replay import SiteReplay, range_coding
from rating_core.systems.site.rules import SITE_EXCLUDED_SCHEMA, SITE_HISTORY_SCHEMA

SITE_STATE = "state/site"
SITE_HISTORY = "history/site"
SITE_EXCLUDED = "excluded/site"
FIBS_STATE = "state/fibs"
FIBS_PAIRS = "state/fibs_pairs"


def site_lists_periods(
    games: GameSource | pl.DataFrame,
    registry: pl.DataFrame | None,
    annulled_ids: Iterable[str] | pl.Series | None,
    previous: pl.DataFrame | None,
    periods: list[str],
    sink: RowSink,
) -> RangeOutputs:
    """Every site period of `periods` in order from `previous`, yielded as it completes: state,
    the rows of site-elo and every site-<category> list, and (to `sink`, batch by batch) the
    history and excluded games. Memory holds the players' records and one batch of games."""
    check_periods(periods)
    source = FrameSource(games) if isinstance(games, pl.DataFrame) else games
    before = present(previous)
    replay = SiteReplay(
        range_coding(source.players(), periods, registry, before), annulled_ids, before
    )
    handled = 0
    for done, period in enumerate(periods, 1):
        sink(SITE_HISTORY, period, empty(SITE_HISTORY_SCHEMA))
        sink(SITE_EXCLUDED, period, empty(SITE_EXCLUDED_SCHEMA))
        read = rated = excluded = 0
        for batch in source.batches(period):
            out = replay.feed(batch)
            sink(SITE_HISTORY, period, out.history)
            sink(SITE_EXCLUDED, period, out.excluded)
            read += batch.height
            rated, excluded = rated + out.rated_games, excluded + out.excluded.height
        state = replay.state()
        rows = site_period_lists([state], [period], before)[0].drop("period")
        yield (
            period,
            PeriodOutput(
                {SITE_STATE: state},
                rows,
                {},
                {
                    "games": read,
                    "rated_games": rated,
                    "excluded_games": excluded,
                    "players": state.get_column("player_id").n_unique(),
                },
                streamed=(SITE_HISTORY, SITE_EXCLUDED),
            ),
        )
        before = state
        handled += read
        report_period("site", done, periods, handled)


def fibs_lists_periods(
    matches: pl.DataFrame,
    registry: pl.DataFrame | None,
    previous_state: pl.DataFrame | None,
    previous_pairs: pl.DataFrame | None,
    periods: list[str],
) -> RangeOutputs:
    """Every FIBS period of `periods` in order from the state and fair-play pairs before the
    first: state, pairs, history and the rows of the `fibs` list."""
    replays = fibs_replay_periods(
        matches, present(previous_state), present(previous_pairs), periods
    )
    before = present(previous_state)
    counts, handled = rows_per_period(matches, periods), 0  # reported as each period's outputs
    for done, (period, result) in enumerate(replays.items(), 1):
        rows = fibs_list(result.state, period, registry, before).drop("period", strict=False)
        handled += counts[done - 1]
        report_period("fibs", done, periods, handled)
        yield (
            period,
            PeriodOutput(
                {FIBS_STATE: result.state, FIBS_PAIRS: result.pairs},
                rows,
                {"history/fibs": result.history},
            ),
        )
        before = result.state
