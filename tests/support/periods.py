"""Materializing period assets for one period in a test, as `ratings run` would: on an instance
whose dynamic `periods` partitions hold that period (`assets.partitions`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg

from assets.partitions import PERIODS


def materialize_period(
    assets: Sequence[Any], partition_key: str, **kwargs: Any
) -> dg.ExecuteInProcessResult:
    """`dg.materialize(assets, partition_key=...)` on an ephemeral instance with the partition."""
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(PERIODS, [partition_key])
    return dg.materialize(assets, partition_key=partition_key, instance=instance, **kwargs)
