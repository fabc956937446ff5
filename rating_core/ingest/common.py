"""What every reader returns, and helpers to build quarantine rows (DESIGN §4)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from rating_core.schemas import QUARANTINE_SCHEMA, conform, empty


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
