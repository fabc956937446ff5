"""Write a platform inbox of N games among P players over M months (or all in one month), for
timing `ratings run` on a range of periods against the same games in one period.

    .venv/bin/python benchmarks/range_inbox.py OUT --games 300000 --players 2000 --months 60
    .venv/bin/python benchmarks/range_inbox.py OUT1 --games 300000 --players 2000 --months 1

The same seed gives the same games (ids, pairings, results, time controls) whatever `--months`:
only `played_at` differs, so both inboxes rate the same games.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl

LAST_MONTH = (2026, 11)
"""The month the range ends in (a past month, so every period is ratable)."""


def month_starts(months: int) -> list[datetime]:
    """The first instant of each of the `months` months ending in LAST_MONTH."""
    year, month = LAST_MONTH
    starts = []
    for _ in range(months):
        starts.append(datetime(year, month, 1, tzinfo=UTC))
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    return starts[::-1]


def platform_games(games: int, players: int, months: int, seed: int = 7) -> pl.DataFrame:
    """`games` platform games: random pairs, results and blitz-to-classical time controls."""
    rng = np.random.default_rng(seed)
    white = rng.integers(0, players, games)
    black = (white + rng.integers(1, players, games)) % players
    result = rng.choice(np.array(["1-0", "0-1", "1/2-1/2"]), games, p=[0.45, 0.45, 0.10])
    control = rng.choice(np.array(["60+0", "180+2", "300+0", "600+5", "1800+20"]), games)
    starts = month_starts(months)
    month = np.sort(rng.integers(0, months, games))
    offset = rng.integers(0, 27 * 24 * 3600, games)  # seconds into the month, before the 28th
    base = np.array([int(s.timestamp()) for s in starts], dtype=np.int64)[month]
    order = np.lexsort((offset, month))
    played = (base + offset)[order] * 1_000_000
    return pl.DataFrame(
        {
            "game_id": [f"g{i:07d}" for i in range(games)],
            "played_at": pl.Series(played).cast(pl.Datetime("us", "UTC")),
            "white_id": [f"u-{p:05d}" for p in white],
            "black_id": [f"u-{p:05d}" for p in black],
            "result": result,
            "time_control": control,
            "rated": np.ones(games, dtype=bool),
            "kind": "live",
            "plies": rng.integers(20, 120, games),
            "termination": "normal",
            "days_per_move": pl.Series([None] * games, dtype=pl.Int32),
            "otb_confirmed": pl.Series([None] * games, dtype=pl.Boolean),
        }
    ).with_columns(pl.col("played_at").dt.strftime("%Y-%m-%dT%H:%M:%SZ"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the inbox folder to write")
    parser.add_argument("--games", type=int, default=300_000)
    parser.add_argument("--players", type=int, default=2_000)
    parser.add_argument("--months", type=int, default=60)
    args = parser.parse_args()
    folder = args.out / "platform"
    folder.mkdir(parents=True, exist_ok=True)
    frame = platform_games(args.games, args.players, args.months)
    frame.write_csv(folder / "games.csv")
    print(f"{frame.height} games over {args.months} months in {folder / 'games.csv'}")


if __name__ == "__main__":
    main()
