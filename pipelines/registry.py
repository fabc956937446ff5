"""Which period assets exist: every rating system contributes its monthly partitioned assets,
built from its `SystemSpec` by `assets.systems.system_assets`."""

from __future__ import annotations

import dagster as dg

from assets.federation import FEDERATION_ASSETS, FEDERATION_SPECS
from assets.partitions import period_partitions, with_partitions
from assets.platform import PLATFORM_ASSETS, PLATFORM_SPECS
from assets.systems import SystemSpec

SYSTEMS: list[SystemSpec] = [*FEDERATION_SPECS, *PLATFORM_SPECS]
"""Every rating system, in the order the summary names them."""
PERIOD_ASSETS = [*FEDERATION_ASSETS, *PLATFORM_ASSETS]
"""Every period asset, partitioned over every ratable month (1850-01 to the current month). Each
system's checks are its ratings asset's `check_specs`, evaluated in the same step."""

SYSTEM_OF_RATINGS = {spec.ratings_key: spec for spec in SYSTEMS}
"""The system of each `<system>_ratings` asset key, for the runner to find its publishing asset."""


def period_assets(first_period: str | None) -> list[dg.AssetsDefinition]:
    """The period assets with partitions from `first_period` (the lake's first period with
    data; None: the current month only) to the current month."""
    return with_partitions(PERIOD_ASSETS, period_partitions(first_period))
