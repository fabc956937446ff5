"""`ratings query SQL`: one SELECT (DuckDB) over read-only views of the lake.

The views and the read-only lock-down are `rating_core.lake.query`'s; this module parses the
command, turns a refused or failing query into one `ratings:` sentence (exit 2) and prints the
result as a table that fits the terminal, as JSON (a list of row objects) or as CSV.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pipelines.errors import UserError
from pipelines.output import print_json, print_table
from rating_core.lake.storage import as_local_path

if TYPE_CHECKING:  # DuckDB is imported when a query runs, not by every `ratings` command
    from rating_core.lake.query import QueryResult

NUMERIC_TYPES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL",
)
"""DuckDB type names (prefixes) printed right-aligned; text columns wrap at spaces instead."""

CSV_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""Text cells starting with these get a leading `'` in CSV, as in the published `list.csv`."""

EXAMPLE = "SELECT list, count(*) AS players FROM current_lists GROUP BY list"


def add_query_parser(
    sub: argparse._SubParsersAction, add_lake: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Register `ratings query SQL [--lake L] [--json|--csv]`."""
    query = sub.add_parser(
        "query",
        help="SQL (DuckDB) over read-only views of the lake: lists, current_lists, games...",
        description=(
            "Run one SELECT over the lake's views: lists, current_lists, original_lists, "
            "versions, diffs, games, quarantine, history_<system>; SHOW TABLES lists them. "
            f'Example: ratings query "{EXAMPLE}"'
        ),
    )
    query.add_argument("sql", help="one SELECT statement (quote it for the shell)")
    form = query.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print a JSON list of row objects")
    form.add_argument("--csv", action="store_true", help="print CSV with a header row")
    add_lake(query)


def json_value(value: Any) -> Any:
    """A DuckDB value as JSON has it: times in ISO 8601, decimals as numbers, lists and structs
    element by element."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    return value


def csv_cell(value: Any) -> str:
    """A value as a CSV cell: empty for NULL, `true`/`false`, ISO times, and text that a
    spreadsheet would run as a formula prefixed with `'`."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value if value.startswith(CSV_TRIGGERS) else value
    converted = json_value(value)
    return str(converted) if not isinstance(converted, list | dict) else repr(converted)


def table_cell(value: Any) -> str:
    """A value as the table shows it (NULL is empty)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    converted = json_value(value)
    return str(converted)


def print_result(result: QueryResult, form: str) -> None:
    """Print `result` as `table`, `json` or `csv`."""
    if form == "json":
        print_json(
            [dict(zip(result.columns, map(json_value, row), strict=True)) for row in result.rows]
        )
        return
    if form == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows([csv_cell(v) for v in row] for row in result.rows)
        return
    numeric = {
        c for c, t in zip(result.columns, result.types, strict=True) if t.startswith(NUMERIC_TYPES)
    }
    text = {c for c, t in zip(result.columns, result.types, strict=True) if t == "VARCHAR"}
    rows = result.rows
    print_table(
        f"{len(rows)} row{'s' if len(rows) != 1 else ''}",
        result.columns,
        [[table_cell(v) for v in row] for row in rows],
        wrap=text,
        right=numeric,
        hint="--json or --csv shows every column",
    )


def cmd_query(args: argparse.Namespace) -> int:
    """Run the query and print its result; a refused or failing query is one sentence, exit 2."""
    from rating_core.lake.query import QueryError, run_query

    lake = as_local_path(args.lake)
    if not lake.is_dir():
        raise UserError(f"there is no lake at '{lake}' (run 'ratings run' first, or give --lake)")
    try:
        result = run_query(lake, args.sql)
    except QueryError as error:
        raise UserError(str(error)) from None
    print_result(result, "json" if args.json else "csv" if args.csv else "table")
    return 0
