"""The periods a lake holds data for: what a run rates and where the Dagster partitions end."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.lake.storage import partition_files, read_table, table_partitions
from rating_core.periods import is_rated_period, next_period, period_range


def data_periods(lake: Path, today: date | None = None) -> list[str]:
    """Every period from the first with data (or after a starting list) to the last with data.

    Only periods from 1850-01 to the month of `today` count: a stray partition outside them
    (a `period=3000-01` left by older code) is ignored, so it can never break a run.
    """
    found = set(table_partitions(lake, tables.GAMES)) | set(table_partitions(lake, tables.MATCHES))
    starts = read_table(lake, tables.STARTING_LISTS).collect()
    if starts.height and found:
        found |= {next_period(p) for p in starts.get_column("period").unique().to_list()}
    found = {period for period in found if is_rated_period(period, today)}
    if not found:
        return []
    last = max(found)
    if is_rated_period(next_period(last), today) and _closes_late(lake, last):
        last = next_period(last)  # the FIDE list its last tournaments go on (RULES §3.4)
    return period_range(min(found), last)


CLOSES_LATE_FACT = "closes-late/1"
"""The `derived_facts` record of `_closes_late`, one per period (a new computation: /2)."""


def _closes_late(lake: Path, period: str) -> bool:
    """Whether a federation tournament of `period` ends on one of its last two days, so that
    FIDE's closing date puts it on the next period's list (RULES §3.4): that period is then
    rated too (every system's, as a run rates the current month from the data it has), or the
    tournament would wait for a month with data of its own. Read from the period's games only
    when one of its files changed (a platform's month is 10M games to scan)."""
    from rating_core.lake import facts

    files = partition_files(lake, tables.GAMES, period)
    fact = f"{CLOSES_LATE_FACT} {period}"
    found = facts.derived(lake, fact, files, lambda: json.dumps(_read_closes_late(lake, period)))
    return bool(json.loads(found))


def _read_closes_late(lake: Path, period: str) -> bool:
    """`_closes_late`, read from the games."""
    from rating_core.systems.late_results import fide_list_periods

    games = (
        read_table(lake, tables.GAMES, [period])
        .filter(pl.col("source") == "federation")
        .select("game_id", "tournament_id", "played_at", "period")
        .collect()
    )
    return bool(games.height) and bool((fide_list_periods(games)["period"] > period).any())
