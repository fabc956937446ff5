"""Sequential replay benchmark (DESIGN §8): site Elo and FIBS games/s against a plain Python loop.

Generates synthetic games in Polars, times the full engine (Polars preparation + numba kernel,
end state only), times a plain-Python implementation of the same rules on a slice, checks that
both agree on that slice, and prints games/s, the ratio and peak RSS.

    .venv/bin/python benchmarks/replay.py [--games N] [--players M] [--slice S] [--repeat R]

The machine may be shared: both the engine and the plain loop are timed `--repeat` times and
the best of each is compared (every time is printed), with the load average beside them.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import numpy as np
import polars as pl

from rating_core.text import format_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rating_core.schemas import CATEGORIES, GAMES_SCHEMA, PLAYERS_SCHEMA, conform  # noqa: E402
from rating_core.systems.fibs.replay import fibs_replay  # noqa: E402
from rating_core.systems.site.replay import site_replay  # noqa: E402
from rating_core.systems.site.rules import SITE_RULES  # noqa: E402
from tests.support.fibs_reference import fibs_reference  # noqa: E402

R = TypeVar("R")
T0 = datetime(2024, 1, 1, tzinfo=UTC)
SPAN_US = 365 * 24 * 3600 * 1_000_000  # one year of games: 12 periods
N_BOTS = 20


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load() -> str:
    """The 1, 5 and 15-minute load averages (other jobs on the machine)."""
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def timed(repeat: int, run: Callable[[], R]) -> tuple[float, list[float], R]:
    """(best time, every time, last result) of `repeat` (at least 1) calls of `run`."""
    times = []
    for _ in range(repeat - 1):
        t = time.perf_counter()
        run()  # the result is dropped at once: one run's memory at a time
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    result = run()
    times.append(time.perf_counter() - t)
    return min(times), times, result


def runs(times: list[float]) -> str:
    return "runs " + ", ".join(f"{x:.2f}" for x in times) + "s"


def synth_games(n: int, players: int, seed: int = 7) -> tuple[pl.DataFrame, pl.DataFrame]:
    """n platform games among `players` humans and a few bots, with every exclusion present."""
    rng = np.random.default_rng(seed)
    white = rng.integers(0, players, n)
    black = (white + rng.integers(1, players, n)) % players
    vs_bot = rng.random(n) < 0.02
    human_cats = np.array([i for i, c in enumerate(CATEGORIES) if c != "bots"])
    cat = human_cats[rng.integers(0, len(human_cats), n)]
    cat[vs_bot] = CATEGORIES.index("bots")
    t = np.sort(rng.integers(0, SPAN_US, n))
    frame = pl.DataFrame(
        {
            "_i": np.arange(n),
            "_w": white,
            "_b": black,
            "_bot": vs_bot,
            "_botid": rng.integers(0, N_BOTS, n),
            "_t": t,
            "white_score": rng.choice(np.array([0.0, 0.5, 1.0]), n),
            "_cat": cat.astype(np.uint8),
            "rated": rng.random(n) > 0.05,
            "plies": rng.integers(0, 120, n).astype(np.int32),
            "_term": rng.random(n),
            "otb_confirmed": rng.random(n) > 0.1,
        }
    )
    term = (
        pl.when(pl.col("_term") < 0.01)
        .then(pl.lit("abort"))
        .when(pl.col("_term") < 0.1)
        .then(pl.lit("timeout"))
        .otherwise(pl.lit("normal"))
    )
    games = frame.select(
        format_text("g{}", pl.col("_i")).alias("game_id"),
        pl.lit("platform").alias("source"),
        pl.from_epoch(pl.col("_t"), time_unit="us").dt.replace_time_zone("UTC").alias("played_at"),
        format_text("p{}", pl.col("_w")).alias("white_id"),
        pl.when(pl.col("_bot"))
        .then(format_text("bot{}", pl.col("_botid")))
        .otherwise(format_text("p{}", pl.col("_b")))
        .alias("black_id"),
        # A bot never loses on time in the synthetic data (that would be quarantined).
        pl.when(pl.col("_bot") & (pl.col("white_score") == 1.0))
        .then(pl.lit("normal"))
        .otherwise(term)
        .alias("termination"),
        "white_score",
        pl.col("_cat")
        .cast(pl.Int64)
        .replace_strict(list(range(len(CATEGORIES))), CATEGORIES)
        .alias("category"),
        "rated",
        pl.lit("finished").alias("status"),
        "plies",
        pl.when(pl.col("_cat") == CATEGORIES.index("otb"))
        .then(pl.lit("otb"))
        .otherwise(pl.lit("live"))
        .alias("kind"),
        "otb_confirmed",
    ).with_columns(pl.col("played_at").dt.strftime("%Y-%m").alias("period"))
    games = conform(games, GAMES_SCHEMA)
    bots = conform(
        pl.DataFrame(
            {
                "player_id": [f"bot{i}" for i in range(N_BOTS)],
                "is_bot": [True] * N_BOTS,
                "bot_rating": [1000 + 50 * i for i in range(N_BOTS)],
            }
        ),
        PLAYERS_SCHEMA,
    )
    return games, bots


def python_site(games: list[dict], bots: dict[str, float], annulled: set[str]) -> dict:
    """The site rules as a plain Python loop over dict rows (the baseline)."""
    r = SITE_RULES
    weights = dict(r.weights)
    ratings: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = defaultdict(int)
    rated = []
    for g in games:
        if g["game_id"] in annulled or g["rated"] is False or g["status"] == "aborted":
            continue
        if g["termination"] == "abort" or (g["plies"] is not None and g["plies"] < r.min_plies):
            continue
        if g["kind"] == "otb" and not g["otb_confirmed"]:
            continue
        wb, bb = g["white_id"] in bots, g["black_id"] in bots
        if wb and bb:
            continue
        score = g["white_score"]
        if g["termination"] == "bot_no_move" and (wb or bb):
            if g["plies"] < r.bot_no_move_min_plies:
                continue
            score = 1.0 if wb else 0.0
        rated.append((g["period"], g["played_at"], g["game_id"], g, wb, bb, score))
    rated.sort(key=lambda x: (x[0], x[1], x[2]))
    for _, _, _, g, wb, bb, score in rated:
        cat = "bots" if (wb or bb) else g["category"]
        for number, weight in (("site-elo", weights[cat]), ("site-" + cat, 1.0)):
            w, b = g["white_id"], g["black_id"]
            rw = bots[w] if wb else ratings.get((w, number), r.start)
            rb = bots[b] if bb else ratings.get((b, number), r.start)
            for p, me, opp, s, is_bot in ((w, rw, rb, score, wb), (b, rb, rw, 1.0 - score, bb)):
                if is_bot:
                    continue
                key = (p, number)
                k = r.k_new if counts[key] < r.k_threshold else r.k_established
                e = 1.0 / (1.0 + 10.0 ** ((opp - me) / 400.0))
                ratings[key] = max(r.floor, me + k * weight * (s - e))
                counts[key] += 1
    return ratings


def synth_matches(n: int, players: int, seed: int = 11) -> pl.DataFrame:
    """n ranked backgammon matches; half between fixed friend pairs so fair play triggers."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, players, n)
    friend = rng.random(n) < 0.5
    b = np.where(friend, a ^ 1, (a + rng.integers(1, players, n)) % players)
    b = np.where(b == a, (a + 1) % players, b)
    swap = rng.random(n) < 0.5
    t = np.sort(rng.integers(0, SPAN_US // 50, n))  # about a week: dense pairs
    frame = pl.DataFrame(
        {
            "_i": np.arange(n),
            "_w": np.where(swap, b, a),
            "_l": np.where(swap, a, b),
            "_t": t,
            "length": rng.choice(np.array([1, 3, 5, 7, 9, 11], dtype=np.int32), n),
            "ranked": rng.random(n) > 0.03,
            "vs_ai": rng.random(n) < 0.02,
        }
    )
    return frame.select(
        format_text("m{}", pl.col("_i")).alias("match_id"),
        pl.from_epoch(pl.col("_t"), time_unit="us").dt.replace_time_zone("UTC").alias("ended_at"),
        pl.lit("2024-01").alias("period"),
        format_text("p{}", pl.col("_w")).alias("winner_id"),
        format_text("p{}", pl.col("_l")).alias("loser_id"),
        "length",
        "ranked",
        "vs_ai",
    )


def bench_site(n: int, players: int, slice_n: int, repeat: int) -> None:
    t = time.perf_counter()
    games, bots = synth_games(n, players)
    print(
        f"site: generated {n:,} games among {players:,} players in {time.perf_counter() - t:.1f}s"
    )
    site_replay(games.head(1000), bots, history=False)  # numba: load the cached kernel
    engine_s, times, result = timed(repeat, lambda: site_replay(games, bots, history=False))
    engine_rate = n / engine_s
    print(
        f"site: engine {engine_s:.2f}s for {n:,} games ({result.rated_games:,} rated) "
        f"= {engine_rate:,.0f} games/s (Polars preparation + numba kernel, end state; "
        f"{runs(times)}; {load()})"
    )
    del result

    sample = games.head(slice_n)
    rows = sample.with_columns(pl.col("category").cast(pl.String)).to_dicts()
    bot_ratings = {b: float(r) for b, r in zip(bots["player_id"], bots["bot_rating"], strict=True)}
    py_s, times, expected = timed(repeat, lambda: python_site(rows, bot_ratings, set()))
    py_rate = slice_n / py_s
    print(
        f"site: plain Python loop {py_s:.2f}s for {slice_n:,} games = {py_rate:,.0f} games/s "
        f"({runs(times)}; {load()})"
    )
    ours = site_replay(sample, bots, history=False).state
    got = {
        (p, k): v for p, k, v in zip(ours["player_id"], ours["number"], ours["rating"], strict=True)
    }
    diff = max(abs(got[key] - v) for key, v in expected.items())
    assert got.keys() == expected.keys(), "engine and baseline disagree on who is rated"
    print(f"site: engine vs baseline on the slice: max |diff| = {diff:.2e}")
    print(f"site: ratio {engine_rate / py_rate:,.1f}x   peak RSS {peak_rss_mb():,.0f} MiB")


def bench_fibs(n: int, players: int, slice_n: int, repeat: int) -> None:
    t = time.perf_counter()
    ms = synth_matches(n, players)
    print(f"fibs: generated {n:,} matches in {time.perf_counter() - t:.1f}s")
    fibs_replay(ms.head(1000), history=False)
    engine_s, times, result = timed(repeat, lambda: fibs_replay(ms, history=False))
    engine_rate = n / engine_s
    print(
        f"fibs: engine {engine_s:.2f}s for {n:,} matches = {engine_rate:,.0f} matches/s "
        f"({runs(times)}; {load()})"
    )
    del result
    sample = ms.head(slice_n)
    rows = sample.to_dicts()
    py_s, times, reference = timed(repeat, lambda: fibs_reference(rows))
    expected = {player: state[0] for player, state in reference[0].items()}
    py_rate = slice_n / py_s
    print(
        f"fibs: plain Python loop {py_s:.2f}s for {slice_n:,} matches = {py_rate:,.0f} matches/s "
        f"({runs(times)}; {load()})"
    )
    ours = fibs_replay(sample, history=False).state
    got = dict(zip(ours["player_id"], ours["rating"], strict=True))
    diff = max(abs(got[p] - v) for p, v in expected.items())
    assert got.keys() == expected.keys(), "engine and baseline disagree on who is rated"
    print(f"fibs: engine vs baseline on the slice: max |diff| = {diff:.2e}")
    print(f"fibs: ratio {engine_rate / py_rate:,.1f}x   peak RSS {peak_rss_mb():,.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000_000)
    parser.add_argument("--players", type=int, default=1_000_000)
    parser.add_argument("--slice", type=int, default=200_000, help="games for the Python loop")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (best kept)")
    parser.add_argument("--skip-fibs", action="store_true")
    args = parser.parse_args()
    args.repeat = max(1, args.repeat)
    slice_n = min(args.slice, args.games)
    print(f"{load()} on {os.cpu_count()} CPUs")
    bench_site(args.games, args.players, slice_n, args.repeat)
    if not args.skip_fibs:
        bench_fibs(args.games, args.players, slice_n, args.repeat)


if __name__ == "__main__":
    main()
