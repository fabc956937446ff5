"""Periods are calendar months written `YYYY-MM` (RULES §0)."""

from __future__ import annotations


def _parts(period: str) -> tuple[int, int]:
    year, month = period.split("-")
    return int(year), int(month)


def next_period(period: str) -> str:
    """The month after `period`."""
    year, month = _parts(period)
    return f"{year + month // 12:04d}-{month % 12 + 1:02d}"


def previous_period(period: str) -> str:
    """The month before `period`."""
    year, month = _parts(period)
    return f"{year - 1:04d}-12" if month == 1 else f"{year:04d}-{month - 1:02d}"


def period_range(first: str, last: str) -> list[str]:
    """Every period from `first` to `last`, both included."""
    out = []
    current = first
    while current <= last:
        out.append(current)
        current = next_period(current)
    return out
