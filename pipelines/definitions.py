"""The one place where the Dagster Definitions are assembled (loaded by workspace.yaml).

Loading them reads nothing: the inbox and the lake come to the `paths` resource from the
environment (RATINGS_INBOX, RATINGS_LAKE; `ratings ui` sets both) when a run, sensor or
schedule uses it, and the period partitions live in the instance (`assets.partitions`).
"""

from __future__ import annotations

import dagster as dg

from assets.ingest import INGEST_ASSETS, INGEST_CHECKS
from assets.resources import PipelinePaths
from pipelines.automation import inbox_sensor, monthly_lists_schedule
from pipelines.jobs import INBOX_VAR, LAKE_VAR, ingest_job, range_job
from pipelines.registry import PERIOD_ASSETS

defs = dg.Definitions(
    assets=[*INGEST_ASSETS, *PERIOD_ASSETS],
    asset_checks=INGEST_CHECKS,
    jobs=[ingest_job, range_job],
    sensors=[inbox_sensor],
    schedules=[monthly_lists_schedule],
    resources={"paths": PipelinePaths(inbox=dg.EnvVar(INBOX_VAR), lake=dg.EnvVar(LAKE_VAR))},
)
