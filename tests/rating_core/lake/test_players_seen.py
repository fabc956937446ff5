"""The run summary's player counts from the players the ingest kept per file group
(`rating_core.lake.players_seen`): always those of a direct count over the games table, through
changed and removed files, and without reading the games again (issue 31 item 8)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rating_core import tables
from rating_core.ingest import pgn_stream
from rating_core.lake import facts, ingest_store, players_seen
from rating_core.lake.storage import read_table, table_dir, table_file, write_table
from rating_core.schemas import PLAYERS_SCHEMA
from tests.support.pgn_text import blitz_game, write_pgn

SAMPLES = Path(__file__).resolve().parents[3] / "data_samples"


def _direct(lake: Path) -> tuple[int, int, int]:
    """Seen, not registered, and of those identified by name only, counted over every game of
    the table by the ids' text (not their hashes)."""
    games = read_table(lake, tables.GAMES).collect()
    registry: set[str] = set()
    if table_file(lake, tables.PLAYERS).is_file():
        ids = read_table(lake, tables.PLAYERS).collect().get_column("player_id")
        registry = set(ids.cast(pl.String).to_list())
    seen: set[str] = set()
    by_name: set[str] = set()
    for side in ("white", "black"):
        for player, name in games.select(f"{side}_id", f"{side}_name").iter_rows():
            if player is None:
                continue
            seen.add(player)
            if player == name:
                by_name.add(player)
    missing = seen - registry
    return len(seen), len(missing), len(missing & by_name)


def _inbox(tmp_path: Path) -> Path:
    """The samples' game files (platform CSV and PGN, federation, a club: ids given with names,
    without, and as the name only) and two more PGN files sharing players."""
    inbox = tmp_path / "inbox"
    for folder in ("platform", "federation", "clubs"):
        shutil.copytree(SAMPLES / folder, inbox / folder)
    write_pgn(
        inbox / "platform" / "may.pgn", [blitz_game(i, f"w{i % 7}", f"b{i % 5}") for i in range(30)]
    )
    write_pgn(
        inbox / "platform" / "june.pgn",
        [blitz_game(100 + i, f"w{i % 3}", "solo") for i in range(9)],
    )
    return inbox


def _registry(ids: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"player_id": ids}).select(
        pl.col("player_id") if name == "player_id" else pl.lit(None, dtype).alias(name)
        for name, dtype in PLAYERS_SCHEMA.items()
    )


def _check(lake: Path) -> tuple[int, int, int]:
    direct = _direct(lake)
    assert players_seen.count(lake) == direct
    assert players_seen.counts(lake) == direct  # recorded, or counted again when stale
    return direct


def test_the_counts_are_a_direct_count_through_changed_and_removed_files(tmp_path: Path) -> None:
    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    ingest_store.ingest_games(inbox, lake)
    first = _check(lake)
    assert first[0] > 50 and first[2] > 0  # players identified by name only among them

    write_pgn(
        inbox / "platform" / "june.pgn", [blitz_game(200 + i, "w1", f"new{i}") for i in range(4)]
    )
    ingest_store.ingest_games(inbox, lake)
    changed = _check(lake)
    assert changed[0] == first[0] - 1 + 4  # solo gone (w0-w2 are in may.pgn), new0-3 came

    (inbox / "platform" / "may.pgn").unlink()
    outcome = ingest_store.ingest_games(inbox, lake)
    assert len(outcome.removed) == 1
    removed = _check(lake)
    assert removed[0] == changed[0] - 12 + 1  # w0-w6 and b0-b4 gone, w1 still in june.pgn
    gone = table_dir(lake, tables.INGEST_PLAYERS) / f"{tables.GROUP}={outcome.removed[0]}"
    assert not gone.exists()

    write_table(lake, tables.PLAYERS, _registry(["w1", "new0", "u-emre", "nobody"]))
    registered = _check(lake)
    assert registered[0] == removed[0] and registered[1] < removed[1]


def test_the_counts_read_no_games_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every games file is made unreadable after the ingest, and every file hashed or scanned
    is noted: the counts come from the groups' player sets alone."""
    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    ingest_store.ingest_games(inbox, lake)
    write_table(lake, tables.PLAYERS, _registry(["w1", "u-emre"]))
    expected = _direct(lake)
    games = facts.table_files(lake, tables.GAMES)
    assert len(games) > 4
    for path in games:
        path.write_bytes(b"not a Parquet file")
    touched: list[Path] = []
    real_hash, real_scan = facts.content_hash, pl.scan_parquet

    def hashed(path: Path) -> bytes:
        touched.append(path)
        return real_hash(path)

    def scan(source: str | Path, *args: Any, **kwargs: Any) -> pl.LazyFrame:
        touched.append(Path(source))
        return real_scan(source, *args, **kwargs)

    monkeypatch.setattr(facts, "content_hash", hashed)

    monkeypatch.setattr(pl, "scan_parquet", scan)
    assert players_seen.counts(lake) == expected
    assert touched and not [p for p in touched if table_dir(lake, tables.GAMES) in p.parents]


def test_games_files_without_their_groups_players_are_read(tmp_path: Path) -> None:
    """A lake written before the sets were kept: the files of a group without one are read (only
    those), beside the other groups' sets."""
    inbox, lake = _inbox(tmp_path), tmp_path / "lake"
    ingest_store.ingest_games(inbox, lake)
    expected = _check(lake)
    folder = table_dir(lake, tables.INGEST_PLAYERS)
    lost = sorted(folder.iterdir())[0]
    shutil.rmtree(lost)
    sets, games = players_seen.group_sets(lake)
    group = lost.name.removeprefix(f"{tables.GROUP}=")
    assert games and {path.name for path in games} == {f"part-{group}.parquet"}
    assert len(sets) == len(list(folder.iterdir()))
    assert players_seen.counts(lake) == expected
    shutil.rmtree(folder)
    assert players_seen.counts(lake) == expected


def test_a_file_read_in_many_windows_keeps_each_player_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pgn_stream, "WINDOW_BYTES", 600)  # a window or two a game
    monkeypatch.setattr(ingest_store, "_PLAYER_SIDES_REDUCED_ABOVE", 10)  # reduced often
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    write_pgn(
        inbox / "platform" / "big.pgn",
        [blitz_game(i, f"w{i % 11}", f"b{i % 13}") for i in range(60)],
    )
    ingest_store.ingest_games(inbox, lake)
    kept = read_table(lake, tables.INGEST_PLAYERS).collect()
    assert kept.height == 24 and kept.get_column("key").is_sorted()
    assert _check(lake) == (24, 24, 24)
