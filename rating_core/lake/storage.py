"""Canonical tables in the lake as Hive-partitioned Parquet (DESIGN §5), written atomically.

Layout: `<lake>/<table>/<col>=<value>/part-0.parquet` for partitioned tables (the partition column
lives in the folder name, not in the file, as Hive, DuckDB and Polars expect) and
`<lake>/<table>/part-0.parquet` for unpartitioned ones. A partition may hold several part files
(`part-<group>.parquet`: the games table keeps each inbox file group's rows in files of their
own, so one group is replaced without touching the others); readers read them all. Quarantine is partitioned by source kind:
`<lake>/quarantine/source=<kind>/part-0.parquet` (QUARANTINE_SCHEMA plus a `source` column), so each
ingest run replaces the rejected records of its own kind and leaves the others alone. Which table
is partitioned by what, and with which schema, is the catalogue's (`rating_core.tables`):
every function here takes one of its entries or a table name.

Paths are local folders: a `file://` URI is accepted, any other scheme is refused with a clear
error (`as_local_path` is the single seam where object storage would plug in).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import io
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeVar

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from rating_core.lake.location import as_local_path
from rating_core.periods import previous_period
from rating_core.schemas import TableSchema
from rating_core.tables import PERIOD, LakeTable, named
from rating_core.text import is_safe_name as is_safe_name  # re-exported: callers check names here

PART_FILE = "part-0.parquet"
"""The data file of a partition written whole (or of an unpartitioned table)."""

PART_GLOB = "*.parquet"
"""The data files of a partition: every visible Parquet file in its folder (a file being
written has a hidden temporary name and never matches)."""

TableRef = LakeTable | str
"""A table as the storage functions take it: a catalogue entry (`rating_core.tables`) or a
name; a name the catalogue knows gets the catalogue's partitioning and schema."""

_SAFE_TABLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$")


def check_name(value: str, what: str) -> str:
    """Return `value` if it is a safe single path component (letters, digits, `.`, `_`, `-`)."""
    if not is_safe_name(value):
        raise ValueError(f"{what} {value!r} is not a valid name (letters, digits, '.', '_', '-')")
    return value


def _catalogued(table: TableRef) -> LakeTable | None:
    """`table`'s catalogue entry, None for a name the catalogue does not know."""
    return table if isinstance(table, LakeTable) else named(table)


def _entry(table: TableRef) -> LakeTable:
    """`table` as an entry; an unknown name has no declared partitioning or schema (the callers'
    arguments, or the defaults, decide)."""
    return _catalogued(table) or LakeTable(str(table))


def _partition_col(table: LakeTable, given: str | None) -> str:
    """The partition column to use: the caller's, else the catalogue's, else `period`; a caller's
    column that contradicts the catalogue is refused rather than writing a second layout."""
    if given is not None and table.partition_col is not None and given != table.partition_col:
        raise ValueError(
            f"table {table.name!r} is partitioned by {table.partition_col!r}, not {given!r}"
        )
    return given or table.partition_col or PERIOD


def table_dir(lake: Path | str, table: TableRef) -> Path:
    """The folder of `table` in the lake, refusing names that would escape it."""
    name = _entry(table).name
    if not _SAFE_TABLE.match(name) or ".." in name.split("/"):
        raise ValueError(f"table name {name!r} is not valid (letters, digits, '.', '_', '-', '/')")
    return as_local_path(lake) / name


def fsync_dir(path: Path) -> None:
    """Flush a directory entry to disk so that a rename inside it survives a crash (POSIX)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


STAGING_DIR = ".staging"
"""`<lake>/.staging/`: where list versions are written before they are renamed into `lists/`."""

INSTANCE_DIR = ".dagster"
"""`<lake>/.dagster/`: the Dagster instance of the lake's runs (runs, event logs) when
DAGSTER_HOME is unset; named here, beside the lake's other folders, for readers that must not
import Dagster."""

_TEMP_MARK = ".tmp-"
"""Part of the name of a table file being written (`.part-0.parquet.tmp-<id>`, never `*.parquet`)."""


def clean_interrupted_writes(lake: Path | str) -> list[Path]:
    """Remove what a killed run left half-written: `<lake>/.staging/` and table temp files.

    Call it only while holding the lake's lock (`lake_lock.hold_lake`): a running writer's files
    look the same. Returns what was removed. Nothing removed was ever a complete version or part.
    """
    root = as_local_path(lake)
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    staging = root / STAGING_DIR
    if staging.is_dir():
        shutil.rmtree(staging)
        removed.append(staging)
    for top in root.iterdir():
        if not top.is_dir() or top.name.startswith("."):  # .staging done; .dagster is not ours
            continue
        for path in top.rglob(f".*{_TEMP_MARK}*"):
            if path.is_file():
                path.unlink()
                removed.append(path)
    return removed


TABLE_COMPRESSION: Final = "lz4"
"""The lake tables' Parquet codec: LZ4 writes the 4M-row site history of a 1M-game month in about
two thirds of zstd's CPU time, for files about a quarter larger (published lists keep zstd)."""


SMALL_FRAME_BYTES: Final = 32 * 2**20
"""Below this in-memory size a frame is encoded into memory and written with one system call:
Polars' file writer costs about 1.5 ms more per file, which a range of 60 periods pays on every
partition and list file; above it the file writer streams and is faster."""


def _write_parquet(
    frame: pl.DataFrame,
    path: Path,
    statistics: bool = True,
    metadata: dict[str, str] | None = None,
) -> None:
    """Write `frame` as Parquet to `path` (not flushed to disk): small frames encoded in memory
    and written in one call (`SMALL_FRAME_BYTES`), large ones by Polars' streaming writer.
    `metadata`: key-value pairs kept in the file's footer."""
    options = {"compression": TABLE_COMPRESSION, "statistics": statistics, "metadata": metadata}
    if frame.estimated_size() < SMALL_FRAME_BYTES:
        buffer = io.BytesIO()
        frame.write_parquet(buffer, **options)  # type: ignore[arg-type]
        path.write_bytes(buffer.getbuffer())
    else:
        frame.write_parquet(path, **options)  # type: ignore[arg-type]


@functools.cache
def _syncfs() -> Callable[[int], int] | None:
    """Linux's `syncfs(fd)` from the C library, None where there is none."""
    try:
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (AttributeError, OSError, TypeError):  # pragma: no cover - not Linux
        return None


def flush_filesystem(path: Path) -> None:
    """Flush to disk every file written and every folder entry changed on the filesystem that
    holds `path` (Linux `syncfs`, elsewhere `os.sync`): what an fsync of each file and folder
    of a batch would do, in one call."""
    syncfs = _syncfs()
    if syncfs is not None:
        fd = os.open(path, os.O_RDONLY)
        try:
            if syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    os.sync()  # pragma: no cover - no syncfs, or it failed


def _atomic_write_parquet(
    frame: pl.DataFrame, target: Path, metadata: dict[str, str] | None = None
) -> None:
    """Write `frame` to a hidden temp file beside `target`, fsync it, then `os.replace` it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}{_TEMP_MARK}{uuid.uuid4().hex}"
    try:
        _write_parquet(frame, tmp, metadata=metadata)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
    fsync_dir(target.parent)


def write_partitioned(
    lake: Path | str,
    table: TableRef,
    frame: pl.DataFrame,
    partition_col: str | None = None,
    *,
    partitions: Iterable[str] | None = None,
) -> list[Path]:
    """Write `frame` as `<table>/<partition_col>=<value>/part-0.parquet`, one file per value.

    The partition column is the catalogue's for a catalogued table, else `partition_col`, else
    `period`. Each written partition is replaced atomically and whole (a re-run of a period
    rewrites it); other partitions are untouched. `partitions` names values the caller is
    rewriting even if `frame` has no rows for them (they get an empty file with the schema).
    """
    known = _catalogued(table)
    if known is not None and not known.partitioned:
        raise ValueError(f"table {known.name!r} is not partitioned: write it with write_table")
    entry = _entry(table)
    partition_col = _partition_col(entry, partition_col)
    name = entry.name
    if partition_col not in frame.columns:
        raise ValueError(f"cannot partition {name!r} by {partition_col!r}: no such column")
    table_dir(lake, entry)  # refuses a name that would escape the lake
    keys = frame.get_column(partition_col).cast(pl.String)
    if keys.null_count():
        raise ValueError(f"{name!r}: {keys.null_count()} rows have no {partition_col!r} value")
    present = keys.unique().to_list()
    values = set(present) | set(partitions or ())
    for value in values:
        check_name(value, f"{partition_col} value")
    data = frame.with_columns(keys.alias(partition_col))
    if len(present) == 1:  # a month's games: no copy of the frame to split it
        parts = {present[0]: data.drop(partition_col)}
    else:  # one pass splits the frame (a filter per value would read it once per partition)
        parts = {
            key[0]: part
            for key, part in data.partition_by(
                partition_col, as_dict=True, include_key=False, maintain_order=True
            ).items()
        }
    empty_part = data.clear().drop(partition_col)
    return write_partitions(
        lake, entry, {value: parts.get(value, empty_part) for value in values}, partition_col
    )


def write_partitions(
    lake: Path | str,
    table: TableRef,
    parts: Mapping[str, pl.DataFrame],
    partition_col: str | None = None,
) -> list[Path]:
    """Replace the partitions of `table` named by `parts` (value -> rows, without the partition
    column), each atomically and whole: every file is written, all are flushed to disk at once,
    then each is renamed over its partition (one flush for a range instead of one per file).
    What `write_partitioned` does once it has split its frame."""
    entry = _entry(table)
    partition_col = _partition_col(entry, partition_col)
    base = table_dir(lake, entry)
    staged: list[tuple[Path, Path]] = []  # (temp file, target)
    try:
        for value in sorted(parts):
            folder = base / f"{partition_col}={check_name(value, f'{partition_col} value')}"
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / PART_FILE
            tmp = folder / f".{PART_FILE}{_TEMP_MARK}{uuid.uuid4().hex}"
            staged.append((tmp, target))
            _write_parquet(parts[value], tmp, entry.statistics)
        if staged:
            flush_filesystem(base)
        for tmp, target in staged:
            os.replace(tmp, target)
            for other in target.parent.glob("*.parquet"):  # another layout's leftovers
                if other.name != PART_FILE:
                    other.unlink()
    finally:
        for tmp, _ in staged:
            if tmp.exists():
                tmp.unlink()
    if staged:
        flush_filesystem(base)  # the renames
    return [target for _, target in staged]


DICTIONARY_PAGE_BYTES: Final = 1 << 20
"""Arrow's limit on a column chunk's dictionary page (`dictionary_pagesize_limit`'s default):
past it the writer gives the dictionary up and writes the values plainly."""


def _dictionary_columns(rows: pl.DataFrame) -> list[str]:
    """The columns a streamed Parquet file dictionary-encodes, judged on its first batch:
    enums and categoricals, and the strings whose distinct values fit one dictionary page (a
    period, a number, a category). Ids (a game's, a player's) do not: Arrow filled a
    dictionary for each of them and then gave it up, 8 % of the time of writing a site
    history. Tried on every column, Arrow gives dictionaries up on the floats after paying for
    them: a site history batch took 1.5x the time."""
    columns = []
    for name, dtype in rows.schema.items():
        if isinstance(dtype, (pl.Enum, pl.Categorical)):
            columns.append(name)
        elif dtype == pl.String:  # a page holds each distinct value and its 4-byte length
            distinct = pl.col(name).drop_nulls().unique()
            if rows.select((distinct.str.len_bytes() + 4).sum()).item() <= DICTIONARY_PAGE_BYTES:
                columns.append(name)
    return columns


def _arrow_rows(rows: pl.DataFrame) -> pa.Table:
    """`rows` as an Arrow table for a Parquet writer: its plain string and binary columns as
    Arrow views, Polars' own layout, so without a copy (the large strings of the default
    conversion cost a tenth of writing a site history); every other column as Polars converts
    it by default (the Parquet writer takes no dictionary of views)."""
    views = [name for name, dtype in rows.schema.items() if dtype in (pl.String, pl.Binary)]
    if not views:
        return rows.to_arrow()
    viewed = rows.select(views).to_arrow(compat_level=pl.CompatLevel.newest())
    if len(views) == rows.width:
        return viewed
    rest = rows.drop(views).to_arrow()
    pick = {name: (viewed if name in viewed.column_names else rest) for name in rows.columns}
    return pa.Table.from_arrays(
        [pick[name].column(name) for name in rows.columns],
        schema=pa.schema([pick[name].schema.field(name) for name in rows.columns]),
    )


@dataclass
class _StagedPart:
    """One Parquet file being written: the writer (None for a file written whole), its temp
    file and its target."""

    writer: pq.ParquetWriter | None
    tmp: Path
    target: Path


@dataclass
class StagedParts:
    """Partition files written under hidden temporary names, then made visible together by
    `commit` (one flush to disk for all of them) or removed by `discard`.

    Each file is `<table>/<col>=<value>/<part_name>`: rows arrive in batches (`write`, `append`:
    a streamed Parquet file per partition, so memory holds one batch) or whole (`put`). The
    ingest store names its files by group (`part-<group>.parquet`); the period assets use
    PART_FILE, and a committed PART_FILE replaces every other file of its partition.
    """

    lake: Path
    part_name: str = PART_FILE
    parts: dict[tuple[str, str], _StagedPart] = field(default_factory=dict)

    def write(self, table: LakeTable, frame: pl.DataFrame) -> None:
        """Append `frame`'s rows to the file of each partition they fall in (by the table's
        partition column, dropped from the rows)."""
        if not frame.height:
            return
        column = table.partition_col
        assert column is not None
        if frame.get_column(column).n_unique() == 1:
            split = {(frame.get_column(column)[0],): frame}
        else:
            split = frame.partition_by(column, as_dict=True, maintain_order=True)
        for (value,), rows in split.items():
            self.append(table, str(value), rows.drop(column))

    def _new(self, table: TableRef, value: str) -> tuple[Path, Path]:
        entry = _entry(table)
        column = _partition_col(entry, None)
        folder = table_dir(self.lake, entry) / f"{column}={check_name(value, column)}"
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / self.part_name
        return folder / f".{target.name}{_TEMP_MARK}{uuid.uuid4().hex}", target

    def append(self, table: TableRef, value: str, rows: pl.DataFrame) -> None:
        """Append `rows` to the staged file of partition `value` of `table` (cast to the
        schema of its first batch)."""
        key = (_entry(table).name, value)
        data = _arrow_rows(rows)
        part = self.parts.get(key)
        if part is None:
            tmp, target = self._new(table, value)
            writer = pq.ParquetWriter(
                tmp,
                data.schema,
                compression=TABLE_COMPRESSION,
                write_statistics=_entry(table).statistics,
                use_dictionary=_dictionary_columns(rows),
            )
            part = self.parts[key] = _StagedPart(writer, tmp, target)
        if part.writer is None:
            raise ValueError(f"{key[0]} {value}: written whole, cannot be appended to")
        if data.schema != part.writer.schema:
            data = data.cast(part.writer.schema)
        part.writer.write_table(data)

    def put(self, table: TableRef, value: str, frame: pl.DataFrame) -> None:
        """Stage `frame` as the whole file of partition `value` of `table`."""
        key = (_entry(table).name, value)
        if key in self.parts:
            raise ValueError(f"{key[0]} {value}: staged twice")
        tmp, target = self._new(table, value)
        self.parts[key] = _StagedPart(None, tmp, target)
        _write_parquet(frame, tmp, _entry(table).statistics)

    def staged(self, table: TableRef, value: str) -> Path | None:
        """The temp file of partition `value` of `table`, complete once `close` has run (None:
        nothing staged)."""
        part = self.parts.get((_entry(table).name, value))
        return part.tmp if part is not None else None

    def close(self) -> None:
        """Finish every streamed file (they can be read from their temp names)."""
        for part in self.parts.values():
            if part.writer is not None:
                part.writer.close()
                part.writer = None

    def commit(self, owned: Iterable[LakeTable] = ()) -> list[Path]:
        """Close every file, flush, then rename each over its target. A PART_FILE replaces the
        other files of its partition; with group part names, the files of that name in
        partitions of `owned` tables that got none now are removed."""
        self.close()
        if not self.parts:
            return []
        flush_filesystem(self.lake)
        for part in self.parts.values():
            os.replace(part.tmp, part.target)
            if self.part_name == PART_FILE:
                for other in part.target.parent.glob(PART_GLOB):  # another layout's leftovers
                    if other.name != PART_FILE:
                        other.unlink()
        written = {part.target for part in self.parts.values()}
        for entry in owned:
            for value in table_partitions(self.lake, entry):
                stale = table_file(self.lake, entry, value).parent / self.part_name
                if stale not in written and stale.exists():
                    stale.unlink()
        flush_filesystem(self.lake)
        self.parts.clear()
        return sorted(written)

    def discard(self) -> None:
        """Remove what was staged (a writing that failed or must start over)."""
        for part in self.parts.values():
            if part.writer is not None:
                with contextlib.suppress(Exception):  # the file goes anyway
                    part.writer.close()
            part.tmp.unlink(missing_ok=True)
        self.parts.clear()


def write_table(
    lake: Path | str,
    table: TableRef,
    frame: pl.DataFrame,
    metadata: dict[str, str] | None = None,
) -> Path:
    """Replace an unpartitioned table with `frame`, atomically: `<lake>/<table>/part-0.parquet`
    (`metadata`: key-value pairs for the file's footer, read back by `table_metadata`)."""
    known = _catalogued(table)
    if known is not None and known.partitioned:
        raise ValueError(
            f"table {known.name!r} is partitioned by {known.partition_col!r}: "
            "write it with write_partitioned"
        )
    target = table_dir(lake, table) / PART_FILE
    _atomic_write_parquet(frame, target, metadata)
    return target


def table_metadata(lake: Path | str, table: TableRef) -> dict[str, str]:
    """The key-value pairs `write_table` kept with an unpartitioned table (empty: none, or no
    such table)."""
    path = table_dir(lake, table) / PART_FILE
    if not path.is_file():
        return {}
    return pl.read_parquet_metadata(path)


def table_file(lake: Path | str, table: TableRef, value: str | None = None) -> Path:
    """The data file of one partition of `table` (`value`), or of an unpartitioned table: what
    a caller hashing a table's bytes reads (it may not exist)."""
    entry = _entry(table)
    if value is None:
        if entry.partitioned:
            raise ValueError(f"table {entry.name!r} is partitioned: name the partition")
        return table_dir(lake, entry) / PART_FILE
    column = _partition_col(entry, None)
    return table_dir(lake, entry) / f"{column}={check_name(value, column)}" / PART_FILE


def partition_files(lake: Path | str, table: TableRef, value: str) -> list[Path]:
    """The data files of one partition of `table`, sorted by name (none: an empty list)."""
    folder = table_file(lake, table, value).parent
    return sorted(folder.glob(PART_GLOB)) if folder.is_dir() else []


def table_partitions(
    lake: Path | str, table: TableRef, partition_col: str | None = None
) -> list[str]:
    """The partition values present for `table`, sorted (e.g. the periods of `games`)."""
    entry = _entry(table)
    partition_col = _partition_col(entry, partition_col)
    base = table_dir(lake, entry)
    if not base.is_dir():
        return []
    prefix = f"{partition_col}="
    return sorted(
        child.name[len(prefix) :]
        for child in base.iterdir()
        if child.is_dir()
        and child.name.startswith(prefix)
        and next(child.glob(PART_GLOB), None) is not None
    )


def drop_partition(lake: Path | str, table: TableRef, value: str) -> None:
    """Remove one partition of `table` with every file in it (nothing to do if it is absent)."""
    folder = table_file(lake, table, value).parent
    if folder.is_dir():
        shutil.rmtree(folder)


def read_table(
    lake: Path | str,
    table: TableRef,
    periods: Iterable[str] | None = None,
    *,
    partition_col: str | None = None,
    schema: TableSchema | None = None,
) -> pl.LazyFrame:
    """Scan `table` with Hive partitioning, the partition column read back as String.

    The partition column is the catalogue's for a catalogued table, else `partition_col`, else
    `period`. `periods` restricts the scan to those partition values (missing ones are skipped).
    A missing table gives an empty frame with `schema`, by default the catalogue's, so
    downstream code keeps its columns (an empty inbox has no `games` partition).
    """
    entry = _entry(table)
    partition_col = _partition_col(entry, partition_col)
    base = table_dir(lake, entry)
    present = table_partitions(lake, entry, partition_col)
    wanted = None if periods is None else {check_name(str(p), partition_col) for p in periods}
    chosen = [value for value in present if wanted is None or value in wanted]
    if chosen:
        # One scan per partition file (not a glob over the folder): partitions written by
        # different periods may differ in schema (an empty period has no columns), and no
        # `key=value` folder above the lake can ever become a column.
        parts = [
            pl.scan_parquet(path, hive_partitioning=False).with_columns(
                pl.lit(value, dtype=pl.String).alias(partition_col)
            )
            for value in chosen
            for path in sorted((base / f"{partition_col}={value}").glob(PART_GLOB))
        ]
        return pl.concat(parts, how="diagonal_relaxed")
    if not present and wanted is None and (base / PART_FILE).exists():
        return pl.scan_parquet(base / PART_FILE, hive_partitioning=False)
    if schema is None:  # a catalogued table is read back whole, as it would have been written
        return pl.LazyFrame(schema=entry.schema or {})
    return pl.LazyFrame(schema={**schema, partition_col: schema.get(partition_col, pl.String)})


# --- period tables: a frame's own `period` beside the partition column -------------------------

ROW_PERIOD = "row_period"
"""A frame's own `period` column is stored under this name: the partition column owns `period`."""

Rows = TypeVar("Rows", pl.DataFrame, pl.LazyFrame)


def stored_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` as a period table stores it: its own `period` column as `row_period`."""
    return frame.rename({PERIOD: ROW_PERIOD}) if PERIOD in frame.columns else frame


def restored_rows(frame: Rows) -> Rows:
    """Undo `stored_rows` so a frame reads back as it was written (the partition column, when
    read with it, gives way to the frame's own `period`)."""
    if ROW_PERIOD in frame.collect_schema().names():
        return frame.drop(PERIOD, strict=False).rename({ROW_PERIOD: PERIOD})
    return frame


def read_state_before(lake: Path | str, table: TableRef, period: str) -> pl.DataFrame | None:
    """The rows of `table` (`state/<name>`) after P-1, or None when nothing was written for P-1."""
    frame = read_table(lake, table, [previous_period(period)]).collect()
    if not frame.columns:
        return None
    if ROW_PERIOD in frame.columns:
        return restored_rows(frame)
    return frame.drop("period", strict=False)


def read_period(
    lake: Path | str, table: TableRef, period: str, schema: TableSchema | None = None
) -> pl.DataFrame:
    """Rows of one period of a partitioned lake table (an empty frame of `schema` when none)."""
    return restored_rows(read_table(lake, table, [period], schema=schema).collect())


def read_period_range(
    lake: Path | str, table: TableRef, periods: list[str], schema: TableSchema
) -> dict[str, pl.DataFrame]:
    """Rows of each period of `periods` of a partitioned table, read in one scan (an empty frame
    of `schema` for a period without rows)."""
    frame = read_table(lake, table, periods, schema=schema).collect()
    parts = (
        frame.partition_by("period", as_dict=True, include_key=False, maintain_order=True)
        if frame.height
        else {}
    )
    empty = pl.DataFrame(schema={c: t for c, t in schema.items() if c != "period"})
    return {period: restored_rows(parts.get((period,), empty)) for period in periods}
