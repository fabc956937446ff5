"""PGN reader: whole files into raw game rows without a Python loop per game (DESIGN §2, §4, §8).

The public entry of the PGN ingest, in modules by concern: `pgn_files` (the file's bytes, as a
stream), `pgn_stream` (a file in windows cut at game boundaries), `pgn_scan` (the numba byte
scanner), `pgn_frames` (rows and defects from the scan) and `pgn_reference` (python-chess, game
by game: the oracle of the differential tests).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from rating_core.budget import MemoryBudget
from rating_core.ingest import pgn_stream
from rating_core.ingest.common import IngestResult
from rating_core.ingest.pgn_frames import repeated_ids
from rating_core.ingest.pgn_reference import read_pgn_reference
from rating_core.ingest.pgn_stream import NotUtf8, PgnStream
from rating_core.schemas import QUARANTINE_SCHEMA

__all__ = ["pgn_windows", "read_pgn", "read_pgn_reference"]


PGN_SUFFIXES = (".pgn", ".pgn.gz", ".pgn.zst")
"""The names of PGN files (plain, gzip or zstd), matched on the lower-cased file name."""


def pgn_windows(
    path: Path,
    source_file: str,
    *,
    window: int | None = None,
    chunks: int | None = None,
    budget: MemoryBudget | None = None,
    repeated: frozenset[int] = frozenset(),
    keep_repeats: bool = False,
) -> Iterator[tuple[PgnStream, IngestResult]]:
    """Each window of a PGN file as raw rows and quarantine rows, with the stream reading it
    (its `notes` and `games` are final once the windows are exhausted). A file that is not
    UTF-8 is read again from its start as Windows-1252: the caller drops what the first
    reading gave when a window comes from a new stream (`legacy`). `window`: bytes read at a
    time (default `pgn_stream.WINDOW_BYTES`, or what `budget` allows); `budget` also bounds the
    zstd window and the longest stretch without a game. A game id repeated within a window is
    quarantined there; across windows, the ids `repeated` (their hashes) are quarantined naming
    the file's first record, and with `keep_repeats` no repeat is (`pgn_frames.EarlierLines`)."""
    budget = budget or MemoryBudget()
    sizes = {
        "window": window or min(pgn_stream.WINDOW_BYTES, budget.text_window),
        "zstd_window": budget.zstd_window,
        "stretch": budget.stretch,
        "pieces": chunks,
        "repeated": repeated,
        "keep_repeats": keep_repeats,
    }
    stream = PgnStream(Path(path), source_file, **sizes)  # type: ignore[arg-type]
    try:
        for result in stream.chunks():
            yield stream, result
    except NotUtf8:
        stream = PgnStream(Path(path), source_file, legacy=True, **sizes)  # type: ignore[arg-type]
        for result in stream.chunks():
            yield stream, result


def read_pgn(
    path: Path,
    source_file: str | None = None,
    *,
    chunks: int | None = None,
    window: int | None = None,
) -> IngestResult:
    """Read a PGN file (plain, `.gz` or `.zst`) into RAW_GAMES_SCHEMA rows and quarantine rows.

    `source_file` is recorded in every row; it defaults to the path as given. Games with a defect
    go to the quarantine with a reason; the games around them are still returned, and the later
    records of a game id seen twice too. `chunks` sets how many pieces each window is scanned
    in, `window` the bytes read at a time; the result never depends on either.
    """
    source = str(path) if source_file is None else source_file
    rows: list[pl.DataFrame] = []
    quarantine: list[pl.DataFrame] = []
    stream: PgnStream | None = None
    windows = pgn_windows(Path(path), source, window=window, chunks=chunks, keep_repeats=True)
    for reading, result in windows:  # every repeat kept: found below over the whole file
        if reading is not stream:  # a new reading (Windows-1252): the first one's rows go
            stream, rows, quarantine = reading, [], []
        rows.append(result.rows)
        quarantine.append(result.quarantine)
    assert stream is not None
    games = pl.concat(rows) if len(rows) > 1 else rows[0]
    rejected = pl.concat(quarantine) if len(quarantine) > 1 else quarantine[0]
    games, dup = repeated_ids(games)  # the later records of an id, in any window, go
    if dup.height:
        extra = dup.select(
            pl.lit(source).alias("source_file"),
            pl.col("q_line").alias("line"),
            pl.col("game_id").alias("record"),
            pl.col("q_value").alias("value"),
            pl.col("q_reason").alias("reason"),
        ).cast(QUARANTINE_SCHEMA)
        rejected = pl.concat([rejected, extra]).sort("line", maintain_order=True)
    return IngestResult(rows=games, quarantine=rejected, notes=tuple(stream.notes))
