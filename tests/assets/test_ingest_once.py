"""Each inbox file is read once (issue 31 item 1): an ingest step whose files are unchanged
since it ran neither reads them nor rewrites its table; a changed file replaces its rows, a
removed one removes them, and a step reading what another step wrote runs again when that
changed (`assets.ingest.Once`)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import dagster as dg
import pytest

from assets.ingest import (
    backgammon_matches,
    corrections,
    games,
    merges,
    moderation_decisions,
    players,
    starting_lists,
)
from assets.resources import PipelinePaths
from rating_core import tables
from rating_core.ingest import csv_games
from rating_core.lake import facts
from rating_core.lake.storage import read_table, table_file

PLAYERS_CSV = "player_id,name,is_bot\nu-a,Ayşe,false\nu-b,Bora,false\nbot-1,Bot,true\n"
MATCHES_CSV = (
    "match_id,ended_at,winner_id,loser_id,length,ranked\n"
    "m1,2026-01-04T12:00:00Z,u-a,u-b,3,true\n"
    "m2,2026-02-05T12:00:00Z,u-b,u-a,5,true\n"
)
OTHER_MATCHES_CSV = (
    "match_id,ended_at,winner_id,loser_id,length,ranked\nx1,2026-01-09T12:00:00Z,u-a,u-c,1,true\n"
)
GAMES_CSV = (
    "game_id,played_at,white_id,black_id,result,time_control,rated\n"
    "g1,2026-01-04T12:00:00Z,u-a,u-b,1-0,600+5,true\n"
)


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    folder = tmp_path / "inbox"
    (folder / "backgammon").mkdir(parents=True)
    (folder / "players.csv").write_text(PLAYERS_CSV, encoding="utf-8")
    (folder / "backgammon" / "a.csv").write_text(MATCHES_CSV, encoding="utf-8")
    (folder / "backgammon" / "b.csv").write_text(OTHER_MATCHES_CSV, encoding="utf-8")
    return folder


class Opened:
    """The inbox files a CSV reader opened (every CSV reader starts at `CsvChunks.tables`) and
    those hashed for their content (`facts.content_hash`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read: list[str] = []
        self.hashed: list[str] = []
        tables_of = csv_games.CsvChunks.tables
        hash_of = facts.content_hash

        def reading(chunks: csv_games.CsvChunks) -> Iterator[csv_games.CsvTable]:
            self.read.append(Path(chunks.path).name)
            return tables_of(chunks)

        def hashing(path: Path) -> bytes:
            self.hashed.append(Path(path).name)
            return hash_of(path)

        monkeypatch.setattr(csv_games.CsvChunks, "tables", reading)
        monkeypatch.setattr(facts, "content_hash", hashing)

    def clear(self) -> None:
        self.read.clear()
        self.hashed.clear()


def _run(
    inbox: Path, lake: Path, assets: Sequence[dg.AssetsDefinition]
) -> dg.ExecuteInProcessResult:
    result = dg.materialize(
        assets,
        resources={"paths": PipelinePaths(inbox=str(inbox), lake=str(lake))},
        instance=dg.DagsterInstance.ephemeral(),
        raise_on_error=True,
    )
    assert result.success
    return result


def _stamps(lake: Path, table: tables.LakeTable) -> dict[Path, str]:
    return {path: facts.file_stamp(path) for path in facts.table_files(lake, table)}


def _rows(lake: Path, table: tables.LakeTable, key: str) -> list[str]:
    return sorted(read_table(lake, table).collect().get_column(key).to_list())


def _metadata(result: dg.ExecuteInProcessResult, asset: dg.AssetsDefinition) -> dict:
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key == asset.key]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_unchanged_files_are_neither_read_nor_hashed_nor_written_again(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    opened = Opened(monkeypatch)
    first = _run(inbox, lake, [players, backgammon_matches])
    assert sorted(opened.read) == ["a.csv", "b.csv", "players.csv"]
    written = {**_stamps(lake, tables.PLAYERS), **_stamps(lake, tables.MATCHES)}
    opened.clear()
    again = _run(inbox, lake, [players, backgammon_matches])
    assert opened.read == [] and opened.hashed == []
    assert {**_stamps(lake, tables.PLAYERS), **_stamps(lake, tables.MATCHES)} == written
    for asset in (players, backgammon_matches):  # the same materialization, from the record
        assert _metadata(again, asset) == _metadata(first, asset)
    assert _rows(lake, tables.MATCHES, "match_id") == ["m1", "m2", "x1"]


def test_a_touched_file_is_hashed_but_not_read(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    _run(inbox, lake, [players, backgammon_matches])
    opened = Opened(monkeypatch)
    for path in (inbox / "players.csv", inbox / "backgammon" / "a.csv"):
        info = path.stat()
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))
    _run(inbox, lake, [players, backgammon_matches])
    assert opened.read == [] and sorted(opened.hashed) == ["a.csv", "players.csv"]
    opened.clear()
    _run(inbox, lake, [players, backgammon_matches])  # the new stamps were recorded
    assert opened.hashed == []


def test_a_changed_file_replaces_its_rows(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    _run(inbox, lake, [players, backgammon_matches])
    opened = Opened(monkeypatch)
    (inbox / "players.csv").write_text(PLAYERS_CSV + "u-c,Cem,false\n", encoding="utf-8")
    (inbox / "backgammon" / "a.csv").write_text(MATCHES_CSV.replace("m2,", "m3,"), encoding="utf-8")
    _run(inbox, lake, [players, backgammon_matches])
    assert "players.csv" in opened.read and "a.csv" in opened.read
    assert _rows(lake, tables.PLAYERS, "player_id") == ["bot-1", "u-a", "u-b", "u-c"]
    assert _rows(lake, tables.MATCHES, "match_id") == ["m1", "m3", "x1"]


def test_a_removed_file_removes_its_rows(inbox: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _run(inbox, lake, [players, backgammon_matches])
    (inbox / "backgammon" / "a.csv").unlink()
    (inbox / "players.csv").unlink()
    _run(inbox, lake, [players, backgammon_matches])
    assert _rows(lake, tables.MATCHES, "match_id") == ["x1"]
    assert _rows(lake, tables.PLAYERS, "player_id") == []
    summary = read_table(lake, tables.INGEST_SUMMARY).collect()
    assert "backgammon/a.csv" not in summary.get_column("source_file").to_list()


def test_a_lake_table_changed_behind_the_step_is_written_again(inbox: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _run(inbox, lake, [players])
    table_file(lake, tables.PLAYERS).unlink()  # the record's stamps no longer hold
    _run(inbox, lake, [players])
    assert _rows(lake, tables.PLAYERS, "player_id") == ["bot-1", "u-a", "u-b"]


def test_a_decision_is_checked_again_when_the_games_change(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The moderation decisions did not change, but the game they name arrived: read again."""
    lake = tmp_path / "lake"
    (inbox / "platform" / "moderation").mkdir(parents=True)
    (inbox / "platform" / "moderation" / "d.csv").write_text(
        "game_id,decided_at,decision,reason\ng1,2026-01-05T00:00:00Z,annul,engine\n",
        encoding="utf-8",
    )
    steps = [players, games, moderation_decisions]
    _run(inbox, lake, steps)
    assert _rows(lake, tables.MODERATION, "game_id") == []  # no game g1 yet
    opened = Opened(monkeypatch)
    _run(inbox, lake, steps)
    assert "d.csv" not in opened.read
    (inbox / "platform" / "games.csv").write_text(GAMES_CSV, encoding="utf-8")
    _run(inbox, lake, steps)
    assert "d.csv" in opened.read
    assert _rows(lake, tables.MODERATION, "game_id") == ["g1"]


def test_merges_and_lists_are_made_again_when_the_registry_changes(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merge needs one of its ids in a game, a list or the registry; the registry's new
    player makes the unchanged merges file's merge land."""
    lake = tmp_path / "lake"
    (inbox / "federation").mkdir()
    (inbox / "federation" / "merges.csv").write_text(
        "keep_id,merge_id,decided_at,reason\nu-a,u-b,2026-01-10,same person\n", encoding="utf-8"
    )
    (inbox / "players.csv").write_text("player_id,name\nu-q,Q\n", encoding="utf-8")
    steps = [players, games, starting_lists, corrections, merges]
    _run(inbox, lake, steps)
    assert _rows(lake, tables.MERGES, "keep_id") == []
    opened = Opened(monkeypatch)
    _run(inbox, lake, steps)
    assert opened.read == []
    (inbox / "players.csv").write_text(PLAYERS_CSV, encoding="utf-8")
    _run(inbox, lake, steps)
    assert sorted(opened.read) == ["merges.csv", "players.csv"]
    assert _rows(lake, tables.MERGES, "keep_id") == ["u-a"]


def test_the_command_lines_check_of_merge_chains_skips_an_ingested_unchanged_file(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rating_core.ingest.inbox import check_merge_chains

    lake = tmp_path / "lake"
    merges_csv = inbox / "federation" / "merges.csv"
    merges_csv.parent.mkdir()
    merges_csv.write_text("keep_id,merge_id,decided_at,reason\nu-a,u-b,2026-01-10,same\n")
    _run(inbox, lake, [players, games, starting_lists, merges])

    def checked(path: Path) -> bool:
        return facts.unchanged(lake, path.absolute())

    opened = Opened(monkeypatch)
    check_merge_chains(inbox, checked)
    assert opened.read == []
    merges_csv.write_text("keep_id,merge_id,decided_at,reason\nu-a,u-b,2026-01-10,same person\n")
    check_merge_chains(inbox, checked)
    assert opened.read == ["merges.csv"]
