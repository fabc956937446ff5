"""The federation, UKD and club steps and the merges asset read only their own games: a platform's
month beside them in the same periods is filtered out in the scan, never collected (issue 31
item 4: memory must not grow with the platform's games)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from assets.federation import _load_club, _load_federation
from assets.ingest import merges
from assets.resources import PipelinePaths
from rating_core import tables
from rating_core.budget import MemoryBudget
from rating_core.ingest.merges import read_merges, resolve_merges
from rating_core.lake.storage import read_table, write_partitioned
from rating_core.schemas import GAMES_SCHEMA, conform

PLATFORM_GAMES = 20_000
"""Platform games per period: far more than every other frame of these steps."""
PERIODS = ["2026-01", "2026-02"]
MERGES_CSV = (
    "keep_id,merge_id,decided_at,reason\n"
    "a-3,b-17,2026-03-02,same person\n"
    "p1,nobody,2026-03-02,unknown id\n"
)


def _games() -> pl.DataFrame:
    """Federation and club games of two periods (b-17, a duplicate of a-3, meets a-3 once), and
    a platform's games in the same periods."""
    rows = [
        ("j1", "federation", "T1", "2026-01", "a-3", "p1"),
        ("j2", "federation", "T1", "2026-01", "p2", "a-3"),
        ("f1", "federation", "T2", "2026-02", "b-17", "p1"),
        ("f2", "federation", "T2", "2026-02", "a-3", "b-17"),
        ("c1", "club", "C1", "2026-02", "b-17", "p4"),
        ("c2", "club", "C1", "2026-02", "p4", "p1"),
    ]
    own = pl.DataFrame(
        rows,
        schema=["game_id", "source", "tournament_id", "period", "white_id", "black_id"],
        orient="row",
    ).with_columns(
        club_id=pl.when(pl.col("source") == "club").then(pl.lit("ankara-sk")),
        source_file=pl.col("source") + "/" + pl.col("tournament_id") + ".csv",
        source_line=pl.int_range(2, len(rows) + 2, dtype=pl.Int64),
        played_at=pl.col("period").str.to_datetime("%Y-%m", time_zone="UTC").dt.offset_by("9d"),
        result=pl.lit("1-0"),
        white_score=pl.lit(1.0),
        rating_list=pl.lit("standard"),
        rated=pl.lit(True),
    )
    platform = pl.DataFrame(
        {
            "game_id": [f"pl{n}" for n in range(PLATFORM_GAMES * len(PERIODS))],
            "period": [p for p in PERIODS for _ in range(PLATFORM_GAMES)],
        }
    ).with_columns(
        source=pl.lit("platform"),
        source_file=pl.lit("platform/lichess.pgn.zst"),
        source_line=pl.int_range(1, pl.len() + 1, dtype=pl.Int64),
        white_id=pl.lit("user") + (pl.int_range(pl.len()) % 5000).cast(pl.String),
        black_id=pl.lit("user") + ((pl.int_range(pl.len()) + 7) % 5000).cast(pl.String),
        played_at=pl.lit(datetime(2026, 1, 20, tzinfo=UTC)),
        result=pl.lit("0-1"),
        white_score=pl.lit(0.0),
        category=pl.lit("blitz"),
        rated=pl.lit(True),
    )
    # one platform game of a merged id: an id's games of every source count to date a merge
    platform = platform.with_columns(
        white_id=pl.when(pl.col("game_id") == "pl3").then(pl.lit("b-17")).otherwise("white_id")
    )
    return conform(pl.concat([own, platform], how="diagonal_relaxed"), GAMES_SCHEMA)


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    lake = tmp_path / "lake"
    write_partitioned(lake, tables.GAMES, _games())
    return lake


@pytest.fixture
def collected(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The height of every frame a lazy query collects while the test runs (a filter pushed into
    the scan collects only what it keeps; an eager frame's operations collect it whole)."""
    heights: list[int] = []
    collect = pl.LazyFrame.collect

    def spy(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> pl.DataFrame:
        frame = collect(self, *args, **kwargs)
        heights.append(frame.height)
        return frame

    monkeypatch.setattr(pl.LazyFrame, "collect", spy)
    return heights


def _every_game(lake: Path) -> pl.DataFrame:
    return read_table(lake, tables.GAMES, schema=GAMES_SCHEMA).collect()


@pytest.mark.parametrize("system", ["fide", "ukd", "club"])
def test_a_federation_step_reads_its_own_games_not_the_platforms(
    lake: Path, system: str, collected: list[int]
) -> None:
    every = _every_game(lake)
    load = _load_club if system == "club" else _load_federation(system)
    collected.clear()
    inputs = load(lake, PERIODS, MemoryBudget(None))
    heights = list(collected)
    assert heights and max(heights) < PLATFORM_GAMES  # no frame as large as a platform month
    source = "club" if system == "club" else "federation"
    own = every.filter(pl.col("source") == source).get_column("game_id")
    assert sorted(inputs["games"].get_column("game_id")) == sorted(own)


def test_the_merges_asset_reads_only_the_games_of_the_merged_ids(
    lake: Path, tmp_path: Path, collected: list[int]
) -> None:
    inbox = tmp_path / "inbox"
    (inbox / "federation").mkdir(parents=True)
    (inbox / "federation" / "merges.csv").write_text(MERGES_CSV)
    every = _every_game(lake)
    collected.clear()
    merges(PipelinePaths(inbox=str(inbox), lake=str(lake)))
    heights = list(collected)
    assert heights and max(heights) < PLATFORM_GAMES
    # the merges and the quarantine resolved against every game of the lake
    read = read_merges(inbox / "federation" / "merges.csv", "federation/merges.csv")
    lists = read_table(lake, tables.STARTING_LISTS).collect()
    whole = resolve_merges(read.rows, every, lists, None)
    stored = read_table(lake, tables.MERGES).collect()
    assert stored.select(whole.rows.columns).equals(whole.rows)
    assert stored.get_column("effective_period").to_list() == ["2026-02"]
    quarantine = read_table(lake, tables.QUARANTINE, [tables.MERGES.name]).collect()
    columns = ["source_file", "line", "record", "value", "reason"]
    expected = pl.concat([read.quarantine, whole.quarantine]).select(columns)
    assert quarantine.select(columns).sort(columns).equals(expected.sort(columns))
    reasons = quarantine.get_column("reason").to_list()
    assert any("'nobody' is in no game" in r for r in reasons)
    assert any("a game between 'a-3' and 'b-17'" in r for r in reasons)
