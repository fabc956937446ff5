"""Benchmark: one FIDE period at scale against a plain Polars read + group_by (DESIGN §8).

Generates a games parquet (one period, standard list) and a starting state, then times
- the baseline: reading the same parquet and summing white_score per white player;
- the FIDE list: `fide_period(..., explain=False)` from the parquet scan (ratings, state, list
  rows, per-player explanations, newcomer pool), the figure the target (<= 2x) is about;
- the per-game explanation table (one row per player per game), computed on its own by
  `fide_game_explanations` from the same inputs (it reads and rates the games again). It is
  printed on its own line against the same baseline and is not part of the target; the
  pipeline writes it beside each list (`fide_period(..., explain=True)` shares the rating step).
Prints wall and CPU (user + sys) times and ratios, the load average and peak RSS (after the
lists, then overall). `--repeat R` times each side R times, lists first, and reports the
fastest of each (the first run pays cold caches; the numba code is loaded beforehand, on a
1,000-game slice).
Usage: .venv/bin/python benchmarks/federation.py [--players N] [--newcomers U] [--games M]
       [--dir PATH] [--lists-only] [--repeat R] [--profile [list|explanations]]
`--lists-only` (alias `--no-explain`) skips the explanation table; `--profile` prints a
cProfile (cumulative) of one warm run of the list (default) or the explanations instead.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rating_core.schemas import RatingList, Status  # noqa: E402
from rating_core.systems.fide.period import (  # noqa: E402
    FidePeriodResult,
    fide_game_explanations,
    fide_period,
)
from rating_core.systems.fide.rules import FIDE_STATE_SCHEMA  # noqa: E402

T = TypeVar("T")


def generate(
    players: int, games: int, out: Path, newcomers: int | None = None, seed: int = 7
) -> tuple[Path, pl.DataFrame]:
    """Write a synthetic games parquet for period 2024-01 and return it with the start state.

    `players` rated players are on the starting list; `newcomers` more (default: one for every
    19 rated, 5% of everyone) play without a rating and pool their games.
    """
    rng = np.random.default_rng(seed)
    rated_count = players
    players = rated_count + (rated_count // 19 if newcomers is None else newcomers)
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
    rated = np.zeros(players, dtype=bool)
    rated[rng.permutation(players)[:rated_count]] = True
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


def run_list(path: Path, state: pl.DataFrame) -> FidePeriodResult:
    """The FIDE list of the period, without the per-game explanation table."""
    return fide_period(pl.scan_parquet(path), state, None, "2024-01", "standard", explain=False)


def run_explanations(path: Path, state: pl.DataFrame) -> pl.DataFrame:
    """The per-game explanation table of the period, computed on its own."""
    return fide_game_explanations(pl.scan_parquet(path), state, "2024-01", "standard")


def baseline(path: Path) -> pl.DataFrame:
    """A plain Polars read of the games file plus a group-by sum."""
    return pl.read_parquet(path).group_by("white_id").agg(pl.col("white_score").sum())


def timed(fn: Callable[..., T], *args: object) -> tuple[T, float, float]:
    """(result, wall seconds, CPU seconds) of fn(*args)."""
    t0, c0 = time.perf_counter(), cpu_seconds()
    result = fn(*args)
    return result, time.perf_counter() - t0, cpu_seconds() - c0


def profile(path: Path, state: pl.DataFrame, what: str) -> None:
    """Run the list (or the explanations) once under cProfile and print the costliest calls."""
    import cProfile
    import pstats

    fn = run_list if what == "list" else run_explanations
    fn(path, state)  # warm
    prof = cProfile.Profile()
    prof.enable()
    fn(path, state)
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(40)


def load() -> str:
    """The 1, 5 and 15 minute load averages (the machine is shared: read ratios with them)."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    """Parse arguments, generate the data, time the runs, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=1_000_000, help="rated players")
    ap.add_argument(
        "--newcomers", type=int, default=None, help="unrated players (default: players / 19)"
    )
    ap.add_argument("--games", type=int, default=5_000_000)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument(
        "--lists-only",
        "--no-explain",
        dest="lists_only",
        action="store_true",
        help="time the list only, not the per-game explanation table",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per side; the fastest is shown")
    ap.add_argument(
        "--profile",
        nargs="?",
        const="list",
        choices=["list", "explanations"],
        help="print a cProfile of one run of the list (default) or the explanations and exit",
    )
    args = ap.parse_args()
    repeat = max(args.repeat, 1)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        t0 = time.perf_counter()
        path, state = generate(args.players, args.games, Path(tmp), args.newcomers)
        print(
            f"generated {args.games:,} games, {state.height:,} rated players and "
            f"{args.newcomers if args.newcomers is not None else args.players // 19:,} "
            f"newcomers in "
            f"{time.perf_counter() - t0:.1f}s; load average {load()}"
        )
        if args.profile:
            profile(path, state, args.profile)
            return

        # One-time costs of a fresh process (loading the cached numba code of the id coding)
        # are paid on a 1,000-game slice first, so that --repeat 1 times the period itself.
        small = pl.scan_parquet(path).head(1_000)
        fide_period(small, state, None, "2024-01", "standard", explain=False)
        fide_game_explanations(small, state, "2024-01", "standard")

        base_runs, list_runs = [], []
        res = None
        for _ in range(repeat):
            res = None  # the previous run's result is not kept alive during the next one
            base, wall, cpu = timed(baseline, path)
            base_runs.append((wall, cpu))
            res, wall, cpu = timed(run_list, path, state)
            list_runs.append((wall, cpu))
        b_wall, b_cpu = min(w for w, _ in base_runs), min(c for _, c in base_runs)
        l_wall, l_cpu = min(w for w, _ in list_runs), min(c for _, c in list_runs)
        assert res is not None  # repeat >= 1: the last run's result
        print(
            f"baseline read + group_by : {b_wall:8.2f} s, CPU {b_cpu:.2f} s ({base.height:,} groups)"
        )
        print(
            f"FIDE list (explain=False): {l_wall:8.2f} s, CPU {l_cpu:.2f} s "
            f"({res.list_rows.height:,} list rows, {res.newcomers.height:,} pooled)"
        )
        print(
            f"  ratio                  : {l_wall / b_wall:8.2f} x wall, {l_cpu / b_cpu:.2f} x CPU "
            "(target <= 2x)"
        )
        if repeat > 1:
            runs = ", ".join(
                f"{b:.2f}/{e:.2f}" for (b, _), (e, _) in zip(base_runs, list_runs, strict=True)
            )
            print(f"  runs (baseline/list s) : {runs}")
        print(f"  peak RSS so far        : {peak_rss_mb():8.0f} MiB; load average {load()}")
        res = None

        if not args.lists_only:
            expl_runs = []
            rows = 0
            for _ in range(repeat):
                expl, wall, cpu = timed(run_explanations, path, state)
                expl_runs.append((wall, cpu))
                rows = expl.height
                del expl  # not kept alive during the next run
            e_wall, e_cpu = min(w for w, _ in expl_runs), min(c for _, c in expl_runs)
            print(
                f"per-game explanations    : {e_wall:8.2f} s, CPU {e_cpu:.2f} s ({rows:,} rows, "
                "fide_game_explanations on its own, not part of the target)"
            )
            print(
                f"  against the baseline   : {e_wall / b_wall:8.2f} x wall, {e_cpu / b_cpu:.2f} x CPU"
            )
            if repeat > 1:
                print(f"  runs (s)               : {', '.join(f'{w:.2f}' for w, _ in expl_runs)}")
        print(f"peak RSS                 : {peak_rss_mb():8.0f} MiB; load average {load()}")


if __name__ == "__main__":
    main()
