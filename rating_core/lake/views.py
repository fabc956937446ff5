"""Which files each view of `ratings query` reads, and the same views as Polars lazy frames.

The views (`lists`, `current_lists`, `original_lists`, `versions`, `diffs`, `games`, `quarantine`,
`history_<system>`, `history_<table>`) are described in `rating_core.lake.query`; this module
says which Parquet files each one reads now: only complete list versions (from the manifests),
only the catalogue's table files that have columns. It imports Polars and the catalogue, so
`query` imports it only once a query names a view (`SELECT 1` starts without them).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.location import as_local_path
from rating_core.lake.storage import partition_files, table_dir, table_file, table_partitions
from rating_core.lake.versions import published_versions
from rating_core.lake.view_parts import VERSIONS_VIEW, FileSchema, LakeView, ViewPart
from rating_core.schemas import TableSchema

LIST_VIEW_SCHEMA: TableSchema = {**publish.SNAPSHOT_COLUMNS, **publish.LIST_SCHEMA}
"""The columns of `lists`, `current_lists` and `original_lists`: those of every `list.parquet`."""

PER_GAME_TABLES: dict[str, tuple[tables.LakeTable, ...]] = {
    "fide": tuple(tables.history(f"fide-{k}", "game_explanations") for k in tables.RATING_LISTS),
    "ukd": tuple(tables.history(f"ukd-{k}", "game_explanations") for k in tables.RATING_LISTS),
    "club": (tables.history("club", "game_explanations"),),
    "site": (tables.history("site"),),
    "fibs": (tables.history("fibs"),),
}
"""The per-game explanation tables of each system (`history_<system>`); the FIDE and UKD ones, one
per list, are read together with a `list` column naming the list (`fide-standard`)."""


# --- which files each view reads ---------------------------------------------------------------


def file_schema(path: Path) -> FileSchema | None:
    """A Parquet file's columns from its footer; None if the file is damaged or incomplete (the
    view reading it names it when a query uses it)."""
    try:
        return dict(pl.read_parquet_schema(path))
    except (pl.exceptions.PolarsError, OSError):
        return None


def _with_schemas(
    name: str,
    files: list[Path],
    partition_col: str | None = None,
    base: Path | None = None,
    constants: tuple[tuple[str, str], ...] = (),
) -> ViewPart | None:
    """The files that have at least one column (an empty period may be written with none: it
    holds no row, and DuckDB cannot read it) with their schemas; None when no file is left."""
    read = [(path, file_schema(path)) for path in files]
    kept = [(path, schema) for path, schema in read if schema is None or schema]
    if not kept:
        return None
    return ViewPart(
        name,
        tuple(path for path, _ in kept),
        partition_col,
        base,
        constants,
        tuple(schema for _, schema in kept),
    )


def _table_part(lake: Path, table: tables.LakeTable, **constants: str) -> ViewPart | None:
    """The files of a catalogue table, as `read_table` reads them; None if it has none."""
    if table.partitioned:
        values = table_partitions(lake, table)
        files = [path for value in values for path in partition_files(lake, table, value)]
        column = table.partition_col
    else:
        single = table_file(lake, table)
        files = [single] if single.exists() else []
        column = None
    return _with_schemas(
        history_view_name(table),
        files,
        partition_col=column,
        base=table_dir(lake, table),
        constants=tuple(constants.items()),
    )


@dataclass(frozen=True)
class ViewSpec:
    """What a view reads: published list versions (`versions` = `all`, `current` or `original`,
    file `file_name` of each) or catalogue tables (each with its constant columns)."""

    name: str
    what: str
    schema: TableSchema | None = field(default=None, hash=False, compare=False)
    versions: str | None = None
    file_name: str = publish.LIST_FILE
    tables: tuple[tuple[tables.LakeTable, tuple[tuple[str, str], ...]], ...] = ()


def history_view_name(table: tables.LakeTable) -> str:
    """A table's name as a view name: `history/fide-standard-player_explanations` is
    `history_fide_standard_player_explanations`."""
    return re.sub(r"[^A-Za-z0-9]+", "_", table.name)


def _list_of(table: tables.LakeTable) -> str:
    """`history/fide-standard-game_explanations` -> `fide-standard`."""
    return table.name.removeprefix(f"{tables.HISTORY}/").rsplit("-", 1)[0]


def _specs() -> tuple[ViewSpec, ...]:
    """Every view but `versions`, in the order the README documents them."""
    found = [
        ViewSpec("lists", "every published snapshot of every list", LIST_VIEW_SCHEMA, "all"),
        ViewSpec(
            "current_lists",
            "the newest version of each list and period",
            LIST_VIEW_SCHEMA,
            "current",
        ),
        ViewSpec(
            "original_lists",
            "each period's first publication (its lowest version)",
            LIST_VIEW_SCHEMA,
            "original",
        ),
        ViewSpec(
            "diffs",
            "what each version changed against its parent, and why",
            publish.DIFF_SCHEMA,
            "all",
            publish.DIFF_FILE,
        ),
        ViewSpec(
            "games",
            "every chess game of the inbox",
            tables.GAMES.schema,
            tables=((tables.GAMES, ()),),
        ),
        ViewSpec(
            "quarantine",
            "rejected input records with their reason",
            tables.QUARANTINE.schema,
            tables=((tables.QUARANTINE, ()),),
        ),
    ]
    for system, per_game in PER_GAME_TABLES.items():
        with_list = len(per_game) > 1
        parts = tuple((t, (("list", _list_of(t)),) if with_list else ()) for t in per_game)
        found.append(
            ViewSpec(f"history_{system}", f"{system}: one row per player per game", tables=parts)
        )
    seen = {spec.name for spec in found}
    for table in tables.history_tables():
        name = history_view_name(table)
        if name not in seen:
            found.append(
                ViewSpec(name, f"the explanation table {table.name}", tables=((table, ()),))
            )
    return tuple(found)


VIEW_SPECS = _specs()
"""Every view of the lake but `versions` (the manifests)."""


def view_names() -> list[str]:
    """The name of every view, sorted (the same for every lake)."""
    return sorted([VERSIONS_VIEW, *(spec.name for spec in VIEW_SPECS)])


def lake_views(lake: Path | str, names: Collection[str] | None = None) -> list[LakeView]:
    """The views of the lake (those in `names`, else all but `versions`) with the files they
    read now: only complete list versions, only table files that have columns."""
    root = as_local_path(lake)
    specs = [spec for spec in VIEW_SPECS if names is None or spec.name in names]
    versions = published_versions(root) if any(s.versions for s in specs) else None
    views = []
    for spec in specs:
        parts: list[ViewPart | None]
        if versions is not None and spec.versions is not None:
            parts = [_published_part(spec.name, versions, spec.versions, spec.file_name)]
        else:
            parts = [
                _table_part(root, table, **dict(constants)) for table, constants in spec.tables
            ]
        views.append(LakeView(spec.name, spec.what, tuple(p for p in parts if p), spec.schema))
    return views


def _published_part(
    name: str, versions: pl.DataFrame, which: str, file_name: str
) -> ViewPart | None:
    """The `file_name` of every version (`all`), of the newest (`current`) or of the lowest
    (`original`) of each list and period."""
    if which != "all":
        pick = pl.col("version").max() if which == "current" else pl.col("version").min()
        versions = versions.filter(pl.col("version") == pick.over("list", "period"))
    paths = (Path(folder) / file_name for folder in versions["folder"])
    return _with_schemas(name, [path for path in paths if path.exists()])


# --- Polars --------------------------------------------------------------------------------------


def _scan_part(part: ViewPart) -> pl.LazyFrame:
    """One part read by Polars: each file with its partition value and the constant columns."""
    frames = []
    for path in part.files:
        frame = pl.scan_parquet(path, hive_partitioning=False)
        if part.partition_col is not None:
            value = path.parent.name.split("=", 1)[1]
            frame = frame.with_columns(pl.lit(value, pl.String).alias(part.partition_col))
        frames.append(frame)
    scan = pl.concat(frames, how="diagonal_relaxed")
    return scan.with_columns(pl.lit(text, pl.String).alias(name) for name, text in part.constants)


def lake_frames(lake: Path | str) -> dict[str, pl.LazyFrame]:
    """The views of `connect` as Polars lazy frames read from the same files (a view with no file
    yet is an empty frame with its columns, or with none when they are unknown)."""
    frames: dict[str, pl.LazyFrame] = {"versions": published_versions(lake).lazy()}
    for view in lake_views(lake):
        if view.parts:
            frames[view.name] = pl.concat(
                [_scan_part(part) for part in view.parts], how="diagonal_relaxed"
            )
        else:
            frames[view.name] = pl.LazyFrame(schema=view.schema or {})
    return dict(sorted(frames.items()))
