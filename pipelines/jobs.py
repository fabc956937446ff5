"""The jobs: `ingest` (read the inbox) and `rate_and_publish` (the period assets over a range of
periods), the names every run carries, in the UI's Jobs page and in `ratings run`'s runs alike.

`ratings run` rates a range in-process by default. With `--executor multiprocess` the same
assets run as one job on Dagster's multiprocess executor: the systems are independent assets,
so their steps run side by side, one process each. Such a job must be rebuilt in every step
process, so it is made by `multiprocess_range_job`, a module-level function `dg.reconstructable`
points at, from the environment the runner sets (inbox and lake).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import dagster as dg

from assets.resources import PipelinePaths
from pipelines.registry import PERIOD_ASSETS

INGEST_JOB = "ingest"
"""Name of the job of the ingest assets and their checks."""
RANGE_JOB = "rate_and_publish"
"""Name of the job of every period asset (and its checks)."""
PREVIEW_JOB = "preview"
"""Name of the runs of `ratings preview` (on its scratch copy of the lake)."""

ingest_job = dg.define_asset_job(
    INGEST_JOB, selection=dg.AssetSelection.groups("ingest"), description="Read the inbox."
)
range_job = dg.define_asset_job(
    RANGE_JOB,
    selection=dg.AssetSelection.groups("ratings", "publish"),
    description="Compute and publish the lists of a range of periods.",
)

COMMAND_TAG, LAKE_TAG, INBOX_TAG = "ratings/command", "ratings/lake", "ratings/inbox"
"""Tags of every run the command line starts: which command, on which lake, from which inbox."""


def run_tags(command: str, inbox: str, lake: str) -> dict[str, str]:
    """The tags of a run `command` (`run`, `preview`) starts on `lake` from `inbox`."""
    return {COMMAND_TAG: command, LAKE_TAG: lake, INBOX_TAG: inbox}


def named_job(
    name: str,
    assets: Sequence[Any],
    resources: Mapping[str, object],
    selection: Sequence[str] | None = None,
) -> dg.JobDefinition:
    """The job `name` over `assets` (with their checks), `selection` of them (default all), as
    `dg.materialize` builds its own but under a name the UI shows."""
    job = dg.define_asset_job(name, selection=selection)
    defs = dg.Definitions(assets=assets, jobs=[job], resources=resources)
    return defs.resolve_job_def(name)


INBOX_VAR, LAKE_VAR = "RATINGS_INBOX", "RATINGS_LAKE"
LATE_RESULTS_VAR = "RATINGS_LATE_RESULTS"
"""Environment the step processes rebuild the job from (the late-results policy as JSON)."""


def multiprocess_range_job() -> dg.JobDefinition:
    """Every period asset of the lake in `RATINGS_LAKE` as one job on the multiprocess executor
    (called again in each step process)."""
    paths = PipelinePaths(
        inbox=os.environ[INBOX_VAR],
        lake=os.environ[LAKE_VAR],
        late_results=os.environ.get(LATE_RESULTS_VAR, ""),
    )
    job = dg.define_asset_job(
        RANGE_JOB,
        selection=dg.AssetSelection.assets(*PERIOD_ASSETS),
        executor_def=dg.multiprocess_executor,
    )
    defs = dg.Definitions(assets=PERIOD_ASSETS, jobs=[job], resources={"paths": paths})
    return defs.resolve_job_def(RANGE_JOB)


@contextmanager
def job_environment(inbox: str, lake: str, late_results: str = "") -> Iterator[None]:
    """Set the environment `multiprocess_range_job` reads (inherited by the step processes) for
    the duration of a run, and restore the caller's afterwards."""
    saved = {name: os.environ.get(name) for name in (INBOX_VAR, LAKE_VAR, LATE_RESULTS_VAR)}
    os.environ.update({INBOX_VAR: inbox, LAKE_VAR: lake, LATE_RESULTS_VAR: late_results})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
