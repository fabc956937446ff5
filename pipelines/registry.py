"""Which period assets exist: every rating system contributes its monthly partitioned assets."""

from __future__ import annotations

from assets.federation import FEDERATION_ASSETS, FEDERATION_CHECKS
from assets.platform import PLATFORM_ASSETS, PLATFORM_CHECKS

PERIOD_ASSETS = [*FEDERATION_ASSETS, *PLATFORM_ASSETS]
PERIOD_CHECKS = [*FEDERATION_CHECKS, *PLATFORM_CHECKS]
