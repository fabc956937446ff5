"""Jobs, the inbox sensor and the monthly publishing schedule (DESIGN §6)."""

from __future__ import annotations

import hashlib

import dagster as dg

from assets.resources import PipelinePaths
from rating_core.ingest.inbox import inbox_files

ingest_job = dg.define_asset_job(
    "ingest_job", selection=dg.AssetSelection.groups("ingest"), description="Read the inbox."
)
lists_job = dg.define_asset_job(
    "lists_job",
    selection=dg.AssetSelection.groups("ratings", "publish"),
    description="Compute and publish the lists of one period.",
)

monthly_lists_schedule = dg.build_schedule_from_partitioned_job(
    lists_job, hour_of_day=3, description="Publish the lists of the month that just ended."
)


def inbox_fingerprint(paths: PipelinePaths) -> str:
    """A digest of the inbox's file names, sizes and modification times."""
    digest = hashlib.sha256()
    for path in inbox_files(paths.inbox_path):
        stat = path.stat()
        digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


@dg.sensor(job=ingest_job, minimum_interval_seconds=60, description="New or changed inbox files.")
def inbox_sensor(context: dg.SensorEvaluationContext, paths: PipelinePaths) -> dg.SensorResult:
    fingerprint = inbox_fingerprint(paths)
    if fingerprint == context.cursor:
        return dg.SensorResult(skip_reason="the inbox has not changed")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=fingerprint)], cursor=fingerprint)
