"""The backgammon match files streamed into the lake a chunk at a time (issue 31 item 2): the
matches table and its quarantine hold what a whole reading of the files gives."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from rating_core.budget import MemoryBudget
from rating_core.ingest import csv_games
from rating_core.ingest.inbox import ingest_backgammon
from rating_core.lake import ingest_store
from rating_core.lake.storage import read_table, table_partitions
from rating_core.progress import Progress, listening

HEADER = "match_id,ended_at,winner_id,loser_id,length,ranked,vs_ai\n"
TODAY = date(2026, 6, 30)


def _match(match_id: str, day: str = "2026-01-04", length: str = "3") -> str:
    return f"{match_id},{day}T12:00:00Z,u-a,u-b,{length},true,false\n"


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(pl.all(), nulls_last=True)


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    folder = tmp_path / "inbox" / "backgammon"
    folder.mkdir(parents=True)
    rows = [_match(f"m{i}", f"2026-0{1 + i % 3}-04") for i in range(10)]
    rows[2] = _match("m2", length="0")  # a bad length
    rows[5] = _match("m5", day="2026-07-01")  # after today
    rows.append(_match("m1"))  # repeated in a later chunk
    rows.append(_match("m9"))  # repeated in the same chunk as its first record
    (folder / "a.csv").write_text(HEADER + "".join(rows))
    (folder / "b.csv").write_text(HEADER + _match("x1", "2026-02-10") + "x2,bad,u-a,u-b,1,true,\n")
    return tmp_path / "inbox"


def test_the_store_streams_the_match_files_and_keeps_what_a_whole_reading_keeps(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    chunks: list[int] = []
    real = csv_games.CsvChunks.tables

    def counted(reading: csv_games.CsvChunks) -> Iterator[csv_games.CsvTable]:
        for table in real(reading):
            chunks.append(table.frame.height)
            yield table

    monkeypatch.setattr(csv_games.CsvChunks, "tables", counted)
    monkeypatch.setattr(MemoryBudget, "csv_rows", property(lambda self: 4))
    reports: list[Progress] = []
    with listening(reports.append):
        outcome = ingest_store.ingest_matches(inbox, lake, MemoryBudget(), TODAY)
    # a.csv's 13 lines with its header, 4 at a time, then b.csv's 3 lines, all read twice:
    # a.csv's repeats across chunks are found first
    assert chunks == [3, 4, 4, 1, 2] * 2
    finished = [(r.label, r.done, r.games) for r in reports if r.finished]
    assert finished[-2:] == [("backgammon/a.csv", 13, 8), ("backgammon/b.csv", 3, 1)]
    assert (outcome.matches, outcome.quarantined, outcome.recheck) == (9, 5, True)
    whole = ingest_backgammon(inbox, TODAY)
    matches = read_table(lake, tables.MATCHES).collect().select(whole.rows.columns)
    assert _sorted(matches).equals(_sorted(whole.rows))
    quarantine = read_table(lake, tables.QUARANTINE).collect().drop(tables.SOURCE)
    assert _sorted(quarantine).equals(_sorted(whole.quarantine))
    assert "match id 'm1' appears again (first on line 3)" in quarantine["reason"].to_list()
    assert outcome.files.equals(whole.files)


def test_a_period_left_without_matches_is_emptied(inbox: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    ingest_store.ingest_matches(inbox, lake, today=TODAY)
    assert table_partitions(lake, tables.MATCHES) == ["2026-01", "2026-02", "2026-03"]
    (inbox / "backgammon" / "a.csv").write_text(HEADER + _match("m1"))
    outcome = ingest_store.ingest_matches(inbox, lake, today=TODAY)
    assert outcome.recheck is False
    matches = read_table(lake, tables.MATCHES).collect()
    assert sorted(matches["match_id"].to_list()) == ["m1", "x1"]
    assert read_table(lake, tables.MATCHES, ["2026-03"]).collect().height == 0
    quarantine = read_table(lake, tables.QUARANTINE, ["matches"]).collect()
    assert quarantine["record"].to_list() == ["x2"]


def test_a_file_that_cannot_be_read_leaves_the_lake_as_it_was(inbox: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    ingest_store.ingest_matches(inbox, lake, today=TODAY)
    before = _sorted(read_table(lake, tables.MATCHES).collect())
    (inbox / "backgammon" / "b.csv").write_text("match_id,ended_at\n")  # required columns missing
    with pytest.raises(Exception, match="missing required column"):
        ingest_store.ingest_matches(inbox, lake, today=TODAY)
    assert _sorted(read_table(lake, tables.MATCHES).collect()).equals(before)
    assert not list(lake.rglob(".*.tmp*"))
