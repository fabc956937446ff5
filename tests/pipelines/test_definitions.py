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
    assert defs.resolve_schedule_def("lists_job_schedule") is not None
    assert defs.resolve_job_def("lists_job").partitions_def is not None


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
        with dg.build_sensor_context(cursor=cursor, resources={"paths": paths}) as context:
            return inbox_sensor(context)

    with lake_held_elsewhere(tmp_path / "lake"):  # an evaluation never waits (only runs do)
        first = evaluate()
    assert len(first.run_requests) == 1
    assert not evaluate(first.cursor).run_requests
    (inbox / "platform" / "more.csv").write_text("game_id\n", encoding="utf-8")
    changed = evaluate(first.cursor)
    assert len(changed.run_requests) == 1 and changed.cursor != first.cursor


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
def test_partitions_start_at_the_first_period_of_the_lake(tmp_path) -> None:
    """Dagster loads the code location with the lake of RATINGS_LAKE: the monthly partitions
    start at its first period with games (1960-05 here), not at 1850 nor at 2000."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import polars as pl

    from rating_core.lake import tables
    from rating_core.lake.storage import write_partitioned

    lake = tmp_path / "lake"
    games = pl.DataFrame({"game_id": ["a", "b", "c"], "period": ["1960-05", "2026-01", "3000-01"]})
    write_partitioned(lake, tables.GAMES, games)
    root = Path(__file__).resolve().parents[2]
    code = (
        "from pipelines.definitions import defs\n"
        "job = defs.resolve_job_def('lists_job')\n"
        "print(job.partitions_def.get_first_partition_key())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RATINGS_LAKE": str(lake), "PYTHONPATH": str(root)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split()[-1] == "1960-05-01"


def test_without_a_lake_the_ui_shows_only_the_current_month() -> None:
    from pipelines.registry import period_assets
    from rating_core.periods import period_of_date, utc_today

    keys = period_assets(None)[0].partitions_def.get_partition_keys()
    assert keys == [f"{period_of_date(utc_today())}-01"]


def test_default_period_assets_cover_every_ratable_month() -> None:
    from pipelines.registry import PERIOD_ASSETS

    assert PERIOD_ASSETS[0].partitions_def.get_first_partition_key() == "1850-01-01"


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
        return event.materialization.tags["dagster/data_version"]

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
    for asset in period_assets_of_the_lake():
        assert asset.backfill_policy == dg.BackfillPolicy.single_run(), asset.key


def period_assets_of_the_lake() -> list[dg.AssetsDefinition]:
    """The period assets as the runner binds them to a lake's partitions."""
    from pipelines.registry import period_assets

    return period_assets("2020-01")


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
    assert jobs == {"ingest_job", "lists_job"}
    repository = defs.get_repository_def()
    assert [s.name for s in repository.sensor_defs] == ["inbox_sensor"]
    assert [s.name for s in repository.schedule_defs] == ["lists_job_schedule"]
