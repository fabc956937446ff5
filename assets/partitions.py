"""The partitions shared by every period asset: one per period the lake has data for (a period is
a calendar month, RULES §0).

The set of periods is known only once the inbox is ingested, so the partitions are Dagster's
dynamic partitions named `periods`, kept in the instance: `ratings run` registers the lake's
periods after ingesting, and the inbox sensor does the same for runs started from the UI. The
Dagster UI then shows exactly the periods that exist (first to last with data, in order), and a
materialized range as 100 % filled. The Definitions never read the lake to build them.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

PERIODS = "periods"
"""Name of the dynamic partitions of the period assets."""

periods_partitions = dg.DynamicPartitionsDefinition(name=PERIODS)
"""One partition per period with data, keys YYYY-MM-01, in period order."""

PartitionsRequest = dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest


def period_of_partition(partition_key: str) -> str:
    """`2026-01-01` → `2026-01`."""
    return partition_key[:7]


def partition_of_period(period: str) -> str:
    """`2026-01` → `2026-01-01`."""
    return f"{period}-01"


def partition_requests(
    registered: Sequence[str], periods: Sequence[str]
) -> list[PartitionsRequest]:
    """What turns the `registered` partition keys into exactly `periods`, in period order.

    New periods after the last registered one are added. Dagster orders dynamic partitions by
    when they were added, and a partition range runs in that order, so when an earlier period
    appears (a late file) or one goes, every key is registered again in order (the history of a
    partition, kept by its key, stays)."""
    wanted = [partition_of_period(period) for period in sorted(periods)]
    have = list(registered)
    if have == wanted:
        return []
    if have == wanted[: len(have)]:
        return [dg.AddDynamicPartitionsRequest(PERIODS, wanted[len(have) :])]
    requests: list[PartitionsRequest] = []
    if have:
        requests.append(dg.DeleteDynamicPartitionsRequest(PERIODS, have))
    if wanted:
        requests.append(dg.AddDynamicPartitionsRequest(PERIODS, wanted))
    return requests


def register_periods(instance: dg.DagsterInstance, periods: Sequence[str]) -> None:
    """Make the instance's `periods` partitions exactly `periods` (see `partition_requests`)."""
    for request in partition_requests(instance.get_dynamic_partitions(PERIODS), periods):
        if isinstance(request, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(PERIODS, list(request.partition_keys))
        else:
            for key in request.partition_keys:
                instance.delete_dynamic_partition(PERIODS, key)
