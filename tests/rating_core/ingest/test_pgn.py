"""Unit tests of the PGN reader: field mapping, every quarantine reason, compressed inputs."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
import zstandard

from rating_core.ingest import pgn_scan
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


def test_a_file_that_is_not_utf8_is_read_as_windows_1252(tmp_path: Path) -> None:
    # before: every game with a non-UTF-8 byte was quarantined; now the file is Windows-1252
    bad = game(white="M\xfcller \x80", black="x\x81y").encode("latin-1")
    text = game(white="first").encode("cp1252") + bad + game(white="last").encode()
    res = read_pgn(write(tmp_path, text), source_file="club/old.pgn")
    assert res.rows["white_name"].to_list() == ["first", "Müller €", "last"]
    assert res.rows["black_name"][1] == "x\x81y"  # undefined in Windows-1252: read as Latin-1
    assert res.quarantine.height == 0
    assert res.notes == ("club/old.pgn: not UTF-8, read as Windows-1252",)
    assert res.rows["source_line"].to_list() == [1, 9, 17]


def test_a_utf8_file_stays_utf8_without_a_note(tmp_path: Path) -> None:
    res = read_pgn(write(tmp_path, game(white="Zoë Müller")))
    assert res.rows["white_name"].to_list() == ["Zoë Müller"]
    assert res.notes == ()


def test_windows_1252_file_with_a_bom_like_start(tmp_path: Path) -> None:
    text = b"\xef\xbb\xbf" + game(white="M\xfcller").encode("latin-1")
    res = read_pgn(write(tmp_path, text))
    assert res.rows["white_name"].to_list() == ["Müller"]
    assert res.rows["source_line"].to_list() == [1]


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
    monkeypatch.setattr(pgn_scan, "PARALLEL_MIN_BYTES", 0)
    assert pgn_scan.default_chunks(path.stat().st_size) >= 2  # the default now splits the file
    parallel = read_pgn(path).rows
    assert parallel.equals(single)
    assert single["source_line"][199] == 1 + 199 * 8


def test_missing_file_is_unreadable(tmp_path: Path) -> None:
    from rating_core.ingest.common import UnreadableFileError

    with pytest.raises(UnreadableFileError, match="nope.pgn"):
        read_pgn(tmp_path / "nope.pgn")


def _zst(raw: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(raw)


@pytest.mark.parametrize(
    ("name", "cut"),
    [
        ("games.pgn.gz", lambda raw: gzip.compress(raw)[: len(gzip.compress(raw)) * 6 // 10]),
        ("games.pgn.zst", lambda raw: _zst(raw)[: len(_zst(raw)) * 6 // 10]),
        ("games.pgn.gz", lambda raw: gzip.compress(raw)[:-4]),  # only the size field lost
        ("games.pgn.zst", lambda raw: _zst(raw)[:-1]),
        ("games.pgn.gz", lambda raw: b"PK\x03\x04 not gzip at all"),
        ("games.pgn.zst", lambda raw: b"(\xb5/\xfd damaged frame header"),
        ("games.pgn.gz", lambda raw: b""),  # a download cut at 0 %
        ("games.pgn.zst", lambda raw: b""),
        ("GAMES.PGN.GZ", lambda raw: gzip.compress(raw)[:-10]),
        (
            "games.pgn.gz",
            lambda raw: gzip.compress(raw)[:40] + b"\0" * 20 + gzip.compress(raw)[60:],
        ),
    ],
)
def test_truncated_or_corrupt_archive_stops_with_the_file_name(
    tmp_path: Path, name: str, cut
) -> None:
    from rating_core.ingest.common import UnreadableFileError

    raw = "".join(game(white=f"p{i}", moves="1. d4 d5 " * 20) for i in range(300)).encode()
    path = write(tmp_path, cut(raw), name)
    with pytest.raises(UnreadableFileError) as err:
        read_pgn(path, f"platform/{name}")
    message = str(err.value)
    assert message.startswith(f"platform/{name}: truncated or corrupt ")
    kind = "gzip" if name.lower().endswith(".gz") else "zstd"
    assert f"{kind} data" in message
    for python_name in ("Error", "zlib", "EOF", "Exception"):
        assert python_name not in message


def test_every_frame_of_a_multi_frame_zst_is_read(tmp_path: Path) -> None:
    # before: only the first frame was decompressed, the games of the others were lost silently
    data = _zst(game(white="a").encode()) + _zst(game(white="b").encode())
    res = read_pgn(write(tmp_path, data, "games.pgn.zst"))
    assert res.rows["white_name"].to_list() == ["a", "b"]


@pytest.mark.parametrize("name", ["GAMES.PGN.GZ", "Games.Pgn.Zst"])
def test_compression_suffix_in_any_case(tmp_path: Path, name: str) -> None:
    raw = (game(white="a") + game(white="b")).encode()
    data = gzip.compress(raw) if name.lower().endswith(".gz") else _zst(raw)
    res = read_pgn(write(tmp_path, data, name))
    assert res.rows["white_name"].to_list() == ["a", "b"]
    stem = name.split(".")[0]
    assert res.rows["game_id"].to_list() == [f"{stem}#1", f"{stem}#2"]


@pytest.mark.parametrize("tag", ["White", "Black", "Event", "WhiteFideId"])
def test_nul_byte_in_a_tag_is_quarantined(tmp_path: Path, tag: str) -> None:
    bad = game(extra='[WhiteFideId "123"]\n')
    bad = bad.replace(f'[{tag} "', f'[{tag} "x\0')
    q = check_bad_between(tmp_path, bad, f"a NUL byte is in tag {tag}")
    line = 8 + 1 + next(i for i, t in enumerate(bad.splitlines()) if t.startswith(f"[{tag} "))
    assert q["line"][0] == line
    assert q["value"][0].startswith("x\\0")


def test_nul_byte_in_a_compressed_file(tmp_path: Path) -> None:
    text = game(white="first") + game(white="bad\0guy") + game(white="last")
    res = read_pgn(write(tmp_path, gzip.compress(text.encode()), "g.pgn.gz"))
    assert res.rows["white_name"].to_list() == ["first", "last"]
    assert res.quarantine["reason"].to_list()[0].startswith("a NUL byte is in tag White")
    assert res.quarantine["line"].to_list() == [11]


@pytest.mark.parametrize("token", ["2-0", "1-1", "0.5-0.5", "½-½", "1:0", "draw"])
def test_a_token_where_the_result_should_be(tmp_path: Path, token: str) -> None:
    bad = game().replace("Nc6 1-0\n", f"Nc6 {token}\n")
    q = check_bad_between(tmp_path, bad, f"'{token}' is not a result")
    assert q["line"][0] == 9 and q["value"][0] == token


@pytest.mark.parametrize("tail", ["2. Nf3", "2. Nf3 {a comment", "2.", "2... Nc6 $1", "2. O-O+"])
def test_a_movetext_cut_after_a_move_is_truncated(tmp_path: Path, tail: str) -> None:
    bad = game().replace("2. Nf3 Nc6 1-0\n", tail + "\n")
    check_bad_between(tmp_path, bad, "no result (truncated?)")


def test_one_blank_line_between_tags_does_not_split_the_game(tmp_path: Path) -> None:
    chessbase = game(white="mid").replace('[White "mid"]\n', '\n[White "mid"]\n')
    res = read_pgn(write(tmp_path, game(white="first") + chessbase + game(white="last")))
    assert res.quarantine.height == 0, res.quarantine
    assert res.rows["white_name"].to_list() == ["first", "mid", "last"]
    assert res.rows["source_line"].to_list() == [1, 9, 18]


def test_a_game_cut_after_its_tags_still_is_its_own_record(tmp_path: Path) -> None:
    cut = '[Event "cut"]\n[White "x"]\n[Black "y"]\n\n'
    res = read_pgn(write(tmp_path, game(white="first") + cut + game(white="last")))
    assert res.rows["white_name"].to_list() == ["first", "last"]
    assert res.rows["source_line"].to_list() == [1, 13]
    assert res.quarantine["line"].to_list() == [9]
    assert "truncated" in res.quarantine["reason"][0]


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ('[Variant "Atomic"]\n', "variant 'Atomic': the rating rules are for standard chess"),
        ('[Variant "Crazyhouse"]\n', "variant 'Crazyhouse': the rating rules are for"),
        (
            '[Variant "Chess960"]\n[FEN "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"]\n',
            "variant 'Chess960'",
        ),
        (
            '[Variant "From Position"]\n[FEN "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"]\n',
            "variant 'From Position'",
        ),
        (
            '[SetUp "1"]\n[FEN "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"]\n',
            "starts from a set-up position (FEN tag): the rating rules are for standard chess",
        ),
        ('[SetUp "1"]\n', "starts from a set-up position (SetUp tag)"),
        ('[Variant "Standard"]\n', None),
        ('[Variant "standard"]\n', None),
        ('[SetUp "1"]\n[FEN "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"]\n', None),
        ('[SetUp "0"]\n', None),
    ],
)
def test_variants_and_set_up_positions_are_kept_unrated(
    tmp_path: Path, extra: str, reason: str | None
) -> None:
    res = read_pgn(write(tmp_path, game(white="first") + game(white="v", extra=extra)))
    assert res.quarantine.height == 0
    assert res.rows["white_name"].to_list() == ["first", "v"]
    reasons = res.rows["unrated_reason"].to_list()
    assert reasons[0] is None
    if reason is None:
        assert reasons[1] is None
    else:
        assert reason in reasons[1]


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("e.pgn", b""),
        ("w.pgn", b"  \n\n\t\r\n"),
        ("e.pgn.gz", gzip.compress(b"")),
        ("e.pgn.zst", zstandard.ZstdCompressor().compress(b"")),
    ],
)
def test_an_empty_file_is_no_games_with_a_note(tmp_path: Path, name: str, data: bytes) -> None:
    res = read_pgn(write(tmp_path, data, name), f"club/{name}")
    assert res.rows.height == 0 and res.quarantine.height == 0
    assert res.rows.schema == pl.Schema(RAW_GAMES_SCHEMA)
    assert res.notes == (f"club/{name}: empty, no games",)
