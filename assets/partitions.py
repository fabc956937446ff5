"""Monthly partitions shared by every period asset (a period is a calendar month, RULES §0)."""

from __future__ import annotations

import dagster as dg

PERIODS_START = "2000-01-01"

monthly_periods = dg.MonthlyPartitionsDefinition(start_date=PERIODS_START, end_offset=1)
"""One partition per period YYYY-MM (partition keys are YYYY-MM-01), current month included."""

previous_period = dg.TimeWindowPartitionMapping(start_offset=-1, end_offset=-1)
"""A list of period P is built from the list of P-1 (self-dependency)."""


def period_of_partition(partition_key: str) -> str:
    """`2026-01-01` → `2026-01`."""
    return partition_key[:7]


def partition_of_period(period: str) -> str:
    """`2026-01` → `2026-01-01`."""
    return f"{period}-01"
