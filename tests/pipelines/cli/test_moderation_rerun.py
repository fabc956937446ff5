"""End to end: a moderation rerun publishes what a run with the decision from the start publishes.

The rerun reuses what it can of the lake (the ingest, the parents' lists it compares with);
whatever it reuses, its latest versions and its tables hold exactly what a new lake computed
from the same inbox holds, and the lists it did not need to change keep their version.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.storage import read_table
from tests.support.inbox import ratings
from tests.support.moderation import annul, sample_blitz_game

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _latest_lists(lake: Path) -> dict[tuple[str, str], tuple[pl.DataFrame, bytes]]:
    """Every list and period: the latest version's rows (without its number) and CSV bytes."""
    latest = {}
    for name, period, version in publish.current_versions(lake).iter_rows():
        folder = publish.version_dir(lake, name, period, version)
        rows = publish.read_list(lake, name, period, version).drop("version")
        latest[(name, period)] = (rows, (folder / publish.CSV_FILE).read_bytes())
    return latest


def _site_table(lake: Path, table: tables.LakeTable, keys: list[str]) -> pl.DataFrame:
    return read_table(lake, table).collect().sort(keys)


def test_a_moderation_rerun_publishes_what_a_new_run_with_the_decision_publishes(
    tmp_path: Path, samples: Path
) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(samples, inbox)
    lake = tmp_path / "lake"
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    before = publish.current_versions(lake)
    game_id = str(sample_blitz_game(lake, by=("played_at", "game_id"))["game_id"])
    annul(inbox, game_id)
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))

    fresh_inbox = tmp_path / "fresh-inbox"
    shutil.copytree(samples, fresh_inbox)
    annul(fresh_inbox, game_id)
    fresh = tmp_path / "fresh-lake"
    ratings("run", "--inbox", str(fresh_inbox), "--lake", str(fresh))

    rerun_lists, fresh_lists = _latest_lists(lake), _latest_lists(fresh)
    assert rerun_lists.keys() == fresh_lists.keys()
    for key, (rows, text) in rerun_lists.items():
        assert rows.equals(fresh_lists[key][0]), key
        assert text == fresh_lists[key][1], key

    history = tables.history("site")
    keys = ["period", "game_id", "player_id", "number"]
    assert _site_table(lake, history, keys).equals(_site_table(fresh, history, keys))
    state = tables.state("site")
    keys = ["period", "player_id", "number"]
    assert _site_table(lake, state, keys).equals(_site_table(fresh, state, keys))

    # a version only where the content changed: new ones in site lists from 2026-03 on, each
    # with a diff naming the decision; every other list and period kept its version
    after = publish.current_versions(lake).join(
        before.rename({"version": "before"}), on=["list", "period"], how="left"
    )
    bumped = after.filter(pl.col("version") != pl.col("before"))
    assert bumped.height > 0 and (bumped["version"] == bumped["before"] + 1).all()
    assert all(name.startswith("site-") for name in bumped["list"].to_list())
    assert bumped["period"].min() == "2026-03"
    assert after.filter(pl.col("list") == "site-classical")["version"].max() == 1
    for name, period, version in bumped.select("list", "period", "version").iter_rows():
        diff = publish.read_diff(lake, name, period, version)
        assert diff.height > 0
        parent = publish.read_list(lake, name, period, version - 1)
        assert not parent.drop("version").equals(rerun_lists[(name, period)][0])
