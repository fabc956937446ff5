"""A Dagster run started outside `ratings run` (the UI, the sensor, the schedule) takes the lake's
lock through the `paths` resource, so it never interleaves with a `ratings run` on that lake."""

from __future__ import annotations

import threading
from pathlib import Path

import dagster as dg

from assets.resources import PipelinePaths
from rating_core.lake.lock import hold_lake, is_held_here


def test_a_run_outside_ratings_run_waits_for_the_lake(tmp_path: Path, lake_held_elsewhere) -> None:
    lake = tmp_path / "lake"
    started = threading.Event()

    @dg.asset
    def touches_the_lake(paths: PipelinePaths) -> None:
        started.set()

    with lake_held_elsewhere(lake) as holder:
        resources = {"paths": PipelinePaths(inbox=str(tmp_path), lake=str(lake))}
        results: list[bool] = []
        run = threading.Thread(
            target=lambda: results.append(
                dg.materialize([touches_the_lake], resources=resources).success
            )
        )
        run.start()
        assert not started.wait(1.5), "the run went ahead while another process held the lake"
        assert holder.stdin is not None
        holder.stdin.close()  # the other run ends: the lock is released
        run.join(60)
        assert started.is_set() and results == [True]


def test_the_steps_of_the_holding_run_go_ahead(tmp_path: Path) -> None:
    lake = tmp_path / "lake"

    @dg.asset
    def inside(paths: PipelinePaths) -> None:
        assert is_held_here(paths.lake_path)

    with hold_lake(lake, "ratings run"):
        assert is_held_here(lake)
        resources = {"paths": PipelinePaths(inbox=str(tmp_path), lake=str(lake))}
        assert dg.materialize([inside], resources=resources).success
    assert not is_held_here(lake)
