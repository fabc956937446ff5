"""The shared bases the engines lean on: period arithmetic and exact rounded division."""

from __future__ import annotations

from fractions import Fraction

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.periods import period_index, period_index_expr, period_range
from rating_core.rounding import div_round_half_away_expr, round_half_away


def test_period_index_counts_months_and_the_column_version_agrees() -> None:
    periods = period_range("1850-01", "2026-12")
    assert [period_index(p) for p in periods] == list(range(1850 * 12, 2027 * 12))
    column = pl.select(period_index_expr(pl.lit(pl.Series(periods)).alias("p"))).to_series()
    assert column.to_list() == [period_index(p) for p in periods]


@pytest.mark.parametrize("bad", ["2024-13", "2024-00", "2024-1", "24-01", "2024-01\n", "2024/01"])
def test_period_index_refuses_what_is_not_a_period(bad: str) -> None:
    with pytest.raises(ValueError, match="period must be YYYY-MM"):
        period_index(bad)


@given(num=st.integers(-(10**12), 10**12), den=st.integers(1, 10**6))
@settings(max_examples=200, deadline=None)
def test_exact_division_rounds_half_away_from_zero(num: int, den: int) -> None:
    got = pl.select(div_round_half_away_expr(pl.lit(num), pl.lit(den))).item()
    assert got == round_half_away(Fraction(num, den))


def test_exact_division_on_halves() -> None:
    nums = pl.Series([5, -5, 3, -3, 7, 0], dtype=pl.Int64)
    got = pl.select(div_round_half_away_expr(pl.lit(nums).alias("n"), pl.lit(2))).to_series()
    assert got.to_list() == [3, -3, 2, -2, 4, 0]
