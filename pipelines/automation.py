"""The inbox sensor and the monthly publishing schedule (DESIGN §6)."""

from __future__ import annotations

import hashlib

import dagster as dg

from assets.partitions import PERIODS, partition_of_period, partition_requests
from assets.resources import PipelinePaths
from pipelines.jobs import ingest_job, range_job
from rating_core.ingest.inbox import inbox_files
from rating_core.lake.data_periods import data_periods
from rating_core.periods import period_of_date, previous_period


def inbox_fingerprint(paths: PipelinePaths) -> str:
    """A digest of the inbox's file names, sizes and modification times."""
    digest = hashlib.sha256()
    for path in inbox_files(paths.inbox_path):
        stat = path.stat()
        digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


@dg.sensor(job=ingest_job, minimum_interval_seconds=60, description="New or changed inbox files.")
def inbox_sensor(context: dg.SensorEvaluationContext, paths: PipelinePaths) -> dg.SensorResult:
    """Request an ingest run when the inbox changed, and keep the `periods` partitions equal to
    the lake's periods (an ingest started here or from the UI may have brought new ones)."""
    registered = context.instance.get_dynamic_partitions(PERIODS)
    requests = partition_requests(registered, data_periods(paths.lake_path))
    fingerprint = inbox_fingerprint(paths)
    if fingerprint == context.cursor:
        return dg.SensorResult(
            skip_reason="the inbox has not changed", dynamic_partitions_requests=requests
        )
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=fingerprint)],
        cursor=fingerprint,
        dynamic_partitions_requests=requests,
    )


@dg.schedule(
    job=range_job,
    cron_schedule="0 3 1 * *",
    description="Publish the lists of the month that just ended.",
)
def monthly_lists_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    """On the 1st at 03:00, a run of the month that just ended, once it is one of the lake's
    periods (a registered partition)."""
    month = previous_period(period_of_date(context.scheduled_execution_time.date()))
    key = partition_of_period(month)
    if key not in context.instance.get_dynamic_partitions(PERIODS):
        return dg.SkipReason(f"the lake has no data for {month}")
    return dg.RunRequest(run_key=key, partition_key=key)
