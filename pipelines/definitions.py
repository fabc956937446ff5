"""The one place where the Dagster Definitions are assembled (loaded by workspace.yaml)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from assets.ingest import INGEST_ASSETS, INGEST_CHECKS
from assets.resources import PipelinePaths
from pipelines.automation import inbox_sensor, ingest_job, lists_job, monthly_lists_schedule
from pipelines.registry import period_assets
from rating_core.lake.data_periods import data_periods

INBOX = os.environ.get("RATINGS_INBOX", "data_samples")
LAKE = os.environ.get("RATINGS_LAKE", "lake")
PERIODS = data_periods(Path(LAKE))
"""The lake's periods when the code location loads: the monthly partitions start at the first."""

defs = dg.Definitions(
    assets=[*INGEST_ASSETS, *period_assets(PERIODS[0] if PERIODS else None)],
    asset_checks=INGEST_CHECKS,
    jobs=[ingest_job, lists_job],
    sensors=[inbox_sensor],
    schedules=[monthly_lists_schedule],
    resources={"paths": PipelinePaths(inbox=INBOX, lake=LAKE)},
)
