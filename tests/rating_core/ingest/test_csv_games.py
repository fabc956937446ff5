"""Platform and federation game CSV readers: canonical rows, quarantine reasons, unreadable files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from rating_core import budget
from rating_core.ingest.common import UnreadableFileError
from rating_core.ingest.csv_games import read_federation_games, read_game_csv, read_platform_games
from rating_core.ingest.inbox import ingest_games
from rating_core.schemas import QUARANTINE_SCHEMA, RAW_GAMES_SCHEMA


@pytest.fixture(autouse=True, params=["whole", "rows one at a time"])
def csv_chunk_rows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs twice: the CSV read whole, and read a row at a time (`budget.CSV_ROWS`),
    which must give the same rows, lines and quarantine (issue 31 item 2)."""
    if request.param != "whole":
        monkeypatch.setattr(budget, "CSV_ROWS", 1)


PLATFORM_HEADER = (
    "game_id,played_at,white_id,black_id,result,time_control,rated,kind,plies,termination"
)


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    """Write an inline test file and return its path."""
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def reasons_by_line(quarantine: pl.DataFrame) -> dict[int, str]:
    """Quarantine reasons keyed by line number."""
    return dict(zip(quarantine["line"].to_list(), quarantine["reason"].to_list(), strict=True))


def platform(tmp_path: Path, *rows: str, header: str = PLATFORM_HEADER) -> Path:
    """A platform CSV with a good game before and after the given rows."""
    good_a = "ok1,2024-03-01T10:00:00,alice,bob,1-0,300+3,true,live,40,normal"
    good_b = "ok2,2024-03-02T10:00:00,bob,alice,1/2-1/2,300+3,true,live,60,normal"
    return write(tmp_path, "games.csv", "\n".join([header, good_a, *rows, good_b]) + "\n")


def assert_neighbours_land(result_rows: pl.DataFrame) -> None:
    """The good rows around a bad row are still ingested."""
    assert {"ok1", "ok2"} <= set(result_rows["game_id"].to_list())


# --- platform games: good rows ----------------------------------------------------------------


def test_platform_good_rows_are_canonical(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.csv",
        PLATFORM_HEADER + ",days_per_move,otb_confirmed,white_name,white_elo,source\n"
        "g1,2024-03-01T10:00:00,alice,bob,1-0,300+3,true,,40,,,,Alice A,1850,web\n"
        "g2,2024-03-01T10:00:00+02:00,bob,carol,0-1,-,false,correspondence,,resign,3,true,,,app\n",
    )
    result = read_platform_games(path)
    rows = result.rows
    assert rows.schema == pl.Schema(RAW_GAMES_SCHEMA)
    assert result.quarantine.schema == pl.Schema(QUARANTINE_SCHEMA)
    assert result.quarantine.height == 0
    g1, g2 = rows.sort("game_id").to_dicts()
    assert g1["source_file"] == str(path)
    assert g1["source_line"] == 2
    assert g1["format"] == "csv"
    assert g1["played_at"] == datetime(2024, 3, 1, 10, tzinfo=UTC)  # no zone: UTC
    assert g1["kind"] == "live"  # empty: default
    assert g1["termination"] == "normal"  # empty: default
    assert g1["plies"] == 40
    assert g1["rated"] is True
    assert g1["white_name"] == "Alice A"
    assert g1["white_elo"] == 1850
    assert g1["otb_confirmed"] is None
    assert g1["time_control"] == "300+3"
    assert json.loads(g1["extra"]) == {"source": "web"}
    assert g2["played_at"] == datetime(2024, 3, 1, 8, tzinfo=UTC)  # +02:00 converted
    assert g2["kind"] == "correspondence"
    assert g2["plies"] is None
    assert g2["days_per_move"] == 3
    assert g2["otb_confirmed"] is True
    assert g2["rated"] is False
    assert g2["termination"] == "resign"
    assert g2["result"] == "0-1"


def test_platform_source_file_override_and_zulu_time(tmp_path: Path) -> None:
    path = platform(tmp_path, "z1,2024-03-05 23:30:00Z,alice,carol,0-1,60,true,live,12,timeout")
    result = read_platform_games(path, source_file="inbox/platform/games.csv")
    assert set(result.rows["source_file"].to_list()) == {"inbox/platform/games.csv"}
    z1 = result.rows.filter(pl.col("game_id") == "z1").row(0, named=True)
    assert z1["played_at"] == datetime(2024, 3, 5, 23, 30, tzinfo=UTC)
    assert z1["source_line"] == 3


def test_platform_optional_columns_absent_take_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "min.csv",
        "game_id,played_at,white_id,black_id,result,time_control,rated\n"
        "m1,2024-01-01,a,b,1-0,600,true\n",
    )
    row = read_platform_games(path).rows.row(0, named=True)
    assert (row["kind"], row["termination"], row["plies"], row["extra"]) == (
        "live",
        "normal",
        None,
        None,
    )


# --- platform games: every quarantine reason --------------------------------------------------


@pytest.mark.parametrize(
    ("row", "value", "reason_part"),
    [
        (
            "b1,2024-03-01T10:00:00,alice,bob,2-0,300,true,live,40,normal",
            "2-0",
            "result '2-0' is not one of 1-0, 0-1, 1/2-1/2",
        ),
        (
            "b2,2024-02-30T10:00:00,alice,bob,1-0,300,true,live,40,normal",
            "2024-02-30T10:00:00",
            "is not a valid ISO 8601 date",
        ),
        (
            "b3,yesterday,alice,bob,1-0,300,true,live,40,normal",
            "yesterday",
            "is not a valid ISO 8601 date",
        ),
        ("b4,,alice,bob,1-0,300,true,live,40,normal", "", "is not a valid ISO 8601 date"),
        (
            "b6,2024-03-01T10:00:00,alice,bob,1-0,300,maybe,live,40,normal",
            "maybe",
            "rated 'maybe' is not true or false",
        ),
        ("b7,2024-03-01T10:00:00,alice,bob,1-0,300,,live,40,normal", "", "rated is empty"),
        (
            "b8,2024-03-01T10:00:00,alice,bob,1-0,300,true,blitz,40,normal",
            "blitz",
            "kind 'blitz' is not one of",
        ),
        (
            "b9,2024-03-01T10:00:00,alice,bob,1-0,300,true,live,40,checkmate",
            "checkmate",
            "termination 'checkmate' is not one of",
        ),
        (
            "b10,2024-03-01T10:00:00,alice,bob,1-0,300,true,live,forty,normal",
            "forty",
            "plies 'forty' is not an integer",
        ),
        (
            "b11,2024-03-01T10:00:00,alice,bob,1-0,300,true,live,-3,normal",
            "-3",
            "plies '-3' is not an integer of at least 0",
        ),
        (",2024-03-01T10:00:00,alice,bob,1-0,300,true,live,40,normal", "", "the game id is empty"),
        ("b13,2024-03-01T10:00:00,,bob,1-0,300,true,live,40,normal", "", "white_id is empty"),
        ("b14,2024-03-01T10:00:00,alice,,1-0,300,true,live,40,normal", "", "black_id is empty"),
    ],
)
def test_platform_bad_row_is_quarantined_and_neighbours_land(
    tmp_path: Path, row: str, value: str, reason_part: str
) -> None:
    result = read_platform_games(platform(tmp_path, row))
    assert_neighbours_land(result.rows)
    assert result.rows.height == 2
    assert result.quarantine.height == 1
    q = result.quarantine.row(0, named=True)
    assert q["line"] == 3
    assert q["value"] == value
    assert reason_part in q["reason"]
    record = row.split(",")[0]
    assert q["record"] == (record or None)


@pytest.mark.parametrize(
    ("word", "rated"),
    [("true", True), ("TRUE", True), ("Yes", True), ("1", True), ("False", False), ("no", False)]
    + [("NO", False), ("0", False)],
)
def test_platform_booleans_take_yes_no_one_zero_in_any_case(
    tmp_path: Path, word: str, rated: bool
) -> None:
    result = read_platform_games(platform(tmp_path, f"y1,2024-03-01,a,b,1-0,300,{word},,,"))
    assert result.quarantine.height == 0
    assert result.rows.filter(pl.col("game_id") == "y1")["rated"].to_list() == [rated]


def test_platform_integral_decimal_is_the_integer(tmp_path: Path) -> None:
    result = read_platform_games(
        platform(
            tmp_path,
            "d1,2024-03-01,a,b,1-0,300,true,live,40.0,normal",
            "d2,2024-03-01,a,b,1-0,300,true,live,40.5,normal",
        )
    )
    assert result.rows.filter(pl.col("game_id") == "d1")["plies"].to_list() == [40]
    assert reasons_by_line(result.quarantine) == {4: "plies '40.5' is not an integer of at least 0"}


def test_platform_nul_byte_in_one_cell_quarantines_that_line_only(tmp_path: Path) -> None:
    text = (
        PLATFORM_HEADER.encode()
        + b"\nok1,2024-03-01,a,b,1-0,300,true,live,40,normal\n"
        + b"n1,2024-03-01,a,b\x00b,1-0,300,true,live,40,normal\n"
        + b"ok2,2024-03-01,c,d,1-0,300,true,live,40,normal\n"
        + b"n2\x00,2024-03-01,c,d,1-0,300,true,live,40,\x00\n"
    )
    result = read_platform_games(write(tmp_path, "nul.csv", text))
    assert result.rows["game_id"].to_list() == ["ok1", "ok2"]
    assert result.quarantine.select("line", "record", "value", "reason").rows() == [
        (3, "n1", "b\\0b", "the line holds a NUL byte (column black_id)"),
        (5, "n2\\0", "n2\\0", "the line holds a NUL byte (column game_id)"),
    ]


def test_a_nul_byte_in_the_header_is_not_a_csv_file(tmp_path: Path) -> None:
    path = write(tmp_path, "utf16.csv", "game_id,played_at\n".encode("utf-16-le"))
    with pytest.raises(UnreadableFileError, match=r"utf16\.csv: not a CSV text file"):
        read_platform_games(path)


def test_platform_bad_otb_confirmed_is_quarantined(tmp_path: Path) -> None:
    header = PLATFORM_HEADER + ",otb_confirmed"
    path = write(
        tmp_path,
        "otb.csv",
        f"{header}\n"
        "o1,2024-03-01,a,b,1-0,-,true,otb,40,normal,true\n"
        "o2,2024-03-01,a,b,1-0,-,true,otb,40,normal,both\n",
    )
    result = read_platform_games(path)
    assert result.rows["game_id"].to_list() == ["o1"]
    assert reasons_by_line(result.quarantine) == {3: "otb_confirmed 'both' is not true or false"}


def test_platform_time_controls_are_not_checked(tmp_path: Path) -> None:
    result = read_platform_games(platform(tmp_path, "t1,2024-03-01,a,b,1-0,?,true,live,40,normal"))
    assert result.quarantine.height == 0
    assert result.rows.filter(pl.col("game_id") == "t1")["time_control"].to_list() == ["?"]


def test_platform_duplicate_game_id_in_file(tmp_path: Path) -> None:
    path = platform(
        tmp_path,
        "g1,2024-03-01,a,b,1-0,300,true,live,40,normal",
        "g1,2024-03-01,c,d,1-0,300,true,live,40,normal",
        "g1,2024-03-01,e,f,1-0,300,true,live,40,normal",
    )
    result = read_platform_games(path)
    assert result.rows.filter(pl.col("game_id") == "g1")["white_id"].to_list() == ["a"]
    assert reasons_by_line(result.quarantine) == {
        4: "game id 'g1' appears again (first on line 3)",
        5: "game id 'g1' appears again (first on line 3)",
    }


def test_platform_line_numbers_count_blank_lines_and_quoted_newlines(tmp_path: Path) -> None:
    header = PLATFORM_HEADER + ",note"
    path = write(
        tmp_path,
        "multi.csv",
        f"{header}\n"
        'a1,2024-03-01,a,b,1-0,300,true,live,40,normal,"two\nlines"\n'
        "\n"
        "a2,2024-03-01,a,b,9-9,300,true,live,40,normal,x\n",
    )
    result = read_platform_games(path)
    assert result.rows["source_line"].to_list() == [2]
    assert result.quarantine["line"].to_list() == [5]


def test_platform_row_with_too_many_fields_is_quarantined(tmp_path: Path) -> None:
    path = platform(tmp_path, "x1,2024-03-01,a,b,1-0,300,true,live,40,normal,surplus")
    result = read_platform_games(path)
    assert_neighbours_land(result.rows)
    assert result.quarantine["line"].to_list() == [3]
    assert "more fields than the header" in result.quarantine["reason"][0]


def test_platform_non_utf8_line_is_quarantined(tmp_path: Path) -> None:
    text = (
        PLATFORM_HEADER.encode()
        + b"\nok1,2024-03-01,a,b,1-0,300,true,live,40,normal\n"
        + b"u1,2024-03-01,M\xfcller,b,1-0,300,true,live,40,normal\n"
        + b"ok2,2024-03-01,c,d,1-0,300,true,live,40,normal\n"
    )
    result = read_platform_games(write(tmp_path, "latin1.csv", text))
    assert result.rows["game_id"].to_list() == ["ok1", "ok2"]
    assert result.quarantine["line"].to_list() == [3]
    assert "not UTF-8" in result.quarantine["reason"][0]
    assert result.quarantine["record"][0] == "u1"


def test_platform_bom_is_ignored(tmp_path: Path) -> None:
    text = b"\xef\xbb\xbf" + PLATFORM_HEADER.encode() + b"\nb1,2024-03-01,a,b,1-0,300,true,,,\n"
    assert read_platform_games(write(tmp_path, "bom.csv", text)).rows["game_id"].to_list() == ["b1"]


# --- unreadable files ------------------------------------------------------------------------


def test_missing_required_column_raises_naming_file_and_column(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "nores.csv",
        "game_id,played_at,white_id,black_id,time_control,rated\ng,2024-01-01,a,b,300,true\n",
    )
    with pytest.raises(UnreadableFileError, match=r"nores\.csv: missing required column 'result'"):
        read_platform_games(path)


@pytest.mark.parametrize(
    ("content", "why"),
    [(b"", "empty"), (b"   \n\n", "empty"), (b"\x00\x01\x02PK", "not a CSV")],
)
def test_unreadable_files_raise(tmp_path: Path, content: bytes, why: str) -> None:
    path = write(tmp_path, "bad.csv", content)
    with pytest.raises(UnreadableFileError, match=why) as info:
        read_platform_games(path)
    assert "bad.csv" in str(info.value)


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFileError, match="nothere.csv"):
        read_federation_games(tmp_path / "nothere.csv")


def test_duplicate_header_raises(tmp_path: Path) -> None:
    path = write(tmp_path, "dup.csv", PLATFORM_HEADER + ",result\n")
    with pytest.raises(UnreadableFileError, match="column 'result' appears twice"):
        read_platform_games(path)


def test_header_only_file_gives_no_rows(tmp_path: Path) -> None:
    result = read_platform_games(write(tmp_path, "h.csv", PLATFORM_HEADER + "\n"))
    assert result.rows.height == 0
    assert result.rows.schema == pl.Schema(RAW_GAMES_SCHEMA)


# --- federation games ---------------------------------------------------------------------------

FED_HEADER = "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list"


def federation(tmp_path: Path, *rows: str, header: str = FED_HEADER) -> Path:
    """A federation CSV with a good game before and after the given rows."""
    good_a = "ok1,T1,1,2025-06-01,100,200,1-0,standard"
    good_b = "ok2,T1,2,2025-06-02,200,100,0-1,"
    return write(tmp_path, "fed.csv", "\n".join([header, good_a, *rows, good_b]) + "\n")


def test_federation_rows_forfeits_and_byes(tmp_path: Path) -> None:
    path = federation(
        tmp_path,
        "f1,T1,3,2025-06-03,100,300,+-,RAPID",
        "f2,T1,3,2025-06-03,200,400,-+,blitz",
        "f3,T1,4,2025-06-04,300,400,--,standard",
        "f4,T1,4,2025-06-04,100,,bye,",
    )
    result = read_federation_games(path)
    assert result.quarantine.height == 0
    rows = {r["game_id"]: r for r in result.rows.to_dicts()}
    assert set(rows) == {"ok1", "ok2", "f1", "f2", "f3", "f4"}
    assert rows["ok1"]["played_at"] == datetime(2025, 6, 1, tzinfo=UTC)
    assert rows["ok1"]["rating_list"] == "standard"
    assert rows["ok2"]["rating_list"] is None
    assert rows["f1"]["rating_list"] == "rapid"
    assert rows["f1"]["result"] == "+-"
    assert rows["f3"]["result"] == "--"
    assert rows["f4"]["result"] == "bye"
    assert rows["f4"]["black_id"] is None
    assert rows["f1"]["round"] == 3
    assert rows["f1"]["tournament_id"] == "T1"
    assert all(r["rated"] is True and r["kind"] == "otb" for r in rows.values())
    assert rows["f2"]["source_line"] == 4


def test_federation_time_control_column_is_kept(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "tc.csv",
        FED_HEADER + ",time_control\nt1,T,1,2025-06-01,a,b,1-0,,900+10\n",
    )
    row = read_federation_games(path).rows.row(0, named=True)
    assert (row["rating_list"], row["time_control"]) == (None, "900+10")


@pytest.mark.parametrize(
    ("row", "reason_part"),
    [
        (
            "x1,T1,1,2025-06-01,a,b,2-0,standard",
            "result '2-0' is not one of 1-0, 0-1, 1/2-1/2, +-, -+, --, bye",
        ),
        (
            "x2,T1,1,2025-13-01,a,b,1-0,standard",
            "played_on '2025-13-01' is not a valid ISO 8601 date",
        ),
        ("x4,T1,one,2025-06-01,a,b,1-0,standard", "round 'one' is not an integer"),
        ("x5,T1,0,2025-06-01,a,b,1-0,standard", "round '0' is not an integer of at least 1"),
        (
            "x6,T1,1,2025-06-01,a,b,1-0,classical",
            "rating_list 'classical' is not one of standard, rapid, blitz",
        ),
        ("x7,T1,1,2025-06-01,a,b,bye,standard", "a bye has no opponent, but black_id is 'b'"),
        ("x8,T1,1,2025-06-01,a,,1-0,standard", "black_id is empty"),
        ("ok1,T1,1,2025-06-01,a,b,1-0,standard", "game id 'ok1' appears again (first on line 2)"),
    ],
)
def test_federation_bad_rows(tmp_path: Path, row: str, reason_part: str) -> None:
    result = read_federation_games(federation(tmp_path, row))
    assert result.rows["game_id"].to_list() == ["ok1", "ok2"]
    assert result.quarantine["line"].to_list() == [3]
    assert reason_part in result.quarantine["reason"][0]


def test_federation_nul_byte_quarantines_that_line_only(tmp_path: Path) -> None:
    result = read_federation_games(federation(tmp_path, "z1,T1,1,2025-06-01,a,b,1-0,stan\x00dard"))
    assert result.rows["game_id"].to_list() == ["ok1", "ok2"]
    assert reasons_by_line(result.quarantine) == {
        3: "the line holds a NUL byte (column rating_list)"
    }


def test_federation_missing_required_column(tmp_path: Path) -> None:
    path = write(tmp_path, "f.csv", "game_id,tournament_id,played_on,white_id,black_id,result\n")
    with pytest.raises(UnreadableFileError, match="missing required column 'round'"):
        read_federation_games(path)


# --- the reader is chosen by the inbox folder ---------------------------------------------------


def test_a_federation_csv_named_platform_is_read_as_federation(tmp_path: Path) -> None:
    """`federation/platform-export.csv` holds federation columns: the folder decides the reader,
    not the word "platform" in the file's name (nor in a club folder's name)."""
    inbox = tmp_path / "inbox"
    (inbox / "federation").mkdir(parents=True)
    (inbox / "clubs" / "platform-sk").mkdir(parents=True)
    rows = "\n".join([FED_HEADER, "e1,T1,1,2025-06-01,100,200,1-0,standard"]) + "\n"
    (inbox / "federation" / "platform-export.csv").write_text(rows, encoding="utf-8")
    club_rows = "\n".join([FED_HEADER, "c1,C1,1,2025-06-01,300,400,0-1,"]) + "\n"
    (inbox / "clubs" / "platform-sk" / "games.csv").write_text(club_rows, encoding="utf-8")
    batch = ingest_games(inbox)
    assert batch.quarantine.height == 0
    games = {r["game_id"]: r for r in batch.rows.to_dicts()}
    assert (games["e1"]["source"], games["e1"]["kind"], games["e1"]["white_score"]) == (
        "federation",
        "otb",
        1.0,
    )
    assert (games["c1"]["source"], games["c1"]["club_id"]) == ("club", "platform-sk")


def test_read_game_csv_takes_the_folder_kind(tmp_path: Path) -> None:
    fed = federation(tmp_path)
    assert read_game_csv(fed, "federation/fed.csv", "federation").rows["game_id"].len() == 2
    assert read_game_csv(fed, "clubs/x/fed.csv", "club").rows["kind"].to_list() == ["otb"] * 2
    with pytest.raises(UnreadableFileError, match="missing required column 'played_at'"):
        read_game_csv(fed, "platform/fed.csv", "platform")
