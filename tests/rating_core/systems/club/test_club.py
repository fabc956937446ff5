"""Club ratings (RULES §6): tournament unit, new players at 1500, floor 100, no 1400 drop."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from rating_core.schemas import GAMES_SCHEMA, conform
from rating_core.systems.club.folders import (
    ClubFolderError,
    check_club_folders,
    club_list_name,
    club_slug,
)
from rating_core.systems.club.period import club_period, club_tournament
from rating_core.systems.club.rules import CLUB_STATE_SCHEMA


def games_frame(rows: list[tuple]) -> pl.DataFrame:
    """Rows: (game_id, tournament_id, date, white, black, white_score[, status])."""
    data = [
        {
            "game_id": r[0],
            "tournament_id": r[1],
            "played_at": dt.datetime(r[2].year, r[2].month, r[2].day, 12, tzinfo=dt.UTC),
            "period": f"{r[2].year:04d}-{r[2].month:02d}",
            "white_id": r[3],
            "black_id": r[4],
            "white_score": r[5],
            "rating_list": "standard",
            "status": r[6] if len(r) > 6 else "finished",
            "rated": True,
        }
        for r in rows
    ]
    return conform(pl.DataFrame(data), GAMES_SCHEMA)


def empty_state() -> pl.DataFrame:
    return pl.DataFrame(schema=CLUB_STATE_SCHEMA)


def ratings(frame: pl.DataFrame) -> dict[str, int]:
    return dict(zip(frame["player_id"], frame["rating"], strict=True))


def test_new_players_start_at_1500_with_k40() -> None:
    r = club_tournament(
        games_frame([("g1", "T", dt.date(2024, 1, 5), "a", "b", 1.0)]), empty_state()
    )
    assert ratings(r.state) == {"a": 1520, "b": 1480}  # 40 x .5
    assert r.state["rated_games"].to_list() == [1, 1]
    assert r.player_explanations["new_player"].to_list() == [True, True]


def test_tournaments_in_end_date_order_each_rounded() -> None:
    games = games_frame(
        [
            ("g2", "A-late", dt.date(2024, 1, 20), "a", "c", 1.0),  # id sorts first, ends later
            ("g1", "Z-early", dt.date(2024, 1, 5), "a", "b", 1.0),
            ("g3", "Z-early", dt.date(2024, 1, 6), "c", "c2", 0.5),
            ("g4", "Z-early", dt.date(2024, 1, 6), "a", "x", 1.0, "forfeit"),
        ]
    )
    r = club_period(games, empty_state())
    assert r.tournament_order == ["Z-early", "A-late"]
    # Z-early: a 1520, b 1480, c and c2 1500. A-late: a 1520 vs c 1500, D -20 -> .53,
    # a +.47 x 40 = 18.8 -> 19, c -.47 x 40 -> -19.
    assert ratings(r.state) == {"a": 1539, "b": 1480, "c": 1481, "c2": 1500}
    a = r.list_rows.filter(pl.col("player_id") == "a").row(0, named=True)
    assert (a["games"], a["change"]) == (2, 39)


def test_floor_100_and_no_1400_drop() -> None:
    st = pl.DataFrame(
        {
            "player_id": ["p", "q", "r", "s"],
            "rating": [105, 105, 110, 110],
            "rated_games": [40] * 4,
            "peak_rating": [200] * 4,
        },
        schema=CLUB_STATE_SCHEMA,
    )
    games = games_frame(
        [
            ("g1", "T", dt.date(2024, 1, 5), "p", "q", 0.0),
            ("g2", "T", dt.date(2024, 1, 5), "r", "s", 0.0),
        ]
    )
    r = club_tournament(games, st)
    # 105 - 10 = 95 -> 100 (floor); 110 - 10 = 100
    assert ratings(r.state) == {"p": 100, "q": 115, "r": 100, "s": 120}


def test_k_cap_per_tournament() -> None:
    games = games_frame([(f"g{i}", "T", dt.date(2024, 1, 5), "a", f"o{i}", 1.0) for i in range(20)])
    r = club_tournament(games, empty_state())
    a = r.player_explanations.filter(pl.col("player_id") == "a").row(0, named=True)
    assert (a["k_base"], a["k_used"], a["change"]) == (40, 35, 350)


@pytest.mark.parametrize(
    ("folder", "list_name"),
    [
        ("ankara-sk", "club-ankara-sk-standard"),  # a safe name stays as it is
        ("ODTU_SK.1", "club-ODTU_SK.1-standard"),  # ... upper case, '_' and '.' included
        ("Ankara SK", "club-ankara-sk-standard"),
        ("Şişli", "club-sisli-standard"),
        ("İstanbul Satranç Kulübü", "club-istanbul-satranc-kulubu-standard"),
        ("Ærø  Skak (1920)", "club-aero-skak-1920-standard"),
        ("_Kadıköy_", "club-kadikoy-standard"),
        ("Straße", "club-strasse-standard"),
    ],
)
def test_club_list_names_are_made_safe_from_the_folder_name(folder: str, list_name: str) -> None:
    assert club_list_name(folder, "standard") == list_name
    assert club_slug(folder).isascii()


def test_folders_folding_to_one_list_name_are_refused_naming_both() -> None:
    check_club_folders(["Ankara SK", "Şişli", "ankara-sk-2"])
    with pytest.raises(ClubFolderError) as refused:
        check_club_folders(["Ankara SK", "Şişli", "ankara-sk"])
    message = str(refused.value)
    assert "'clubs/Ankara SK' and 'clubs/ankara-sk'" in message
    assert "club-ankara-sk-" in message


def test_a_folder_without_letters_or_digits_is_refused() -> None:
    with pytest.raises(ClubFolderError, match="'clubs/象棋' has no letter or digit"):
        check_club_folders(["象棋"])
