"""Read-only SQL over the lake (DuckDB), and the same views as Polars frames, for analysts.

`connect(lake)` returns a DuckDB connection whose views read the lake's Parquet files where they
are (no copy): `lists` (every snapshot ever published), `current_lists` (the newest version of
each list and period), `original_lists` (each period's first publication: its lowest version),
`versions` (one row per published version, from the manifests: when, why, parent), `diffs`,
`games`, `quarantine`, `history_<system>` (each system's per-game explanations: `fide`, `ukd`,
`club`, `site`, `fibs`) and `history_<table>` for every explanation table of the catalogue
(`history/fide-standard-player_explanations` is `history_fide_standard_player_explanations`).
The files come from the catalogue (`rating_core.lake.tables`) and the manifests, so only complete
versions are ever read.

Read-only is DuckDB's own doing. The connection's database is an empty file opened read-only
(CREATE TABLE, INSERT, ATTACH are refused by DuckDB), and every file access of DuckDB is off
(`enable_external_access = false`, no extension loading, configuration locked: COPY, read_csv,
read_parquet of any path are refused): the views read the Parquet through Arrow datasets
registered on the connection, which DuckDB scans without opening a file itself. `ratings query`
also refuses, by DuckDB's own parse of the statement, anything but one SELECT, so that the
temporary objects a read-only database still allows are refused in one sentence too.
`lake_frames(lake)` gives the same views as Polars lazy frames, read by Polars from the same files.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from rating_core.ingest.common import UnreadableFileError
from rating_core.lake import publishing as publish
from rating_core.lake import tables
from rating_core.lake.storage import as_local_path, table_dir, table_file, table_partitions
from rating_core.lake.versions import published_versions
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


class QueryError(ValueError):
    """A query that cannot run: not SQL, not one SELECT, an unknown view or column. The message
    is one sentence for a person."""


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


@dataclass(frozen=True)
class LakeView:
    """One view of the lake: its name, what it holds, its parts and, when no file holds it yet,
    the columns it has (None: the table's columns are only known once written)."""

    name: str
    what: str
    parts: tuple[ViewPart, ...] = ()
    schema: TableSchema | None = field(default=None, hash=False, compare=False)


# --- which files each view reads ---------------------------------------------------------------


def _has_columns(path: Path) -> bool:
    """Whether a Parquet file has at least one column (an empty period may be written with none:
    it holds no row, and DuckDB cannot read it). A damaged file is kept, for `_dataset` to name."""
    try:
        return bool(pl.read_parquet_schema(path))
    except (pl.exceptions.PolarsError, OSError):
        return True


def _table_part(lake: Path, table: tables.LakeTable, **constants: str) -> ViewPart | None:
    """The files of a catalogue table, as `read_table` reads them; None if it has none."""
    if table.partitioned:
        values = table_partitions(lake, table)
        files = [table_file(lake, table, value) for value in values]
        column = table.partition_col
    else:
        single = table_file(lake, table)
        files = [single] if single.exists() else []
        column = None
    files = [path for path in files if _has_columns(path)]
    if not files:
        return None
    name = history_view_name(table)
    return ViewPart(name, tuple(files), column, table_dir(lake, table), tuple(constants.items()))


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
    *(f"history_{system}" for system in PER_GAME_TABLES),
)
"""The views an error message names (the per-table history views are left to SHOW TABLES)."""


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
    existing = tuple(path for path in paths if path.exists())
    return ViewPart(name, existing) if existing else None


# --- DuckDB --------------------------------------------------------------------------------------


def _identifier(name: str) -> str:
    """`name` as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    """`text` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _plain_type(dtype: pa.DataType) -> pa.DataType:
    """A dictionary column (a Polars Enum) as its values' type, so partitions unify."""
    return dtype.value_type if pa.types.is_dictionary(dtype) else dtype


def _dataset(part: ViewPart) -> pads.Dataset:
    """The part's files as one Arrow dataset: their schemas unified (a column one partition lacks
    is null there, Int32 and Int64 read as Int64) and the partition column from the folders."""
    schemas = []
    for path in part.files:
        try:
            schemas.append(pq.read_schema(path))
        except (pa.ArrowException, OSError) as error:  # a fault of the lake, not of the query
            raise UnreadableFileError(
                f"view {part.name} cannot be read: the lake file '{path}' is damaged or "
                f"incomplete ({error}), perhaps written when the disk was full or a run was killed"
            ) from None
    plain = [pa.schema([f.with_type(_plain_type(f.type)) for f in schema]) for schema in schemas]
    try:
        schema = pa.unify_schemas(plain, promote_options="permissive")
    except (pa.ArrowTypeError, pa.ArrowInvalid) as error:
        raise QueryError(
            f"the files of view {part.name} do not share one schema, so it cannot be read: {error}"
        ) from None
    files = [str(path) for path in part.files]
    if part.partition_col is None or part.partition_col in schema.names:
        return pads.dataset(files, schema=schema, format="parquet")
    key = pa.schema([pa.field(part.partition_col, pa.string())])
    return pads.dataset(
        files,
        schema=schema.append(key.field(0)),
        format="parquet",
        partitioning=pads.partitioning(key, flavor="hive"),
        partition_base_dir=str(part.base),
    )


LOCKDOWN = (
    "SET TimeZone = 'UTC'",
    "SET enable_external_access = false",
    "SET autoinstall_known_extensions = false",
    "SET autoload_known_extensions = false",
    "SET lock_configuration = true",
)
"""Once the views exist: times in UTC, as the lake holds them (not the machine's zone); then
DuckDB opens no file, loads no extension, and no setting changes back."""


def _read_only_database() -> duckdb.DuckDBPyConnection:
    """A connection to an empty database opened read-only (its file is removed at once: a
    read-only database is never written back)."""
    folder = tempfile.mkdtemp(prefix="ratings-query-")
    try:
        path = os.path.join(folder, "views.duckdb")
        duckdb.connect(path).close()
        return duckdb.connect(path, read_only=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class LakeConnection:
    """A locked-down DuckDB connection on the lake, and what its views are."""

    connection: duckdb.DuckDBPyConnection
    lake: Path
    views: dict[str, str]
    """Every view opened, with what it holds."""
    unopened: dict[str, Exception] = field(default_factory=dict)
    """Views that could not be opened, with the error a query naming one raises: a QueryError
    (no file holds the table yet and its columns are unknown, its files disagree on a column's
    type) or an UnreadableFileError (a damaged file: a fault of the lake, not of the query)."""


def _open_view(con: duckdb.DuckDBPyConnection, view: LakeView) -> None:
    """Register `view` on the connection (QueryError if its files cannot be read as one)."""
    if not view.parts:
        con.register(view.name, pl.DataFrame(schema=view.schema or {}).to_arrow())
    elif len(view.parts) == 1 and view.parts[0].name == view.name:
        con.register(view.name, _dataset(view.parts[0]))
    else:  # each part is the view of its own table; this one reads them all
        selects = []
        for part in view.parts:
            con.register(part.name, _dataset(part))
            constants = "".join(
                f", {_literal(value)} AS {_identifier(column)}" for column, value in part.constants
            )
            selects.append(f"SELECT *{constants} FROM {_identifier(part.name)}")
        body = " UNION ALL BY NAME ".join(selects)
        con.execute(f"CREATE TEMP VIEW {_identifier(view.name)} AS {body}")


def open_lake(
    lake: Path | str,
    names: Collection[str] | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> LakeConnection:
    """A locked-down DuckDB connection with the lake's views (those in `names`, else all; see
    the module docstring), on `con` if given (a fresh `_read_only_database()` with no view yet).
    A view that cannot be opened is left out, with the reason kept for the error a query naming
    it gets; the other views still open."""
    root = as_local_path(lake)
    con = con or _read_only_database()
    views: dict[str, str] = {}
    unopened: dict[str, Exception] = {}
    for view in lake_views(root, names):
        if not view.parts and view.schema is None:
            unopened[view.name] = QueryError(
                f"view {view.name} ({view.what}) has no data in lake '{root}' yet "
                "(run 'ratings run' first)"
            )
            continue
        try:
            _open_view(con, view)
        except (QueryError, UnreadableFileError) as error:
            unopened[view.name] = error
            continue
        views[view.name] = view.what
    if names is None or VERSIONS_VIEW in names:
        con.register(VERSIONS_VIEW, published_versions(root).to_arrow())
        views[VERSIONS_VIEW] = VERSIONS_WHAT
    for statement in LOCKDOWN:
        con.execute(statement)
    return LakeConnection(con, root, dict(sorted(views.items())), unopened)


def views_used(con: duckdb.DuckDBPyConnection, sql: str) -> set[str] | None:
    """The lake's views `sql` names, by DuckDB's parse on `con`; None when that cannot say (SHOW
    TABLES names none, a query with a mistake fails to parse): then every view is opened."""
    known = set(view_names())
    try:
        named = con.get_table_names(sql, qualified=False)
    except duckdb.Error:
        return None
    used = {name.lower() for name in named if name.lower() in known}  # SQL names ignore case
    return used or None


def connect(lake: Path | str) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with read-only views of the lake (see the module docstring), for
    notebooks: `connect("lake").sql("SELECT list, count(*) FROM current_lists GROUP BY ALL")`.

    The views are fixed when the connection opens: a run that publishes later is seen by the
    next connection. DuckDB itself refuses writes and file access on it (module docstring).
    """
    return open_lake(lake).connection


READ_STATEMENTS = frozenset({duckdb.StatementType.SELECT})
"""The only statements `ratings query` runs (DESCRIBE, SHOW and SUMMARIZE are SELECTs too)."""


def _first_line(error: Exception) -> str:
    """DuckDB's message on one line, without its class prefix (`Parser Error: `) and without the
    echo of the query and its caret (the hints, `Candidate bindings: ...`, are kept)."""
    lines = []
    for line in str(error).strip().splitlines():
        if not line.strip() or line.startswith("LINE "):
            break
        lines.append(line.strip().rstrip(".!"))
    text = "; ".join(lines) or type(error).__name__
    return re.sub(r"^[A-Za-z ]+ Error: ", "", text)


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Refuse anything but one SELECT, by DuckDB's own parse of `sql` (QueryError)."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as error:
        raise QueryError(f"the query is not valid SQL: {_first_line(error)}") from None
    if not statements:
        raise QueryError('the query is empty; give one SELECT, e.g. "SELECT * FROM current_lists"')
    if len(statements) > 1:
        raise QueryError(f"give one query at a time, not {len(statements)} statements")
    kind = statements[0].type
    if kind not in READ_STATEMENTS:
        raise QueryError(
            f"the lake is read-only here: {kind.name} statements are refused, only SELECT queries run"
        )


_MISSING_TABLE = re.compile(r"Table with name (?P<name>\S+) does not exist")


def _explain(error: duckdb.Error, lake: LakeConnection) -> Exception:
    """One sentence for a DuckDB error: an unknown view names the views, a view the lake has no
    data for yet says so, file access says the lake is read through its views only."""
    text = _first_line(error)
    missing = _MISSING_TABLE.search(str(error))
    if isinstance(error, duckdb.CatalogException) and missing:
        name = missing.group("name")
        if name.lower() in lake.unopened:
            return lake.unopened[name.lower()]
        return QueryError(
            f"there is no view named {name}; the views are {', '.join(MAIN_VIEWS)} and "
            "history_<table> for each explanation table (SHOW TABLES lists them all)"
        )
    if isinstance(error, duckdb.PermissionException):
        return QueryError(f"queries read the lake's views only, not other files ({text})")
    return QueryError(f"the query failed: {text}")


@dataclass(frozen=True)
class QueryResult:
    """A query's column names, DuckDB type names and rows."""

    columns: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]


@contextlib.contextmanager
def _opened_for(lake: Path | str, sql: str) -> Iterator[LakeConnection]:
    """The lake opened for one checked SELECT (only the views it names, when DuckDB can say),
    closed afterwards; a DuckDB error inside becomes one QueryError sentence."""
    con = _read_only_database()
    try:
        check_read_only(con, sql)
        opened = open_lake(lake, views_used(con, sql), con)
        try:
            yield opened
        except duckdb.Error as error:
            raise _explain(error, opened) from None
    finally:
        con.close()


def unique_names(names: list[str]) -> list[str]:
    """Column names made unique as DuckDB's own frames do (`a`, `a` -> `a`, `a_1`), so a JSON
    object or a table keeps every column of `SELECT l.*, d.* ...`."""
    seen: set[str] = set()
    result = []
    for name in names:
        candidate, n = name, 0
        while candidate in seen:
            n += 1
            candidate = f"{name}_{n}"
        seen.add(candidate)
        result.append(candidate)
    return result


def run_query(lake: Path | str, sql: str) -> QueryResult:
    """Run one SELECT over the lake's views; QueryError (one sentence) if it cannot run."""
    with _opened_for(lake, sql) as opened:
        relation = opened.connection.sql(sql)
        names = unique_names(list(relation.columns))
        return QueryResult(names, [str(t) for t in relation.types], relation.fetchall())


def query_frame(lake: Path | str, sql: str) -> pl.DataFrame:
    """One SELECT over the lake's views as a Polars frame (for notebooks)."""
    with _opened_for(lake, sql) as opened:
        return opened.connection.sql(sql).pl()


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
