"""PGN ingest benchmark: `read_pgn` games/s against python-chess `read_headers` (DESIGN §8).

Usage: `.venv/bin/python benchmarks/ingest.py [--games N] [--baseline-games M] [--repeat R]`.
Generates a Lichess-style file in a temporary directory, times both readers and prints the
ratio, the peak RSS while `read_pgn` ran and the load average (other work on the machine slows
either reader; both are timed in the same run, so the ratio suffers less than the rates).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import chess.pgn  # noqa: E402

from rating_core.ingest.pgn import read_pgn  # noqa: E402
from rating_core.ingest.pgn_synth import generate_pgn  # noqa: E402

STATUS = Path("/proc/self/status")


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def reset_peak_rss() -> bool:
    """Start a new peak RSS measurement (Linux: `/proc/self/clear_refs`); False if impossible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def peak_rss_mb() -> float:
    """Peak resident set size in MB since the last reset (the process's peak elsewhere)."""
    if STATUS.exists():
        for line in STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def time_read_headers(path: Path, limit: int) -> tuple[int, float, float]:
    """Games read, seconds and CPU seconds taken by `chess.pgn.read_headers` over at most
    `limit` games."""
    n = 0
    start, cpu = time.perf_counter(), time.process_time()
    with path.open(encoding="utf-8") as handle:
        while n < limit and chess.pgn.read_headers(handle) is not None:
            n += 1
    return n, time.perf_counter() - start, time.process_time() - cpu


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
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="time each reader this many times and keep each one's best run",
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
        print(f"peak RSS so far (generating the file): {peak_rss_mb():,.0f} MB")

        fast_s, fast_cpu, games, rss, fast_load = float("inf"), 0.0, 0, 0.0, ""
        for _ in range(args.repeat):
            peak_reset = reset_peak_rss()
            now = load()
            t0, cpu0 = time.perf_counter(), time.process_time()
            result = read_pgn(path)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            if seconds < fast_s:
                fast_s, fast_cpu, fast_load = seconds, cpu, now
                games = result.rows.height + result.quarantine.height
                rss = peak_rss_mb() if peak_reset else float("nan")
            del result
        print(f"load average before read_pgn: {fast_load}")
        print(f"read_pgn CPU (all threads): {fast_cpu:.2f} s")
        fast_rate = games / fast_s
        print(f"read_pgn:      {games:,} games in {fast_s:.2f} s = {fast_rate:,.0f} games/s")

        limit = min(args.baseline_games, args.games)
        base_s, base_cpu, n, base_load = float("inf"), 0.0, 0, ""
        for _ in range(args.repeat):
            now = load()
            n, seconds, cpu = time_read_headers(path, limit)
            if seconds < base_s:
                base_s, base_cpu, base_load = seconds, cpu, now
        print(f"load average before read_headers: {base_load}")
        print(f"read_headers CPU: {base_cpu:.2f} s")
        base_rate = n / base_s
        scaled = "" if n >= args.games else f" (prefix of {n:,} games, rate scaled to the file)"
        print(f"read_headers:  {n:,} games in {base_s:.2f} s = {base_rate:,.0f} games/s{scaled}")
        best = f" (best of {args.repeat} runs each)" if args.repeat > 1 else ""
        print(f"ratio: {fast_rate / base_rate:.1f}x faster than python-chess read_headers{best}")
        print(
            f"peak RSS during read_pgn: {rss:,.0f} MB (file {size / 1e6:,.0f} MB, memory-mapped"
            " and counted in RSS)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
