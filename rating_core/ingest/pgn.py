"""PGN reader: whole files into raw game rows without a Python loop per game (DESIGN §2, §4, §8).

The public entry of the PGN ingest, in modules by concern: `pgn_files` (the file's bytes),
`pgn_scan` (the numba byte scanner), `pgn_frames` (rows and defects from the scan) and
`pgn_reference` (python-chess, game by game: the oracle of the differential tests).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from rating_core.ingest.common import IngestResult, UnreadableFileError, quarantine_rows
from rating_core.ingest.pgn_files import nul_lines, read_buffer
from rating_core.ingest.pgn_frames import derive, games_frame, split
from rating_core.ingest.pgn_reference import read_pgn_reference
from rating_core.ingest.pgn_scan import default_chunks

__all__ = ["read_pgn", "read_pgn_reference"]


PGN_SUFFIXES = (".pgn", ".pgn.gz", ".pgn.zst")
"""The names of PGN files (plain, gzip or zstd), matched on the lower-cased file name."""


def read_pgn(
    path: Path, source_file: str | None = None, *, chunks: int | None = None
) -> IngestResult:
    """Read a PGN file (plain, `.gz` or `.zst`) into RAW_GAMES_SCHEMA rows and quarantine rows.

    `source_file` is recorded in every row; it defaults to the path as given. Games with a defect
    go to the quarantine with a reason; the games around them are still returned. `chunks` sets
    how many pieces the file is scanned in (default: by size and CPUs); the result never
    depends on it.
    """
    path = Path(path)
    source = str(path) if source_file is None else source_file
    buf = read_buffer(path, source)
    start = 3 if buf[:3].tobytes() == b"\xef\xbb\xbf" else 0
    pieces = default_chunks(buf.shape[0]) if chunks is None else chunks
    notes: list[str] = []
    try:
        games, stray = games_frame(buf, start, pieces)
        if stray < 0:  # not UTF-8: the whole file is Windows-1252 (older Windows programs)
            text = str(buf.data[start:], "cp1252", errors="ratings_latin1")
            buf = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
            start = 0
            games, stray = games_frame(buf, start, pieces)
            notes.append(f"{source}: not UTF-8, read as Windows-1252")
    except UnreadableFileError as exc:
        raise UnreadableFileError(f"{source}: {exc}") from exc
    if not games.height and not stray:  # nothing but blank lines (or `%` escape lines)
        blank = not bytes(buf.data[start:]).strip()
        notes.append(f"{source}: empty, no games" if blank else f"{source}: no games in the file")
    nuls = nul_lines(buf) if games.height else None
    result = split(derive(games, source, nuls), source)
    if stray > 0:
        extra = quarantine_rows(
            [
                {
                    "source_file": source,
                    "line": stray,
                    "record": None,
                    "value": "",
                    "reason": "text before the first game's tags is not part of any game",
                }
            ]
        )
        result = IngestResult(rows=result.rows, quarantine=pl.concat([extra, result.quarantine]))
    return IngestResult(rows=result.rows, quarantine=result.quarantine, notes=tuple(notes))
