"""A range's platform games read back from the lake in replay order, a batch at a time: what the
streamed site replay is fed (issue 31 item 3), so a month of any size is rated in bounded memory.

Each period's part files are sorted by (played_at, game_id) by DuckDB, which spills to disk
beyond its memory limit, and handed over as Polars frames of at most `batch_rows` rows.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from rating_core.lake import tables
from rating_core.lake.storage import partition_files, read_table
from rating_core.schemas import GAMES_SCHEMA

PLATFORM = "platform"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class PlatformGames:
    """The platform games of `periods` in the lake: their players, and each period's games in
    replay order in batches of `batch_rows`, with the `columns` asked for."""

    lake: Path
    periods: Sequence[str]
    columns: Sequence[str]
    batch_rows: int
    sort_memory: int

    def players(self) -> pl.Series:
        """Every player id of the games (white, then black; repeats kept, nulls dropped)."""
        games = read_table(self.lake, tables.GAMES, self.periods, schema=GAMES_SCHEMA).filter(
            pl.col("source") == PLATFORM
        )
        ids = pl.concat(
            [
                games.select(pl.col(side).cast(pl.String).alias("player_id"))
                for side in ("white_id", "black_id")
            ]
        )
        return ids.unique().collect(engine="streaming").get_column("player_id").drop_nulls()

    def counts(self) -> dict[str, int]:
        """The platform games of each period (for progress reports)."""
        games = read_table(self.lake, tables.GAMES, self.periods, schema=GAMES_SCHEMA)
        counted = (
            games.filter(pl.col("source") == PLATFORM)
            .group_by("period")
            .len()
            .collect(engine="streaming")
        )
        return {str(p): int(n) for p, n in counted.iter_rows()}

    def batches(self, period: str) -> Iterator[pl.DataFrame]:
        """The platform games of `period` in (played_at, game_id) order, `batch_rows` at a
        time, typed as the games table types them."""
        files = partition_files(self.lake, tables.GAMES, period)
        if not files:
            return
        columns = [c for c in self.columns if c != "period"]
        wanted = ", ".join(f'"{c}"' for c in columns)
        paths = ", ".join(_literal(str(path)) for path in files)
        spill = Path(tempfile.mkdtemp(prefix="ratings-sort-"))
        try:
            con = duckdb.connect(
                ":memory:",
                config={
                    "memory_limit": f"{self.sort_memory}B",
                    "temp_directory": str(spill),
                    "preserve_insertion_order": False,
                },
            )
            try:
                con.execute("SET enable_progress_bar = false")  # stderr is for one sentence
                reader = con.sql(
                    f"SELECT {wanted} FROM read_parquet([{paths}], union_by_name = true) "
                    f"WHERE source = {_literal(PLATFORM)} ORDER BY played_at, game_id"
                ).to_arrow_reader(self.batch_rows)
                schema: Any = {c: GAMES_SCHEMA[c] for c in columns}
                for batch in reader:
                    frame = pl.from_arrow(batch)
                    assert isinstance(frame, pl.DataFrame)
                    yield (
                        frame.cast(schema)
                        .with_columns(pl.lit(period, dtype=pl.String).alias("period"))
                        .select(self.columns)
                    )
            finally:
                con.close()
        finally:
            shutil.rmtree(spill, ignore_errors=True)
