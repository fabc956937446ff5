"""Platform periods (site ratings, FIBS backgammon) in the engine contract: each period of a range
as a `PeriodOutput`, from the replays of `site/periods.py` and `fibs/periods.py`.

Pure functions over frames; the Dagster assets only read and write around them.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from rating_core.systems.contract import PeriodOutput, present
from rating_core.systems.fibs.lists import fibs_list
from rating_core.systems.fibs.periods import fibs_replay_periods
from rating_core.systems.period_range import report_period, rows_per_period
from rating_core.systems.site.lists import site_period_lists
from rating_core.systems.site.periods import site_replay_periods

SITE_STATE = "state/site"
FIBS_STATE = "state/fibs"
FIBS_PAIRS = "state/fibs_pairs"


def site_lists_periods(
    games: pl.DataFrame,
    registry: pl.DataFrame | None,
    annulled_ids: Iterable[str] | pl.Series | None,
    previous: pl.DataFrame | None,
    periods: list[str],
) -> dict[str, PeriodOutput]:
    """Every site period of `periods` in order from `previous`: state, history, excluded games
    and the rows of site-elo and every site-<category> list."""
    replays = site_replay_periods(games, registry, annulled_ids, present(previous), periods)
    lists = site_period_lists([r.state for r in replays.values()], list(replays), present(previous))
    outputs: dict[str, PeriodOutput] = {}
    # one pass rated every period: the reports follow the cheap cutting of its outputs
    counts, handled = rows_per_period(games, periods), 0
    for done, ((period, result), period_lists) in enumerate(
        zip(replays.items(), lists, strict=True), 1
    ):
        rows = period_lists.drop("period")
        outputs[period] = PeriodOutput(
            {SITE_STATE: result.state},
            rows,
            {"history/site": result.history, "excluded/site": result.excluded},
            {
                "rated_games": result.rated_games,
                "excluded_games": result.excluded.height,
                "players": result.state.get_column("player_id").n_unique(),
            },
        )
        handled += counts[done - 1]
        report_period("site", done, periods, handled)
    return outputs


def fibs_lists_periods(
    matches: pl.DataFrame,
    registry: pl.DataFrame | None,
    previous_state: pl.DataFrame | None,
    previous_pairs: pl.DataFrame | None,
    periods: list[str],
) -> dict[str, PeriodOutput]:
    """Every FIBS period of `periods` in order from the state and fair-play pairs before the
    first: state, pairs, history and the rows of the `fibs` list."""
    replays = fibs_replay_periods(
        matches, present(previous_state), present(previous_pairs), periods
    )
    outputs: dict[str, PeriodOutput] = {}
    before = present(previous_state)
    counts, handled = rows_per_period(matches, periods), 0  # reported as each period's outputs
    for done, (period, result) in enumerate(replays.items(), 1):
        rows = fibs_list(result.state, period, registry, before).drop("period", strict=False)
        outputs[period] = PeriodOutput(
            {FIBS_STATE: result.state, FIBS_PAIRS: result.pairs},
            rows,
            {"history/fibs": result.history},
        )
        before = result.state
        handled += counts[done - 1]
        report_period("fibs", done, periods, handled)
    return outputs
