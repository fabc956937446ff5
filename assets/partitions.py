"""Monthly partitions shared by every period asset (a period is a calendar month, RULES §0).

The partitions start at the first period the lake has data for (`period_partitions`), so the
Dagster UI shows the periods that exist rather than every month since 1850; the assets are
declared once with `monthly_periods` (every ratable month) and re-bound by `with_partitions`.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

from rating_core.periods import FIRST_PERIOD, period_of_date, utc_today


def period_partitions(first_period: str | None = None) -> dg.MonthlyPartitionsDefinition:
    """One partition per period from `first_period` (default: the current month) up to the
    current month included (partition keys are YYYY-MM-01)."""
    first = first_period or period_of_date(utc_today())
    return dg.MonthlyPartitionsDefinition(start_date=partition_of_period(first), end_offset=1)


def with_partitions(
    assets: Iterable[dg.AssetsDefinition], partitions: dg.PartitionsDefinition
) -> list[dg.AssetsDefinition]:
    """The period assets re-bound to `partitions` (their code, deps and checks unchanged)."""
    return [
        asset.map_asset_specs(lambda spec: spec.replace_attributes(partitions_def=partitions))
        for asset in assets
    ]


def period_of_partition(partition_key: str) -> str:
    """`2026-01-01` → `2026-01`."""
    return partition_key[:7]


def partition_of_period(period: str) -> str:
    """`2026-01` → `2026-01-01`."""
    return f"{period}-01"


monthly_periods = period_partitions(FIRST_PERIOD)
"""Every ratable period, from 1850-01 to the current month: the default the assets declare."""

previous_period = dg.TimeWindowPartitionMapping(start_offset=-1, end_offset=-1)
"""A list of period P is built from the list of P-1 (self-dependency; the first has none)."""
