"""Tests for rating_core.tables: the catalogue names each lake table once, consistently."""

from __future__ import annotations

from rating_core import tables
from rating_core.schemas import RATING_LISTS


def test_every_name_is_catalogued_once() -> None:
    names = [table.name for table in tables.CATALOGUE]
    assert len(names) == len(set(names))
    assert all(tables.named(table.name) is table for table in tables.CATALOGUE)
    assert tables.named("lists") is None  # published lists are not a table


def test_a_declared_schema_holds_its_partition_column_as_a_string() -> None:
    for table in tables.CATALOGUE:
        if table.schema is not None and table.partition_col is not None:
            assert str(table.schema[table.partition_col]) == "String", table.name


def test_family_functions_give_the_catalogues_entries() -> None:
    assert tables.state("site") == tables.named("state/site")
    assert tables.pool("fide-blitz").name == "state/fide-blitz-pool"
    assert tables.history("fibs").name == "history/fibs"
    assert tables.history("ukd-rapid", "newcomers").name == "history/ukd-rapid-newcomers"
    assert tables.excluded("site").name == "excluded/site"
    for system in tables.SYSTEMS:
        assert tables.named(f"list_rows/{system}") == tables.list_rows(system)
    for kind in RATING_LISTS:
        for table in tables.EXPLANATION_TABLES["fide"]:
            assert tables.history(f"fide-{kind}", table) in tables.history_tables()
    assert all(t.partition_col == tables.PERIOD for t in tables.history_tables())
