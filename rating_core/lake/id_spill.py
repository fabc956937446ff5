"""Game id hashes gathered on disk while a group is read, and the questions the ingest store asks
of them (ids repeated, ids shared with another group, the sorted list it keeps), answered by
DuckDB within a memory limit, spilling beyond it (issue 31 item 4).

A month of games has tens of millions of ids: their 64-bit hashes, held in memory a window at a
time and concatenated and sorted at the end, were 40 bytes a game at the ingest's peak (1.2 GB
for 30M games). Written to a Parquet file a window at a time instead, they cost the ingest's
memory nothing that grows with the games.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rating_core.lake.spilling import open_spilling

HASH_SCHEMA = pa.schema([pa.field("hash", pa.uint64())])
"""The one column of a spill file (and of the lake's `ingest_ids`)."""

BATCH_ROWS = 1 << 20
"""Hashes handed back at a time by `sorted_batches` (8 MiB)."""


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _files(paths: Sequence[Path]) -> str:
    return "read_parquet([" + ", ".join(_literal(str(path)) for path in paths) + "])"


class HashSpill:
    """Hashes appended a batch at a time to a Parquet file in `folder` (one row group a batch:
    memory holds one batch); `clear` starts over (a reading that restarts). Like a list of
    arrays to the reader that fills it (`append`, `clear`)."""

    def __init__(self, folder: Path, name: str) -> None:
        self.path = folder / f"{name}.parquet"
        self.count = 0
        self._writer: pq.ParquetWriter | None = None

    def append(self, hashes: np.ndarray) -> None:
        if not hashes.size:
            return
        if self._writer is None:
            self._writer = pq.ParquetWriter(
                self.path, HASH_SCHEMA, compression="none", write_statistics=False
            )
        column = pa.array(np.ascontiguousarray(hashes, dtype=np.uint64), type=pa.uint64())
        self._writer.write_table(pa.Table.from_arrays([column], schema=HASH_SCHEMA))
        self.count += int(hashes.size)

    def clear(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)
        self.count = 0

    def close(self) -> None:
        """Finish the file (it can then be read); appending again starts a new one."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def files(self) -> list[Path]:
        """The finished file ([] when no hash was appended)."""
        self.close()
        return [self.path] if self.count else []


class HashQueries:
    """A DuckDB connection within `memory` bytes, spilling to a temporary folder, that answers
    questions about hash files (a spill's, or the lake's `ingest_ids` partitions)."""

    def __init__(self, memory: int) -> None:
        self._con, self._spill = open_spilling(memory)

    def close(self) -> None:
        self._con.close()
        shutil.rmtree(self._spill, ignore_errors=True)

    def repeated(self, paths: Sequence[Path]) -> set[int]:
        """The hashes that occur more than once over the files (few: duplicates are mistakes)."""
        if not paths:
            return set()
        rows = self._con.execute(
            f"SELECT hash FROM {_files(paths)} GROUP BY hash HAVING count(*) > 1"
        ).fetchall()
        return {int(row[0]) for row in rows}

    def common(self, a: Sequence[Path], b: Sequence[Path]) -> set[int]:
        """The hashes of files `a` also in files `b`."""
        if not a or not b:
            return set()
        rows = self._con.execute(
            f"SELECT DISTINCT x.hash FROM {_files(a)} x SEMI JOIN {_files(b)} y ON x.hash = y.hash"
        ).fetchall()
        return {int(row[0]) for row in rows}

    def any_common(self, a: Sequence[Path], b: Sequence[Path]) -> bool:
        """Whether files `a` and `b` share a hash."""
        if not a or not b:
            return False
        rows = self._con.execute(
            f"SELECT 1 FROM {_files(a)} x SEMI JOIN {_files(b)} y ON x.hash = y.hash LIMIT 1"
        ).fetchall()  # fetched to the end: the connection takes no other query before
        return bool(rows)

    def sorted_batches(self, paths: Sequence[Path]) -> Iterator[pa.RecordBatch]:
        """Every hash of the files in ascending order, `BATCH_ROWS` at a time."""
        if not paths:
            return
        query = self._con.sql(f"SELECT hash FROM {_files(paths)} ORDER BY hash")
        reader = query.to_arrow_reader(BATCH_ROWS)
        try:
            for batch in reader:
                if batch.num_rows:
                    yield batch
        finally:
            reader.close()


@contextlib.contextmanager
def hash_queries(memory: int) -> Iterator[HashQueries]:
    """`HashQueries` within `memory` bytes, closed (and its spill removed) on leaving."""
    queries = HashQueries(memory)
    try:
        yield queries
    finally:
        queries.close()


@contextlib.contextmanager
def spill_folder() -> Iterator[Path]:
    """A temporary folder for a group's spill files, removed on leaving."""
    folder = Path(tempfile.mkdtemp(prefix="ratings-ingest-ids-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
