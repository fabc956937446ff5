"""Which periods a run must recompute: from the first period whose inputs changed, on.

A list of period P depends on the lists of every earlier period, so a late result or a
moderation decision in P is a backfill from P on (DESIGN §6); periods before it keep their
published lists and their state in the lake. Each period's inputs are digested after ingest and
compared with the digests the last complete run recorded (`lake/run_inputs/`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl

from assets.period_io import code_version
from rating_core.lake.storage import PART_FILE, read_table, write_table
from rating_core.periods import previous_period

RUN_INPUTS = "run_inputs"
RUN_INPUTS_SCHEMA: dict[str, pl.DataType] = {"period": pl.String, "digest": pl.String}


def _file_bytes(path: Path) -> bytes:
    return path.read_bytes() if path.is_file() else b"-"


def period_input_digests(lake: Path, periods: list[str]) -> pl.DataFrame:
    """One digest per period over everything its lists are computed from (besides P-1)."""
    common = hashlib.sha256()
    common.update(code_version().encode())
    common.update(_file_bytes(lake / "players" / PART_FILE))
    moderation = read_table(lake, "moderation").collect()
    starts = read_table(lake, "starting_lists").collect()
    games = read_table(lake, "games").select("game_id", "period").collect()
    annulled = moderation.join(games, on="game_id").sort("game_id") if moderation.height else None
    rows = []
    for period in periods:
        digest = common.copy()
        for table in ("games", "matches"):
            digest.update(_file_bytes(lake / table / f"period={period}" / PART_FILE))
        if annulled is not None:
            mine = annulled.filter(pl.col("period") == period).drop("period")
            digest.update(mine.write_csv().encode())
        if starts.height:
            official = starts.filter(pl.col("period") == previous_period(period))
            digest.update(official.sort("list", "player_id").write_csv().encode())
        rows.append({"period": period, "digest": digest.hexdigest()})
    return pl.DataFrame(rows, schema=RUN_INPUTS_SCHEMA)


def periods_to_run(lake: Path, periods: list[str], digests: pl.DataFrame) -> list[str]:
    """The periods from the first whose digest differs from the last complete run's, on."""
    recorded = read_table(lake, RUN_INPUTS).collect()
    if not recorded.height:
        return periods
    before = dict(zip(recorded["period"], recorded["digest"], strict=True))
    for index, (period, digest) in enumerate(digests.iter_rows()):
        if before.get(period) != digest:
            return periods[index:]
    return []


def record_run_inputs(lake: Path, digests: pl.DataFrame) -> None:
    """Remember the digests of a run that completed every period."""
    write_table(lake, RUN_INPUTS, digests)
