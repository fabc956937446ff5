"""Malformed-input corpus: the registry, starting lists, moderation and NUL bytes in CSV cells.

Issue 9 items 3, 4, 5 and 8, through the ingest assets: a bad `players.csv` cell is quarantined
and read as empty (the row and a bot's declaration land); an unreadable starting-list row stops
the run naming the file, line and value; a moderation decision for a missing game is quarantined;
a NUL byte in one CSV cell quarantines that line only.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from tests.support.inbox import (
    FEDERATION_HEADER,
    PLATFORM_HEADER,
    PLAYERS_HEADER,
    Ingested,
    assert_one_sentence,
    ingest,
    ratings,
    write_inbox,
)

# The bad-input corpus runs the ingest assets and the `ratings` command on each case.
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("csv_in_chunks_of_two_rows")]

GOOD_PLAYERS = (
    "u-ann,Ann,,,1990,,,false,,true,ann\n",  # line 2
    "u-bob,Bob,,,1991,,,false,,true,bob\n",  # the bad row goes between these two
)
GAMES = PLATFORM_HEADER + (
    "g1,2026-01-03T10:00:00Z,u-ann,u-bob,1-0,300+0,true,live,40,resign\n"
    "g2,2026-01-04T10:00:00Z,u-bob,u-ann,0-1,300+0,true,live,40,resign\n"
)


def players_with(row: str) -> str:
    """players.csv with `row` on line 3, between two good players."""
    return PLAYERS_HEADER + GOOD_PLAYERS[0] + row + GOOD_PLAYERS[1]


def run(tmp_path: Path, files: dict[str, str | bytes]) -> Ingested:
    """Ingest an inbox of `files` (plus a platform games file unless given)."""
    return ingest(write_inbox(tmp_path, {"platform/games.csv": GAMES, **files}))


# --- item 3: one bad registry cell ---------------------------------------------------------------

BOOL = "is not true or false (nor yes/no, 1/0); read as empty"
WHOLE = "is not a whole number from 0 to 3500; read as empty"
DATE = "is not YYYY or a real YYYY-MM-DD; read as empty"

CELL_CASES = [
    # (case, row on line 3, quarantined value, reason, expected facts of the row that landed)
    (
        "bot_rating_abc",
        "bot-a,Bot A,,,,,,true,abc,,\n",
        "abc",
        f"column bot_rating: 'abc' {WHOLE}",
        {"is_bot": True, "bot_rating": None, "name": "Bot A"},
    ),
    (
        "bot_rating_half",
        "bot-b,Bot B,,,,,,yes,1100.5,,\n",
        "1100.5",
        f"column bot_rating: '1100.5' {WHOLE}",
        {"is_bot": True, "bot_rating": None, "name": "Bot B"},
    ),
    (
        "bot_rating_too_high",
        "bot-c,Bot C,,,,,,1,9000,,\n",
        "9000",
        f"column bot_rating: '9000' {WHOLE}",
        {"is_bot": True, "bot_rating": None},
    ),
    (
        "is_bot_maybe",
        "u-may,May,,,,,,maybe,,true,\n",
        "maybe",
        f"column is_bot: 'maybe' {BOOL}",
        {"is_bot": False, "email_verified": True, "name": "May"},
    ),
    (
        "email_verified_sometimes",
        "u-sam,Sam,TUR,,1985,,,false,,sometimes,sammy\n",
        "sometimes",
        f"column email_verified: 'sometimes' {BOOL}",
        {"email_verified": False, "federation": "TUR", "birth_year": 1985},
    ),
    (
        "birth_date_impossible",
        "u-jun,Junior,TUR,F,1990-13-45,,345,false,,,\n",
        "1990-13-45",
        f"column birth_date: '1990-13-45' {DATE}",
        {"birth_year": None, "name": "Junior", "fide_id": "345", "sex": "F"},
    ),
    (
        "birth_date_not_a_year",
        "u-yr,Year,,,19x0,,,false,,,\n",
        "19x0",
        f"column birth_date: '19x0' {DATE}",
        {"birth_year": None, "name": "Year"},
    ),
    (
        "nul_in_name",
        "bot-n,Bot\x00N,,,,,,true,1200,,\n",
        "Bot\\0N",
        "column name: 'Bot\\0N' holds a NUL byte; read as empty",
        {"is_bot": True, "bot_rating": 1200, "name": None},
    ),
]


@pytest.mark.parametrize(
    ("row", "value", "reason", "facts"),
    [case[1:] for case in CELL_CASES],
    ids=[case[0] for case in CELL_CASES],
)
def test_a_bad_registry_cell_is_quarantined_and_the_row_lands(
    tmp_path: Path, row: str, value: str, reason: str, facts: dict
) -> None:
    out = run(tmp_path, {"players.csv": players_with(row)})
    q = out.only_quarantined("players.csv")
    player_id = row.split(",")[0]
    assert (q["line"], q["record"], q["value"], q["reason"]) == (3, player_id, value, reason)
    players = {r["player_id"]: r for r in out.players.to_dicts()}
    assert {"u-ann", player_id, "u-bob"} <= set(players)  # the row and its neighbours landed
    assert {k: players[player_id][k] for k in facts} == facts
    assert sorted(out.games["game_id"].to_list()) == ["g1", "g2"]


def test_a_bad_utf8_cell_is_quarantined_and_the_bot_stays_a_bot(tmp_path: Path) -> None:
    text = players_with("bot-m,M\xfcller bot,,,,,,true,1300,,\n").encode("latin-1")
    out = run(tmp_path, {"players.csv": text})
    q = out.only_quarantined("players.csv")
    assert (q["line"], q["record"]) == (3, "bot-m")
    assert q["reason"].startswith("column name: ") and "not UTF-8; read as empty" in q["reason"]
    bot = out.players.filter(pl.col("player_id") == "bot-m").row(0, named=True)
    assert (bot["is_bot"], bot["bot_rating"], bot["name"]) == (True, 1300, None)
    assert {"u-ann", "u-bob"} <= set(out.players["player_id"].to_list())


def test_several_bad_cells_of_one_row_are_each_quarantined(tmp_path: Path) -> None:
    out = run(tmp_path, {"players.csv": players_with("bot-x,Bot X,,,1990-02-30,,,TRUE,abc,x,\n")})
    q = out.quarantine.filter(pl.col("source_file") == "players.csv").sort("value")
    assert q["line"].to_list() == [3, 3, 3]
    assert [r.split(":")[0] for r in q["reason"].to_list()] == [
        "column birth_date",
        "column bot_rating",
        "column email_verified",
    ]
    bot = out.players.filter(pl.col("player_id") == "bot-x").row(0, named=True)
    assert (bot["is_bot"], bot["name"]) == (True, "Bot X")


@pytest.mark.parametrize(
    ("row", "record", "reason"),
    [
        (",Nobody,,,,,,false,,,\n", None, "the player id is empty"),
        ("u-ann,Ann again,,,,,,true,1500,,\n", "u-ann", "player id 'u-ann' appears again"),
        ("u-\x00z,Zed,,,,,,false,,,\n", "u-\\0z", "the player id holds a NUL byte"),
        ("u-w,Wide,,,,,,false,,,,surplus\n", "u-w", "more fields than the header"),
    ],
    ids=["empty_id", "duplicate_id", "nul_in_id", "too_many_fields"],
)
def test_a_registry_row_without_a_usable_id_is_quarantined_whole(
    tmp_path: Path, row: str, record: str | None, reason: str
) -> None:
    out = run(tmp_path, {"players.csv": players_with(row)})
    q = out.only_quarantined("players.csv")
    assert (q["line"], q["record"]) == (3, record)
    assert reason in q["reason"]
    assert out.players["player_id"].to_list() == ["u-ann", "u-bob"]


@pytest.mark.parametrize(
    ("is_bot", "bot_rating", "rating"),
    [("yes", "1100", 1100), ("TRUE", "1100.0", 1100), ("1", "1250", 1250), ("Yes", "", None)],
)
def test_accepted_spellings_keep_the_bot_a_bot(
    tmp_path: Path, is_bot: str, bot_rating: str, rating: int | None
) -> None:
    out = run(tmp_path, {"players.csv": players_with(f"bot-s,S,,,,,,{is_bot},{bot_rating},,\n")})
    assert out.reasons("players.csv") == []
    bot = out.players.filter(pl.col("player_id") == "bot-s").row(0, named=True)
    assert (bot["is_bot"], bot["bot_rating"]) == (True, rating)


def test_games_against_a_bot_without_a_rating_are_kept_not_quarantined(tmp_path: Path) -> None:
    # the game lands in the games table (the site replay excludes it, "bot without a fixed
    # rating"); before the fix it was rated with the bot as a human
    games = GAMES + "g3,2026-01-05T10:00:00Z,u-ann,bot-a,1-0,300+0,true,live,40,resign\n"
    out = run(
        tmp_path,
        {"players.csv": players_with("bot-a,Bot A,,,,,,true,abc,,\n"), "platform/games.csv": games},
    )
    assert sorted(out.games["game_id"].to_list()) == ["g1", "g2", "g3"]
    assert out.reasons("platform/games.csv") == []
    g3 = out.games.filter(pl.col("game_id") == "g3").row(0, named=True)
    assert g3["category"] == "bots"


# --- item 4: starting lists are all or nothing -----------------------------------------------------

FIDE = "player_id,rating,rated_games,peak_rating\n13400001,2410,612,2460\n"
LIST_FILE = "federation/lists/fide-standard@2025-12.csv"


def failure_messages(out: Ingested) -> list[str]:
    """The error text of every failed step of the ingest run, with the errors that caused it."""
    messages = []
    for event in out.result.get_step_failure_events():
        error, text = event.step_failure_data.error, []
        while error is not None:
            text.append(error.message)
            error = error.cause
        messages.append(" | ".join(text))
    return messages


@pytest.mark.parametrize(
    ("row", "sentence"),
    [
        ("13400002,21x0,40,", "line 3 (player 13400002): rating '21x0' is not an integer"),
        ("13400002,2100,,", "line 3 (player 13400002): rated_games is empty"),
        ("13400002,2100.5,40,", "line 3 (player 13400002): rating '2100.5' is not an integer"),
        ("13400001,2000,40,", "line 3 (player 13400001): player id '13400001' appears again"),
        ("13400002,2100,4\x000,", "line 3 (player 13400002): the line holds a NUL byte"),
    ],
    ids=["bad_rating", "empty_rated_games", "fractional_rating", "duplicate", "nul"],
)
def test_an_unreadable_starting_list_row_stops_the_run(
    tmp_path: Path, row: str, sentence: str
) -> None:
    out = run(tmp_path, {LIST_FILE: FIDE + row + "\n13400003,1900,30,1950\n"})
    assert not out.result.success
    messages = failure_messages(out)
    assert len(messages) == 1 and f"{LIST_FILE} {sentence}" in messages[0], messages
    assert "used whole or not at all" in messages[0]
    assert out.table(tables.STARTING_LISTS).height == 0  # no partial official list
    assert sorted(out.games["game_id"].to_list()) == ["g1", "g2"]  # other inputs still read


def test_a_clean_starting_list_with_integral_decimals_lands_whole(tmp_path: Path) -> None:
    out = run(tmp_path, {LIST_FILE: FIDE + "13400002,2100.0,40,2150.0\n"})
    assert out.result.success
    rows = out.table(tables.STARTING_LISTS).sort("player_id")
    assert rows.select("player_id", "rating", "peak_rating").rows() == [
        ("13400001", 2410, 2460),
        ("13400002", 2100, 2150),
    ]


# --- item 5: moderation decisions for games that do not exist ------------------------------------

MODERATION = "platform/moderation/decisions.csv"


@pytest.mark.parametrize(
    ("row", "value", "reason"),
    [
        ("g-missing,2026-02-01T10:00:00Z,annul,typo", "g-missing", "no game with this id"),
        ("g1,2026-02-01T10:00:00Z,annul,again", "g1", "game id 'g1' appears again"),
        ("g2,2026-02-01T10:00:00Z,annul,eng\x00ine", "eng\\0ine", "NUL byte (column reason)"),
        ("g2,2026-02-01T10:00:00Z,ban,cheat", "ban", "decision 'ban' is not annul"),
    ],
    ids=["no_such_game", "duplicate", "nul", "not_annul"],
)
def test_a_bad_moderation_decision_is_quarantined_and_counted(
    tmp_path: Path, row: str, value: str, reason: str
) -> None:
    text = "game_id,decided_at,decision,reason\ng1,2026-02-01T09:00:00Z,annul,engine\n" + row
    out = run(tmp_path, {MODERATION: text + "\n"})
    q = out.only_quarantined(MODERATION)
    assert (q["line"], q["value"]) == (3, value)
    assert reason in q["reason"]
    assert out.table(tables.MODERATION)["game_id"].to_list() == ["g1"]
    summary = out.table(tables.INGEST_SUMMARY)
    counts = summary.filter(pl.col("source_file") == MODERATION).select("ingested", "quarantined")
    assert counts.rows() == [(1, 1)]


# --- item 8: a NUL byte in one CSV cell -----------------------------------------------------------

OK_N0 = "n0,2026-01-06T10:00:00Z,u-ann,u-bob,1-0,300+0,true,live,40,resign\n"
OK_N2 = "n2,2026-01-07T10:00:00Z,u-bob,u-ann,1-0,300+0,true,live,40,resign\n"


@pytest.mark.parametrize(
    ("path", "text", "record", "column"),
    [
        (
            "platform/nul.csv",
            PLATFORM_HEADER
            + OK_N0
            + "n1,2026-01-05T10:00:00Z,u-ann,u-b\x00ob,1-0,300+0,true,live,40,\n"
            + OK_N2,
            "n1",
            "black_id",
        ),
        (
            "platform/nul.csv",
            PLATFORM_HEADER
            + OK_N0
            + "n1,2026-01-05T10:00:00Z,u-ann,u-bob,1-0,300+0,true,live,40,res\x00\n"
            + OK_N2,
            "n1",
            "termination",
        ),
        (
            "federation/nul.csv",
            FEDERATION_HEADER + "f1,T,1,2026-01-10,a,b,1-0,standard\n"
            "f2,T,2,2026-01-11,b,a\x00,1-0,standard\nf3,T,3,2026-01-12,a,c,0-1,standard\n",
            "f2",
            "black_id",
        ),
        (
            "backgammon/nul.csv",
            "match_id,ended_at,winner_id,loser_id,length,ranked\n"
            "m1,2026-01-04T12:00:00Z,a,b,3,true\nm2,2026-01-04T13:00:00Z,a,b,3\x00,true\n"
            "m3,2026-01-04T14:00:00Z,b,a,5,true\n",
            "m2",
            "length",
        ),
    ],
    ids=["platform_id_cell", "platform_last_cell", "federation", "backgammon"],
)
def test_a_nul_byte_quarantines_its_line_only(
    tmp_path: Path, path: str, text: str, record: str, column: str
) -> None:
    out = run(tmp_path, {path: text})
    q = out.only_quarantined(path)
    assert (q["line"], q["record"]) == (3, record)
    assert q["reason"] == f"the line holds a NUL byte (column {column})"
    assert "\x00" not in q["value"] and "\\0" in q["value"]
    landed = out.games["game_id"].to_list()
    if path.startswith("backgammon"):
        landed += out.table(tables.MATCHES)["match_id"].to_list()
    assert {"g1", "g2"} <= set(landed)  # the platform file beside it
    if path.startswith("platform"):
        assert {"n0", "n2"} <= set(landed)
    if path.startswith("federation"):
        assert {"f1", "f3"} <= set(landed)
    if path.startswith("backgammon"):
        assert {"m1", "m3"} <= set(landed)


def test_an_unreadable_starting_list_row_is_one_sentence_on_the_command_line(
    tmp_path: Path,
) -> None:
    inbox = write_inbox(tmp_path, {LIST_FILE: FIDE + "13400002,21x0,40,\n"})
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(tmp_path / "lake"))
    sentence = assert_one_sentence(proc)
    assert f"{LIST_FILE} line 3 (player 13400002): rating '21x0' is not an integer" in sentence
    assert not list((tmp_path / "lake").glob("lists/**/list.parquet"))
