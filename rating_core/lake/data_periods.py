"""The periods a lake holds data for: what a run rates and where the Dagster partitions end."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from rating_core.lake.storage import read_table, table_partitions
from rating_core.periods import is_rated_period, next_period, period_range


def data_periods(lake: Path, today: date | None = None) -> list[str]:
    """Every period from the first with data (or after a starting list) to the last with data.

    Only periods from 1850-01 to the month of `today` count: a stray partition outside them
    (a `period=3000-01` left by older code) is ignored, so it can never break a run.
    """
    found = set(table_partitions(lake, "games")) | set(table_partitions(lake, "matches"))
    starts = read_table(lake, "starting_lists").collect()
    if starts.height and found:
        found |= {next_period(p) for p in starts.get_column("period").unique().to_list()}
    found = {period for period in found if is_rated_period(period, today)}
    if not found:
        return []
    return period_range(min(found), max(found))
