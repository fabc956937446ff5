"""Which period assets exist: every rating system contributes its monthly partitioned assets."""

from __future__ import annotations

import dagster as dg

from assets.federation import FEDERATION_ASSETS, FEDERATION_CHECKS
from assets.partitions import period_partitions, with_partitions
from assets.platform import PLATFORM_ASSETS, PLATFORM_CHECKS

PERIOD_ASSETS = [*FEDERATION_ASSETS, *PLATFORM_ASSETS]
"""Every period asset, partitioned over every ratable month (1850-01 to the current month)."""
PERIOD_CHECKS = [*FEDERATION_CHECKS, *PLATFORM_CHECKS]


def period_assets(first_period: str | None) -> list[dg.AssetsDefinition]:
    """The period assets with partitions from `first_period` (the lake's first period with
    data; None: the current month only) to the current month."""
    return with_partitions(PERIOD_ASSETS, period_partitions(first_period))
