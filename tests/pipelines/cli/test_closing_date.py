"""FIDE's closing date in a run (RULES §3.4): a federation tournament ending on one of the last
two days of a month is rated on the next period's FIDE lists, while UKD keeps the month of its
end date; its players' causes and the published inputs follow the FIDE period."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from rating_core.lake.storage import read_table
from tests.support.inbox import ratings

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PLAYERS = ["13400002", "34500002"]


def _games_of(lake: Path, table: str, period: str, column: str) -> dict[str, int]:
    rows = read_table(lake, table, [period]).collect()
    mine = rows.filter(pl.col("player_id").is_in(PLAYERS))
    return dict(mine.select("player_id", column).iter_rows())


def test_a_tournament_ending_on_the_30th_goes_on_the_next_fide_list(
    tmp_path: Path, samples: Path
) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(samples, inbox)
    (inbox / "federation" / "closing-2026-03.csv").write_text(
        "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"
        "cl-1,closing-2026-03,1,2026-03-29,13400002,34500002,0-1,standard\n"
        "cl-2,closing-2026-03,2,2026-03-30,34500002,13400002,1-0,standard\n",
        encoding="utf-8",
    )
    lake = tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert proc.returncode == 0, proc.stderr
    fide = tables.history("fide-standard", "player_explanations")
    ukd = tables.history("ukd-standard", "player_explanations")
    # FIDE: not in March (the list of 2026-03, APR26, closed on 29 March) but in April
    assert _games_of(lake, fide.name, "2026-03", "n") == {"13400002": 0, "34500002": 0}
    april = _games_of(lake, fide.name, "2026-04", "n")
    assert april["13400002"] == 2  # the two games of the tournament, nothing else that month
    # UKD keeps the month of the end date
    assert _games_of(lake, ukd.name, "2026-03", "games")["34500002"] == 2
    # the inputs a FIDE publication records follow the FIDE period
    applied = read_table(lake, tables.applied_inputs("fide")).collect()
    where = applied.filter(pl.col("name") == "closing-2026-03")["period"].unique().to_list()
    assert where == ["2026-04"]
