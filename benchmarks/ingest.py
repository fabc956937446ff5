"""PGN ingest benchmark: `read_pgn` games/s against python-chess `read_headers` (DESIGN §8).

Usage: `.venv/bin/python benchmarks/ingest.py [--games N] [--baseline-games M]`. Generates a
Lichess-style file in a temporary directory, times both readers and prints the ratio and peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import chess.pgn  # noqa: E402

from rating_core.ingest.pgn import read_pgn  # noqa: E402
from rating_core.ingest.pgn_synth import generate_pgn  # noqa: E402


def time_read_headers(path: Path, limit: int) -> tuple[int, float]:
    """Games read and seconds taken by `chess.pgn.read_headers` over at most `limit` games."""
    n = 0
    start, cpu = time.perf_counter(), time.process_time()
    with path.open(encoding="utf-8") as handle:
        while n < limit and chess.pgn.read_headers(handle) is not None:
            n += 1
    print(f"read_headers CPU: {time.process_time() - cpu:.2f} s")
    return n, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    """Generate, time both readers, print games/s, the ratio and peak RSS."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=300_000)
    parser.add_argument(
        "--baseline-games",
        type=int,
        default=30_000,
        help="python-chess is timed on this prefix and its rate applied to the whole file",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.pgn"
        t0 = time.perf_counter()
        generate_pgn(path, args.games, seed=1)
        size = path.stat().st_size
        print(
            f"generated {args.games:,} games, {size / 1e6:,.0f} MB in {time.perf_counter() - t0:.1f} s"
        )

        warm = Path(tmp) / "warm.pgn"
        generate_pgn(warm, 50, seed=2, n_bodies=5)
        t0 = time.perf_counter()
        read_pgn(warm)  # compiles or loads the numba scanner once
        print(f"warm-up (numba compile or cache load): {time.perf_counter() - t0:.2f} s")

        t0, cpu0 = time.perf_counter(), time.process_time()
        result = read_pgn(path)
        fast_s = time.perf_counter() - t0
        print(f"read_pgn CPU (all threads): {time.process_time() - cpu0:.2f} s")
        games = result.rows.height + result.quarantine.height
        fast_rate = games / fast_s
        print(f"read_pgn:      {games:,} games in {fast_s:.2f} s = {fast_rate:,.0f} games/s")

        limit = min(args.baseline_games, args.games)
        n, base_s = time_read_headers(path, limit)
        base_rate = n / base_s
        scaled = "" if n >= args.games else f" (prefix of {n:,} games, rate scaled to the file)"
        print(f"read_headers:  {n:,} games in {base_s:.2f} s = {base_rate:,.0f} games/s{scaled}")
        print(f"ratio: {fast_rate / base_rate:.1f}x faster than python-chess read_headers")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS: {rss:,.0f} MB (file {size / 1e6:,.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
