"""TRF reader: the real files in ../shared/external, TRF-2026 layout, and broken files."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from rating_core.ingest.common import UnreadableFileError
from rating_core.ingest.trf import TRF_PLAYERS_SCHEMA, parse_trf_date, read_trf
from rating_core.schemas import QUARANTINE_SCHEMA, RAW_GAMES_SCHEMA

# every TRF file of ../shared/external (a test checks that the list stays complete)
REAL_FILES = [
    "sklangen-TRF/2020_06.trf",
    "sklangen-TRF/2021_03.trf",
    "sklangen-TRF/example1.trf",
    "TieBreakServer/held_swiss_9.trf",
]


@pytest.fixture
def example1(external: Path) -> Path:
    """A 284-player Swiss report (TRF16, no tag 132)."""
    return external / "sklangen-TRF" / "example1.trf"


@pytest.fixture
def held(external: Path) -> Path:
    """FIDE's tie-break exercise: forfeits and every kind of bye."""
    return external / "TieBreakServer" / "held_swiss_9.trf"


def slot_records(path: Path) -> list[tuple[int, int, int, str]]:
    """(rank, round, opponent, code) of every non-blank round slot, parsed with a regex."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("001"):
            continue
        rank = int(line[4:8])
        for k, start in enumerate(range(91, len(line), 10)):
            cell = line[start : start + 10]
            m = re.match(r"^([ 0-9]{4}) ([wb\- ]) ([10=+\-WDLHFUZ ])", cell.ljust(10))
            assert m, (path.name, rank, cell)
            if cell.strip():
                records.append((rank, k + 1, int(m[1].strip() or 0), m[3]))
    return records


# --- the real files ---------------------------------------------------------------------------


def test_real_files_list_every_external_trf(external: Path) -> None:
    present = {p.relative_to(external).as_posix() for p in external.rglob("*.trf")}
    assert present == set(REAL_FILES)


@pytest.mark.parametrize("name", REAL_FILES)
def test_real_files_read_cleanly_and_game_counts_match_pairs(external: Path, name: str) -> None:
    path = external / name
    result = read_trf(path)
    games = result.games.rows
    assert games.schema == pl.Schema(RAW_GAMES_SCHEMA)
    assert result.games.quarantine.schema == pl.Schema(QUARANTINE_SCHEMA)
    assert result.players.schema == pl.Schema(TRF_PLAYERS_SCHEMA)
    assert result.games.quarantine.height == 0
    records = slot_records(path)
    paired = [r for r in records if r[2] > 0]
    byes = [r for r in records if r[2] == 0]
    # every pairing is recorded by both players in these files
    assert {(r, rnd, o) for r, rnd, o, _ in paired} == {(o, rnd, r) for r, rnd, o, _ in paired}
    assert games.filter(pl.col("result") != "bye").height == len(paired) // 2
    assert games.filter(pl.col("result") == "bye").height == len(byes)
    assert games["game_id"].n_unique() == games.height
    assert games["format"].unique().to_list() == ["trf"]
    assert games["played_at"].null_count() == 0


def test_example1_players_rounds_and_end_date(example1: Path) -> None:
    result = read_trf(example1)
    games, players = result.games.rows, result.players
    assert players.height == 284
    assert games["round"].max() == 7
    assert games["tournament_id"].unique().to_list() == ["9. Karl-Mala-Gedenkturnier"]
    assert games["tournament_end"].unique().to_list() == [date(2005, 7, 31)]
    # no tag 132: every round is dated by the end date
    assert games["played_at"].unique().to_list() == [datetime(2005, 7, 31, tzinfo=UTC)]
    vasquez = players.filter(pl.col("start_rank") == 1).row(0, named=True)
    assert vasquez == {
        "player_id": "3400042",
        "name": "Vasquez,Rodrigo",
        "fide_id": "3400042",
        "federation": "CHI",
        "sex": None,
        "birth_year": 1969,
        "title": "g",
        "rating": 2558,
        "start_rank": 1,
    }
    unrated = players.filter(pl.col("start_rank") == 281).row(0, named=True)
    assert (unrated["player_id"], unrated["fide_id"], unrated["rating"]) == (
        "Leinberger,Benjamin",
        None,
        None,
    )
    first = games.filter(
        pl.col("game_id") == "example1.trf:9. Karl-Mala-Gedenkturnier:r1:1-141"
    ).row(0, named=True)
    assert (first["white_id"], first["result"], first["white_elo"]) == ("3400042", "1-0", 2558)
    assert first["white_id_from_name"] is False
    # 13 (forfeit '-') and 153 (forfeit '+') have no colours: the lower rank is listed white
    forfeit = games.filter(
        pl.col("game_id") == "example1.trf:9. Karl-Mala-Gedenkturnier:r1:13-153"
    ).row(0, named=True)
    assert (forfeit["result"], forfeit["black_id"], forfeit["black_id_from_name"]) == (
        "-+",
        "Reichwehr,Bernd",
        True,
    )
    # 282's "0000 - +" is a full-point bye without opponent
    bye = games.filter(
        pl.col("game_id") == "example1.trf:9. Karl-Mala-Gedenkturnier:r5:282-bye"
    ).row(0, named=True)
    assert bye["result"] == "bye" and bye["black_id"] is None
    assert json.loads(bye["extra"])["bye_points"] == 1.0


def test_held_swiss_forfeits_and_byes_are_recorded(held: Path) -> None:
    games = read_trf(held).games.rows
    tid = "held_swiss_9.trf:FIDE C.07 2023 Tie-Break Exercises"
    assert games.height == 76  # 16 x 9 slots: 8 byes, 136 game records = 68 games
    forfeits = games.filter(pl.col("result").is_in(["+-", "-+"]))
    assert sorted(zip(forfeits["game_id"], forfeits["result"], strict=True)) == [
        (f"{tid}:r3:12-14", "+-"),  # 12 "14 w +", 14 "12 b -"
        (f"{tid}:r4:11-9", "+-"),  # 11 "9 w +", 9 "11 b -"
    ]
    byes = games.filter(pl.col("result") == "bye")
    codes = {
        gid: json.loads(extra)["trf_code"]
        for gid, extra in zip(byes["game_id"], byes["extra"], strict=True)
    }
    assert codes == {
        f"{tid}:r2:4-bye": "H",
        f"{tid}:r3:9-bye": "H",
        f"{tid}:r3:6-bye": "U",
        f"{tid}:r5:9-bye": "U",
        f"{tid}:r2:12-bye": "U",
        f"{tid}:r4:12-bye": "Z",
        f"{tid}:r5:12-bye": "Z",
        f"{tid}:r4:14-bye": "Z",
    }
    assert byes["black_id"].null_count() == 8
    # no 052: games are dated by the start date 042
    assert games["played_at"].unique().to_list() == [datetime(2024, 8, 1, tzinfo=UTC)]
    assert games["tournament_end"].null_count() == games.height


def test_held_swiss_white_side_orientation(held: Path) -> None:
    games = read_trf(held).games.rows
    tid = "held_swiss_9.trf:FIDE C.07 2023 Tie-Break Exercises"
    # round 2: Alyx (1) has "13 b =", Opal (13) has "1 w =": Opal is white
    row = games.filter(pl.col("game_id") == f"{tid}:r2:13-1").row(0, named=True)
    assert (row["white_id"], row["black_id"], row["result"]) == ("Opal", "Alyx", "1/2-1/2")
    # round 1: Helene (5) "13 w 0": Helene white, Opal wins with black
    row = games.filter(pl.col("game_id") == f"{tid}:r1:5-13").row(0, named=True)
    assert row["result"] == "0-1"
    assert row["source_line"] == 9


def test_lichess_exports_name_ids_and_absences(external: Path) -> None:
    result = read_trf(external / "sklangen-TRF" / "2020_06.trf")
    games = result.games.rows
    assert result.players.height == 13
    assert games["played_at"].unique().to_list() == [datetime(2020, 5, 29, tzinfo=UTC)]
    assert games["white_id_from_name"].all()
    # mainspringer (8): H in round 1, absent ('-') in rounds 2-5, played from round 6
    eight = games.filter(pl.col("game_id").str.contains(r":8-bye$"))
    assert sorted(eight["round"].to_list()) == [1, 2, 3, 4, 5]


# --- TRF-2026 layout and dates -----------------------------------------------------------------


def player_line(rank: int, name: str, rating: int, fide: int, slots: list[str]) -> str:
    """A 001 record in the fixed TRF16/TRF26 columns."""
    head = f"001 {rank:>4} m{'':>3} {name:<33} {rating:>4} NOR {fide:>11} 1990/01/01  1.0 {rank:>4}"
    return head + "  " + "".join(f"{s:<10}" for s in slots).rstrip()


def slot(opp: int, colour: str, code: str) -> str:
    """One 10-column round slot."""
    return f"{opp:>4} {colour} {code}"


def test_trf26_round_dates_and_time_control(tmp_path: Path) -> None:
    lines = [
        "### a TRF-2026 comment line",
        "012 Club Champs",
        "042 2025/06/01",
        "052 2025/06/15",
        "222 5400+30",
        "132" + " " * 88 + "25/06/01  25/06/08",
        player_line(1, "One,A", 2000, 1000001, [slot(2, "w", "1"), slot(0, "-", "F")]),
        player_line(2, "Two,B", 1900, 0, [slot(1, "b", "0"), slot(0, "-", "Z")]),
    ]
    path = tmp_path / "club.trf"
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    result = read_trf(path)
    games = result.games.rows.sort("game_id")
    assert games["game_id"].to_list() == [
        "club.trf:Club Champs:r1:1-2",
        "club.trf:Club Champs:r2:1-bye",
        "club.trf:Club Champs:r2:2-bye",
    ]
    assert games["played_at"].to_list() == [
        datetime(2025, 6, 1, tzinfo=UTC),
        datetime(2025, 6, 8, tzinfo=UTC),
        datetime(2025, 6, 8, tzinfo=UTC),
    ]
    assert games["tournament_end"].unique().to_list() == [date(2025, 6, 15)]
    assert games["time_control"].unique().to_list() == ["5400+30"]
    game = games.row(0, named=True)
    assert (game["white_id"], game["black_id"], game["black_id_from_name"]) == (
        "1000001",
        "Two,B",
        True,
    )


def test_unrated_wdl_codes_and_one_sided_record(tmp_path: Path) -> None:
    lines = [
        "012 T",
        "052 2025/06/15",
        player_line(1, "One", 2000, 11, [slot(2, "b", "W"), slot(3, "b", "1")]),
        player_line(2, "Two", 1900, 12, [slot(1, "w", "L")]),
        player_line(3, "Three", 1800, 13, []),
    ]
    path = tmp_path / "t.trf"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    games = read_trf(path).games.rows.sort("round")
    assert games["game_id"].to_list() == ["t.trf:T:r1:2-1", "t.trf:T:r2:3-1"]
    assert games["result"].to_list() == ["0-1", "0-1"]
    assert games["rated"].to_list() == [False, True]
    assert games["white_id"].to_list() == ["12", "13"]  # from black's record only in round 2


def test_empty_012_uses_file_stem(tmp_path: Path) -> None:
    path = tmp_path / "spring-open.trf"
    path.write_text(
        "042 2025-03-01\n"
        + player_line(1, "A", 0, 0, [slot(2, "w", "=")])
        + "\n"
        + player_line(2, "B", 0, 0, [slot(1, "b", "=")])
        + "\n",
        encoding="utf-8",
    )
    games = read_trf(path).games.rows
    assert games["game_id"].to_list() == ["spring-open.trf:spring-open:r1:1-2"]
    assert games["white_elo"].to_list() == [None]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2005/07/31", date(2005, 7, 31)),
        ("2024-08-01", date(2024, 8, 1)),
        ("31. 07. 2005", date(2005, 7, 31)),
        ("31.07.2005", date(2005, 7, 31)),
        ("May 29, 2020", date(2020, 5, 29)),
        ("29 May 2020", date(2020, 5, 29)),
        ("25/06/08", date(2025, 6, 8)),
        ("99/12/31", date(1999, 12, 31)),
        ("2025/02/30", None),
        ("soon", None),
        ("", None),
    ],
)
def test_parse_trf_date(text: str, expected: date | None) -> None:
    assert parse_trf_date(text) == expected


# --- broken files --------------------------------------------------------------------------------


def test_broken_trf_quarantines_bad_records_and_keeps_the_rest(tmp_path: Path) -> None:
    lines = [
        "012 Broken",  # line 1
        "052 2025/05/31",  # 2
        player_line(
            1, "A", 2000, 1, [slot(2, "w", "1"), slot(3, "w", "1"), slot(5, "w", "=")]
        ),  # 3
        player_line(
            2, "B", 2000, 2, [slot(1, "b", "0"), slot(4, "b", "1"), slot(99, "b", "1")]
        ),  # 4
        player_line(3, "C", 2000, 3, [slot(4, "w", "1"), slot(1, "b", "1")])[:96],  # 5: truncated
        player_line(4, "D", 2000, 4, [slot(3, "b", "0"), "  2 x ?  ", slot(6, "w", "1")]),  # 6
        player_line(
            5, "E", 2000, 5, [slot(6, "w", "1"), slot(0, "-", "H"), slot(1, "b", "=")]
        ),  # 7
        "001   x6 m    F                                 2000 NOR           6",  # 8: bad rank
        "001    7 m    G                                 2z00 NOR           7",  # 9: bad rating
        player_line(8, "H", 2000, 8, [slot(7, "w", "1")]),  # 10
        "001    5 m    E again",  # 11: duplicate rank
    ]
    path = tmp_path / "broken.trf"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = read_trf(path)
    q = result.games.quarantine
    by_line: dict[int, list[str]] = {}
    for line, reason in zip(q["line"], q["reason"], strict=True):
        by_line.setdefault(line, []).append(reason)

    # truncated line 5: round 1 slot "   4 w" has no result
    assert any("no result against 4 in round 1" in r for r in by_line[5])
    # D's round-2 slot is garbage
    assert any("round 2 slot" in r and "is not 'opponent colour result'" in r for r in by_line[6])
    # unknown opponent 99
    assert any("opponent start rank 99 in round 3 is not a player" in r for r in by_line[4])
    # D and E name rank 6, whose line has a bad rank: unknown opponent
    assert any("opponent start rank 6 in round 3 is not a player" in r for r in by_line[6])
    assert any("opponent start rank 6 in round 1 is not a player" in r for r in by_line[7])
    assert any("start rank 'x6'" in r for r in by_line[8])
    assert any("rating '2z00'" in r for r in by_line[9])
    assert any("quarantined 001 record" in r for r in by_line[10])
    assert any("start rank 5 appears again (first on line 7)" in r for r in by_line[11])

    games = result.games.rows
    ids = set(games["game_id"].to_list())
    assert "broken.trf:Broken:r1:1-2" in ids  # good games still land
    assert "broken.trf:Broken:r2:1-3" in ids  # one-sided record (C's line truncated)
    assert "broken.trf:Broken:r3:5-1" not in ids and "broken.trf:Broken:r3:1-5" in ids
    assert "broken.trf:Broken:r2:5-bye" in ids
    # B's record lands from the black side, D's garbage slot is quarantined
    assert games.filter(pl.col("game_id") == "broken.trf:Broken:r2:4-2")["result"].to_list() == [
        "0-1"
    ]
    # C's round-1 slot is cut off, D's record of the game still lands
    assert games.filter(pl.col("game_id") == "broken.trf:Broken:r1:3-4")["result"].to_list() == [
        "1-0"
    ]
    assert set(result.players["start_rank"].to_list()) == {1, 2, 3, 4, 5, 8}


def test_inconsistent_pair_records_are_both_quarantined(tmp_path: Path) -> None:
    lines = [
        "012 Feud",
        "052 2025/05/31",
        player_line(1, "A", 2000, 1, [slot(2, "w", "1"), slot(3, "w", "1")]),
        player_line(2, "B", 2000, 2, [slot(1, "b", "1"), slot(3, "w", "w")]),
        player_line(3, "C", 2000, 3, [slot(0, "-", "U"), slot(1, "w", "0")]),
    ]
    path = tmp_path / "feud.trf"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = read_trf(path)
    q = result.games.quarantine
    r1 = q.filter(pl.col("record").str.ends_with("round 1"))
    assert sorted(r1["line"].to_list()) == [3, 4]
    assert "player 1 records '2 w 1' but player 2 records '1 b 1'" in r1["reason"][0]
    # round 2: both A and C claim white, and B claims a game against C that C does not record
    r2 = q.filter(pl.col("record").str.ends_with("round 2"))
    assert sorted(r2["line"].to_list()) == [3, 4, 5]
    assert result.games.rows["game_id"].to_list() == ["feud.trf:Feud:r1:3-bye"]


def test_file_without_dates_quarantines_games(tmp_path: Path) -> None:
    lines = [
        "012 Undated",
        "042 sometime",
        player_line(1, "A", 2000, 1, [slot(2, "w", "1")]),
        player_line(2, "B", 2000, 2, [slot(1, "b", "0")]),
    ]
    path = tmp_path / "u.trf"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = read_trf(path)
    assert result.games.rows.height == 0
    reasons = result.games.quarantine["reason"].to_list()
    assert "tag 042 start date 'sometime' is not a date" in reasons
    assert any("no date for round 1" in r for r in reasons)


def test_non_utf8_trf_is_read_as_windows_1252(tmp_path: Path) -> None:
    path = tmp_path / "cp.trf"
    content = "\n".join(
        [
            "012 Turnier",
            "052 2025/05/31",
            player_line(1, "Müller,Jörg", 2000, 0, [slot(2, "w", "1")]),
            player_line(2, "Groß,Anna", 2000, 0, [slot(1, "b", "0")]),
        ]
    )
    path.write_bytes(content.encode("cp1252"))
    result = read_trf(path)
    assert result.games.rows["white_id"].to_list() == ["Müller,Jörg"]
    assert any("not UTF-8" in n for n in result.games.notes)


@pytest.mark.parametrize("content", [b"", b"\n\n", b"012 Only a header\n042 2025/01/01\n"])
def test_unreadable_trf_raises(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.trf"
    path.write_bytes(content)
    with pytest.raises(UnreadableFileError, match="empty.trf"):
        read_trf(path)


def test_source_file_override(held: Path) -> None:
    result = read_trf(held, source_file="federation/held.trf")
    assert result.games.rows["source_file"].unique().to_list() == ["federation/held.trf"]
    assert result.games.rows["game_id"].str.starts_with("federation/held.trf:").all()


# --- records cut short -----------------------------------------------------------------------


def four_players(cut: int | None = None) -> list[str]:
    """Four players, two rounds; player 3's record (line 3) cut after `cut` characters."""
    lines = [
        "012 Cut",
        "052 2025/05/31",
        player_line(1, "One,Ann", 2100, 10001, [slot(3, "w", "1"), slot(2, "b", "=")]),
        player_line(2, "Two,Bob", 2000, 10002, [slot(4, "w", "0"), slot(1, "w", "=")]),
        player_line(3, "Three,Cem", 2345, 12345678, [slot(1, "b", "0"), slot(4, "b", "1")]),
        player_line(4, "Four,Dan", 1900, 10004, [slot(2, "b", "1"), slot(3, "w", "0")]),
    ]
    if cut is not None:
        lines[4] = lines[4][:cut]
    return lines


@pytest.mark.parametrize(
    ("cut", "where"),
    [
        (20, "in the name (columns 15-47)"),
        (50, "in the rating (columns 49-52)"),  # 2345 would read as 23
        (64, "in the FIDE id (columns 58-68)"),  # 12345678 would read as player 1234
        (74, "in the birth date (columns 70-79)"),
        (82, "in the points (columns 81-84)"),
    ],
)
def test_cut_short_record_is_quarantined_with_its_games(
    tmp_path: Path, cut: int, where: str
) -> None:
    path = tmp_path / "cut.trf"
    lines = four_players(cut)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = read_trf(path, "federation/cut.trf")
    q = result.games.quarantine
    record = q.filter(pl.col("line") == 5).row(0, named=True)
    assert record["reason"].startswith(f"player record is cut short: it ends at column {cut}, ")
    assert where in record["reason"] and "columns 81-84" in record["reason"]
    assert (record["record"], record["value"]) == ("rank 3", lines[4])
    # the games of player 3, recorded by their opponents, point at the cut record
    games_of_3 = q.filter(pl.col("line") != 5).sort("line")
    assert games_of_3["record"].to_list() == ["rank 1 round 1", "rank 4 round 2"]
    assert games_of_3["reason"].to_list() == [
        "opponent 3 in round 1 has a player record cut short (line 5)",
        "opponent 3 in round 2 has a player record cut short (line 5)",
    ]
    # the other players and games land; nothing is read from what is left of the record
    games = result.games.rows
    assert sorted(games["game_id"].to_list()) == [
        "federation/cut.trf:Cut:r1:2-4",
        "federation/cut.trf:Cut:r2:2-1",
    ]
    assert result.players["start_rank"].to_list() == [1, 2, 4]
    assert set(games["white_id"]) | set(games["black_id"]) == {"10001", "10002", "10004"}
    assert set(games["white_elo"]) | set(games["black_elo"]) == {2100, 2000, 1900}


def test_whole_record_without_rank_or_games_is_not_cut(tmp_path: Path) -> None:
    # 2020_06.trf leaves the rank (86-89) blank; a record that holds the points is whole
    lines = four_players()
    lines[5] = lines[5][:84]  # player 4: points kept, rank and rounds gone
    path = tmp_path / "whole.trf"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = read_trf(path)
    assert not any("cut short" in r for r in result.games.quarantine["reason"])
    assert result.players["start_rank"].to_list() == [1, 2, 3, 4]
    assert result.games.rows.height == 4  # every game is still recorded by the other side


def test_second_record_of_a_cut_rank_is_a_duplicate(tmp_path: Path) -> None:
    lines = four_players(40)
    lines.append(player_line(3, "Three,Cem", 2345, 12345678, [slot(1, "b", "0")]))
    path = tmp_path / "twice.trf"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    q = read_trf(path).games.quarantine
    reasons = dict(zip(q["line"], q["reason"], strict=False))
    assert reasons[5].startswith("player record is cut short")
    assert reasons[7] == "start rank 3 appears again (first on line 5)"


# --- game ids --------------------------------------------------------------------------------


def test_game_ids_carry_the_file_so_two_reports_of_one_tournament_stay_apart(
    tmp_path: Path,
) -> None:
    text = "\n".join(four_players()) + "\n"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "open.trf").write_text(text, encoding="utf-8")
    (tmp_path / "b" / "open.trf").write_text(text, encoding="utf-8")
    first = read_trf(tmp_path / "a" / "open.trf", "federation/open.trf").games.rows
    second = read_trf(tmp_path / "b" / "open.trf", "clubs/chess-club/open.trf").games.rows
    assert first.height == second.height == 4
    assert set(first["game_id"]).isdisjoint(second["game_id"])
    assert "federation/open.trf:Cut:r1:1-3" in set(first["game_id"])
    # stable: the same inbox name gives the same ids wherever the inbox lives
    again = read_trf(tmp_path / "b" / "open.trf", "federation/open.trf").games.rows
    assert again["game_id"].to_list() == first["game_id"].to_list()
