"""`ratings query SQL`: one SELECT (DuckDB) over read-only views of the lake.

The views and the read-only lock-down are `rating_core.lake.query`'s; this module parses the
command, turns a refused or failing query into one `ratings:` sentence (exit 2) and prints the
result as a table that fits the terminal, as JSON (a list of row objects) or as CSV.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Callable, Iterator
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from pipelines.cli.errors import UserError
from pipelines.cli.output import console, print_table
from rating_core.lake.location import as_local_path
from rating_core.lake.view_parts import DUCKDB_NUMBERS

if TYPE_CHECKING:  # DuckDB is imported when a query runs, not by every `ratings` command
    from rating_core.lake.query import QueryStream

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

DEFAULT_MEMORY = "1GiB"
"""The default of --memory (rating_core.lake.query.DEFAULT_MEMORY, without importing DuckDB to
build the parser)."""

EXAMPLE = "SELECT list, count(*) AS players FROM current_lists GROUP BY list"

TABLE_LIMIT = 1000
"""Rows the table shows unless --limit says otherwise (--csv and --json write every row)."""

BATCH_ROWS = 10_000
"""Rows fetched from DuckDB and written at a time: the output streams, whatever the result's
size."""


def add_query_parser(
    sub: argparse._SubParsersAction, add_lake: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Register `ratings query SQL [--lake L] [--json|--csv] [--limit N] [--memory SIZE]`."""
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
    query.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help=f"rows to print, 1 or more (default: {TABLE_LIMIT} in the table, every row with "
        "--json or --csv)",
    )
    query.add_argument(
        "--memory",
        default=DEFAULT_MEMORY,
        metavar="SIZE",
        help=f"DuckDB's memory budget, e.g. 2GB or 512MiB (default {DEFAULT_MEMORY}); what does "
        "not fit spills to a temporary folder",
    )
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


TABLE_DECIMALS = 2
"""Decimals of a floating-point number in the table (JSON and CSV write every digit)."""

_TABLE_STEP = Decimal(1).scaleb(-TABLE_DECIMALS)


def rounded(value: float) -> str:
    """A float as the table shows it: TABLE_DECIMALS decimals at most, rounded half away from
    zero from its shortest decimal form (`2.675` -> `2.68`, never binary artefacts such as
    `1834.4999999`), trailing zeros dropped but one kept (`1834.0`, `0.5`)."""
    if not math.isfinite(value):
        return str(value)
    text = format(Decimal(repr(value)).quantize(_TABLE_STEP, rounding=ROUND_HALF_UP), "f")
    text = text.rstrip("0")
    text = text + "0" if text.endswith(".") else text
    return "0.0" if text == "-0.0" else text


def table_cell(value: Any) -> str:
    """A value as the table shows it (NULL is empty, floats rounded for reading)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return rounded(value)
    converted = json_value(value)
    return str(converted)


PLAIN_TYPES = DUCKDB_NUMBERS
"""DuckDB types whose Python values (int, float, None) CSV and JSON write as they are."""

Converter = Callable[[Any], Any] | None
"""How one column's values are written (None: as they are)."""


def _csv_text(value: str | None) -> str | None:
    """A text cell: a value a spreadsheet would run as a formula gets a leading `'`."""
    return "'" + value if value is not None and value.startswith(CSV_TRIGGERS) else value


def _csv_converters(types: list[str]) -> list[Converter]:
    """Each column's CSV writing, as `csv_cell` does it (the csv module writes None as an empty
    cell and numbers as `str` does, so those need no call per value)."""
    return [None if t in PLAIN_TYPES else _csv_text if t == "VARCHAR" else csv_cell for t in types]


def _json_converters(types: list[str]) -> list[Converter]:
    """Each column's JSON writing, as `json_value` does it (numbers, text, booleans and None
    are JSON as they are)."""
    plain = PLAIN_TYPES | {"VARCHAR", "BOOLEAN"}
    return [None if t in plain else json_value for t in types]


def _converted(batch: list[tuple[Any, ...]], converters: list[Converter]) -> Iterator[tuple]:
    """The batch's rows with each column converted, column by column."""
    if all(c is None for c in converters):
        return iter(batch)
    columns: list[Any] = list(zip(*batch, strict=True))
    for i, converter in enumerate(converters):
        if converter is not None:
            columns[i] = map(converter, columns[i])
    return zip(*columns, strict=True)


def _json_rows(stream: QueryStream, batches: Iterator[list[tuple[Any, ...]]]) -> None:
    """Write the rows as one JSON list of row objects, batch by batch, exactly as `print_json`
    writes the whole list (two-space indent)."""
    out = sys.stdout
    first = True
    converters = _json_converters(stream.types)
    for batch in batches:
        rows = _converted(batch, converters)
        objects = [dict(zip(stream.columns, row, strict=True)) for row in rows]
        text = json.dumps(objects, indent=2, default=str)
        out.write(("[\n" if first else ",\n") + text[2:-2])  # the items, without `[\n` and `\n]`
        first = False
    out.write("[]\n" if first else "\n]\n")


def _csv_rows(stream: QueryStream, batches: Iterator[list[tuple[Any, ...]]]) -> None:
    """Write a header row and the rows as CSV, batch by batch."""
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(stream.columns)
    converters = _csv_converters(stream.types)
    for batch in batches:
        writer.writerows(_converted(batch, converters))


def _limited(
    batches: Iterator[list[tuple[Any, ...]]], limit: int | None
) -> Iterator[list[tuple[Any, ...]]]:
    """The batches, cut after `limit` rows (every row when None)."""
    left = limit
    for batch in batches:
        if left is not None and len(batch) >= left:
            if left:
                yield batch[:left]
            return
        if left is not None:
            left -= len(batch)
        yield batch


def print_result(stream: QueryStream, form: str, limit: int | None = None) -> None:
    """Print a running query's rows as `table`, `json` or `csv`: JSON and CSV stream every row
    (or the first `limit`); the table shows the first `limit` (TABLE_LIMIT) and says how many it
    left out."""
    if form in ("json", "csv"):
        batches = _limited(stream.batches(BATCH_ROWS), limit)
        (_json_rows if form == "json" else _csv_rows)(stream, batches)
        return
    limit = TABLE_LIMIT if limit is None else limit
    rows = stream.head(limit + 1)
    hidden = 0
    if len(rows) > limit:
        hidden = stream.count() - limit
        rows = rows[:limit]
    numeric = {
        c for c, t in zip(stream.columns, stream.types, strict=True) if t.startswith(NUMERIC_TYPES)
    }
    text = {c for c, t in zip(stream.columns, stream.types, strict=True) if t == "VARCHAR"}
    total = len(rows) + hidden
    print_table(
        f"{total} row{'s' if total != 1 else ''}",
        stream.columns,
        [[table_cell(v) for v in row] for row in rows],
        wrap=text,
        right=numeric,
        hint="--json or --csv shows every column, numbers unrounded",
    )
    if hidden:
        console.print(
            f"{hidden} more row{'s' if hidden != 1 else ''} not shown (--limit N shows more, "
            "--csv or --json every row)",
            highlight=False,
        )


def cmd_query(args: argparse.Namespace) -> int:
    """Run the query and print its result as it streams; a refused or failing query is one
    sentence, exit 2."""
    from rating_core.lake.query import QueryError, memory_bytes, stream_query

    lake = as_local_path(args.lake)
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit takes a number of rows, 1 or more, not {args.limit}")
    try:
        memory = memory_bytes(args.memory)
        if not lake.is_dir():
            raise UserError(
                f"there is no lake at '{lake}' (run 'ratings run' first, or give --lake)"
            )
        with stream_query(lake, args.sql, memory) as stream:
            form = "json" if args.json else "csv" if args.csv else "table"
            print_result(stream, form, args.limit)
    except QueryError as error:
        raise UserError(str(error)) from None
    return 0
