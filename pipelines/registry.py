"""Which period assets exist: every rating system contributes its period-partitioned assets,
built from its `SystemSpec` by `assets.systems.system_assets`."""

from __future__ import annotations

from assets.federation import FEDERATION_ASSETS, FEDERATION_SPECS
from assets.platform import PLATFORM_ASSETS, PLATFORM_SPECS
from assets.systems import SystemSpec

SYSTEMS: list[SystemSpec] = [*FEDERATION_SPECS, *PLATFORM_SPECS]
"""Every rating system, in the order the summary names them."""
PERIOD_ASSETS = [*FEDERATION_ASSETS, *PLATFORM_ASSETS]
"""Every period asset, on the dynamic `periods` partitions (`assets.partitions`). Each system's
checks are its ratings asset's `check_specs`, evaluated in the same step."""

SYSTEM_OF_RATINGS = {spec.ratings_key: spec for spec in SYSTEMS}
"""The system of each `<system>_ratings` asset key, for the runner to find its publishing asset."""
