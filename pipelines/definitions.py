"""The one place where the Dagster Definitions are assembled (loaded by workspace.yaml)."""

from __future__ import annotations

import os

import dagster as dg

from assets.ingest import INGEST_ASSETS, INGEST_CHECKS
from pipelines.automation import inbox_sensor, ingest_job, lists_job, monthly_lists_schedule
from pipelines.registry import PERIOD_ASSETS, PERIOD_CHECKS
from pipelines.resources import PipelinePaths

defs = dg.Definitions(
    assets=[*INGEST_ASSETS, *PERIOD_ASSETS],
    asset_checks=[*INGEST_CHECKS, *PERIOD_CHECKS],
    jobs=[ingest_job, lists_job],
    sensors=[inbox_sensor],
    schedules=[monthly_lists_schedule],
    resources={
        "paths": PipelinePaths(
            inbox=os.environ.get("RATINGS_INBOX", "data_samples"),
            lake=os.environ.get("RATINGS_LAKE", "lake"),
        )
    },
)
