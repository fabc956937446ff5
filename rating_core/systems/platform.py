"""Platform periods (site ratings, FIBS backgammon) in the engine contract: each period of a range
as a `PeriodOutput` as it completes, from the streamed site replay (`site/replay.py`) and the
streamed FIBS replay (`fibs/replay.py`), the large per-game tables sent to a `RowSink`.

Pure functions over frames; the Dagster assets only read and write around them.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from rating_core import tables
from rating_core.schemas import empty
from rating_core.systems.contract import (
    FrameSource,
    GameSource,
    PeriodOutput,
    RangeOutputs,
    RowSink,
    present,
)
from rating_core.systems.fibs.classification import MATCH_SIDES
from rating_core.systems.fibs.lists import fibs_list
from rating_core.systems.fibs.replay import FibsReplay, replay_ids
from rating_core.systems.fibs.rules import FIBS_HISTORY_SCHEMA
from rating_core.systems.period_range import check_periods, check_within, report_period
from rating_core.systems.site.lists import site_period_lists
from rating_core.systems.site.replay import SiteReplay, range_coding
from rating_core.systems.site.rules import SITE_EXCLUDED_SCHEMA, SITE_HISTORY_SCHEMA

SITE_STATE = tables.state("site").name
SITE_HISTORY = tables.history("site").name
SITE_EXCLUDED = tables.excluded("site").name
FIBS_STATE = tables.state("fibs").name
FIBS_PAIRS = tables.FIBS_PAIR_STATE.name
FIBS_HISTORY = tables.history("fibs").name
MATCHES = "matches"
"""What the FIBS replay's progress counts: backgammon matches, not games."""


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
            if read:  # a period in several batches: the games so far, while it is rated
                report_period("site", done - 1, periods, handled + read)
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
    matches: GameSource | pl.DataFrame,
    registry: pl.DataFrame | None,
    previous_state: pl.DataFrame | None,
    previous_pairs: pl.DataFrame | None,
    periods: list[str],
    sink: RowSink,
) -> RangeOutputs:
    """Every FIBS period of `periods` in order from the state and fair-play pairs before the
    first, yielded as it completes: state, pairs, the rows of the `fibs` list and (to `sink`,
    batch by batch) the history. Memory holds the players' records, the recent pairs and one
    batch of matches. Raises ValueError when a match of a frame is of no period of `periods`."""
    check_periods(periods)
    if isinstance(matches, pl.DataFrame):
        check_within(matches.get_column("period").cast(pl.String), periods, "a match")
        source: GameSource = FrameSource(matches, MATCH_SIDES)
    else:
        source = matches
    before, pairs = present(previous_state), present(previous_pairs)
    replay = FibsReplay(replay_ids(source.players(), before, pairs), before, pairs)
    handled = 0
    for done, period in enumerate(periods, 1):
        sink(FIBS_HISTORY, period, empty(FIBS_HISTORY_SCHEMA))
        read = ranked = 0
        for batch in source.batches(period):
            if read:  # a period in several batches: the matches so far, while it is rated
                report_period("fibs", done - 1, periods, handled + read, MATCHES)
            out = replay.feed(batch)
            sink(FIBS_HISTORY, period, out.history)
            read, ranked = read + batch.height, ranked + out.ranked
        state, pairs = replay.end_period()
        rows = fibs_list(state, period, registry, before).drop("period", strict=False)
        yield (
            period,
            PeriodOutput(
                {FIBS_STATE: state, FIBS_PAIRS: pairs},
                rows,
                {},
                {"games": read, "ranked_matches": ranked, "players": state.height},
                streamed=(FIBS_HISTORY,),
            ),
        )
        before = state
        handled += read
        report_period("fibs", done, periods, handled, MATCHES)
