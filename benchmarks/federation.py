"""Benchmark: one FIDE period at scale against a plain Polars read + group_by (DESIGN §8).

Generates a games parquet (one period, standard list) and a starting state, then times
`fide_period` (including the parquet read) against reading the same parquet and summing
white_score per white player. Prints both times, the ratio (target <= 2x) and peak RSS.
`--no-explain` runs `fide_period(..., explain=False)` (no per-game explanation frame); run it as
a separate process to get its own peak RSS. `--repeat R` times both sides R times and reports
the fastest of each (the first run pays the cold caches).
Usage: .venv/bin/python benchmarks/federation.py [--players N] [--games M] [--dir PATH]
       [--no-explain] [--repeat R] [--profile]
`--profile` prints a cProfile (cumulative) of one warm `fide_period` run instead of the timings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rating_core.fide import FIDE_STATE_SCHEMA, fide_period  # noqa: E402
from rating_core.schemas import RatingList, Status  # noqa: E402


def generate(players: int, games: int, out: Path, seed: int = 7) -> tuple[Path, pl.DataFrame]:
    """Write a synthetic games parquet for period 2024-01 and return it with the start state."""
    rng = np.random.default_rng(seed)
    white = rng.integers(0, players, games)
    black = (white + rng.integers(1, players, games)) % players
    ids = pl.Series("i", np.arange(players)).cast(pl.String)
    start = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    frame = pl.DataFrame(
        {
            "game_id": pl.Series(np.arange(games)).cast(pl.String),
            "tournament_id": pl.Series(rng.integers(0, max(games // 50, 1), games)).cast(pl.String),
            "played_at": pl.Series(rng.integers(0, 30 * 86400, games) * 1_000_000).cast(
                pl.Datetime("us", "UTC")
            )
            + (start - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)),
            "period": pl.repeat("2024-01", games, eager=True),
            "white_id": ids.gather(white),
            "black_id": ids.gather(black),
            "white_score": pl.Series(rng.choice([0.0, 0.5, 1.0], games)),
            "rating_list": pl.repeat("standard", games, eager=True).cast(RatingList),
            "status": pl.Series(np.where(rng.random(games) < 0.01, "forfeit", "finished")).cast(
                Status
            ),
            "rated": pl.repeat(True, games, eager=True),
        }
    )
    path = out / "games.parquet"
    frame.write_parquet(path)
    # 95% of the players are rated; the rest pool games as newcomers.
    rated = rng.random(players) < 0.95
    rating = rng.integers(1400, 2800, players)
    state = pl.DataFrame(
        {
            "player_id": ids.filter(pl.Series(rated)),
            "rating": rating[rated],
            "rated_games": rng.integers(0, 500, players)[rated],
            "peak_rating": rating[rated] + rng.integers(0, 100, players)[rated],
            "last_played_period": pl.repeat(None, int(rated.sum()), dtype=pl.String, eager=True),
            "listed_since": pl.repeat("2023-12", int(rated.sum()), eager=True),
        },
        schema=FIDE_STATE_SCHEMA,
    )
    return path, state


def cpu_seconds() -> float:
    """User + system CPU time of this process (all threads): steadier than wall time on a busy
    machine, and the wall time of a 2-core run when nothing else competes."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def profile(path: Path, state: pl.DataFrame, explain: bool) -> None:
    """Run fide_period once under cProfile and print the costliest calls (cumulative time)."""
    import cProfile
    import pstats

    fide_period(pl.scan_parquet(path), state, None, "2024-01", "standard", explain=explain)  # warm
    prof = cProfile.Profile()
    prof.enable()
    fide_period(pl.scan_parquet(path), state, None, "2024-01", "standard", explain=explain)
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(40)


def main() -> None:
    """Parse arguments, generate the data, time both runs, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=1_000_000)
    ap.add_argument("--games", type=int, default=5_000_000)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--no-explain", action="store_true", help="fide_period(explain=False)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per side; the fastest is shown")
    ap.add_argument(
        "--profile", action="store_true", help="print a cProfile of one fide_period run and exit"
    )
    args = ap.parse_args()
    explain = not args.no_explain
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        t0 = time.perf_counter()
        path, state = generate(args.players, args.games, Path(tmp))
        print(
            f"generated {args.games:,} games, {state.height:,} rated players in {time.perf_counter() - t0:.1f}s"
        )

        if args.profile:
            profile(path, state, explain)
            return

        baselines, engines, base_cpu, engine_cpu = [], [], [], []
        res = None
        for _ in range(max(args.repeat, 1)):
            res = None  # the previous run's result is not kept alive during the next one
            t0, c0 = time.perf_counter(), cpu_seconds()
            base = pl.read_parquet(path).group_by("white_id").agg(pl.col("white_score").sum())
            baselines.append(time.perf_counter() - t0)
            base_cpu.append(cpu_seconds() - c0)

            t0, c0 = time.perf_counter(), cpu_seconds()
            res = fide_period(
                pl.scan_parquet(path), state, None, "2024-01", "standard", explain=explain
            )
            engines.append(time.perf_counter() - t0)
            engine_cpu.append(cpu_seconds() - c0)
        baseline, engine = min(baselines), min(engines)
        runs = ", ".join(f"{b:.2f}/{e:.2f}" for b, e in zip(baselines, engines, strict=True))

        print(f"baseline read + group_by : {baseline:8.2f} s ({base.height:,} groups)")
        print(
            f"fide_period              : {engine:8.2f} s (explain={explain}, "
            f"{res.list_rows.height:,} list rows, "
            f"{res.game_explanations.height:,} game explanations, {res.newcomers.height:,} pooled)"
        )
        print(f"ratio                    : {engine / baseline:8.2f} x (target <= 2x)")
        print(
            f"CPU s (user+sys)         : {min(base_cpu):8.2f} baseline, {min(engine_cpu):.2f} "
            f"fide_period, ratio {min(engine_cpu) / min(base_cpu):.2f} x"
        )
        if len(baselines) > 1:
            print(f"runs (baseline/engine s) : {runs}")
        print(f"peak RSS                 : {peak_rss_mb():8.0f} MiB")


if __name__ == "__main__":
    main()
