"""A DuckDB connection within a memory budget (`rating_core.lake.spilling`): the rating's sorts and
the ingest's id questions spill rather than fail at a small `--memory` (a 3M-game period's sort
failed at 64 MiB with a thread per core and Parquet prefetched)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rating_core.lake import spilling
from rating_core.lake.game_batches import PlatformGames
from rating_core.lake.id_spill import HashQueries


def settings(con: object) -> tuple[object, ...]:
    sql = (
        "SELECT current_setting('threads'), current_setting('disable_parquet_prefetching'), "
        "current_setting('memory_limit'), current_setting('temp_directory')"
    )
    row = con.execute(sql).fetchone()  # type: ignore[attr-defined]
    assert row is not None
    return tuple(row)


def test_threads_follow_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spilling.os, "cpu_count", lambda: 8)
    mib = 1024**2
    assert [spilling.threads_for(m * mib) for m in (64, 127, 128, 300, 1024, 65536)] == [
        1,
        1,
        1,
        2,
        8,
        8,
    ]


def test_a_connection_runs_within_its_budget_and_removes_its_spill_folder() -> None:
    with spilling.spilling_connection(64 << 20) as con:
        threads, no_prefetch, limit, folder = settings(con)
        assert (threads, no_prefetch, limit) == (1, True, "64.0 MiB")
        assert Path(str(folder)).is_dir()
    assert not Path(str(folder)).exists()


def test_the_ratings_sorts_and_the_ingests_id_questions_use_it(tmp_path: Path) -> None:
    games = PlatformGames(tmp_path, ["2024-01"], ["game_id"], 10_000, 64 << 20)
    with games._connection() as con:
        assert settings(con)[:2] == (1, True)
    queries = HashQueries(64 << 20)
    try:
        assert settings(queries._con)[:2] == (1, True)
    finally:
        queries.close()
