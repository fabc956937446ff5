"""A run's memory budget (`--memory`): sizes as people write them, and what the budget sets of
the streamed work (how much text is read at a time, the largest zstd window accepted, the
longest stretch of a file without a game boundary) and of the per-player state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


def show_size(size: float) -> str:
    """`3.0 GiB`, `512 MiB`: a size in the largest binary unit it fills."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 10 and unit == "GiB" else f"{value:.0f} {unit}"
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
    binary `show_size` otherwise), so a need and a budget read alike."""
    if not is_decimal(budget):
        return show_size(size)
    for unit, scale in (("GB", 1000**3), ("MB", 1000**2), ("KB", 1000)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 10 and unit == "GB" else f"{value:.0f} {unit}"
    return f"{size:.0f} B"


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

BASE_BYTES = 500 * 1024**2
"""What a run holds before any game or player: the interpreter, Polars, numba, Dagster."""

BATCH_GAMES = 500_000
"""Games a streamed replay rates at a time (a batch and its history rows, about 0.5 GB at most)."""

SORT_MEMORY = 512 * 1024**2
"""What the sort putting a period's games in replay order may hold before it spills to disk."""

LIST_ROWS = 1_000_000
"""List rows a publication holds at a time (a few periods' lists, about 0.3 KB a row)."""

PLAYER_BYTES = 600
"""A player's share of a rating run, measured (issue 31: 586 bytes a player for the site lists'
state, ids and names)."""


@dataclass(frozen=True)
class MemoryBudget:
    """A run's budget in bytes (None: none given, the defaults) and the sizes it implies."""

    total: int | None = None

    @property
    def text_window(self) -> int:
        """Text read at a time from a streamed file: three windows are in flight, each with
        the rows made of it, so a thirty-second of the budget each (at least 4 MiB)."""
        if self.total is None:
            return WINDOW_MAX
        return max(4 << 20, min(WINDOW_MAX, self.total // 32))

    @property
    def csv_rows(self) -> int:
        """Rows read at a time from a CSV file: a sixteenth of the budget at `CSV_ROW_BYTES`
        a row (at least 10,000 rows)."""
        if self.total is None:
            return CSV_ROWS
        return max(10_000, min(CSV_ROWS, self.total // 16 // CSV_ROW_BYTES))

    @property
    def zstd_window(self) -> int:
        """The largest zstd window a file may ask for: a quarter of the budget."""
        if self.total is None:
            return ZSTD_WINDOW_LIMIT
        return min(ZSTD_WINDOW_LIMIT, self.total // 4)

    @property
    def stretch(self) -> int:
        """The longest stretch of a file without a game boundary: an eighth of the budget (the
        window holding it is doubled until it fits, and copied once)."""
        if self.total is None:
            return STRETCH_LIMIT
        return min(STRETCH_LIMIT, self.total // 8)

    @property
    def batch_games(self) -> int:
        """Games a streamed replay rates at a time: about 1 KB each with their history, a
        sixth of the budget (at least 10,000)."""
        if self.total is None:
            return BATCH_GAMES
        return max(10_000, min(BATCH_GAMES, self.total // 6 // 1024))

    @property
    def sort_memory(self) -> int:
        """What the sort of a period's games may hold before spilling: a sixth of the budget
        (at least 32 MiB)."""
        if self.total is None:
            return SORT_MEMORY
        return max(32 << 20, min(SORT_MEMORY, self.total // 6))

    @property
    def list_rows(self) -> int:
        """List rows a publication holds at a time: about 1 KB each with their files being
        written, a sixth of the budget (at least 50,000)."""
        if self.total is None:
            return LIST_ROWS
        return max(50_000, min(LIST_ROWS, self.total // 6 // 1024))

    def players_fit(self, players: int) -> bool:
        """Whether `players` players' state fits in the budget beside the run's base."""
        return self.total is None or BASE_BYTES + players * PLAYER_BYTES <= self.total
