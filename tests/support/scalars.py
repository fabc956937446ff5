"""Polars scalars narrowed for mypy: `Series.max()`, `.min()` and `.item()` are typed as any
Python value or None, so a test that compares one with a number says which it expects."""

from __future__ import annotations

from datetime import datetime


def as_number(value: object) -> float:
    """`value` (a Polars scalar the test expects to be a number), or an assertion error naming
    it (None from an empty column, a string): the comparison after it then type-checks."""
    assert isinstance(value, int | float), f"expected a number, got {value!r}"
    return value


def as_datetime(value: object) -> datetime:
    """`value` (a Polars scalar the test expects to be a datetime), or an assertion error
    naming it."""
    assert isinstance(value, datetime), f"expected a datetime, got {value!r}"
    return value
