"""Tests of the ingest store: each inbox file group read once, streamed into the lake, and the
games table always what a reading of the whole inbox gives (issue 31 items 1, 2 and 6)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from rating_core.ingest import pgn_stream
from rating_core.ingest.inbox import ingest_games as read_whole_inbox
from rating_core.lake import ingest_store, players_seen
from rating_core.lake.storage import read_table
from rating_core.names import player_names
from rating_core.schemas import PLAYERS_SCHEMA, conform
from tests.support.pgn_text import blitz_game, write_pgn


def _inbox(tmp_path: Path) -> Path:
    inbox = tmp_path / "inbox"
    write_pgn(inbox / "platform" / "may.pgn", [blitz_game(i) for i in range(30)])
    write_pgn(inbox / "platform" / "june.pgn", [blitz_game(100 + i, day=2) for i in range(20)])
    federation = inbox / "federation"
    federation.mkdir(parents=True)
    (federation / "open.csv").write_text(
        "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"
        "t1,open,1,2025-05-03,a,b,1-0,standard\nt2,open,2,2025-05-04,b,a,0-1,standard\n"
    )
    return inbox


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(pl.all(), nulls_last=True)


def _check_like_whole_inbox(inbox: Path, lake: Path) -> None:
    """The lake's games, quarantine and names equal a reading of the whole inbox."""
    whole = read_whole_inbox(inbox)
    games = read_table(lake, tables.GAMES).collect().select(whole.rows.columns)
    assert _sorted(games).equals(_sorted(whole.rows.select(games.columns)))
    quarantine = read_table(lake, tables.QUARANTINE).collect().drop(tables.SOURCE)
    assert _sorted(quarantine).equals(_sorted(whole.quarantine))
    names = ingest_store.player_first_names(lake)
    from rating_core.names import names_from

    empty_registry = pl.DataFrame(schema={"player_id": pl.String, "name": pl.String})
    assert (
        names_from(empty_registry, names)
        .sort("player_id")
        .equals(player_names(empty_registry, whole.rows).sort("player_id"))
    )
    ids = [whole.rows.get_column(f"{side}_id") for side in ("white", "black")]
    by_name = [
        whole.rows.filter(pl.col(f"{side}_id") == pl.col(f"{side}_name")).get_column(f"{side}_id")
        for side in ("white", "black")
    ]
    seen, named = pl.concat(ids).drop_nulls().n_unique(), pl.concat(by_name).n_unique()
    assert players_seen.count(lake) == (seen, seen, named)  # the summary's, from the groups' sets


def test_a_second_run_reads_nothing_and_keeps_the_table(tmp_path: Path) -> None:
    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    first = ingest_store.ingest_games(inbox, lake)
    assert len(first.read) == 3 and first.games == 52
    _check_like_whole_inbox(inbox, lake)
    again = ingest_store.ingest_games(inbox, lake)
    assert again.read == [] and again.removed == [] and not again.changed
    assert again.digest == first.digest
    assert again.files.equals(first.files)
    _check_like_whole_inbox(inbox, lake)


def test_an_unchanged_file_is_not_read_even_when_touched(tmp_path: Path, monkeypatch) -> None:
    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    ingest_store.ingest_games(inbox, lake)
    june = inbox / "platform" / "june.pgn"
    os.utime(june, ns=(1, 1))  # a new modification time, the same bytes: hashed, not read
    opened: list[str] = []
    real = pgn_stream.open_stream

    def spy(path, label, *args):
        opened.append(label)
        return real(path, label, *args)

    monkeypatch.setattr(pgn_stream, "open_stream", spy)
    outcome = ingest_store.ingest_games(inbox, lake)
    assert outcome.read == [] and opened == []
    stamps = read_table(lake, tables.INGEST_FILES).collect()  # not hashed again next time
    assert stamps.filter(pl.col("file") == "platform/june.pgn").get_column("mtime_ns").item() == 1


def test_a_changed_file_replaces_exactly_its_own_games(tmp_path: Path) -> None:
    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    ingest_store.ingest_games(inbox, lake)
    write_pgn(inbox / "platform" / "june.pgn", [blitz_game(100 + i, day=2) for i in range(5)])
    outcome = ingest_store.ingest_games(inbox, lake)
    assert [key for key in outcome.read] == [key for key in outcome.read if "june" in key] and len(
        outcome.read
    ) == 1
    assert outcome.games == 30 + 5 + 2
    _check_like_whole_inbox(inbox, lake)


def test_a_removed_file_removes_its_games(tmp_path: Path) -> None:
    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    ingest_store.ingest_games(inbox, lake)
    (inbox / "platform" / "may.pgn").unlink()
    outcome = ingest_store.ingest_games(inbox, lake)
    assert outcome.read == [] and len(outcome.removed) == 1
    assert outcome.games == 22
    _check_like_whole_inbox(inbox, lake)
    assert not list((lake / "games").glob(f"*/part-{outcome.removed[0]}.parquet"))


def test_a_game_id_seen_in_an_earlier_file_is_quarantined_as_the_whole_inbox_would(
    tmp_path: Path,
) -> None:
    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    ingest_store.ingest_games(inbox, lake)
    # a file sorting after may.pgn repeats one of its games, and one of june's
    write_pgn(
        inbox / "platform" / "mixed.pgn",
        [blitz_game(500, gid="g0000003"), blitz_game(501), blitz_game(502, gid="g0000105")],
    )
    outcome = ingest_store.ingest_games(inbox, lake)
    reasons = read_table(lake, tables.QUARANTINE).collect().get_column("reason").to_list()
    assert "game id 'g0000003' appears again (first in platform/may.pgn line 34)" in reasons
    _check_like_whole_inbox(inbox, lake)
    # the file the ids are kept in goes away: the later file's records are read again and land
    (inbox / "platform" / "june.pgn").unlink()
    outcome = ingest_store.ingest_games(inbox, lake)
    assert any("mixed" in key for key in outcome.read)
    _check_like_whole_inbox(inbox, lake)
    assert "g0000105" in read_table(lake, tables.GAMES).collect().get_column("game_id").to_list()
    assert ingest_store.duplicate_game_ids(lake) == 0


def test_a_new_earlier_file_takes_the_ids_from_a_later_one(tmp_path: Path) -> None:
    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    ingest_store.ingest_games(inbox, lake)
    write_pgn(
        inbox / "platform" / "april.pgn", [blitz_game(900, gid="g0000104")]
    )  # sorts before june
    outcome = ingest_store.ingest_games(inbox, lake)
    assert any("april" in key for key in outcome.read) and any("june" in k for k in outcome.read)
    _check_like_whole_inbox(inbox, lake)


def test_ids_repeated_across_windows_of_one_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(pgn_stream, "WINDOW_BYTES", 600)
    from rating_core.ingest import inbox as inbox_module

    readings: list[frozenset[int]] = []
    real = inbox_module.pgn_windows

    def counted(*args, **kwargs):
        readings.append(kwargs.get("repeated", frozenset()))
        return real(*args, **kwargs)

    monkeypatch.setattr(inbox_module, "pgn_windows", counted)
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    write_pgn(
        inbox / "platform" / "big.pgn",
        [blitz_game(i) for i in range(40)] + [blitz_game(77, gid="g0000002")] + [blitz_game(41)],
    )
    ingest_store.ingest_games(inbox, lake)
    reasons = read_table(lake, tables.QUARANTINE).collect().get_column("reason").to_list()
    assert reasons == ["game id 'g0000002' already appears at line 23"]
    assert [len(ids) for ids in readings] == [0, 1]  # found across windows: read again with it
    _check_like_whole_inbox(inbox, lake)


def _reasons(lake: Path) -> list[tuple[str, int]]:
    quarantine = read_table(lake, tables.QUARANTINE).collect()
    return quarantine.get_column("reason").value_counts(sort=True).sort("count", "reason").rows()


@pytest.mark.parametrize("window", [2000, 5000])
def test_many_repeats_across_many_windows_name_the_files_first_copy(
    tmp_path: Path, monkeypatch, window: int
) -> None:
    """The audit's file: 60 copies of one game, each window's own first copy was named."""
    monkeypatch.setattr(pgn_stream, "WINDOW_BYTES", window)
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    mixed = [
        game
        for i in range(40)
        for game in (blitz_game(200 + i, gid=f"g000000{7 + i % 2}"), blitz_game(300 + i))
    ]
    write_pgn(inbox / "platform" / "big.pgn", [blitz_game(1) for _ in range(60)] + mixed)
    ingest_store.ingest_games(inbox, lake)
    assert _reasons(lake) == [
        ("game id 'g0000007' already appears at line 661", 19),
        ("game id 'g0000008' already appears at line 683", 19),
        ("game id 'g0000001' already appears at line 1", 59),
    ]
    _check_like_whole_inbox(inbox, lake)


def test_repeats_across_windows_of_two_files_name_what_the_whole_inbox_names(
    tmp_path: Path, monkeypatch
) -> None:
    """An id the first file holds, repeated in every window of the second: the second file's
    first copy names the first file's record, its later copies its own first copy."""
    monkeypatch.setattr(pgn_stream, "WINDOW_BYTES", 2000)
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    write_pgn(inbox / "platform" / "a.pgn", [blitz_game(i) for i in range(5)])
    spread = [
        game
        for i in range(30)
        for game in (blitz_game(400 + i, gid="g0000003"), blitz_game(600 + i))
    ]
    write_pgn(inbox / "platform" / "b.pgn", [blitz_game(500 + i) for i in range(3)] + spread)
    ingest_store.ingest_games(inbox, lake)
    assert _reasons(lake) == [
        ("game id 'g0000003' appears again (first in platform/a.pgn line 34)", 1),
        ("game id 'g0000003' already appears at line 34", 29),
    ]
    _check_like_whole_inbox(inbox, lake)


def test_a_federation_file_change_reads_its_folder_again(tmp_path: Path) -> None:
    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    ingest_store.ingest_games(inbox, lake)
    with (inbox / "federation" / "open.csv").open("a") as handle:
        handle.write("t3,open,3,2025-05-05,a,c,1/2-1/2,standard\n")
    outcome = ingest_store.ingest_games(inbox, lake)
    assert len(outcome.read) == 1 and outcome.read[0].startswith("b-")
    _check_like_whole_inbox(inbox, lake)


def test_a_game_dated_after_today_is_read_again_on_a_later_day(tmp_path: Path) -> None:
    from datetime import date

    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    write_pgn(inbox / "platform" / "p.pgn", [blitz_game(1, day=1), blitz_game(2, day=20)])
    first = ingest_store.ingest_games(inbox, lake, today=date(2025, 5, 10))
    assert first.games == 1 and first.quarantined == 1
    later = ingest_store.ingest_games(inbox, lake, today=date(2025, 6, 1))
    assert later.read and later.games == 2 and later.quarantined == 0


def test_a_lake_of_the_whole_table_layout_is_read_again_whole(tmp_path: Path) -> None:
    from rating_core.lake.storage import write_partitioned

    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    stale = read_whole_inbox(inbox).rows.head(3).with_columns(pl.lit("x").alias("game_id"))
    write_partitioned(lake, tables.GAMES, stale)  # as an earlier version wrote the table
    ingest_store.ingest_games(inbox, lake)
    _check_like_whole_inbox(inbox, lake)


def test_a_truncated_archive_leaves_the_lake_as_it_was(tmp_path: Path) -> None:
    import gzip

    from rating_core.ingest.common import UnreadableFileError

    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    ingest_store.ingest_games(inbox, lake)
    before = read_table(lake, tables.GAMES).collect()
    data = gzip.compress("".join(blitz_game(300 + i) for i in range(50)).encode())
    (inbox / "platform" / "cut.pgn.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(UnreadableFileError, match="cut.pgn.gz: truncated or corrupt gzip"):
        ingest_store.ingest_games(inbox, lake)
    assert _sorted(read_table(lake, tables.GAMES).collect()).equals(_sorted(before))
    assert not [p for p in lake.rglob("*") if ".tmp-" in p.name]
    (inbox / "platform" / "cut.pgn.gz").unlink()
    assert not ingest_store.ingest_games(inbox, lake).changed
    shutil.rmtree(lake)


def test_player_names_are_written_again_only_when_their_inputs_change(tmp_path: Path) -> None:
    from rating_core.lake.storage import write_table

    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    registry = conform(pl.DataFrame({"player_id": ["w1"], "name": ["Wanda One"]}), PLAYERS_SCHEMA)
    write_table(lake, tables.PLAYERS, registry)
    outcome = ingest_store.ingest_games(inbox, lake, registry)
    assert ingest_store.refresh_player_names(lake, registry, outcome)
    names = read_table(lake, tables.PLAYER_NAMES).collect()
    assert names.filter(pl.col("player_id") == "w1").get_column("name").item() == "Wanda One"
    assert names.sort("player_id").equals(
        player_names(registry, read_whole_inbox(inbox).rows).sort("player_id")
    )
    again = ingest_store.ingest_games(inbox, lake, registry)
    assert not ingest_store.refresh_player_names(lake, registry, again)
    renamed = registry.with_columns(pl.lit("Wanda Two").alias("name"))
    write_table(lake, tables.PLAYERS, renamed)
    assert ingest_store.refresh_player_names(lake, renamed, again)
    names = read_table(lake, tables.PLAYER_NAMES).collect()
    assert names.filter(pl.col("player_id") == "w1").get_column("name").item() == "Wanda Two"
