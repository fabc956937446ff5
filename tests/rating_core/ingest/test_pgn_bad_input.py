"""Malformed-input corpus: PGN and compressed PGN files (issue 9 items 2 and 7).

Every bad-record case is a file of its own in one shared inbox, the bad game between two good
ones, ingested once through the assets: each asserts the quarantine reason, the line it points
at, and that the good games around it landed. Kept-but-noted cases (a blank line inside the
tags, Windows-1252, variants, empty files) assert the games table and the notes. A truncated or
corrupt archive stops the run before anything is written, naming the file.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest
import zstandard

from rating_core import tables
from tests.support.inbox import Ingested, assert_one_sentence, ingest, ratings, write_inbox

# The bad-input corpus runs the ingest assets and the `ratings` command on each case.
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("csv_in_chunks_of_two_rows")]


def game(
    white: str,
    black: str = "bob",
    result: str = "1-0",
    date: str = "2026.03.05",
    extra: str = "",
    moves: str = "1. e4 e5 2. Nf3 Nc6",
    end: str | None = None,
) -> str:
    """One federation game (9 lines with the blank line after it); `end` replaces the result
    token that ends its movetext."""
    return (
        f'[Event "Ankara Open"]\n[Site "Ankara"]\n[Date "{date}"]\n[White "{white}"]\n'
        f'[Black "{black}"]\n[Result "{result}"]\n{extra}\n'
        f"{moves} {result if end is None else end}\n\n"
    )


def around(bad: str) -> str:
    """The bad game between a good first one (lines 1-9) and a good last one."""
    return game("first") + bad + game("last")


# (case, bad game, reason substring, line of the quarantine row); the bad game starts at line 10
QUARANTINED = [
    ("nul_in_white", game("bad\0name"), "a NUL byte is in tag White", 13),
    ("nul_in_black", game("x", black="b\0b"), "a NUL byte is in tag Black", 14),
    ("nul_in_event", game("x").replace("Ankara Open", "Ank\0ara"), "NUL byte is in tag Event", 10),
    ("result_2_0", game("x", end="2-0"), "'2-0' is not a result", 10),
    ("result_1_1", game("x", end="1-1"), "'1-1' is not a result", 10),
    ("result_half", game("x", end="½-½"), "'½-½' is not a result", 10),
    ("result_colon", game("x", end="1:0"), "'1:0' is not a result", 10),
    ("cut_after_a_move", game("x", end=""), "no result (truncated?)", 10),
    ("cut_after_tags", '[Event "cut"]\n[White "x"]\n[Black "y"]\n\n', "truncated?", 10),
    ("unfinished_result", game("x", result="*"), "result '*' is not a finished result", 10),
    (
        "malformed_tag",
        game("x").replace('[Black "bob"]', '[Black "bob'),
        "malformed tag line",
        14,
    ),
    ("missing_black", game("x").replace('[Black "bob"]\n', ""), "Black player is missing", 10),
    ("missing_white", game("?"), "White player is missing", 10),
    ("incomplete_date", game("x", date="2026.??.??"), "date '2026.??.??' is incomplete", 10),
    ("impossible_date", game("x", date="2026.02.30"), "'2026.02.30' is not a real date", 10),
    (
        "bad_utc_time",
        game("x", extra='[UTCDate "2026.03.05"]\n[UTCTime "25:61:00"]\n'),
        "time '25:61:00' is not a valid time of day",
        10,
    ),
    (
        "duplicate_game_id",
        game("x", extra='[GameId "g1"]\n') + game("y", extra='[GameId "g1"]\n'),
        "game id 'g1' already appears at line 10",
        20,
    ),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Ingested:
    """One inbox holding every case of this module (one ingest run for all of them)."""
    files: dict[str, str | bytes] = {
        f"federation/{name}.pgn": around(bad) for name, bad, _, _ in QUARANTINED
    }
    files["federation/stray_text.pgn"] = "exported by some tool\n\n" + around("")
    files["federation/chessbase.pgn"] = around(game("mid").replace("[White", "\n[White"))
    files["federation/legacy.pgn"] = around(game("Müller €")).encode("cp1252")
    files["federation/variants.pgn"] = (
        game("first")
        + game("atomic", extra='[Variant "Atomic"]\n')
        + game(
            "c960",
            extra='[Variant "Chess960"]\n[FEN "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"]\n',
        )
        + game(
            "setup", extra='[SetUp "1"]\n[FEN "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"]\n', moves="1. e4"
        )
        + game("standard", extra='[Variant "Standard"]\n')
    )
    files["federation/empty.pgn"] = ""
    files["federation/blank.pgn"] = "\n  \n\r\n"
    files["federation/UPPER.PGN.GZ"] = gzip.compress(around(game("upper")).encode())
    files["federation/multi.pgn.zst"] = b"".join(
        zstandard.ZstdCompressor().compress(game(w).encode()) for w in ("first", "mid", "last")
    )
    return ingest(write_inbox(tmp_path_factory.mktemp("pgn"), files))


def _games_of(corpus: Ingested, name: str) -> pl.DataFrame:
    return corpus.games.filter(pl.col("source_file") == name).sort("source_line")


def _quarantine_of(corpus: Ingested, name: str) -> pl.DataFrame:
    return corpus.quarantine.filter(pl.col("source_file") == name)


def test_the_corpus_run_succeeds(corpus: Ingested) -> None:
    assert corpus.result.success


@pytest.mark.parametrize(
    ("case", "reason", "line"),
    [(c, r, ln) for c, _, r, ln in QUARANTINED],
    ids=[c for c, *_ in QUARANTINED],
)
def test_bad_game_is_quarantined_and_its_neighbours_land(
    corpus: Ingested, case: str, reason: str, line: int
) -> None:
    name = f"federation/{case}.pgn"
    row = corpus.only_quarantined(name)
    assert reason in row["reason"], row
    assert row["line"] == line
    white = _games_of(corpus, name).get_column("white_name").to_list()
    expected = ["first", "x", "last"] if case == "duplicate_game_id" else ["first", "last"]
    assert white == expected
    assert "\0" not in "".join(corpus.games.get_column("white_id").to_list())


def test_nul_byte_never_reaches_a_player_id(corpus: Ingested) -> None:
    ids = corpus.games.select(pl.concat_str("white_id", "black_id", "tournament_id")).to_series()
    assert not ids.str.contains("\x00", literal=True).any()
    value = corpus.only_quarantined("federation/nul_in_white.pgn")["value"]
    assert value == "bad\\0name"


def test_stray_text_before_the_first_game(corpus: Ingested) -> None:
    row = corpus.only_quarantined("federation/stray_text.pgn")
    assert "text before the first game" in row["reason"] and row["line"] == 1
    names = _games_of(corpus, "federation/stray_text.pgn").get_column("white_name").to_list()
    assert names == ["first", "last"]


def test_blank_line_inside_the_tags_is_one_game(corpus: Ingested) -> None:
    games = _games_of(corpus, "federation/chessbase.pgn")
    assert games.get_column("white_name").to_list() == ["first", "mid", "last"]
    assert games.get_column("tournament_id").to_list() == ["Ankara Open | Ankara"] * 3
    assert not _quarantine_of(corpus, "federation/chessbase.pgn").height


def test_windows_1252_file_is_decoded_with_a_note(corpus: Ingested) -> None:
    games = _games_of(corpus, "federation/legacy.pgn")
    assert games.get_column("white_name").to_list() == ["first", "Müller €", "last"]
    assert games.get_column("source_line").to_list() == [1, 10, 19]
    assert not _quarantine_of(corpus, "federation/legacy.pgn").height
    notes = corpus.table(tables.INGEST_NOTES).get_column("note").to_list()
    assert "federation/legacy.pgn: not UTF-8, read as Windows-1252" in notes


def test_variants_and_set_up_positions_are_kept_but_not_rated(corpus: Ingested) -> None:
    games = _games_of(corpus, "federation/variants.pgn")
    assert games.get_column("white_name").to_list() == [
        "first",
        "atomic",
        "c960",
        "setup",
        "standard",
    ]
    assert games.get_column("rated").to_list() == [True, False, False, False, True]
    reasons = games.get_column("unrated_reason").to_list()
    assert reasons[0] is None and reasons[4] is None
    assert reasons[1] == "variant 'Atomic': the rating rules are for standard chess"
    assert reasons[2] == "variant 'Chess960': the rating rules are for standard chess"
    assert reasons[3] == (
        "starts from a set-up position (FEN tag): the rating rules are for standard chess"
    )
    assert not _quarantine_of(corpus, "federation/variants.pgn").height


@pytest.mark.parametrize("name", ["empty", "blank"])
def test_an_empty_pgn_is_zero_games_with_a_note(corpus: Ingested, name: str) -> None:
    source = f"federation/{name}.pgn"
    assert not _games_of(corpus, source).height
    assert not _quarantine_of(corpus, source).height
    notes = corpus.table(tables.INGEST_NOTES).get_column("note").to_list()
    assert f"{source}: empty, no games" in notes


def test_upper_case_gzip_suffix_is_gzip(corpus: Ingested) -> None:
    names = _games_of(corpus, "federation/UPPER.PGN.GZ").get_column("white_name").to_list()
    assert names == ["first", "upper", "last"]


def test_every_zstd_frame_is_read(corpus: Ingested) -> None:
    names = _games_of(corpus, "federation/multi.pgn.zst").get_column("white_name").to_list()
    assert names == ["first", "mid", "last"]


# --- archives that are cut or damaged stop the run --------------------------------------------


def _three_thousand_games() -> bytes:
    return "".join(
        game(f"p{i}", black=f"q{i}", moves="1. d4 d5 2. c4 e6 3. Nc3 Nf6 " * 3) for i in range(3000)
    ).encode()


def _failure_text(run: Ingested) -> str:
    """Every error message of the run's failed steps."""
    texts = []
    for event in run.result.get_step_failure_events():
        error = event.step_failure_data.error
        while error is not None:
            texts.append(error.message)
            error = error.cause
    return " ".join(texts)


ARCHIVES = [
    (
        "games.pgn.zst",
        lambda raw: (z := zstandard.ZstdCompressor().compress(raw))[: len(z) * 6 // 10],
        "zstd",
    ),
    ("games.pgn.gz", lambda raw: (z := gzip.compress(raw))[: len(z) * 6 // 10], "gzip"),
    ("GAMES.PGN.GZ", lambda raw: gzip.compress(raw)[:-3], "gzip"),
    ("games.pgn.gz", lambda raw: b"\x1f\x8b\x08\x00garbage, not deflate data" * 3, "gzip"),
    ("games.pgn.zst", lambda raw: b"", "zstd"),  # a download cut at 0 %: not an empty file
]


@pytest.mark.parametrize(("name", "damage", "kind"), ARCHIVES)
def test_cut_or_corrupt_archive_stops_before_anything_is_written(
    tmp_path: Path, name: str, damage, kind: str
) -> None:
    inbox = write_inbox(
        tmp_path,
        {
            "federation/good.pgn": around(game("mid")),
            f"platform/{name}": damage(_three_thousand_games()),
        },
    )
    run = ingest(inbox)
    assert not run.result.success
    text = _failure_text(run)
    assert f"platform/{name}: truncated or corrupt {kind} data" in text, text
    assert not run.games.height  # not even the good file's games: the run stopped


def test_cut_zst_through_the_cli_exits_non_zero_naming_the_file(tmp_path: Path) -> None:
    raw = _three_thousand_games()
    z = zstandard.ZstdCompressor().compress(raw)
    inbox = write_inbox(tmp_path, {"federation/games.pgn.zst": z[: len(z) * 6 // 10]})
    lake = tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    sentence = assert_one_sentence(proc)
    assert "federation/games.pgn.zst: truncated or corrupt zstd data" in sentence
    assert not list(lake.glob("lists/**/list.parquet"))
