"""A range's platform games, or its backgammon matches, read back from the lake in replay order a
batch at a time: what the streamed site and FIBS replays are fed (issue 31 item 3), so a month of
any size is rated in bounded memory.

Each period's part files are handed over as Polars frames of at most `batch_rows` rows in replay
order: the platform games by (played_at, game_id) (`PlatformGames`), the matches by (ended_at,
match_id) (`PlatformMatches`), one class told by its table, filter, order and player columns.

A platform's export comes nearly in time order (a game a few hundred rows from its place): a
first pass over the time column alone then shows (`_Window.plan`) that the files can be read as
they are and put in order within a sliding window (`_Window.ordered`), whose rows wait only
until no later row can come before them. Otherwise, or when the window would outgrow its bound,
DuckDB sorts the files, spilling to disk beyond its memory limit (at 3M games, 4.5 s of CPU
where the window takes about 1.5).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import numpy as np
import polars as pl
import pyarrow.parquet as pq

from rating_core import tables
from rating_core.kernels.codes import replay_order
from rating_core.lake.spilling import spilling_connection
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
        """The rows of `period` in `ORDER` (nulls last), `batch_rows` at a time, typed as the
        table types them: read in file order through a sliding window when the files are
        nearly in order (`_Window`), else sorted by DuckDB."""
        files = partition_files(self.lake, self.TABLE, period)
        if not files:
            return
        columns = [c for c in self.columns if c != "period"]
        schema: Any = {c: self.schema[c] for c in columns}
        most = max(self.batch_rows // 4, BLOCK_ROWS)  # the window within a quarter of a batch
        window = _Window.plan(files, self.ORDER, self.SOURCE, self.batch_rows, self.schema, most)
        if window is not None:
            read = {c: self.schema[c] for c in [*columns, *self.ORDER] if c != "period"}
            frames = window.ordered(read, columns)
        else:
            frames = self._sorted(files, columns)
        for frame in frames:
            yield (
                frame.cast(schema)
                .with_columns(pl.lit(period, dtype=pl.String).alias("period"))
                .select(self.columns)
            )

    def _sorted(self, files: Sequence[Path], columns: Sequence[str]) -> Iterator[pl.DataFrame]:
        """The rows of `files` sorted by DuckDB (within `sort_memory`), `batch_rows` at a time."""
        wanted = ", ".join(f'"{c}"' for c in columns)
        order = ", ".join(f'"{c}"' for c in self.ORDER)
        with self._connection() as con:
            reader = con.sql(
                f"SELECT {wanted} FROM {self._scan(files)} ORDER BY {order}"
            ).to_arrow_reader(self.batch_rows)
            for batch in reader:
                frame = pl.from_arrow(batch)
                assert isinstance(frame, pl.DataFrame)
                yield frame

    def _scan(self, files: Sequence[Path]) -> str:
        """The SQL of the rows of `files` this source keeps (a subquery)."""
        paths = ", ".join(_literal(str(path)) for path in files)
        where = f" WHERE source = {_literal(self.SOURCE)}" if self.SOURCE is not None else ""
        return f"(SELECT * FROM read_parquet([{paths}], union_by_name = true){where})"

    @contextlib.contextmanager
    def _connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A DuckDB connection within `sort_memory`, spilling to a temporary folder."""
        with spilling_connection(self.sort_memory) as con:
            yield con


BLOCK_ROWS = 4096
"""Rows per block of the window's plan: the first pass keeps each block's earliest and latest
time (16 bytes per 4096 rows)."""

_LATEST, _EARLIEST = np.iinfo(np.int64).max, np.iinfo(np.int64).min


def _file_batches(
    path: Path, schema: Mapping[str, Any], source: str | None, rows: int
) -> Iterator[pl.DataFrame]:
    """The rows of one part file with the columns of `schema`, typed by it (a column the file
    lacks reads as nulls, as DuckDB's `union_by_name` has it), only those whose `source` is
    `source` when given, in runs of whole row groups of at most `rows` rows (or one longer
    group). Read by Polars: a quarter of pyarrow's CPU, its conversion to Polars included."""
    present = set(pl.read_parquet_schema(path))
    columns = [
        (pl.col(c) if c in present else pl.lit(None)).cast(dtype).alias(c)
        for c, dtype in schema.items()
    ]
    kept = pl.col("source").cast(pl.String).eq(source) if source is not None else None
    if kept is not None and "source" not in present:
        return
    metadata = pq.ParquetFile(path).metadata
    start = size = 0
    for group in range(metadata.num_row_groups + 1):
        height = metadata.row_group(group).num_rows if group < metadata.num_row_groups else 0
        if size and (size + height > rows or group == metadata.num_row_groups):
            scan = pl.scan_parquet(path, hive_partitioning=False).slice(start, size)
            if kept is not None:
                scan = scan.filter(kept)
            yield scan.select(columns).collect()
            start, size = start + size, 0
        size += height


@dataclass(frozen=True)
class _Window:
    """The rows of a period's files put in (time, id) order while they are read in file order:
    a row waits in the window until every row still to come is later than it (`later[k]`: the
    earliest time from block k on). Rows without a time wait until the end, where they come
    last (DuckDB's NULLS LAST), as rows without an id come last among their equals."""

    files: Sequence[Path]
    order: tuple[str, ...]
    source: str | None
    batch_rows: int
    later: np.ndarray  # int64 earliest time from each block on, and _LATEST past the last

    @classmethod
    def plan(
        cls,
        files: Sequence[Path],
        order: tuple[str, ...],
        source: str | None,
        batch_rows: int,
        schema: TableSchema,
        most: int,
    ) -> _Window | None:
        """Read the time column of `files` alone: the window that orders them, or None when
        it could hold more than `most` rows (rows far from their place, many rows without a
        time) or the order is not (a time or integer column, a string id)."""
        time, key = order
        if not (schema[time].is_temporal() or schema[time].is_integer()):
            return None
        if schema[key] != pl.String:
            return None
        lows: list[np.ndarray] = []
        highs: list[np.ndarray] = []
        untimed = 0
        pending = pl.Series(time, [], dtype=pl.Int64)
        typed = {time: schema[time]}
        for path in files:
            for frame in _file_batches(path, typed, source, max(batch_rows, BLOCK_ROWS)):
                times = pl.concat([pending, frame.get_column(time).cast(pl.Int64)])
                untimed += frame.get_column(time).null_count()
                whole = times.len() // BLOCK_ROWS * BLOCK_ROWS
                if whole:
                    low, high = _bounds(times.head(whole))
                    lows.append(low)
                    highs.append(high)
                pending = times.slice(whole)
        if pending.len():
            low, high = _bounds(pending)
            lows.append(low)
            highs.append(high)
        high = np.concatenate(highs) if highs else np.zeros(0, dtype=np.int64)
        low = np.concatenate([*lows, np.array([_LATEST])])
        later = np.minimum.accumulate(low[::-1])[::-1]
        # the window holds at most: the rows of earlier blocks that may wait, the block being
        # read, and the rows without a time
        if _most_waiting(later, high) + BLOCK_ROWS + untimed > most:
            return None
        return cls(files, order, source, batch_rows, later)

    def ordered(self, schema: Mapping[str, Any], columns: Sequence[str]) -> Iterator[pl.DataFrame]:
        """The rows with `columns` in (time, id) order, at most `batch_rows` at a time, read
        typed by `schema` (which holds `columns` and the order's)."""
        time, key = self.order
        read = 0
        held = pl.DataFrame(schema=schema)
        untimed: list[pl.DataFrame] = []
        for frames in _gathered(self.files, schema, self.source, self.batch_rows):
            frame = pl.concat([held, *frames])
            read += frame.height - held.height
            if frame.get_column(time).null_count():
                untimed.append(frame.filter(pl.col(time).is_null()))
                frame = frame.filter(pl.col(time).is_not_null())
            held = _in_order(frame, time, key)
            times = held.get_column(time).cast(pl.Int64).to_numpy()
            ready = int(np.searchsorted(times, self.later[read // BLOCK_ROWS], side="left"))
            yield from _slices(held.head(ready).select(columns), self.batch_rows)
            held = held.slice(ready)
        yield from _slices(held.select(columns), self.batch_rows)
        if untimed:
            rest = pl.concat(untimed).sort(key, nulls_last=True, maintain_order=True)
            yield from _slices(rest.select(columns), self.batch_rows)


def _gathered(
    files: Sequence[Path], schema: Mapping[str, Any], source: str | None, rows: int
) -> Iterator[list[pl.DataFrame]]:
    """The rows of `files` (`_file_batches`, which end at each file's end) gathered into runs
    of at most `rows` rows (or one longer row group)."""
    run: list[pl.DataFrame] = []
    size = 0
    for path in files:
        for frame in _file_batches(path, schema, source, rows):
            if size and size + frame.height > rows:
                yield run
                run, size = [], 0
            run.append(frame)
            size += frame.height
    if run:
        yield run


def _most_waiting(later: np.ndarray, high: np.ndarray) -> int:
    """The most rows of whole blocks before block k still waiting at its start, over every k:
    a row of block j waits at the start of block k > j only when block j's latest time
    (`high[j]`) is not before later[k], the earliest time from block k on. later never
    decreases, so that is from block j + 1 up to the last such k; the blocks that may wait
    add up along a difference array."""
    last = np.searchsorted(later, high, side="right") - 1
    first = np.arange(1, high.shape[0] + 1)
    waiting = np.zeros(later.shape[0] + 1, dtype=np.int64)
    np.add.at(waiting, first, BLOCK_ROWS)
    np.add.at(waiting, np.maximum(last + 1, first), -BLOCK_ROWS)
    return int(np.cumsum(waiting).max(initial=0))


def _bounds(times: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """The earliest and latest time of each block of BLOCK_ROWS rows of `times` (the last
    block may be shorter), nulls left out (a block of nulls only: _LATEST and _EARLIEST)."""
    blocks = -(-times.len() // BLOCK_ROWS)
    low = np.full(blocks * BLOCK_ROWS, _LATEST, dtype=np.int64)
    high = np.full(blocks * BLOCK_ROWS, _EARLIEST, dtype=np.int64)
    low[: times.len()] = times.fill_null(_LATEST).to_numpy()
    high[: times.len()] = times.fill_null(_EARLIEST).to_numpy()
    return low.reshape(blocks, -1).min(axis=1), high.reshape(blocks, -1).max(axis=1)


def _in_order(frame: pl.DataFrame, time: str, key: str) -> pl.DataFrame:
    """`frame` (every row with a time) sorted by (time, key), key nulls last, stably."""
    if frame.height < 2:
        return frame
    ids = frame.get_column(key)
    if ids.null_count():
        return frame.sort([time, key], nulls_last=True, maintain_order=True)
    times = frame.get_column(time).cast(pl.Int64).to_numpy()
    order = replay_order(
        np.arange(frame.height, dtype=np.int64), np.zeros(frame.height, np.int64), times, ids
    )
    return frame if bool((np.diff(order) == 1).all()) else frame[order]


def _slices(frame: pl.DataFrame, rows: int) -> Iterator[pl.DataFrame]:
    """`frame` in consecutive slices of at most `rows` rows (none when empty)."""
    for start in range(0, frame.height, rows):
        yield frame.slice(start, rows)


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
