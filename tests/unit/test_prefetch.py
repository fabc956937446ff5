"""Reading platform PGN files ahead (`rating_core.ingest.prefetch`): the ingest takes exactly what
it would have read, and reads again whatever changed or failed."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from rating_core.ingest import prefetch
from rating_core.ingest.inbox import ingest_games, platform_pgn_files
from rating_core.ingest.pgn import read_pgn
from rating_core.ingest.pgn_synth import generate_pgn


@pytest.fixture(autouse=True)
def _nothing_pending():
    prefetch.forget_prefetched()
    yield
    prefetch.forget_prefetched()


def _inbox(tmp_path: Path, games: int = 40) -> tuple[Path, Path]:
    inbox = tmp_path / "inbox"
    path = inbox / "platform" / "games.pgn"
    path.parent.mkdir(parents=True)
    generate_pgn(path, games, seed=3, n_players=12, n_months=2, first_month="2026-01")
    return inbox, path


def test_a_prefetched_file_is_what_read_pgn_reads(tmp_path: Path) -> None:
    inbox, path = _inbox(tmp_path)
    (inbox / "platform" / "notes.txt").write_text("not a game file")
    assert prefetch.prefetch(platform_pgn_files(inbox)) == 1
    taken = prefetch.take_prefetched(path, "platform/games.pgn")
    assert taken is not None
    direct = read_pgn(path, "platform/games.pgn")
    assert taken.rows.equals(direct.rows) and taken.quarantine.equals(direct.quarantine)
    assert taken.notes == direct.notes
    assert prefetch.take_prefetched(path, "platform/games.pgn") is None  # taken once


def test_a_file_changed_after_it_was_read_ahead_is_read_again(tmp_path: Path) -> None:
    inbox, path = _inbox(tmp_path)
    prefetch.prefetch(platform_pgn_files(inbox))
    prefetch._pending[(path.resolve(), "platform/games.pgn")][1].result()  # read ahead, done
    generate_pgn(path, 7, seed=4, n_players=5, n_months=1, first_month="2026-03")
    os.utime(path, ns=(1, 1))  # another content, another modification time
    assert prefetch.take_prefetched(path, "platform/games.pgn") is None
    batch = ingest_games(inbox)
    assert batch.rows.height == read_pgn(path, "platform/games.pgn").rows.height <= 7


def test_a_read_ahead_that_failed_leaves_the_error_to_the_ingest(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    path = inbox / "platform" / "broken.pgn.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not gzip at all")
    prefetch.prefetch(platform_pgn_files(inbox))
    assert prefetch.take_prefetched(path, "platform/broken.pgn.gz") is None
    with pytest.raises(Exception, match="broken.pgn.gz"):
        ingest_games(inbox)


def test_the_ingest_of_a_prefetched_inbox_equals_the_ingest_without(tmp_path: Path) -> None:
    inbox, _ = _inbox(tmp_path, games=300)
    without = ingest_games(inbox)
    prefetch.prefetch(platform_pgn_files(inbox))
    with_prefetch = ingest_games(inbox)
    assert not prefetch._pending  # taken, or forgotten once the ingest is done
    for name in ("rows", "quarantine", "files"):
        assert getattr(with_prefetch, name).equals(getattr(without, name)), name
    assert with_prefetch.notes == without.notes
    assert isinstance(with_prefetch.rows, pl.DataFrame)


def test_the_files_read_ahead_are_the_platform_pgn_files_the_ingest_reads(tmp_path: Path) -> None:
    inbox, path = _inbox(tmp_path)
    (inbox / "platform" / "games.csv").write_text("game_id\n")
    (inbox / "federation").mkdir()
    (inbox / "federation" / "open.pgn").write_text("")
    assert platform_pgn_files(inbox) == [(path, "platform/games.pgn")]
