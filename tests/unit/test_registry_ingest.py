"""Registry readers: players, starting lists, moderation decisions and backgammon matches."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

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
    result = read_players(write(tmp_path, "players.csv", PLAYERS))
    rows = result.rows
    assert rows.schema == pl.Schema(PLAYERS_SCHEMA)
    assert rows["player_id"].to_list() == ["p1", "bot1", "bot2", "p5"]
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
    assert quarantined(result.quarantine) == [
        (3, "p2", "birth_date '1990-02-30' is not YYYY or a real YYYY-MM-DD"),
        (5, "p1", "player id 'p1' appears again (first on line 2)"),
        (6, "p3", "is_bot 'maybe' is not true or false"),
        (7, "p4", "bot_rating 'strong' is not an integer from 0 to 3500"),
        (10, "p6", "email_verified 'sometimes' is not true or false"),
        (11, None, "the player id is empty"),
        (12, "p7", "birth_date '19x0' is not YYYY or a real YYYY-MM-DD"),
    ]


def test_players_only_player_id_required(tmp_path: Path) -> None:
    result = read_players(write(tmp_path, "players.csv", "player_id\na\nb\n"))
    assert result.rows["player_id"].to_list() == ["a", "b"]
    assert result.rows["is_bot"].to_list() == [False, False]
    with pytest.raises(UnreadableFileError, match="missing required column 'player_id'"):
        read_players(write(tmp_path, "p2.csv", "id,name\na,b\n"))


# --- starting lists ---------------------------------------------------------------------------


def test_fide_starting_list(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "fide-standard@2025-12.csv",
        "player_id,rating,rated_games,peak_rating\n"
        "a,2000,30,\n"  # 2
        "b,3600,3,\n"  # 3
        "c,1900,,\n"  # 4
        "a,1800,4,1900\n"  # 5
        "d,x,1,\n"  # 6
        "e,1500,-2,\n"  # 7
        "f,1450,12,1610\n"  # 8
        "g,1400,5,4000\n",  # 9
    )
    result = read_starting_list(path)
    assert result.rows.schema == pl.Schema(STARTING_LIST_SCHEMA)
    assert result.rows.to_dicts() == [
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
    assert quarantined(result.quarantine) == [
        (3, "b", "rating '3600' is not an integer from 0 to 3500"),
        (4, "c", "rated_games is empty"),
        (5, "a", "player id 'a' appears again (first on line 2)"),
        (6, "d", "rating 'x' is not an integer from 0 to 3500"),
        (7, "e", "rated_games '-2' is not an integer of at least 0"),
        (9, "g", "peak_rating '4000' is not an integer from 0 to 3500"),
    ]


def test_ukd_starting_list(tmp_path: Path) -> None:
    path = write(tmp_path, "ukd-blitz@2026-01.csv", "player_id,rating\nu1,1700\nu2,\nu3,-5\n")
    result = read_starting_list(path)
    assert result.rows.to_dicts() == [
        {
            "list": "ukd-blitz",
            "period": "2026-01",
            "player_id": "u1",
            "rating": 1700,
            "rated_games": None,
            "peak_rating": None,
        }
    ]
    assert [r[0] for r in quarantined(result.quarantine)] == [3, 4]


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
        "fide-standard@2025-12.txt",
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


def test_backgammon_vs_ai_optional(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bg.csv",
        "match_id,ended_at,winner_id,loser_id,length,ranked\nm1,2025-03-01,a,b,7,true\n",
    )
    assert read_backgammon(path).rows["vs_ai"].to_list() == [False]
