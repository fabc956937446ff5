"""A moderation decision on a sample game, as the moderation tests make one: the game, and the
decision file the inbox gets."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from rating_core import tables
from rating_core.lake.storage import read_table

REASON = "engine use confirmed"
"""The reason the decisions give (the diffs' causes quote it)."""


def sample_blitz_game(lake: Path, by: Sequence[str] = ("game_id",)) -> dict[str, Any]:
    """The first, ordered by `by`, rated and finished platform blitz game of the samples'
    2026-03: annulling it moves the two players on the blitz lists from that period on."""
    games = read_table(lake, tables.GAMES).collect()
    return (
        games.filter(
            (pl.col("source") == "platform")
            & (pl.col("period") == "2026-03")
            & (pl.col("category") == "blitz")
            & pl.col("rated")
            & (pl.col("status") == "finished")
        )
        .sort(list(by))
        .row(0, named=True)
    )


def annul(inbox: Path, game_id: str) -> Path:
    """`platform/moderation/decisions-2026-07.csv`: `game_id` annulled on 2026-07-02 for REASON."""
    path = inbox / "platform" / "moderation" / "decisions-2026-07.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"game_id,decided_at,decision,reason\n{game_id},2026-07-02T09:00:00Z,annul,{REASON}\n",
        encoding="utf-8",
    )
    return path
