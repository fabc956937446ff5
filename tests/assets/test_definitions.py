"""The Dagster Definitions load and hold the graph DESIGN §6 describes."""

from __future__ import annotations

import dagster as dg

from pipelines.definitions import defs


def test_definitions_hold_assets_checks_sensor_and_schedule() -> None:
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert {
        "players",
        "games",
        "starting_lists",
        "moderation_decisions",
        "backgammon_matches",
    } <= keys
    checks = {key.name for key in graph.asset_check_keys}
    assert {"games_have_unique_ids", "games_are_classified"} <= checks
    assert defs.resolve_sensor_def("inbox_sensor") is not None
    assert defs.resolve_schedule_def("lists_job_schedule") is not None
    assert defs.resolve_job_def("lists_job").partitions_def is not None


def test_ingest_assets_are_in_the_ingest_group() -> None:
    graph = defs.resolve_asset_graph()
    for name in ("players", "games", "starting_lists"):
        node = graph.get(dg.AssetKey(name))
        assert node.group_name == "ingest"
