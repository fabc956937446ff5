"""Small PGN files for ingest tests: one rated blitz game of May 2025 per call, written out
together."""

from __future__ import annotations

from pathlib import Path


def blitz_game(
    i: int,
    white: str | None = None,
    black: str | None = None,
    *,
    day: int = 1,
    gid: str | None = None,
    tc: str = "180+2",
) -> str:
    """Game `i` as PGN text: played on 2025-05-`day` at 10:`i mod 60`, won by white (`w<i mod
    7>` unless given) against black (`b<i mod 5>`), its Lichess id `gid` (`g<i>`, 7 digits)."""
    white = white or f"w{i % 7}"
    black = black or f"b{i % 5}"
    gid = gid or f"g{i:07d}"
    return (
        f'[Event "Rated Blitz game"]\n[Site "https://lichess.org/{gid}"]\n'
        f'[UTCDate "2025.05.{day:02d}"]\n[UTCTime "10:{i % 60:02d}:00"]\n[White "{white}"]\n'
        f'[Black "{black}"]\n[Result "1-0"]\n[TimeControl "{tc}"]\n\n1. e4 e5 2. Qh5 1-0\n\n'
    )


def write_pgn(path: Path, games: list[str]) -> Path:
    """`games` written to `path` (its folders made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(games))
    return path
