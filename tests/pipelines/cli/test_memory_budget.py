"""`ratings run --memory`, end to end (issue 31 item 4): a run that is accepted peaks within its
budget, a month whose players cannot be rated within it is refused during its ingest, within the
budget too, and a budget below what every run holds is refused before any work.

The peak is the `ratings` process's own (`os.wait4`'s `ru_maxrss`, as `/usr/bin/time` reports
it), of a run over a generated Lichess-style month at the tightest budget the run accepts: its
base, players and games set aside, the windows, batches and sorts at their least.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from rating_core.budget import BASE_BYTES, MemoryBudget, run_need
from rating_core.ingest.pgn_synth import LichessMonth
from rating_core.lake.run_size import run_size

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
GAMES = 20_000
PLAYERS = 6_000


PEAK_OF = (
    "import os, subprocess, sys\n"
    "with subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL) as proc:\n"
    "    _, status, usage = os.wait4(proc.pid, 0)\n"
    "    proc.returncode = os.waitstatus_to_exitcode(status)\n"
    "print(proc.returncode, usage.ru_maxrss)\n"
)
"""A small launcher that runs a command and prints its exit status and peak RSS (KiB). The
launcher, not the test process, starts `ratings`: a child started from a process inherits that
process's own peak in `ru_maxrss` until it execs (Python starts children with vfork, and the
kernel hands the parent's high-water mark to the child at exec), so a test process that once
held 700 MiB would make any run it starts seem to peak there."""


def ratings_peak(*args: str) -> tuple[int, int, str]:
    """Run `ratings ARGS` in a fresh process: (exit status, peak RSS in bytes, stderr)."""
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    env.pop("RATINGS_DEBUG", None)
    ran = subprocess.run(
        [sys.executable, "-c", PEAK_OF, sys.executable, "-m", "pipelines.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    status, peak = ran.stdout.split()
    return int(status), int(peak) * 1024, ran.stderr  # ru_maxrss is in KiB on Linux


def month_inbox(folder: Path) -> Path:
    """An inbox holding one generated month of `GAMES` games among up to `PLAYERS` players, as a
    platform's `.pgn.zst` dump."""
    inbox = folder / "inbox"
    (inbox / "platform").mkdir(parents=True)
    month = LichessMonth(GAMES, seed=4, n_players=PLAYERS, month="2024-01")
    path = inbox / "platform" / "lichess_2024-01.pgn.zst"
    with path.open("wb") as raw, zstandard.ZstdCompressor(level=1).stream_writer(raw) as writer:
        for block in month.blocks():
            writer.write(block)
    return inbox


def test_an_accepted_run_peaks_within_its_memory_budget(tmp_path: Path) -> None:
    inbox = month_inbox(tmp_path)
    # the tightest budget this month is accepted in: its base, its players (at most PLAYERS)
    # and games set aside, every window, batch and sort at its least
    budget = run_need(PLAYERS, GAMES) // 1024**2 + 1
    lake = tmp_path / "lake"
    status, peak, err = ratings_peak(
        "run", "--inbox", str(inbox), "--lake", str(lake), "--memory", f"{budget}MiB"
    )
    assert status == 0, err
    assert (lake / "lists").is_dir()
    players, games = run_size(lake)
    assert games == GAMES and 0 < players <= PLAYERS
    assert peak <= budget * 1024**2, f"peak {peak / 1024**2:.0f} MiB over {budget} MiB"


def test_a_month_whose_players_cannot_fit_is_refused_during_its_ingest_within_the_budget(
    tmp_path: Path,
) -> None:
    inbox = month_inbox(tmp_path)
    # room for a quarter of the month's players beside its games: refused as soon as the
    # ingest has counted more, long before the month's every player is held
    budget = run_need(PLAYERS // 4, GAMES) // 1024**2
    lake = tmp_path / "lake"
    status, peak, err = ratings_peak(
        "run", "--inbox", str(inbox), "--lake", str(lake), "--memory", f"{budget}MiB"
    )
    assert status == 2, err
    [line] = err.strip().splitlines()[-1:]
    found = re.match(
        r"ratings: platform/lichess_2024-01\.pgn\.zst names at least (?P<players>[\d,]+) "
        r"players in its first (?P<games>[\d,]+) games, which need at least .* more than the "
        rf"--memory budget of {budget} MiB: give --memory (?P<give>\d+)MiB or more$",
        line,
    )
    assert found, err
    players, games = (int(found[key].replace(",", "")) for key in ("players", "games"))
    assert 0 < games < GAMES and players <= PLAYERS
    assert not MemoryBudget.for_run(budget * 1024**2).fits(players, games)
    assert int(found["give"]) * 1024**2 >= run_need(players, games)
    assert not list(lake.glob("games/*/*.parquet")) and not (lake / "lists").exists()
    assert peak <= budget * 1024**2, f"peak {peak / 1024**2:.0f} MiB over {budget} MiB"


def test_a_budget_below_what_every_run_holds_is_refused_before_the_ingest(
    tmp_path: Path,
) -> None:
    lake = tmp_path / "lake"
    status, peak, err = ratings_peak("run", "--lake", str(lake), "--memory", "300MiB")
    least = BASE_BYTES // 1024**2
    assert status == 2
    assert err.strip() == (
        f"ratings: --memory 300MiB is less than the {least} MiB that every run holds before any "
        "game or player (Python, Polars, DuckDB, Dagster and the rating kernels): give "
        f"--memory {least}MiB or more"
    )
    assert not lake.exists()  # refused before the ingest: nothing was read or written
