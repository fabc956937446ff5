"""The first names a streamed group gathers hold memory by player, not by game (issue 31 item
4): the rows reduced every few windows own their strings instead of viewing the buffers of
every window before them."""

from __future__ import annotations

from datetime import datetime

import polars as pl

from rating_core.lake.ingest_store import _detached, _reduced_names
from rating_core.names import first_names


def _held(frame: pl.DataFrame) -> int:
    """Bytes of the Arrow buffers `frame`'s columns keep alive (views' data buffers included)."""
    total = 0
    for name in frame.columns:
        array = frame.get_column(name).to_arrow(compat_level=pl.CompatLevel.newest())
        for chunk in getattr(array, "chunks", [array]):
            total += sum(buffer.size for buffer in chunk.buffers() if buffer is not None)
    return total


def _window(k: int, games: int = 4_000) -> pl.DataFrame:
    """A window's games: 100 players met in every window and 50 new ones."""
    white = [
        f"regular-player-{i % 100:06d}" if i % 80 else f"new-{k}-{i:06d}" for i in range(games)
    ]
    return pl.DataFrame(
        {
            "white_id": white,
            "white_name": [f"{player} has a long display name" for player in white],
            "black_id": [f"regular-player-{(i + 7) % 100:06d}" for i in range(games)],
            "black_name": [f"opponent {(i + 7) % 100} with a long name" for i in range(games)],
            "played_at": [datetime(2024, 1, 1, k % 24)] * games,
            "game_id": [f"game-{k:04d}-{i:08d}" for i in range(games)],
        }
    )


def test_reduced_first_names_hold_their_rows_not_every_window() -> None:
    names: list[pl.DataFrame] = []
    for k in range(64):
        names.append(_detached(first_names(_window(k))))
        if len(names) >= 8:
            names = [_reduced_names(names)]
    [reduced] = names
    assert reduced.height == 2 * 100 + 64 * 50
    assert _held(reduced) <= 1.5 * _held(_detached(reduced))
