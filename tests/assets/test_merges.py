"""Duplicate players end to end: a federation with a duplicate id and `federation/merges.csv`
publishes the lists of a federation that never had the duplicate (issue 11 item 4)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from pipelines.cli.app import main
from pipelines.cli.run import run_pipeline
from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.storage import read_table

pytestmark = pytest.mark.e2e

PLAYERS = """player_id,name,federation,birth_date
a-3,Ayla Demir,TUR,1990
b-17,Ayla Demir,TUR,1990
p1,Can Aydın,TUR,1985
p2,Deniz Koç,TUR,1988
p3,Eren Yıldız,TUR,1992
p4,Fatma Şen,TUR,1980
"""

HEADER = "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"
# 2026-01: only a-3 plays; 2026-02: the duplicate b-17 appears (and meets a-3 once);
# 2026-03: b-17 again, in rapid too
FEDERATION = [
    "j1,T1,1,2026-01-10,a-3,p1,1-0,standard",
    "j2,T1,2,2026-01-11,p2,a-3,1/2-1/2,standard",
    "j3,T1,3,2026-01-12,p1,p2,0-1,standard",
    "f1,T2,1,2026-02-07,b-17,p1,1/2-1/2,standard",
    "f2,T2,2,2026-02-08,p2,b-17,0-1,standard",
    "f3,T2,3,2026-02-09,a-3,b-17,1-0,standard",
    "f4,T2,4,2026-02-10,p3,b-17,0-1,standard",
    "f5,T2,5,2026-02-11,p3,p1,0-1,standard",
    "m1,T3,1,2026-03-07,b-17,p2,1-0,standard",
    "m2,T3,2,2026-03-08,p1,b-17,1-0,standard",
    "r1,R3,1,2026-03-14,b-17,p1,1-0,rapid",
    "r2,R3,2,2026-03-14,p2,b-17,1/2-1/2,rapid",
]
CLUB = [
    "c1,C1,1,2026-02-03,b-17,p4,1-0,standard",
    "c2,C1,2,2026-02-04,p4,a-3,0-1,standard",
    "c3,C1,3,2026-02-05,p1,p4,1/2-1/2,standard",
]
FIDE_STANDARD = {  # both ids have an entry: the kept id's stands
    "a-3": "1800,50,1850",
    "b-17": "1650,12,1700",
    "p1": "1900,80,1950",
    "p2": "1750,40,1760",
}
UKD_STANDARD = {"b-17": "1500", "p1": "1600", "p2": "1550"}  # only the duplicate has one
MERGES = "keep_id,merge_id,decided_at,reason\na-3,b-17,2026-03-02,same person\n"
CAUSE = "merged b-17 into a-3: same person (decided 2026-03-02)"


def _lines(rows: list[str], unify: bool) -> str:
    """Game rows; unified, every b-17 is a-3 (a-3 against a-3 is then a self-game)."""
    return HEADER + "".join((row.replace("b-17", "a-3") if unify else row) + "\n" for row in rows)


def _list_csv(header: str, entries: dict[str, str], unify: bool) -> str:
    if unify:
        entries = {
            ("a-3" if pid == "b-17" else pid): value
            for pid, value in entries.items()
            if not (pid == "b-17" and "a-3" in entries)
        }
    return header + "".join(f"{pid},{value}\n" for pid, value in entries.items())


def make_inbox(root: Path, *, unify: bool, merges: bool, listed: bool = True) -> Path:
    """The federation with the duplicate b-17 (and `merges.csv` when `merges`), or, `unify`, the
    same federation as it would be had b-17 never been created; `listed` False takes b-17 off the
    starting lists (its first game, in 2026-02, is then where the merge starts)."""
    inbox = root / "inbox"
    lists = inbox / "federation" / "lists"
    lists.mkdir(parents=True)
    (inbox / "clubs" / "c1").mkdir(parents=True)
    players = (
        PLAYERS
        if not unify
        else "".join(line + "\n" for line in PLAYERS.splitlines() if not line.startswith("b-17,"))
    )
    (inbox / "players.csv").write_text(players, encoding="utf-8")
    (inbox / "federation" / "t.csv").write_text(_lines(FEDERATION, unify), encoding="utf-8")
    (inbox / "clubs" / "c1" / "c.csv").write_text(_lines(CLUB, unify), encoding="utf-8")
    fide, ukd = FIDE_STANDARD, UKD_STANDARD
    if not listed:
        fide, ukd = ({k: v for k, v in t.items() if k != "b-17"} for t in (fide, ukd))
    (lists / "fide-standard@2025-12.csv").write_text(
        _list_csv("player_id,rating,rated_games,peak_rating\n", fide, unify), encoding="utf-8"
    )
    (lists / "ukd-standard@2025-12.csv").write_text(
        _list_csv("player_id,rating\n", ukd, unify), encoding="utf-8"
    )
    if merges:
        (inbox / "federation" / "merges.csv").write_text(MERGES, encoding="utf-8")
    return inbox


def published(lake: Path) -> dict[tuple[str, str], pl.DataFrame]:
    """The latest version of every list and period, without the version column."""
    return {
        (name, period): publish.read_list(lake, name, period).drop("version")
        for name in publish.list_names(lake)
        for period in publish.list_periods(lake, name)
    }


@pytest.fixture(scope="module")
def unified(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], pl.DataFrame]:
    root = tmp_path_factory.mktemp("unified")
    lake = root / "lake"
    assert run_pipeline(make_inbox(root, unify=True, merges=False), lake).ok
    return published(lake)


def test_merged_lists_equal_those_of_a_federation_without_the_duplicate(
    tmp_path: Path, unified: dict
) -> None:
    lake = tmp_path / "lake"
    assert run_pipeline(make_inbox(tmp_path, unify=False, merges=True), lake).ok
    merged = published(lake)
    assert {"fide-standard", "fide-rapid", "ukd-standard", "club-c1-standard"} <= {
        name for name, _ in unified
    }
    assert merged.keys() == unified.keys()
    for key, frame in merged.items():
        assert frame.equals(unified[key]), key
        assert "b-17" not in frame["player_id"].to_list(), key
    # the game between the two ids is quarantined, with the merge named
    quarantine = read_table(lake, tables.QUARANTINE).collect().filter(pl.col("record") == "f3")
    assert quarantine["source"].to_list() == ["merges"]
    assert "federation/merges.csv line 2" in quarantine["reason"][0]
    notes = read_table(lake, tables.INGEST_NOTES).collect()["note"].to_list()
    assert "federation/merges.csv: 1 duplicate player merged (b-17 into a-3 from 2026-01)" in notes
    assert any(n.startswith("federation/merges.csv: 1 game(s) between") for n in notes)
    merges = read_table(lake, tables.MERGES).collect()
    assert merges.select("keep_id", "merge_id", "effective_period").rows() == [
        ("a-3", "b-17", "2026-01")  # b-17 is on the starting lists after 2025-12
    ]


def test_the_history_of_a_merged_id_points_at_the_kept_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lake = tmp_path / "lake"
    assert run_pipeline(make_inbox(tmp_path, unify=False, merges=True), lake).ok
    assert main(["history", "b-17", "--lake", str(lake)]) == 2
    assert capsys.readouterr().err.strip() == (
        "ratings: player 'b-17' was merged into 'a-3' (federation/merges.csv line 2): its games "
        "are in 'ratings history a-3'"
    )
    assert main(["history", "a-3", "--lake", str(lake)]) == 0


def test_adding_merges_republishes_from_the_first_affected_period_with_the_merge_as_cause(
    tmp_path: Path, unified: dict
) -> None:
    inbox, lake = make_inbox(tmp_path, unify=False, merges=False), tmp_path / "lake"
    assert run_pipeline(inbox, lake).ok
    before = published(lake)
    assert "b-17" in before[("fide-standard", "2026-02")]["player_id"].to_list()
    (inbox / "federation" / "merges.csv").write_text(MERGES, encoding="utf-8")
    outcome = run_pipeline(inbox, lake)
    assert outcome.ok
    assert outcome.recomputed[0] == "2026-01"
    after = published(lake)
    for key, frame in after.items():
        assert frame.equals(unified[key]), key
    assert publish.latest_version(lake, "fide-standard", "2026-02") == 2
    diff = pl.read_parquet(lake / "lists" / "fide-standard" / "2026-02" / "v2" / publish.DIFF_FILE)
    causes = dict(zip(diff["player_id"], diff["cause"], strict=True))
    assert causes["a-3"] == CAUSE and causes["b-17"] == CAUSE
    assert diff.filter(pl.col("player_id") == "b-17")["new"].is_null().all()  # off the list
    club = pl.read_parquet(
        lake / "lists" / "club-c1-standard" / "2026-02" / "v2" / publish.DIFF_FILE
    )
    assert set(club.filter(pl.col("cause") == CAUSE)["player_id"]) == {"a-3", "b-17"}
    # the run after that applies nothing new: no version, and no merge named again
    again = run_pipeline(inbox, lake)
    assert again.ok and again.recomputed == []
    assert publish.latest_version(lake, "fide-standard", "2026-02") == 2
    # taking the merge out again gives back the lists of before, the withdrawal as the cause
    (inbox / "federation" / "merges.csv").unlink()
    assert run_pipeline(inbox, lake).ok
    for key, frame in published(lake).items():
        assert frame.equals(before[key]), key
    diff = pl.read_parquet(lake / "lists" / "fide-standard" / "2026-02" / "v3" / publish.DIFF_FILE)
    causes = dict(zip(diff["player_id"], diff["cause"], strict=True))
    assert causes["a-3"] == causes["b-17"] == "merge of b-17 into a-3 withdrawn"
    # their opponents moved too: the version's reason says why
    assert all(cause.endswith("merge of b-17 into a-3 withdrawn") for cause in causes.values())


def test_a_merge_recomputes_from_the_first_period_holding_a_game_of_the_merged_id(
    tmp_path: Path,
) -> None:
    inbox = make_inbox(tmp_path, unify=False, merges=False, listed=False)
    lake = tmp_path / "lake"
    assert run_pipeline(inbox, lake).ok
    (inbox / "federation" / "merges.csv").write_text(MERGES, encoding="utf-8")
    outcome = run_pipeline(inbox, lake)
    assert outcome.ok
    assert outcome.recomputed == ["2026-02", "2026-03"]
    assert publish.latest_version(lake, "fide-standard", "2026-01") == 1  # untouched
    assert publish.latest_version(lake, "fide-standard", "2026-02") == 2
    assert read_table(lake, tables.MERGES).collect()["effective_period"].to_list() == ["2026-02"]


def test_a_chain_of_merges_is_refused_before_anything_is_published(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inbox = make_inbox(tmp_path, unify=False, merges=False)
    (inbox / "federation" / "merges.csv").write_text(
        MERGES + "p1,a-3,2026-03-03,again\n", encoding="utf-8"
    )
    lake = tmp_path / "lake"
    status = main(["run", "--inbox", str(inbox), "--lake", str(lake)])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert err.startswith("ratings: federation/merges.csv line 3: ")
    assert "chain" in err and "Traceback" not in err and "\n" not in err
    assert not publish.list_names(lake)


def test_bad_and_unknown_merge_rows_are_quarantined_and_the_good_row_still_applies(
    tmp_path: Path, unified: dict
) -> None:
    inbox = make_inbox(tmp_path, unify=False, merges=False)
    (inbox / "federation" / "merges.csv").write_text(
        MERGES + ",p3,2026-03-02,no keep id\np2,zz-9,2026-03-02,unknown\np2,p3,2026-02-30,bad\n",
        encoding="utf-8",
    )
    lake = tmp_path / "lake"
    assert run_pipeline(inbox, lake).ok
    quarantine = (
        read_table(lake, tables.QUARANTINE)
        .collect()
        .filter(pl.col("source") == "merges")
        .filter(pl.col("source_file") == "federation/merges.csv")
        .sort("line")
    )
    assert quarantine.select("line", "value").rows() == [(3, ""), (4, "zz-9"), (5, "2026-02-30")]
    assert "in no game, no starting list and not in players.csv" in quarantine["reason"][1]
    summary = read_table(lake, tables.INGEST_SUMMARY).collect()
    row = summary.filter(pl.col("source_file") == "federation/merges.csv").row(0, named=True)
    assert (row["kind"], row["ingested"]) == ("merges", 1)
    assert published(lake)[("fide-standard", "2026-03")].equals(
        unified[("fide-standard", "2026-03")]
    )


def test_a_cycle_met_by_the_merges_asset_stops_the_run_in_one_sentence(tmp_path: Path) -> None:
    """Without the command line's check first (a sensor's run): the merges asset refuses the
    file, the run stops after ingest with the same sentence, and nothing is published."""
    from pipelines.cli.errors import UserError

    inbox = make_inbox(tmp_path, unify=False, merges=False)
    (inbox / "federation" / "merges.csv").write_text(
        MERGES + "b-17,a-3,2026-03-03,again\n", encoding="utf-8"
    )
    lake = tmp_path / "lake"
    with pytest.raises(UserError) as refused:
        run_pipeline(inbox, lake)
    assert str(refused.value).startswith("federation/merges.csv line 3: ")  # it names the file
    assert "cycle" in str(refused.value)
    assert not publish.list_names(lake)
