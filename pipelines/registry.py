"""Which period assets exist: every rating system contributes its monthly partitioned assets."""

from __future__ import annotations

PERIOD_ASSETS: list = []
PERIOD_CHECKS: list = []
