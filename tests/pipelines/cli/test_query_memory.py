"""`ratings query --memory`: a sort larger than the budget spills to disk and finishes (issue 31,
item 8), and a query that cannot fit is one plain sentence naming the budget as it was given."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.support.inbox import assert_one_sentence, ratings

pytestmark = pytest.mark.e2e

ROWS = 1_000_000
ROW_GROUP = 500_000
"""Row groups as large as a run writes them (a 1M-game lake's `history_site` has 670k-row groups):
DuckDB's Parquet prefetching reads a whole one ahead, every column, outside the budget's
spillable memory."""


def _wide_history(lake: Path) -> Path:
    """A `history_site` partition of ROWS random rows (three id columns, ten numbers: about
    90 MB of Parquet), as incompressible as real ids and ratings."""
    rng = np.random.default_rng(31)
    keys = pl.Series(rng.integers(0, 2**62, ROWS))
    columns: dict[str, pl.Series] = {
        "game_id": keys.hash(1).cast(pl.String),
        "player_id": "Pawn" + (keys.hash(2) % 1_000_000).cast(pl.String),
        "opponent_id": "Pawn" + (keys.hash(3) % 1_000_000).cast(pl.String),
    }
    for k in range(10):
        columns[f"x{k}"] = pl.Series(rng.random(ROWS))
    folder = lake / "history" / "site" / "period=2024-01"
    folder.mkdir(parents=True)
    pl.DataFrame(columns).write_parquet(folder / "part-0.parquet", row_group_size=ROW_GROUP)
    return lake


@pytest.mark.slow
def test_a_sort_of_every_column_spills_and_finishes_within_100mb(tmp_path: Path) -> None:
    """Before: DuckDB failed at once ("could not allocate block of size 256.0 KiB (95.2 MiB/95.3
    MiB used)"): its two threads and the prefetched row groups left the sort nothing to spill.
    Every row and column goes through the sort; the last ten rows come out (writing a million
    rows of CSV would time Python's csv module, not the sort)."""
    lake = _wide_history(tmp_path / "lake")
    frame = pl.read_parquet(lake / "history" / "site" / "period=2024-01" / "part-0.parquet")
    proc = ratings(
        "query",
        "--csv",
        "--memory",
        "100MB",
        f"SELECT * FROM history_site ORDER BY x0 OFFSET {ROWS - 10}",
        "--lake",
        str(lake),
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    largest = frame.sort("x0").tail(10)
    assert [row["game_id"] for row in rows] == largest.get_column("game_id").to_list()
    assert [float(row["x9"]) for row in rows] == largest.get_column("x9").to_list()
    assert list(rows[0]) == [*frame.columns, "period"]


def test_a_query_beyond_its_budget_is_one_sentence_with_the_budget_as_given(
    tmp_path: Path,
) -> None:
    """One string of ~800 MB cannot spill: the sentence names `100 MB` (not `95.4 MiB`), says
    what to try, and carries none of DuckDB's block sizes."""
    lake = tmp_path / "lake"
    lake.mkdir()
    sql = (
        "SELECT length(string_agg(range::VARCHAR || 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', ',')) "
        "FROM range(20000000)"
    )
    proc = ratings("query", "--memory", "100MB", sql, "--lake", str(lake))
    err = assert_one_sentence(proc)
    assert proc.returncode == 2
    assert err.startswith("ratings: the memory budget of 100 MB is too small for this query")
    assert "--memory 1GB" in err
    for internal in ("MiB", "KiB", "allocate", "block", "Out of Memory"):
        assert internal not in err, err
