"""Unit tests of the PGN reader: field mapping, every quarantine reason, compressed inputs."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
import zstandard

from rating_core.ingest import pgn
from rating_core.ingest.pgn import read_pgn
from rating_core.schemas import QUARANTINE_SCHEMA, RAW_GAMES_SCHEMA


def game(
    white: str = "alice",
    black: str = "bob",
    result: str = "1-0",
    date: str = "2025.05.01",
    extra: str = "",
    moves: str = "1. e4 e5 2. Nf3 Nc6",
    site: str | None = None,
) -> str:
    """A small game in PGN text with the tags the tests vary."""
    site_tag = f'[Site "{site}"]\n' if site else ""
    return (
        f'[Event "Test"]\n{site_tag}[Date "{date}"]\n[White "{white}"]\n[Black "{black}"]\n'
        f'[Result "{result}"]\n{extra}\n{moves} {result}\n\n'
    )


def write(tmp_path: Path, text: str | bytes, name: str = "t.pgn") -> Path:
    """Write a PGN file to tmp_path."""
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def check_bad_between(tmp_path: Path, bad: str, reason_part: str) -> pl.DataFrame:
    """A bad game between two good ones: two rows land, one quarantine row names the reason."""
    text = game(white="first") + bad + game(white="last")
    res = read_pgn(write(tmp_path, text))
    assert res.rows["white_name"].to_list() == ["first", "last"]
    assert res.quarantine.height == 1, res.quarantine
    assert reason_part in res.quarantine["reason"][0]
    assert res.quarantine.schema == pl.Schema(QUARANTINE_SCHEMA)
    return res.quarantine


def test_mapping_of_a_lichess_game(tmp_path: Path) -> None:
    text = (
        '[Event "Casual Blitz game"]\n[Site "https://lichess.org/AbCd1234"]\n'
        '[Date "2025.05.01"]\n[Round "-"]\n[White "alice"]\n[Black "bot1"]\n'
        '[Result "1/2-1/2"]\n[UTCDate "2025.05.02"]\n[UTCTime "13:14:15"]\n'
        '[WhiteElo "1500"]\n[BlackElo "?"]\n[BlackTitle "BOT"]\n[TimeControl "300+3"]\n'
        '[Termination "Time forfeit"]\n\n'
        "1. e4 { [%clk 0:05:00] } 1... e5 $1 (1... c5 2. Nf3 (2. c3) d6) 2. Nf3!? ; note\n"
        "2... Nc6 3. O-O-O 1/2-1/2\n"
    )
    res = read_pgn(write(tmp_path, text))
    assert res.quarantine.height == 0
    row = res.rows.row(0, named=True)
    assert res.rows.schema == pl.Schema(RAW_GAMES_SCHEMA)
    assert row["game_id"] == "AbCd1234"
    assert row["source_file"] == str(tmp_path / "t.pgn")
    assert row["source_line"] == 1
    assert row["played_at"] == datetime(2025, 5, 2, 13, 14, 15, tzinfo=UTC)
    assert row["white_id"] == "alice" and row["white_id_from_name"] is True
    assert row["result"] == "1/2-1/2"
    assert row["rated"] is False and row["kind"] == "live"
    assert row["termination"] == "timeout"
    assert row["white_elo"] == 1500 and row["black_elo"] is None
    assert row["white_is_bot"] is False and row["black_is_bot"] is True
    assert row["plies"] == 5  # e4 e5 Nf3 Nc6 O-O-O; the variation and the comment do not count
    assert row["round"] is None and row["format"] == "pgn"
    assert row["tournament_id"] == "Casual Blitz game"


def test_federation_game_fide_ids_round_and_ordinal_ids(tmp_path: Path) -> None:
    extra = '[Round "3.1"]\n[Site "Hastings ENG"]\n[WhiteFideId "123"]\n[BlackFideId "0"]\n'
    text = game() + game(extra=extra, date="2025.06.??").replace(
        '[Event "Test"]', '[Event "Open"]\n[EventDate "2025.06.20"]'
    )
    res = read_pgn(write(tmp_path, text, "open.pgn"), source_file="inbox/open.pgn")
    assert res.rows["game_id"].to_list() == ["open#1", "open#2"]
    second = res.rows.row(1, named=True)
    assert second["white_id"] == "123" and second["white_id_from_name"] is False
    assert second["black_id"] == "bob" and second["black_id_from_name"] is True
    assert second["round"] == 3
    assert second["tournament_id"] == "Open | Hastings ENG"
    assert second["played_at"] == datetime(2025, 6, 20, tzinfo=UTC)
    assert second["time_control"] is None
    assert second["source_file"] == "inbox/open.pgn"


@pytest.mark.parametrize(
    ("event", "tc", "kind", "rated"),
    [
        ("Rated Correspondence game", "-", "correspondence", True),
        ("Casual Unlimited game", "-", "unlimited", False),
        ("Rated Bullet game", "60+0", "live", True),
    ],
)
def test_kind_and_rated(tmp_path: Path, event: str, tc: str, kind: str, rated: bool) -> None:
    text = game(extra=f'[TimeControl "{tc}"]\n').replace("Test", event)
    row = read_pgn(write(tmp_path, text)).rows.row(0, named=True)
    assert (row["kind"], row["rated"], row["time_control"]) == (kind, rated, tc)


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("Normal", "normal"),
        ("Abandoned", "abandon"),
        ("Rules infraction", "normal"),
        ("Unterminated", "unknown"),
        ("Whatever", "unknown"),
        ("bot_no_move", "bot_no_move"),
        (None, "normal"),
    ],
)
def test_termination(tmp_path: Path, tag: str | None, expected: str) -> None:
    extra = f'[Termination "{tag}"]\n' if tag else ""
    row = read_pgn(write(tmp_path, game(extra=extra))).rows.row(0, named=True)
    assert row["termination"] == expected


def test_unfinished_result(tmp_path: Path) -> None:
    q = check_bad_between(tmp_path, game(result="*"), "result '*' is not a finished result")
    assert q["line"][0] == 9  # the bad game's first tag line
    assert q["value"][0] == "*"


def test_incomplete_date(tmp_path: Path) -> None:
    check_bad_between(tmp_path, game(date="2025.??.??"), "date '2025.??.??' is incomplete")


def test_impossible_date(tmp_path: Path) -> None:
    check_bad_between(tmp_path, game(date="2025.02.30"), "not a real date")


def test_malformed_tag_line(tmp_path: Path) -> None:
    bad = game().replace('[White "alice"]', '[White "unterminated')
    q = check_bad_between(tmp_path, bad, "malformed tag line")
    assert q["value"][0] == '[White "unterminated'
    assert q["line"][0] == 11


def test_missing_player(tmp_path: Path) -> None:
    bad = game().replace('[Black "bob"]\n', "")
    check_bad_between(tmp_path, bad, "Black player is missing")


def test_non_utf8_bytes(tmp_path: Path) -> None:
    bad = game(white="M\xfcller").encode("latin-1")
    text = game(white="first").encode() + bad + game(white="last").encode()
    res = read_pgn(write(tmp_path, text))
    assert res.rows["white_name"].to_list() == ["first", "last"]
    assert res.quarantine.height == 1
    assert "not UTF-8" in res.quarantine["reason"][0]
    assert res.quarantine["value"][0] == '[White "M\ufffdller"]'


def test_truncated_last_game(tmp_path: Path) -> None:
    text = game(white="first") + game(white="last") + '[Event "cut"]\n[White "x"]\n[Black "y"]\n'
    res = read_pgn(write(tmp_path, text))
    assert res.rows["white_name"].to_list() == ["first", "last"]
    assert res.quarantine.height == 1
    assert "truncated" in res.quarantine["reason"][0]
    assert res.quarantine["line"][0] == 17


def test_duplicate_game_id(tmp_path: Path) -> None:
    url = "https://lichess.org/same0001"
    res = read_pgn(write(tmp_path, game(site=url) + game(site=url, white="x")))
    assert res.rows.height == 1
    assert "already appears at line 1" in res.quarantine["reason"][0]


def test_nested_variations_comments_and_nags(tmp_path: Path) -> None:
    moves = (
        "1. e4 {a (comment) Nf3} e5 (1... c5 (1... e6 2. d4) 2. Nf3) 2. Nf3 $14 Nc6?! "
        "; to the end Nf3 Nf6\n% escaped Nf3\n3. Bb5 a6 4. Ba4 e8=Q"
    )
    row = read_pgn(write(tmp_path, game(moves=moves))).rows.row(0, named=True)
    assert row["plies"] == 8  # e4 e5 Nf3 Nc6 Bb5 a6 Ba4 e8=Q


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_compressed(tmp_path: Path, suffix: str) -> None:
    raw = (game(white="a") + game(white="b")).encode()
    data = gzip.compress(raw) if suffix == ".gz" else zstandard.ZstdCompressor().compress(raw)
    res = read_pgn(write(tmp_path, data, "games.pgn" + suffix))
    assert res.rows["white_name"].to_list() == ["a", "b"]
    assert res.rows["game_id"].to_list() == ["games#1", "games#2"]


def test_parallel_scan_matches_single_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "".join(game(white=f"p{i}", moves="1. d4 d5 " * (i % 5 + 1)) for i in range(200))
    path = write(tmp_path, text)
    single = read_pgn(path).rows
    monkeypatch.setattr(pgn, "PARALLEL_MIN_BYTES", 0)
    assert pgn._default_chunks(path.stat().st_size) >= 2  # the default now splits the file
    parallel = read_pgn(path).rows
    assert parallel.equals(single)
    assert single["source_line"][199] == 1 + 199 * 8


def test_missing_file_is_unreadable(tmp_path: Path) -> None:
    from rating_core.ingest.common import UnreadableFileError

    with pytest.raises(UnreadableFileError, match="nope.pgn"):
        read_pgn(tmp_path / "nope.pgn")
