"""What a lake holds that a run's memory grows with (`rating_core.budget`): the players its games
name, counted as the run summary counts them ("N seen"), and its games and matches."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.lake import players_seen
from rating_core.lake.storage import read_table


def run_size(lake: Path) -> tuple[int, int]:
    """(players, games) of `lake`: the players seen in its games (`players_seen.counts`, the
    summary's figure, recorded once per change) and its games and backgammon matches (from the
    Parquet files' row counts)."""
    players = players_seen.counts(lake)[0]
    games = sum(_rows(lake, table) for table in (tables.GAMES, tables.MATCHES))
    return players, games


def _rows(lake: Path, table: tables.LakeTable) -> int:
    frame = read_table(lake, table)
    if not frame.collect_schema():
        return 0
    return int(frame.select(pl.len()).collect().item())
