"""Rounding half away from zero (RULES §0), for exact and float values and Polars expressions.

Python's `round()` rounds half to even and floats carry representation error, so every rule
that says "round" goes through these helpers.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import polars as pl

FLOAT_TOLERANCE = 1e-9
"""Tolerance used when a float must be compared with a rule boundary."""


def round_half_away(value: float | int | Fraction | Decimal, digits: int = 0) -> float | int:
    """Round half away from zero to `digits` decimals (an int when `digits` is 0).

    Floats are first taken at their shortest decimal repr, so 0.285 (stored as 0.28499...)
    rounds to 0.29 as a person reading it expects.
    """
    if isinstance(value, Fraction):
        scaled = value * (10**digits)
        sign = -1 if scaled < 0 else 1
        n = (abs(scaled) + Fraction(1, 2)).__floor__() * sign
        return int(n) if digits == 0 else n / 10**digits
    dec = (
        value
        if isinstance(value, Decimal)
        else Decimal(repr(value) if isinstance(value, float) else value)
    )
    quantum = Decimal(1).scaleb(-digits)
    rounded = dec.quantize(quantum, rounding=ROUND_HALF_UP)  # ROUND_HALF_UP is away from zero
    return int(rounded) if digits == 0 else float(rounded)


def round_half_away_expr(expr: pl.Expr, digits: int = 0) -> pl.Expr:
    """Polars expression rounding half away from zero; a tiny nudge absorbs float error."""
    factor = 10.0**digits
    scaled = expr * factor
    nudged = scaled.abs() + 0.5 + FLOAT_TOLERANCE
    out = nudged.floor() * scaled.sign() / factor
    # the division may leave float noise (1500.3000000000002); the value is already rounded
    return out.cast(pl.Int64) if digits == 0 else out.round(digits)


def round_hundredths_half_away_expr(hundredths: pl.Expr) -> pl.Expr:
    """Exact integer rounding of a value held in integer hundredths (e.g. K x sum of PD*100).

    `hundredths` is an integer expression; the result is the integer nearest to hundredths/100,
    halves away from zero, with no float involved.
    """
    h = hundredths.cast(pl.Int64)
    return ((h.abs() + 50) // 100) * h.sign()


def div_round_half_away_expr(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """Exact integer num / den (den > 0) rounded half away from zero, with no float involved."""
    n = num.cast(pl.Int64)
    d = den.cast(pl.Int64)
    return ((2 * n.abs() + d) // (2 * d)) * n.sign()
