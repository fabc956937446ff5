"""DuckDB queries the tests compare with Polars: `duckdb.sql` is typed as returning None too
(for a statement without rows), so a query known to return rows is narrowed here."""

from __future__ import annotations

import duckdb


def relation(query: str) -> duckdb.DuckDBPyRelation:
    """`duckdb.sql(query)` for a query that returns rows (a SELECT): its relation, or an
    assertion error when DuckDB gave none."""
    rows = duckdb.sql(query)
    assert rows is not None, f"duckdb.sql gave no relation for {query!r}"
    return rows
