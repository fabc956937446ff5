"""Official lists that must stop or show in a run (issue 32 item 8), through `ratings run`: two
lists for one month refused in one sentence before anything is published; a zipped FIDE download
published as its list; an inactive player of a real FIDE file still flagged on the next list."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import polars as pl
import pytest

from tests.support.inbox import FEDERATION_HEADER, assert_one_sentence, ratings, write_inbox

pytestmark = pytest.mark.e2e

REAL = Path(__file__).resolve().parents[3].parent / "shared" / "external" / "fide-lists"
HEADER = (
    "ID Number      Name                                                         "
    "Fed Sex Tit  WTit OTit           FOA AUG26 Gms K  B-day Flag"
)
LINE = (
    "48701955       Aadya Gowda                                                  "
    "IND F   WCM  WCM                     1807  0   40 2013  w   "
)


def test_two_lists_for_one_month_stop_the_run_before_anything_is_published(
    tmp_path: Path,
) -> None:
    inbox = write_inbox(
        tmp_path,
        {
            "federation/lists/fide-blitz@2026-07.txt": f"{HEADER}\r\n{LINE}\r\n",
            "federation/lists/fide-blitz@2026-07.csv": "player_id,rating,rated_games\n1,1800,30\n",
        },
    )
    lake = tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    err = assert_one_sentence(proc)
    assert proc.returncode == 2
    assert "are both the fide-blitz list after 2026-07; keep the official one" in err
    assert not (lake / "lists").exists()


@pytest.mark.skipif(not (REAL / "fide-blitz@2026-07.txt").is_file(), reason="no external files")
def test_a_zipped_real_fide_list_is_published_with_its_players_data_and_flags(
    tmp_path: Path,
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(REAL / "fide-blitz@2026-07.txt", "blitz_rating_list.txt")
    # Leko and Polgar, both inactive on FIDE's list, play each other; the two juniors do not
    games = FEDERATION_HEADER + "g1,T,1,2026-08-10,703303,700070,1/2-1/2,blitz\n"
    inbox = write_inbox(
        tmp_path,
        {"federation/lists/fide-blitz@2026-07.zip": buffer.getvalue(), "federation/t.csv": games},
    )
    lake = tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert proc.returncode == 0, proc.stderr
    listed = pl.read_csv(
        lake / "lists" / "fide-blitz" / "2026-08" / "v1" / "list.csv",
        schema_overrides={"player_id": pl.String},
    )
    rows = {r["player_id"]: r for r in listed.to_dicts()}
    # a rated game clears Leko's i and Polgar's (her w stays); Gowda did not play: w
    assert (rows["703303"]["flag"], rows["700070"]["flag"], rows["48701955"]["flag"]) == (
        None,
        "w",
        "w",
    )
    assert (rows["700070"]["federation"], rows["700070"]["title"], rows["700070"]["sex"]) == (
        "HUN",
        "GM",
        "F",
    )
    assert [rows[p]["rank"] for p in ("703303", "700070", "48701955", "537001345")] == [1, 2, 3, 4]
    assert listed.schema["rating"] == pl.Int64  # whole numbers, as FIDE publishes them
