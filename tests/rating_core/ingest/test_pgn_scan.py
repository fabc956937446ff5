"""Tests of the PGN byte scanner's pieces: chunked scans, string views, URL ids, dates."""

from __future__ import annotations

import functools
import random
import re
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rating_core.ingest import pgn_frames, pgn_scan
from rating_core.ingest.pgn import read_pgn, read_pgn_reference
from rating_core.ingest.pgn_synth import generate_pgn


def good(i: int, moves: str = "1. e4 { [%clk 0:01:00] } 1... e5 2. Nf3 Nc6", site: str = "") -> str:
    """A well-formed game, told apart by `i`."""
    site_tag = f'[Site "{site}"]\n' if site else ""
    return (
        f'[Event "Rated Blitz game"]\n{site_tag}[Date "2025.05.01"]\n[White "white{i}"]\n'
        f'[Black "black{i}"]\n[Result "1-0"]\n\n{moves} 1-0\n\n'
    )


# defects the quarantine must report, each with the good games around it still landing
BAD_GAMES = [
    good(0).replace('[White "white0"]', '[White "unterminated'),  # malformed tag line
    good(0).replace('[Result "1-0"]', '[Result "*"]'),  # unfinished result
    good(0).replace('[Date "2025.05.01"]', '[Date "2025.02.30"]'),  # impossible date
    good(0).replace("1-0\n\n", "\n\n"),  # no result in the movetext
    good(0).replace("1. e4 { [%clk 0:01:00] } 1... e5 2. Nf3 Nc6 1-0", "{ only a comment }"),
    good(0).replace("{ [%clk 0:01:00] }", "{ a comment\nover lines [Event x] }"),
    good(0).replace('[Black "black0"]\n', ""),  # missing player
    good(0, site="https://lichess.org/dup00001"),  # twice: a duplicate id
    good(0).replace("Nc6", "Nc6 (2... d6 {in (a} 3. d4) $1 ; rest\n% escaped\n3. Bb5"),
    good(0).replace('[White "white0"]', '[White "white\0"]'),  # a NUL byte in a tag
    good(0).replace("Nc6 1-0", "Nc6 2-0"),  # a token that is not a result
    good(0).replace('[Event "Rated Blitz game"]\n', '[Event "cut"]\n[White "x"]\n\n'),  # cut
]


def mixed_file(rng: random.Random, n: int) -> bytes:
    """`n` games, good ones with a bad one now and then, some with a blank line inside their
    tags (ChessBase), one written in Windows-1252 (then the whole file is read so)."""
    parts = [b"stray text before the first game\n\n"]
    for i in range(n):
        r = rng.random()
        if r < 0.15:
            text = rng.choice(BAD_GAMES)
        elif r < 0.17:
            text = good(i).replace(f"white{i}", f"M\xfcller{i}")
            parts.append(text.encode("latin-1"))
            continue
        elif r < 0.25:
            text = good(i, site=f"https://lichess.org/{i:08d}").replace("[White", "\n[White")
        else:
            text = good(i, site=f"https://lichess.org/{i:08d}")
        parts.append(text.encode())
    return b"".join(parts)


def assert_chunks_agree(path: Path, counts: tuple[int, ...] = (2, 3, 7)) -> None:
    """Every chunk count gives the rows and quarantine of the one-chunk scan."""
    one = read_pgn(path, chunks=1)
    for k in counts:
        other = read_pgn(path, chunks=k)
        assert other.rows.equals(one.rows), k
        assert other.quarantine.equals(one.quarantine), k
        assert other.notes == one.notes, k


def cut_count(path: Path, chunks: int) -> int:
    """How many chunks the scanner really uses for the file."""
    buf = np.fromfile(path, dtype=np.uint8)
    return len(pgn_scan._cuts(buf, 0, chunks)) - 1


def test_chunks_on_external_files(external: Path) -> None:
    for name in ("lichess_db_1000k.pgn", "twic1599_1000k.pgn"):
        path = external / "shakmaty" / name
        assert cut_count(path, 7) == 7
        assert_chunks_agree(path)


def test_chunks_on_generated_files(tmp_path: Path) -> None:
    path = generate_pgn(tmp_path / "gen.pgn", 300, seed=11, extras=True, n_bodies=30)
    assert cut_count(path, 7) == 7
    assert_chunks_agree(path)


def test_chunks_with_bad_games(tmp_path: Path) -> None:
    path = tmp_path / "mixed.pgn"
    path.write_bytes(mixed_file(random.Random(5), 400))
    res = read_pgn(path, chunks=1)
    # the file really has every kind of defect, and still its good games
    reasons = " ".join(res.quarantine["reason"].to_list())
    for part in ("malformed", "result '*'", "not a real date", "truncated", "Black"):
        assert part in reasons, part
    assert "a NUL byte is in tag White" in reasons and "'2-0' is not a result" in reasons
    # before: the games with a Windows-1252 byte were quarantined ("not UTF-8")
    assert res.notes == (f"{path}: not UTF-8, read as Windows-1252",)
    assert res.rows["white_name"].str.starts_with("Müller").any()
    assert "already appears" in reasons and "before the first game" in reasons
    assert res.rows.height > 300
    assert cut_count(path, 7) == 7
    assert_chunks_agree(path)
    crlf = tmp_path / "crlf.pgn"
    crlf.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert cut_count(crlf, 3) == 3
    assert_chunks_agree(crlf, (3,))


def test_chunks_never_cut_at_a_blank_line_inside_the_tags(tmp_path: Path) -> None:
    text = "".join(good(i).replace("[White", "\n[White") for i in range(60))
    path = tmp_path / "chessbase.pgn"
    path.write_text(text)
    buf = np.fromfile(path, dtype=np.uint8)
    cuts = pgn_scan._cuts(buf, 0, 7)
    assert len(cuts) - 1 == 7
    assert all(buf[c : c + 7].tobytes() == b"[Event " for c in cuts[1:-1])
    one = read_pgn(path, chunks=1)
    assert one.rows.height == 60 and one.quarantine.height == 0
    assert_chunks_agree(path)


def test_chunk_size_limit_cuts_more_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a file over CHUNK_MAX is cut into more pieces than asked (each keeps its strings < 2 GiB)
    path = generate_pgn(tmp_path / "gen.pgn", 200, seed=2, extras=True, n_bodies=20)
    one = read_pgn(path, chunks=1)
    monkeypatch.setattr(pgn_scan, "CHUNK_MAX", 20_000)
    assert cut_count(path, 1) >= path.stat().st_size // 20_000
    many = read_pgn(path, chunks=1)
    assert many.rows.equals(one.rows) and many.quarantine.equals(one.quarantine)


@pytest.mark.slow
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), chunks=st.integers(2, 9))
def test_chunks_property(tmp_path: Path, seed: int, n: int, chunks: int) -> None:
    path = tmp_path / f"m{seed}.pgn"
    path.write_bytes(mixed_file(random.Random(seed), n))
    one = read_pgn(path, chunks=1)
    other = read_pgn(path, chunks=chunks)
    assert other.rows.equals(one.rows)
    assert other.quarantine.equals(one.quarantine)


def test_duplicate_ids_only_in_a_later_chunk_are_quarantined(tmp_path: Path) -> None:
    # the first chunk holds no duplicate, so the duplicates' rows start with an empty chunk:
    # pl.format panicked on it (the whole file failed) where format_text quarantines them
    games = [good(i, site=f"https://lichess.org/{i:08d}") for i in range(6)]
    twice = good(9, site="https://lichess.org/dup00009")
    path = tmp_path / "late-dups.pgn"
    path.write_text("".join([*games, twice, twice, twice]))
    one = read_pgn(path, chunks=1)
    assert one.quarantine.select("line", "record").rows() == [(64, "dup00009"), (73, "dup00009")]
    assert {r.split(" line")[0] for r in one.quarantine["reason"]} == {
        "game id 'dup00009' already appears at"
    }
    assert cut_count(path, 2) == 2
    assert_chunks_agree(path, counts=(2, 3))


def test_comment_only_movetext_is_quarantined(tmp_path: Path) -> None:
    # the view of a movetext that is only a comment once had a negative length (a crash)
    path = tmp_path / "c.pgn"
    path.write_text(good(1) + BAD_GAMES[4] + good(2))
    res = read_pgn(path)
    assert res.rows["white_name"].to_list() == ["white1", "white2"]
    assert res.quarantine.select("line", "value").rows() == [(9, "")]
    assert "movetext is missing or has no result" in res.quarantine["reason"][0]


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=30), start=st.integers(0, 30), length=st.integers(0, 30))
def test_view_words_are_the_arrow_view_of_the_bytes(data: bytes, start: int, length: int) -> None:
    # the scanner writes Arrow string views itself: the first word (length, 4-byte prefix) of
    # any string and the whole inline view of a string of up to 12 bytes are Arrow's own
    start = min(start, len(data))
    piece = data[start : start + length]
    buf = np.frombuffer(data, dtype=np.uint8)
    w0, w1 = pgn_scan._view_words(buf, start, len(piece))
    arrow = pa.array([piece], pa.binary_view()).buffers()[1]
    want = np.frombuffer(arrow, dtype=np.uint64)[:2]
    assert w0 == want[0]
    if len(piece) <= 12:
        assert w1 == want[1]


CLOCK = re.compile(rb"\{ \[%clk [^}\n\x80-\xff]{8} \}")


@settings(max_examples=300, deadline=None)
@given(
    middle=st.lists(
        st.sampled_from([b"0", b":", b"}", b"\n", b"\xc3", b" ", b"]"]), min_size=8, max_size=8
    ).map(b"".join),
    tail=st.sampled_from([b" }", b"}", b" ]", b"  "]),
    pad=st.integers(0, 8),
)
def test_clock_at_matches_the_clock_comment_pattern(middle: bytes, tail: bytes, pad: int) -> None:
    data = b"{ [%clk " + middle + tail + b" " * pad
    buf = np.frombuffer(data, dtype=np.uint8)
    want = CLOCK.match(data) is not None and len(data) >= 24  # 8-byte reads need 24 bytes
    assert pgn_scan._clock_at(buf, 0, len(data)) == want


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(
        st.sampled_from([b"a", b" ", b"\n", b"\r", b"\xc3\xa9", b'"', b"]"]), max_size=40
    ).map(b"".join),
    start=st.integers(0, 40),
)
def test_line_scan_matches_a_bytewise_scan(data: bytes, start: int) -> None:
    # the word-at-a-time skip must stop where a byte-by-byte scan does, with the same flags
    start = min(start, len(data))
    end = data.find(b"\n", start)
    end = len(data) if end < 0 else end
    line = data[start:end]
    flags = (2 if any(b >= 0x80 for b in line) else 0) | (4 if b"\r" in line else 0)
    buf = np.frombuffer(data, dtype=np.uint8)
    assert pgn_scan._line_scan(buf, start, len(data), pgn_scan._LINE_FLAGS) == (end, flags)


URL_CHARS = st.sampled_from(["h", "t", "p", "s", ":", "/", "?", "#", "a", "b", ".", "é", "//"])


@settings(max_examples=500, deadline=None)
@given(
    prefix=st.sampled_from(["http://", "https://", "", "htps://", "https:/", "http"]),
    rest=st.lists(URL_CHARS, max_size=14).map("".join),
)
def test_url_id_matches_the_regex(prefix: str, rest: str) -> None:
    text = prefix + rest
    raw = text.encode()
    is_url, s, e = pgn_scan._url_id(np.frombuffer(raw, dtype=np.uint8), 0, len(raw))
    assert is_url == (re.match(pgn_scan.URL_PATTERN, text) is not None)
    m = re.match(pgn_scan.URL_ID_PATTERN, text)
    assert (raw[s:e].decode() if s >= 0 else None) == (m.group(1) if m else None)


@pytest.mark.parametrize("length", [1, 4, 11, 12, 13, 40])
def test_game_ids_of_every_length(tmp_path: Path, length: int) -> None:
    # ids up to 12 bytes sit in the string view, longer ones point into the copied Site value
    gid = "".join(random.Random(length).choices("abcXYZ019", k=length))
    site = f"https://example.org/g/{gid}/?x=1"
    path = tmp_path / "ids.pgn"
    path.write_text(good(1, site=site) + good(2, site="https://example.org/") + good(3))
    rows = read_pgn(path).rows
    assert rows["game_id"].to_list() == [gid, "ids#2", "ids#3"]
    assert rows["tournament_id"].to_list() == ["Rated Blitz game"] * 3
    assert rows.equals(read_pgn_reference(path))


def test_last_site_tag_wins(tmp_path: Path) -> None:
    text = good(1, site="https://lichess.org/first001").replace(
        '[Date "2025', '[Site "Hastings ENG"]\n[Date "2025'
    )
    path = tmp_path / "two.pgn"
    path.write_text(text)
    row = read_pgn(path).rows.row(0, named=True)
    assert row["game_id"] == "two#1"
    assert row["tournament_id"] == "Rated Blitz game | Hastings ENG"
    assert read_pgn(path).rows.equals(read_pgn_reference(path))


@pytest.mark.parametrize("tail", ["", "\n", " ", "\r\n"])
def test_file_ending_anywhere_in_the_last_line(tmp_path: Path, tail: str) -> None:
    # values and moves close to the end of the buffer take the byte-by-byte paths
    for pad in range(-1, 12):
        moves = "" if pad < 0 else "1. e4 {" + "x" * pad + "} e5 2. Nf3"
        text = good(1) + good(2, moves=moves).rstrip("\n") + tail
        path = tmp_path / f"end{pad}.pgn"
        path.write_text(text)
        res = read_pgn(path)
        assert res.quarantine.height == 0
        assert res.rows["plies"].to_list() == [4, 0 if pad < 0 else 3]
        assert res.rows.equals(read_pgn_reference(path))


THOUSAND = (date(1000, 1, 1) - date(1970, 1, 1)).days
DATE_TEXT = st.one_of(
    st.builds(
        "{:04d}.{:02d}.{:02d}".format,
        st.integers(0, 9999) | st.sampled_from([1000, 1600, 1900, 1969, 1970, 2000, 2024, 2100]),
        st.integers(0, 13),
        st.integers(0, 32),
    ),
    st.text(alphabet="0123456789.?", max_size=11),
)


@settings(max_examples=400, deadline=None)
@given(text=DATE_TEXT)
def test_date_code_agrees_with_polars(text: str) -> None:
    raw = np.frombuffer(text.encode(), dtype=np.uint8)
    code = pgn_scan._date_code(raw, 0, len(raw))
    parsed = pl.Series([text]).str.strptime(pl.Date, "%Y.%m.%d", strict=False)
    days = parsed.cast(pl.Int32)[0]  # days since 1970-01-01, null when Polars rejects it
    if code >= 0:  # the scanner vouches for the date: it is Polars' date
        assert days == code - pgn_scan.DAY_BASE
    elif code == pgn_scan.HAS_QUESTION_MARK:
        assert "?" in text
    else:
        assert code == pgn_scan.OTHER_FORM and "?" not in text
    if len(text) == 10 and text[4] == text[7] == "." and days is not None and days >= THOUSAND:
        assert code >= 0  # and it vouches for every real date written the usual way


@settings(max_examples=300, deadline=None)
@given(
    text=st.builds(
        "{:02d}:{:02d}:{:02d}".format, st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)
    )
    | st.text(alphabet="0123456789:?", max_size=9)
)
def test_time_code_agrees_with_polars(text: str) -> None:
    raw = np.frombuffer(text.encode(), dtype=np.uint8)
    code = pgn_scan._time_code(raw, 0, len(raw))
    parsed = pl.Series(["2025.01.01 " + text]).str.strptime(
        pl.Datetime("us"), "%Y.%m.%d %H:%M:%S", strict=False
    )[0]
    if code >= 0:
        assert parsed is not None
        assert parsed.hour * 3600 + parsed.minute * 60 + parsed.second == code
    else:
        assert code == pgn_scan.OTHER_FORM


def test_scanner_dates_equal_polars_dates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    games = [
        good(1),
        good(2).replace('[Date "2025.05.01"]', '[Date "2024.02.29"]\n[UTCDate "1969.12.31"]'),
        good(3).replace('[Date "2025.05.01"]', '[UTCDate "2000.02.29"]\n[UTCTime "23:59:59"]'),
        good(4).replace('[Date "2025.05.01"]', '[UTCDate "2025.??.??"]\n[UTCTime "12:00:00"]'),
        good(5).replace('[Date "2025.05.01"]', '[Date "????.??.??"]\n[EventDate "1900.03.01"]'),
        good(6).replace('[Date "2025.05.01"]', '[UTCTime "01:02:03"]\n[Date "1000.01.01"]'),
        good(7).replace('[Date "2025.05.01"]', '[Date "2025.??.??"]'),
    ]
    path = tmp_path / "dates.pgn"
    path.write_text("".join(games))
    generated = generate_pgn(tmp_path / "gen.pgn", 200, seed=4, extras=True, n_bodies=20)
    in_polars = functools.partial(pgn_frames._played, in_polars=True)
    for p in (path, generated):
        buf = np.fromfile(p, dtype=np.uint8)
        frame, _ = pgn_frames.games_frame(buf, 0, 1)
        codes = frame.select(pl.col("^code_.*$")).to_numpy()
        assert (codes != pgn_scan.OTHER_FORM).all()  # the scanner's numbers are used
        fast = read_pgn(p)
        monkeypatch.setattr(pgn_frames, "_played", in_polars)
        slow = read_pgn(p)
        monkeypatch.undo()
        assert fast.rows.equals(slow.rows) and fast.quarantine.equals(slow.quarantine)
    assert read_pgn(path).rows["white_name"].to_list() == [f"white{i}" for i in (1, 2, 3, 5, 6)]
