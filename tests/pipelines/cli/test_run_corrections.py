"""End to end: a rating officer's `federation/corrections.csv` through `ratings run` (issue 11
item 5): the corrected list of the period, the diff's cause, the next period started from the
corrected value, and the bad rows quarantined with their reasons while the good row applies.

Expected ratings are computed by hand from RULES §3 (the FIDE table: PD 0.50 for D 0-3, 0.56
for D 40-46, 0.60 for D 69-76, 0.62 for D 84-91); both players have fewer than 30 rated games,
so K is 40.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.storage import read_table
from tests.pipelines.cli.test_cli import ratings

pytestmark = pytest.mark.e2e

GAMES = "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"
REASON = "arbiter's report, round 5 result entered wrong"


def inbox_with_three_months(tmp_path: Path) -> Path:
    """a and b (1800, 10 rated games, K 40) meet once a month, a winning, 2026-02 to 2026-04."""
    inbox = tmp_path / "inbox"
    (inbox / "federation" / "lists").mkdir(parents=True)
    (inbox / "federation" / "lists" / "fide-standard@2026-01.csv").write_text(
        "player_id,rating,rated_games,peak_rating\na,1800,10,1800\nb,1800,10,1800\n",
        encoding="utf-8",
    )
    for month in ("02", "03", "04"):
        (inbox / "federation" / f"match-2026-{month}.csv").write_text(
            GAMES + f"m{month},match-{month},1,2026-{month}-10,a,b,1-0,standard\n",
            encoding="utf-8",
        )
    return inbox


def rating_of(lake: Path, period: str, player: str, version: int | None = None) -> dict:
    listed = publish.read_list(lake, "fide-standard", period, version)
    return listed.filter(pl.col("player_id") == player).row(0, named=True)


def test_a_correction_republishes_its_period_and_the_next_starts_from_it(tmp_path: Path) -> None:
    inbox, lake = inbox_with_three_months(tmp_path), tmp_path / "lake"
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    # 2026-02: D 0, a +0.50 x 40 = +20 -> 1820, b 1780
    # 2026-03: D 40, PD 0.56: a +0.44 x 40 = 17.6 -> +18 -> 1838, b 1762
    # 2026-04: D 76, PD 0.60: a +0.40 x 40 = +16 -> 1854
    assert rating_of(lake, "2026-03", "a")["rating"] == 1838
    assert rating_of(lake, "2026-04", "a")["rating"] == 1854

    (inbox / "federation" / "corrections.csv").write_text(
        "list,period,player_id,field,value,reason\n"
        f'fide-standard,2026-03,a,rating,1850,"{REASON}"\n'
        "fide-standard,2026-03,zz,rating,1900,a player not on the list\n"
        "fide-classic,2026-03,a,rating,1900,an unknown list\n"
        "fide-standard,2026-03,a,elo,1900,an unknown field\n"
        "fide-standard,2026-03,b,rated_games,many,a value of the wrong type\n"
        "fide-standard,2026-09,a,rating,1900,a period not computed\n",
        encoding="utf-8",
    )
    out = ratings("run", "--inbox", str(inbox), "--lake", str(lake)).stdout
    assert "recomputed from 2026-03 on" in out
    assert "corrections.csv" in out
    versions = publish.current_versions(lake).filter(pl.col("list") == "fide-standard")
    assert dict(zip(versions["period"], versions["version"], strict=True)) == {
        "2026-02": 1,
        "2026-03": 2,
        "2026-04": 2,
    }
    corrected = rating_of(lake, "2026-03", "a")
    assert (corrected["rating"], corrected["change"], corrected["peak_rating"]) == (1850, 30, 1850)
    assert rating_of(lake, "2026-03", "b")["rating"] == 1762  # the opponent keeps his
    diff = publish.read_diff(lake, "fide-standard", "2026-03")
    assert diff.select("player_id", "old", "new", "cause").rows() == [
        ("a", 1838.0, 1850.0, f"correction: rating 1838 -> 1850 ({REASON})")
    ]
    manifest = publish.read_manifest(lake, "fide-standard", "2026-03")
    assert "1 correction applied (fide-standard a rating)" in manifest["reason"]
    # 2026-04 from the corrected 1850 against 1762: D 88, PD 0.62: a +0.38 x 40 = 15.2 -> +15
    april = rating_of(lake, "2026-04", "a")
    assert (april["rating"], april["change"]) == (1865, 15)
    assert rating_of(lake, "2026-04", "b")["rating"] == 1747

    quarantine = read_table(lake, tables.QUARANTINE).collect()
    mine = quarantine.filter(pl.col("source_file") == "federation/corrections.csv").sort("line")
    assert mine.select("line", "value").rows() == [
        (3, "1900"),
        (4, "fide-classic"),
        (5, "elo"),
        (6, "many"),
        (7, "1900"),
    ]
    reasons = mine["reason"].to_list()
    assert reasons[0] == "player zz is not on the fide-standard list of 2026-03"
    assert reasons[1].startswith("list 'fide-classic' is not one of fide-standard")
    assert reasons[2].startswith("field 'elo' is not one of rating")
    assert reasons[3] == "rated_games 'many' is not a whole number of games (0 or more)"
    assert reasons[4].startswith("no fide-standard list has been computed for 2026-09")

    again = ratings("run", "--inbox", str(inbox), "--lake", str(lake)).stdout
    assert "nothing to recompute" in again


def test_removing_a_correction_publishes_the_computed_list_again(tmp_path: Path) -> None:
    inbox, lake = inbox_with_three_months(tmp_path), tmp_path / "lake"
    corrections = inbox / "federation" / "corrections.csv"
    corrections.write_text(
        "list,period,player_id,field,value,reason\n"
        "fide-standard,2026-03,a,rating,1850,entered wrong\n",
        encoding="utf-8",
    )
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert rating_of(lake, "2026-03", "a")["rating"] == 1850
    corrections.unlink()
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert rating_of(lake, "2026-03", "a")["rating"] == 1838
    assert rating_of(lake, "2026-03", "a", 1)["rating"] == 1850  # v1 is never touched
    assert publish.latest_version(lake, "fide-standard", "2026-02") == 1
