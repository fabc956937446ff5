"""Registry readers: players, starting lists, moderation decisions and backgammon matches."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from rating_core import budget
from rating_core.ingest.common import UnreadableFileError
from rating_core.ingest.registry import (
    parse_starting_list_name,
    read_backgammon,
    read_moderation,
    read_players,
    read_starting_list,
)
from rating_core.schemas import (
    MATCHES_SCHEMA,
    MODERATION_SCHEMA,
    PLAYERS_SCHEMA,
    STARTING_LIST_SCHEMA,
)


@pytest.fixture(autouse=True, params=["whole", "rows one at a time"])
def csv_chunk_rows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs twice: the CSV read whole, and read a row at a time (`budget.CSV_ROWS`),
    which must give the same rows, lines and quarantine (issue 31 item 2)."""
    if request.param != "whole":
        monkeypatch.setattr(budget, "CSV_ROWS", 1)


def write(tmp_path: Path, name: str, text: str) -> Path:
    """Write an inline CSV and return its path."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def quarantined(result_quarantine: pl.DataFrame) -> list[tuple[int, str | None, str]]:
    """(line, record, reason) of every quarantine row."""
    return list(
        zip(
            result_quarantine["line"],
            result_quarantine["record"],
            result_quarantine["reason"],
            strict=True,
        )
    )


# --- players ----------------------------------------------------------------------------------

PLAYERS = (
    "player_id,name,federation,sex,birth_date,title,fide_id,is_bot,bot_rating,email_verified,"
    "display_name\n"
    "p1,Ann Smith,ENG,f,1990,WFM,123,,,true,annie\n"  # 2
    "p2,Bad Date,ENG,m,1990-02-30,,,,,,\n"  # 3
    "bot1,Stockfish,,,,,,true,2200,,\n"  # 4
    "p1,Again,,,,,,,,,\n"  # 5
    "p3,Bad Bool,,,,,,maybe,,,\n"  # 6
    "p4,Bad Rating,,,,,,true,strong,,\n"  # 7
    "bot2,No Rating Bot,,,,,,true,,,\n"  # 8
    "p5,Rated not bot,,,1975-06-30,,,false,1500,false,\n"  # 9
    "p6,Bad Verified,,,,,,,,sometimes,\n"  # 10
    ",No Id,,,,,,,,,\n"  # 11
    "p7,Weird Year,,,19x0,,,,,,\n"  # 12
)


def test_players_rows_and_quarantine(tmp_path: Path) -> None:
    # a bad cell is quarantined with its column and read as empty: the row itself lands
    result = read_players(write(tmp_path, "players.csv", PLAYERS))
    rows = result.rows
    assert rows.schema == pl.Schema(PLAYERS_SCHEMA)
    assert rows["player_id"].to_list() == ["p1", "p2", "bot1", "p3", "p4", "bot2", "p5", "p6", "p7"]
    by_id = {r["player_id"]: r for r in rows.to_dicts()}
    assert by_id["p1"] == {
        "player_id": "p1",
        "name": "Ann Smith",
        "federation": "ENG",
        "sex": "f",
        "birth_year": 1990,
        "title": "WFM",
        "fide_id": "123",
        "is_bot": False,
        "bot_rating": None,
        "email_verified": True,
        "display_name": "annie",
    }
    assert (by_id["bot1"]["is_bot"], by_id["bot1"]["bot_rating"]) == (True, 2200)
    assert (by_id["bot2"]["is_bot"], by_id["bot2"]["bot_rating"]) == (True, None)
    assert (by_id["p5"]["is_bot"], by_id["p5"]["bot_rating"]) == (False, 1500)
    assert by_id["p5"]["birth_year"] == 1975
    assert by_id["bot1"]["email_verified"] is False
    assert (by_id["p2"]["name"], by_id["p2"]["federation"], by_id["p2"]["birth_year"]) == (
        "Bad Date",
        "ENG",
        None,
    )
    assert (by_id["p4"]["is_bot"], by_id["p4"]["bot_rating"]) == (True, None)  # still a bot
    assert by_id["p3"]["is_bot"] is False
    assert by_id["p6"]["email_verified"] is False
    assert by_id["p7"]["name"] == "Weird Year"
    bool_words = "is not true or false (nor yes/no, 1/0); read as empty"
    assert quarantined(result.quarantine) == [
        (
            3,
            "p2",
            "column birth_date: '1990-02-30' is not YYYY or a real YYYY-MM-DD; read as empty",
        ),
        (5, "p1", "player id 'p1' appears again (first on line 2)"),
        (6, "p3", f"column is_bot: 'maybe' {bool_words}"),
        (
            7,
            "p4",
            "column bot_rating: 'strong' is not a whole number from 0 to 3500; read as empty",
        ),
        (10, "p6", f"column email_verified: 'sometimes' {bool_words}"),
        (11, None, "the player id is empty"),
        (12, "p7", "column birth_date: '19x0' is not YYYY or a real YYYY-MM-DD; read as empty"),
    ]
    assert result.quarantine.filter(pl.col("line") == 7)["value"].to_list() == ["strong"]


@pytest.mark.parametrize(
    ("is_bot", "expected"),
    [
        ("true", True),
        ("TRUE", True),
        ("Yes", True),
        ("yes", True),
        ("1", True),
        ("false", False),
        ("No", False),
        ("0", False),
        ("", False),
    ],
)
def test_players_booleans_take_true_false_yes_no_one_zero(
    tmp_path: Path, is_bot: str, expected: bool
) -> None:
    text = f"player_id,is_bot,bot_rating,email_verified\nb,{is_bot},1100,{is_bot}\n"
    result = read_players(write(tmp_path, "players.csv", text))
    assert result.quarantine.height == 0
    assert result.rows.row(0, named=True)["is_bot"] is expected
    assert result.rows.row(0, named=True)["email_verified"] is expected


@pytest.mark.parametrize(
    ("bot_rating", "expected"), [("1100", 1100), ("1100.0", 1100), ("1100.", 1100), ("+900", 900)]
)
def test_players_integral_decimal_is_the_integer(
    tmp_path: Path, bot_rating: str, expected: int
) -> None:
    text = f"player_id,is_bot,bot_rating\nbot-novice,true,{bot_rating}\n"
    result = read_players(write(tmp_path, "players.csv", text))
    assert result.quarantine.height == 0
    assert result.rows.row(0, named=True)["bot_rating"] == expected


@pytest.mark.parametrize(
    ("bot_rating", "problem"),
    [
        ("abc", "'abc' is not a whole number from 0 to 3500"),
        ("1100.5", "'1100.5' is not a whole number from 0 to 3500"),
        ("3600", "'3600' is not a whole number from 0 to 3500"),
        ("-1", "'-1' is not a whole number from 0 to 3500"),
        ("99999999999999999999", "is not a whole number from 0 to 3500"),
    ],
)
def test_a_declared_bot_with_a_bad_rating_stays_a_bot(
    tmp_path: Path, bot_rating: str, problem: str
) -> None:
    text = (
        "player_id,name,is_bot,bot_rating\n"
        "u-a,Ann,false,\n"
        f"bot-x,Bot X,yes,{bot_rating}\n"  # 3
        "u-b,Bob,no,\n"
    )
    result = read_players(write(tmp_path, "players.csv", text))
    rows = {r["player_id"]: r for r in result.rows.to_dicts()}
    assert set(rows) == {"u-a", "bot-x", "u-b"}
    assert (rows["bot-x"]["is_bot"], rows["bot-x"]["bot_rating"], rows["bot-x"]["name"]) == (
        True,
        None,
        "Bot X",
    )
    q = result.quarantine.row(0, named=True)
    assert result.quarantine.height == 1
    assert (q["line"], q["record"], q["value"]) == (3, "bot-x", bot_rating)
    assert q["reason"].startswith("column bot_rating: ") and problem in q["reason"]
    assert q["reason"].endswith("; read as empty")


def test_several_bad_cells_of_one_row_each_quarantined_the_row_lands(tmp_path: Path) -> None:
    text = (
        "player_id,name,birth_date,is_bot,bot_rating,email_verified\n"
        "bot-y,Bot Y,1990-13-45,true,abc,perhaps\n"
    )
    result = read_players(write(tmp_path, "players.csv", text))
    row = result.rows.row(0, named=True)
    assert (row["player_id"], row["name"], row["is_bot"], row["birth_year"]) == (
        "bot-y",
        "Bot Y",
        True,
        None,
    )
    assert result.quarantine["line"].to_list() == [2, 2, 2]
    assert result.quarantine["value"].to_list() == ["1990-13-45", "abc", "perhaps"]
    assert [r.split(":")[0] for r in result.quarantine["reason"]] == [
        "column birth_date",
        "column bot_rating",
        "column email_verified",
    ]


def test_players_nul_or_bad_bytes_in_a_cell_empty_that_cell_only(tmp_path: Path) -> None:
    text = (
        b"player_id,name,is_bot,bot_rating\n"
        b"bot-z,Bot\x00Z,true,1200\n"  # 2: NUL in the name
        b"u-m,M\xfcller,false,\n"  # 3: Latin-1 byte in the name
        b"u-\x00n,Nul Id,false,\n"  # 4: NUL in the id: the record cannot be identified
        b"u-c,Cem,false,\n"
    )
    path = tmp_path / "players.csv"
    path.write_bytes(text)
    result = read_players(path)
    rows = {r["player_id"]: r for r in result.rows.to_dicts()}
    assert set(rows) == {"bot-z", "u-m", "u-c"}
    assert (rows["bot-z"]["is_bot"], rows["bot-z"]["bot_rating"], rows["bot-z"]["name"]) == (
        True,
        1200,
        None,
    )
    assert rows["u-m"]["name"] is None
    assert quarantined(result.quarantine) == [
        (2, "bot-z", "column name: 'Bot\\0Z' holds a NUL byte; read as empty"),
        (3, "u-m", "column name: 'M\ufffdller' holds bytes that are not UTF-8; read as empty"),
        (4, "u-\\0n", "the player id holds a NUL byte"),
    ]


def test_players_only_player_id_required(tmp_path: Path) -> None:
    result = read_players(write(tmp_path, "players.csv", "player_id\na\nb\n"))
    assert result.rows["player_id"].to_list() == ["a", "b"]
    assert result.rows["is_bot"].to_list() == [False, False]
    with pytest.raises(UnreadableFileError, match="missing required column 'player_id'"):
        read_players(write(tmp_path, "p2.csv", "id,name\na,b\n"))


# --- starting lists ---------------------------------------------------------------------------


CORE_LIST_COLUMNS = ("list", "period", "player_id", "rating", "rated_games", "peak_rating")
"""A starting list's own columns; the player data it may give are tested apart."""


def test_fide_starting_list(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "fide-standard@2025-12.csv",
        "player_id,rating,rated_games,peak_rating\n"
        "a,2000,30,\n"  # 2
        "f,1450.0,12,1610\n",  # 3: an integral decimal is the integer
    )
    result = read_starting_list(path)
    assert result.rows.schema == pl.Schema(STARTING_LIST_SCHEMA)
    assert result.rows.select(CORE_LIST_COLUMNS).to_dicts() == [
        {
            "list": "fide-standard",
            "period": "2025-12",
            "player_id": "a",
            "rating": 2000,
            "rated_games": 30,
            "peak_rating": 2000,
        },
        {
            "list": "fide-standard",
            "period": "2025-12",
            "player_id": "f",
            "rating": 1450,
            "rated_games": 12,
            "peak_rating": 1610,
        },
    ]
    assert result.quarantine.height == 0


@pytest.mark.parametrize(
    ("row", "sentence"),
    [
        ("b,3600,3,", "line 3 (player b): rating '3600' is not an integer from 0 to 3500"),
        ("c,1900,,", "line 3 (player c): rated_games is empty"),
        ("a,1800,4,1900", "line 3 (player a): player id 'a' appears again (first on line 2)"),
        ("d,x,1,", "line 3 (player d): rating 'x' is not an integer from 0 to 3500"),
        ("d,2000.5,1,", "line 3 (player d): rating '2000.5' is not an integer from 0 to 3500"),
        ("e,1500,-2,", "line 3 (player e): rated_games '-2' is not an integer of at least 0"),
        ("g,1400,5,4000", "line 3 (player g): peak_rating '4000' is not an integer from 0 to 3500"),
        (",1400,5,", "line 3: the player id is empty"),
        ("h,1400,5\x00,", "line 3 (player h): the line holds a NUL byte (column rated_games)"),
    ],
)
def test_fide_starting_list_with_an_unreadable_row_stops_the_run(
    tmp_path: Path, row: str, sentence: str
) -> None:
    # an official list is all or nothing: a dropped row would silently remove a rated player
    text = f"player_id,rating,rated_games,peak_rating\na,2000,30,\n{row}\nz,1500,9,\n"
    path = tmp_path / "fide-standard@2025-12.csv"
    path.write_bytes(text.encode())
    with pytest.raises(UnreadableFileError) as info:
        read_starting_list(path, "federation/lists/fide-standard@2025-12.csv")
    message = str(info.value)
    assert message.startswith(f"federation/lists/fide-standard@2025-12.csv {sentence}")
    assert message.endswith("used whole or not at all")
    assert "\n" not in message


def test_ukd_starting_list(tmp_path: Path) -> None:
    path = write(tmp_path, "ukd-blitz@2026-01.csv", "player_id,rating\nu1,1700\n")
    result = read_starting_list(path)
    assert result.rows.select(CORE_LIST_COLUMNS).to_dicts() == [
        {
            "list": "ukd-blitz",
            "period": "2026-01",
            "player_id": "u1",
            "rating": 1700,
            "rated_games": None,
            "peak_rating": None,
        }
    ]


def test_a_csv_starting_list_may_give_player_data(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "fide-blitz@2026-07.csv",
        "player_id,rating,rated_games,federation,sex,title,w_title,birth_year,flag\n"
        "700070,2736,500,HUN,f,GM,,1976,WI\n"
        "900,1500,30,,,,,,\n",
    )
    rows = read_starting_list(path).rows
    assert rows.select(
        "player_id", "federation", "sex", "title", "w_title", "birth_year", "flag"
    ).rows() == [
        ("700070", "HUN", "F", "GM", None, 1976, "wi"),
        ("900", None, None, None, None, None, None),
    ]


def test_a_csv_starting_list_with_a_bad_birth_year_stops_the_run(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "fide-blitz@2026-07.csv",
        "player_id,rating,rated_games,birth_year\n1,1500,3,19x0\n",
    )
    with pytest.raises(UnreadableFileError, match="birth_year '19x0'"):
        read_starting_list(path)


def test_ukd_starting_list_names_the_first_bad_row_and_counts_the_rest(tmp_path: Path) -> None:
    path = write(tmp_path, "ukd-blitz@2026-01.csv", "player_id,rating\nu1,1700\nu2,\nu3,-5\n")
    with pytest.raises(UnreadableFileError) as info:
        read_starting_list(path, "ukd-blitz@2026-01.csv")
    assert str(info.value) == (
        "ukd-blitz@2026-01.csv line 3 (player u2): rating is empty (and 1 more unreadable row); "
        "a starting list is official, so it is used whole or not at all"
    )


def test_fide_list_requires_rated_games(tmp_path: Path) -> None:
    path = write(tmp_path, "fide-rapid@2025-12.csv", "player_id,rating\na,2000\n")
    with pytest.raises(UnreadableFileError, match="missing required column 'rated_games'"):
        read_starting_list(path)


@pytest.mark.parametrize(
    "name",
    [
        "fide-standard.csv",
        "fide-classical@2025-12.csv",
        "fide-standard@2025-13.csv",
        "fide-standard@25-12.csv",
        "site-elo@2025-12.csv",
        "fide-standard@2025-12.json",  # .txt and .xml are FIDE's downloads (test_fide_formats)
    ],
)
def test_bad_starting_list_names(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, name, "player_id,rating,rated_games\na,2000,1\n")
    with pytest.raises(UnreadableFileError, match=r"<list>@<YYYY-MM>\.csv") as info:
        read_starting_list(path)
    assert name in str(info.value)


def test_parse_starting_list_name() -> None:
    assert parse_starting_list_name("ukd-rapid@2024-02.csv") == ("ukd-rapid", "2024-02")


# --- moderation ---------------------------------------------------------------------------------


def test_moderation(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "mod.csv",
        "game_id,decided_at,decision,reason\n"
        "g1,2025-01-01T12:00:00+01:00,annul,engine use\n"  # 2
        "g2,2025-01-01,ban,x\n"  # 3
        "g3,not a date,annul,x\n"  # 4
        "g1,2025-01-02,annul,again\n"  # 5
        "g4,2025-01-03,annul,\n"  # 6
        ",2025-01-03,annul,no id\n",  # 7
    )
    result = read_moderation(path, source_file="platform/moderation/mod.csv")
    assert result.rows.schema == pl.Schema(MODERATION_SCHEMA)
    assert result.rows.to_dicts() == [
        {
            "game_id": "g1",
            "decided_at": datetime(2025, 1, 1, 11, tzinfo=UTC),
            "decision": "annul",
            "reason": "engine use",
            "source_file": "platform/moderation/mod.csv",
            "source_line": 2,
        },
        {
            "game_id": "g4",
            "decided_at": datetime(2025, 1, 3, tzinfo=UTC),
            "decision": "annul",
            "reason": None,
            "source_file": "platform/moderation/mod.csv",
            "source_line": 6,
        },
    ]
    assert quarantined(result.quarantine) == [
        (3, "g2", "decision 'ban' is not annul"),
        (4, "g3", "decided_at 'not a date' is not a valid ISO 8601 date"),
        (5, "g1", "game id 'g1' appears again (first on line 2)"),
        (7, None, "the game id is empty"),
    ]
    assert set(result.quarantine["source_file"].to_list()) == {"platform/moderation/mod.csv"}


def test_moderation_for_a_game_that_does_not_exist_is_quarantined(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "mod.csv",
        "game_id,decided_at,decision,reason\n"
        "g1,2025-01-01,annul,engine use\n"  # 2
        "ghost,2025-01-02,annul,typo in the id\n"  # 3
        "g2,2025-01-03,annul,engine use\n",  # 4
    )
    known = pl.Series(["g1", "g2", "g3"])
    result = read_moderation(path, "platform/moderation/mod.csv", known)
    assert result.rows["game_id"].to_list() == ["g1", "g2"]
    q = result.quarantine.row(0, named=True)
    assert result.quarantine.height == 1
    assert (q["source_file"], q["line"], q["record"], q["value"], q["reason"]) == (
        "platform/moderation/mod.csv",
        3,
        "ghost",
        "ghost",
        "no game with this id",
    )
    # without the known ids (a reader used alone) nothing is checked against the games
    assert read_moderation(path).rows.height == 3


def test_moderation_nul_byte_quarantines_that_line_only(tmp_path: Path) -> None:
    path = tmp_path / "mod.csv"
    path.write_bytes(
        b"game_id,decided_at,decision,reason\n"
        b"g1,2025-01-01,annul,engine use\n"
        b"g2,2025-01-02,annul,eng\x00ine\n"
        b"g3,2025-01-03,annul,engine use\n"
    )
    result = read_moderation(path)
    assert result.rows["game_id"].to_list() == ["g1", "g3"]
    assert quarantined(result.quarantine) == [
        (3, "g2", "the line holds a NUL byte (column reason)")
    ]
    assert result.quarantine["value"].to_list() == ["eng\\0ine"]


def test_moderation_missing_column(tmp_path: Path) -> None:
    path = write(tmp_path, "m.csv", "game_id,decided_at,reason\ng,2025-01-01,x\n")
    with pytest.raises(UnreadableFileError, match=r"m\.csv: missing required column 'decision'"):
        read_moderation(path)


# --- backgammon ---------------------------------------------------------------------------------


def test_backgammon(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bg.csv",
        "match_id,ended_at,winner_id,loser_id,length,ranked,vs_ai\n"
        "m1,2025-01-31T23:30:00-02:00,a,b,5,true,\n"  # 2: UTC 2025-02-01
        "m2,2025-01-01,a,a,5,true,false\n"  # 3
        "m3,2025-01-01,a,b,0,true,false\n"  # 4
        "m4,2025-01-01,a,b,3,,false\n"  # 5
        "m5,2025-01-01,a,b,3,false,true\n"  # 6
        "m1,2025-01-02,c,d,3,true,false\n"  # 7
        "m6,2025-01-32,c,d,3,true,false\n"  # 8
        "m7,2025-01-05,c,d,three,true,false\n"  # 9
        "m8,2025-01-05,c,d,3,true,robot\n"  # 10
        "m9,2025-01-05,,d,3,true,false\n",  # 11
    )
    result = read_backgammon(path)
    assert result.rows.schema == pl.Schema(MATCHES_SCHEMA)
    rows = {r["match_id"]: r for r in result.rows.to_dicts()}
    assert set(rows) == {"m1", "m5"}
    assert rows["m1"]["period"] == "2025-02"
    assert rows["m1"]["ended_at"] == datetime(2025, 2, 1, 1, 30, tzinfo=UTC)
    assert rows["m1"]["vs_ai"] is False
    assert (rows["m5"]["ranked"], rows["m5"]["vs_ai"], rows["m5"]["length"]) == (False, True, 3)
    assert rows["m5"]["source_line"] == 6
    assert quarantined(result.quarantine) == [
        (3, "m2", "player 'a' cannot play against themselves"),
        (4, "m3", "length '0' is not an integer of at least 1"),
        (5, "m4", "ranked is empty (true or false)"),
        (7, "m1", "match id 'm1' appears again (first on line 2)"),
        (8, "m6", "ended_at '2025-01-32' is not a valid ISO 8601 date"),
        (9, "m7", "length 'three' is not an integer of at least 1"),
        (10, "m8", "vs_ai 'robot' is not true or false"),
        (11, "m9", "winner_id is empty"),
    ]


def test_backgammon_booleans_take_yes_no_and_nul_quarantines_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bg.csv"
    path.write_bytes(
        b"match_id,ended_at,winner_id,loser_id,length,ranked,vs_ai\n"
        b"m1,2025-01-01,a,b,3,Yes,no\n"
        b"m2,2025-01-01,a,b\x00,3,1,0\n"
        b"m3,2025-01-01,a,b,3.0,NO,1\n"
    )
    result = read_backgammon(path)
    rows = {r["match_id"]: r for r in result.rows.to_dicts()}
    assert set(rows) == {"m1", "m3"}
    assert (rows["m1"]["ranked"], rows["m1"]["vs_ai"]) == (True, False)
    assert (rows["m3"]["ranked"], rows["m3"]["vs_ai"], rows["m3"]["length"]) == (False, True, 3)
    assert quarantined(result.quarantine) == [
        (3, "m2", "the line holds a NUL byte (column loser_id)")
    ]


def test_backgammon_vs_ai_optional(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bg.csv",
        "match_id,ended_at,winner_id,loser_id,length,ranked\nm1,2025-03-01,a,b,7,true\n",
    )
    assert read_backgammon(path).rows["vs_ai"].to_list() == [False]
