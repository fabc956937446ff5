"""A pipeline run classifies each platform game once (issue 33 item 2): the ingest classifies
and quarantines, the rating reads the decisions kept with the games. The lake it writes is the
lake the rating wrote when it classified every game again, also after a moderation decision
(the games are not read again) and a registry change (they are)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import assets.platform
from pipelines.cli.run import run_pipeline
from rating_core import tables
from rating_core.lake.storage import read_table
from rating_core.systems.site import classification
from rating_core.systems.site.classification import SITE_GAME_COLUMNS, SITE_VERDICT_COLUMNS
from rating_core.systems.site.rules import Rejection

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SAMPLES = Path(__file__).parents[2] / "data_samples"
COMPARED = (
    tables.QUARANTINE,
    tables.history("site"),
    tables.excluded("site"),
    tables.state("site"),
    tables.list_rows("site"),
)


def _table(lake: Path, table: tables.LakeTable) -> pl.DataFrame:
    frame = read_table(lake, table).collect()
    frame = frame.drop([c for c in frame.columns if c.startswith("_")])
    return frame.sort(frame.columns, nulls_last=True)


def _published(lake: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(lake)): path.read_bytes()
        for path in sorted((lake / "lists").rglob("list.csv"))
        if "site-" in str(path)
    }


def _games_files(lake: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in sorted((lake / "games").rglob("*.parquet"))}


def _run(
    inbox: Path, once: Path, again: Path, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[str, int]]:
    """Run the pipeline into `once` (recording each record the kernel classifies) and into
    `again` as before: the rating reads the lake without the decisions and classifies every
    game again. Both lakes must hold the same tables and lists."""
    records: list[tuple[str, int]] = []
    kernel = classification._kernel_decisions

    def counting(g: pl.DataFrame, *args: Any) -> Any:
        records.extend(g.select("source_file", "source_line").iter_rows())
        return kernel(g, *args)

    with monkeypatch.context() as patch:
        patch.setattr(classification, "_kernel_decisions", counting)
        assert run_pipeline(inbox, once).ok
    with monkeypatch.context() as patch:
        patch.setattr(assets.platform, "SITE_RATED_COLUMNS", SITE_GAME_COLUMNS)
        assert run_pipeline(inbox, again).ok
    for table in COMPARED:
        assert _table(once, table).equals(_table(again, table)), table.name
    assert _published(once) == _published(again)
    assert len(_published(once)) > 5
    return records


def test_each_game_is_classified_once_and_the_lake_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLES, inbox)
    once, again = tmp_path / "once", tmp_path / "again"

    records = _run(inbox, once, again, monkeypatch)
    games = read_table(once, tables.GAMES).filter(pl.col("source") == "platform").collect()
    quarantine = read_table(once, tables.QUARANTINE).collect()
    rejected = quarantine.filter(pl.col("reason").is_in([r.text() for r in Rejection]))
    assert rejected.height > 0 and games.height > 200
    assert len(records) == len(set(records))  # no record classified twice
    assert set(records) == set(games.select("source_file", "source_line").iter_rows()) | set(
        rejected.select("source_file", "line").iter_rows()
    )
    assert games.select(SITE_VERDICT_COLUMNS[:3]).null_count().sum_horizontal().item() == 0

    # a moderation decision after ingest: the games are not read again, nor classified
    annulled = (
        read_table(once, tables.history("site"))
        .filter(pl.col("period") == "2026-02")
        .select("game_id")
        .collect()
        .get_column("game_id")[0]
    )
    decisions = inbox / "platform" / "moderation" / "decisions-2026-04.csv"
    decisions.write_text(decisions.read_text() + f"{annulled},2026-04-07T10:00:00Z,annul,cheat\n")
    files = _games_files(once)
    records = _run(inbox, once, again, monkeypatch)
    assert records == [] and _games_files(once) == files
    excluded = read_table(once, tables.excluded("site")).collect()
    assert excluded.filter(pl.col("game_id") == annulled)["reason"].to_list() == [
        "annulled by moderation"
    ]

    # the registry gives the unrated bot a rating: its games are read and classified again
    players = inbox / "players.csv"
    players.write_text(
        players.read_text().replace(
            "bot-master,Master Bot,,,,,,true,,", "bot-master,Master Bot,,,,,,true,2300,"
        )
    )
    records = _run(inbox, once, again, monkeypatch)
    assert len(records) == len(set(records)) and len(records) > 200
    history = read_table(once, tables.history("site")).collect()
    assert "bot-master" in history.get_column("opponent_id").to_list()
