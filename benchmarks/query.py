"""Benchmark: `ratings query` on a large lake against plain DuckDB on the same files (issue 31).

Builds (or reuses, in --dir) a lake holding only a `history_site` table of --rows rows (one row
per player per game, --players players, over --periods monthly partitions, written by the lake's
own writer, so the files are what a run writes: LZ4, no column statistics), then times, each in
a fresh child process so that its peak RSS is its own (`os.wait4`):
- a player's game history: `ratings query "SELECT * FROM history_site WHERE player_id = ...
  ORDER BY played_at" --csv` against DuckDB's `read_parquet` over the same files with the same
  filter, fetched to Python (the baseline);
- the start-up: `ratings query "SELECT 1"` against `python -c pass` (Python's own start).
Each command runs --repeat times; the fastest wall and the largest peak RSS are printed, with
the ratios and the load average (the machine may be shared: compare ratios of one run).
Usage: .venv/bin/python benchmarks/query.py [--rows N] [--players P] [--periods K] [--dir PATH]
       [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PYTHON = sys.executable
RATINGS = str(Path(sys.executable).with_name("ratings"))


def build_lake(lake: Path, rows: int, players: int, periods: int) -> None:
    """Write a `history_site` table of `rows` rows over `periods` months, period by period (the
    lake's own partitioned writer), unless --dir already holds one of that size."""
    import numpy as np
    import polars as pl

    from rating_core import tables
    from rating_core.lake.storage import write_partitioned

    marker = lake / f".bench-{rows}-{players}-{periods}"
    if marker.exists():
        return
    table = tables.history("site")
    rng = np.random.default_rng(31)
    per_period = rows // periods
    for index in range(periods):
        year, month = 2024 + index // 12, index % 12 + 1
        period = f"{year}-{month:02d}"
        start = np.datetime64(f"{period}-01T00:00:00", "us")
        n = per_period
        games = np.arange(n) // 2 + index * per_period // 2
        player = rng.integers(0, players, n)
        opponent = rng.integers(0, players, n)
        seconds = np.sort(rng.integers(0, 28 * 86400, n))
        rating = rng.normal(1500, 200, n)
        frame = pl.DataFrame(
            {
                "game_id": games,
                "played_at": start + seconds.astype("timedelta64[s]"),
                "row_period": period,
                "player_id": player,
                "number": np.arange(n) % 2 + 1,
                "opponent_id": opponent,
                "opponent_is_bot": rng.random(n) < 0.01,
                "rating_before": rating,
                "opponent_rating": rng.normal(1500, 200, n),
                "expected": rng.random(n),
                "k": np.full(n, 20.0),
                "weight": np.ones(n),
                "score": rng.integers(0, 3, n) / 2,
                "raw_change": rng.normal(0, 10, n),
                "change": rng.normal(0, 10, n),
                "rating_after": rating + rng.normal(0, 10, n),
                "games_before": rng.integers(0, 500, n),
                "period": period,
            }
        ).with_columns(
            ("g" + pl.col("game_id").cast(pl.String)).alias("game_id"),
            pl.col("played_at").dt.replace_time_zone("UTC"),
            ("u-" + pl.col("player_id").cast(pl.String)).alias("player_id"),
            pl.col("number").cast(pl.String),
            ("u-" + pl.col("opponent_id").cast(pl.String)).alias("opponent_id"),
        )
        write_partitioned(lake, table, frame)
        print(f"  wrote {period}: {n:,} rows", flush=True)
    marker.touch()


def measure(command: list[str], stdout: int = subprocess.DEVNULL) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process running `command`."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        error = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{' '.join(command[:3])}... failed: {error}")
    return wall, usage.ru_maxrss / 1024


def best(command: list[str], repeat: int) -> tuple[float, float]:
    """The fastest wall and the largest peak RSS of `repeat` runs."""
    runs = [measure(command) for _ in range(repeat)]
    return min(w for w, _ in runs), max(r for _, r in runs)


def main() -> None:
    """Build or reuse the lake, time both sides of both comparisons, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40_000_000)
    parser.add_argument("--players", type=int, default=1_000_000)
    parser.add_argument("--periods", type=int, default=24)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/ratings-bench-query"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    lake = args.dir / "lake"
    if args.build_only:
        build_lake(lake, args.rows, args.players, args.periods)
        return
    print(f"lake {lake}: history_site of {args.rows:,} rows, {args.players:,} players")
    # built by a child process: this one stays small, as a child's peak RSS counts its parent's
    # pages until it runs its own program
    size = ["--rows", str(args.rows), "--players", str(args.players)]
    size += ["--periods", str(args.periods), "--dir", str(args.dir)]
    subprocess.run([PYTHON, __file__, "--build-only", *size], check=True)
    player = f"u-{args.players // 3}"
    files = sorted((lake / "history" / "site").glob("period=*/part-0.parquet"))
    sql = f"SELECT * FROM history_site WHERE player_id = '{player}' ORDER BY played_at"
    ours = [RATINGS, "query", sql, "--lake", str(lake), "--csv"]
    listed = ", ".join(f"'{path}'" for path in files)
    plain = (
        "import duckdb\n"
        f'rows = duckdb.sql("SELECT * FROM read_parquet([{listed}], hive_partitioning = true) '
        f"WHERE player_id = '{player}' ORDER BY played_at\").fetchall()\n"
        "print(len(rows))\n"
    )
    baseline = [PYTHON, "-c", plain]
    measure(baseline)  # warm the page cache for both sides
    history = best(ours, args.repeat)
    duck = best(baseline, args.repeat)
    start = best([RATINGS, "query", "SELECT 1", "--lake", str(lake)], args.repeat)
    python = best([PYTHON, "-c", "pass"], args.repeat)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"player history, ratings query : {history[0]:6.2f} s {history[1]:7.0f} MB")
    print(f"player history, plain DuckDB  : {duck[0]:6.2f} s {duck[1]:7.0f} MB")
    print(
        f"  ratio ratings/plain         : {history[0] / duck[0]:6.2f}x wall, "
        f"{history[1] / duck[1]:.2f}x peak RSS"
    )
    print(f'ratings query "SELECT 1"      : {start[0]:6.2f} s {start[1]:7.0f} MB')
    print(f"python -c pass                : {python[0]:6.2f} s {python[1]:7.0f} MB")
    print(f"  start-up beyond Python      : {start[0] - python[0]:6.2f} s")


if __name__ == "__main__":
    main()
