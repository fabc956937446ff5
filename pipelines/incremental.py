"""Which periods a run must recompute: from the first period whose inputs changed, on.

A list of period P depends on the lists of every earlier period, so a late result or a
moderation decision in P is a backfill from P on (DESIGN §6); periods before it keep their
published lists and their state in the lake. Each period's inputs are digested after ingest and
compared with the digests the last complete run recorded (`lake/run_inputs/`).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from assets.period_io import code_version
from rating_core import tables
from rating_core.lake import digests as lake_digests
from rating_core.lake.storage import read_table, write_table

RUN_INPUTS_SCHEMA = lake_digests.RUN_INPUTS_SCHEMA


def period_input_digests(lake: Path, periods: list[str]) -> pl.DataFrame:
    """One digest per period over everything its lists are computed from (besides P-1)."""
    return lake_digests.period_input_digests(lake, periods, code_version())


def periods_to_run(lake: Path, periods: list[str], digests: pl.DataFrame) -> list[str]:
    """The periods from the first whose digest differs from the last complete run's, on."""
    recorded = read_table(lake, tables.RUN_INPUTS).collect()
    if not recorded.height:
        return periods
    before = dict(zip(recorded["period"], recorded["digest"], strict=True))
    for index, (period, digest) in enumerate(digests.iter_rows()):
        if before.get(period) != digest:
            return periods[index:]
    return []


def record_run_inputs(lake: Path, digests: pl.DataFrame) -> None:
    """Remember the digests of a run that completed every period."""
    write_table(lake, tables.RUN_INPUTS, digests)
