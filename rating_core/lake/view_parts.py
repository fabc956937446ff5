"""What a view of the lake reads: its parts (Parquet files read as one relation) and their
columns, with no import beyond the standard library, so that `rating_core.lake.query` can open
the table views of a query without importing Polars (`rating_core.lake.views` lists them with
the catalogue; `query` lists the common ones itself)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rating_core.schemas import TableSchema

VERSIONS_VIEW = "versions"
VERSIONS_WHAT = "one row per published version (manifest): when, why, from which parent"

MAIN_VIEWS = (
    "lists",
    "current_lists",
    "original_lists",
    VERSIONS_VIEW,
    "diffs",
    "games",
    "quarantine",
    "history_fide",
    "history_ukd",
    "history_club",
    "history_site",
    "history_fibs",
)
"""The views an error message names (the per-table history views are left to SHOW TABLES)."""

DUCKDB_NUMBERS = frozenset(
    {
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "HUGEINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "UHUGEINT",
        "FLOAT",
        "DOUBLE",
    }
)
"""DuckDB's number types (DECIMAL(p, s) aside): shown right-aligned, written to CSV as they are."""

FileSchema = dict[str, Any]
"""A Parquet file's columns and their types (Polars types, or DuckDB type names when DuckDB
read the footer)."""


@dataclass(frozen=True)
class ViewPart:
    """Parquet files read as one relation, named `name`: `partition_col` (if any) is read from
    each file's folder name under `base` (`period=2026-03`), `constants` are columns of one value
    (`list`)."""

    name: str
    files: tuple[Path, ...]
    partition_col: str | None = None
    base: Path | None = None
    constants: tuple[tuple[str, str], ...] = ()
    schemas: tuple[FileSchema | None, ...] = field(default=(), hash=False, compare=False)
    """Each file's columns, as its footer says (None: the file is damaged), read once when the
    view is listed so that the DuckDB side can check and unify them without reading them again."""


@dataclass(frozen=True)
class LakeView:
    """One view of the lake: its name, what it holds, its parts and, when no file holds it yet,
    the columns it has (None: the table's columns are only known once written)."""

    name: str
    what: str
    parts: tuple[ViewPart, ...] = ()
    schema: TableSchema | None = field(default=None, hash=False, compare=False)
