"""A range's platform games, or its backgammon matches, read back from the lake in replay order a
batch at a time: what the streamed site and FIBS replays are fed (issue 31 item 3), so a month of
any size is rated in bounded memory.

Each period's part files are sorted by DuckDB, which spills to disk beyond its memory limit, and
handed over as Polars frames of at most `batch_rows` rows: the platform games by (played_at,
game_id) (`PlatformGames`), the matches by (ended_at, match_id) (`PlatformMatches`), one class
told by its table, filter, order and player columns.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import polars as pl

from rating_core import tables
from rating_core.lake.storage import partition_files
from rating_core.schemas import TableSchema
from rating_core.tables import LakeTable

PLATFORM = "platform"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class LakeBatches:
    """The rows of `periods` of a period table in the lake: their players, and each period's
    rows in replay order in batches of `batch_rows`, with the `columns` asked for. A subclass
    names the table, the rows it keeps (`source`), the replay order and the player columns."""

    lake: Path
    periods: Sequence[str]
    columns: Sequence[str]
    batch_rows: int
    sort_memory: int

    TABLE: ClassVar[LakeTable]
    SOURCE: ClassVar[str | None] = None
    """The `source` the rows must have (None: every row)."""
    ORDER: ClassVar[tuple[str, ...]]
    SIDES: ClassVar[tuple[str, str]]

    @property
    def schema(self) -> TableSchema:
        """The table's schema (its rows are typed as it types them)."""
        schema = self.TABLE.schema
        assert schema is not None, f"{self.TABLE.name} has no fixed schema"
        return schema

    def players(self) -> pl.Series:
        """Every player id of the rows (both sides, each once, nulls dropped): DuckDB's
        distinct, within the sort's memory (a Polars unique held every id of every game)."""
        files = [f for p in self.periods for f in partition_files(self.lake, self.TABLE, p)]
        if not files:
            return pl.Series("player_id", [], dtype=pl.String)
        sides = " UNION ALL ".join(
            f'SELECT CAST("{side}" AS VARCHAR) AS player_id FROM {self._scan(files)}'
            for side in self.SIDES
        )
        with self._connection() as con:
            table = con.sql(
                f"SELECT DISTINCT player_id FROM ({sides}) WHERE player_id IS NOT NULL"
            ).to_arrow_table()
        ids = pl.from_arrow(table)
        assert isinstance(ids, pl.DataFrame)
        return ids.get_column("player_id")

    def batches(self, period: str) -> Iterator[pl.DataFrame]:
        """The rows of `period` in `ORDER`, `batch_rows` at a time, typed as the table types
        them."""
        files = partition_files(self.lake, self.TABLE, period)
        if not files:
            return
        columns = [c for c in self.columns if c != "period"]
        wanted = ", ".join(f'"{c}"' for c in columns)
        order = ", ".join(f'"{c}"' for c in self.ORDER)
        with self._connection() as con:
            reader = con.sql(
                f"SELECT {wanted} FROM {self._scan(files)} ORDER BY {order}"
            ).to_arrow_reader(self.batch_rows)
            schema: Any = {c: self.schema[c] for c in columns}
            for batch in reader:
                frame = pl.from_arrow(batch)
                assert isinstance(frame, pl.DataFrame)
                yield (
                    frame.cast(schema)
                    .with_columns(pl.lit(period, dtype=pl.String).alias("period"))
                    .select(self.columns)
                )

    def _scan(self, files: Sequence[Path]) -> str:
        """The SQL of the rows of `files` this source keeps (a subquery)."""
        paths = ", ".join(_literal(str(path)) for path in files)
        where = f" WHERE source = {_literal(self.SOURCE)}" if self.SOURCE is not None else ""
        return f"(SELECT * FROM read_parquet([{paths}], union_by_name = true){where})"

    @contextlib.contextmanager
    def _connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A DuckDB connection within `sort_memory`, spilling to a temporary folder."""
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
                yield con
            finally:
                con.close()
        finally:
            shutil.rmtree(spill, ignore_errors=True)


@dataclass(frozen=True)
class PlatformGames(LakeBatches):
    """The platform games of `periods`, each period's in (played_at, game_id) order."""

    TABLE: ClassVar[LakeTable] = tables.GAMES
    SOURCE: ClassVar[str | None] = PLATFORM
    ORDER: ClassVar[tuple[str, ...]] = ("played_at", "game_id")
    SIDES: ClassVar[tuple[str, str]] = ("white_id", "black_id")


@dataclass(frozen=True)
class PlatformMatches(LakeBatches):
    """The backgammon matches of `periods`, each period's in (ended_at, match_id) order: the
    FIBS replay order within a period."""

    TABLE: ClassVar[LakeTable] = tables.MATCHES
    ORDER: ClassVar[tuple[str, ...]] = ("ended_at", "match_id")
    SIDES: ClassVar[tuple[str, str]] = ("winner_id", "loser_id")
