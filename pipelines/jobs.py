"""The range of periods as a job Dagster can run on another executor (`ratings run --executor`).

`ratings run` rates a range in-process by default. With `--executor multiprocess` the same
assets run as one job on Dagster's multiprocess executor: the systems are independent assets,
so their steps run side by side, one process each. Such a job must be rebuilt in every step
process, so it is made by `rate_and_publish_job`, a module-level function `dg.reconstructable`
points at, from the environment the runner sets (inbox, lake, first period).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from assets.resources import PipelinePaths
from pipelines.registry import period_assets

RANGE_JOB = "rate_and_publish"
"""Name of the job of every period asset (and its checks)."""

INBOX_VAR, LAKE_VAR, FIRST_VAR = "RATINGS_INBOX", "RATINGS_LAKE", "RATINGS_FIRST_PERIOD"
"""Environment the step processes rebuild the job from."""


def rate_and_publish_job() -> dg.JobDefinition:
    """Every period asset of the lake in `RATINGS_LAKE`, partitioned from `RATINGS_FIRST_PERIOD`,
    as one job on the multiprocess executor (called again in each step process)."""
    assets = period_assets(os.environ.get(FIRST_VAR) or None)
    paths = PipelinePaths(inbox=os.environ[INBOX_VAR], lake=os.environ[LAKE_VAR])
    job = dg.define_asset_job(
        RANGE_JOB,
        selection=dg.AssetSelection.assets(*assets),
        executor_def=dg.multiprocess_executor,
    )
    defs = dg.Definitions(assets=assets, jobs=[job], resources={"paths": paths})
    return defs.resolve_job_def(RANGE_JOB)


@contextmanager
def job_environment(inbox: str, lake: str, first_period: str) -> Iterator[None]:
    """Set the environment `rate_and_publish_job` reads (inherited by the step processes) for
    the duration of a run, and restore the caller's afterwards."""
    saved = {name: os.environ.get(name) for name in (INBOX_VAR, LAKE_VAR, FIRST_VAR)}
    os.environ.update({INBOX_VAR: inbox, LAKE_VAR: lake, FIRST_VAR: first_period})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
