"""A run's memory budget (`--memory`): sizes as people write them, and what the budget sets of
the streamed work (how much text is read at a time, the largest zstd window accepted, the
longest stretch of a file without a game boundary) and of the per-player state.

A run's peak is what it holds whatever its input (`BASE_BYTES`), what its players and games
cost (`PLAYER_BYTES`, `GAME_BYTES`), and the work in flight (text windows, batches, sorts,
list rows): the sizes of that work share out what is left of the budget once the rest is held
(`MemoryBudget.free`), so the peak stays within the budget (checked end to end by
tests/pipelines/cli/test_memory_budget.py). Players and games that cannot fit are refused in
one sentence (`players_refusal`): by the ingest as soon as a file's players so far cannot
(`MemoryBudget.players_room`), before it holds them all, and before rating when the lake's
together cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

UNITS = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "k": 1024,
    "m": 1024**2,
    "g": 1024**3,
    "t": 1024**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
"""Memory units: KB, MB, GB are powers of 1000 (as DuckDB reads them), KiB, MiB, GiB and the
bare letters K, M, G (as `ulimit` and `/usr/bin/time` users write them) powers of 1024."""

_SIZE = re.compile(r"^\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[A-Za-z]*)\s*$")

LEAST_MEMORY = 64 * 1024**2
"""The smallest budget accepted: below it not even the interpreter and its libraries fit."""


class BudgetError(ValueError):
    """A `--memory` value that is not a size, or too small: the message is one sentence."""


def memory_bytes(text: str, least: int = LEAST_MEMORY) -> int:
    """A memory budget (`3G`, `2GB`, `512MiB`, `1.5GiB`) in bytes; BudgetError if it is not a
    size or is below `least`."""
    match = _SIZE.match(text)
    unit = match.group("unit").lower() if match else ""
    if not match or unit not in UNITS:
        raise BudgetError(f"--memory takes a size such as 3G, 2GB or 512MiB, not {text!r}")
    size = int(float(match.group("number")) * UNITS[unit])
    if size < least:
        raise BudgetError(f"--memory must be at least {show_size(least)}, not {text!r}")
    return size


BINARY_UNITS = (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024), ("B", 1))
DECIMAL_UNITS = (("GB", 1000**3), ("MB", 1000**2), ("KB", 1000), ("B", 1))
"""The unit families sizes are shown in, the larger first: binary unless a budget was given in
decimal units (`show_size_like`)."""


def show_size(size: float, units: tuple[tuple[str, int], ...] = BINARY_UNITS) -> str:
    """`3.0 GiB`, `512 MiB`: a size in the largest unit it fills, or would show as filling in the
    unit below (1 GiB less a byte is `1.0 GiB`, never `1024 MiB`); `DECIMAL_UNITS` for `3.0 GB`."""
    for (unit, scale), (_, below) in pairwise(units):
        if size >= scale - below / 2:  # from here the unit below would show 1024 of itself
            value = size / scale
            large = unit in ("GiB", "GB")
            return f"{value:.1f} {unit}" if value < 10 and large else f"{value:.0f} {unit}"
    return f"{size:.0f} B"


_EXACT_UNITS = (
    ("GB", 1000**3),
    ("GiB", 1024**3),
    ("MB", 1000**2),
    ("MiB", 1024**2),
    ("KB", 1000),
    ("KiB", 1024),
)
"""The units a budget is named in, the larger first, decimal before binary."""


def _exact(size: int) -> tuple[str, str] | None:
    """A size as a number with one decimal at most and the largest unit that states it exactly
    (`100000000` -> `100`, `MB`; `1610612736` -> `1.5`, `GiB`); None if no unit does."""
    for unit, scale in _EXACT_UNITS:
        if size >= scale and (size * 10) % scale == 0:
            tenths = size * 10 // scale
            number = str(tenths // 10) if tenths % 10 == 0 else f"{tenths / 10:.1f}"
            return number, unit
    return None


def show_budget(size: int) -> str:
    """A memory budget as the user wrote it (`--memory 100MB` is `100 MB`, `512MiB` is
    `512 MiB`, `1.5GiB` is `1.5 GiB`): in the unit that states it exactly, so a budget is never
    shown converted (`100MB` as `95.4 MiB`); `show_size` when no unit does."""
    exact = _exact(size)
    return f"{exact[0]} {exact[1]}" if exact else show_size(size)


def is_decimal(size: int) -> bool:
    """True when `show_budget` names `size` in a decimal unit (MB, GB): sizes compared with it
    are then shown in decimal units too."""
    exact = _exact(size)
    return exact is not None and not exact[1].endswith("iB")


def show_size_like(size: float, budget: int) -> str:
    """`size` in the unit family of `budget` (decimal `1.2 GB` beside a budget given in GB,
    binary `1.2 GiB` otherwise), so a need and a budget read alike."""
    return show_size(size, DECIMAL_UNITS if is_decimal(budget) else BINARY_UNITS)


WINDOW_MAX = 64 << 20
"""The most text a streamed file is read in at a time (`pgn_stream.WINDOW_BYTES`)."""

CSV_ROWS = 200_000
"""The most rows a CSV file is read in at a time (`csv_games.CsvChunks`): a 3M-row platform
export ingests at a peak of 0.77 GB with it (2.9 GB read whole), as fast as whole."""

CSV_ROW_BYTES = 2048
"""What a row of a chunk costs while the chunk is read, checked and written (the chunk being
checked, the one being written, Polars' read-ahead): measured 1.8 KB for a 90-byte platform
row, from the peaks at 500,000 and 65,000 rows a chunk."""

ZSTD_WINDOW_LIMIT = 1 << 31
"""zstd's own largest window (`zstd --long=31`)."""

STRETCH_LIMIT = (1 << 30) - 1
"""The scanner's longest stretch without a game boundary (`pgn_scan.CHUNK_MAX`)."""

ZSTD_WINDOW_LEAST = 8 << 20
"""The zstd window accepted in any budget: what `zstd` uses up to level 19 without `--long`."""

STRETCH_LEAST = 16 << 20
"""The stretch without a game boundary accepted in any budget (a game is a few KB)."""

SORT_LEAST = 64 << 20
"""The least a sort is given: at 32 MiB DuckDB could not sort 400,000 games ("failed to pin
block"), at 64 MiB it sorted 1M games among 574,000 players."""

BASE_BYTES = 560 * 1024**2
"""What a run holds whatever its input: the interpreter, Polars, DuckDB, Arrow, numba's loaded
kernels, Dagster and its instance, and the smallest windows, batches and sorts. Measured as the
peak of `ratings run` with the work at its smallest, less the players and games below: 436 MiB
for the sample inbox (every system), 487 to 652 MiB for 50,000 to 1,000,000 Lichess-sized games
among 15,000 to 95,000 players; 560 MiB covers them with `PLAYER_BYTES` and `GAME_BYTES`."""

BATCH_GAMES = 500_000
"""Games a streamed replay rates at a time (a batch and its history rows, about 0.5 GB at most)."""

SORT_MEMORY = 512 * 1024**2
"""What the sort putting a period's games in replay order may hold before it spills to disk."""

LIST_ROWS = 1_000_000
"""List rows a publication holds at a time (a few periods' lists, about 0.3 KB a row)."""

PLAYER_BYTES = 1024
"""A player's share of a run's peak: the replay's state, ids and names, the ingest's player
sets and each list's row while it is published (measured 0.86 KB a player between 94,000 and
574,000 players at 1M games, with the work at its smallest)."""

GAME_BYTES = 48
"""A game's share of a run's peak beside the batches (the ingest's first names of players, its
id spill's bookkeeping, the allocators' caches): the peak grew 43 bytes a game from 400,000 to
1M games among about 90,000 players (every size at its least), 7.7 from 10M to 30M among 1M
(docs/performance.md); 48 keeps a 3 GiB budget for 30M games among 1M players (2.9 GiB
needed)."""


def least_run_memory() -> int:
    """The smallest budget `ratings run` accepts: what every run holds (`BASE_BYTES`)."""
    return BASE_BYTES


def run_memory_bytes(text: str) -> int:
    """`ratings run --memory` in bytes (`memory_bytes`): BudgetError, in one sentence naming the
    least, when it is below what every run holds before any game or player."""
    size = memory_bytes(text)
    least = least_run_memory()
    if size < least:
        raise BudgetError(
            f"--memory {text.strip()} is less than the {show_size_like(least, size)} that every "
            f"run holds before any game or player {_HELD_BY_EVERY_RUN}: give --memory "
            f"{memory_to_give(least, size)} or more"
        )
    return size


@dataclass(frozen=True)
class MemoryBudget:
    """A budget in bytes (None: none given, the defaults) and the sizes it implies: each a share
    of what is `free` once `held` bytes are set aside (a run's base, its players and games:
    `for_run`, `holding`)."""

    total: int | None = None
    held: int = 0

    @classmethod
    def for_run(cls, total: int | None) -> MemoryBudget:
        """A run's budget of `total` bytes, the run's base (`BASE_BYTES`) set aside."""
        return cls(total, BASE_BYTES)

    def holding(self, players: int, games: int) -> MemoryBudget:
        """This budget with `players` players' and `games` games' share set aside too."""
        return MemoryBudget(self.total, self.held + players_need(players, games))

    @property
    def free(self) -> int:
        """What the work in flight may hold: the budget less what is `held` (0 when none is
        left: every size at its least)."""
        return max(0, (self.total or 0) - self.held)

    @property
    def text_window(self) -> int:
        """Text read at a time from a streamed file: three windows are in flight, each with
        the rows made of it, so a thirty-second of the budget's free part each (at least
        4 MiB)."""
        if self.total is None:
            return WINDOW_MAX
        return max(4 << 20, min(WINDOW_MAX, self.free // 32))

    @property
    def csv_rows(self) -> int:
        """Rows read at a time from a CSV file: a sixteenth of the budget's free part at
        `CSV_ROW_BYTES` a row (at least 10,000 rows)."""
        if self.total is None:
            return CSV_ROWS
        return max(10_000, min(CSV_ROWS, self.free // 16 // CSV_ROW_BYTES))

    @property
    def zstd_window(self) -> int:
        """The largest zstd window a file may ask for: a quarter of the budget's free part (at
        least 8 MiB)."""
        if self.total is None:
            return ZSTD_WINDOW_LIMIT
        return max(ZSTD_WINDOW_LEAST, min(ZSTD_WINDOW_LIMIT, self.free // 4))

    @property
    def stretch(self) -> int:
        """The longest stretch of a file without a game boundary: an eighth of the budget's free
        part, at least 16 MiB (the window holding it is doubled until it fits, and copied
        once)."""
        if self.total is None:
            return STRETCH_LIMIT
        return max(STRETCH_LEAST, min(STRETCH_LIMIT, self.free // 8))

    @property
    def batch_games(self) -> int:
        """Games a streamed replay rates at a time: about 1 KB each with their history, a
        sixth of the budget's free part (at least 10,000)."""
        if self.total is None:
            return BATCH_GAMES
        return max(10_000, min(BATCH_GAMES, self.free // 6 // 1024))

    @property
    def sort_memory(self) -> int:
        """What the sort of a period's games may hold before spilling: a sixth of the budget's
        free part (at least `SORT_LEAST`)."""
        if self.total is None:
            return SORT_MEMORY
        return max(SORT_LEAST, min(SORT_MEMORY, self.free // 6))

    @property
    def list_rows(self) -> int:
        """List rows a publication holds at a time: about 1 KB each with their files being
        written, a sixth of the budget's free part (at least 50,000)."""
        if self.total is None:
            return LIST_ROWS
        return max(50_000, min(LIST_ROWS, self.free // 6 // 1024))

    def fits(self, players: int, games: int) -> bool:
        """Whether a run's base and `players` players' and `games` games' share fit in the
        budget (always, without one)."""
        return self.total is None or run_need(players, games) <= self.total

    def players_room(self, games: int) -> int | None:
        """The most players a run over `games` games can be rated with in the budget: `fits`
        holds for exactly those counts (negative when the games alone do not fit; None: no
        budget, any count)."""
        if self.total is None:
            return None
        return (self.total - BASE_BYTES - games * GAME_BYTES) // PLAYER_BYTES


def players_need(players: int, games: int) -> int:
    """What `players` players and `games` games add to a run's peak (beside the base)."""
    return players * PLAYER_BYTES + games * GAME_BYTES


def run_need(players: int, games: int) -> int:
    """The least budget a run over `players` players and `games` games can be rated in."""
    return BASE_BYTES + players_need(players, games)


class OverBudgetError(Exception):
    """A run's players and games cannot fit its `--memory` budget: the message is one sentence
    (`players_refusal`), and the run publishes nothing."""


_HELD_BY_EVERY_RUN = "(Python, Polars, DuckDB, Dagster and the rating kernels)"


def players_refusal(counted: str, players: int, games: int, total: int, least: bool) -> str:
    """The sentence refusing a run whose `players` players and `games` games do not fit the
    budget of `total` bytes: `counted` says whose they are, ending on the verb (`the lake's
    N players and M games need`); `least` when they are counts so far (an ingest that stopped
    there: the sizes are "at least"). Sizes in the budget's own unit family, the budget as the
    user gave it, and the `--memory` to give, rounded up."""
    need = run_need(players, games)

    def size(value: int) -> str:
        return show_size_like(value, total)

    about = "at least" if least else "about"
    return (
        f"{counted} {about} {size(players_need(players, games))} beside the "
        f"{size(BASE_BYTES)} that every run holds {_HELD_BY_EVERY_RUN}, "
        f"{'at least ' if least else ''}{size(need)} in all, more than the --memory budget of "
        f"{show_budget(total)}: give --memory {memory_to_give(need, total)} or more"
    )


def memory_to_give(need: int, budget: int) -> str:
    """The `--memory` to suggest for `need` bytes, rounded up to a whole MB or MiB as `budget`
    was given (`588MB` beside `--memory 300MB`, `560MiB` beside `--memory 300MiB`)."""
    mega, unit = (1000**2, "MB") if is_decimal(budget) else (1024**2, "MiB")
    return f"{-(-need // mega)}{unit}"
