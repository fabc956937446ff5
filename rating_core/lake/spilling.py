"""A DuckDB connection within a memory budget that spills what does not fit to a temporary folder
of its own: the rating's sorts of the games, the ingest's questions about id hashes.

DuckDB's defaults do not suit a small budget: every core runs a thread, and each thread sorting,
joining or aggregating holds blocks of its own that cannot spill; and Parquet is read a whole
row group of every column ahead. So a budget allows one thread per THREAD_MEMORY and Parquet is
read without prefetching: a sort that would fail at a small budget spills and finishes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import duckdb

THREAD_MEMORY = 128 * 1024**2
"""The budget each of DuckDB's threads is given for a large sort to spill rather than fail: a sort
of every column of 4M `history_site` rows (six row groups of 670k rows, Parquet read without
prefetching) fails at 100 MB with two threads and finishes with one; two need 150 MB, so 128 MiB
a thread leaves room. A larger sort needs more whatever the threads (DuckDB's merge of the spilled
runs holds a block of each: 8M such rows need 200 MB)."""


def threads_for(memory: int) -> int:
    """DuckDB's threads within a budget of `memory` bytes: one per THREAD_MEMORY, at least one,
    at most the machine's cores (DuckDB's own default)."""
    cores = os.cpu_count() or 1
    return max(1, min(cores, memory // THREAD_MEMORY))


def budget_settings(memory: int, spill: Path) -> list[str]:
    """The settings of a connection within `memory` bytes spilling to `spill`, in order: the
    budget, the threads it allows, the folder, Parquet read page by page."""
    return [
        f"SET memory_limit = '{memory}B'",
        f"SET threads = {threads_for(memory)}",
        f"SET temp_directory = '{str(spill).replace(chr(39), chr(39) * 2)}'",
        "SET disable_parquet_prefetching = true",
    ]


def open_spilling(memory: int) -> tuple[duckdb.DuckDBPyConnection, Path]:
    """A new connection within `memory` bytes and its spill folder (the caller closes the one and
    removes the other: `spilling_connection` does both)."""
    spill = Path(tempfile.mkdtemp(prefix="ratings-spill-"))
    try:
        con = duckdb.connect(":memory:", config={"preserve_insertion_order": False})
        for setting in [*budget_settings(memory, spill), "SET enable_progress_bar = false"]:
            con.execute(setting)  # no progress bar: stderr is for one sentence
    except BaseException:
        shutil.rmtree(spill, ignore_errors=True)
        raise
    return con, spill


@contextlib.contextmanager
def spilling_connection(memory: int) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection within `memory` bytes for the block, its spill folder removed after it."""
    con, spill = open_spilling(memory)
    try:
        yield con
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
