"""The Dagster Definitions load and hold the graph DESIGN §6 describes."""

from __future__ import annotations

import dagster as dg
import pytest

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
    assert defs.resolve_schedule_def("monthly_lists_schedule") is not None
    assert defs.resolve_job_def("rate_and_publish").partitions_def is not None


def test_ingest_assets_are_in_the_ingest_group() -> None:
    graph = defs.resolve_asset_graph()
    for name in ("players", "games", "starting_lists"):
        node = graph.get(dg.AssetKey(name))
        assert node.group_name == "ingest"


def test_the_federation_and_club_ratings_read_the_merges() -> None:
    graph = defs.resolve_asset_graph()
    merges = dg.AssetKey("merges")
    for name in ("fide_ratings", "ukd_ratings", "club_ratings"):
        assert merges in graph.get(dg.AssetKey(name)).parent_keys, name
    assert {"games", "starting_lists", "players"} <= {
        key.to_user_string() for key in graph.get(merges).parent_keys
    }


def test_inbox_sensor_requests_a_run_only_when_the_inbox_changes(
    tmp_path, lake_held_elsewhere
) -> None:
    from assets.resources import PipelinePaths
    from pipelines.automation import inbox_sensor

    inbox = tmp_path / "inbox"
    (inbox / "platform").mkdir(parents=True)
    games = inbox / "platform" / "games.csv"
    games.write_text("game_id\n", encoding="utf-8")
    paths = PipelinePaths(inbox=str(inbox), lake=str(tmp_path / "lake"))

    def evaluate(cursor: str | None = None) -> dg.SensorResult:
        # `paths` holds the lake for a run (a generator resource), so the context is entered
        with dg.build_sensor_context(
            cursor=cursor, resources={"paths": paths}, instance=dg.DagsterInstance.ephemeral()
        ) as context:
            result = inbox_sensor(context)
        assert isinstance(result, dg.SensorResult), result
        return result

    with lake_held_elsewhere(tmp_path / "lake"):  # an evaluation never waits (only runs do)
        first = evaluate()
    assert len(first.run_requests or []) == 1
    assert not evaluate(first.cursor).run_requests
    (inbox / "platform" / "more.csv").write_text("game_id\n", encoding="utf-8")
    changed = evaluate(first.cursor)
    assert len(changed.run_requests or []) == 1 and changed.cursor != first.cursor


@pytest.mark.slow
def test_workspace_validates_for_dagster_dev() -> None:
    """`ratings ui` runs `dagster dev -w workspace.yaml`: the workspace must load as-is."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    dagster = Path(sys.executable).with_name("dagster")
    proc = subprocess.run(
        [str(dagster), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "passed validation" in proc.stderr + proc.stdout


@pytest.mark.slow
def test_loading_the_definitions_reads_neither_the_lake_nor_the_environment(tmp_path) -> None:
    """The code location loads without RATINGS_LAKE / RATINGS_INBOX and without touching any
    lake: the lake's storage functions raise if called while the Definitions are loaded."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = (
        "import rating_core.lake.storage as storage\n"
        "def refuse(*args, **kwargs):\n"
        "    raise AssertionError('the Definitions read the lake')\n"
        "storage.table_partitions = storage.read_table = refuse\n"
        "from pipelines.definitions import defs\n"
        "defs.resolve_asset_graph()\n"
        "print(sorted(job.name for job in defs.resolve_all_job_defs()))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RATINGS_LAKE", "RATINGS_INBOX")}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "PYTHONPATH": str(root)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "'ingest', 'rate_and_publish'" in proc.stdout
    assert list(tmp_path.iterdir()) == [], "loading wrote nothing (no lake)"


def test_the_paths_resource_takes_the_inbox_and_lake_from_the_environment() -> None:
    assert defs.resources is not None
    paths = defs.resources["paths"]
    assert paths.inbox == dg.EnvVar("RATINGS_INBOX") and paths.lake == dg.EnvVar("RATINGS_LAKE")


def test_period_assets_are_partitioned_by_the_dynamic_periods() -> None:
    from pipelines.registry import PERIOD_ASSETS

    for asset in PERIOD_ASSETS:
        assert asset.partitions_def == dg.DynamicPartitionsDefinition(name="periods"), asset.key


def test_partition_requests_add_new_periods_and_reorder_after_an_earlier_one() -> None:
    from assets.partitions import partition_requests

    def keys(requests):
        return [(type(r).__name__[:3], list(r.partition_keys)) for r in requests]

    assert keys(partition_requests([], ["2026-01", "2026-02"])) == [
        ("Add", ["2026-01-01", "2026-02-01"])
    ]
    assert partition_requests(["2026-01-01"], ["2026-01"]) == []
    assert keys(partition_requests(["2026-01-01"], ["2026-01", "2026-02"])) == [
        ("Add", ["2026-02-01"])
    ]
    assert keys(partition_requests(["2026-01-01"], ["2025-12", "2026-01"])) == [
        ("Del", ["2026-01-01"]),
        ("Add", ["2025-12-01", "2026-01-01"]),
    ]
    assert keys(partition_requests(["2026-01-01"], [])) == [("Del", ["2026-01-01"])]


def test_register_periods_keeps_the_partitions_in_period_order() -> None:
    from assets.partitions import PERIODS, register_periods

    instance = dg.DagsterInstance.ephemeral()
    register_periods(instance, ["2026-01", "2026-02"])
    assert instance.get_dynamic_partitions(PERIODS) == ["2026-01-01", "2026-02-01"]
    register_periods(instance, ["2025-12", "2026-01", "2026-02", "2026-03"])
    assert instance.get_dynamic_partitions(PERIODS) == [
        "2025-12-01",
        "2026-01-01",
        "2026-02-01",
        "2026-03-01",
    ]


def test_the_sensor_registers_the_periods_of_the_lake(tmp_path, samples) -> None:
    import polars as pl

    from assets.resources import PipelinePaths
    from pipelines.automation import inbox_sensor
    from rating_core import tables
    from rating_core.lake.storage import write_partitioned

    lake = tmp_path / "lake"
    from rating_core.schemas import GAMES_SCHEMA, conform

    games = pl.DataFrame({"game_id": ["a", "b"], "period": ["2026-01", "2026-03"]})
    write_partitioned(lake, tables.GAMES, conform(games, GAMES_SCHEMA))
    paths = PipelinePaths(inbox=str(samples), lake=str(lake))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("periods", ["2026-01-01"])
    with dg.build_sensor_context(resources={"paths": paths}, instance=instance) as context:
        result = inbox_sensor(context)
    assert isinstance(result, dg.SensorResult), result
    (request,) = result.dynamic_partitions_requests or []
    assert list(request.partition_keys) == ["2026-02-01", "2026-03-01"]


def test_the_monthly_schedule_runs_the_month_that_ended_once_it_has_data() -> None:
    from datetime import UTC, datetime

    from pipelines.automation import monthly_lists_schedule

    when = datetime(2026, 7, 1, 3, tzinfo=UTC)
    with dg.instance_for_test() as instance:
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when) as context:
            assert isinstance(monthly_lists_schedule(context), dg.SkipReason)
        instance.add_dynamic_partitions("periods", ["2026-05-01", "2026-06-01"])
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when) as context:
            request = monthly_lists_schedule(context)
    assert isinstance(request, dg.RunRequest) and request.partition_key == "2026-06-01"


def test_every_asset_has_the_package_code_version() -> None:
    """The UI marks an asset stale when the code that made it changed: every asset (the period
    assets too, once re-bound to the lake's partitions) carries the package version."""
    from assets.period_io import code_version

    graph = defs.resolve_asset_graph()
    versions = {
        key.to_user_string(): graph.get(key).code_version
        for key in graph.get_all_asset_keys()
        if graph.get(key).is_materializable
    }
    assert {"games", "fide_ratings", "site_lists_published", "fibs_ratings"} <= set(versions)
    assert set(versions.values()) == {code_version()}, versions


def test_materializations_carry_the_digest_of_their_inputs_as_data_version(
    tmp_path, samples
) -> None:
    """An ingest asset's data version is the digest of the inbox files it read: the same files
    give the same version, an edited file another (and the UI marks what reads it stale)."""
    from assets.ingest import backgammon_matches, inbox_digest, players
    from assets.resources import PipelinePaths

    inbox = tmp_path / "inbox"
    (inbox / "backgammon").mkdir(parents=True)
    matches = inbox / "backgammon" / "m.csv"
    sample = (samples / "backgammon" / "matches-2026.csv").read_text(encoding="utf-8")
    matches.write_text("".join(sample.splitlines(keepends=True)[:3]), encoding="utf-8")
    paths = PipelinePaths(inbox=str(inbox), lake=str(tmp_path / "lake"))

    def version() -> str:
        result = dg.materialize(
            [players, backgammon_matches],
            resources={"paths": paths},
            instance=dg.DagsterInstance.ephemeral(),
            raise_on_error=False,
        )
        (event,) = [
            e
            for e in result.get_asset_materialization_events()
            if e.asset_key == backgammon_matches.key
        ]
        tags = event.materialization.tags
        assert tags is not None, "a materialization without tags"
        return tags["dagster/data_version"]

    first = version()
    assert first == inbox_digest(inbox, ["backgammon/m.csv"])
    assert version() == first
    matches.write_text("".join(sample.splitlines(keepends=True)[:2]), encoding="utf-8")
    assert version() != first


PERIOD_CHECK_KEYS = {
    ("fide_ratings", "fide_k_allowed"),
    ("fide_ratings", "fide_floor_respected"),
    ("fide_ratings", "fide_games_counted_both_sides"),
    ("ukd_ratings", "ukd_floor_respected"),
    ("site_ratings", "site_floor_respected"),
    ("site_ratings", "site_no_bots_on_lists"),
    ("site_ratings", "site_provisional_consistent"),
    ("site_ratings", "site_no_annulled_game_rated"),
    ("fibs_ratings", "fibs_experience_monotonic"),
}
"""(asset, check) of every period check: users' scripts and the UI name them."""


def test_period_assets_and_checks_keep_their_names() -> None:
    """Users' scripts and the UI name these: the factory keeps every key and check name."""
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    systems = ("fide", "ukd", "club", "site")
    assert {f"{s}_ratings" for s in (*systems, "fibs")} <= keys
    assert {f"{s}_lists_published" for s in systems} | {"fibs_list_published"} <= keys
    checks = {(key.asset_key.to_user_string(), key.name) for key in graph.asset_check_keys}
    assert checks >= PERIOD_CHECK_KEYS


def test_every_period_asset_takes_a_range_of_periods_in_one_run() -> None:
    from pipelines.registry import PERIOD_ASSETS

    for asset in PERIOD_ASSETS:
        assert asset.backfill_policy == dg.BackfillPolicy.single_run(), asset.key


def test_the_whole_graph_is_exactly_what_the_readme_documents() -> None:
    """Every asset, check, job, sensor and schedule, by name: an asset added or dropped, or a
    check moved to another asset, shows here (and in the README's Dagster section)."""
    graph = defs.resolve_asset_graph()
    ingest = {
        "players",
        "games",
        "starting_lists",
        "corrections",
        "moderation_decisions",
        "backgammon_matches",
        "merges",
    }
    ratings = {f"{s}_ratings" for s in ("fide", "ukd", "club", "site", "fibs")}
    published = {f"{s}_lists_published" for s in ("fide", "ukd", "club", "site")}
    published.add("fibs_list_published")
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} == ingest | ratings | published
    assert {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys} == {
        ("games", "games_have_unique_ids"),
        ("games", "games_are_classified"),
        *PERIOD_CHECK_KEYS,
    }
    jobs = {job.name for job in defs.resolve_all_job_defs() if not job.name.startswith("__")}
    assert jobs == {"ingest", "rate_and_publish"}
    repository = defs.get_repository_def()
    assert [s.name for s in repository.sensor_defs] == ["inbox_sensor"]
    assert [s.name for s in repository.schedule_defs] == ["monthly_lists_schedule"]
