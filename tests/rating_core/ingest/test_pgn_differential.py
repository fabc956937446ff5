"""Differential tests: the vectorized reader agrees with python-chess game for game (DESIGN §8)."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rating_core.ingest.pgn import read_pgn, read_pgn_reference
from rating_core.ingest.pgn_synth import generate_pgn


def assert_same(path: Path, expected_games: int | None = None) -> None:
    """Fast path rows equal the python-chess reference rows, column by column."""
    fast = read_pgn(path)
    ref = read_pgn_reference(path)
    if expected_games is not None:
        assert fast.rows.height == expected_games
    assert fast.rows.height == ref.height
    for col in ref.columns:
        diff = fast.rows[col].ne_missing(ref[col])
        assert not diff.any(), (col, fast.rows.filter(diff).head(3), ref.filter(diff).head(3))


@pytest.mark.parametrize(
    ("name", "games"), [("lichess_db_1000k.pgn", 438), ("twic1599_1000k.pgn", 1110)]
)
def test_real_files(external: Path, name: str, games: int) -> None:
    assert_same(external / "shakmaty" / name, games)


def test_generated_file_with_extras(tmp_path: Path) -> None:
    path = generate_pgn(tmp_path / "gen.pgn", 400, seed=7, extras=True, n_bodies=40)
    fast = read_pgn(path).rows
    # the generator really produced the variety this test is about
    assert (~fast["rated"]).any() and fast["white_is_bot"].any()
    assert (fast["kind"] == "unlimited").any() and (fast["kind"] == "correspondence").any()
    assert fast["time_control"].is_null().any() and (~fast["white_id_from_name"]).any()
    text = path.read_text()
    assert "( " in text and "$" in text and "; " in text
    assert_same(path, 400)


def test_generated_gz(tmp_path: Path) -> None:
    path = generate_pgn(tmp_path / "gen.pgn.gz", 50, seed=3, extras=True, n_bodies=10)
    assert_same(path, 50)


def _random_game(rng: random.Random, plies: int) -> chess.pgn.Game:
    """A random legal game with python-chess, with comments, NAGs and side lines."""
    import chess.pgn

    g = chess.pgn.Game()
    g.headers["Site"] = "https://lichess.org/" + "".join(rng.choices("abcdefXYZ0123", k=8))
    g.headers["White"] = rng.choice(["a", "b b", "Ünïcode", "x,y"])
    g.headers["Black"] = rng.choice(["c", "d"])
    g.headers["Result"] = rng.choice(["1-0", "0-1", "1/2-1/2"])
    g.headers["Date"] = f"20{rng.randint(10, 29)}.{rng.randint(1, 12):02d}.{rng.randint(1, 28):02d}"
    if rng.random() < 0.5:
        g.headers["TimeControl"] = rng.choice(["-", "60+0", "300+3"])
    if rng.random() < 0.3:
        g.headers["WhiteTitle"] = "BOT"
    node: chess.pgn.GameNode = g
    board = chess.Board()
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        move = rng.choice(moves)
        if len(moves) > 1 and rng.random() < 0.2:
            alt = rng.choice([m for m in moves if m != move])
            side = node.add_variation(alt)
            side.comment = "side (line)"
            if rng.random() < 0.5:
                b2 = board.copy()
                b2.push(alt)
                nxt = list(b2.legal_moves)
                if nxt:
                    side.add_variation(rng.choice(nxt))
        node = node.add_main_variation(move)
        if rng.random() < 0.2:
            node.comment = rng.choice(["[%clk 0:01:00]", "good { no", "Nf3 was; better"])
        if rng.random() < 0.1:
            node.nags.add(rng.randint(1, 6))
        board.push(move)
    return g


@pytest.mark.slow
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 6), plies=st.integers(0, 40))
def test_random_games_property(tmp_path: Path, seed: int, n: int, plies: int) -> None:
    rng = random.Random(seed)
    games = [_random_game(rng, plies) for _ in range(n)]
    text = "\n\n".join(str(g) for g in games) + "\n"
    path = tmp_path / f"h{seed}.pgn"
    path.write_text(text, encoding="utf-8")
    fast = read_pgn(path)
    ref = read_pgn_reference(path)
    # python-chess knows the true number of moves of each generated game
    truth = [len(list(g.mainline_moves())) for g in games]
    assert fast.rows["plies"].to_list() == truth
    assert fast.quarantine.height == 0
    assert fast.rows.equals(ref), (fast.rows, ref)
    assert isinstance(fast.rows, pl.DataFrame)


def _games_text(seed: int, n: int) -> str:
    """`n` random legal games as python-chess writes them."""
    rng = random.Random(seed)
    return "\n\n".join(str(_random_game(rng, rng.randint(0, 30))) for _ in range(n)) + "\n"


def test_blank_line_inside_the_tags_chessbase(tmp_path: Path) -> None:
    # ChessBase exports put a blank line inside the tags: python-chess reads one game there
    text = _games_text(11, 40).replace("\n[White ", "\n\n[White ")
    path = tmp_path / "chessbase.pgn"
    path.write_text(text, encoding="utf-8")
    assert read_pgn(path).quarantine.height == 0
    assert_same(path, 40)


def test_windows_1252_file(tmp_path: Path) -> None:
    text = _games_text(12, 30).replace('[Black "c"]', '[Black "Müller €"]')
    path = tmp_path / "legacy.pgn"
    path.write_bytes(text.encode("cp1252"))
    assert read_pgn(path).rows["black_name"].str.contains("Müller €").any()
    assert_same(path, 30)


def test_variants_and_set_up_positions(tmp_path: Path) -> None:
    def one(tags: str, moves: str) -> str:
        head = '[Event "e"]\n[Site "s"]\n[Date "2025.01.02"]\n[White "w"]\n[Black "b"]\n'
        return f'{head}[Result "1-0"]\n{tags}\n{moves} 1-0\n\n'

    text = (
        one("", "1. e4 e5 2. Nf3 Nc6")
        + one('[Variant "Atomic"]\n', "1. e4 e5 2. Nf3 Nc6")
        + one('[Variant "Crazyhouse"]\n', "1. e4 d5 2. exd5 Qxd5 3. P@e4")
        + one(
            '[Variant "Chess960"]\n[SetUp "1"]\n'
            '[FEN "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"]\n',
            "1. e4 e5 2. Nf3 Nc6",
        )
        + one('[SetUp "1"]\n[FEN "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"]\n', "1. e4 Kd6 2. Kd2 Kc5")
        + one('[Variant "Standard"]\n', "1. d4 d5")
    )
    path = tmp_path / "variants.pgn"
    path.write_text(text, encoding="utf-8")
    reasons = read_pgn(path).rows["unrated_reason"].to_list()
    assert [r is None for r in reasons] == [True, False, False, False, False, True]
    assert_same(path, 6)
