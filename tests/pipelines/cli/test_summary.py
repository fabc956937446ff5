"""The run summary's players line (`pipelines.cli.summary._players_not_in_registry`) on a lake written
by hand: every count below is read off the games and registry written here."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from pipelines.cli import summary
from rating_core import tables
from rating_core.lake import players_seen
from rating_core.lake.storage import write_partitioned, write_table
from rating_core.schemas import PLAYERS_SCHEMA


def _registry(ids: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"player_id": ids}).select(
        pl.col("player_id") if name == "player_id" else pl.lit(None, dtype).alias(name)
        for name, dtype in PLAYERS_SCHEMA.items()
    )


def _games(lake: Path) -> None:
    write_partitioned(
        lake,
        tables.GAMES,
        pl.DataFrame(
            {
                "white_id": ["a", "a", "c", "Reg Name", "d"],
                "black_id": ["b", "Zed Nobody", None, "b", "a"],
                "white_name": ["Ann", "Ann", "Cid", "Reg Name", "Dee"],
                "black_name": ["Bob", "Zed Nobody", None, "Bob", "Ann"],
                "period": ["2026-01", "2026-01", "2026-01", "2026-01", "2026-02"],
            }
        ),
    )


def _line(lake: Path) -> str | None:
    return summary._players_not_in_registry(SimpleNamespace(lake=lake))  # type: ignore[arg-type]  # reads .lake only


def test_players_seen_unregistered_and_named_only_by_name(tmp_path: Path) -> None:
    """Seen: a, b, c, d, `Zed Nobody`, `Reg Name` (6; a null side is no player). Not in the
    registry (a, b, `Reg Name`): c, d, `Zed Nobody` (3). By name only (id equal to the name) and
    not registered: `Zed Nobody` alone (`Reg Name` is registered, whatever the file gave)."""
    lake = tmp_path / "lake"
    _games(lake)
    write_table(lake, tables.PLAYERS, _registry(["a", "b", "Reg Name"]))
    assert _line(lake) == "players: 6 seen, 3 not in players.csv, 1 identified by name only"


def test_the_counts_are_read_again_only_when_the_games_or_registry_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    _games(lake)
    write_table(lake, tables.PLAYERS, _registry(["a", "b", "Reg Name"]))
    counted: list[Path] = []
    count = players_seen.count

    def counting(at: Path) -> tuple[int, int, int]:
        counted.append(at)
        return count(at)

    monkeypatch.setattr(players_seen, "count", counting)
    first = _line(lake)
    assert _line(lake) == first and len(counted) == 1  # nothing changed: not read again
    write_table(lake, tables.PLAYERS, _registry(["a", "b", "Reg Name"]))  # the same registry
    assert _line(lake) == first and len(counted) == 1
    write_table(lake, tables.PLAYERS, _registry(["a", "b", "c", "Reg Name"]))
    assert _line(lake) == "players: 6 seen, 2 not in players.csv, 1 identified by name only"
    assert len(counted) == 2


def test_no_games_no_players_line(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    assert _line(lake) is None
