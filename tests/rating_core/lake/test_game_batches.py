"""A period's platform games read back from the lake in replay order (rating_core.lake.
game_batches): read in file order through a sliding window when the files are nearly in time
order, sorted by DuckDB otherwise, the same rows in the same order either way."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rating_core import tables
from rating_core.lake import game_batches
from rating_core.lake.game_batches import PlatformGames
from rating_core.lake.storage import StagedParts, partition_files
from rating_core.schemas import GAMES_SCHEMA, conform
from rating_core.systems.site.classification import SITE_GAME_COLUMNS

JAN = datetime(2024, 1, 1, tzinfo=UTC)
COLUMNS = [c for c in SITE_GAME_COLUMNS if c != "period"]


def _games(
    times: Sequence[int | None], ids: list[str | None], platform: list[bool]
) -> pl.DataFrame:
    rows = [
        {
            "game_id": game_id,
            "played_at": None if t is None else JAN + timedelta(minutes=t),
            "period": "2024-01",
            "white_id": f"w{i % 5}",
            "black_id": f"b{i % 3}",
            "white_score": 1.0,
            "category": "blitz",
            "rated": True,
            "source": "platform" if mine else "federation",
            "source_line": i,
        }
        for i, (t, game_id, mine) in enumerate(zip(times, ids, platform, strict=True))
    ]
    return conform(pl.DataFrame(rows), GAMES_SCHEMA)


def _write(lake: Path, files: list[list[pl.DataFrame]]) -> None:
    """Each file's frames appended as row groups of its own."""
    for number, groups in enumerate(files):
        staged = StagedParts(lake, f"part-{number}.parquet")
        for frame in groups:
            staged.append(tables.GAMES, "2024-01", frame.drop("period"))
        staged.commit()


def _expected(games: pl.DataFrame) -> pl.DataFrame:
    kept = games.filter(pl.col("source") == "platform")
    return kept.sort("played_at", "game_id", nulls_last=True).select(SITE_GAME_COLUMNS)


@st.composite
def _months(draw: st.DrawFn) -> tuple[pl.DataFrame, list[list[pl.DataFrame]]]:
    """Games nearly in time order (or not at all), some without a time or an id, some of
    another source, cut into files of row groups; every (time, id) distinct."""
    n = draw(st.integers(0, 70))
    times: list[int | None] = []  # sorted times, then shuffled a little and some None
    times += sorted(draw(st.lists(st.integers(0, 25), min_size=n, max_size=n)))
    rng = random.Random(draw(st.integers(0, 2**32)))
    if draw(st.booleans()):
        rng.shuffle(times)
    else:  # swaps within a few rows
        for _ in range(n):
            i = rng.randrange(max(n, 1))
            j = min(n - 1, i + rng.randrange(4))
            if n:
                times[i], times[j] = times[j], times[i]
    ids: list[str | None] = [f"g{rng.randrange(10**6):06d}-{i}" for i in range(n)]
    for i in range(n):
        roll = rng.random()
        if roll < 0.1:
            times[i] = None  # without a time: its id is there
        elif roll < 0.15:
            ids[i], times[i] = None, 1000 + i  # without an id: its time is its own
    platform = [rng.random() > 0.15 for _ in range(n)]
    games = _games(times, ids, platform)
    cuts = sorted(rng.sample(range(1, n), min(draw(st.integers(0, 5)), max(n - 1, 0))))
    pieces = [games.slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    files: list[list[pl.DataFrame]] = [[]]
    for piece in pieces:
        if files[-1] and rng.random() < 0.4:
            files.append([])
        files[-1].append(piece)
    return games, [f for f in files if f]


@pytest.mark.slow
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_months(), st.integers(1, 20))
def test_the_window_and_duckdb_give_the_replay_order(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    month: tuple[pl.DataFrame, list[list[pl.DataFrame]]],
    size: int,
) -> None:
    monkeypatch.setattr(game_batches, "BLOCK_ROWS", 4)
    games, files = month
    lake = tmp_path_factory.mktemp("lake")
    _write(lake, files)
    expected = _expected(games)
    source = PlatformGames(lake, ["2024-01"], SITE_GAME_COLUMNS, size, 32 << 20)
    batches = list(source.batches("2024-01"))
    assert all(0 < b.height <= size for b in batches)
    got = pl.concat(batches) if batches else expected.clear()
    assert got.equals(expected)
    parts = partition_files(lake, tables.GAMES, "2024-01")
    schema = pl.Schema({c: GAMES_SCHEMA[c] for c in COLUMNS})
    by_duckdb = [b.cast(schema) for b in source._sorted(parts, COLUMNS)]
    if by_duckdb:
        assert pl.concat(by_duckdb).equals(expected.select(COLUMNS))
    window = game_batches._Window.plan(
        parts, source.ORDER, source.SOURCE, size, source.schema, 10**9
    )
    if parts:
        assert window is not None
        windowed = list(window.ordered(schema, COLUMNS))
        assert all(b.height <= size for b in windowed)
        assert pl.concat([expected.select(COLUMNS).clear(), *windowed]).equals(
            expected.select(COLUMNS)
        )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 30)), max_size=60))
def test_the_plan_bounds_what_waits_in_the_window(times: list[int | None]) -> None:
    original, block = game_batches.BLOCK_ROWS, 4
    game_batches.BLOCK_ROWS = block  # hypothesis runs the examples in one test function
    try:
        none = np.zeros(0, dtype=np.int64)
        column = pl.Series(times, dtype=pl.Int64)
        low, high = game_batches._bounds(column) if times else (none, none)
        low = np.concatenate([low, [np.iinfo(np.int64).max]])
        later = np.minimum.accumulate(low[::-1])[::-1]
        most = game_batches._most_waiting(later, high)
        for read in range(len(times) + 1):
            earliest = later[read // block]
            waiting = sum(1 for t in times[:read] if t is not None and t >= earliest)
            assert waiting <= most + block
            # and every row still to come is at or after the earliest time the plan says
            assert all(t is None or t >= earliest for t in times[read:])
    finally:
        game_batches.BLOCK_ROWS = original


def test_games_far_from_their_place_are_sorted_by_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(game_batches, "BLOCK_ROWS", 4)
    n = 200
    games = _games(list(range(n))[::-1], [f"g{i:04d}" for i in range(n)], [True] * n)
    _write(tmp_path, [[games]])
    source = PlatformGames(tmp_path, ["2024-01"], SITE_GAME_COLUMNS, 16, 32 << 20)
    parts = partition_files(tmp_path, tables.GAMES, "2024-01")
    most = 16 // 4
    assert game_batches._Window.plan(parts, source.ORDER, None, 16, source.schema, most) is None
    assert pl.concat(source.batches("2024-01")).equals(_expected(games))


def test_a_file_without_a_column_reads_it_as_nulls(tmp_path: Path) -> None:
    first = _games([3, 1, 2], ["a", "b", "c"], [True] * 3).with_columns(
        pl.lit("kept unrated").alias("unrated_reason")
    )
    second = _games([0, 5], ["d", "e"], [True] * 2)
    _write(tmp_path, [[first], [second.drop("unrated_reason", "plies")]])
    source = PlatformGames(tmp_path, ["2024-01"], SITE_GAME_COLUMNS, 100, 32 << 20)
    got = pl.concat(source.batches("2024-01"))
    assert got.get_column("game_id").to_list() == ["d", "b", "c", "a", "e"]
    assert got.get_column("unrated_reason").to_list() == [None, *["kept unrated"] * 3, None]
    assert got.get_column("plies").null_count() == 5
    assert got.schema == pl.Schema({c: GAMES_SCHEMA[c] for c in SITE_GAME_COLUMNS})
