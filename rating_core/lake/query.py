"""Read-only SQL over the lake (DuckDB), and the same views as Polars frames, for analysts.

`connect(lake)` returns a DuckDB connection whose views read the lake's Parquet files where they
are (no copy): `lists` (every snapshot ever published), `current_lists` (the newest version of
each list and period), `original_lists` (each period's first publication: its lowest version),
`versions` (one row per published version, from the manifests: when, why, parent), `diffs`,
`games`, `quarantine`, `history_<system>` (each system's per-game explanations: `fide`, `ukd`,
`club`, `site`, `fibs`) and `history_<table>` for every explanation table of the catalogue
(`history/fide-standard-player_explanations` is `history_fide_standard_player_explanations`).
The files come from the catalogue (`rating_core.tables`) and the manifests, so only complete
versions are ever read; `rating_core.lake.views` says which files each view reads.

`ratings query` (`stream_query`, `run_query`, `query_frame`: one checked SELECT) reads the files
with DuckDB's own `read_parquet` over the exact list of each view, so DuckDB pushes a query's
filters and columns into the Parquet scans (a player's games read a few columns of a few row
groups, not whole tables) and a partition filter (`period = '2026-03'`) skips whole files. Only
the views a query names are opened (`SELECT 1` opens none), and the table views (`games`,
`quarantine`, `history_*`) are listed by their folders, their footers read by DuckDB, without
importing Polars or the catalogue (`_QUICK_TABLES`; `views` lists the others). `connect` (a notebook's connection, whose statements nobody checks) reads the same
files as Arrow datasets instead, which DuckDB scans without opening a file itself.

Read-only is DuckDB's own doing. The connection's database is an empty file opened read-only
(CREATE TABLE, INSERT, ATTACH are refused by DuckDB), and DuckDB's file access is off
(`enable_external_access = false`, no extension loading, configuration locked): COPY, read_csv,
read_text, read_parquet of any path are refused, except, for `ratings query`, the exact Parquet
files its views read (`allowed_paths`, set before access is closed). DuckDB would let a COPY
write over an allowed file, so `ratings query` runs nothing but one SELECT, by DuckDB's own parse
of the statement (which also refuses the temporary objects a read-only database still allows);
a notebook's connection, whose statements nobody checks, allows no file at all.

A connection works within a memory budget (`memory_limit`, DEFAULT_MEMORY unless told), and what
does not fit (a large sort, join or aggregate) spills to a temporary folder of its own, removed
with it; DuckDB runs one thread per `spilling.THREAD_MEMORY` of the budget and reads Parquet
without prefetching, so that a small budget still leaves a sort something to spill. Results
stream: `stream_query` hands the rows over in batches, so a result larger than memory is written
out as it comes. `lake_frames(lake)` gives the same views as Polars lazy
frames, read by Polars from the same files.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from rating_core import budget
from rating_core.budget import LEAST_MEMORY
from rating_core.lake.location import as_local_path
from rating_core.lake.spilling import budget_settings

if TYPE_CHECKING:  # Polars and the catalogue are imported once a query needs them
    import polars as pl

from rating_core.lake.view_parts import (
    DUCKDB_NUMBERS,
    MAIN_VIEWS,
    VERSIONS_VIEW,
    VERSIONS_WHAT,
    LakeView,
    ViewPart,
)

DEFAULT_MEMORY = "1GiB"
"""DuckDB's memory budget unless told otherwise: a player's history needs a small part of it,
and a larger sort or join spills to disk instead of taking most of the machine (DuckDB's own
default is 80 % of it)."""


class QueryError(ValueError):
    """A query that cannot run: not SQL, not one SELECT, an unknown view or column. The message
    is one sentence for a person."""


def memory_bytes(text: str) -> int:
    """A memory budget (`2GB`, `512MiB`, `1.5GiB`) in bytes, read as `ratings run --memory` is
    (`rating_core.budget`); QueryError if it is not a size or is below LEAST_MEMORY (below it
    DuckDB cannot run even a small query)."""
    try:
        return budget.memory_bytes(text, LEAST_MEMORY)
    except budget.BudgetError as error:
        raise QueryError(str(error)) from None


def view_names() -> list[str]:
    """The name of every view, sorted (the same for every lake)."""
    from rating_core.lake import views

    return views.view_names()


def lake_frames(lake: Path | str) -> dict[str, pl.LazyFrame]:
    """The views of `connect` as Polars lazy frames read from the same files (a view with no file
    yet is an empty frame with its columns, or with none when they are unknown)."""
    from rating_core.lake import views

    return views.lake_frames(lake)


# --- DuckDB --------------------------------------------------------------------------------------


def _identifier(name: str) -> str:
    """`name` as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    """`text` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _type_family(dtype: Any) -> str | None:  # noqa: ANN401  (a Polars type or a DuckDB name)
    """What DuckDB's `union_by_name` reads together: every number, every kind of text (a Polars
    Enum is text in Parquet), a column of nulls with anything; else the type itself. `dtype` is
    a Polars type (`views`) or a DuckDB type name (`_quick_views`)."""
    if isinstance(dtype, str):
        if dtype in DUCKDB_NUMBERS or dtype.startswith("DECIMAL"):
            return "number"
        return {"VARCHAR": "text", '"NULL"': None, "NULL": None}.get(dtype, dtype)
    if dtype.is_numeric():
        return "number"
    name = type(dtype).__name__
    if name in ("String", "Enum", "Categorical"):
        return "text"
    if name == "Null":
        return None
    return name


def _check_files(part: ViewPart) -> bool:
    """Refuse a part whose files cannot be read as one: a damaged file (UnreadableFileError, a
    fault of the lake) or two files that disagree on a column's type (QueryError). True when the
    files' columns differ (some lack one, or widths differ), so DuckDB must unify them by name."""
    seen: dict[str, tuple[str | None, str, Path]] = {}
    for path, schema in zip(part.files, part.schemas, strict=True):
        if schema is None:
            from rating_core.ingest.common import UnreadableFileError  # (imports Polars)

            raise UnreadableFileError(
                f"view {part.name} cannot be read: the lake file '{path}' is damaged or "
                "incomplete (its Parquet footer cannot be read), perhaps written when the disk "
                "was full or a run was killed"
            )
        for column, dtype in schema.items():
            family = _type_family(dtype)
            first = seen.setdefault(column, (family, str(dtype), path))
            if family is not None and first[0] is None:
                seen[column] = (family, str(dtype), path)
            elif family is not None and family != first[0]:
                raise QueryError(
                    f"the files of view {part.name} do not share one schema, so it cannot be "
                    f"read: column {column} is {first[1]} in '{first[2]}' and {dtype} in '{path}'"
                )
    first_schema = list((part.schemas[0] or {}).items())  # in order: names, then positions
    return any(list((schema or {}).items()) != first_schema for schema in part.schemas[1:])


def _constants(part: ViewPart) -> str:
    """The part's constant columns as SELECT items (`, 'fide-standard' AS "list"`)."""
    return "".join(
        f", {_literal(value)} AS {_identifier(column)}" for column, value in part.constants
    )


def _part_select(part: ViewPart) -> str:
    """The SELECT reading one part: DuckDB's `read_parquet` over its files, the partition column
    from their folder names (`period=2026-03`) unless the files hold it."""
    differ = _check_files(part)
    columns = {column for schema in part.schemas if schema for column in schema}
    files = ", ".join(_literal(str(path.absolute())) for path in part.files)
    options = [f"union_by_name = {str(differ).lower()}"]
    exclude: list[str] = []
    if part.partition_col is not None and part.partition_col not in columns:
        options += [
            "hive_partitioning = true",
            f"hive_types = {{{_literal(part.partition_col)}: VARCHAR}}",
        ]
        # DuckDB reads every `key=value` folder of the path, the lake's own ancestors too
        assert part.base is not None
        for folder in part.base.absolute().parts:
            key = folder.split("=", 1)[0] if "=" in folder else None
            if key and key != part.partition_col and key not in columns and key not in exclude:
                exclude.append(key)
    else:
        options.append("hive_partitioning = false")
    star = f"* EXCLUDE ({', '.join(map(_identifier, exclude))})" if exclude else "*"
    return f"SELECT {star} FROM read_parquet([{files}], {', '.join(options)})"


def _plain_type(dtype: Any) -> Any:  # noqa: ANN401  (pyarrow is untyped)
    """A dictionary column (a Polars Enum) as its values' type, so partitions unify."""
    import pyarrow as pa

    return dtype.value_type if pa.types.is_dictionary(dtype) else dtype


def _dataset(part: ViewPart) -> Any:  # noqa: ANN401
    """The part's files as one Arrow dataset, which DuckDB scans without opening a file itself:
    their schemas unified (a column one partition lacks is null there, Int32 and Int64 read as
    Int64) and the partition column from the folders."""
    import pyarrow as pa
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    _check_files(part)
    schemas = [pq.read_schema(path) for path in part.files]
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


def _open_view(con: duckdb.DuckDBPyConnection, view: LakeView, read_files: bool) -> list[Path]:
    """Create `view` on the connection (QueryError, UnreadableFileError if its files cannot be
    read as one): DuckDB's `read_parquet` of its files if `read_files`, else Arrow datasets of
    them; the files DuckDB itself reads."""
    if not view.parts:
        import polars as pl

        con.register(view.name, pl.DataFrame(schema=view.schema or {}).to_arrow())
        return []
    # each part is the view of its own table (history_fide_standard_game_explanations, a view
    # itself), read as the table is; the view adds the parts' constant columns (`list`)
    try:
        for part in view.parts:
            if read_files:
                select = _part_select(part)
                con.execute(f"CREATE OR REPLACE TEMP VIEW {_identifier(part.name)} AS {select}")
            else:
                con.register(part.name, _dataset(part))
        if len(view.parts) > 1 or view.parts[0].name != view.name:
            body = " UNION ALL BY NAME ".join(
                f"SELECT *{_constants(part)} FROM {_identifier(part.name)}" for part in view.parts
            )
            con.execute(f"CREATE OR REPLACE TEMP VIEW {_identifier(view.name)} AS {body}")
    except duckdb.Error as error:  # files the footer check let through that DuckDB cannot read
        raise QueryError(f"view {view.name} cannot be read: {_first_line(error)}") from None
    return _files(view) if read_files else []


def _files(view: LakeView) -> list[Path]:
    """Every file a view reads."""
    return [path for part in view.parts for path in part.files]


_QUICK_TABLES: dict[str, tuple[str, tuple[tuple[str, str, str | None], ...]]] = {
    "games": ("every chess game of the inbox", (("games", "period", None),)),
    "quarantine": ("rejected input records with their reason", (("quarantine", "source", None),)),
    **{
        f"history_{system}": (
            f"{system}: one row per player per game",
            tuple(
                (f"history/{system}-{kind}-game_explanations", "period", f"{system}-{kind}")
                for kind in ("standard", "rapid", "blitz")
            ),
        )
        for system in ("fide", "ukd")
    },
    "history_club": (
        "club: one row per player per game",
        (("history/club-game_explanations", "period", None),),
    ),
    "history_site": ("site: one row per player per game", (("history/site", "period", None),)),
    "history_fibs": ("fibs: one row per player per game", (("history/fibs", "period", None),)),
}
"""The table views `ratings query` opens without the catalogue, and so without importing Polars
(a player's history starts a fifth of a second sooner): view -> (what it holds, its tables as
(folder in the lake, partition column, the `list` column's value or None)). The same as
`rating_core.lake.views` derives from the catalogue (a unit test compares them); each other
`history_<table>` view is found by its folder under `history/`."""


def _view_name(folder: str) -> str:
    """A table's folder as a view name, as `rating_core.lake.views.history_view_name` names it
    (`history/fide-standard-player_explanations` is `history_fide_standard_player_explanations`)."""
    return re.sub(r"[^A-Za-z0-9]+", "_", folder)


def _quick_tables(root: Path, name: str) -> tuple[str, tuple[tuple[str, str, str | None], ...]]:
    """What a table view holds and its tables, when `_QUICK_TABLES` or a folder under `history/`
    says so (every explanation table is partitioned by period); else ("", ())."""
    if name in _QUICK_TABLES:
        return _QUICK_TABLES[name]
    if name.startswith("history_"):
        with contextlib.suppress(OSError):
            for entry in os.scandir(root / "history"):
                folder = f"history/{entry.name}"
                if entry.is_dir() and _view_name(folder) == name:
                    return f"the explanation table {folder}", ((folder, "period", None),)
    return "", ()


def _part_files(folder: Path) -> list[Path]:
    """The data files of one partition folder, sorted (`storage.PART_GLOB`, without Polars): a
    partition may hold several (the games keep one per inbox file group)."""
    try:
        names = sorted(
            entry.name
            for entry in os.scandir(folder)
            if entry.is_file()
            and entry.name.endswith(".parquet")
            and not entry.name.startswith(".")
        )
    except OSError:
        return []
    return [folder / name for name in names]


def _quick_views(
    con: duckdb.DuckDBPyConnection, root: Path, names: Collection[str]
) -> list[LakeView] | None:
    """The table views `names` with their files and columns, listed by folder name and read by
    DuckDB's own Parquet footer reader (no Polars, no catalogue); None when any of them needs the
    catalogue: a list view, `versions`, a view with no file yet, a damaged file or nested
    columns (`rating_core.lake.views` then lists them all and says why)."""
    found = []
    for name in sorted(names):
        what, tables = _quick_tables(root, name)
        parts = []
        for folder, column, listed in tables:
            base = root / folder
            prefix = f"{column}="
            try:
                values = sorted(
                    entry.name[len(prefix) :]
                    for entry in os.scandir(base)
                    if entry.is_dir() and entry.name.startswith(prefix)
                )
            except OSError:
                continue
            files = [path for v in values for path in _part_files(base / f"{prefix}{v}")]
            if files:
                part = _footers(con, _view_name(folder), files, column, base)
                if part is None:
                    return None
                if part.files:
                    constants = (("list", listed),) if listed else ()
                    parts.append(
                        ViewPart(part.name, part.files, column, base, constants, part.schemas)
                    )
        if not parts:
            return None
        found.append(LakeView(name, what, tuple(parts)))
    return found


_NO_COLUMN = "Need at least one non-root column"
"""DuckDB's words for a Parquet file written with no column (an empty period may be)."""


def _footers(
    con: duckdb.DuckDBPyConnection, name: str, files: list[Path], column: str, base: Path
) -> ViewPart | None:
    """The files that have columns, with their columns as DuckDB reads them from the footers
    (in one call, file by file if one fails); None if a footer cannot be read or a column is
    nested."""
    sql = "SELECT file_name, name, duckdb_type, num_children FROM parquet_schema(?)"
    try:
        rows = con.execute(sql, [[str(path) for path in files]]).fetchall()
    except duckdb.Error:  # a file with no column, or a damaged one
        rows = []
        for path in files:
            try:
                rows += con.execute(sql, [[str(path)]]).fetchall()
            except duckdb.Error as error:
                if _NO_COLUMN not in str(error):
                    return None
    schemas: dict[str, dict[str, Any]] = {str(path): {} for path in files}
    rooted: set[str] = set()
    for file_name, column_name, type_name, children in rows:
        if file_name not in rooted:  # a file's first row is the root of its schema
            rooted.add(file_name)
            continue
        if children or type_name is None:  # a nested column: left to the catalogue's reading
            return None
        schemas[file_name][column_name] = type_name
    kept = [path for path in files if schemas[str(path)]]
    return ViewPart(name, tuple(kept), column, base, (), tuple(schemas[str(p)] for p in kept))


def _lockdown(memory: int, spill: Path, files: Collection[Path]) -> list[str]:
    """The settings that close the connection, in order: times in UTC, as the lake holds them (not
    the machine's zone); no progress bar on stderr; the memory budget, the threads it allows, the
    spill folder and Parquet read page by page (`spilling.budget_settings`; DuckDB's prefetching reads a whole row group of
    every column ahead into memory that cannot spill: a sort of 4M wide rows failed at 200 MB with
    it, and a player's history peaks at a third of the memory without it, as fast); the views'
    files as the only ones DuckDB may open; then DuckDB opens no other file, loads no extension,
    and no setting changes back."""
    allowed = ", ".join(_literal(str(path.absolute())) for path in files)
    return [
        "SET TimeZone = 'UTC'",
        "SET enable_progress_bar = false",  # stderr is for one sentence, not a progress bar
        *budget_settings(memory, spill),  # the budget, its threads, the spill folder
        f"SET allowed_paths = [{allowed}]",
        "SET enable_external_access = false",
        "SET autoinstall_known_extensions = false",
        "SET autoload_known_extensions = false",
        "SET lock_configuration = true",
    ]


def _scratch_folder() -> Path:
    """A private temporary folder for one connection's database file and spilled data."""
    return Path(tempfile.mkdtemp(prefix="ratings-query-"))


def _read_only_database(folder: Path) -> duckdb.DuckDBPyConnection:
    """A connection to an empty database opened read-only (its file is removed at once: a
    read-only database is never written back)."""
    path = folder / "views.duckdb"
    try:
        duckdb.connect(str(path)).close()
        return duckdb.connect(str(path), read_only=True)
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)


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
    memory: int = 0
    """DuckDB's memory budget, in bytes."""


def open_lake(
    lake: Path | str,
    names: Collection[str] | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
    *,
    memory: int | None = None,
    spill: Path | None = None,
    read_files: bool = False,
) -> LakeConnection:
    """A locked-down DuckDB connection with the lake's views (those in `names`, else all; see
    the module docstring), on `con` if given (a fresh `_read_only_database()` with no view yet),
    DuckDB held to `memory` bytes and spilling into `spill` (a new temporary folder, removed when
    the process ends, if not given). A view that cannot be opened is left out, with the reason
    kept for the error a query naming it gets; the other views still open.

    With `read_files` the views are DuckDB's `read_parquet` of the files, which DuckDB may then
    open (`allowed_paths`): only for a connection that runs nothing but checked SELECTs, since a
    COPY could write over an allowed file. Without it they are Arrow datasets, and DuckDB opens
    no file at all."""
    root = as_local_path(lake)
    if spill is None or con is None:
        folder = _scratch_folder()
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        spill = spill or folder / "spill"
        con = con or _read_only_database(folder)
    budget = memory_bytes(DEFAULT_MEMORY) if memory is None else memory
    opened: dict[str, str] = {}
    unopened: dict[str, Exception] = {}
    files: list[Path] = []
    quick = _quick_views(con, root, names) if read_files and names else None
    if quick is not None:  # a query of table views: no Polars, no catalogue
        for view in quick:
            files += _open_view(con, view, read_files)
            opened[view.name] = view.what
    elif names is None or names:
        from rating_core.ingest.common import UnreadableFileError
        from rating_core.lake import views
        from rating_core.lake.versions import published_versions

        for view in views.lake_views(root, names):
            if not view.parts and view.schema is None:
                unopened[view.name] = QueryError(
                    f"view {view.name} ({view.what}) has no data in lake '{root}' yet "
                    "(run 'ratings run' first)"
                )
                continue
            try:
                files += _open_view(con, view, read_files)
            except (QueryError, UnreadableFileError) as error:
                unopened[view.name] = error
                continue
            opened[view.name] = view.what
        if names is None or VERSIONS_VIEW in names:
            con.register(VERSIONS_VIEW, published_versions(root).to_arrow())
            opened[VERSIONS_VIEW] = VERSIONS_WHAT
    for statement in _lockdown(budget, spill, files):
        con.execute(statement)
    return LakeConnection(con, root, dict(sorted(opened.items())), unopened, budget)


_CATALOGUE_WORDS = re.compile(
    r"\b(show|describe|summarize|information_schema|(duckdb|pg|sqlite|pragma)_\w+)\b", re.I
)
"""Words of a query that reads the catalogue (SHOW TABLES, duckdb_views(), information_schema):
such a query sees every view, so every view is opened for it."""


def views_used(con: duckdb.DuckDBPyConnection, sql: str) -> set[str] | None:
    """The lake's views `sql` names, by DuckDB's parse on `con` (one that opens no file: naming the
    tables binds the statement's table functions); an empty set when it names no
    table and reads no catalogue (`SELECT 1`: no view to open); None when every view must be
    opened (SHOW TABLES, a query with a mistake that fails to parse)."""
    try:
        named = con.get_table_names(sql, qualified=False)
    except duckdb.Error:
        return None
    if not named and not _CATALOGUE_WORDS.search(sql):
        return set()
    # the views' names without the catalogue (so without Polars): the main ones and every
    # `history_<table>`; a history_ name no table has is left to the catalogue to refuse
    used = {
        name.lower()  # SQL names ignore case
        for name in named
        if name.lower() in MAIN_VIEWS or name.lower().startswith("history_")
    }
    return used or None


def connect(lake: Path | str, memory: str = DEFAULT_MEMORY) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with read-only views of the lake (see the module docstring), for
    notebooks: `connect("lake").sql("SELECT list, count(*) FROM current_lists GROUP BY ALL")`.

    The views are fixed when the connection opens: a run that publishes later is seen by the
    next connection. DuckDB itself refuses writes and file access on it (module docstring), and
    keeps to `memory` (`2GB`, `512MiB`), spilling what does not fit.
    """
    return open_lake(lake, memory=memory_bytes(memory)).connection


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
    if isinstance(error, duckdb.OutOfMemoryException):  # DuckDB's block sizes are not for people
        return QueryError(
            f"the memory budget of {budget.show_budget(lake.memory)} is too small for this query, "
            "even spilling to disk; give more with --memory (such as --memory "
            f"{budget.show_budget(_larger_budget(lake.memory)).replace(' ', '')}), or select fewer "
            "rows or columns"
        )
    return QueryError(f"the query failed: {text}")


def _larger_budget(memory: int) -> int:
    """A budget to suggest after `memory` proved too small: four times it, at least a gigabyte
    (DEFAULT_MEMORY), in the units (decimal or binary) of the budget given."""
    mega = 1000**2 if budget.is_decimal(memory) else 1024**2
    return max(memory * 4, 1000 * mega if mega == 1000**2 else 1024 * mega) // mega * mega


@dataclass(frozen=True)
class QueryResult:
    """A query's column names, DuckDB type names and rows."""

    columns: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]


@dataclass
class QueryStream:
    """A checked SELECT on an opened lake, bound but not run yet: its column names (made unique)
    and DuckDB type names, and its rows read batch by batch (`batches`), its first rows
    (`head`) or their number (`count`), each run by DuckDB without holding the whole result."""

    columns: list[str]
    types: list[str]
    connection: duckdb.DuckDBPyConnection
    sql: str

    def batches(self, rows: int = 10_000) -> Iterator[list[tuple[Any, ...]]]:
        """Every row, at most `rows` at a time, fetched from DuckDB as they are read."""
        cursor = self.connection.execute(self.sql)
        while batch := cursor.fetchmany(rows):
            yield batch

    def head(self, rows: int) -> list[tuple[Any, ...]]:
        """The first `rows` rows (DuckDB stops there: an ORDER BY keeps only the top rows)."""
        return self.connection.sql(self.sql).limit(rows).fetchall()

    def count(self) -> int:
        """How many rows the query has, counted by DuckDB (which drops what counting does not
        need, such as an ORDER BY) without making Python rows of them."""
        relation = self.connection.sql(self.sql)
        counted = relation.aggregate("count(*)").fetchall()
        return int(counted[0][0])


@contextlib.contextmanager
def _opened_for(lake: Path | str, sql: str, memory: int | None) -> Iterator[LakeConnection]:
    """The lake opened for one checked SELECT (only the views it names, when DuckDB can say),
    closed afterwards with its scratch folder; a DuckDB error inside becomes one QueryError
    sentence."""
    folder = _scratch_folder()
    try:
        path = folder / "views.duckdb"
        # the connection creating the empty database parses the statement, with no file access
        # (naming its tables binds its table functions: read_csv would open its file)
        with duckdb.connect(str(path)) as scratch:
            scratch.execute("SET enable_external_access = false")
            check_read_only(scratch, sql)
            names = views_used(scratch, sql)
        con = duckdb.connect(str(path), read_only=True)
        os.remove(path)
        try:
            opened = open_lake(
                lake, names, con, memory=memory, spill=folder / "spill", read_files=True
            )
            try:
                yield opened
            except duckdb.Error as error:
                raise _explain(error, opened) from None
        finally:
            con.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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


@contextlib.contextmanager
def stream_query(lake: Path | str, sql: str, memory: int | None = None) -> Iterator[QueryStream]:
    """One SELECT over the lake's views, DuckDB held to `memory` bytes (DEFAULT_MEMORY if None),
    bound and ready for its rows to be read inside the `with` block; QueryError (one sentence)
    if it cannot run, also when it fails while its rows are read."""
    with _opened_for(lake, sql, memory) as opened:
        relation = opened.connection.sql(sql)  # bound, not run
        yield QueryStream(
            unique_names(list(relation.columns)),
            [str(t) for t in relation.types],
            opened.connection,
            sql,
        )


def run_query(lake: Path | str, sql: str, memory: int | None = None) -> QueryResult:
    """Run one SELECT over the lake's views, every row in memory; QueryError (one sentence) if it
    cannot run."""
    with stream_query(lake, sql, memory) as result:
        rows = [row for batch in result.batches() for row in batch]
        return QueryResult(result.columns, result.types, rows)


def query_frame(lake: Path | str, sql: str, memory: str = DEFAULT_MEMORY) -> pl.DataFrame:
    """One SELECT over the lake's views as a Polars frame (for notebooks), DuckDB held to
    `memory` (`2GB`, `512MiB`)."""
    with _opened_for(lake, sql, memory_bytes(memory)) as opened:
        return opened.connection.sql(sql).pl()
