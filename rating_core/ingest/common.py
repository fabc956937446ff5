"""What every reader returns, and helpers to build quarantine rows (DESIGN §4)."""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import polars as pl

from rating_core.schemas import QUARANTINE_SCHEMA, conform, empty


def _cp1252(error: UnicodeError) -> tuple[str, int]:
    """Decode error handler: the five bytes Windows-1252 leaves undefined read as Latin-1."""
    assert isinstance(error, UnicodeDecodeError)  # registered for decoding only
    return error.object[error.start : error.end].decode("latin-1"), error.end


codecs.register_error("ratings_latin1", _cp1252)


def decode(data: bytes) -> tuple[str, bool]:
    """Text of a file and whether it was not UTF-8: the whole file is then read as
    Windows-1252 (its undefined bytes as Latin-1), as PGN, TRF and FIDE's list files from older
    Windows programs are; a UTF-8 byte order mark is dropped. The one decoder of every reader."""
    try:
        text = data.decode("utf-8")
        legacy = False
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="ratings_latin1")
        legacy = True
    return text.removeprefix("\ufeff"), legacy


def decode_noted(data: bytes, source_file: str) -> tuple[str, tuple[str, ...]]:
    """`decode`'s text with the note the run summary shows when the file was not UTF-8."""
    text, legacy = decode(data)
    return text, ((f"{source_file}: not UTF-8; read as Windows-1252",) if legacy else ())


class UnreadableFileError(Exception):
    """A file that cannot be read at all (missing, not this format); the message names it and why."""


@dataclass(frozen=True)
class IngestResult:
    """Rows that passed validation and the records that went to the quarantine, from one file."""

    rows: pl.DataFrame
    quarantine: pl.DataFrame = field(default_factory=lambda: empty(QUARANTINE_SCHEMA))
    notes: tuple[str, ...] = ()  # facts the run summary must say (e.g. "no time control: standard")


def quarantine_rows(records: list[dict]) -> pl.DataFrame:
    """Quarantine frame from dicts with keys source_file, line, record, value, reason."""
    if not records:
        return empty(QUARANTINE_SCHEMA)
    return conform(pl.DataFrame(records, schema=QUARANTINE_SCHEMA), QUARANTINE_SCHEMA)


def repeats(values: pl.Series) -> pl.Series | None:
    """`values.is_first_distinct()` when some value repeats (nulls count as one value), else
    None. Distinct 64-bit hashes prove distinct values in one cheap pass over a million game
    ids (a fifth of `is_first_distinct`); only a repeated hash needs the exact check."""
    if values.hash().n_unique() == values.len():
        return None
    first = values.is_first_distinct()
    return None if first.all() else first


ID_HASH_SEED = 0x5EED
"""Seed of the 64-bit hashes of record ids (game ids kept per group, ids repeated across the
chunks of a streamed file)."""


class HashSink(Protocol):
    """Where a reading puts the id hashes of its pieces: a list of arrays, or the ingest
    store's spill file on disk (`rating_core.lake.id_spill.HashSpill`), which a month of ids
    does not make grow in memory."""

    def append(self, hashes: np.ndarray, /) -> None: ...

    def clear(self) -> None: ...


def id_hashes(ids: pl.Series) -> np.ndarray:
    """64-bit hashes of ids (Polars', stable within one Polars version), as a numpy array."""
    return ids.hash(ID_HASH_SEED).to_numpy()


def repeated_hashes(parts: Iterable[np.ndarray]) -> set[int]:
    """The hashes that occur more than once over `parts` (each part's own repeats included)."""
    arrays = list(parts)
    if not arrays:
        return set()
    ordered = np.sort(np.concatenate(arrays))
    return set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
